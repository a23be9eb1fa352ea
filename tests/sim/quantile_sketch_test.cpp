// The bounded-memory summary statistics: exact below the limit (numpy's linear percentiles),
// within QuantileSketch::kRelativeError above it, with count, mean and max exact.
#include "sim/quantile_sketch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuplan::sim {
namespace {

// numpy.percentile(v, 100 p) with the default linear method, computed here independently.
double numpy_percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const double pos = static_cast<double>(v.size() - 1) * p;
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// A deterministic spread over five decades (1 ms to 100 s), like latencies.
std::vector<double> spread(int n) {
    std::vector<double> v;
    v.reserve(static_cast<std::size_t>(n));
    std::uint64_t x = 88172645463325252ULL; // xorshift64 (Marsaglia 2003)
    for (int i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const double u = static_cast<double>(x >> 11) / 9007199254740992.0;
        v.push_back(1e-3 * std::pow(10.0, 5 * u));
    }
    return v;
}

TEST(QuantileSketch, SmallSamplesGiveNumpyLinearPercentilesExactly) {
    QuantileSketch q;
    for (int i = 10; i >= 1; --i) {
        q.add(i);
    }
    const LatencyStats s = q.stats();
    EXPECT_TRUE(q.exact());
    EXPECT_EQ(s.count, 10);
    EXPECT_DOUBLE_EQ(s.mean.si(), 5.5);
    EXPECT_DOUBLE_EQ(s.p50.si(), 5.5); // rank 4.5 between 5 and 6
    EXPECT_DOUBLE_EQ(s.p90.si(), 9.1); // rank 8.1 between 9 and 10
    EXPECT_DOUBLE_EQ(s.p95.si(), 9.55);
    EXPECT_DOUBLE_EQ(s.p99.si(), 9.91);
    EXPECT_DOUBLE_EQ(s.max.si(), 10);
}

TEST(QuantileSketch, WeightedRunsCountAsRepeatedSamples) {
    QuantileSketch q;
    q.add(1.0, 2);
    q.add(2.0, 1);
    q.add(1.0, 1); // 1, 1, 2, 1 -> sorted 1, 1, 1, 2
    const LatencyStats s = q.stats();
    EXPECT_EQ(s.count, 4);
    EXPECT_DOUBLE_EQ(s.mean.si(), 1.25);
    EXPECT_DOUBLE_EQ(s.p50.si(), 1.0);             // rank 1.5
    EXPECT_DOUBLE_EQ(s.p90.si(), 1.0 + 0.7 * 1.0); // rank 2.7 between 1 and 2
    EXPECT_DOUBLE_EQ(s.max.si(), 2.0);
}

TEST(QuantileSketch, AboveTheExactLimitPercentilesStayWithinTheRelativeError) {
    const std::vector<double> v = spread(200000);
    QuantileSketch q(1000);
    double sum = 0;
    for (const double x : v) {
        q.add(x);
        sum += x;
    }
    EXPECT_FALSE(q.exact());
    const LatencyStats s = q.stats();
    EXPECT_EQ(s.count, 200000);
    EXPECT_DOUBLE_EQ(s.mean.si(), sum / 200000);
    EXPECT_EQ(s.max.si(), *std::max_element(v.begin(), v.end()));
    const double a = QuantileSketch::kRelativeError * (1 + 1e-9);
    for (const auto& [p, got] : {std::pair{0.50, s.p50.si()},
                                 {0.90, s.p90.si()},
                                 {0.95, s.p95.si()},
                                 {0.99, s.p99.si()}}) {
        const double want = numpy_percentile(v, p);
        EXPECT_LE(std::abs(got - want), a * want) << "p" << p * 100;
    }
    // Five decades at 0.5 %: about 5 ln 10 / ln(1.01005) ≈ 1150 buckets, not 200,000 samples.
    EXPECT_LT(q.memory_bytes(), 64u * 1024u);
}

TEST(QuantileSketch, WeightedSamplesAboveTheLimitStayWithinTheRelativeError) {
    const std::vector<double> v = spread(5000);
    QuantileSketch q(100);
    std::vector<double> expanded;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const auto c = static_cast<std::int64_t>(i % 7 + 1);
        q.add(v[i], c);
        expanded.insert(expanded.end(), static_cast<std::size_t>(c), v[i]);
    }
    const LatencyStats s = q.stats();
    EXPECT_EQ(s.count, static_cast<std::int64_t>(expanded.size()));
    for (const auto& [p, got] :
         {std::pair{0.50, s.p50.si()}, {0.90, s.p90.si()}, {0.99, s.p99.si()}}) {
        const double want = numpy_percentile(expanded, p);
        EXPECT_LE(std::abs(got - want), QuantileSketch::kRelativeError * (1 + 1e-9) * want);
    }
}

TEST(QuantileSketch, MergingExactAndHistogramSketchesKeepsTheBound) {
    const std::vector<double> v = spread(30000);
    QuantileSketch a(20000), b(20000);
    for (std::size_t i = 0; i < v.size(); ++i) {
        (i < 5000 ? a : b).add(v[i]); // a stays exact, b turns into a histogram
    }
    EXPECT_TRUE(a.exact());
    EXPECT_FALSE(b.exact());
    QuantileSketch all(20000);
    all.merge(a);
    EXPECT_TRUE(all.exact());
    all.merge(b);
    EXPECT_FALSE(all.exact());
    const LatencyStats s = all.stats();
    EXPECT_EQ(s.count, 30000);
    EXPECT_EQ(s.max.si(), *std::max_element(v.begin(), v.end()));
    const double want = numpy_percentile(v, 0.99);
    EXPECT_LE(std::abs(s.p99.si() - want), QuantileSketch::kRelativeError * (1 + 1e-9) * want);
}

TEST(QuantileSketch, MergingSmallExactSketchesStaysExact) {
    QuantileSketch a, b;
    a.add(3);
    a.add(1);
    b.add(2);
    b.add(4);
    QuantileSketch all;
    all.merge(a);
    all.merge(b);
    const LatencyStats s = all.stats();
    EXPECT_TRUE(all.exact());
    EXPECT_DOUBLE_EQ(s.p50.si(), 2.5);
    EXPECT_DOUBLE_EQ(s.mean.si(), 2.5);
    EXPECT_DOUBLE_EQ(s.max.si(), 4);
}

TEST(QuantileSketch, ZerosHaveABucketOfTheirOwn) {
    QuantileSketch q(10);
    for (int i = 0; i < 90; ++i) {
        q.add(0.0);
    }
    for (int i = 0; i < 10; ++i) {
        q.add(2.0);
    }
    const LatencyStats s = q.stats();
    EXPECT_FALSE(q.exact());
    EXPECT_EQ(s.p50.si(), 0.0);
    EXPECT_EQ(s.max.si(), 2.0);
    // Rank 98.01 lies between two samples of 2.0: the bucket's value clamped to the max.
    EXPECT_NEAR(s.p99.si(), 2.0, 2.0 * QuantileSketch::kRelativeError);
}

} // namespace
} // namespace gpuplan::sim
