#include "stats.hpp"

#include <algorithm>
#include <cmath>

namespace barrel::bench {

double percentile_of_sorted(const std::vector<double>& s, double q) {
    if (s.empty()) return 0;
    // Less a hair, so that q × n landing a rounding error above a whole number (0.07 × 100 is
    // 7.000000000000001) does not take the next rank.
    const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(s.size()) - 1e-9));
    return s[std::clamp<size_t>(rank, 1, s.size()) - 1];
}

double median(std::vector<double> s) {
    if (s.empty()) return 0;
    std::sort(s.begin(), s.end());
    const size_t n = s.size();
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

}  // namespace barrel::bench
