// Prefill/decode disaggregation in the simulator: a lone request's TTFT is the co-located
// prefill time plus the transfer worked out by hand (zero with an infinitely fast link), the
// decode steps follow, every transfer is accounted for, and a run without the block is the
// co-located one.
#include "model/disaggregation.hpp"
#include "model/kv_cache.hpp"
#include "model/serving.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;

model::ReplicaPool pool(const model::Scenario& s, const char* name, int replicas) {
    model::ReplicaPool p;
    p.name = name;
    p.hardware.gpu = s.deployment.gpu;
    p.hardware.intra_node_link = s.deployment.intra_node_link;
    p.hardware.gpus_per_node = s.deployment.gpus_per_node;
    p.replicas = replicas;
    return p;
}

void disaggregate(model::Scenario& s, int prefill, int decode, double bandwidth, double latency,
                  model::KvTransferMode mode) {
    model::Disaggregation g;
    g.prefill = pool(s, "prefill", prefill);
    g.decode = pool(s, "decode", decode);
    g.link.bandwidth_per_direction = BytesPerSecond(bandwidth);
    g.link.latency = Seconds(latency);
    g.transfer = mode;
    s.cluster.disaggregation = g;
}

SimResult run(const model::Scenario& s) {
    SimOptions o;
    o.keep_requests = true;
    SimResult r = simulate(s, o);
    EXPECT_TRUE(r.ok) << (r.reasons.empty() ? "" : r.reasons.front());
    return r;
}

double decode_time(const model::StepCostModel& m, int prompt, int output) {
    double t = 0;
    for (int k = 1; k < output; ++k) {
        t += model::tpot(m, 1, prompt + k).si();
    }
    return t;
}

TEST(Disaggregation, InfinitelyFastLinkGivesTheColocatedPrefillTime) {
    model::Scenario s = llama8b_scenario(3000, 20, 1.0, 1);
    disaggregate(s, 1, 4, 1e30, 0, model::KvTransferMode::Whole); // ample decode capacity
    const SimResult r = run(s);
    ASSERT_EQ(r.requests.size(), 1u);
    const RequestRecord& q = r.requests[0];
    ASSERT_EQ(q.outcome, Outcome::Completed);
    const model::StepCostModel m(s.deployment, model::default_profile());
    EXPECT_NEAR(q.ttft->si(), model::ttft(m, 3000).si(), 1e-9);
    EXPECT_NEAR(q.e2e->si() - q.ttft->si(), decode_time(m, 3000, 20), 20 * 1e-9);
    ASSERT_TRUE(r.disaggregation);
    EXPECT_EQ(r.disaggregation->transfers, 1);
    EXPECT_EQ(r.pools.size(), 2u);
    EXPECT_EQ(r.pools[0].requests, 1);
    EXPECT_EQ(r.pools[1].requests, 1);
}

TEST(Disaggregation, WholeTransferAddsBytesOverBandwidthByHand) {
    model::Scenario s = llama8b_scenario(3000, 20, 1.0, 1);
    // 131,072 bytes per token (2 × 32 layers × 8 heads × 128 × 2 bytes) × 3,000 tokens
    // = 393,216,000 bytes over 10 GB/s plus 20 us: 39.3416 ms.
    disaggregate(s, 1, 1, 10e9, 20e-6, model::KvTransferMode::Whole);
    const SimResult r = run(s);
    const RequestRecord& q = r.requests.at(0);
    const model::StepCostModel m(s.deployment, model::default_profile());
    const double transfer = 20e-6 + 2.0 * 32 * 8 * 128 * 2 * 3000 / 10e9;
    EXPECT_NEAR(q.ttft->si(), model::ttft(m, 3000).si() + transfer, 2e-9);
    ASSERT_TRUE(r.disaggregation);
    EXPECT_NEAR(r.disaggregation->transfer_time.mean.si(), transfer, 1e-12);
    EXPECT_NEAR(r.disaggregation->exposed.mean.si(), transfer, 1e-9);
    EXPECT_DOUBLE_EQ(r.disaggregation->kv_bytes, 2.0 * 32 * 8 * 128 * 2 * 3000);
    EXPECT_NEAR(r.disaggregation->decode_queue.mean.si(), 0.0, 1e-12);
    // The link was busy for one transfer over the whole run.
    const double span = q.arrival.si() + q.e2e->si();
    EXPECT_NEAR(r.disaggregation->link_utilisation, transfer / span, 1e-6);
}

TEST(Disaggregation, LayerwiseLeavesOnlyTheLastLayerWhenThePrefillIsLonger) {
    model::Scenario s = llama8b_scenario(3000, 20, 1.0, 1);
    disaggregate(s, 1, 1, 10e9, 0, model::KvTransferMode::Layerwise);
    const SimResult r = run(s);
    const model::StepCostModel m(s.deployment, model::default_profile());
    const double prefill = model::ttft(m, 3000).si();
    const double transfer = 2.0 * 32 * 8 * 128 * 2 * 3000 / 10e9;
    const double exposed = std::max(transfer / 32, transfer - prefill * 31 / 32);
    EXPECT_NEAR(r.requests.at(0).ttft->si(), prefill + exposed, 2e-9);
}

TEST(Disaggregation, EveryRequestCompletesUnderLoad) {
    model::Scenario s = llama8b_scenario(1500, 100, 12.0, 300);
    disaggregate(s, 1, 2, 50e9, 5e-6, model::KvTransferMode::Layerwise);
    const SimResult r = run(s);
    EXPECT_EQ(r.overall.completed, 300);
    EXPECT_EQ(r.overall.output_tokens, 300 * 100);
    ASSERT_TRUE(r.disaggregation);
    EXPECT_EQ(r.disaggregation->transfers, 300);
    EXPECT_EQ(r.pools[0].requests, 300);
    EXPECT_EQ(r.pools[1].requests, 300);
    EXPECT_GT(r.disaggregation->link_utilisation, 0.0);
    EXPECT_LT(r.disaggregation->link_utilisation, 1.0);
}

TEST(Disaggregation, OneTokenOutputsFinishOnThePrefillPool) {
    model::Scenario s = llama8b_scenario(500, 1, 4.0, 20);
    disaggregate(s, 1, 1, 50e9, 0, model::KvTransferMode::Whole);
    const SimResult r = run(s);
    EXPECT_EQ(r.overall.completed, 20);
    EXPECT_EQ(r.disaggregation->transfers, 0);
}

TEST(Disaggregation, SwitchedOffChangesNothing) {
    const model::Scenario s = llama8b_scenario(800, 60, 6.0, 100);
    model::Scenario t = s;
    t.cluster.disaggregation.reset();
    const SimResult a = run(s);
    const SimResult b = run(t);
    EXPECT_EQ(a.requests, b.requests);
    EXPECT_FALSE(a.disaggregation);
    EXPECT_TRUE(a.pools.empty());
}

} // namespace
} // namespace gpuplan::sim
