// Arrival processes and length distributions.
#include "model/error.hpp"
#include "model/workload_mix.hpp"
#include "sim/arrival_clock.hpp"
#include "sim/length_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gpuplan::sim {
namespace {

struct GapStats {
    double mean = 0;
    double cv = 0;
    double last = 0;
    int n = 0;
};

GapStats gaps(ArrivalClock& c, int n, std::uint64_t seed) {
    Rng rng(seed);
    double prev = 0, s = 0, s2 = 0;
    GapStats g;
    for (int i = 0; i < n; ++i) {
        const double t = *c.next(rng);
        const double d = t - prev;
        EXPECT_GE(d, 0.0);
        s += d;
        s2 += d * d;
        prev = t;
    }
    g.mean = s / n;
    g.cv = std::sqrt(s2 / n - g.mean * g.mean) / g.mean;
    g.last = prev;
    g.n = n;
    return g;
}

TEST(ArrivalClock, PoissonHasItsRateAndUnitCv) {
    model::ArrivalProcess p;
    ArrivalClock c(p, 10.0);
    const GapStats g = gaps(c, 100000, 1);
    EXPECT_NEAR(g.mean, 0.1, 0.002);
    EXPECT_NEAR(g.cv, 1.0, 0.02);
}

TEST(ArrivalClock, GammaHasTheRequestedBurstiness) {
    model::ArrivalProcess p;
    p.kind = model::ArrivalKind::Gamma;
    p.cv = 3.0;
    ArrivalClock c(p, 5.0);
    const GapStats g = gaps(c, 200000, 2);
    EXPECT_NEAR(g.mean, 0.2, 0.01);
    EXPECT_NEAR(g.cv, 3.0, 0.15);
}

TEST(ArrivalClock, ConstantIsEvenlySpaced) {
    model::ArrivalProcess p;
    p.kind = model::ArrivalKind::Constant;
    ArrivalClock c(p, 4.0);
    const GapStats g = gaps(c, 1000, 3);
    EXPECT_NEAR(g.mean, 0.25, 1e-12);
    EXPECT_NEAR(g.cv, 0.0, 1e-6);
}

TEST(ArrivalClock, StepCurveChangesTheRateAtEachStep) {
    model::ArrivalProcess p;
    p.curve.kind = model::RateCurveKind::Step;
    p.curve.steps = {{Seconds(100), 50.0}, {Seconds(200), 0.0}};
    ArrivalClock c(p, 10.0);
    Rng rng(4);
    int before = 0, during = 0;
    while (const auto t = c.next(rng)) {
        (*t < 100 ? before : during) += 1;
        ASSERT_LT(*t, 200.0);
    }
    // Expected 1000 then 5000 arrivals; Poisson noise is about √n.
    EXPECT_NEAR(before, 1000, 120);
    EXPECT_NEAR(during, 5000, 300);
}

TEST(ArrivalClock, DiurnalCurveFollowsTheCumulativeRate) {
    model::ArrivalProcess p;
    p.kind = model::ArrivalKind::Constant; // no noise: the n-th arrival is at Λ⁻¹(n)
    p.curve.kind = model::RateCurveKind::Diurnal;
    p.curve.period = Seconds(1000);
    p.curve.amplitude = 0.8;
    p.curve.peak_at = Seconds(250);
    ArrivalClock c(p, 2.0);
    Rng rng(5);
    for (int n = 1; n <= 4000; ++n) {
        const double t = *c.next(rng);
        ASSERT_NEAR(c.cumulative(t), n, 1e-6) << n;
    }
    // Over whole periods the mean rate is the base rate.
    EXPECT_NEAR(c.cumulative(2000.0), 4000.0, 1e-6);
    // Near the peak the rate is 1.8 × 2 /s.
    EXPECT_NEAR(c.cumulative(251.0) - c.cumulative(249.0), 2 * 3.6, 0.01);
}

TEST(ArrivalClock, RejectsBadParameters) {
    model::ArrivalProcess p;
    EXPECT_THROW(ArrivalClock(p, 0.0), InvalidArgument);
    p.kind = model::ArrivalKind::Gamma;
    p.cv = 0;
    EXPECT_THROW(ArrivalClock(p, 1.0), InvalidArgument);
}

double sample_mean(const model::LengthDistribution& d, int n, int* lo = nullptr,
                   int* hi = nullptr) {
    LengthSampler s(d);
    Rng rng(11);
    double sum = 0;
    int mn = 1 << 30, mx = -1;
    for (int i = 0; i < n; ++i) {
        const int x = s.sample(rng);
        sum += x;
        mn = std::min(mn, x);
        mx = std::max(mx, x);
    }
    if (lo)
        *lo = mn;
    if (hi)
        *hi = mx;
    return sum / n;
}

TEST(LengthSampler, DistributionsHaveTheirMeansAndBounds) {
    EXPECT_EQ(sample_mean(model::LengthDistribution::fixed(300), 10), 300);
    model::LengthDistribution u;
    u.kind = model::LengthKind::Uniform;
    u.min = 10;
    u.max = 20;
    int lo = 0, hi = 0;
    EXPECT_NEAR(sample_mean(u, 100000, &lo, &hi), 15.0, 0.05);
    EXPECT_EQ(lo, 10);
    EXPECT_EQ(hi, 20);
    model::LengthDistribution n;
    n.kind = model::LengthKind::Normal;
    n.mean = 500;
    n.stddev = 50;
    EXPECT_NEAR(sample_mean(n, 100000), 500.0, 1.0);
    model::LengthDistribution ln;
    ln.kind = model::LengthKind::LogNormal;
    ln.mean = 800;
    ln.stddev = 600;
    EXPECT_NEAR(sample_mean(ln, 200000), 800.0, 10.0);
    ln.max = 1000;
    sample_mean(ln, 1000, &lo, &hi);
    EXPECT_LE(hi, 1000);
    model::LengthDistribution e;
    e.kind = model::LengthKind::Empirical;
    e.values = {100, 1000};
    e.weights = {3, 1};
    EXPECT_NEAR(sample_mean(e, 100000), 325.0, 5.0);
    // The mean is model::mean_length's (the one rule; the sampler has no copy): (3·100 + 1000) / 4.
    EXPECT_DOUBLE_EQ(model::mean_length(e), 325.0);
}

TEST(LengthSampler, RejectsUnusableDistributions) {
    model::LengthDistribution d;
    d.min = 10;
    d.max = 5;
    EXPECT_THROW(LengthSampler{d}, InvalidArgument);
    model::LengthDistribution e;
    e.kind = model::LengthKind::Empirical;
    EXPECT_THROW(LengthSampler{e}, InvalidArgument);
    e.values = {1, 2};
    e.weights = {1};
    EXPECT_THROW(LengthSampler{e}, InvalidArgument);
}

} // namespace
} // namespace gpuplan::sim
