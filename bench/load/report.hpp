#pragma once
// barrel-load's report: the text on stdout, the JSON document of --json and the SVG of --plot.

#include "load.hpp"
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
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

/// The median tree of the runs' JSON documents (`to_json` of each), with "rejections" the
/// messages any run met, summed over the runs. For RunResult and NetRunResult.
template <class Run>
nlohmann::json medians_with_rejections(const std::vector<Run>& runs) {
    if (runs.empty()) return nullptr;
    std::vector<nlohmann::json> docs;
    for (const auto& r : runs) docs.push_back(to_json(r));
    nlohmann::json m = median_tree(docs);
    nlohmann::json all = nlohmann::json::object();
    for (const auto& r : runs)
        for (const auto& [message, count] : r.rejections)
            all[message] = all.value(message, size_t{0}) + count;
    m["rejections"] = all;
    return m;
}

/// `v` with `decimals` decimals, or "n/a" for anything but a number.
std::string figure(const nlohmann::json& v, int decimals);

/// The text report of the medians (and, for several runs, each run's headline figures).
std::string text_report(const std::string& heading, const std::vector<RunResult>& runs);

/// One line of a chart: its legend and its points (seconds, transactions).
struct ChartLine {
    std::string name;
    std::vector<std::pair<double, double>> points;
};
/// A dashed vertical line at `at` seconds, labelled above the chart.
struct ChartMarker {
    double at{0};
    std::string label;
};

/// An SVG chart of transactions over seconds: the lines from (0, 0), a legend, the markers.
std::string svg_chart(const std::string& title, const std::vector<ChartLine>& lines,
                      const std::vector<ChartMarker>& markers);

/// Transactions sent and mined over time, one line each, for the last run.
std::string svg_timeline(const RunResult& run, const std::string& title);

}  // namespace barrel::load
