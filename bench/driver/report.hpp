#pragma once
// The driver's measurements and how they are summarised, printed, saved and drawn.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace barrel::bench {

struct StageSamples {
    std::vector<double> decode, verify, execute, commit;
};

struct Summary {
    double median_ms{0};
    double p95_ms{0};
};

Summary summarise(std::vector<double> samples);

struct Run {
    size_t threads{1};
    bool warm{false};
    bool streamed{false};
    size_t blocks{0};
    size_t txs_per_block{0};
    double wall_ms{0};  ///< the whole import, start to last commit
    StageSamples stages;

    double tps() const {
        return wall_ms > 0 ? static_cast<double>(blocks * txs_per_block) * 1000.0 / wall_ms : 0;
    }
    std::string label() const;
};

/// The speedup of one stage of `r` over the 1-thread run of the same mode: the median over
/// blocks of the per-block ratio, which needs both runs to have imported the same blocks side by
/// side (the lockstep one-block-at-a-time runs). None for 1-thread and streamed runs, whose
/// stage times include waiting for the other stages.
std::optional<double> stage_speedup(const std::vector<Run>& runs, const Run& r,
                                    std::vector<double> StageSamples::*stage);

/// The table: per stage median and p95 ms per block, TPS, ratio to the recovery ceiling, and the
/// speedup over the 1-thread run of the same mode.
std::string table(const std::vector<Run>& runs, double ceiling_tps);

nlohmann::json to_json(const std::vector<Run>& runs, double ceiling_tps,
                       const nlohmann::json& machine);

/// A stacked bar chart (SVG) of the median per-stage time of a block for each run.
std::string svg_chart(const std::vector<Run>& runs, const std::string& title);

}  // namespace barrel::bench
