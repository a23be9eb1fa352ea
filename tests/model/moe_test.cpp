/// MoE runtime effects (issue 19 item 4): the busiest expert-parallel rank under top-k routing
/// (closed forms and a small multinomial worked by hand), attention data parallel feeding one
/// expert-parallel group, the all-to-all overlap, and that none of it touches a dense model.

#include "model/moe.hpp"
#include "model/step_cost.hpp"

#include "fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gpuplan::model {
namespace {

using test::deploy;
using test::h100;
using test::llama3_8b;
using test::mixtral_8x7b;

StepCost decode(const Deployment& d, int batch) {
    const StepCostModel m(d, default_profile());
    BatchStats s;
    m.add_decodes(s, batch, 1000);
    return m.cost(s);
}

TEST(MoeImbalance, ExpectedMaxOfNormalsMatchesTheClosedForms) {
    // E[max] of n standard normals: 0 for one, 1/√π for two, 3/(2√π) for three.
    EXPECT_DOUBLE_EQ(expected_max_std_normal(1), 0.0);
    EXPECT_NEAR(expected_max_std_normal(2), 1.0 / std::sqrt(std::numbers::pi), 1e-9);
    EXPECT_NEAR(expected_max_std_normal(3), 1.5 / std::sqrt(std::numbers::pi), 1e-9);
    // The asymptotic expansion takes over above kQuadratureMaxN without a jump (< 1 %).
    const double below = expected_max_std_normal(kQuadratureMaxN);
    const double above = expected_max_std_normal(kQuadratureMaxN + 1);
    EXPECT_NEAR(above / below, 1.0, 0.01);
}

TEST(MoeImbalance, SmallMultinomialByHand) {
    // 8 tokens, top-1 of 2 experts, one expert per rank (ep 2): the loads are X and 8 − X with
    // X ~ Binomial(8, 1/2), so max = 4 + |X − 4| and E|X − 4| = (2·4·1 + 2·3·8 + 2·2·28 +
    // 2·1·56) / 256 = 280/256: E[max] / mean = (4 + 1.09375) / 4 = 1.2734. The normal limit
    // gives 1 + (1/√π)·sqrt(2/8) = 1.2821, within 1 %.
    const double z = expected_max_std_normal(2);
    const double ratio = moe_rank_imbalance(8, 2, 1, 2, z);
    EXPECT_NEAR(ratio, 1.0 + 0.5 / std::sqrt(std::numbers::pi), 1e-9);
    EXPECT_NEAR(ratio / 1.2734375, 1.0, 0.01);
}

TEST(MoeImbalance, FollowsTheFormulaAndItsCap) {
    // 8 experts top-2 on 2 ranks, 100 tokens: 1 + z2 · sqrt(2 · (8 − 2)/((8 − 1) · 100 · 2)).
    const double z2 = 1.0 / std::sqrt(std::numbers::pi);
    EXPECT_NEAR(moe_rank_imbalance(100, 8, 2, 2, z2),
                1.0 + z2 * std::sqrt(2.0 * 6.0 / (7.0 * 100.0 * 2.0)), 1e-12);
    // One token, top-2 of 4 experts, one per rank: the busiest rank has 1 copy against a mean of
    // 2/4, so 2, the cap (4 · min(2, 1) / 2), below the normal limit's 2.19.
    EXPECT_DOUBLE_EQ(moe_rank_imbalance(1, 4, 2, 4, expected_max_std_normal(4)), 2.0);
    // No expert parallelism, no tokens: no imbalance. More tokens: less.
    EXPECT_DOUBLE_EQ(moe_rank_imbalance(100, 8, 2, 1, 0.0), 1.0);
    EXPECT_DOUBLE_EQ(moe_rank_imbalance(0, 8, 2, 2, z2), 1.0);
    EXPECT_LT(moe_rank_imbalance(1000, 8, 2, 2, z2), moe_rank_imbalance(100, 8, 2, 2, z2));
}

TEST(MoeStepCost, ADenseModelIgnoresTheMoeKnobs) {
    Deployment d = deploy(llama3_8b(), h100(), 2);
    const StepCost plain = decode(d, 32);
    d.engine.moe_load_imbalance = 2.0;
    d.engine.ep_overlap = 1.0;
    EXPECT_EQ(decode(d, 32), plain);
}

TEST(MoeStepCost, TheBusiestRankSetsTheExpertWork) {
    Deployment d = deploy(mixtral_8x7b(), h100(), 2);
    d.par.ep = 2;
    // 16 decodes: 1 + z2 · sqrt(2 · 6 / (7 · 16 · 2)).
    const StepCost c = decode(d, 16);
    const double z2 = 1.0 / std::sqrt(std::numbers::pi);
    EXPECT_NEAR(c.moe_imbalance, 1.0 + z2 * std::sqrt(12.0 / (7.0 * 16.0 * 2.0)), 1e-9);
    // Expert FLOPs: 32 layers × 2 × rows × 3 × h × f, rows = 16 × 2 / 2 × imbalance.
    const double rows = 16.0 * 2.0 / 2.0 * c.moe_imbalance;
    EXPECT_NEAR(c.op(Op::MoeExperts).flops.si(), 32.0 * 2.0 * rows * 3.0 * 4096 * 14336,
                1e-6 * c.op(Op::MoeExperts).flops.si());
    // A measured imbalance replaces the uniform-routing one.
    d.engine.moe_load_imbalance = 1.5;
    const StepCost fixed = decode(d, 16);
    EXPECT_DOUBLE_EQ(fixed.moe_imbalance, 1.5);
    EXPECT_NEAR(fixed.op(Op::MoeExperts).flops.si() / c.op(Op::MoeExperts).flops.si(),
                1.5 / c.moe_imbalance, 1e-12);
}

TEST(MoeStepCost, AttentionDataParallelFeedsEveryGroupIntoTheExperts) {
    // tp 1 × dp 8 with ep 8: eight attention groups of 16 decodes feed the eight expert ranks,
    // so a rank computes 8 × 16 × 2 / 8 rows; tp 8 with ep 8 shares one batch of 16: 16 × 2 / 8.
    Deployment dp_attn = deploy(mixtral_8x7b(), h100(), 1);
    dp_attn.par.dp = 8;
    dp_attn.par.ep = 8;
    dp_attn.engine.moe_load_imbalance = 1.0;
    Deployment tp_attn = deploy(mixtral_8x7b(), h100(), 8);
    tp_attn.par.ep = 8;
    tp_attn.engine.moe_load_imbalance = 1.0;
    const double ratio = decode(dp_attn, 16).op(Op::MoeExperts).flops.si() /
                         decode(tp_attn, 16).op(Op::MoeExperts).flops.si();
    EXPECT_NEAR(ratio, 8.0, 1e-12);
}

TEST(MoeStepCost, OverlapHidesTheAllToAllBehindCompute) {
    Deployment d = deploy(mixtral_8x7b(), h100(), 8);
    d.par.ep = 8;
    const StepCost off = decode(d, 64);
    d.engine.ep_overlap = 0.0;
    EXPECT_EQ(decode(d, 64), off); // an explicit 0 is the default
    double compute = 0;
    for (std::size_t i = 0; i < kOpCount; ++i) {
        const Op o = static_cast<Op>(i);
        if (o != Op::TpAllReduce && o != Op::PpSend && o != Op::EpAllToAll) {
            compute += off.ops[i].time.si();
        }
    }
    const double comm = off.op(Op::EpAllToAll).time.si();
    ASSERT_GT(comm, 0.0);
    for (const double f : {0.5, 1.0}) {
        d.engine.ep_overlap = f;
        const StepCost on = decode(d, 64);
        // exposed = comm − min(f × comm, compute).
        const double exposed = comm - std::min(f * comm, compute);
        EXPECT_NEAR(on.op(Op::EpAllToAll).time.si(), exposed, 1e-15);
        EXPECT_NEAR(on.time.si(), off.time.si() - (comm - exposed), 1e-15);
        EXPECT_DOUBLE_EQ(on.op(Op::EpAllToAll).memory_time.si(), comm); // the whole collective
    }
}

TEST(FusedMoePadding, TheTileFollowsVllmsTunedMixtralTable) {
    // Rows per expert at top-2 of 8 are tokens / 4: 32 tokens -> 8 rows (16), 48 -> 12 (32),
    // 96 -> 24 (32), 128 -> 32 (64), 512 -> 128 (64), 1024 -> 256 (128).
    EXPECT_EQ(fused_moe_block_m(1.0), 16.0);
    EXPECT_EQ(fused_moe_block_m(8.0), 16.0);
    EXPECT_EQ(fused_moe_block_m(12.0), 32.0);
    EXPECT_EQ(fused_moe_block_m(24.0), 32.0);
    EXPECT_EQ(fused_moe_block_m(32.0), 64.0);
    EXPECT_EQ(fused_moe_block_m(128.0), 64.0);
    EXPECT_EQ(fused_moe_block_m(256.0), 128.0);
}

TEST(FusedMoePadding, FiveTokensOverEightExpertsByHand) {
    // 5 tokens, top-2 of 8 experts: 10 routed rows; an expert sees none of them with probability
    // (6/8)^5 = 243/1024, so 8 × 781/1024 = 6.1015625 experts hold them, 10 / 6.1015625 =
    // 1.639 rows each. The tile is 16 rows; 1.639 / 16 + 15 / 32 = 0.571 < 1, so one tile per
    // expert: 6.1015625 × 16 = 97.625 rows computed for 10 useful (9.8x).
    const double touched = expected_experts_touched(8, 2, 5);
    EXPECT_DOUBLE_EQ(touched, 6.1015625);
    const double m = 10.0 / touched;
    EXPECT_EQ(fused_moe_block_m(m), 16.0);
    EXPECT_DOUBLE_EQ(moe_tiles_per_expert(m, 16.0), 1.0);
    EXPECT_DOUBLE_EQ(moe_padded_rows(10.0, touched, 16.0), 97.625);
    // 40 rows per expert on 64-row tiles: 40/64 + 63/128 = 1.1171875 tiles, 71.5 rows each.
    EXPECT_DOUBLE_EQ(moe_tiles_per_expert(40.0, 64.0), 1.1171875);
    EXPECT_DOUBLE_EQ(moe_padded_rows(320.0, 8.0, 64.0), 8.0 * 71.5);
    // No tile: the rows themselves.
    EXPECT_DOUBLE_EQ(moe_padded_rows(10.0, touched, 0.0), 10.0);
    EXPECT_DOUBLE_EQ(moe_tiles_per_expert(0.0, 16.0), 0.0);
}

TEST(FusedMoePadding, ADenseModelHasNoExpertKernels) {
    // A dense model runs no router, experts or their alignment and combine kernels, whatever
    // the grouped curve says.
    EfficiencyProfile other = default_profile();
    other.gemm_grouped = {0.3, 500.0};
    const Deployment d = deploy(llama3_8b(), h100());
    const StepCostModel a(d, default_profile());
    const StepCostModel b(d, other);
    BatchStats s;
    a.add_decodes(s, 64, 1000);
    const StepCost ca = a.cost(s);
    const StepCost cb = b.cost(s);
    EXPECT_EQ(ca.op(Op::MoeExperts).time.si(), 0.0);
    EXPECT_EQ(ca.op(Op::MoeExperts).kernels, 0);
    EXPECT_EQ(ca.op(Op::MoeRouter).time.si(), 0.0);
    EXPECT_EQ(ca.time, cb.time);
}

} // namespace
} // namespace gpuplan::model
