// Multi-LoRA on the command line (examples/lora-llama8b-h100.yaml): estimate's adapter sizes
// and slots by hand, simulate's adapter figures in --json, and bad keys exiting with code 2.
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

std::string example() {
    return std::string(GPUPLAN_SOURCE_DIR) + "/examples/lora-llama8b-h100.yaml";
}

} // namespace

// Llama-3.1-8B, rank 16 on q/k/v/o in bf16: 425,984 elements per layer × 32 layers × 2 bytes =
// 27,262,976 bytes; 16 slots of rank 16 (max_lora_rank's default) per GPU.
TEST(LoraCli, EstimateReportsAdapterBytesAndSlots) {
    const auto r = gpuplan::test::run_cli("estimate " + example() + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["lora"]["adapter_bytes"].get<double>(), 27262976.0);
    EXPECT_EQ(j["lora"]["reserved_bytes_per_gpu"].get<double>(), 16 * 27262976.0);
    EXPECT_EQ(j["memory"]["lora_slots_bytes"].get<double>(), 16 * 27262976.0);
    EXPECT_GT(j["lora"]["gpu_hit_rate"].get<double>(), 0.0);
    EXPECT_LT(j["lora"]["gpu_hit_rate"].get<double>(), j["lora"]["cpu_hit_rate"].get<double>());
    EXPECT_GT(j["decode_step_ops"]["lora"]["time_s"].get<double>(), 0.0);
}

TEST(LoraCli, SimulateReportsLoadsAndHitRate) {
    const auto r = gpuplan::test::run_cli("simulate " + example() + " --requests 80 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const auto& l = j["lora"];
    EXPECT_EQ(l["requests"].get<int>(), 80);
    EXPECT_GT(l["loads"].get<int>(), 0);
    EXPECT_LE(l["disk_loads"].get<int>(), l["loads"].get<int>());
    EXPECT_NEAR(l["hit_rate"].get<double>(), l["hits"].get<double>() / l["requests"].get<double>(),
                1e-12);
    const auto text = gpuplan::test::run_cli("simulate " + example() + " --requests 80");
    EXPECT_NE(text.out.find("LoRA         200 adapters, 16 GPU slots"), std::string::npos)
        << text.out;
}

TEST(LoraCli, BadKeysExitTwoNamingTheKey) {
    const auto rank =
        gpuplan::test::run_cli("estimate " + example() + " --set engine.lora.rank=64");
    EXPECT_EQ(rank.exit_code, 2) << rank.out;
    EXPECT_NE(rank.out.find("engine.lora.rank: 64 is above max_lora_rank 16"), std::string::npos)
        << rank.out;
    const auto router = gpuplan::test::run_cli("simulate " + example() + " --set engine.lora=null");
    EXPECT_EQ(router.exit_code, 2) << router.out;
    EXPECT_NE(router.out.find("cluster.router: adapter_affinity routes by LoRA adapter"),
              std::string::npos)
        << router.out;
}

// plan compares max_loras 16, 32 and 64 on the answer (docs/plan.md, "KV offload and LoRA
// slots"): more slots win on the example's Zipf tail, and 16 more slots take 16 × 27,262,976
// bytes = 3,328 tokens of 128 KiB from each replica's KV pool (to a block of 16).
TEST(LoraCli, PlanPrefersMoreSlotsOnTheExample) {
    const auto r = gpuplan::test::run_cli("plan " + example() + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const auto& c = j.at("max_loras_choice");
    EXPECT_TRUE(c.at("choice").get<bool>());
    EXPECT_NE(c.at("chosen").get<std::string>(), "max_loras 16");
    EXPECT_NE(c.at("verdict").get<std::string>().find("wins over max_loras 16"), std::string::npos);
    ASSERT_EQ(c.at("options").size(), 3u);
    double base_hits = -1, best_hits = c.at("options").front().at("lora_hit_rate").get<double>();
    for (const auto& o : c.at("options")) {
        for (const char* key : {"max_loras", "lora_hit_rate", "lora_loads", "kv_tokens",
                                "kv_tokens_lost", "ttft_at_percentile_s", "meets_slo"}) {
            EXPECT_TRUE(o.contains(key)) << key;
        }
        if (o.at("max_loras").get<double>() == 16) {
            base_hits = o.at("lora_hit_rate").get<double>();
            EXPECT_EQ(o.at("kv_tokens_lost").get<int>(), 0);
        }
        if (o.at("max_loras").get<double>() == 32) {
            EXPECT_NEAR(o.at("kv_tokens_lost").get<double>(), 3328.0, 16.0);
        }
    }
    EXPECT_GT(best_hits, base_hits);
}
