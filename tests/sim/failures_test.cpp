// Replica failures in the simulator (cluster.failures, docs/simulator.md "Replica failures"):
// the measured availability against model/availability's closed form, requests of a failed
// replica retried or lost, and determinism.
#include "model/availability.hpp"
#include "model/memory.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;

model::Scenario failing(double mtbf, double mttr, int replicas, int spares) {
    model::Scenario s = llama8b_scenario(64, 16, 0.05, 200);
    test::set_kv_pool(s, 1.0); // small replicas: every takeover builds a new one
    s.cluster.replicas = replicas;
    model::ReplicaFailures f;
    f.mtbf = Seconds(mtbf);
    f.mttr = Seconds(mttr);
    f.spares = spares;
    s.cluster.failures = f;
    return s;
}

// P(Binomial(n, p) = i).
double binom(int n, int i, double p) {
    return std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0)) *
           std::pow(p, i) * std::pow(1 - p, n - i);
}

TEST(SimFailures, LongRunAvailabilityMatchesTheClosedForm) {
    // N = 2 replicas and k = 1 spare, MTBF 200 s, MTTR 40 s: each unit is up with
    // p = 200 / 240 = 5/6, and with instant takeover (no cold start) the fleet has 2 up while
    // at least 2 of 3 units are: A = p³ + 3 p² (1 − p) = 0.9259. Replicas up: E[min(U, 2)] / 2
    // for U ~ Bin(3, p). Four runs (seeds) of 40,000 s each, light load (0.05 requests/s).
    const double p = 200.0 / 240.0;
    const double a = std::pow(p, 3) + 3 * p * p * (1 - p);
    double up = 0;
    for (int i = 0; i <= 3; ++i) {
        up += std::min(i, 2) * binom(3, i, p) / 2.0;
    }
    EXPECT_NEAR(a, model::fleet_availability(2, 1, p), 1e-12);
    // Statistical tolerance: the time average of an on/off indicator with failure and repair
    // rates λ and μ over T has variance ≈ 2 A (1 − A) / ((λ + μ) T) (its autocovariance decays
    // as exp(−(λ + μ) t)); here λ + μ = 0.03/s, T = 40,000 s: one run's standard error is about
    // 0.0107, the mean of four 0.0054. Allowed: 3 standard errors.
    const double se = std::sqrt(2 * a * (1 - a) / (0.03 * 40000.0)) / 2.0;
    double avail = 0, upf = 0;
    int failures = 0;
    for (const std::uint64_t seed : {1u, 2u, 3u, 4u}) {
        model::Scenario s = failing(200, 40, 2, 1);
        s.workload.requests.reset();
        s.workload.duration = Seconds(40000);
        s.seed = seed;
        const SimResult r = simulate(s);
        ASSERT_TRUE(r.ok);
        ASSERT_TRUE(r.failures);
        EXPECT_NEAR(r.failures->expected_availability, a, 1e-12);
        avail += r.failures->availability / 4;
        upf += r.failures->mean_up_fraction / 4;
        failures += r.failures->failures;
    }
    EXPECT_NEAR(avail, a, 3 * se);
    EXPECT_NEAR(upf, up, 3 * se);
    // About 3 units × 40,000 s / 240 s per cycle × 4 runs = 2,000 failures.
    EXPECT_NEAR(failures, 2000, 6 * std::sqrt(2000.0));
}

TEST(SimFailures, RequestsOfAFailedReplicaAreRetriedOrLost) {
    // Failures every 30 s per replica while requests take a second or two: some fail in flight.
    model::Scenario s = llama8b_scenario(512, 128, 4.0, 200);
    s.cluster.replicas = 2;
    model::ReplicaFailures f;
    f.mtbf = Seconds(30);
    f.mttr = Seconds(10);
    s.cluster.failures = f;
    const SimResult retry = simulate(s);
    ASSERT_TRUE(retry.failures);
    EXPECT_GT(retry.failures->failures, 0);
    EXPECT_GT(retry.failures->requests_retried, 0);
    EXPECT_EQ(retry.failures->requests_lost, 0);
    EXPECT_EQ(retry.overall.completed, 200); // every request served in the end
    s.cluster.failures->in_flight = model::FailedRequests::Lose;
    const SimResult lose = simulate(s);
    EXPECT_GT(lose.failures->requests_lost, 0);
    EXPECT_EQ(lose.failures->requests_retried, 0);
    EXPECT_EQ(lose.overall.rejected, lose.failures->requests_lost); // lost ones fail
    EXPECT_EQ(lose.overall.completed + lose.failures->requests_lost, 200);
}

TEST(SimFailures, ASpareTakesOverAfterItsColdStart) {
    // One replica and one spare, failures every 40 s on average over a run of about 100 s,
    // repairs at once (MTTR 0, so the spare is up whenever the serving replica fails); the
    // spare loads the weights at 2 GB/s and starts in 5 s. Its replica is up exactly
    // load = weights / 2 GB/s + 5 s after the first failure.
    model::Scenario s = failing(40, 0, 1, 1);
    s.workload.requests = 200;
    s.workload.requests_per_s = 2.0;
    s.cluster.cold_start.load_bandwidth = BytesPerSecond(2e9);
    s.cluster.cold_start.startup = Seconds(5);
    const SimResult r = simulate(s);
    ASSERT_TRUE(r.failures);
    ASSERT_GE(r.failures->takeovers, 1);
    ASSERT_GE(r.failures->failed_at.size(), 1u);
    ASSERT_GE(r.replicas.size(), 2u);
    const double load = model::estimate_memory(s.deployment).weights.si() / 2e9 + 5;
    EXPECT_NEAR(r.replicas[1].available.si(), r.failures->failed_at[0].si() + load, 1e-9);
    // Until then nothing serves: the run is unavailable for at least that long.
    EXPECT_LE(r.failures->availability, 1.0 - load / r.power.span.si() + 1e-9);
}

TEST(SimFailures, SameSeedSameResult) {
    model::Scenario s = failing(50, 10, 2, 1);
    s.workload.requests = 300;
    s.workload.requests_per_s = 2.0;
    const SimResult a = simulate(s);
    EXPECT_EQ(a, simulate(s));
    EXPECT_GT(a.failures->failures, 0);
    s.seed = 8;
    EXPECT_NE(a.failures, simulate(s).failures);
}

TEST(SimFailures, WithoutTheBlockNothingFailsAndNothingIsReported) {
    const SimResult r = simulate(llama8b_scenario(64, 16, 2.0, 50));
    EXPECT_FALSE(r.failures);
    EXPECT_FALSE(r.autoscaler);
}

} // namespace
} // namespace gpuplan::sim
