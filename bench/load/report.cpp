#include "report.hpp"

#include "common/stats.hpp"

#include <cstdio>
#include <iterator>
#include <sstream>

namespace barrel::load {

namespace {

nlohmann::json optional_json(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

/// `v` with `decimals` decimals.
std::string format(int decimals, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

}  // namespace

std::string figure(const nlohmann::json& v, int decimals) {
    return v.is_number() ? format(decimals, v.get<double>()) : std::string{"n/a"};
}

nlohmann::json to_json(const RunResult& r) {
    nlohmann::json stages = nlohmann::json::object();
    for (size_t s = 0; s < kStages.size(); ++s)
        stages[kStages[s]] = {{"ms_per_block", optional_json(r.stage_ms_per_block[s])},
                              {"us_per_tx", optional_json(r.stage_us_per_tx[s])}};
    return {
        {"txs", r.txs},
        {"accepted", r.accepted},
        {"rejected", r.rejected},
        {"rejections", r.rejections},
        {"mined", r.mined},
        {"mined_more_than_once", r.mined_twice},
        {"not_mined", r.not_mined},
        {"blocks", r.blocks},
        {"submit_seconds", r.submit_seconds},
        {"end_to_end_seconds", r.end_to_end_seconds},
        {"submit_tps", r.submit_tps},
        {"end_to_end_tps", r.end_to_end_tps},
        {"latency_ms",
         {{"p50", r.latency_p50_ms},
          {"p95", r.latency_p95_ms},
          {"p99", r.latency_p99_ms},
          {"max", r.latency_max_ms}}},
        {"stages", stages},
        {"sender_cache_hit_rate", optional_json(r.sender_cache_hit_rate)},
        {"recover_ceiling_tps", r.ceiling_tps},
        {"ceiling_ratio", r.ceiling_ratio},
        {"cpu_us_per_tx",
         {{"node", optional_json(r.node_cpu_us_per_tx)}, {"generator", r.generator_cpu_us_per_tx}}},
        {"node_rss_mib",
         {{"after_first_minute", optional_json(r.node_rss_mib_first_minute)},
          {"end", optional_json(r.node_rss_mib_end)}}},
        {"checks",
         {{"all_mined_once", r.rejected == 0 && r.mined == r.txs && r.mined_twice == 0},
          {"nonces_match", r.nonces_ok},
          {"receipts_ok", r.receipts_ok},
          {"bad_nonces", r.bad_nonces},
          {"bad_receipts", r.bad_receipts},
          {"passed", r.passed()}}},
    };
}

nlohmann::json median_tree(const std::vector<nlohmann::json>& docs) {
    const nlohmann::json& first = docs.front();
    if (first.is_object() && !first.empty()) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, value] : first.items()) {
            std::vector<nlohmann::json> column;
            for (const auto& d : docs) column.push_back(d.contains(key) ? d[key] : nullptr);
            out[key] = key == "rejections" ? value : median_tree(column);
        }
        return out;
    }
    if (first.is_boolean()) {
        bool all = true;
        for (const auto& d : docs) all = all && d.is_boolean() && d.get<bool>();
        return all;
    }
    if (first.is_number()) {
        std::vector<double> values;
        for (const auto& d : docs) {
            if (!d.is_number()) return nullptr;
            values.push_back(d.get<double>());
        }
        return bench::median(values);
    }
    return first;
}

nlohmann::json median_of(const std::vector<RunResult>& runs) {
    return medians_with_rejections(runs);
}

std::string text_report(const std::string& heading, const std::vector<RunResult>& runs) {
    const nlohmann::json m = median_of(runs);
    std::ostringstream out;
    out << heading << "\n";
    if (runs.size() > 1) {
        out << "medians of " << runs.size() << " runs (each on a fresh node):";
        for (const auto& r : runs) out << " " << format(0, r.end_to_end_tps);
        out << " TPS end to end\n";
    }
    out << "submit TPS:          " << figure(m["submit_tps"], 0)
        << " (first send to last response)\n";
    out << "end-to-end TPS:      " << figure(m["end_to_end_tps"], 0)
        << " (first send to last transaction seen mined)\n";
    const auto& l = m["latency_ms"];
    out << "latency send->mined: p50 " << figure(l["p50"], 1) << " ms, p95 " << figure(l["p95"], 1)
        << " ms, p99 " << figure(l["p99"], 1) << " ms, max " << figure(l["max"], 1) << " ms\n";
    out << "transactions:        " << figure(m["txs"], 0) << " sent, " << figure(m["accepted"], 0)
        << " accepted, " << figure(m["mined"], 0) << " mined in " << figure(m["blocks"], 0)
        << " blocks\n";
    out << "rejections:          ";
    if (m["rejections"].empty()) out << "none";
    for (const auto& [message, count] : m["rejections"].items())
        out << "\n  " << count.get<size_t>() << " x " << message;
    out << "\n";
    out << "node stages:         ";
    for (const char* stage : kStages)
        out << stage << " " << figure(m["stages"][stage]["ms_per_block"], 2) << " ms/block ("
            << figure(m["stages"][stage]["us_per_tx"], 1) << " us/tx)"
            << (stage == kStages.back() ? "\n" : ", ");
    out << "sender cache:        "
        << (m["sender_cache_hit_rate"].is_number()
                ? format(1, 100 * m["sender_cache_hit_rate"].get<double>()) + "% hits"
                : std::string{"n/a"})
        << "\n";
    out << "recovery ceiling:    " << figure(m["recover_ceiling_tps"], 0)
        << " TPS (bare secp256k1_ecdsa_recover at all threads); end-to-end / ceiling "
        << figure(m["ceiling_ratio"], 2) << "\n";
    out << "CPU per transaction: node " << figure(m["cpu_us_per_tx"]["node"], 1)
        << " us, generator " << figure(m["cpu_us_per_tx"]["generator"], 1) << " us\n";
    if (m["node_rss_mib"]["end"].is_number())
        out << "node RSS:            " << figure(m["node_rss_mib"]["end"], 0) << " MiB at the end"
            << (m["node_rss_mib"]["after_first_minute"].is_number()
                    ? ", " + figure(m["node_rss_mib"]["after_first_minute"], 0) +
                          " MiB after the first minute"
                    : std::string{})
            << "\n";
    const auto& c = m["checks"];
    out << "checks:              "
        << (c["all_mined_once"].get<bool>() ? "every transaction mined exactly once"
                                            : "NOT every transaction mined exactly once")
        << "; " << (c["nonces_match"].get<bool>() ? "final nonces match" : "NONCES DIFFER") << "; "
        << (c["receipts_ok"].get<bool>() ? "every receipt status 1" : "RECEIPTS DIFFER") << "\n";
    return out.str();
}

std::string svg_chart(const std::string& title, const std::vector<ChartLine>& lines,
                      const std::vector<ChartMarker>& markers) {
    const int left = 80, top = 50, width = 640, height = 320;
    double max_t = 1, max_n = 1;
    for (const ChartLine& line : lines)
        for (const auto& [t, n] : line.points) {
            max_t = std::max(max_t, t);
            max_n = std::max(max_n, n);
        }
    auto x = [&](double t) { return format(1, left + width * t / max_t); };
    auto y = [&](double n) { return format(1, top + height - height * n / max_n); };
    std::ostringstream s;
    s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << left + width + 200 << "' height='"
      << top + height + 60 << "' font-family='sans-serif' font-size='11'>\n"
      << "<rect width='100%' height='100%' fill='white'/>\n"
      << "<text x='" << left << "' y='25' font-size='14'>" << title << "</text>\n";
    for (int k = 0; k <= 4; ++k) {
        const double n = max_n * k / 4, t = max_t * k / 4;
        s << "<line x1='" << left << "' x2='" << left + width << "' y1='" << y(n) << "' y2='"
          << y(n) << "' stroke='#ddd'/><text x='" << left - 6 << "' y='" << y(n)
          << "' text-anchor='end'>" << format(0, n) << "</text>\n";
        s << "<text x='" << x(t) << "' y='" << top + height + 16 << "' text-anchor='middle'>"
          << format(1, t) << " s</text>\n";
    }
    static constexpr const char* kColors[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b"};
    for (size_t k = 0; k < lines.size(); ++k) {
        const char* color = kColors[k % std::size(kColors)];
        s << "<polyline fill='none' stroke='" << color << "' stroke-width='2' points='" << x(0)
          << "," << y(0);
        for (const auto& [t, n] : lines[k].points) s << " " << x(t) << "," << y(n);
        s << "'/>\n<rect x='" << left + width + 20 << "' y='" << top + 20 * k
          << "' width='12' height='12' fill='" << color << "'/><text x='" << left + width + 38
          << "' y='" << top + 20 * k + 10 << "'>" << lines[k].name << "</text>\n";
    }
    for (const ChartMarker& m : markers)
        s << "<line x1='" << x(m.at) << "' x2='" << x(m.at) << "' y1='" << top << "' y2='"
          << top + height << "' stroke='#888' stroke-dasharray='4 3'/><text x='" << x(m.at)
          << "' y='" << top - 4 << "' text-anchor='middle'>" << m.label << "</text>\n";
    s << "<text x='" << left + width / 2 << "' y='" << top + height + 40
      << "' text-anchor='middle'>seconds from the first send; transactions</text>\n</svg>\n";
    return s.str();
}

std::string svg_timeline(const RunResult& run, const std::string& title) {
    std::vector<ChartLine> lines{{"sent (answered)", {}}, {"mined", {}}};
    for (const auto& p : run.timeline)
        for (size_t k = 0; k < lines.size(); ++k) lines[k].points.emplace_back(p[0], p[k + 1]);
    return svg_chart(title, lines, {});
}

}  // namespace barrel::load
