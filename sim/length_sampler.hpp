#pragma once
/// Draws token lengths from a model::LengthDistribution.

#include "model/workload.hpp"
#include "sim/rng.hpp"

#include <vector>

namespace gpuplan::sim {

/// A LengthDistribution prepared for sampling (log-normal parameters and the empirical CDF are
/// computed once). Throws InvalidArgument for an unusable distribution (min > max, negative
/// stddev, empty or non-positive empirical weights).
class LengthSampler {
  public:
    explicit LengthSampler(const model::LengthDistribution& d);
    /// One draw, rounded and clamped to [min, max]. O(1), or O(log values) for Empirical.
    [[nodiscard]] int sample(Rng& rng) const;

  private:
    model::LengthDistribution d_;
    double mu_ = 0, sigma_ = 0; // log-normal parameters of the underlying normal
    std::vector<double> cdf_;   // empirical: cumulative weights
};

} // namespace gpuplan::sim
