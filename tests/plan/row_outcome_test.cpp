// A sizing row's simulated outcome travels between processes (plan --mpi) as bytes and comes
// back as the same row, doubles bit for bit, strings with any bytes.
#include "model/error.hpp"
#include "plan/row_outcome.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace gpuplan;

TEST(RowOutcome, EncodeThenDecodeGivesTheSameFields) {
    plan::SizingRow row;
    row.stage = plan::SizingStage::Simulated;
    row.reason = "meets every SLO; tightest chat tpot p99 50.7 ms of 60.0 ms\nsecond line";
    row.miss_ratio = 0.1 + 0.2; // not exactly 0.3: must come back bit for bit
    row.margins = {{"chat", "tpot", 0.0507123456789, 0.06}, {"rag 2", "ttft", 1.5, 2.0}};
    row.failed = 3;
    row.meets_slo = true;
    row.binding_slo = "chat tpot";
    row.sim_throughput_tok_s = 1234.5678901234567;
    row.sim_mean_running = std::numeric_limits<double>::denorm_min();
    row.sim_avg_power_w = 1040.25;
    row.sim_peak_power_w = 1400;
    row.sim_energy_j_per_token = 1e-300;

    plan::SizingRow back; // other fields of the row are not the outcome's and stay as they are
    back.reason = "old";
    plan::decode_outcome(plan::encode_outcome(row), back);
    EXPECT_EQ(back.stage, row.stage);
    EXPECT_EQ(back.reason, row.reason);
    EXPECT_EQ(back.miss_ratio, row.miss_ratio);
    EXPECT_EQ(back.margins, row.margins);
    EXPECT_EQ(back.failed, 3);
    EXPECT_TRUE(back.meets_slo);
    EXPECT_EQ(back.binding_slo, "chat tpot");
    EXPECT_EQ(back.sim_throughput_tok_s, row.sim_throughput_tok_s);
    EXPECT_EQ(back.sim_mean_running, row.sim_mean_running);
    EXPECT_EQ(back.sim_avg_power_w, 1040.25);
    EXPECT_EQ(back.sim_peak_power_w, 1400);
    EXPECT_EQ(back.sim_energy_j_per_token, 1e-300);
}

TEST(RowOutcome, BytesItDidNotWriteAreRefused) {
    plan::SizingRow row;
    EXPECT_THROW(plan::decode_outcome("not an outcome", row), gpuplan::InternalError);
    EXPECT_THROW(plan::decode_outcome("", row), gpuplan::InternalError);
}
