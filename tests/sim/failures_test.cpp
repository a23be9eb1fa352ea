// Replica failures in the simulator (cluster.failures, docs/simulator.md "Replica failures"):
// the measured availability against model/availability's closed form, requests of a failed
// replica retried or lost, and determinism.
#include "model/availability.hpp"
#include "model/memory.hpp"
#include "model/replica_failures.hpp"
#include "model/step_cost.hpp"
#include "sim/simulate.hpp"
#include "tests/model/fixtures.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

// With the autoscaler (docs/simulator.md, "Autoscaling with failures"): a failed replica is
// replaced at once by a new machine, up after the autoscaler's provisioning and the cold start;
// min = max = 2 holds the count, so every moment two replicas are paid for (the failed one until
// it fails, its replacement from then) and the fleet is short exactly while a replacement is
// cold-starting.
model::Scenario autoscaled_failing(double mtbf, int replicas, int spares) {
    model::Scenario s = failing(mtbf, 1e6, replicas, spares); // repairs come back too late
    s.workload.requests = 200;
    s.workload.requests_per_s = 2.0;
    s.cluster.cold_start.load_bandwidth = BytesPerSecond(2e9);
    s.cluster.cold_start.startup = Seconds(5);
    model::Autoscaler a;
    a.interval = Seconds(10);
    a.provisioning = Seconds(7);
    a.min_replicas = replicas;
    a.max_replicas = replicas;
    s.cluster.autoscaler = a;
    return s;
}

TEST(SimFailures, WithTheAutoscalerAFailedReplicaIsReplacedByAProvisionedColdStart) {
    const model::Scenario s = autoscaled_failing(40, 2, 0);
    const SimResult r = simulate(s);
    ASSERT_TRUE(r.ok);
    ASSERT_TRUE(r.failures);
    ASSERT_TRUE(r.autoscaler);
    const FailureResult& f = *r.failures;
    ASSERT_GE(f.failures, 1);
    EXPECT_EQ(f.takeovers, 0);           // no spares
    EXPECT_EQ(r.overall.completed, 200); // retried, none lost
    const double load = model::estimate_memory(s.deployment).weights.si() / 2e9 + 5;
    const double replace = 7 + load; // provisioning + weights / bandwidth + start-up
    // Replicas 0 and 1 are the initial ones; replica 2 + k replaces the k-th failure.
    ASSERT_EQ(r.replicas.size(), 2u + f.failed_at.size());
    for (std::size_t k = 0; k < f.failed_at.size(); ++k) {
        EXPECT_NEAR(r.replicas[2 + k].available.si(), f.failed_at[k].si() + replace, 1e-9) << k;
    }
    // The autoscaler never changed the count (failures are not scale-ups) ...
    EXPECT_EQ(r.autoscaler->scale_ups, 0);
    EXPECT_EQ(r.autoscaler->timeline.size(), 1u);
    // ... and paid for two replicas the whole run.
    const double span = r.power.span.si();
    EXPECT_NEAR(r.autoscaler->replica_seconds, 2 * span, 1e-6);
    // Availability: the share of the run with no replacement cold-starting, the union of
    // [failure, failure + replace] clipped to the run.
    double short_s = 0, covered_to = 0;
    for (const Seconds t : f.failed_at) {
        const double a = std::max(t.si(), covered_to);
        const double b = std::min(t.si() + replace, span);
        short_s += std::max(0.0, b - a);
        covered_to = std::max(covered_to, b);
    }
    EXPECT_NEAR(f.availability, 1.0 - short_s / span, 1e-9);
}

TEST(SimFailures, WithTheAutoscalerASpareTakesOverWithoutProvisioning) {
    // One replica and one spare, repairs at once (MTTR 0, so the spare is up whenever the
    // serving replica fails): its replica is up only the cold start (no provisioning) after
    // the first failure, as without the autoscaler.
    model::Scenario s = autoscaled_failing(40, 1, 1);
    s.cluster.failures->mttr = Seconds(0);
    const SimResult r = simulate(s);
    ASSERT_TRUE(r.failures);
    ASSERT_GE(r.failures->takeovers, 1);
    ASSERT_GE(r.replicas.size(), 2u);
    const double load = model::estimate_memory(s.deployment).weights.si() / 2e9 + 5;
    EXPECT_NEAR(r.replicas[1].available.si(), r.failures->failed_at[0].si() + load, 1e-9);
    EXPECT_EQ(r.overall.completed, 200);
    EXPECT_EQ(r, simulate(s)); // deterministic
}

// Degraded links (cluster.failures.degraded_link): the replica's deployment with its NVLink at
// a share of its bandwidth. Llama-3-8B at tp 2, one decode: Megatron-LM's tensor parallelism
// all-reduces the 4,096 × 2-byte hidden state 2 × 32 + 1 = 65 times (a ring over 2 GPUs moves
// 2 (2 − 1) / 2 × 8,192 B = 8,192 B per GPU each time) and gathers the 128,256 × 2-byte logits
// (half of them cross the link): 65 × 8,192 + 128,256 B per GPU. At half the bandwidth each
// byte takes twice as long; latencies and everything else are unchanged.
double link_bytes_one_decode() {
    return 65 * 8192.0 + 128256.0 * 2 / 2;
}

model::EfficiencyProfile full_link_profile() {
    model::EfficiencyProfile p = model::default_profile();
    p.comm.bandwidth = {1.0, 0.0}; // collectives at the link's datasheet bandwidth
    return p;
}

TEST(DegradedLink, TheSlowedDeploymentAddsTheBandwidthShareOfItsCommunication) {
    const model::Deployment d =
        model::test::deploy(model::test::llama3_8b(), model::test::h100(), 2);
    const model::EfficiencyProfile prof = full_link_profile();
    const model::StepCostModel normal(d, prof);
    const model::StepCostModel slow(model::degraded_link(d, 0.5), prof);
    const std::vector<model::DecodeSeq> one{model::DecodeSeq{1000}};
    const double bw = d.intra_node_link.bandwidth_per_direction.si();
    const double extra = link_bytes_one_decode() / (0.5 * bw) - link_bytes_one_decode() / bw;
    const model::StepCost a = normal.cost({}, one);
    const model::StepCost b = slow.cost({}, one);
    EXPECT_NEAR(b.op(model::Op::TpAllReduce).time.si() - a.op(model::Op::TpAllReduce).time.si(),
                extra, 1e-12);
    EXPECT_NEAR(b.time.si() - a.time.si(), extra, 1e-12);
    EXPECT_GT(extra, 0.0);
}

TEST(DegradedLink, AReplicaWithADegradedLinkRunsLongerStepsByTheCommunicationShare) {
    // One request on one tp-2 replica whose link goes down at once (mean 1 µs) and stays down
    // (repair mean 10^8 s); replicas never fail (MTBF 10^8 s). Each decode step is longer than
    // the same step of a run without link failures by exactly the hand-computed share above.
    model::Scenario s = llama8b_scenario(512, 64, 1.0, 1);
    s.deployment.par.tp = 2;
    s.cluster.replicas = 1;
    model::ReplicaFailures f;
    f.mtbf = Seconds(1e8);
    f.mttr = Seconds(1e8);
    s.cluster.failures = f;
    SimOptions o;
    o.keep_steps = true;
    o.profile = full_link_profile();
    const SimResult base = simulate(s, o);
    model::LinkDegradation ld;
    ld.mtbf = Seconds(1e-6);
    ld.bandwidth_factor = 0.5;
    s.cluster.failures->degraded_link = ld;
    const SimResult slow = simulate(s, o);
    ASSERT_TRUE(base.ok && slow.ok);
    ASSERT_EQ(slow.failures->link_degradations, 1);
    ASSERT_EQ(base.step_log.size(), slow.step_log.size());
    ASSERT_GT(base.step_log.size(), 10u);
    const double bw = s.deployment.intra_node_link.bandwidth_per_direction.si();
    const double extra = link_bytes_one_decode() / (0.5 * bw) - link_bytes_one_decode() / bw;
    int decodes = 0;
    for (std::size_t k = 1; k < base.step_log.size(); ++k) { // step 0 is the prefill
        ASSERT_EQ(base.step_log[k].decodes, 1);
        // Steps are in whole nanoseconds: each duration is rounded, so allow two ticks.
        EXPECT_NEAR(slow.step_log[k].duration.si() - base.step_log[k].duration.si(), extra, 2e-9)
            << "step " << k;
        ++decodes;
    }
    EXPECT_EQ(decodes, 63);
    // Served the whole run on the degraded link: its replica-seconds are the run's span.
    EXPECT_NEAR(slow.failures->degraded_replica_seconds, slow.power.span.si(), 1e-5);
    EXPECT_EQ(slow.overall.completed, 1);
}

// SLO attainment over time (SimResult::slo_windows): counted independently from the kept
// request records, each in the minute it finished (arrival + E2E), and the windows'
// availability, weighted by their length, is the run's.
TEST(SloWindows, CountRequestsByTheMinuteTheyFinishAndAverageToTheRunsAvailability) {
    model::Scenario s = failing(200, 50, 2, 0);
    s.workload.requests = 300;
    s.workload.requests_per_s = 0.5;
    s.slo.ttft = Seconds(0.05); // a retried request misses it
    SimOptions o;
    o.keep_requests = true;
    const SimResult r = simulate(s, o);
    ASSERT_TRUE(r.ok);
    ASSERT_TRUE(r.failures);
    ASSERT_GT(r.failures->failures, 0);
    EXPECT_DOUBLE_EQ(r.slo_window.si(), 60.0);
    const double end = r.power.span.si();
    ASSERT_EQ(r.slo_windows.size(), static_cast<std::size_t>(std::ceil(end / 60.0)));
    std::vector<std::int64_t> finished(r.slo_windows.size(), 0), met(r.slo_windows.size(), 0);
    for (const RequestRecord& q : r.requests) {
        ASSERT_TRUE(q.e2e);
        const auto w = static_cast<std::size_t>((q.arrival.si() + q.e2e->si()) / 60.0);
        ASSERT_LT(w, finished.size());
        ++finished[w];
        met[w] += q.slo_met ? 1 : 0;
    }
    double weighted = 0;
    bool some_missed = false;
    for (std::size_t w = 0; w < r.slo_windows.size(); ++w) {
        const SloWindow& sw = r.slo_windows[w];
        EXPECT_DOUBLE_EQ(sw.t.si(), 60.0 * static_cast<double>(w));
        EXPECT_EQ(sw.finished, finished[w]) << w;
        EXPECT_EQ(sw.slo_met, met[w]) << w;
        if (finished[w] > 0) {
            ASSERT_TRUE(sw.attainment);
            EXPECT_DOUBLE_EQ(*sw.attainment,
                             static_cast<double>(met[w]) / static_cast<double>(finished[w]));
            some_missed = some_missed || met[w] < finished[w];
        } else {
            EXPECT_FALSE(sw.attainment);
        }
        ASSERT_TRUE(sw.availability);
        weighted += *sw.availability * (std::min(end, 60.0 * (w + 1)) - 60.0 * w);
    }
    EXPECT_TRUE(some_missed); // the failures show in some minute
    EXPECT_NEAR(weighted / end, r.failures->availability, 1e-9);
    // Without failures there is no availability per window.
    s.cluster.failures.reset();
    for (const SloWindow& sw : simulate(s).slo_windows) {
        EXPECT_FALSE(sw.availability);
    }
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
