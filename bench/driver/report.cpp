#include "report.hpp"

#include "common/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

namespace barrel::bench {

Summary summarise(std::vector<double> s) {
    if (s.empty()) return {};
    std::sort(s.begin(), s.end());
    return {median(s), percentile_of_sorted(s, 0.95)};
}

std::string Run::label() const {
    return std::to_string(threads) + "t " + (warm ? "warm" : "cold") +
           (streamed ? " streamed" : " one-by-one");
}

namespace {
/// `v` in fixed notation, `precision` decimals, right-aligned in `width` characters (0: no
/// padding).
std::string fixed(double v, int precision, int width = 0) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(precision) << std::setw(width) << v;
    return out.str();
}

/// The 1-thread run with the same cache and streaming mode, if measured.
const Run* baseline(const std::vector<Run>& runs, const Run& r) {
    for (const auto& b : runs)
        if (b.threads == 1 && b.warm == r.warm && b.streamed == r.streamed) return &b;
    return nullptr;
}

using StageField = std::vector<double> StageSamples::*;
constexpr std::pair<const char*, StageField> kStages[] = {{"decode", &StageSamples::decode},
                                                          {"verify", &StageSamples::verify},
                                                          {"execute", &StageSamples::execute},
                                                          {"commit", &StageSamples::commit}};
}  // namespace

std::optional<double> stage_speedup(const std::vector<Run>& runs, const Run& r, StageField stage) {
    if (r.threads == 1 || r.streamed) return std::nullopt;
    const Run* b = baseline(runs, r);
    if (b == nullptr) return std::nullopt;
    const auto& mine = r.stages.*stage;
    const auto& base = b->stages.*stage;
    if (mine.size() != base.size() || mine.empty()) return std::nullopt;
    std::vector<double> ratios;
    for (size_t i = 0; i < mine.size(); ++i)
        if (mine[i] > 0) ratios.push_back(base[i] / mine[i]);
    if (ratios.empty()) return std::nullopt;
    return summarise(std::move(ratios)).median_ms;
}

std::string table(const std::vector<Run>& runs, double ceiling_tps) {
    std::ostringstream out;
    // Each stage column: median and p95 in 8 characters each, so that neither runs into the
    // other up to 99,999 ms.
    out << "mode                  |     decode ms     |     verify ms     |    execute ms     |    "
           " commit ms     |     TPS | x ceiling | speedup\n";
    out << "                      |   median      p95 |   median      p95 |   median      p95 |   "
           "median      p95 |         |           | vs 1 thread\n";
    out << std::string(134, '-') << "\n";
    for (const auto& r : runs) {
        std::string line = r.label();
        line.resize(22, ' ');
        out << line;
        for (const auto* s :
             {&r.stages.decode, &r.stages.verify, &r.stages.execute, &r.stages.commit}) {
            const Summary x = summarise(*s);
            out << "| " << fixed(x.median_ms, 2, 8) << " " << fixed(x.p95_ms, 2, 8) << " ";
        }
        out << "| " << fixed(r.tps(), 0, 7) << " | "
            << fixed(ceiling_tps > 0 ? r.tps() / ceiling_tps : 0, 2, 9) << " | ";
        const Run* b = baseline(runs, r);
        out << (b && b->tps() > 0 ? fixed(r.tps() / b->tps(), 2, 5) + "x" : std::string{"  -"})
            << "\n";
    }

    std::ostringstream speedups;
    for (const auto& r : runs) {
        std::string line = r.label();
        line.resize(22, ' ');
        bool any = false;
        for (const auto& [name, field] : kStages) {
            const auto x = stage_speedup(runs, r, field);
            any = any || x.has_value();
            line += "| " + (x ? fixed(*x, 2, 8) + "x" : std::string(9, ' ') + "-") + " ";
        }
        if (any) speedups << line << "\n";
    }
    if (!speedups.str().empty()) {
        out << "\nstage speedup over 1 thread (one block at a time, both thread counts in "
               "lockstep;\n"
               "median over blocks of the 1-thread time / this time, block by block)\n";
        out << "mode                  |    decode |    verify |   execute |    commit\n";
        out << std::string(70, '-') << "\n" << speedups.str();
    }
    return out.str();
}

nlohmann::json to_json(const std::vector<Run>& runs, double ceiling_tps,
                       const nlohmann::json& machine) {
    nlohmann::json doc;
    doc["machine"] = machine;
    doc["recover_ceiling_tps"] = ceiling_tps;
    doc["runs"] = nlohmann::json::array();
    for (const auto& r : runs) {
        nlohmann::json stages;
        for (const auto& [name, field] : kStages) {
            const Summary s = summarise(r.stages.*field);
            stages[name] = {{"median_ms", s.median_ms}, {"p95_ms", s.p95_ms}};
            if (const auto x = stage_speedup(runs, r, field))
                stages[name]["speedup_over_1_thread"] = *x;
        }
        const Run* b = baseline(runs, r);
        doc["runs"].push_back({
            {"threads", r.threads},
            {"cache", r.warm ? "warm" : "cold"},
            {"streamed", r.streamed},
            {"blocks", r.blocks},
            {"txs_per_block", r.txs_per_block},
            {"tps", r.tps()},
            {"ceiling_ratio", ceiling_tps > 0 ? r.tps() / ceiling_tps : 0.0},
            {"speedup_over_1_thread", b && b->tps() > 0 ? r.tps() / b->tps() : 0.0},
            {"wall_ms", r.wall_ms},
            {"stages", stages},
        });
    }
    return doc;
}

std::string svg_chart(const std::vector<Run>& runs, const std::string& title) {
    const char* names[] = {"decode", "verify", "execute", "commit"};
    const char* colors[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b"};
    std::vector<std::array<double, 4>> bars;
    double max_total = 0;
    for (const auto& r : runs) {
        bars.push_back({summarise(r.stages.decode).median_ms, summarise(r.stages.verify).median_ms,
                        summarise(r.stages.execute).median_ms,
                        summarise(r.stages.commit).median_ms});
        max_total =
            std::max(max_total, bars.back()[0] + bars.back()[1] + bars.back()[2] + bars.back()[3]);
    }
    if (max_total <= 0) max_total = 1;
    const int bar_w = 70, gap = 30, left = 70, top = 50, plot_h = 320;
    const int width = left + static_cast<int>(runs.size()) * (bar_w + gap) + 160;
    const int height = top + plot_h + 90;
    std::ostringstream s;
    s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' "
         "fill='white'/>\n";
    s << "<text x='" << left << "' y='25' font-size='14'>" << title << "</text>\n";
    // Axis with five ticks.
    for (int t = 0; t <= 4; ++t) {
        const double v = max_total * t / 4;
        const int y = top + plot_h - static_cast<int>(plot_h * t / 4);
        s << "<line x1='" << left - 5 << "' x2='" << width - 160 << "' y1='" << y << "' y2='" << y
          << "' stroke='#ddd'/><text x='" << left - 8 << "' y='" << y + 4 << "' text-anchor='end'>"
          << fixed(v, 1) << "</text>\n";
    }
    s << "<text x='15' y='" << top + plot_h / 2 << "' transform='rotate(-90 15 " << top + plot_h / 2
      << ")' text-anchor='middle'>ms per block (median)</text>\n";
    for (size_t i = 0; i < runs.size(); ++i) {
        const int x = left + static_cast<int>(i) * (bar_w + gap) + gap / 2;
        double acc = 0;
        for (int k = 0; k < 4; ++k) {
            const double h = plot_h * bars[i][static_cast<size_t>(k)] / max_total;
            const double y =
                top + plot_h - plot_h * (acc + bars[i][static_cast<size_t>(k)]) / max_total;
            s << "<rect x='" << x << "' y='" << fixed(y, 1) << "' width='" << bar_w << "' height='"
              << fixed(h, 1) << "' fill='" << colors[k] << "'><title>" << names[k] << ": "
              << fixed(bars[i][static_cast<size_t>(k)], 2) << " ms</title></rect>\n";
            acc += bars[i][static_cast<size_t>(k)];
        }
        s << "<text x='" << x + bar_w / 2 << "' y='" << top + plot_h + 15
          << "' text-anchor='middle'>" << runs[i].threads << "t "
          << (runs[i].warm ? "warm" : "cold") << "</text>\n";
        s << "<text x='" << x + bar_w / 2 << "' y='" << top + plot_h + 29
          << "' text-anchor='middle'>" << (runs[i].streamed ? "streamed" : "1-by-1") << "</text>\n";
        s << "<text x='" << x + bar_w / 2 << "' y='" << top + plot_h + 43
          << "' text-anchor='middle'>" << fixed(runs[i].tps(), 0) << " TPS</text>\n";
    }
    for (int k = 0; k < 4; ++k) {
        const int y = top + 20 * k;
        s << "<rect x='" << width - 140 << "' y='" << y << "' width='12' height='12' fill='"
          << colors[k] << "'/><text x='" << width - 122 << "' y='" << y + 10 << "'>" << names[k]
          << "</text>\n";
    }
    s << "</svg>\n";
    return s.str();
}

}  // namespace barrel::bench
