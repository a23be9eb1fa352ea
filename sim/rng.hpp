#pragma once
/// The simulation's random numbers: xoshiro256** seeded through splitmix64, with the
/// distributions written out here so that a seed gives the same draws on every standard
/// library (std::normal_distribution and friends are implementation-defined).

#include <cstdint>

namespace gpuplan::sim {

/// A small, fast, seedable generator with the distributions the workload needs. A value type:
/// copying it forks the stream.
class Rng {
  public:
    /// Seeds the state from `seed` (splitmix64, as the xoshiro authors recommend).
    explicit Rng(std::uint64_t seed = 1) noexcept;

    /// An independent generator for sub-stream `stream` of this seed (arrivals, lengths, ...),
    /// so adding draws to one component does not shift another's.
    [[nodiscard]] Rng fork(std::uint64_t stream) const noexcept;

    /// 64 random bits.
    std::uint64_t next() noexcept;
    /// Uniform in [0, 1) with 53 random bits.
    double uniform() noexcept;
    /// Uniform in [a, b).
    double uniform(double a, double b) noexcept { return a + (b - a) * uniform(); }
    /// Uniform integer in [0, n); 0 when n == 0. Lemire's nearly divisionless method.
    std::uint64_t below(std::uint64_t n) noexcept;
    /// Exponential with the given mean (> 0).
    double exponential(double mean) noexcept;
    /// Normal N(mean, stddev²) (Marsaglia's polar method).
    double normal(double mean, double stddev) noexcept;
    /// Log-normal: exp(N(mu, sigma²)).
    double lognormal(double mu, double sigma) noexcept;
    /// Gamma with shape k > 0 and scale θ (mean kθ; Marsaglia and Tsang 2000).
    double gamma(double shape, double scale) noexcept;

  private:
    std::uint64_t s_[4]{};
    double spare_ = 0.0; // the polar method makes normals in pairs
    bool has_spare_ = false;
};

} // namespace gpuplan::sim
