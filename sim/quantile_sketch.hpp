#pragma once
/// Summary statistics of a stream of non-negative samples (latencies in seconds) in bounded
/// memory: exact while it holds at most `exact_limit` entries, a log-bucketed histogram above.
///
/// Exact mode keeps every sample (8 bytes each, or 16 bytes per (value, count) run for
/// weighted samples) and computes percentiles as numpy's default does (linear interpolation
/// between order statistics). Once more than `exact_limit` entries have been added, the
/// samples move into a histogram in the manner of DDSketch (Masson, Rim, Lee, "DDSketch: a
/// fast and fully-mergeable quantile sketch with relative-error guarantees", VLDB 2019): a
/// positive value x falls into bucket i = ceil(log_γ x) with γ = (1 + α) / (1 − α), whose
/// representative 2γ^i / (γ + 1) is within a relative error α of every value of the bucket;
/// zero (and anything ≤ 0) has a bucket of its own. With α = kRelativeError = 0.5 %, every
/// reported percentile is within 0.5 % of the exact one (the interpolation of two values each
/// within α is within α), and count, mean and max stay exact. Memory in histogram mode is
/// 8 bytes per occupied bucket range: about 4,000 buckets span 1 ns to 10⁷ s.
/// Deterministic: the same samples in the same order give the same bits.

#include "sim/result.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpuplan::sim {

class QuantileSketch {
  public:
    /// Relative error bound on percentiles in histogram mode.
    static constexpr double kRelativeError = 0.005;
    /// Entries kept exactly by default (8 MiB of unit samples, 16 MiB of weighted runs).
    static constexpr std::size_t kDefaultExactLimit = std::size_t{1} << 20;

    explicit QuantileSketch(std::size_t exact_limit = kDefaultExactLimit);

    /// Adds one sample. Amortised O(1); allocates only while exact or when the histogram
    /// first reaches a new bucket range.
    void add(double x);
    /// Adds `count` samples of value `x` (count ≥ 1); a run equal to the previous one is
    /// merged into it.
    void add(double x, std::int64_t count);
    /// Adds every sample of `other` (exact stays exact while the total fits the limit).
    void merge(const QuantileSketch& other);

    /// Count, mean, p50/p90/p95/p99 and max. Sorts the exact samples in place (O(n log n)
    /// once; later calls are O(n)); O(buckets) in histogram mode.
    [[nodiscard]] LatencyStats stats();
    [[nodiscard]] std::int64_t count() const noexcept { return count_; }
    /// True while every sample is kept (percentiles exact).
    [[nodiscard]] bool exact() const noexcept { return !histogram_; }
    /// Bytes of samples and buckets held (capacity, not size).
    [[nodiscard]] std::size_t memory_bytes() const noexcept;

  private:
    void to_histogram();
    void bucket_add(double x, std::int64_t count);
    [[nodiscard]] std::size_t entries() const noexcept { return values_.size() + runs_.size(); }
    [[nodiscard]] double value_at_rank(std::int64_t k) const;

    std::size_t exact_limit_;
    bool histogram_ = false;
    bool sorted_ = false;
    std::vector<double> values_;                        // exact, unit samples
    std::vector<std::pair<double, std::int64_t>> runs_; // exact, weighted samples
    std::vector<std::int64_t> buckets_;                 // histogram: bucket offset_ + j
    int offset_ = 0;
    std::int64_t zero_ = 0; // histogram: samples ≤ 0
    std::int64_t count_ = 0;
    double sum_ = 0;
    double min_ = 0, max_ = 0;
};

} // namespace gpuplan::sim
