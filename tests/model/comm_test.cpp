/// Communication: alpha-beta formulas against hand arithmetic, and the choice of link.

#include "model/comm.hpp"

#include "fixtures.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

namespace {

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

TEST(Comm, RingAllReduceMovesTwoNMinusOneOverNOfTheMessage) {
    // 4 GPUs, 1 MB: 2 × 3/4 × 1 MB = 1.5 MB sent per GPU.
    EXPECT_DOUBLE_EQ(ring_all_reduce_bytes(Bytes(1e6), 4).si(), 1.5e6);
    EXPECT_DOUBLE_EQ(ring_all_reduce_bytes(Bytes(1e6), 8).si(), 1.75e6);
    EXPECT_DOUBLE_EQ(ring_all_reduce_bytes(Bytes(1e6), 1).si(), 0.0);
}

TEST(Comm, RingAllReduceTimeIsBandwidthPlusLatencyTerms) {
    // 1.5 MB at 100 GB/s = 15 µs, plus 2 × 3 steps × 5 µs = 30 µs.
    const Seconds t = ring_all_reduce_time(Bytes(1e6), 4, BytesPerSecond(100e9), Seconds(5e-6));
    EXPECT_NEAR(t.si(), 45e-6, 1e-15);
    EXPECT_EQ(ring_all_reduce_time(Bytes(1e6), 1, BytesPerSecond(100e9), Seconds(5e-6)).si(), 0.0);
}

TEST(Comm, TreeAllReduceTradesBandwidthForLogarithmicLatency) {
    // 8 GPUs: 2 × 1 MB / 100 GB/s = 20 µs + 2 × 3 × 5 µs = 50 µs.
    const Link link{BytesPerSecond(100e9), Seconds(5e-6), false};
    EXPECT_NEAR(tree_all_reduce_time(Bytes(1e6), 8, link.bandwidth, link.latency).si(), 50e-6,
                1e-15);
    // Ring: 17.5 µs + 70 µs = 87.5 µs; Auto picks the tree for this small message...
    EXPECT_NEAR(all_reduce_time(Bytes(1e6), 8, link, AllReduceAlgorithm::Ring).si(), 87.5e-6,
                1e-15);
    EXPECT_NEAR(all_reduce_time(Bytes(1e6), 8, link, AllReduceAlgorithm::Auto).si(), 50e-6, 1e-15);
    // ...and the ring for a large one (1 GB: ring 17.5 ms, tree 20 ms).
    EXPECT_NEAR(all_reduce_time(Bytes(1e9), 8, link, AllReduceAlgorithm::Auto).si(),
                ring_all_reduce_time(Bytes(1e9), 8, link.bandwidth, link.latency).si(), 1e-15);
}

TEST(Comm, AllToAllAllGatherAndP2p) {
    const Link link{BytesPerSecond(50e9), Seconds(2e-6), false};
    // 8 GPUs each scattering 8 MB: 7/8 × 8 MB / 50 GB/s = 140 µs + 7 × 2 µs.
    EXPECT_NEAR(all_to_all_time(Bytes(8e6), 8, link).si(), 140e-6 + 14e-6, 1e-15);
    EXPECT_NEAR(all_gather_time(Bytes(8e6), 8, link).si(), 140e-6 + 14e-6, 1e-15);
    EXPECT_NEAR(p2p_time(Bytes(1e6), link).si(), 2e-6 + 20e-6, 1e-15);
}

TEST(Comm, GroupsInsideANodeUseTheIntraNodeLink) {
    Deployment d = deploy(llama31_70b(), h100(), 8);
    const Link l = group_link(d, 8, 1);
    EXPECT_FALSE(l.inter_node);
    EXPECT_DOUBLE_EQ(l.bandwidth.si(), 450e9);
}

TEST(Comm, GroupsSpanningNodesUseTheNetwork) {
    Deployment d = deploy(llama31_70b(), h100(), 8, 2);
    // Pipeline stages are tp = 8 ranks apart: two stages span two nodes.
    EXPECT_THROW((void)group_link(d, 2, 8), InvalidArgument);
    d.inter_node_link = ib_ndr();
    const Link l = group_link(d, 2, 8);
    EXPECT_TRUE(l.inter_node);
    EXPECT_DOUBLE_EQ(l.bandwidth.si(), 50e9);
    EXPECT_DOUBLE_EQ(l.latency.si(), 5e-6);
}

TEST(Comm, EffectiveLinkAppliesTheProfileEfficiency) {
    CommEfficiency eff;
    eff.bandwidth = {0.8, 0.0};
    const Link l =
        effective_link(Link{BytesPerSecond(100e9), Seconds(1e-6), false}, Bytes(1e6), eff);
    EXPECT_DOUBLE_EQ(l.bandwidth.si(), 80e9);
}

} // namespace
