/// Training communication overlap (issue 19 items 4 and 6): bucketed data-parallel gradient
/// reduction behind the backward, ZeRO-3 / FSDP prefetch, the expert all-to-all overlap and the
/// busiest expert rank; overlap off reproduces the unoverlapped step.

#include "model/training.hpp"

#include "fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace gpuplan::model {
namespace {

using test::h100;
using test::llama3_8b;
using test::mixtral_8x7b;

Deployment cluster(const ModelSpec& m, int gpus) {
    Deployment d;
    d.model = m;
    d.gpu = h100();
    d.par.dp = gpus;
    d.intra_node_link = test::nvlink4();
    d.inter_node_link = test::ib_ndr();
    d.gpus_per_node = 8;
    return d;
}

TrainingConfig job(int dp, int zero, int micro_batch) {
    TrainingConfig c;
    c.tokens = 1e9;
    c.global_batch = 64;
    c.seq_len = 4096;
    c.layout.dp = dp;
    c.layout.zero = zero;
    c.layout.micro_batch = micro_batch;
    c.layout.recompute = Recompute::Full;
    return c;
}

LayoutResult run(const Deployment& d, const TrainingConfig& c) {
    const TrainingModel tm(d, c, default_profile());
    return tm.evaluate(c.layout);
}

TEST(TrainingOverlap, OverlapOffLeavesEveryCollectiveExposed) {
    for (const int zero : {1, 2, 3}) {
        TrainingConfig c = job(8, zero, 2);
        c.grad_reduce_overlap = 0.0;
        c.fsdp_prefetch = false;
        const LayoutResult r = run(cluster(llama3_8b(), 8), c);
        ASSERT_GT(r.step.dp_comm.si(), 0.0) << zero;
        EXPECT_DOUBLE_EQ(r.step.dp_exposed.si(), r.step.dp_comm.si()) << zero;
    }
}

TEST(TrainingOverlap, DdpLeavesOnlyTheLastBucketWhenTheBackwardIsLonger) {
    // ZeRO-1 on one NVLink node: the gradient all-reduce is shorter than the last micro-batch's
    // backward, so everything but the last 25 MiB bucket hides:
    //   exposed = comm × bucket / gradient bytes.
    const LayoutResult r = run(cluster(llama3_8b(), 8), job(8, 1, 2));
    const double grad = r.memory.gradients.si();
    EXPECT_NEAR(r.step.dp_exposed.si(), r.step.dp_comm.si() * 25.0 * 1024 * 1024 / grad,
                1e-12 * r.step.dp_comm.si());
    // One bucket as large as the gradients: it is ready only at the end, nothing hides.
    TrainingConfig big = job(8, 1, 2);
    big.grad_bucket = Bytes(grad);
    const LayoutResult one = run(cluster(llama3_8b(), 8), big);
    EXPECT_DOUBLE_EQ(one.step.dp_exposed.si(), one.step.dp_comm.si());
}

TEST(TrainingOverlap, FsdpPrefetchExposesOneUnitPerPassWhenComputeIsLonger) {
    // ZeRO-3 on one node: each pass's gathers (and the reduce-scatter) are shorter than its
    // compute, so only the first of the 32 layer units is exposed: dp_comm / 32.
    const LayoutResult r = run(cluster(llama3_8b(), 8), job(8, 3, 2));
    EXPECT_NEAR(r.step.dp_exposed.si(), r.step.dp_comm.si() / 32.0, 1e-12 * r.step.dp_comm.si());
    TrainingConfig off = job(8, 3, 2);
    off.fsdp_prefetch = false;
    off.grad_reduce_overlap = 0.0;
    EXPECT_DOUBLE_EQ(run(cluster(llama3_8b(), 8), off).step.dp_exposed.si(), r.step.dp_comm.si());
}

TEST(TrainingOverlap, FsdpAcrossNodesExposesWhatExceedsTheCompute) {
    // ZeRO-3 over 64 GPUs (8 nodes on 50 GB/s InfiniBand) with a micro-batch of one: each pass's
    // collectives outlast its compute, so exposed = comm − compute (per pass, summed).
    const LayoutResult r = run(cluster(llama3_8b(), 64), job(64, 3, 1));
    ASSERT_GT(r.step.dp_comm.si(), r.step.compute.si());
    EXPECT_NEAR(r.step.dp_exposed.si(), r.step.dp_comm.si() - r.step.compute.si(),
                1e-9 * r.step.dp_comm.si());
}

TEST(TrainingOverlap, ExpertAllToAllOverlapHidesBehindTheStageCompute) {
    TrainingConfig c = job(8, 1, 1);
    c.layout.ep = 8;
    const Deployment d = cluster(mixtral_8x7b(), 8);
    const LayoutResult off = run(d, c);
    ASSERT_GT(off.step.ep_comm.si(), 0.0);
    for (const double f : {0.5, 1.0}) {
        c.ep_overlap = f;
        const LayoutResult on = run(d, c);
        // One stage: per micro-batch, exposed = ep − min(f × ep, compute); m micro-batches.
        const double ep = off.step.ep_comm.si();
        EXPECT_NEAR(on.step.ep_comm.si(), ep - std::min(f * ep, off.step.compute.si()), 1e-12 * ep);
    }
}

TEST(TrainingOverlap, TheBusiestExpertRankSetsTheExpertWork) {
    TrainingConfig c = job(8, 1, 1);
    c.layout.ep = 8;
    const Deployment d = cluster(mixtral_8x7b(), 8);
    c.moe_load_imbalance = 1.0;
    const LayoutResult even = run(d, c);
    c.moe_load_imbalance = 2.0;
    const LayoutResult skewed = run(d, c);
    EXPECT_GT(skewed.step.compute.si(), even.step.compute.si());
    EXPECT_GT(skewed.step.ep_comm.si(), even.step.ep_comm.si());
    // Without a value: uniform routing's expected maximum, between the two.
    c.moe_load_imbalance.reset();
    const LayoutResult uniform = run(d, c);
    EXPECT_GT(uniform.step.compute.si(), even.step.compute.si());
    EXPECT_LT(uniform.step.compute.si(), skewed.step.compute.si());
}

TEST(TrainingOverlap, ADenseModelIgnoresTheMoeKnobs) {
    TrainingConfig c = job(8, 1, 2);
    const LayoutResult plain = run(cluster(llama3_8b(), 8), c);
    c.moe_load_imbalance = 2.0;
    c.ep_overlap = 1.0;
    EXPECT_EQ(run(cluster(llama3_8b(), 8), c), plain);
}

} // namespace
} // namespace gpuplan::model
