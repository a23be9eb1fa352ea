// Replays a real trace from ../shared/data (Vidur's processed Splitwise conversation trace);
// skipped when the data folder is absent.
#include "hwdb/trace_loader.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gpuplan::sim {
namespace {

TEST(TraceReplay, VidurSplitwiseConversationTraceKeepsCountsAndTokens) {
    const std::filesystem::path file = std::filesystem::path(GPUPLAN_SHARED_DATA_DIR) /
                                       "vidur/data/processed_traces/splitwise_conv.csv";
    if (!std::filesystem::exists(file)) {
        GTEST_SKIP() << file << " is absent";
    }
    auto trace = hwdb::load_trace(file, hwdb::TraceFormat::Vidur);
    ASSERT_GT(trace.size(), 1000u);
    trace.resize(2000);
    model::Scenario s = test::llama8b_scenario();
    s.workload.requests.reset();
    s.workload.arrival.kind = model::ArrivalKind::Trace;
    s.workload.trace = trace;
    std::int64_t in = 0, out = 0, fit = 0;
    for (const auto& r : trace) {
        // The engine rejects what is longer than max_model_len (8192).
        if (r.input_tokens + std::max(1, r.output_tokens) <= 8192) {
            in += std::max(1, r.input_tokens);
            out += std::max(1, r.output_tokens);
            ++fit;
        }
    }
    const SimResult res = simulate(s);
    ASSERT_TRUE(res.ok);
    EXPECT_EQ(res.overall.arrived, 2000);
    EXPECT_EQ(res.overall.completed, fit);
    EXPECT_EQ(res.overall.rejected, 2000 - fit);
    EXPECT_EQ(res.overall.input_tokens, in);
    EXPECT_EQ(res.overall.output_tokens, out);
    // The replay spans the trace's own time (plus the drain of the last requests).
    EXPECT_GE(res.duration.si(), trace.back().arrival.si() - trace.front().arrival.si());
}

} // namespace
} // namespace gpuplan::sim
