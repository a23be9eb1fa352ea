#include "model/engine_defaults.hpp"
#include "model/scenario.hpp"

#include "fixtures.hpp"

#include <gtest/gtest.h>

namespace gpuplan::model {
namespace {

using test::deploy;

Deployment trt(const ModelSpec& m, int tp) {
    Deployment d = deploy(m, test::h100(), tp);
    d.engine.kind = EngineKind::TensorRtLlm;
    return d;
}

// Llama-3.1-70B (70,553,706,496 parameters: 80 × (2 × 8192² + 2 × 8192 × 1024 + 3 × 8192 ×
// 28672 + 2 × 8192) + 2 × 128256 × 8192 + 8192) on 4 × H100 (80 GiB × 0.99 = 79.2 GiB each), bf16,
// ISL 1024, OSL 4096, worked by hand from tuning.py:
//   GiB per token = 2 × 80 × max(4, 8) × 128 × 2 ÷ 2^30 = 327,680 B = 3.0518e-4 GiB
//   engine = 70,553,706,496 × 2 ÷ 2^30 = 131.4165 GiB
//   cache = 0.95 × (4 × 79.2 − 131.4165) = 176.1143 GiB
//   requests = 176.1143 ÷ (3.0518e-4 × 5120) = 176.1143 ÷ 1.5625 = 112.713
//   batch: 112.7 < 256 → max(64, 32 × ⌈3.52⌉) = 128
//   tokens: 112.7 × (1 + 1024 ÷ 4096) = 140.9 < 4096 → max(2048, 256 × ⌈0.55⌉) = 2048
TEST(TrtllmBench, Llama70bOnFourH100LongOutput) {
    const auto s = trtllm_bench_settings(trt(test::llama31_70b(), 4), 1024, 4096);
    ASSERT_TRUE(s);
    EXPECT_NEAR(s->kv_cache_max_requests, 112.713, 0.001);
    EXPECT_EQ(s->max_batch_size, 128);
    EXPECT_EQ(s->max_num_tokens, 2048);
}

// Llama-3-8B (8,030,261,248 parameters) on one H100, ISL 2000, OSL 200:
//   GiB per token = 2 × 32 × 8 × 128 × 2 ÷ 2^30 = 1.2207e-4; engine 14.9575 GiB
//   cache = 0.95 × (79.2 − 14.9575) = 61.0303 GiB; requests = 61.0303 ÷ (1.2207e-4 × 2200) = 227.25
//   batch: max(64, 32 × ⌈7.10⌉) = 256; tokens: 227.25 × (1 + 10) = 2499.8 → 256 × ⌈9.76⌉ = 2560.
// ISL = OSL = 500: requests 499.96 → batch 128 × ⌈3.91⌉ = 512; tokens 999.9 → the 2048 floor.
TEST(TrtllmBench, Llama8bRoundingBranches) {
    const auto a = trtllm_bench_settings(trt(test::llama3_8b(), 1), 2000, 200);
    ASSERT_TRUE(a);
    EXPECT_NEAR(a->kv_cache_max_requests, 227.255, 0.001);
    EXPECT_EQ(a->max_batch_size, 256);
    EXPECT_EQ(a->max_num_tokens, 2560);
    const auto b = trtllm_bench_settings(trt(test::llama3_8b(), 1), 500, 500);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->max_batch_size, 512);
    EXPECT_EQ(b->max_num_tokens, 2048);
}

// FP8 weights and KV halve both sizes: requests = 0.95 × (79.2 − 7.4788) ÷ (6.1035e-5 × 2200)
// = 68.1350 ÷ 0.13428 = 507.4 → batch 128 × ⌈3.96⌉ = 512; tokens 507.4 × 11 = 5581 → 512 × ⌈10.9⌉
// = 5632.
TEST(TrtllmBench, Fp8HalvesWeightsAndKv) {
    Deployment d = trt(test::llama3_8b(), 1);
    d.prec.weights = test::precision("fp8");
    d.prec.kv_cache = test::precision("fp8");
    const auto s = trtllm_bench_settings(d, 2000, 200);
    ASSERT_TRUE(s);
    EXPECT_NEAR(s->kv_cache_max_requests, 507.4, 0.1);
    EXPECT_EQ(s->max_batch_size, 512);
    EXPECT_EQ(s->max_num_tokens, 5632);
}

TEST(TrtllmBench, RefusesWhenTheWeightsDoNotFit) {
    EXPECT_FALSE(trtllm_bench_settings(trt(test::llama31_70b(), 1), 1024, 4096));
}

TEST(LoadEngineDefaults, FillsOnlyUnsetTensorRtLlmKeys) {
    Workload w;
    w.input_tokens = 1024;
    w.output_tokens = 4096;
    const Deployment d = trt(test::llama31_70b(), 4);
    const Deployment filled = with_load_engine_defaults(d, w);
    EXPECT_EQ(filled.engine.max_num_seqs, 128);
    EXPECT_EQ(filled.engine.max_num_batched_tokens, 2048);
    EXPECT_EQ(filled.engine.enable_chunked_prefill, true);

    Deployment set = d;
    set.engine.max_num_seqs = 32;
    set.engine.enable_chunked_prefill = false;
    const Deployment kept = with_load_engine_defaults(set, w);
    EXPECT_EQ(kept.engine.max_num_seqs, 32);
    EXPECT_EQ(kept.engine.max_num_batched_tokens, 2048);
    EXPECT_EQ(kept.engine.enable_chunked_prefill, false);

    Deployment vllm = d;
    vllm.engine.kind = EngineKind::Vllm;
    EXPECT_EQ(with_load_engine_defaults(vllm, w), vllm);
    Deployment sglang = d;
    sglang.engine.kind = EngineKind::Sglang;
    EXPECT_EQ(with_load_engine_defaults(sglang, w), sglang);
}

} // namespace
} // namespace gpuplan::model
