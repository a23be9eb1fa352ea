// `gpuplan plan` judges the router of its answer's replicas (plan/routing.hpp; docs/plan.md,
// "The router"): a prefix-aware router for the prefix-routing example, whose shared prefixes
// overflow every replica's cache when spread, and least outstanding, with the reason, for a
// workload whose prompts share nothing.
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace {

using nlohmann::json;

std::string src(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel;
}

json plan_json(const std::string& file) {
    const auto r = gpuplan::test::run_cli("plan " + file + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(r.out);
}

TEST(PlanRouter, PrefixAwareRoutingWinsForThePrefixRoutingExample) {
    const json j = plan_json(src("examples/prefix-routing-rag.yaml"));
    ASSERT_TRUE(j.contains("router")) << j.dump();
    const json& r = j.at("router");
    EXPECT_TRUE(r.at("choice").get<bool>());
    const std::string chosen = r.at("chosen").get<std::string>();
    EXPECT_TRUE(chosen == "longest_prefix" || chosen == "weighted") << chosen;
    EXPECT_EQ(r.at("replicas"), j.at("ranked")[0].at("replicas"));
    // 32 sets of 3,000 tokens and an 800-token system prompt, against 6 GiB of KV per replica
    // at 128 KiB per token (Llama-3.1-8B bf16: 2 × 32 layers × 8 KV heads × 128 × 2 bytes).
    EXPECT_DOUBLE_EQ(r.at("prefix_tokens").get<double>(), 32 * 3000 + 800);
    EXPECT_EQ(r.at("cache_tokens_per_replica").get<std::int64_t>(),
              6LL * 1024 * 1024 * 1024 / 131072);
    double least_hit = -1, win_hit = -1;
    for (const json& o : r.at("options")) {
        if (o.at("router") == "least_outstanding") {
            least_hit = o.at("prefix_hit_rate").get<double>();
        }
        if (o.at("router") == chosen) {
            win_hit = o.at("prefix_hit_rate").get<double>();
        }
    }
    EXPECT_GT(win_hit, least_hit + 0.2);
    EXPECT_EQ(r.at("options")[0].at("router"), chosen);
    EXPECT_NE(r.at("verdict").get<std::string>().find(chosen + " wins at"), std::string::npos);
    const auto text = gpuplan::test::run_cli("plan " + src("examples/prefix-routing-rag.yaml"));
    EXPECT_NE(text.out.find("router answer " + chosen + " wins at"), std::string::npos) << text.out;
}

TEST(PlanRouter, LeastOutstandingWithItsReasonWithoutSharedPrefixes) {
    // The example's classes with no shared prefix and long prompts of their own, so the answer
    // needs several replicas.
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpuplan-plan-router-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = dir / "unique.yaml";
    std::ofstream(file) << R"(schema: 1
name: unique-prompts
model: llama-3.1-8b
hardware: {accelerator: h100-sxm, count: 4}
engine: {kind: vllm, max_model_len: 8192, kv_cache_memory: 6 GiB}
workload:
  requests_per_s: 30
  duration: 60 s
  classes:
    - name: rag
      share: 0.8
      input: {dist: uniform, min: 3050, max: 3300}
      output: {dist: normal, mean: 150, stddev: 50, min: 16, max: 400}
      slo: {ttft: 1 s, tpot: 60 ms}
    - name: chat
      share: 0.2
      input: {dist: lognormal, mean: 1200, stddev: 300, min: 16, max: 4000}
      output: {dist: lognormal, mean: 200, stddev: 150, min: 4, max: 1000}
      slo: {ttft: 1 s, tpot: 60 ms}
cluster: {router: round_robin}
seed: 11
)";
    const json j = plan_json(file.string());
    ASSERT_TRUE(j.at("found").get<bool>());
    ASSERT_GT(j.at("ranked")[0].at("replicas").get<int>(), 1) << j.dump();
    const json& r = j.at("router");
    EXPECT_FALSE(r.at("choice").get<bool>());
    EXPECT_EQ(r.at("chosen"), "least_outstanding");
    const std::string verdict = r.at("verdict").get<std::string>();
    EXPECT_NE(verdict.find("no class shares a prefix"), std::string::npos) << verdict;
    EXPECT_NE(verdict.find("set cluster.router: least_outstanding"), std::string::npos) << verdict;
    std::filesystem::remove_all(dir);
}

} // namespace
