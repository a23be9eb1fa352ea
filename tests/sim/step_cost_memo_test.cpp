// The replica's memo of recent step shapes (sim/detail/step_cost_memo.hpp) gives
// StepCostModel::cost to the bit, through hits, misses and two shapes sharing one entry.

#include "sim/detail/step_cost_memo.hpp"

#include "tests/model/fixtures.hpp"

#include <gtest/gtest.h>

namespace gpuplan::sim::detail {
namespace {

using namespace gpuplan::model;
using model::test::deploy;
using model::test::h100;
using model::test::llama3_8b;

// A decode batch of `n` sequences whose contexts start at `context`, with one prefill chunk of
// `chunk` tokens when `chunk` > 0.
BatchStats step(const StepCostModel& m, int n, int context, int chunk) {
    BatchStats s;
    for (int i = 0; i < n; ++i) {
        m.add(s, DecodeSeq{context + 3 * i});
    }
    if (chunk > 0) {
        m.add(s, PrefillChunk{chunk, 16});
    }
    return s;
}

TEST(StepCostMemo, GivesTheModelsCostToTheBit) {
    const StepCostModel m(deploy(llama3_8b(), h100()), default_profile());
    StepCostMemo memo(m);
    StepCost got;
    // Growing contexts at a steady batch (hits), a batch of 5 + 64 decodes (the entry of 5),
    // prefill chunks, and the empty batch.
    for (int context = 100; context < 400; context += 25) {
        for (const int n : {5, 6, 5, 69, 5, 0, 1}) {
            for (const int chunk : {0, 0, 256}) {
                const BatchStats s = step(m, n, context, chunk);
                memo.cost(s, got);
                EXPECT_EQ(got, m.cost(s)) << n << " decodes at " << context << ", chunk " << chunk;
            }
        }
    }
}

} // namespace
} // namespace gpuplan::sim::detail
