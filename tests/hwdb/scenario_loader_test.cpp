#include "hwdb/scenario_loader.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <filesystem>

using namespace gpuplan;

namespace {

const hwdb::Database& db() {
    static const hwdb::Database d = hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

std::string error_of(const std::string& text) {
    try {
        (void)hwdb::parse_scenario(text, "s.yaml", db());
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "no error";
}

constexpr const char* kBase = R"(schema: 1
model: llama-3.1-70b
hardware:
  accelerator: h100-sxm
  tp: 4
)";

}  // namespace

TEST(ScenarioLoader, EveryExampleLoads) {
    int count = 0;
    for (const auto& e : std::filesystem::directory_iterator(std::string(GPUPLAN_SOURCE_DIR) + "/examples")) {
        if (e.path().extension() == ".yaml") {
            SCOPED_TRACE(e.path().string());
            EXPECT_NO_THROW((void)hwdb::load_scenario(e.path(), db()));
            ++count;
        }
    }
    EXPECT_GE(count, 1);
}

TEST(ScenarioLoader, ResolvesNamesAndDefaults) {
    const auto s = hwdb::parse_scenario(kBase, "s.yaml", db());
    EXPECT_EQ(s.deployment.model.name, "llama-3.1-70b");
    EXPECT_EQ(s.deployment.gpu.name, "h100-sxm");
    EXPECT_EQ(s.deployment.gpus, 4);
    EXPECT_EQ(s.deployment.par.tp, 4);
    EXPECT_EQ(s.deployment.intra_node_link.name, "nvlink4");  // the accelerator's scale-up link
    EXPECT_EQ(s.deployment.prec.weights.name, "bf16");
    EXPECT_EQ(s.name, "s");
}

TEST(ScenarioLoader, CountWithoutDpGivesReplicas) {
    const auto s = hwdb::parse_scenario(std::string(kBase) + "  count: 8\n", "s.yaml", db());
    EXPECT_EQ(s.deployment.par.dp, 2);
    EXPECT_EQ(s.deployment.gpus, 8);
}

TEST(ScenarioLoader, FullScenarioReadsEverySection) {
    const auto s = hwdb::parse_scenario(std::string(kBase) + R"(  node: dgx-h100
precision:
  weights: awq-int4
  kv_cache: fp8
engine:
  max_model_len: 16384
  gpu_memory_utilization: 0.85
  max_num_seqs: 4
  enable_prefix_caching: true
workload:
  input_tokens: 2000
  output_tokens: 300
  concurrency: 16
slo:
  ttft: 300 ms
  tpot: 40 ms
power:
  gpu_cap: 500 W
  rack_budget: 40 kW
prices:
  gpu_hour: $2.10/h
  electricity: 0.6 CNY/kWh
seed: 7
)", "s.yaml", db());
    EXPECT_EQ(s.deployment.prec.weights.name, "awq-int4");
    EXPECT_DOUBLE_EQ(s.deployment.prec.kv_cache.bits_per_element, 8);
    EXPECT_EQ(*s.deployment.engine.max_model_len, 16384);
    EXPECT_DOUBLE_EQ(*s.deployment.engine.gpu_memory_utilization, 0.85);
    EXPECT_EQ(s.workload.input_tokens, 2000);
    EXPECT_DOUBLE_EQ(s.slo.ttft->si(), 0.3);
    EXPECT_DOUBLE_EQ(s.power.rack_budget->si(), 40e3);
    EXPECT_EQ(s.prices.electricity->money.currency, "CNY");
    EXPECT_EQ(s.seed, 7u);
    EXPECT_EQ(s.deployment.gpus_per_node, 8);
    ASSERT_TRUE(s.deployment.inter_node_link);
}

TEST(ScenarioLoader, ErrorsNameLineColumnAndKey) {
    EXPECT_EQ(error_of("schema: 1\nmodel: llama-3.1-7b\nhardware: {accelerator: h100-sxm}\n")
                  .rfind("s.yaml:2:8: model: unknown model 'llama-3.1-7b'; did you mean", 0),
              0u);
    EXPECT_NE(error_of(std::string(kBase) + "  count: 6\n").find("hardware.count: count 6 is not a multiple of tp × pp = 4"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "prices:\n  gpu_hour: $25000\n").find("7:13: prices.gpu_hour: wrong price unit"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "slo:\n  ttft: 300\n").find("slo.ttft: '300' has no unit"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "engine:\n  max_model_lenn: 4\n").find("did you mean 'max_model_len'"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "precision:\n  weights: int3\n").find("precision.weights: unknown precision 'int3'"),
              std::string::npos);
    EXPECT_NE(error_of("schema: 1\nmodel: llama-3.1-70b\nhardware:\n  accelerator: h100-sxm\n  tp: 3\n").find("hardware: "),
              std::string::npos);
    EXPECT_NE(error_of("schema: 1\nhardware: {accelerator: h100-sxm}\n").find("missing required key 'model'"),
              std::string::npos);
    EXPECT_NE(error_of("schema: 1\nmodel: llama-3.1-8b\nhardware: {accelerator: h100-sxm, node: dgx-a100}\n")
                  .find("hardware.node: node 'dgx-a100' holds a100-sxm-40gb, not h100-sxm"),
              std::string::npos);
}
