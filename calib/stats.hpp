#pragma once
/// The percentile rule of calib's error statistics, in one place.
///
/// Nearest rank, i.e. the inverse of the empirical distribution function (Hyndman and Fan,
/// "Sample quantiles in statistical packages", The American Statistician 50(4), 1996,
/// definition 1; numpy.quantile(a, q, weights=w, method="inverted_cdf")): the q-quantile of
/// values with weights is the smallest value whose cumulative weight, in ascending order of
/// value, reaches q × the total weight; with unit weights, the ceil(q n)-th smallest value.
///
/// Why this rule: it is the one definition that takes weights as they are (numpy accepts
/// weights for no other method), so a profile's per-point figures and its time-weighted error
/// band follow the same rule; and a percentile is always an observed error, so "90 % of the
/// points are within the P90" holds exactly on the data.
///
/// Latency percentiles of measured serving runs are not error statistics: they are compared with
/// the simulator's and follow its rule (sim::QuantileSketch, numpy's default linear
/// interpolation; calib/serving_runs.cpp).

#include <vector>

namespace gpuplan::calib {

/// The nearest-rank q-quantile (0 < q <= 1) of `values` (any order). 0 for an empty list.
[[nodiscard]] double nearest_rank(const std::vector<double>& values, double q);

/// The same with weights (non-negative, one per value, a positive total): the smallest value
/// whose cumulative weight reaches q × the total. 0 for an empty list.
[[nodiscard]] double weighted_nearest_rank(const std::vector<double>& values,
                                           const std::vector<double>& weights, double q);

} // namespace gpuplan::calib
