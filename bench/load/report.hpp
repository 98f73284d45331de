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

/// The median of `docs` at each numeric leaf of the first; booleans are and-ed; a leaf that is
/// null in any run is null; anything else (strings, lists, the rejection messages) is the first's.
nlohmann::json median_tree(const std::vector<nlohmann::json>& docs);

/// `v` with `decimals` decimals, or "n/a" for anything but a number.
std::string figure(const nlohmann::json& v, int decimals);

/// The text report of the medians (and, for several runs, each run's headline figures).
std::string text_report(const std::string& heading, const std::vector<RunResult>& runs);

/// Transactions sent and mined over time, one line each, for the last run.
std::string svg_timeline(const RunResult& run, const std::string& title);

}  // namespace barrel::load
