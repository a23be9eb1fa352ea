// The autoscaler in the simulator (cluster.autoscaler, docs/simulator.md "Autoscaling"): waves
// of long requests from a trace, so the utilisation each scrape sees is known by hand.
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/validity.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;

// `n` requests at each time of `waves`, 100 + 8000 tokens each (about a minute of decoding on
// an H100, so all are still running at the scrapes the tests look at).
model::Scenario waves_scenario(std::vector<double> waves, int n, int replicas) {
    model::Scenario s = llama8b_scenario();
    s.workload.requests.reset();
    s.workload.arrival.kind = model::ArrivalKind::Trace;
    for (const double t : waves) {
        for (int i = 0; i < n; ++i) {
            s.workload.trace.push_back({Seconds(t), 100, 8000});
        }
    }
    s.deployment.engine.max_num_seqs = 8;
    s.cluster.replicas = replicas;
    s.cluster.router = model::RouterPolicy::LeastOutstanding;
    model::Autoscaler a;
    a.metric = model::ScaleMetric::Utilisation;
    a.target = 0.5;
    a.interval = Seconds(10);
    a.provisioning = Seconds(0);
    a.cooldown = Seconds(300);
    a.min_replicas = 1;
    a.max_replicas = 10;
    s.cluster.autoscaler = a;
    return s;
}

std::vector<ReplicaCountPoint> points(std::initializer_list<std::pair<double, int>> l) {
    std::vector<ReplicaCountPoint> v;
    for (const auto& [t, n] : l) {
        v.push_back({Seconds(t), n});
    }
    return v;
}

TEST(DesiredReplicas, FollowsTheHpaRuleWithToleranceAndBounds) {
    model::Autoscaler a;
    a.target = 0.5;
    a.min_replicas = 2;
    a.max_replicas = 6;
    EXPECT_EQ(model::desired_replicas(a, 2, 1.0), 4);  // ceil(2 × 1.0 / 0.5)
    EXPECT_EQ(model::desired_replicas(a, 3, 0.7), 5);  // ceil(3 × 1.4) = ceil(4.2)
    EXPECT_EQ(model::desired_replicas(a, 2, 0.54), 2); // ratio 1.08: within the 0.1 tolerance
    EXPECT_EQ(model::desired_replicas(a, 2, 0.56), 3); // ceil(2 × 1.12) = ceil(2.24)
    EXPECT_EQ(model::desired_replicas(a, 4, 0.0), 2);  // 0, raised to min_replicas
    EXPECT_EQ(model::desired_replicas(a, 5, 1.0), 6);  // 10, cut to max_replicas
    a.target = 0.7;
    EXPECT_EQ(model::desired_replicas(a, 2, 1.4), 4); // exactly 2 × 2, not rounded up to 5
}

TEST(DesiredReplicas, CheckRefusesBadBlocks) {
    model::Autoscaler a;
    a.max_replicas = 4;
    EXPECT_NO_THROW(model::check_autoscaler(a, 2));
    EXPECT_THROW(model::check_autoscaler(a, 5), InvalidArgument); // starts above max_replicas
    model::Autoscaler b = a;
    b.target = 1.5; // a utilisation above 1
    EXPECT_THROW(model::check_autoscaler(b, 2), InvalidArgument);
    b.metric = model::ScaleMetric::QueueLength; // 1.5 queued requests per replica is fine
    EXPECT_NO_THROW(model::check_autoscaler(b, 2));
    b = a;
    b.interval = Seconds(0);
    EXPECT_THROW(model::check_autoscaler(b, 2), InvalidArgument);
    b = a;
    b.min_replicas = 5;
    EXPECT_THROW(model::check_autoscaler(b, 2), InvalidArgument);
}

TEST(Autoscaler, ZeroDelaysDoubleTheReplicasWithinOneScrapeOfALoadStep) {
    // t = 0: 8 requests, 4 per replica: utilisation 4 / 8 = 0.5 = target, no change at 10 s.
    // t = 15: 8 more, 8 per replica: utilisation 1.0, so the scrape at 20 s asks
    // ceil(2 × 1.0 / 0.5) = 4 replicas, up at once (no provisioning, no cold start). At 30 s
    // the four average (1 + 1 + 0 + 0) / 4 = 0.5: no change.
    const SimResult r = simulate(waves_scenario({0.0, 15.0}, 8, 2));
    ASSERT_TRUE(r.ok);
    ASSERT_TRUE(r.autoscaler);
    const AutoscalerResult& a = *r.autoscaler;
    EXPECT_EQ(a.timeline, points({{0.0, 2}, {20.0, 4}}));
    EXPECT_EQ(a.scale_ups, 2);
    EXPECT_EQ(a.scale_downs, 0);
    EXPECT_EQ(a.peak_replicas, 4);
    ASSERT_EQ(r.replicas.size(), 4u);
    EXPECT_DOUBLE_EQ(r.replicas[2].available.si(), 20.0);
    EXPECT_DOUBLE_EQ(r.replicas[3].available.si(), 20.0);
    EXPECT_EQ(r.overall.completed, 16);
    EXPECT_EQ(r.replicas[2].requests + r.replicas[3].requests, 0); // nothing arrived after 20 s
}

TEST(Autoscaler, NewReplicaIsUpAfterProvisioningAndItsColdStart) {
    model::Scenario s = waves_scenario({0.0, 15.0}, 8, 2);
    s.cluster.autoscaler->provisioning = Seconds(7);
    s.cluster.cold_start.load_bandwidth = BytesPerSecond(2e9);
    s.cluster.cold_start.startup = Seconds(5);
    const SimResult r = simulate(s);
    ASSERT_TRUE(r.ok);
    const double weights = model::estimate_memory(s.deployment).weights.si();
    const double up = 20.0 + 7.0 + weights / 2e9 + 5.0; // decision + provisioning + cold start
    ASSERT_EQ(r.replicas.size(), 4u);
    EXPECT_DOUBLE_EQ(r.replicas[0].available.si(), 0.0); // the initial replicas start warm
    EXPECT_NEAR(r.replicas[2].available.si(), up, 1e-9);
    EXPECT_NEAR(r.replicas[3].available.si(), up, 1e-9);
    // The scrape at 30 s sees 2 replicas up at utilisation 1.0 (desired 4) and 4 provisioned.
    EXPECT_EQ(r.autoscaler->timeline, points({{0.0, 2}, {20.0, 4}}));
}

TEST(Autoscaler, MaxReplicasCapsTheScaleUp) {
    model::Scenario s = waves_scenario({0.0, 15.0}, 8, 2);
    s.cluster.autoscaler->max_replicas = 3;
    const SimResult r = simulate(s);
    ASSERT_TRUE(r.ok);
    // 20 s: 4 wanted, 3 allowed. 30 s: (1 + 1 + 0) / 3 = 0.667, ceil(3 × 1.33) = 4, still 3.
    EXPECT_EQ(r.autoscaler->timeline, points({{0.0, 2}, {20.0, 3}}));
    EXPECT_EQ(r.autoscaler->peak_replicas, 3);
}

TEST(Autoscaler, ScaleDownWaitsForTheCooldownStopsAtMinAndDrainsWithoutLosingRequests) {
    // 4 replicas, one request each: utilisation 1 / 8, ceil(4 × 0.25) = 1, raised to min 2.
    // The cooldown (15 s from the start) holds the scale-down at 10 s; at 20 s replicas 3 and
    // 2 (fewest outstanding, newest first) drain: they finish their request but get no new one.
    // The 4 requests at 25 s go to replicas 0 and 1.
    model::Scenario s = waves_scenario({0.0, 25.0}, 4, 4);
    s.cluster.autoscaler->min_replicas = 2;
    s.cluster.autoscaler->max_replicas = 4;
    s.cluster.autoscaler->cooldown = Seconds(15);
    s.prices.gpu_hour = model::Price{{2.5, "USD"}, model::PriceBasis::Hour};
    SimOptions o;
    o.keep_requests = true;
    const SimResult r = simulate(s, o);
    ASSERT_TRUE(r.ok);
    const AutoscalerResult& a = *r.autoscaler;
    EXPECT_EQ(a.timeline, points({{0.0, 4}, {20.0, 2}}));
    EXPECT_EQ(a.scale_downs, 2);
    EXPECT_EQ(a.scale_ups, 0);
    EXPECT_EQ(r.overall.completed, 8);
    EXPECT_EQ(r.overall.rejected + r.overall.timed_out + r.overall.cancelled, 0);
    ASSERT_EQ(r.replicas.size(), 4u);
    EXPECT_EQ(r.replicas[0].requests, 3);
    EXPECT_EQ(r.replicas[1].requests, 3);
    EXPECT_EQ(r.replicas[2].requests, 1);
    EXPECT_EQ(r.replicas[3].requests, 1);
    // Paid: replicas 0 and 1 to the end of the run, 2 and 3 until their request finished. The
    // run ends at the first scrape after the last request finishes (nothing else is pending).
    double last = 0, drained = 0;
    for (const auto& q : r.requests) {
        ASSERT_TRUE(q.e2e);
        const double done = (q.arrival + *q.e2e).si();
        last = std::max(last, done);
        if (q.replica >= 2) {
            drained += done;
        }
    }
    const double end = std::ceil(last / 10.0) * 10.0;
    EXPECT_NEAR(a.replica_seconds, 2 * end + drained, 1e-6);
    ASSERT_TRUE(a.cost);
    EXPECT_EQ(a.cost->currency, "USD");
    EXPECT_NEAR(a.cost->amount, a.replica_seconds / 3600.0 * 1 * 2.5, 1e-9);
}

TEST(Autoscaler, QueueLengthMetricScalesOnWaitingRequests) {
    // One replica of max_num_seqs 8 and 24 requests at 0 and 0.5 s: 8 run, 16 wait. The
    // scrape at 10 s sees 16 waiting per replica, target 4: ceil(1 × 16 / 4) = 4 replicas.
    // (A trace spanning no time at all is run as a closed loop, so two instants.)
    model::Scenario s = waves_scenario({0.0, 0.5}, 12, 1);
    s.cluster.autoscaler->metric = model::ScaleMetric::QueueLength;
    s.cluster.autoscaler->target = 4;
    const SimResult r = simulate(s);
    ASSERT_TRUE(r.ok);
    ASSERT_GE(r.autoscaler->timeline.size(), 2u);
    EXPECT_EQ(r.autoscaler->timeline[1], (ReplicaCountPoint{Seconds(10.0), 4}));
    EXPECT_EQ(r.overall.completed, 24);
}

TEST(Autoscaler, SameSeedSameResult) {
    const model::Scenario s = waves_scenario({0.0, 15.0}, 8, 2);
    EXPECT_EQ(simulate(s), simulate(s));
}

} // namespace
} // namespace gpuplan::sim
