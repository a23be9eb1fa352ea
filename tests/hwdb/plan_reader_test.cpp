// The scenario's `plan:` block (the sizing search): candidates resolved against the hwdb like
// the scenario's own hardware, lists of layouts and precisions, constraints, and the errors
// for what is wrong.
#include "hwdb/scenario_loader.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

using namespace gpuplan;

namespace {

const hwdb::Database& db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

constexpr const char* kBase = R"(schema: 1
model: llama-3.1-8b
hardware:
  accelerator: h100-sxm
)";

model::Scenario parse(const std::string& extra) {
    return hwdb::parse_scenario(std::string(kBase) + extra, "plan.yaml", db());
}

std::string error_of(const std::string& extra) {
    try {
        (void)parse(extra);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST(PlanReader, ReadsCandidatesListsAndConstraints) {
    const model::Scenario s = parse(R"(plan:
  candidates:
    - accelerator: h200-sxm
      node: dgx-h200
      node_purchase: $300000
    - accelerator: l40s
      gpu_purchase: $9000
      gpu_hour: $0.9/h
  max_gpus: 16
  tp: [1, 2, 4]
  pp: [1, 2]
  weights: [bf16, fp8]
  kv_cache: [fp8]
  max_num_seqs: [64, 256]
  budget: $40000/month
  power_budget: 20 kW
  max_racks: 2
  pricing: rent
  top: 3
  requests: 500
  max_simulations: 32
  prune_margin: 0.5
)");
    ASSERT_TRUE(s.plan);
    const model::PlanConfig& p = *s.plan;
    ASSERT_EQ(p.candidates.size(), 2u);
    EXPECT_EQ(p.candidates[0].gpu.name, "h200-sxm");
    ASSERT_TRUE(p.candidates[0].node);
    EXPECT_EQ(p.candidates[0].node->name, "dgx-h200");
    EXPECT_EQ(p.candidates[0].node_ref, "dgx-h200");
    EXPECT_EQ(p.candidates[0].gpus_per_node, 8);
    EXPECT_EQ(p.candidates[0].intra_node_link.name, "nvswitch-nvlink4");
    EXPECT_EQ(p.candidates[0].node_purchase->money.amount, 300000);
    EXPECT_FALSE(p.candidates[1].node);
    EXPECT_EQ(p.candidates[1].gpu_purchase->money.amount, 9000);
    EXPECT_EQ(p.candidates[1].gpu_hour->per, model::PriceBasis::Hour);
    EXPECT_EQ(p.max_gpus, 16);
    EXPECT_EQ(p.tp, (std::vector<int>{1, 2, 4}));
    EXPECT_EQ(p.pp, (std::vector<int>{1, 2}));
    ASSERT_EQ(p.weights.size(), 2u);
    EXPECT_EQ(p.weights[1].name, "fp8");
    EXPECT_EQ(p.kv_cache.front().name, "fp8");
    EXPECT_EQ(p.max_num_seqs, (std::vector<int>{64, 256}));
    EXPECT_EQ(p.budget->money.amount, 40000);
    EXPECT_EQ(p.budget->per, model::PriceBasis::Month);
    EXPECT_DOUBLE_EQ(p.power_budget->si(), 20e3);
    EXPECT_EQ(p.max_racks, 2);
    EXPECT_EQ(p.pricing, model::PlanPricing::Rent);
    EXPECT_EQ(p.top, 3);
    EXPECT_EQ(p.requests, 500);
    EXPECT_EQ(p.max_simulations, 32);
    EXPECT_DOUBLE_EQ(p.prune_margin, 0.5);
    EXPECT_FALSE(parse("").plan);
    EXPECT_EQ(parse("plan: {}\n").plan, model::PlanConfig{});
}

TEST(PlanReader, ErrorsNameTheKeyAndTheFix) {
    EXPECT_NE(
        error_of("plan:\n  candidates:\n    - accelerator: h100-sxmm\n").find("plan.candidates"),
        std::string::npos);
    EXPECT_NE(error_of("plan:\n  candidates:\n    - accelerator: h100-sxm\n      node: dgx-a100\n")
                  .find("not h100-sxm"),
              std::string::npos);
    EXPECT_NE(error_of("plan:\n  budget: $40000\n").find("$50000/month"), std::string::npos);
    EXPECT_NE(error_of("plan:\n  tp: [1, two]\n").find("whole number"), std::string::npos);
    EXPECT_NE(error_of("plan:\n  tp: []\n").find("empty"), std::string::npos);
    EXPECT_NE(error_of("plan:\n  weights: [bf17]\n").find("plan.weights"), std::string::npos);
    EXPECT_NE(
        error_of("plan:\n  pricing: lease\n").find("unknown value 'lease'; use one of own, rent"),
        std::string::npos);
    EXPECT_NE(error_of("plan:\n  power_budget: 20\n").find("unit"), std::string::npos);
    EXPECT_NE(error_of("plan:\n  topp: 3\n").find("top"), std::string::npos);
}
