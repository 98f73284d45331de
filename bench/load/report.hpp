#pragma once
// barrel-load's report: the text on stdout, the JSON document of --json and the SVG of --plot.

#include "load.hpp"
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace barrel::load {

/// One run as JSON (absent figures, e.g. a metric the node does not export, are null).
nlohmann::json to_json(const RunResult& r);

/// The median over runs of every figure of to_json that is a number (null where any run lacks
/// it); the checks hold only if they hold in every run.
nlohmann::json median_of(const std::vector<RunResult>& runs);

/// The text report of the medians (and, for several runs, each run's headline figures).
std::string text_report(const std::string& heading, const std::vector<RunResult>& runs);

/// Transactions sent and mined over time, one line each, for the last run.
std::string svg_timeline(const RunResult& run, const std::string& title);

}  // namespace barrel::load
