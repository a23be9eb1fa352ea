// engine.lora and router adapter_affinity in scenario files: read into
// model::LoraServingConfig (the load bandwidth resolved from the accelerator's host link), and
// bad values reported at file:line:column with the key and the fix. The round trip through the
// writer is covered by ScenarioWriter.EveryExampleRoundTripsLosslessly
// (examples/lora-llama8b-h100.yaml).
#include "hwdb/scenario_loader.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace gpuplan;

namespace {

const hwdb::Database& db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
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
model: llama-3.1-8b
hardware:
  accelerator: h100-sxm
engine:
  lora:
)";

} // namespace

TEST(LoraLoader, BlockReadsEveryKey) {
    const model::Scenario s = hwdb::parse_scenario(
        std::string(kBase) + "    adapters: 50\n    rank: 8\n    target_modules: [q_proj, v_proj]\n"
                             "    max_loras: 4\n    max_lora_rank: 32\n    max_cpu_loras: 16\n"
                             "    popularity: zipf\n    zipf_s: 0.8\n"
                             "cluster:\n  router: adapter_affinity\n",
        "s.yaml", db());
    ASSERT_TRUE(s.deployment.engine.lora.has_value());
    const model::LoraServingConfig& c = *s.deployment.engine.lora;
    EXPECT_EQ(c.adapters, 50);
    EXPECT_EQ(c.rank, 8);
    EXPECT_EQ(c.target_modules,
              (std::vector<model::LoraModule>{model::LoraModule::QProj, model::LoraModule::VProj}));
    EXPECT_EQ(c.max_loras, 4);
    EXPECT_EQ(c.max_lora_rank, 32);
    EXPECT_EQ(c.max_cpu_loras, 16);
    EXPECT_EQ(c.popularity, model::LoraPopularity::Zipf);
    EXPECT_EQ(c.zipf_s, 0.8);
    // The H100 SXM's host link (PCIe 5.0 x16) per direction.
    ASSERT_TRUE(c.load_bandwidth.has_value());
    EXPECT_GT(c.load_bandwidth->si(), 30e9);
    EXPECT_EQ(s.cluster.router, model::RouterPolicy::AdapterAffinity);
}

TEST(LoraLoader, ErrorsNameFileLineColumnAndKey) {
    const std::string rank = error_of(std::string(kBase) + "    adapters: 4\n    rank: 64\n");
    EXPECT_EQ(rank, "s.yaml:8:11: engine.lora.rank: 64 is above max_lora_rank 16 (vLLM refuses to "
                    "load such an adapter); raise engine.lora.max_lora_rank")
        << rank;
    const std::string cpu =
        error_of(std::string(kBase) + "    adapters: 4\n    max_loras: 4\n    max_cpu_loras: 2\n");
    EXPECT_NE(cpu.find("s.yaml:9:20: engine.lora.max_cpu_loras: 2 is below max_loras 4"),
              std::string::npos)
        << cpu;
    const std::string mod =
        error_of(std::string(kBase) + "    adapters: 4\n    target_modules: [q_proj, lm_head]\n");
    EXPECT_NE(mod.find("engine.lora.target_modules"), std::string::npos) << mod;
    EXPECT_NE(mod.find("unknown module 'lm_head'"), std::string::npos) << mod;
    const std::string zipf = error_of(std::string(kBase) + "    adapters: 4\n    zipf_s: 1.2\n");
    EXPECT_NE(zipf.find("zipf_s needs popularity: zipf"), std::string::npos) << zipf;
    const std::string missing = error_of(std::string(kBase) + "    rank: 8\n");
    EXPECT_NE(missing.find("adapters"), std::string::npos) << missing;
    const std::string router =
        error_of("schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n"
                 "cluster:\n  router: adapter_affinity\n");
    EXPECT_NE(router.find("s.yaml:6:11: cluster.router: adapter_affinity routes by LoRA adapter"),
              std::string::npos)
        << router;
}
