// The P:D comparison beside the sizing search: every split of the pools' GPUs and every
// co-located layout of the same count is enumerated, the simulated ones are ranked by the
// documented order, and the verdict names the winner.
#include "plan/disaggregation.hpp"

#include "model/error.hpp"
#include "tests/model/fixtures.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

namespace gpuplan::plan {
namespace {

model::ReplicaPool pool(const model::Scenario& s, const char* name, int replicas) {
    model::ReplicaPool p;
    p.name = name;
    p.hardware.gpu = s.deployment.gpu;
    p.hardware.intra_node_link = s.deployment.intra_node_link;
    p.hardware.gpus_per_node = s.deployment.gpus_per_node;
    p.replicas = replicas;
    return p;
}

model::EfficiencyProfile profile(const model::AcceleratorSpec&) {
    return model::default_profile();
}

TEST(CompareDisaggregation, EnumeratesEverySplitAndRanksTheSimulatedOnes) {
    model::Scenario s = sim::test::llama8b_scenario(1500, 100, 4.0, 100);
    s.slo.tpot = Seconds(0.05);
    model::Disaggregation g;
    g.prefill = pool(s, "prefill", 1);
    g.decode = pool(s, "decode", 3);
    g.link.bandwidth_per_direction = BytesPerSecond(50e9);
    s.cluster.disaggregation = g;
    const DisaggComparison c = compare_disaggregation(s, profile, 2, 8);
    EXPECT_EQ(c.gpus, 4);
    // 4 GPUs, tp 1 or 2 per pool (tp 4 leaves none for the other pool): (1,1) P = 1, 2, 3;
    // (1,2) P = 2; (2,1) P = 1; (2,2) P = 1: six splits; co-located tp 1, 2, 4: three.
    int disaggregated = 0;
    int colocated = 0;
    for (const auto* list : {&c.ranked, &c.not_simulated}) {
        for (const auto& l : *list) {
            EXPECT_EQ(l.gpus, 4);
            if (l.disaggregated) {
                ++disaggregated;
                EXPECT_EQ(l.prefill_replicas * l.prefill_tp + l.decode_replicas * l.decode_tp, 4);
            } else {
                ++colocated;
                EXPECT_EQ(l.replicas * l.tp, 4);
            }
        }
    }
    EXPECT_EQ(disaggregated, 6);
    EXPECT_EQ(colocated, 3);
    // Eight simulations: the three co-located and five splits with the most capacity.
    ASSERT_EQ(c.ranked.size(), 8u);
    for (std::size_t i = 1; i < c.ranked.size(); ++i) {
        const DisaggLayout& a = c.ranked[i - 1];
        const DisaggLayout& b = c.ranked[i];
        EXPECT_TRUE(a.meets_slo || !b.meets_slo);
        if (a.meets_slo == b.meets_slo && a.slo_attainment == b.slo_attainment) {
            EXPECT_LE(a.tpot_p99_s, b.tpot_p99_s);
        }
    }
    EXPECT_NE(c.verdict.find(c.ranked.front().name + " wins at 4 GPUs"), std::string::npos)
        << c.verdict;
}

TEST(CompareDisaggregation, NeedsTheBlock) {
    const model::Scenario s = sim::test::llama8b_scenario();
    EXPECT_THROW((void)compare_disaggregation(s, profile), InvalidArgument);
}

} // namespace
} // namespace gpuplan::plan
