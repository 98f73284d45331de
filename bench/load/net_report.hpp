#pragma once
// The report of `barrel-load --network`: each run as JSON, the medians per app side by side as
// text (and barrel's end-to-end TPS over kvstore's), and the timeline of a run as SVG, the kill
// and the restart marked.

#include "net_load.hpp"
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace barrel::load {

/// One run as JSON (absent figures are null), without its timeline.
nlohmann::json to_json(const NetRunResult& r);
/// The timeline: [seconds, answered, mined on every node, mined on the node furthest ahead].
nlohmann::json timeline_json(const NetRunResult& r);

/// The transactions mined on every node in the first `seconds` of the run, per second.
double first_seconds_tps(const NetRunResult& r, double seconds);

/// The transactions mined per second on the node furthest ahead, from the 100 ms timeline:
/// before the kill, while the node was down, and from its restart until all were mined; nothing
/// without a kill.
nlohmann::json dip_json(const NetRunResult& r);

/// The medians of the runs of one app (median_tree over to_json).
nlohmann::json medians(const std::vector<NetRunResult>& runs);

/// barrel's median end-to-end TPS over kvstore's, when both ran.
std::optional<double> app_ratio(const std::vector<NetRunResult>& barrel,
                                const std::vector<NetRunResult>& kvstore);

/// The text report: each app's medians in a column of its own.
std::string network_text_report(const std::string& heading, const std::vector<NetRunResult>& barrel,
                                const std::vector<NetRunResult>& kvstore);

/// Sent, mined on every node and mined on the node furthest ahead over time; the kill and the
/// restart as vertical lines.
std::string network_svg(const NetRunResult& run, const std::string& title);

/// Each node's RSS growth over the second half of the run (from when half of the transactions
/// were mined on every node to the end), barrel-node then cometbft, in percent, nodes apart:
/// "+1.2% +0.8% / +0.3% -" ("-": a process not running throughout, a killed node's). `medians`
/// is what medians() returns.
std::string rss_growth_text(const nlohmann::json& medians);

}  // namespace barrel::load
