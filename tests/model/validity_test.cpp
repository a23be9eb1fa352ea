// Issue 18 item 4: one set of validity rules (model/validity.hpp), each refused with a message
// that says what to change, and applied by model::validate so every front end agrees.
#include "model/bottleneck.hpp"
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/scenario.hpp"
#include "model/serving.hpp"
#include "model/validity.hpp"
#include "tests/model/fixtures.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpuplan::model {
namespace {

using test::a100_80gb;
using test::deploy;
using test::h100;
using test::llama31_70b;
using test::llama3_8b;

std::string message_of(const Deployment& d) {
    try {
        validate(d);
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return {};
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(Validity, MaxModelLenAboveTheModelsContextIsRefused) {
    Deployment d = deploy(llama3_8b(), h100()); // max_context 8192
    d.engine.max_model_len = 8193;
    const std::string m = message_of(d);
    EXPECT_TRUE(has(m, "max_model_len 8193 exceeds the model's maximum context of 8192 tokens"))
        << m;
    EXPECT_TRUE(has(m, "lower max_model_len to at most 8192")) << m;
    EXPECT_TRUE(has(m, "engine.allow_long_context: true")) << m;
    d.engine.max_model_len = 8192;
    EXPECT_EQ(message_of(d), "");
}

TEST(Validity, AllowLongContextAdmitsALongerMaxModelLen) {
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.max_model_len = 32768;
    d.engine.allow_long_context = true;
    EXPECT_EQ(message_of(d), "");
}

TEST(Validity, LlamaCppOnlyWarnsPastTheTrainedContextSoItIsNotRefused) {
    Deployment d = deploy(test::llama2_7b(), h100()); // max_context 4096
    d.engine.kind = EngineKind::LlamaCpp;
    d.engine.max_model_len = 8192;
    EXPECT_EQ(message_of(d), "");
    d.engine.kind = EngineKind::Sglang;
    EXPECT_TRUE(has(message_of(d), "exceeds the model's maximum context of 4096")) << message_of(d);
}

TEST(Validity, RequestLongerThanMaxModelLenIsOneRule) {
    EXPECT_NO_THROW(check_request_length(1000, 24, 1024));
    try {
        check_request_length(1000, 25, 1024);
        FAIL() << "1025 tokens passed a max_model_len of 1024";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "workload: input_tokens + output_tokens = 1025 exceeds max_model_len 1024; "
                  "raise max_model_len or shorten the requests");
    }
    // The serving estimate applies the same rule.
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.max_model_len = 1024;
    Workload w;
    w.input_tokens = 1000;
    w.output_tokens = 25;
    w.concurrency = 1;
    try {
        (void)estimate_serving(d, w, default_profile());
        FAIL() << "estimate_serving accepted 1025 tokens";
    } catch (const InvalidArgument& e) {
        EXPECT_TRUE(
            has(e.what(), "input_tokens + output_tokens = 1025 exceeds max_model_len 1024"));
    }
}

TEST(Validity, LongestContextNeverExceedsMaxModelLen) {
    // 8B bf16 on an H100 holds one sequence far longer than 4096 tokens; max_model_len caps it.
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.max_model_len = 4096;
    const auto longest = max_context_at_concurrency(d, 1);
    ASSERT_TRUE(longest.has_value());
    EXPECT_EQ(*longest, 4096);
}

TEST(Validity, LlamaCppRunsGgufOnly) {
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.kind = EngineKind::LlamaCpp;
    d.engine.max_model_len = 4096;
    d.prec.weights = parse_precision("awq-int4");
    const std::string m = message_of(d);
    EXPECT_TRUE(has(m, "llama.cpp loads GGUF files only and has no awq-int4 weights")) << m;
    EXPECT_TRUE(has(m, "use a GGUF quantization")) << m;
    d.prec.weights = parse_precision("q4_k_m");
    EXPECT_EQ(message_of(d), "");
    d.prec.weights = parse_precision("bf16"); // an F16/BF16 GGUF file
    EXPECT_EQ(message_of(d), "");
}

TEST(Validity, GgufInVllmIsExperimentalNotAnError) {
    Deployment d = deploy(llama3_8b(), h100());
    d.prec.weights = parse_precision("q4_k_m");
    EXPECT_EQ(message_of(d), "");
    const FormatSupport s = format_support(EngineKind::Vllm, d.prec, d.gpu);
    EXPECT_TRUE(s.runs);
    EXPECT_TRUE(has(s.note, "experimental")) << s.note;
    EXPECT_FALSE(format_support(EngineKind::TensorRtLlm, d.prec, d.gpu).runs);
}

TEST(Validity, Fp8OnA100RunsWeightOnlyInVllmButNotInTensorRtLlm) {
    Deployment d = deploy(llama3_8b(), a100_80gb());
    d.prec.weights = parse_precision("fp8");
    EXPECT_EQ(message_of(d), "");
    EXPECT_TRUE(has(format_support(EngineKind::Vllm, d.prec, d.gpu).note, "weight-only"));
    d.engine.kind = EngineKind::TensorRtLlm;
    const std::string m = message_of(d);
    EXPECT_TRUE(has(m, "tensorrt-llm's fp8 kernels need the GPU's own fp8 tensor cores")) << m;
}

TEST(Validity, Bf16OnAGpuWithoutBf16PeaksSuggestsFp16) {
    AcceleratorSpec v100 = h100();
    v100.name = "v100-like";
    v100.dense.bf16.reset();
    v100.dense.fp8.reset();
    Deployment d = deploy(llama3_8b(), v100);
    const std::string m = message_of(d);
    EXPECT_TRUE(has(m, "activations in bf16 on v100-like: the GPU has no bf16 peak; use fp16"))
        << m;
    d.prec.activations = parse_precision("fp16");
    d.prec.weights = parse_precision("fp16");
    d.prec.kv_cache = parse_precision("fp16");
    EXPECT_EQ(message_of(d), "");
}

TEST(Validity, WhatIfsNeverProposeWhatTheEngineCannotRun) {
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.kind = EngineKind::LlamaCpp;
    d.engine.max_model_len = 4096;
    Workload w;
    w.input_tokens = 512;
    w.output_tokens = 128;
    w.concurrency = 1;
    const std::vector<GpuCandidate> none;
    for (const WhatIf& x : what_ifs(d, w, default_profile(), none)) {
        EXPECT_FALSE(has(x.change, "awq")) << x.change;
        EXPECT_FALSE(has(x.change, "→ fp8") && has(x.change, "weights")) << x.change;
        EXPECT_FALSE(has(x.change, "→ int8")) << x.change;
    }
}

TEST(Validity, GpuCapOutsideTheSettableRangeIsRefused) {
    AcceleratorSpec g = h100(); // board 700 W
    EXPECT_NO_THROW(check_gpu_cap(g, Watts(350), "--gpu-cap"));
    try {
        check_gpu_cap(g, Watts(800), "--gpu-cap");
        FAIL();
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "--gpu-cap 800 W on h100-sxm is above the highest power limit the driver "
                  "accepts (700 W, the board power); set at most 700 W or leave the cap out");
    }
    g.power_limit_min = Watts(200);
    g.power_limit_max = Watts(700);
    try {
        check_gpu_cap(g, Watts(150), "power.gpu_cap");
        FAIL();
    } catch (const InvalidArgument& e) {
        EXPECT_TRUE(has(e.what(), "power.gpu_cap 150 W on h100-sxm is below the lowest power "
                                  "limit the driver accepts (200 W"))
            << e.what();
    }
}

TEST(Validity, WeightsThatDoNotFitGetTheFewestGpusNotTheMemoryFraction) {
    // 70B in bf16 is about 141 GB of weights: more than one 80 GiB H100.
    const Deployment d = deploy(llama31_70b(), h100());
    const MemoryEstimate m = estimate_memory(d);
    ASSERT_FALSE(m.fits);
    for (const std::string& r : m.reasons) {
        EXPECT_FALSE(has(r, "gpu_memory_utilization")) << r;
    }
    const auto advice = capacity_advice(d, m);
    ASSERT_TRUE(advice.has_value());
    const auto fewest = fewest_gpus(d, 1);
    ASSERT_TRUE(fewest.has_value());
    // The advice names the layout fewest_gpus finds (as `gpuplan fit` prints it).
    EXPECT_TRUE(has(*advice, "the fewest that hold them and one sequence of max_model_len are " +
                                 std::to_string(fewest->gpus) + " x h100-sxm"))
        << *advice;
    EXPECT_GE(fewest->gpus, 2);
}

TEST(Validity, FitsMeansTheRequestedLoadFitsNotOneMaxLengthSequence) {
    // 8B bf16 on one H100, max_model_len 8192: the engine starts. Requests of 4000 + 1000 tokens
    // (average context 4500 → 4512 tokens in 16-token blocks) at 2000 at once do not run.
    Deployment d = deploy(llama3_8b(), h100());
    const MemoryEstimate m = estimate_memory(d);
    ASSERT_TRUE(m.fits);
    Workload w;
    w.input_tokens = 4000;
    w.output_tokens = 1000;
    const LoadFit big = load_fit(d, m, w, 2000);
    EXPECT_FALSE(big.fits);
    // What the KV cache holds at 4500 tokens of average context, by hand: (kv_tokens − one
    // null block) ÷ 4512-token requests.
    const long long by_hand = (m.kv_tokens - 16) / 4512;
    EXPECT_EQ(big.holds, std::min<long long>(by_hand, m.engine.max_num_seqs));
    EXPECT_TRUE(has(big.reason, "2000 sequences of 4000 + 1000 tokens do not run at once"))
        << big.reason;
    EXPECT_TRUE(load_fit(d, m, w, static_cast<int>(big.holds)).fits);
}

TEST(Validity, ScenarioRulesIncludeThePowerCap) {
    Scenario s;
    s.deployment = deploy(llama3_8b(), h100());
    EXPECT_NO_THROW(validate_scenario(s));
    s.power.gpu_cap = Watts(701); // board power 700 W
    try {
        validate_scenario(s);
        FAIL() << "a 701 W cap passed on a 700 W board";
    } catch (const InvalidArgument& e) {
        EXPECT_TRUE(has(e.what(), "power.gpu_cap 701 W on h100-sxm is above")) << e.what();
    }
}

} // namespace
} // namespace gpuplan::model
