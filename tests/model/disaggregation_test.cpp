// Prefill/decode disaggregation's analytic figures against hand calculations.
#include "model/disaggregation.hpp"

#include "fixtures.hpp"
#include "model/error.hpp"
#include "model/serving.hpp"
#include "model/step_cost.hpp"

#include <gtest/gtest.h>

namespace gpuplan::model {
namespace {

using test::deploy;
using test::h100;
using test::llama3_8b;

Disaggregation pools(int ptp, int preplicas, int dtp, int dreplicas, double bandwidth,
                     double latency, KvTransferMode mode) {
    Disaggregation g;
    g.prefill.name = "prefill";
    g.prefill.hardware.gpu = h100();
    g.prefill.hardware.intra_node_link = test::nvlink4();
    g.prefill.tp = ptp;
    g.prefill.replicas = preplicas;
    g.decode = g.prefill;
    g.decode.name = "decode";
    g.decode.tp = dtp;
    g.decode.replicas = dreplicas;
    g.link.name = "test-link";
    g.link.bandwidth_per_direction = BytesPerSecond(bandwidth);
    g.link.latency = Seconds(latency);
    g.transfer = mode;
    return g;
}

Workload lengths(int in, int out) {
    Workload w;
    w.input_tokens = in;
    w.output_tokens = out;
    return w;
}

TEST(Disaggregation, TransferTimeIsBytesOverLinkBandwidthByHand) {
    // Llama-3-8B, BF16 KV: 2 (K and V) × 32 layers × 8 KV heads × 128 dims × 2 bytes
    // = 131,072 bytes per token; a 2,000-token prompt holds 262,144,000 bytes.
    const Deployment d = deploy(llama3_8b(), h100());
    EXPECT_DOUBLE_EQ(kv_transfer_bytes(d, 2000).si(), 2.0 * 32 * 8 * 128 * 2 * 2000);
    // 50 GB/s per GPU (400 Gb/s InfiniBand), 5 us; tp 2 on both sides: two GPU pairs at once.
    const Disaggregation g = pools(2, 1, 2, 1, 50e9, 5e-6, KvTransferMode::Whole);
    const Link l = transfer_link(g);
    EXPECT_DOUBLE_EQ(l.bandwidth.si(), 100e9);
    const double expected = 5e-6 + 262144000.0 / 100e9; // 2.626 ms
    EXPECT_NEAR(kv_transfer_time(kv_transfer_bytes(d, 2000), l).si(), expected, 1e-12);
    // Prefill tp 1 to decode tp 4: one sending GPU, one lane.
    EXPECT_DOUBLE_EQ(
        transfer_link(pools(1, 1, 4, 1, 50e9, 0, KvTransferMode::Whole)).bandwidth.si(), 50e9);
}

TEST(Disaggregation, LayerwiseHidesTheTransferBehindThePrefill) {
    // 10 layers, transfer 1 s: whole exposes all of it.
    EXPECT_DOUBLE_EQ(exposed_transfer_time(Seconds(1), Seconds(4), 10, KvTransferMode::Whole).si(),
                     1.0);
    // Prefill 4 s longer than the transfer: only the last layer's 0.1 s is left.
    EXPECT_DOUBLE_EQ(
        exposed_transfer_time(Seconds(1), Seconds(4), 10, KvTransferMode::Layerwise).si(), 0.1);
    // Transfer 5 s over a 2 s prefill: the link starts after layer 1 (0.2 s) and runs 5 s,
    // ending at 5.2 s: 3.2 s after the prefill = 5 − 2 × 9/10.
    EXPECT_NEAR(exposed_transfer_time(Seconds(5), Seconds(2), 10, KvTransferMode::Layerwise).si(),
                3.2, 1e-12);
}

TEST(Disaggregation, InfinitelyFastLinkLeavesTheColocatedPrefillTime) {
    const Deployment d = deploy(llama3_8b(), h100());
    const Workload w = lengths(2000, 200);
    const Disaggregation g = pools(1, 1, 1, 1, 1e30, 0, KvTransferMode::Whole);
    const DisaggregatedEstimate e = estimate_disaggregated(d, w, default_profile(), g, 1.0);
    const StepCostModel m(d, default_profile());
    EXPECT_NEAR(e.exposed.si(), 0.0, 1e-15);
    EXPECT_DOUBLE_EQ(e.ttft.si(), ttft(m, 2000).si());
    EXPECT_EQ(e.prefill_gpus, 1);
    EXPECT_EQ(e.decode_gpus, 1);
}

TEST(Disaggregation, CapacityIsTheLeastOfPrefillDecodeAndLink) {
    const Deployment d = deploy(llama3_8b(), h100());
    const Workload w = lengths(2000, 200);
    // A 1 GB/s link: 262 MB takes 0.262 s per prompt, so one prefill replica's link carries
    // 1 / 0.262144 = 3.81 requests/s: the link is the bottleneck.
    const Disaggregation g = pools(1, 1, 1, 1, 1e9, 0, KvTransferMode::Whole);
    const DisaggregatedEstimate e = estimate_disaggregated(d, w, default_profile(), g);
    EXPECT_NEAR(e.link_rps, 1.0 / 0.262144, 1e-9);
    EXPECT_EQ(e.bottleneck, "link");
    EXPECT_DOUBLE_EQ(e.capacity_rps, e.link_rps);
    EXPECT_NEAR(e.link_utilisation, 1.0, 1e-12);
    // Prefill capacity by hand: a step of floor(8192 / 2000) = 4 prompts (the engine's
    // default budget on this GPU), each 1/4 of that step.
    const StepCostModel m(d, default_profile());
    const int budget = m.engine().max_num_batched_tokens;
    const int k = std::max(1, budget / 2000);
    BatchStats s;
    for (int i = 0; i < k; ++i) {
        m.add(s, PrefillChunk{2000, 0});
    }
    const double per_prompt = k > 1 ? m.cost(s).time.si() / k : ttft(m, 2000).si();
    EXPECT_NEAR(e.prefill_rps, 1.0 / per_prompt, 1e-9 / per_prompt);
    // Decode capacity: cap sequences finishing 199 decode steps each at the cap's step time.
    const double cap_tpot = tpot(m, e.decode_cap, 2000 + 100).si();
    EXPECT_NEAR(e.decode_rps, e.decode_cap / (199 * cap_tpot), 1e-9);
}

TEST(Disaggregation, DecodeBatchFollowsLittlesLaw) {
    const Deployment d = deploy(llama3_8b(), h100());
    const Workload w = lengths(1000, 101);
    const Disaggregation g = pools(1, 1, 1, 2, 1e12, 0, KvTransferMode::Layerwise);
    const double rate = 2.0;
    const DisaggregatedEstimate e = estimate_disaggregated(d, w, default_profile(), g, rate);
    const StepCostModel m(d, default_profile());
    // The smallest n with n >= rate/2 × 100 × tpot(n).
    const int n = e.decode_running;
    ASSERT_GE(n, 1);
    EXPECT_GE(n, rate / 2 * 100 * tpot(m, n, 1050).si());
    if (n > 1) {
        EXPECT_LT(n - 1, rate / 2 * 100 * tpot(m, n - 1, 1050).si());
    }
    EXPECT_DOUBLE_EQ(e.tpot.si(), tpot(m, n, 1050).si());
    EXPECT_DOUBLE_EQ(e.output_tok_s, rate * 101);
}

TEST(Disaggregation, PoolThatCannotHoldTheModelIsRejected) {
    Deployment d = deploy(test::llama31_70b(), h100());
    const Disaggregation g = pools(1, 1, 4, 1, 50e9, 0, KvTransferMode::Whole);
    EXPECT_THROW((void)estimate_disaggregated(d, lengths(1000, 100), default_profile(), g),
                 InvalidArgument);
}

TEST(Disaggregation, EnumSpellingsRoundTrip) {
    EXPECT_STREQ(to_string(KvTransferMode::Whole), "whole");
    EXPECT_EQ(value_of<KvTransferMode>("layerwise"), KvTransferMode::Layerwise);
}

} // namespace
} // namespace gpuplan::model
