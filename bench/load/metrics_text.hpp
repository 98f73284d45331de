#pragma once
// A reader of the Prometheus text format (0.0.4) that /metrics serves: every sample line
// `name{label="value",...} value [timestamp]`, comments skipped. Generic on purpose: it knows no
// family, so a metric the node does not (yet) export is simply absent, and the report says
// "n/a" for it.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace barrel::load {

struct Sample {
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;  ///< in the order written
    double value{0};
};

class MetricsText {
public:
    /// Every well-formed sample of `text`; a line that is not one is counted in malformed().
    static MetricsText parse(std::string_view text);

    /// The value of the first sample named `name` whose labels include every pair of `labels`.
    std::optional<double> value(
        std::string_view name,
        const std::vector<std::pair<std::string_view, std::string_view>>& labels = {}) const;

    const std::vector<Sample>& samples() const noexcept { return m_samples; }
    size_t malformed() const noexcept { return m_malformed; }

private:
    std::vector<Sample> m_samples;
    size_t m_malformed{0};
};

/// One sample line, or nothing if it is not one (a comment, a blank line, garbage).
std::optional<Sample> parse_sample_line(std::string_view line);

}  // namespace barrel::load
