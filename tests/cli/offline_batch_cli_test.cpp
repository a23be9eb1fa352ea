// Offline batches, rejections by reason, --strict and the served rate through the CLI, with the
// exact commands of the workload issue (docs/operating-point.md).
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

using gpuplan::test::run_cli;

const std::string kFixture =
    std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/workload/offline-batch.yaml";

nlohmann::json json_of(const std::string& args) {
    // run_cli joins standard error to the output: the JSON document is the outermost braces.
    const auto r = run_cli(args + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const auto first = r.out.find('{');
    const auto last = r.out.rfind('}');
    return nlohmann::json::parse(r.out.substr(first, last - first + 1));
}

TEST(OfflineBatchCli, AllFourRowsAtZeroAreServedWithTheirOwnLengths) {
    const auto j = json_of("simulate " + kFixture);
    EXPECT_EQ(j["operating_point"]["kind"], "offline_batch");
    EXPECT_EQ(j["operating_point"]["batch_requests"], 4);
    EXPECT_EQ(j["arrived"], 4);
    EXPECT_EQ(j["completed"], 4);
    EXPECT_EQ(j["rejected"], 0);
    // 4 × 128 output tokens over the run: the served rate of a batch is the run's.
    EXPECT_DOUBLE_EQ(j["served_tok_s"].get<double>(), 512.0 / j["duration_s"].get<double>());
    const auto text = run_cli("simulate " + kFixture);
    EXPECT_NE(text.out.find("load         offline batch of 4 requests"), std::string::npos)
        << text.out;
    // estimate answers the same load with the trace's lengths.
    const auto e = json_of("estimate " + kFixture);
    EXPECT_EQ(e["operating_point"]["kind"], "offline_batch");
    EXPECT_EQ(e["operating_point"]["concurrency"], 4);
}

TEST(OfflineBatchCli, RejectionsAreCountedByReasonAndStrictFails) {
    const std::string set = " --set engine.max_model_len=200";
    const auto j = json_of("simulate " + kFixture + set);
    EXPECT_EQ(j["rejected"], 4);
    EXPECT_EQ(j["rejected_by_reason"]["too_long"], 4);
    const auto warn = run_cli("simulate " + kFixture + set);
    EXPECT_EQ(warn.exit_code, 0);
    EXPECT_NE(warn.out.find("warning: only 0 of 4 arrived requests completed"), std::string::npos)
        << warn.out;
    EXPECT_NE(warn.out.find("4 longer than max_model_len"), std::string::npos) << warn.out;
    EXPECT_EQ(run_cli("simulate " + kFixture + set + " --strict").exit_code, 1);
    EXPECT_EQ(run_cli("simulate " + kFixture + " --strict").exit_code, 0);
}

TEST(OfflineBatchCli, BatchRequestsFlagAndItsConflicts) {
    const auto j = json_of("simulate --model llama-3.1-8b --gpu h100-sxm --input-len 256 "
                           "--output-len 32 --batch-requests 40");
    EXPECT_EQ(j["operating_point"]["kind"], "offline_batch");
    EXPECT_EQ(j["arrived"], 40);
    EXPECT_EQ(j["completed"], 40);
    const auto both = run_cli("estimate --model llama-3.1-8b --gpu h100-sxm --batch-requests 40 "
                              "--rate 3");
    EXPECT_EQ(both.exit_code, 2) << both.out;
    EXPECT_NE(both.out.find("keep one"), std::string::npos) << both.out;
    const auto trace = run_cli("estimate " + kFixture + " --batch-requests 10");
    EXPECT_EQ(trace.exit_code, 2) << trace.out;
    EXPECT_NE(trace.out.find("--batch-requests"), std::string::npos) << trace.out;
}

// The heterogeneous example offers 10 requests/s for 60 s and meets every SLO; its first
// throughput line is the rate served over the arrival window (about the offered 10), beside
// the run-long figure that divides by the drain as well (4.70 = 588 requests / 125 s).
TEST(ServedRateCli, TheHeterogeneousExampleServesAboutWhatItIsOffered) {
    const std::string file =
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/heterogeneous-h100-l4.yaml";
    const auto j = json_of("simulate " + file);
    const double offered = j["arrived"].get<double>() / j["arrival_window_s"].get<double>();
    EXPECT_NEAR(offered, 10.0, 0.5);
    EXPECT_GT(j["served_rps"].get<double>(), 0.85 * offered);
    EXPECT_LE(j["served_rps"].get<double>(), offered);
    EXPECT_NEAR(j["throughput_rps"].get<double>(),
                j["completed"].get<double>() / j["duration_s"].get<double>(), 1e-9);
    EXPECT_GT(j["drain_share"].get<double>(), 0.10);
    const auto text = run_cli("simulate " + file);
    const auto served = text.out.find("served ");
    const auto run_long = text.out.find("throughput ");
    ASSERT_NE(served, std::string::npos);
    EXPECT_LT(served, run_long); // the served rate is printed first
    EXPECT_NE(text.out.find("the drain after the last arrival is"), std::string::npos);
}

} // namespace
