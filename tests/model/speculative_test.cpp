/// Speculative decoding: the closed forms of the accepted length, the verify pass through the
/// step-cost model, the proposer's memory, and the gain shrinking as the batch grows.

#include "model/speculative.hpp"

#include "fixtures.hpp"
#include "model/bottleneck.hpp"
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/serving.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

SpeculativeConfig eagle(int k, double alpha) {
    SpeculativeConfig c;
    c.method = SpeculativeMethod::Eagle;
    c.num_speculative_tokens = k;
    c.acceptance_rate = alpha;
    return c;
}

SpeculativeConfig draft_8b(int k, double alpha) {
    SpeculativeConfig c;
    c.method = SpeculativeMethod::DraftModel;
    c.num_speculative_tokens = k;
    c.acceptance_rate = alpha;
    c.draft_model = "llama-3.1-8b";
    c.draft = llama3_8b();
    return c;
}

// Leviathan et al. eq. 1 by hand: 1 + α + α² + α³ + α⁴ at α = 0.8 is 1 + 0.8 + 0.64 + 0.512 +
// 0.4096 = 3.3616, which is (1 − 0.8⁵) / (1 − 0.8) = 0.67232 / 0.2.
TEST(Speculative, IndependentAcceptanceMatchesTheClosedForm) {
    EXPECT_NEAR(expected_tokens_per_step(0.8, 4), 3.3616, 1e-12);
    EXPECT_NEAR(expected_tokens_per_step(0.5, 1), 1.5, 1e-12);
    EXPECT_DOUBLE_EQ(expected_tokens_per_step(0.0, 5), 1.0); // nothing accepted: one token
    EXPECT_DOUBLE_EQ(expected_tokens_per_step(0.7, 0), 1.0); // no drafts
}

// Per position: 1 + a1 + a1·a2 + a1·a2·a3 = 1 + 0.9 + 0.45 + 0.09 = 2.44.
TEST(Speculative, PerPositionAcceptanceSumsTheCumulativeProducts) {
    const std::vector<double> a{0.9, 0.5, 0.2};
    EXPECT_NEAR(expected_tokens_per_step(a), 2.44, 1e-12);
    // Equal positions reduce to the closed form.
    const std::vector<double> same(4, 0.8);
    EXPECT_NEAR(expected_tokens_per_step(same), expected_tokens_per_step(0.8, 4), 1e-12);
}

TEST(Speculative, DefaultsFillKAndAlphaPerMethod) {
    SpeculativeConfig c;
    c.method = SpeculativeMethod::Mtp;
    EXPECT_EQ(speculative_tokens(c), 1);
    EXPECT_EQ(acceptance_by_position(c), std::vector<double>{0.85});
    c.method = SpeculativeMethod::Eagle;
    EXPECT_EQ(acceptance_by_position(c), std::vector<double>(3, 0.75));
    c.acceptance = {0.9, 0.8};
    EXPECT_EQ(speculative_tokens(c), 2); // the list sets k
}

TEST(Speculative, BadInputNamesTheKeyAndTheFix) {
    const auto message = [](const SpeculativeConfig& c) {
        try {
            validate(c);
        } catch (const InvalidArgument& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    SpeculativeConfig c = eagle(0, 0.7);
    EXPECT_TRUE(contains(message(c), "engine.speculative.num_speculative_tokens: 0 draft tokens"))
        << message(c);
    c = eagle(3, 1.0);
    EXPECT_TRUE(contains(message(c), "acceptance_rate: 1 is outside [0, 1)")) << message(c);
    c = eagle(3, -0.1);
    EXPECT_TRUE(contains(message(c), "is outside [0, 1)")) << message(c);
    c = eagle(3, 0.7);
    c.acceptance_rate.reset();
    c.acceptance = {0.9, 0.8};
    EXPECT_TRUE(contains(message(c), "2 positions for 3 draft tokens")) << message(c);
    c = draft_8b(4, 0.7);
    c.draft_model.clear();
    c.draft.reset();
    EXPECT_TRUE(contains(message(c), "method draft_model needs draft_model")) << message(c);
    c = eagle(3, 0.7);
    c.draft_model = "llama-3.1-8b";
    EXPECT_TRUE(contains(message(c), "has no separate draft model")) << message(c);
}

// The verify pass of k + 1 tokens is a step like any other: bandwidth-bound at batch 1 (it
// costs about one decode step), compute-bound at a large batch (it costs several).
TEST(Speculative, VerifyPassCostsLittleAtBatchOneAndMuchAtLargeBatches) {
    const Deployment d = deploy(llama31_70b(), h100(), 4);
    const StepCostModel m(d, default_profile());
    const SpeculativeModel spec(d, eagle(4, 0.7), default_profile());
    const auto ratio = [&](int batch) {
        BatchStats dec;
        m.add_decodes(dec, batch, 2048);
        BatchStats ver;
        spec.add_verifies(m, ver, batch, 2047);
        EXPECT_DOUBLE_EQ(ver.extra_logit_rows, 4.0 * batch);
        EXPECT_DOUBLE_EQ(ver.prefill_tokens, 5.0 * batch);
        return m.cost(ver).time / m.cost(dec).time;
    };
    EXPECT_LT(ratio(1), 1.5);
    EXPECT_GT(ratio(512), 2.5);
}

// The gain comes out of the step-cost model: large at batch 1, smaller at 256 (where the verify
// pass no longer rides on the weight reads).
TEST(Speculative, SpeedUpShrinksAsTheBatchGrows) {
    Deployment d = deploy(llama31_70b(), h100(), 4);
    d.engine.max_model_len = 8192;
    const StepCostModel m(d, default_profile());
    for (const SpeculativeConfig& c : {draft_8b(4, 0.7), eagle(3, 0.75)}) {
        const SpeculativeModel spec(d, c, default_profile());
        const auto speedup = [&](int batch) {
            return tpot(m, batch, 2048) / tpot(m, batch, 2048, &spec);
        };
        EXPECT_GT(speedup(1), 1.3) << to_string(c.method);
        EXPECT_LT(speedup(256), speedup(1)) << to_string(c.method);
        EXPECT_LT(speedup(256), speedup(16)) << to_string(c.method);
    }
}

// TPOT per output token = (verify + draft) / E, with E the closed form.
TEST(Speculative, TpotIsVerifyPlusDraftOverTheExpectedLength) {
    const Deployment d = deploy(llama31_70b(), h100(), 4);
    const StepCostModel m(d, default_profile());
    const SpeculativeModel spec(d, draft_8b(4, 0.7), default_profile());
    BatchStats ver;
    spec.add_verifies(m, ver, 8, 2047);
    BatchStats dr;
    spec.draft()->add_decodes(dr, 8, 2048);
    const StepCost first = spec.draft()->cost(dr);
    const Seconds draft = first.time * 4.0; // k passes over the decodes
    const double e = (1 - std::pow(0.7, 5)) / (1 - 0.7);
    EXPECT_NEAR(tpot(m, 8, 2048, &spec).si(), ((m.cost(ver).time + draft) / e).si(), 1e-12);
}

// The draft model's weights and KV come out of the target's KV pool: its weights are those of
// the draft sharded like the target, its KV 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes
// ÷ tp 4 = 32768 bytes per token per GPU.
TEST(Speculative, DraftModelMemoryIsChargedToTheTargetsPool) {
    Deployment d = deploy(llama31_70b(), h100(), 4);
    d.engine.max_model_len = 8192;
    const MemoryEstimate off = estimate_memory(d);
    d.engine.speculative = draft_8b(4, 0.7);
    const MemoryEstimate on = estimate_memory(d);
    EXPECT_DOUBLE_EQ(on.draft_kv_per_token.si(), 32768.0);
    const MemoryEstimate alone = estimate_memory(deploy(llama3_8b(), h100(), 4));
    EXPECT_DOUBLE_EQ(on.draft_weights.si(), alone.weights.si());
    // Every token now holds 81920 + 32768 bytes, out of a pool smaller by the draft's weights.
    const double expected_tokens = (off.kv_budget - on.draft_weights).si() / (81920.0 + 32768.0);
    EXPECT_NEAR(static_cast<double>(on.kv_tokens), expected_tokens, 16.0 * 2);
    EXPECT_LT(on.kv_tokens, off.kv_tokens);
}

// An EAGLE head is one decoder layer of the target: 1/80 of Llama-3.1-70B's KV per token.
TEST(Speculative, EagleHeadIsOneDecoderLayer) {
    Deployment d = deploy(llama31_70b(), h100(), 4);
    d.engine.speculative = eagle(3, 0.75);
    const DraftMemory m = draft_memory(d);
    EXPECT_DOUBLE_EQ(m.kv_per_token.si(), 81920.0 / 80);
    EXPECT_GT(m.weights.si(), 0);
    EXPECT_LT(m.weights.si(), 1.0e9); // a layer of a 70B is about 0.86 GB, 0.21 GB per GPU
}

// N-gram lookup has no GPU proposer: no memory and no draft time.
TEST(Speculative, NgramCostsNoMemoryAndNoDraftTime) {
    Deployment d = deploy(llama31_70b(), h100(), 4);
    d.engine.max_model_len = 8192;
    const MemoryEstimate off = estimate_memory(d);
    SpeculativeConfig c;
    c.method = SpeculativeMethod::Ngram;
    d.engine.speculative = c;
    EXPECT_EQ(estimate_memory(d).kv_tokens, off.kv_tokens);
    const SpeculativeModel spec(d, c, default_profile());
    EXPECT_EQ(spec.draft(), nullptr);
    BatchStats s;
    s.decodes = 8;
    s.decode_context = 8 * 2048;
    EXPECT_DOUBLE_EQ(spec.draft_time(s).si(), 0.0);
}

// Off is the plain model: no block, no speculative figures, and a verify with no extra logits
// over zero drafts is an ordinary one-token step.
TEST(Speculative, WithoutTheBlockTheEstimateHasNoSpeculativeFigures) {
    Deployment d = deploy(llama31_70b(), h100(), 4);
    d.engine.max_model_len = 8192;
    Workload w;
    w.input_tokens = 2048;
    w.output_tokens = 512;
    w.concurrency = 8;
    const ServingEstimate off = estimate_serving(d, w, default_profile());
    EXPECT_FALSE(off.speculative.has_value());
    d.engine.speculative = eagle(3, 0.75);
    const ServingEstimate on = estimate_serving(d, w, default_profile());
    ASSERT_TRUE(on.speculative.has_value());
    EXPECT_NEAR(on.speculative->tpot_off.si(), off.tpot.si(), off.tpot.si() * 1e-3);
    EXPECT_NEAR(on.speculative->speedup, on.speculative->tpot_off / on.tpot, 1e-12);
    EXPECT_NEAR(on.speculative->tokens_per_step, expected_tokens_per_step(0.75, 3), 1e-12);
}

} // namespace

namespace {

// The what-ifs offer switching speculation off, re-estimated like any change: its TPOT is the
// estimate without the block.
TEST(Speculative, WhatIfOffIsTheEstimateWithoutTheBlock) {
    Deployment d = deploy(llama31_70b(), h100(), 4);
    d.engine.max_model_len = 8192;
    Workload w;
    w.input_tokens = 2048;
    w.output_tokens = 512;
    w.concurrency = 64;
    const Seconds plain = estimate_serving(d, w, default_profile()).tpot;
    d.engine.speculative = draft_8b(4, 0.7);
    const auto whatifs = what_ifs(d, w, default_profile());
    const auto it = std::find_if(whatifs.begin(), whatifs.end(),
                                 [](const WhatIf& x) { return x.name == "speculative-off"; });
    ASSERT_NE(it, whatifs.end());
    EXPECT_DOUBLE_EQ(it->tpot.si(), plain.si());
    EXPECT_EQ(it->change, "speculative decoding (draft_model) → off");
}

} // namespace

namespace {

// MLA targets verify on the absorbed decode path: k + 1 decode queries per sequence, no prefill
// chunk (which would expand K and V per head over the whole context).
TEST(Speculative, MlaTargetsVerifyAsDecodeQueries) {
    Deployment d = deploy(deepseek_v3(), h200(), 8);
    SpeculativeConfig c;
    c.method = SpeculativeMethod::Mtp;
    d.engine.speculative = c;
    const StepCostModel m(d, default_profile());
    const SpeculativeModel spec(d, c, default_profile());
    BatchStats s;
    spec.add_verifies(m, s, 16, 4000);
    EXPECT_DOUBLE_EQ(s.decodes, 32.0); // (k + 1) × 16 with k = 1
    EXPECT_DOUBLE_EQ(s.prefill_tokens, 0.0);
    EXPECT_DOUBLE_EQ(s.decode_context, 16.0 * (4001 + 4002));
}

} // namespace
