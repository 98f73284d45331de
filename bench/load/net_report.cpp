#include "net_report.hpp"

#include "common/stats.hpp"
#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

namespace barrel::load {

namespace {

nlohmann::json optional_json(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json latency_json(const std::array<double, 4>& l) {
    return {{"p50", l[0]}, {"p95", l[1]}, {"p99", l[2]}, {"max", l[3]}};
}

nlohmann::json nodes_json(const NetRunResult& r) {
    // An object keyed by the node's index, so that the medians reach each node's figures.
    nlohmann::json nodes = nlohmann::json::object();
    // CPU per transaction in µs, and that as a multiple of one recovery's CPU time measured in
    // the same run: the measure of a validator's cost that the machine's load moves least.
    auto per_tx_us = [&](const std::optional<double>& cpu_s) -> std::optional<double> {
        if (!cpu_s || r.txs == 0) return std::nullopt;
        return *cpu_s * 1e6 / static_cast<double>(r.txs);
    };
    auto per_recovery = [&](const std::optional<double>& us) -> std::optional<double> {
        if (!us || r.recovery_cpu_us <= 0) return std::nullopt;
        return *us / r.recovery_cpu_us;
    };
    for (size_t k = 0; k < r.nodes.size(); ++k) {
        const NodeUsage& u = r.nodes[k];
        const auto barrel_us = per_tx_us(u.barrel_cpu_s);
        const auto cometbft_us = per_tx_us(u.cometbft_cpu_s);
        nodes[std::to_string(k)] = {
            {"cpu_s",
             {{"barrel_node", optional_json(u.barrel_cpu_s)},
              {"cometbft", optional_json(u.cometbft_cpu_s)}}},
            {"cpu_us_per_tx",
             {{"barrel_node", optional_json(barrel_us)}, {"cometbft", optional_json(cometbft_us)}}},
            {"cpu_per_recovery",
             {{"barrel_node", optional_json(per_recovery(barrel_us))},
              {"cometbft", optional_json(per_recovery(cometbft_us))}}},
            {"rss_mib",
             {{"barrel_node", optional_json(u.barrel_rss_mib)},
              {"cometbft", optional_json(u.cometbft_rss_mib)}}},
            {"rss_mid_mib",
             {{"barrel_node", optional_json(u.barrel_rss_mid_mib)},
              {"cometbft", optional_json(u.cometbft_rss_mid_mib)}}},
            {"watcher",
             {{"asks", optional_json(u.watcher_asks)},
              {"heads_pushed", optional_json(u.heads_pushed)},
              {"subscriptions", optional_json(u.subscriptions)}}}};
    }
    return nodes;
}

std::string fmt(int decimals, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

}  // namespace

double first_seconds_tps(const NetRunResult& r, double seconds) {
    // Mined on every node by `seconds` after the first send, from the 100 ms samples.
    double mined = 0;
    for (const auto& p : r.timeline)
        if (p[0] <= seconds) mined = p[2];
    return mined / seconds;
}

nlohmann::json dip_json(const NetRunResult& r) {
    if (!r.killed_at_s || r.timeline.empty()) return nullptr;
    // The progress of the node furthest ahead (column 3) at `t`, from the 100 ms samples.
    auto mined_at = [&](double t) {
        double mined = 0;
        for (const auto& p : r.timeline)
            if (p[0] <= t) mined = p[3];
        return mined;
    };
    double end = r.timeline.back()[0];
    for (const auto& p : r.timeline)
        if (p[3] >= static_cast<double>(r.txs)) {
            end = p[0];
            break;
        }
    const double killed = std::min(*r.killed_at_s, end);
    const double restarted = std::min(r.restarted_at_s.value_or(end), end);
    auto tps = [&](double from, double to) {
        return to > from ? nlohmann::json((mined_at(to) - mined_at(from)) / (to - from))
                         : nlohmann::json(nullptr);
    };
    return {{"before_kill", tps(0, killed)},
            {"node_down", tps(killed, restarted)},
            {"after_restart", tps(restarted, end)}};
}

nlohmann::json to_json(const NetRunResult& r) {
    return {
        {"app", std::string{app_name(r.app)}},
        {"validators", r.validators},
        {"txs", r.txs},
        {"accepted", r.accepted},
        {"rejected", r.rejected},
        {"rejections", r.rejections},
        {"not_mined", r.not_mined},
        {"mined_more_than_once", r.mined_twice},
        {"submit_seconds", r.submit_seconds},
        {"end_to_end_seconds", r.end_to_end_seconds},
        {"submit_tps", r.submit_tps},
        {"end_to_end_tps", r.end_to_end_tps},
        {"latency_ms",
         {{"on_node_sent_to", latency_json(r.latency_sent_ms)},
          {"on_slowest_node", latency_json(r.latency_slowest_ms)}}},
        {"heights",
         {{"first", r.first_height},
          {"last", r.last_height},
          {"used", r.heights_used},
          {"rounds_per_height", r.mean_round},
          {"max_round", r.max_round},
          {"past_round_0", r.heights_past_round_0},
          {"compared", r.heights_compared}}},
        {"first_3s_tps", first_seconds_tps(r, 3)},
        {"proposals_rejected", optional_json(r.proposals_rejected)},
        {"nodes", nodes_json(r)},
        {"generator_cpu_s", r.generator_cpu_s},
        {"recover_ceiling_tps", r.ceiling_tps},
        {"ceiling_per_node_tps", r.ceiling_per_node_tps},
        {"ceiling_ratio", r.ceiling_ratio},
        {"recovery_cpu_us", r.recovery_cpu_us},
        {"fault", r.killed_node
                      ? nlohmann::json{{"kind", std::string{perturbation_name(
                                                    r.perturbation.value_or(Perturbation::kill))}},
                                       {"node", *r.killed_node},
                                       {"killed_at_s", optional_json(r.killed_at_s)},
                                       {"restarted_at_s", optional_json(r.restarted_at_s)},
                                       {"catch_up_s", optional_json(r.catch_up_s)},
                                       {"tps", dip_json(r)}}
                      : nlohmann::json(nullptr)},
        {"join", r.join ? nlohmann::json{{"to_answer_s", r.join->to_answer_s},
                                         {"to_first_height_s", r.join->to_first_s},
                                         {"replay_s", r.join->replay_s},
                                         {"from_height", r.join->from_height},
                                         {"to_height", r.join->to_height},
                                         {"replayed_txs", r.join->replayed},
                                         {"replay_tps", r.join->replay_tps}}
                        : nlohmann::json(nullptr)},
        {"checks",
         {{"every_tx_accepted", r.accepted == r.txs},
          {"mined_once_on_every_node", r.not_mined == 0 && r.mined_twice == 0},
          {"same_block_hashes", r.hash_mismatches == 0},
          {"hash_mismatches", r.hash_mismatches},
          {"passed", r.passed()}}},
    };
}

nlohmann::json timeline_json(const NetRunResult& r) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : r.timeline) out.push_back({p[0], p[1], p[2], p[3]});
    return out;
}

nlohmann::json medians(const std::vector<NetRunResult>& runs) {
    return medians_with_rejections(runs);
}

std::optional<double> app_ratio(const std::vector<NetRunResult>& barrel,
                                const std::vector<NetRunResult>& kvstore) {
    if (barrel.empty() || kvstore.empty()) return std::nullopt;
    std::vector<double> b, k;
    for (const auto& r : barrel) b.push_back(r.end_to_end_tps);
    for (const auto& r : kvstore) k.push_back(r.end_to_end_tps);
    const double kv = bench::median(k);
    if (kv <= 0) return std::nullopt;
    return bench::median(b) / kv;
}

/// Each node's RSS growth from the middle of the run (half of the transactions mined on every
/// node) to its end, barrel-node and cometbft, in percent: "+1.2% +0.8% / …"; "-" for a process
/// not running throughout (a killed node's).
std::string rss_growth_text(const nlohmann::json& m) {
    std::string out;
    for (const auto& [k, node] : m["nodes"].items()) {
        std::string one;
        for (const char* process : {"barrel_node", "cometbft"}) {
            const auto& mid = node["rss_mid_mib"][process];
            const auto& end = node["rss_mib"][process];
            std::string part = "-";
            if (mid.is_number() && end.is_number() && mid.get<double>() > 0)
                part = (end.get<double>() >= mid.get<double>() ? "+" : "") +
                       fmt(1, 100 * (end.get<double>() / mid.get<double>() - 1)) + "%";
            one += (one.empty() ? "" : " ") + part;
        }
        out += (out.empty() ? "" : " / ") + one;
    }
    return out;
}

namespace {

using Column =
    std::function<std::string(const nlohmann::json& m, const std::vector<NetRunResult>&)>;

std::string latency_text(const nlohmann::json& l) {
    return figure(l["p50"], 0) + " / " + figure(l["p95"], 0) + " / " + figure(l["p99"], 0) + " ms";
}

/// Each node's figure `what` (cpu_s or rss_mib) of `process`, "a / b / c".
std::string per_node(const nlohmann::json& m, const char* what, const char* process, int decimals) {
    std::string out;
    for (const auto& [k, node] : m["nodes"].items())
        out += (out.empty() ? "" : " / ") + figure(node[what][process], decimals);
    return out;
}

std::string checks_text(const nlohmann::json& c) {
    if (c["passed"].get<bool>()) return "every tx mined once on every node, same hashes";
    std::string out;
    if (!c["every_tx_accepted"].get<bool>()) out += "NOT EVERY TX ACCEPTED; ";
    if (!c["mined_once_on_every_node"].get<bool>()) out += "NOT EVERY TX MINED ONCE EVERYWHERE; ";
    if (!c["same_block_hashes"].get<bool>()) out += "BLOCK HASHES DIFFER; ";
    return out;
}

/// The rows of the report: the load's figures, then the nodes' and the fault's.
const std::vector<std::pair<std::string, Column>>& load_rows() {
    static const std::vector<std::pair<std::string, Column>> kRows{
        {"runs (end-to-end TPS)",
         [](const nlohmann::json&, const std::vector<NetRunResult>& runs) {
             std::string out;
             for (const auto& r : runs) out += (out.empty() ? "" : " ") + fmt(0, r.end_to_end_tps);
             return out;
         }},
        {"end-to-end TPS",
         [](const auto& m, const auto&) { return figure(m["end_to_end_tps"], 0); }},
        {"submit TPS", [](const auto& m, const auto&) { return figure(m["submit_tps"], 0); }},
        {"latency p50/p95/p99, node sent to",
         [](const auto& m, const auto&) {
             return latency_text(m["latency_ms"]["on_node_sent_to"]);
         }},
        {"latency p50/p95/p99, slowest node",
         [](const auto& m, const auto&) {
             return latency_text(m["latency_ms"]["on_slowest_node"]);
         }},
        {"TPS mined in the first 3 s",
         [](const auto& m, const auto&) { return figure(m["first_3s_tps"], 0); }},
        {"heights used, rounds per height",
         [](const auto& m, const auto&) {
             return figure(m["heights"]["used"], 0) + ", " +
                    figure(m["heights"]["rounds_per_height"], 2) + " (max round " +
                    figure(m["heights"]["max_round"], 0) + ")";
         }},
        {"proposals rejected",
         [](const auto& m, const auto&) { return figure(m["proposals_rejected"], 0); }},
    };
    return kRows;
}

const std::vector<std::pair<std::string, Column>>& node_rows() {
    static const std::vector<std::pair<std::string, Column>> kRows{
        {"CPU s per node: barrel-node",
         [](const auto& m, const auto&) { return per_node(m, "cpu_s", "barrel_node", 1); }},
        {"CPU s per node: cometbft",
         [](const auto& m, const auto&) { return per_node(m, "cpu_s", "cometbft", 1); }},
        {"CPU µs per tx per node: barrel-node",
         [](const auto& m, const auto&) { return per_node(m, "cpu_us_per_tx", "barrel_node", 0); }},
        {"  the same ÷ one recovery's CPU",
         [](const auto& m, const auto&) {
             return per_node(m, "cpu_per_recovery", "barrel_node", 2);
         }},
        {"CPU µs per tx per node: cometbft",
         [](const auto& m, const auto&) { return per_node(m, "cpu_us_per_tx", "cometbft", 0); }},
        {"RSS MiB per node: barrel-node",
         [](const auto& m, const auto&) { return per_node(m, "rss_mib", "barrel_node", 0); }},
        {"RSS MiB per node: cometbft",
         [](const auto& m, const auto&) { return per_node(m, "rss_mib", "cometbft", 0); }},
        {"RSS growth, second half", [](const auto& m, const auto&) { return rss_growth_text(m); }},
        {"watcher per node: blocks asked for",
         [](const auto& m, const auto&) { return per_node(m, "watcher", "asks", 0); }},
        {"  heads the node pushed",
         [](const auto& m, const auto&) { return per_node(m, "watcher", "heads_pushed", 0); }},
        {"  subscriptions to them opened",
         [](const auto& m, const auto&) { return per_node(m, "watcher", "subscriptions", 0); }},
    };
    return kRows;
}

const std::vector<std::pair<std::string, Column>>& resource_rows() {
    static const std::vector<std::pair<std::string, Column>> kRows{
        {"recovery ceiling TPS (/ N)",
         [](const auto& m, const auto&) {
             return figure(m["recover_ceiling_tps"], 0) + " (" +
                    figure(m["ceiling_per_node_tps"], 0) + ")";
         }},
        {"end-to-end / (ceiling / N)",
         [](const auto& m, const auto&) { return figure(m["ceiling_ratio"], 2); }},
        {"one recovery, CPU µs (1 thread)",
         [](const auto& m, const auto&) { return figure(m["recovery_cpu_us"], 1); }},
        {"rejected",
         [](const auto& m, const auto&) {
             std::string out = figure(m["rejected"], 0);
             for (const auto& [message, count] : m["rejections"].items())
                 out += "; " + std::to_string(count.template get<size_t>()) + " x " + message;
             return out;
         }},
        {"fault: node, from, to, its catch-up",
         [](const auto& m, const auto& runs) -> std::string {
             const auto& f = m["fault"];
             if (f.is_null()) return "-";
             const auto kind = runs.front().perturbation.value_or(Perturbation::kill);
             return std::string{perturbation_name(kind)} + " node " + figure(f["node"], 0) + ": " +
                    figure(f["killed_at_s"], 1) + " s, " + figure(f["restarted_at_s"], 1) + " s, " +
                    figure(f["catch_up_s"], 2) + " s";
         }},
        {"fault: TPS before / during / after",
         [](const auto& m, const auto&) -> std::string {
             const auto& f = m["fault"];
             if (f.is_null()) return "-";
             const auto& d = f["tps"];
             return figure(d["before_kill"], 0) + " / " + figure(d["node_down"], 0) + " / " +
                    figure(d["after_restart"], 0);
         }},
        {"block-sync join: to its RPC, first height",
         [](const auto& m, const auto&) -> std::string {
             const auto& j = m["join"];
             if (j.is_null()) return "-";
             return figure(j["to_answer_s"], 2) + " s, " + figure(j["to_first_height_s"], 2) + " s";
         }},
        {"block-sync replay: txs, s, TPS",
         [](const auto& m, const auto&) -> std::string {
             const auto& j = m["join"];
             if (j.is_null()) return "-";
             return figure(j["replayed_txs"], 0) + " in " + figure(j["replay_s"], 2) + " s, " +
                    figure(j["replay_tps"], 0) + " TPS";
         }},
        {"checks", [](const auto& m, const auto&) { return checks_text(m["checks"]); }},
    };
    return kRows;
}

}  // namespace

std::string network_text_report(const std::string& heading, const std::vector<NetRunResult>& barrel,
                                const std::vector<NetRunResult>& kvstore) {
    std::vector<std::pair<std::string, const std::vector<NetRunResult>*>> apps;
    if (!barrel.empty()) apps.emplace_back("barrel", &barrel);
    if (!kvstore.empty()) apps.emplace_back("kvstore", &kvstore);
    std::vector<nlohmann::json> m;
    for (const auto& [name, runs] : apps) m.push_back(medians(*runs));
    std::vector<std::vector<std::string>> table{{"(medians)"}};
    for (const auto& [name, runs] : apps) table[0].push_back(name);
    for (const auto* rows : {&load_rows(), &node_rows(), &resource_rows()})
        for (const auto& [label, column] : *rows) {
            table.push_back({label});
            for (size_t a = 0; a < apps.size(); ++a)
                table.back().push_back(column(m[a], *apps[a].second));
        }
    // Widths in characters, not bytes: labels hold "µs" (two bytes in UTF-8).
    auto chars = [](const std::string& s) {
        return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char ch) {
            return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;  // not a continuation byte
        }));
    };
    std::vector<size_t> width(apps.size() + 1, 0);
    for (const auto& row : table)
        for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], chars(row[c]));
    std::ostringstream out;
    out << heading << "\n";
    for (const auto& row : table) {
        std::string line;
        for (size_t c = 0; c < row.size(); ++c)
            line += c + 1 == row.size() ? row[c]
                                        : row[c] + std::string(width[c] - chars(row[c]) + 2, ' ');
        out << line << "\n";
    }
    if (const auto ratio = app_ratio(barrel, kvstore))
        out << "barrel / kvstore end-to-end TPS: " << fmt(2, *ratio) << " (medians)\n";
    return out.str();
}

std::string network_svg(const NetRunResult& run, const std::string& title) {
    std::vector<ChartLine> lines{
        {"sent (answered)", {}}, {"mined on every node", {}}, {"mined (node furthest ahead)", {}}};
    for (const auto& p : run.timeline)
        for (size_t k = 0; k < lines.size(); ++k) lines[k].points.emplace_back(p[0], p[k + 1]);
    std::vector<ChartMarker> markers;
    // "kill" and "restart", or the perturbation's name and its end.
    const auto kind = run.perturbation.value_or(Perturbation::kill);
    const bool kill = kind == Perturbation::kill;
    if (run.killed_at_s)
        markers.push_back({*run.killed_at_s, std::string{perturbation_name(kind)}});
    if (run.restarted_at_s) markers.push_back({*run.restarted_at_s, kill ? "restart" : "end"});
    return svg_chart(title, lines, markers);
}

}  // namespace barrel::load
