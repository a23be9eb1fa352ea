// The sizing search (`gpuplan plan`): it finds what an exhaustive search finds on a small space
// (the brute force below simulates every configuration, written independently of the search),
// its answer does not depend on the thread count, and an infeasible question gets a clear
// "nothing meets the SLO" with the closest miss.
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/serving.hpp"
#include "model/speculative.hpp"
#include "model/step_cost.hpp"
#include "plan/sizing_search.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

namespace gpuplan::plan {
namespace {

model::Price usd(double amount, model::PriceBasis per) {
    return {{amount, "USD"}, per};
}

model::PlanCandidate candidate(const model::AcceleratorSpec& gpu,
                               const model::InterconnectSpec& link, double price) {
    model::PlanCandidate c;
    c.accelerator_ref = gpu.name;
    c.gpu = gpu;
    c.intra_node_link = link;
    c.gpus_per_node = 8;
    c.gpu_purchase = usd(price, model::PriceBasis::Once);
    return c;
}

// Llama-3-8B, 1024-token prompts and 128-token answers at `rate` requests/s; P99 TTFT 1 s and
// TPOT 60 ms; an RTX 4090 at $1,600 or an H100 at $25,000; TP 1 or 2, bf16 or fp8 weights, at
// most 4 GPUs.
model::Scenario question(double rate) {
    model::Scenario s = sim::test::llama8b_scenario(1024, 128, rate, 200);
    s.deployment.engine.max_model_len = 4096;
    s.slo.ttft = Seconds(1.0);
    s.slo.tpot = Seconds(0.060);
    s.prices.electricity = usd(0.10, model::PriceBasis::KilowattHour);
    model::PlanConfig p;
    p.candidates = {candidate(model::test::rtx4090(), model::test::pcie4(), 1600),
                    candidate(model::test::h100(), model::test::nvlink4(), 25000)};
    p.tp = {1, 2};
    p.weights = {model::test::precision("bf16"), model::test::precision("fp8")};
    p.max_gpus = 4;
    p.top = 3;
    p.requests = 200;
    p.max_simulations = 500;
    s.plan = p;
    return s;
}

struct Pick {
    std::string gpu;
    int tp = 0, dp = 0;
    std::string weights;
    double monthly = 0;
    auto key() const { return std::tie(monthly, gpu, tp, weights, dp); }
};

// Every configuration simulated; per shape (GPU, tp, weights) the fewest replicas that meet
// every SLO; cheapest first.
std::vector<Pick> brute_force(const model::Scenario& base) {
    const model::PlanConfig& plan = *base.plan;
    std::vector<Pick> picks;
    for (const auto& c : plan.candidates) {
        for (const int tp : plan.tp) {
            for (const auto& w : plan.weights) {
                for (int dp = 1; tp * dp <= plan.max_gpus; ++dp) {
                    model::Scenario t = base;
                    t.plan.reset();
                    t.deployment.gpu = c.gpu;
                    t.deployment.intra_node_link = c.intra_node_link;
                    t.deployment.par = {tp, 1, dp, 1};
                    t.deployment.prec.weights = w;
                    t.prices.gpu_purchase = c.gpu_purchase;
                    if (!model::estimate_memory(t.deployment).fits) {
                        break;
                    }
                    sim::SimOptions o;
                    o.requests = plan.requests;
                    const sim::SimResult r = sim::simulate(t, o);
                    bool meets = r.ok && r.overall.rejected + r.overall.timed_out == 0 &&
                                 r.overall.completed > 0;
                    for (const auto& k : r.classes) {
                        meets = meets && k.slo_met;
                    }
                    if (!meets) {
                        continue;
                    }
                    const SizingCost cost = sizing_cost(t, c, model::default_profile());
                    EXPECT_TRUE(cost.own_monthly);
                    picks.push_back({c.gpu.name, tp, dp, w.name, cost.own_monthly.value_or(0)});
                    break;
                }
            }
        }
    }
    std::sort(picks.begin(), picks.end(),
              [](const Pick& a, const Pick& b) { return a.key() < b.key(); });
    return picks;
}

TEST(SizingSearch, FindsTheBruteForceOptimumOnASmallSpace) {
    for (const double rate : {3.0, 9.0}) {
        SCOPED_TRACE(rate);
        const model::Scenario s = question(rate);
        const std::vector<Pick> expected = brute_force(s);
        ASSERT_GE(expected.size(), 3u);
        SizingOptions o;
        o.threads = 2;
        const SizingResult r = size_deployment(s, std::nullopt, o);
        ASSERT_TRUE(r.found) << r.verdict;
        ASSERT_EQ(r.ranked.size(), 3u);
        for (std::size_t i = 0; i < 3; ++i) {
            SCOPED_TRACE(i);
            const SizingRow& row = r.ranked[i];
            EXPECT_EQ(row.config.gpu, expected[i].gpu);
            EXPECT_EQ(row.config.par.tp, expected[i].tp);
            EXPECT_EQ(row.config.par.dp, expected[i].dp);
            EXPECT_EQ(row.config.weights.name, expected[i].weights);
            EXPECT_DOUBLE_EQ(*row.monthly, expected[i].monthly);
            EXPECT_TRUE(row.meets_slo);
            EXPECT_EQ(row.stage, SizingStage::Simulated);
            EXPECT_FALSE(row.margins.empty());
            EXPECT_FALSE(row.binding_resource.empty());
            EXPECT_LE(row.miss_ratio, 1.0);
        }
        // The analytic model pruned, so fewer than all configurations were simulated.
        EXPECT_LT(r.simulated, r.configurations);
        EXPECT_EQ(r.currency, "USD");
        EXPECT_NE(r.verdict.find("cheapest meeting every SLO"), std::string::npos);
    }
}

TEST(SizingSearch, TheAnswerDoesNotDependOnTheThreadCount) {
    const model::Scenario s = question(9.0);
    SizingOptions one;
    one.threads = 1;
    SizingOptions two;
    two.threads = 2;
    SizingOptions five;
    five.threads = 5;
    const SizingResult a = size_deployment(s, std::nullopt, one);
    const SizingResult b = size_deployment(s, std::nullopt, two);
    const SizingResult c = size_deployment(s, std::nullopt, five);
    EXPECT_TRUE(a.found);
    EXPECT_TRUE(a == b);
    EXPECT_TRUE(a == c);
}

TEST(SizingSearch, AnImpossibleSloSaysNothingMeetsItAndNamesTheClosestMiss) {
    model::Scenario s = question(3.0);
    s.slo.tpot = Seconds(0.002); // 2 ms per token: no GPU here reads 8 GB that fast
    const SizingResult r = size_deployment(s);
    EXPECT_FALSE(r.found);
    EXPECT_TRUE(r.ranked.empty());
    EXPECT_EQ(r.verdict.rfind("nothing meets the SLO", 0), 0u) << r.verdict;
    ASSERT_TRUE(r.closest_miss);
    EXPECT_EQ(r.closest_miss->stage, SizingStage::Latency);
    EXPECT_NE(r.closest_miss->reason.find("TPOT"), std::string::npos) << r.closest_miss->reason;
    // The closest: the fastest decode, the H100 at TP 2 with fp8 weights.
    EXPECT_EQ(r.closest_miss->config.gpu, "h100-sxm");
    EXPECT_EQ(r.closest_miss->config.par.tp, 2);
    EXPECT_EQ(r.closest_miss->config.weights.name, "fp8");
    EXPECT_GT(r.closest_miss->miss_ratio, 1.25);
    EXPECT_EQ(r.simulated, 0);
}

TEST(SizingSearch, ASloMissedOnlyUnderLoadIsConfirmedByTheSimulator) {
    // One H100 at 20 requests/s with a TTFT SLO 20 % above a lone request's: the analytic
    // bound lets it through, the queue in the simulator does not.
    model::Scenario s = question(20.0);
    s.plan->candidates.erase(s.plan->candidates.begin());
    s.plan->max_gpus = 1;
    s.plan->weights = {model::test::precision("bf16")};
    const model::StepCostModel lone(s.deployment, model::default_profile());
    s.slo.ttft = model::ttft(lone, 1024) * 1.2;
    const SizingResult r = size_deployment(s);
    EXPECT_FALSE(r.found);
    ASSERT_TRUE(r.closest_miss);
    EXPECT_EQ(r.closest_miss->stage, SizingStage::Simulated) << r.closest_miss->reason;
    EXPECT_GT(r.closest_miss->miss_ratio, 1.0);
    EXPECT_FALSE(r.closest_miss->meets_slo);
    const auto& m = r.closest_miss->margins;
    ASSERT_FALSE(m.empty());
    EXPECT_LT(std::min_element(
                  m.begin(), m.end(),
                  [](const SloMargin& a, const SloMargin& b) { return a.margin() < b.margin(); })
                  ->margin(),
              0.0);
    EXPECT_NE(r.verdict.find("over"), std::string::npos) << r.verdict;
    EXPECT_GT(r.simulated, 0);
}

TEST(SizingSearch, BudgetAndPowerBudgetPruneAndReportHowFarOff) {
    model::Scenario s = question(3.0);
    s.plan->budget = usd(10, model::PriceBasis::Month);
    SizingResult r = size_deployment(s);
    EXPECT_FALSE(r.found);
    ASSERT_TRUE(r.closest_miss);
    EXPECT_EQ(r.closest_miss->stage, SizingStage::Budget);
    EXPECT_NEAR(r.closest_miss->miss_ratio, *r.closest_miss->monthly / 10, 1e-9);
    EXPECT_GT(r.stages.at("budget"), 0);

    s.plan->budget.reset();
    s.plan->power_budget = Watts(200);
    r = size_deployment(s);
    EXPECT_FALSE(r.found);
    ASSERT_TRUE(r.closest_miss);
    EXPECT_EQ(r.closest_miss->stage, SizingStage::Power);
    EXPECT_GT(r.closest_miss->peak_power_w, 200.0);

    s.plan->budget = usd(10, model::PriceBasis::Hour);
    EXPECT_THROW((void)size_deployment(s), InvalidArgument);
}

TEST(SizingSearch, WithoutAPlanBlockTheScenariosOwnHardwareIsTheCandidate) {
    model::Scenario s = question(3.0);
    s.plan.reset();
    s.prices.gpu_purchase = usd(25000, model::PriceBasis::Once);
    const model::PlanConfig p = effective_plan(s, std::nullopt);
    ASSERT_EQ(p.candidates.size(), 1u);
    EXPECT_EQ(p.candidates[0].gpu, s.deployment.gpu);
    EXPECT_EQ(p.candidates[0].gpu_purchase, s.prices.gpu_purchase);
    const SizingResult r = size_deployment(s);
    ASSERT_TRUE(r.found) << r.verdict;
    EXPECT_EQ(r.ranked.front().config.gpu, "h100-sxm");
    EXPECT_EQ(r.ranked.front().config.par.dp, 1);
}

TEST(SizingSearch, ConfiguredScenarioKeepsTheScenariosPricesOnlyForItsOwnGpu) {
    model::Scenario s = question(3.0);
    s.prices.gpu_purchase = usd(99, model::PriceBasis::Once); // for the scenario's H100
    model::PlanCandidate c = s.plan->candidates[0];           // an RTX 4090 at $1,600
    SizingConfig k;
    k.par = {2, 1, 3, 1};
    k.weights = model::test::precision("fp8");
    k.max_num_seqs = 64;
    const model::Scenario t = configured_scenario(s, c, k);
    EXPECT_EQ(t.deployment.gpu.name, "rtx-4090");
    EXPECT_EQ(t.deployment.gpus(), 6);
    EXPECT_EQ(t.deployment.engine.max_num_seqs, 64);
    EXPECT_EQ(t.deployment.prec.weights.name, "fp8");
    EXPECT_EQ(t.prices.gpu_purchase->money.amount, 1600);
    c.gpu_purchase.reset();
    EXPECT_FALSE(configured_scenario(s, c, k).prices.gpu_purchase);
    EXPECT_EQ(configured_scenario(s, s.plan->candidates[1], k).prices.gpu_purchase->money.amount,
              25000);
}

} // namespace
// plan.speculative: [on, off] doubles the shapes; a row with it off runs the scenario without
// the block, a row with it on keeps the block, and with it on a lone request's TPOT (the
// pruning bound) is the speculative one.
TEST(SizingSearch, SpeculationIsADimensionWhenThePlanListsIt) {
    model::Scenario s = question(3.0);
    model::SpeculativeConfig c;
    c.method = model::SpeculativeMethod::Eagle;
    c.num_speculative_tokens = 3;
    c.acceptance_rate = 0.75;
    s.deployment.engine.speculative = c;
    s.plan->candidates.resize(1); // the RTX 4090
    s.plan->weights.resize(1);
    s.plan->tp = {1};
    s.plan->speculative = {true, false};
    SizingConfig k;
    k.par = {1, 1, 1, 1};
    k.speculative = false;
    EXPECT_FALSE(configured_scenario(s, s.plan->candidates[0], k).deployment.engine.speculative);
    k.speculative = true;
    EXPECT_EQ(configured_scenario(s, s.plan->candidates[0], k).deployment.engine.speculative, c);
    const SizingResult r = size_deployment(s);
    EXPECT_EQ(r.shapes, 2);
    std::vector<SizingRow> rows = r.ranked;
    if (r.closest_miss) {
        rows.push_back(*r.closest_miss);
    }
    ASSERT_FALSE(rows.empty()) << r.verdict;
    int checked = 0;
    for (const SizingRow& row : rows) {
        if (row.lone_tpot_s > 0) {
            ++checked;
            const model::Scenario t = configured_scenario(s, s.plan->candidates[0], row.config);
            const model::StepCostModel m(t.deployment, model::default_profile());
            const model::SpeculativeModel sp(t.deployment, c, model::default_profile());
            const double expected =
                model::tpot(m, 1, 1024 + 64, row.config.speculative ? &sp : nullptr).si();
            EXPECT_NEAR(row.lone_tpot_s, expected, expected * 1e-12);
        }
    }
    EXPECT_GT(checked, 0);
}

} // namespace gpuplan::plan
