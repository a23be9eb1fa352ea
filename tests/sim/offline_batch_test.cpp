// Offline batches, rejections by reason and the served rate (docs/operating-point.md,
// "Offline batches, rejections and served rates").
#include "model/operating_point.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

namespace gpuplan::sim {
namespace {

// A reported reproduction: four rows at 0 s of 128 + 128 tokens with max_model_len 256. They
// used to be replaced by the default closed loop of 1024 + 256 requests, all rejected.
TEST(OfflineBatchSim, ATraceAtOneInstantIsServedWithItsOwnLengths) {
    model::Scenario s = test::llama8b_scenario();
    s.deployment.engine.max_model_len = 256;
    s.workload.requests.reset();
    s.workload.requests_per_s.reset();
    s.workload.arrival.kind = model::ArrivalKind::Trace;
    s.workload.trace.assign(4, model::TraceRecord{Seconds(0), 128, 128});
    const SimResult r = simulate(s);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.operating_point.kind, model::LoadKind::OfflineBatch);
    EXPECT_EQ(r.overall.arrived, 4);
    EXPECT_EQ(r.overall.completed, 4);
    EXPECT_EQ(r.overall.output_tokens, 4 * 128);
    EXPECT_EQ(r.overall.input_tokens, 4 * 128);
    // A batch's window is an instant: the served rate is the run's.
    EXPECT_DOUBLE_EQ(r.served_rps, r.overall.throughput_rps);
    EXPECT_DOUBLE_EQ(r.served_rps, 4.0 / r.duration.si());
}

TEST(OfflineBatchSim, BatchRequestsArriveTogetherAndTheCapIsSaid) {
    model::Scenario s = test::llama8b_scenario(256, 32);
    s.workload.requests.reset();
    s.workload.requests_per_s.reset();
    model::set_offline_batch(s.workload, 50);
    SimOptions o;
    o.keep_requests = true;
    const SimResult r = simulate(s, o);
    ASSERT_EQ(r.requests.size(), 50U);
    for (const RequestRecord& q : r.requests) {
        EXPECT_EQ(q.arrival.si(), 0.0);
    }
    o.requests = 20;
    const SimResult cut = simulate(s, o);
    EXPECT_EQ(cut.overall.arrived, 20);
    ASSERT_EQ(cut.notes.size(), 1U);
    EXPECT_NE(cut.notes[0].find("first 20"), std::string::npos) << cut.notes[0];
}

TEST(Rejections, EachIsCountedByItsReason) {
    model::Scenario s = test::llama8b_scenario(300, 100, 4.0, 30);
    s.deployment.engine.max_model_len = 256; // every request is 400 tokens: too long
    const SimResult r = simulate(s);
    EXPECT_EQ(r.overall.rejected, 30);
    EXPECT_EQ(r.overall.rejected_by_reason.too_long, 30);
    EXPECT_EQ(r.overall.rejected_by_reason.queue_full, 0);
    // A class routed to a cloud the scenario does not have.
    model::Scenario c = test::llama8b_scenario(100, 10, 4.0, 12);
    model::RequestClass cloud;
    cloud.name = "cloud-only";
    cloud.input = model::LengthDistribution::fixed(100);
    cloud.output = model::LengthDistribution::fixed(10);
    cloud.route = model::RouteTarget::Cloud;
    c.workload.classes = {cloud};
    const SimResult rc = simulate(c);
    EXPECT_EQ(rc.overall.rejected_by_reason.no_cloud_endpoint, 12);
}

// A stable open loop serves what it is offered: over the arrival window the served rate is the
// arrivals' (within the Poisson count's spread), where the run-long rate divides by the drain too.
TEST(ServedRate, AStableOpenLoopServesItsOfferedRate) {
    model::Scenario s = test::llama8b_scenario(512, 256, 5.0, 600);
    const SimResult r = simulate(s);
    const double offered = static_cast<double>(r.overall.arrived - 1) / r.arrival_window.si();
    EXPECT_NEAR(r.served_rps, offered, 0.05 * offered);
    EXPECT_LT(r.overall.throughput_rps, r.served_rps);
    EXPECT_NEAR(r.drain_share, 1.0 - r.arrival_window.si() / r.duration.si(), 1e-12);
}

// Overloaded at twice what it serves, the served rate is the deployment's capacity: the
// closed loop's throughput at the engine's limit, not the offered rate.
TEST(ServedRate, AnOverloadedOpenLoopServesItsCapacity) {
    model::Scenario closed = test::llama8b_scenario(512, 256, 1.0, 3000);
    model::set_closed_loop(closed.workload, 256);
    const double capacity = simulate(closed).overall.throughput_rps;
    model::Scenario s = test::llama8b_scenario(512, 256, 2.0 * capacity, 3000);
    const SimResult r = simulate(s);
    EXPECT_NEAR(r.served_rps, capacity, 0.10 * capacity);
}

} // namespace
} // namespace gpuplan::sim
