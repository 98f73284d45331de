#pragma once
// Order statistics of samples, one definition for every benchmark figure.

#include <vector>

namespace barrel::bench {

/// The nearest-rank q-quantile (0 < q <= 1) of samples sorted ascending: the smallest sample with
/// at least q of the samples at or below it. 0 for no samples.
double percentile_of_sorted(const std::vector<double>& sorted, double q);

/// The median (the mean of the middle two for an even count); 0 for no samples.
double median(std::vector<double> samples);

}  // namespace barrel::bench
