// `gpuplan diagnose --training-log`: the training rows (comm-bound, input-stall,
// training-memory, stragglers, power-capped) and the rack row (rack-budget-exceeded), one
// hand-made fixture each under tests/fixtures/diagnose, asserting the row, its evidence and its
// first fix (docs/diagnose.md, "Training and rack rows").
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace {

using gpuplan::test::run_cli;

std::string fx(const std::string& name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/diagnose/" + name;
}
std::string ex(const std::string& name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name;
}

nlohmann::json diagnose(const std::string& args) {
    const auto r = run_cli("diagnose " + args + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(r.out);
}

bool has(const nlohmann::json& row, const std::string& text) {
    for (const auto& e : row["evidence"])
        if (e.get<std::string>().find(text) != std::string::npos)
            return true;
    return false;
}

std::vector<std::string> ids(const nlohmann::json& j) {
    std::vector<std::string> v;
    for (const auto& r : j["rows"])
        v.push_back(r["id"]);
    return v;
}

TEST(DiagnoseTrainingCli, TensorParallelAcrossNodesIsCommBound) {
    const auto j =
        diagnose(fx("train-70b-tp16.yaml") + " --training-log " + fx("train-70b-tp16.log"));
    EXPECT_TRUE(j["training"].get<bool>());
    ASSERT_EQ(ids(j), std::vector<std::string>{"comm-bound"});
    const auto& row = j["rows"][0];
    // Steps 2..7 of the log (the first is warm-up): their mean by hand.
    const double mean = (125412.7 + 125530.1 + 125388.4 + 125601.9 + 125477.3 + 125512.6) / 6e3;
    EXPECT_NEAR(j["comparisons"][0]["observed"].get<double>(), mean * 1e3, 1e-6);
    EXPECT_TRUE(has(row, "step 125.5 s observed")) << row["evidence"];
    EXPECT_TRUE(has(row, "tensor parallelism 16 spans nodes of 8 GPUs"));
    // Megatron's own TFLOP/s per GPU beside the model's.
    EXPECT_EQ(j["comparisons"][3]["figure"], "TFLOP/s per GPU");
    const auto& fix = row["fixes"][0];
    EXPECT_EQ(fix["layer"], "framework");
    ASSERT_TRUE(fix["estimated"].get<bool>());
    EXPECT_TRUE(fix["fits"].get<bool>());
    EXPECT_EQ(fix["change"].get<std::string>().rfind("layout tp 16, pp 1", 0), 0u);
    // The new layout keeps tensor parallelism within a node of 8 GPUs...
    const std::string change = fix["change"];
    const auto arrow = change.find("→ tp ");
    ASSERT_NE(arrow, std::string::npos);
    EXPECT_LE(std::stoi(change.substr(arrow + std::string("→ tp ").size())), 8);
    // ... and its step is at least the 6·N·D compute of the step at the H100's 989 TFLOP/s
    // dense bf16 peak, and far below the observed one.
    const double flops = 6 * 70.6e9 * 64 * 4096;
    EXPECT_GT(fix["step_s"].get<double>(), flops / (16 * 989.4e12));
    EXPECT_LT(fix["step_s"].get<double>(), mean / 3);
}

TEST(DiagnoseTrainingCli, SlowDataLoaderIsAnInputStall) {
    const auto j =
        diagnose(ex("train-13b-slow-input.yaml") + " --training-log " +
                 fx("train-13b-slow-input.csv") + " --smi " + fx("train-13b-slow-input-smi.csv"));
    ASSERT_EQ(ids(j), std::vector<std::string>{"input-stall"});
    const auto& row = j["rows"][0];
    // Steps 2..9: (12.88 + 12.93 + 12.84 + 12.90 + 12.87 + 12.95 + 12.86 + 12.89) / 8 = 12.89 s.
    EXPECT_TRUE(has(row, "step 12.9 s observed")) << row["evidence"];
    // nvidia-smi: utilization 64, 66, 63, 65, 67, 64 % on every GPU: 64.8 %.
    EXPECT_TRUE(has(row, "GPU utilization 65 %"));
    EXPECT_TRUE(has(row, "the data loaders deliver 5100 tokens/s"));
    const auto& fix = row["fixes"][0];
    EXPECT_EQ(fix["layer"], "framework");
    ASSERT_TRUE(fix["estimated"].get<bool>());
    // Without the loader limit the four GPUs consume about 7,850 tokens/s (the example's own
    // description; 7,600 before FSDP prefetch and the two-gather count, issue 19): 32 × 2048
    // tokens per step in about 8.35 s.
    EXPECT_NEAR(fix["throughput_tokens_per_s"].get<double>(), 7850, 0.02 * 7850);
    EXPECT_NEAR(fix["step_s"].get<double>(), 32 * 2048 / 7850.0, 0.02 * 32 * 2048 / 7850.0);
}

TEST(DiagnoseTrainingCli, OutOfMemoryBeforeTheFirstStepIsTheMemoryRow) {
    const auto j =
        diagnose(fx("train-13b-oom.yaml") + " --training-log " + fx("train-13b-oom.log"));
    ASSERT_EQ(ids(j), std::vector<std::string>{"training-memory"});
    EXPECT_TRUE(j["comparisons"].empty()); // no step was timed
    const auto& row = j["rows"][0];
    EXPECT_EQ(row["evidence"][0], "training log line 7: out of memory");
    const auto& fix = row["fixes"][0];
    EXPECT_EQ(fix["change"], "activation recompute selective → full");
    ASSERT_TRUE(fix["estimated"].get<bool>());
    EXPECT_TRUE(fix["fits"].get<bool>());
}

TEST(DiagnoseTrainingCli, UnevenStepTimesAreStragglers) {
    const auto j =
        diagnose(fx("train-13b-4xa100.yaml") + " --training-log " + fx("train-13b-stragglers.csv"));
    ASSERT_EQ(ids(j), std::vector<std::string>{"stragglers"});
    const auto& row = j["rows"][0];
    const std::vector<double> s{8.41, 8.39, 8.44, 14.02, 8.40, 8.38, 8.43, 13.87, 8.42, 8.39, 8.41};
    const double mean = std::accumulate(s.begin(), s.end(), 0.0) / s.size();
    double var = 0;
    for (double x : s)
        var += (x - mean) * (x - mean);
    const double sd = std::sqrt(var / s.size());
    char buf[128];
    std::snprintf(buf, sizeof buf, "mean %.3g s, standard deviation %.3g s (%.0f %% of the mean",
                  mean, sd, 100 * sd / mean);
    EXPECT_TRUE(has(row, buf)) << buf << row["evidence"];
    EXPECT_TRUE(has(row, "slowest step 14.0 s at line 6")); // step 5, after the header line
    const auto& fix = row["fixes"][0];
    EXPECT_EQ(fix["layer"], "hardware");
    ASSERT_TRUE(fix["estimated"].get<bool>());
    EXPECT_LT(fix["step_s"].get<double>(), mean);
}

TEST(DiagnoseTrainingCli, ClocksHeldByThePowerLimitArePowerCapped) {
    const auto j =
        diagnose(fx("train-13b-4xa100.yaml") + " --training-log " + fx("train-13b-powercap.csv") +
                 " --smi " + fx("train-13b-powercap-smi.csv"));
    ASSERT_EQ(ids(j), std::vector<std::string>{"power-capped"});
    const auto& row = j["rows"][0];
    // Half the samples at 855 MHz, half at 840: 847.5 MHz of 1410 (60 %).
    EXPECT_TRUE(has(row, "SM clock 848 of 1410 MHz (60 %")) << row["evidence"];
    EXPECT_TRUE(has(row, "power-cap throttling in 100 % of samples"));
    const auto& fix = row["fixes"][0];
    EXPECT_EQ(fix["layer"], "hardware");
    ASSERT_TRUE(fix["estimated"].get<bool>());
    // Lifting the limit gives the model's full-clock step.
    EXPECT_DOUBLE_EQ(fix["step_s"].get<double>(), j["predicted"]["step_s"].get<double>());
    EXPECT_LT(fix["step_s"].get<double>(), 13.5);
}

TEST(DiagnoseTrainingCli, TwoNodesAbovetheRackBudgetAreTheRackRow) {
    const auto j = diagnose(fx("train-70b-rack.yaml") + " --training-log " +
                            fx("train-70b-steady.csv") + " --smi " + fx("train-70b-rack-smi.csv"));
    ASSERT_EQ(ids(j), std::vector<std::string>{"rack-budget-exceeded"});
    const auto& row = j["rows"][0];
    // 684 + 1.5 g + t W over 8 GPUs and 4 samples: 690.75 W.
    EXPECT_TRUE(has(row, "observed 691 W per GPU × 8 GPUs per node + the host")) << row["evidence"];
    EXPECT_TRUE(has(row, "2 nodes sharing the rack"));
    EXPECT_TRUE(has(row, "against a budget of 15.00 kW"));
    const auto& fix = row["fixes"][0];
    EXPECT_EQ(fix["layer"], "framework");
    ASSERT_TRUE(fix["estimated"].get<bool>());
    EXPECT_EQ(fix["change"].get<std::string>().rfind("cap each GPU at ", 0), 0u);
    // Under the cap the two nodes fit the budget exactly, and the step is slower than uncapped.
    EXPECT_NE(fix["effect"].get<std::string>().find("→ 15.00 kW (budget 15.00 kW)"),
              std::string::npos);
    const std::string cap = fix["change"];
    EXPECT_LT(std::stod(cap.substr(16)), 690.75);
    EXPECT_GT(fix["step_s"].get<double>(), 20.8);
    EXPECT_EQ(row["fixes"][1]["layer"], "hardware");
}

TEST(DiagnoseTrainingCli, TwoCausesTogetherGiveBothRows) {
    // The 3D layout of the example spends 31 % of its step in communication, and two steps of
    // the log are 34 s: stragglers and comm-bound together.
    const auto j = diagnose(ex("train-llama70b-2x8xh100.yaml") + " --training-log " +
                            fx("train-70b-stragglers.csv"));
    const auto v = ids(j);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_NE(std::find(v.begin(), v.end(), "stragglers"), v.end());
    EXPECT_NE(std::find(v.begin(), v.end(), "comm-bound"), v.end());
}

TEST(DiagnoseTrainingCli, InputErrorsExitTwo) {
    // A training log with a serving scenario.
    auto r = run_cli("diagnose " + fx("seed-7b-rtx4090.yaml") + " --training-log " +
                     fx("train-13b-stragglers.csv"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("has no training: block"), std::string::npos) << r.out;
    // --emit has nothing to print for a training job.
    r = run_cli("diagnose " + fx("train-13b-4xa100.yaml") + " --training-log " +
                fx("train-13b-stragglers.csv") + " --emit vllm");
    EXPECT_EQ(r.exit_code, 2);
    // A malformed log names the file, line and field.
    r = run_cli("diagnose " + fx("train-13b-4xa100.yaml") + " --training-log " +
                fx("malformed-train.log"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("malformed-train.log:3:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("elapsed time per iteration (ms)"), std::string::npos) << r.out;
}

} // namespace
