// The shared analysis chain (plan/analysis.hpp): it composes the model's functions without a
// formula of its own, computes only the links asked for, and either throws or records a failing
// link's error.
#include "plan/analysis.hpp"

#include "model/error.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

namespace gpuplan::plan {
namespace {

model::Scenario scenario() {
    model::Scenario s = sim::test::llama8b_scenario(1024, 128, 2.0, 200);
    s.power.gpu_cap = Watts(500);
    return s;
}

TEST(ServingAnalysis, AnUnknownNodeHasTheDeploymentsGpusPerNodeAndNoHost) {
    const model::Scenario s = scenario();
    const model::NodePower n = scenario_node(s, nullptr);
    EXPECT_EQ(n.gpus, 8); // the fixture's gpus_per_node
    EXPECT_FALSE(n.known);
    EXPECT_EQ(n.host, Watts(0)); // no host_power override in the power model
}

TEST(ServingAnalysis, EachLinkIsTheModelFunctionOfThePreviousOne) {
    const model::Scenario s = scenario();
    const auto profile = model::default_profile();
    const ServingAnalysis a = analyze_serving(s, nullptr, profile);
    ASSERT_TRUE(a.bottleneck && a.power && a.rack && a.cost_inputs && a.cost);
    EXPECT_EQ(*a.bottleneck, model::find_bottleneck(s.deployment, s.workload, profile));

    const model::NodePower node = model::unknown_node(8, s.power_model);
    const model::PowerEstimate p = model::estimate_power(
        s.deployment, s.workload, profile, s.power_model, s.power, node, s.slo, s.rack);
    EXPECT_EQ(a.power->gpu_average, p.gpu_average);
    EXPECT_EQ(a.power->node_peak, p.node_peak);
    EXPECT_EQ(a.power->limit.per_gpu, Watts(500)); // the scenario's GPU cap binds

    // One GPU on an 8-GPU node: one node, at its capped peak.
    EXPECT_EQ(a.rack->nodes, 1);
    EXPECT_EQ(a.rack->node_power, p.node_peak);
    const model::RackPlan r = model::plan_racks(p.node_peak, 0, 1, s.rack, s.power.rack_budget);
    EXPECT_EQ(a.rack->nodes_per_rack, r.nodes_per_rack);
    EXPECT_EQ(a.rack->racks, r.racks);
    EXPECT_EQ(a.rack->binding, r.binding);

    const model::CostInputs in = model::cost_inputs(s, nullptr, p);
    EXPECT_EQ(a.cost_inputs->throughput_tok_s, in.throughput_tok_s);
    EXPECT_EQ(a.cost_inputs->load_power, in.load_power);
    EXPECT_EQ(a.cost->tokens, model::estimate_cost(in).tokens);
    EXPECT_TRUE(a.power_error.empty() && a.rack_error.empty() && a.cost_error.empty());
}

TEST(ServingAnalysis, ComputesOnlyTheLinksAskedFor) {
    const model::Scenario s = scenario();
    AnalysisOptions o;
    o.parts = {.serving = false, .power = true, .racks = false, .cost = false};
    const ServingAnalysis a = analyze_serving(s, nullptr, model::default_profile(), o);
    EXPECT_FALSE(a.bottleneck);
    EXPECT_TRUE(a.power);
    EXPECT_FALSE(a.rack);
    EXPECT_FALSE(a.cost_inputs);
    EXPECT_FALSE(a.cost);

    o.parts = {.serving = true, .power = false, .racks = false, .cost = false};
    const ServingAnalysis b = analyze_serving(s, nullptr, model::default_profile(), o);
    EXPECT_TRUE(b.bottleneck);
    EXPECT_FALSE(b.power);
}

TEST(ServingAnalysis, AFailingPowerLinkThrowsOrIsRecordedForRacksAndCostToo) {
    model::Scenario s = scenario();
    s.rack.pdu.phases = 2; // plan_racks (inside estimate_power) accepts 1 or 3
    EXPECT_THROW((void)analyze_serving(s, nullptr, model::default_profile()), InvalidArgument);

    AnalysisOptions o;
    o.on_error = OnError::Record;
    const ServingAnalysis a = analyze_serving(s, nullptr, model::default_profile(), o);
    EXPECT_TRUE(a.bottleneck); // the serving estimate does not need the racks
    EXPECT_FALSE(a.power);
    ASSERT_FALSE(a.power_error.empty());
    EXPECT_EQ(a.rack_error, "needs the power estimate: " + a.power_error);
    EXPECT_EQ(a.cost_error, "needs the power estimate: " + a.power_error);
    EXPECT_FALSE(a.rack);
    EXPECT_FALSE(a.cost);
}

TEST(ServingAnalysis, AFailingServingEstimateAlwaysThrows) {
    model::Scenario s = scenario();
    s.deployment.par.tp = 3; // 32 attention heads are not divisible by 3
    AnalysisOptions o;
    o.on_error = OnError::Record;
    EXPECT_THROW((void)analyze_serving(s, nullptr, model::default_profile(), o), InputError);
}

} // namespace
} // namespace gpuplan::plan
