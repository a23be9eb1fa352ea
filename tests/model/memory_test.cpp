/// Memory model: weights, KV cache per GPU, engine defaults and the vLLM start-up arithmetic,
/// against numbers worked out by hand in the comments.

#include "model/memory.hpp"

#include "fixtures.hpp"
#include "model/detail/shapes.hpp"
#include "model/error.hpp"
#include "model/kv_cache.hpp"
#include "model/model_spec.hpp"
#include "model/serving.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

TEST(MemoryModel, Llama2_7bWeightsAtFp16Are13_5GB) {
    Precisions p;
    p.weights = precision("fp16");
    const Bytes w = model_weight_bytes(llama2_7b(), p);
    // 6,738,415,616 parameters × 2 B (docs/domain.md §3: 13.5 GB, 12.55 GiB).
    EXPECT_DOUBLE_EQ(w.si(), 6'738'415'616.0 * 2);
    EXPECT_NEAR(w.si() / 1e9, 13.48, 0.01);
    EXPECT_NEAR(w.si() / kGiB, 12.55, 0.01);
    EXPECT_DOUBLE_EQ(w.si(), count_params(llama2_7b()).total * 2);
}

TEST(MemoryModel, WeightBytesMatchTheParameterCountForEveryArchitecture) {
    for (const ModelSpec& m : {llama3_8b(), llama31_70b(), qwen25_7b(), mixtral_8x7b(),
                               deepseek_v3(), windowed_model()}) {
        EXPECT_DOUBLE_EQ(model_weight_bytes(m, Precisions{}).si(), count_params(m).total * 2)
            << m.name;
    }
}

TEST(MemoryModel, QuantizedWeightsKeepEmbeddingAndLmHeadAt16Bit) {
    // Qwen2.5-7B GPTQ-Int4, group 128: 4 + (16-bit scale + 4-bit zero) / 128 = 4.15625 bits.
    Precisions p;
    p.weights = precision("gptq-int4");
    ASSERT_DOUBLE_EQ(p.weights.bits_per_element, 4.0 + 20.0 / 128);
    // Linear weights per layer: Q, O 3584²; K, V 3584 × 512; MLP 3 × 3584 × 18944.
    const double linear = 28.0 * (2.0 * 3584 * 3584 + 2.0 * 3584 * 512 + 3.0 * 3584 * 18944);
    const double small = 28.0 * ((3584 + 2 * 512) + 2 * 3584) + 3584; // biases, norms
    const double embed = 2.0 * 152064 * 3584;                         // embedding + LM head
    const double expected = linear * 4.15625 / 8 + small * 2 + embed * 2;
    EXPECT_DOUBLE_EQ(model_weight_bytes(qwen25_7b(), p).si(), expected);
    EXPECT_NEAR(expected / 1e9, 5.57, 0.01); // the published checkpoint is 5.58 GB
}

TEST(MemoryModel, KvPerTokenPerGpuFollowsTheHeadSharding) {
    // docs/domain.md §2 / docs/engines.md §1.2: 2 × L × kv_heads/TP × head_dim × 2 B.
    EXPECT_DOUBLE_EQ(estimate_memory(deploy(llama2_7b(), h100())).kv_per_token.si(), 512 * 1024);
    EXPECT_DOUBLE_EQ(estimate_memory(deploy(llama3_8b(), h100())).kv_per_token.si(), 128 * 1024);
    EXPECT_DOUBLE_EQ(estimate_memory(deploy(qwen25_7b(), h100())).kv_per_token.si(), 56 * 1024);
    EXPECT_DOUBLE_EQ(estimate_memory(deploy(llama31_70b(), h100(), 8)).kv_per_token.si(),
                     327680.0 / 8);
    EXPECT_DOUBLE_EQ(estimate_memory(deploy(llama31_70b(), h100(), 8)).kv_per_token_model.si(),
                     327680.0);
    // Llama-3-8B has 8 KV heads: at TP 16 each rank keeps one replica, as at TP 8.
    EXPECT_DOUBLE_EQ(estimate_memory(deploy(llama3_8b(), h100(), 16, 1)).kv_per_token.si(),
                     estimate_memory(deploy(llama3_8b(), h100(), 8)).kv_per_token.si());
    EXPECT_DOUBLE_EQ(estimate_memory(deploy(llama3_8b(), h100(), 8)).kv_per_token.si(),
                     2.0 * 32 * 1 * 128 * 2);
}

TEST(MemoryModel, MlaLatentIsNotShardedByTensorParallelism) {
    Deployment d = deploy(deepseek_v3(), h200(), 8);
    d.prec.weights = precision("fp8");
    // 61 layers × (512 + 64) × 2 B = 70,272 B on every rank (docs/engines.md §1.2).
    EXPECT_DOUBLE_EQ(estimate_memory(d).kv_per_token.si(), 70272.0);
}

TEST(MemoryModel, FpEightKvHalvesTheCache) {
    Deployment d = deploy(llama3_8b(), h100());
    d.prec.kv_cache = precision("fp8");
    EXPECT_DOUBLE_EQ(estimate_memory(d).kv_per_token.si(), 64 * 1024);
}

TEST(MemoryModel, SevenBAtFourKTimesEightIsSixteenGiB) {
    Deployment d = deploy(llama2_7b(), h100());
    d.engine.max_model_len = 4096;
    EXPECT_DOUBLE_EQ(8 * estimate_memory(d).kv_per_sequence.si(), 16.0 * kGiB);
    d.engine.max_model_len = 32768;
    d.engine.allow_long_context = true; // 8 × Llama-2's 4096-token context (rope scaling)
    EXPECT_DOUBLE_EQ(8 * estimate_memory(d).kv_per_sequence.si(), 128.0 * kGiB);
}

TEST(MemoryModel, KvCacheScalesLinearlyWithContext) {
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.max_model_len = 4096;
    const auto short_ctx = estimate_memory(d);
    d.engine.max_model_len = 8192;
    const auto long_ctx = estimate_memory(d);
    EXPECT_DOUBLE_EQ(long_ctx.kv_per_sequence / short_ctx.kv_per_sequence, 2.0);
}

TEST(MemoryModel, MoreTensorParallelismNeverAddsWeightBytesPerGpu) {
    for (const ModelSpec& m : {llama3_8b(), llama31_70b(), mixtral_8x7b(), deepseek_v3()}) {
        double previous = INFINITY;
        for (int tp : {1, 2, 4, 8}) {
            Deployment d = deploy(m, h200(), tp);
            const double w = estimate_memory(d).weights.si();
            EXPECT_LE(w, previous) << m.name << " tp " << tp;
            // The shards together hold at least the whole model (norms are replicated).
            EXPECT_GE(w * tp, model_weight_bytes(m, d.prec).si() * (1 - 1e-12)) << m.name;
            previous = w;
        }
    }
}

TEST(MemoryModel, ExpertParallelismHoldsWholeExpertsPerGpu) {
    Deployment tp_only = deploy(mixtral_8x7b(), h100(), 4);
    Deployment ep = tp_only;
    ep.par.ep = 4;
    // 8 experts over 4 ranks: 2 whole experts each = the same bytes as 8 quarter-experts.
    EXPECT_NEAR(estimate_memory(ep).weights.si(), estimate_memory(tp_only).weights.si(), 1.0);
}

TEST(MemoryModel, PipelineStagesSplitLayersLikeVllm) {
    // vLLM get_pp_indices: 30 layers on 4 stages -> 7, 8, 8, 7.
    ModelSpec m = llama3_8b();
    m.layers = 30;
    const int sizes[] = {7, 8, 8, 7};
    int first = 0;
    for (int s = 0; s < 4; ++s) {
        const detail::Stage st = detail::pipeline_stage(m, 4, s);
        EXPECT_EQ(st.layers, sizes[s]);
        EXPECT_EQ(st.first_layer, first);
        first += st.layers;
    }
    // Two stages of Llama-3-8B: 16 layers each, the embedding on one, the LM head on the other.
    const Deployment d = deploy(llama3_8b(), h100(), 1, 2);
    const MemoryEstimate e = estimate_memory(d);
    const double layer =
        2.0 * (4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3.0 * 4096 * 14336 + 2 * 4096);
    EXPECT_NEAR(e.weights.si(), 16 * layer + 2.0 * 128256 * 4096 + 2 * 4096, 2.0 * 4096);
    EXPECT_DOUBLE_EQ(e.kv_per_token.si(), 64 * 1024);
}

TEST(MemoryModel, VllmBlockArithmeticReproducesTheLlama3WorkedExample) {
    // docs/engines.md §1.4: Llama-3-8B, bf16, block 16, 53.29 GiB available:
    // page 64 KiB/layer -> 2 MiB per block over 32 layers; 27,284 blocks = 436,544 tokens;
    // concurrency at 8192 tokens = 27,284 / 512 = 53.29x.
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.max_model_len = 8192;
    d.engine.kv_cache_memory = Bytes(53.29 * kGiB);
    const MemoryEstimate e = estimate_memory(d);
    EXPECT_EQ(e.kv_blocks, 27284);
    EXPECT_EQ(e.kv_tokens, 436544);
    EXPECT_NEAR(e.max_concurrency, 27284.0 / 512, 1e-9);
}

TEST(MemoryModel, VllmBudgetSubtractsWeightsActivationsAndNonTorch) {
    // The PR 10511 log (docs/engines.md §1.6): 79.22 GiB total, util 0.9, weights 14.96 GiB,
    // non-torch 1.79 GiB, activation peak 1.26 GiB -> KV 53.29 GiB (no CUDA-graph term then).
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.usable_memory = Bytes(79.22 * kGiB);
    d.engine.non_torch_memory = Bytes(1.79 * kGiB);
    d.engine.activation_memory = Bytes(1.26 * kGiB);
    d.engine.cuda_graph_memory = Bytes(0);
    const MemoryEstimate e = estimate_memory(d);
    EXPECT_NEAR(e.weights.si() / kGiB, 14.96, 0.005); // 8,030,261,248 × 2 B
    EXPECT_NEAR(e.kv_budget.si() / kGiB, 53.29, 0.005);
    EXPECT_NEAR(static_cast<double>(e.kv_blocks), 27284, 1);
    EXPECT_EQ(e.kv_tokens, e.kv_blocks * 16);
    EXPECT_TRUE(e.fits);
    // The engine takes util × total; the rest is the headroom that holds the CUDA context.
    EXPECT_NEAR(e.total_used.si(), (0.9 * 79.22 + 0.5) * kGiB, 1e3);
    EXPECT_NEAR(e.free.si(), (0.1 * 79.22 - 0.5) * kGiB, 1e3);
}

TEST(MemoryModel, DefaultActivationPeakIsNearTheLoggedProfile) {
    // Same log: 1.26 GiB at max_num_batched_tokens 8192 (chunked prefill off, max_model_len
    // 8192) and 256 sequences. The estimate: 8192 × 2 B × (2 × 4096 + 3 × 14336) + 256 × 128256
    // × 4 B × 3 = 0.78 + 0.37 = 1.15 GiB.
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.max_num_batched_tokens = 8192;
    d.engine.max_num_seqs = 256;
    const double act = default_activation_memory(d).si();
    EXPECT_NEAR(act, 8192.0 * 2 * (2 * 4096 + 3 * 14336) + 256.0 * 128256 * 4 * 3, 1.0);
    EXPECT_NEAR(act / (1.26 * kGiB), 1.0, 0.15);
}

TEST(MemoryModel, DomainExampleQwenInt4On4090KvBlocksAndMaxNumSeqsBinds) {
    // docs/domain.md §3: vllm serve Qwen2.5-7B-Instruct-GPTQ-Int4 --max-model-len 16384
    // --gpu-memory-utilization 0.9 --max-num-seqs 4 on a 24 GB RTX 4090. Overheads pinned so the
    // arithmetic can be followed by hand:
    //   total 23.65 GiB (what CUDA reports for a 4090), requested 0.9 × 23.65 = 21.285 GiB;
    //   weights 5,570,747,392 B = 5.188 GiB (test above); non-torch 0.40, activations 0.60,
    //   CUDA graphs 0.04 GiB -> budget 21.285 − 5.188 − 1.04 = 15.057 GiB;
    //   page = 16 tokens × 4 KV heads × 2 × 128 × 2 B = 32 KiB per layer;
    //   blocks = ⌊⌊15.057 GiB / 32 KiB⌋ / 28⌋ = 17,620 -> 281,920 tokens;
    //   concurrency at 16384 tokens = 17,620 / 1024 = 17.2x, so max_num_seqs 4 binds and
    //   1 − 4/17.2 = 77 % of the KV cache idles at full length.
    Deployment d = deploy(qwen25_7b(), rtx4090());
    d.prec.weights = precision("gptq-int4");
    d.intra_node_link = pcie4();
    d.engine.max_model_len = 16384;
    d.engine.gpu_memory_utilization = 0.9;
    d.engine.max_num_seqs = 4;
    d.engine.enable_prefix_caching = true;
    d.engine.usable_memory = Bytes(23.65 * kGiB);
    d.engine.non_torch_memory = Bytes(0.40 * kGiB);
    d.engine.activation_memory = Bytes(0.60 * kGiB);
    d.engine.cuda_graph_memory = Bytes(0.04 * kGiB);
    const MemoryEstimate e = estimate_memory(d);
    const double budget = 0.9 * 23.65 * kGiB - 5'570'747'392.0 - 1.04 * kGiB;
    EXPECT_NEAR(e.kv_budget.si(), budget, 1.0);
    EXPECT_EQ(e.kv_blocks, static_cast<std::int64_t>(std::floor(std::floor(budget / 32768) / 28)));
    EXPECT_EQ(e.kv_blocks, 17620);
    EXPECT_EQ(e.kv_tokens, 281920);
    EXPECT_NEAR(e.max_concurrency, 17620.0 / 1024, 1e-9);
    EXPECT_TRUE(e.fits);
    EXPECT_EQ(e.concurrency_limit, ConcurrencyLimit::MaxNumSeqs);
    EXPECT_DOUBLE_EQ(e.effective_concurrency, 4.0);
    ASSERT_FALSE(e.reasons.empty());
    EXPECT_NE(e.reasons.back().find("max_num_seqs 4 binds"), std::string::npos) << e.reasons.back();
    EXPECT_NE(e.reasons.back().find("77 %"), std::string::npos) << e.reasons.back();

    // With the planner's own defaults the verdict is the same.
    Deployment defaults = d;
    defaults.engine.usable_memory.reset();
    defaults.engine.non_torch_memory.reset();
    defaults.engine.activation_memory.reset();
    defaults.engine.cuda_graph_memory.reset();
    const MemoryEstimate f = estimate_memory(defaults);
    EXPECT_TRUE(f.fits);
    EXPECT_GT(f.max_concurrency, 15.0);
    EXPECT_LT(f.max_concurrency, 20.0);
    EXPECT_EQ(f.concurrency_limit, ConcurrencyLimit::MaxNumSeqs);
}

TEST(MemoryModel, SlidingWindowLayersUseVllmsHybridGroups) {
    // 21 full + 21 windowed layers: group size 21, two groups sharing one pool.
    // Per request at 8192 tokens: full 8192/16 = 512 blocks; windowed
    // ⌈min(4096 − 1 + 2048, 8192) / 16⌉ + 1 = 385 blocks.
    Deployment d = deploy(windowed_model(), h100());
    d.engine.max_model_len = 8192;
    d.engine.max_num_batched_tokens = 2048;
    d.engine.kv_cache_memory = Bytes(20.0 * kGiB);
    const MemoryEstimate e = estimate_memory(d);
    const double page = 16.0 * 2 * 8 * 256 * 2; // one layer, one block
    const double blocks = std::floor(std::floor(20.0 * kGiB / page) / 21);
    EXPECT_EQ(e.kv_blocks, static_cast<std::int64_t>(blocks));
    EXPECT_EQ(e.kv_tokens, static_cast<std::int64_t>(std::floor(blocks / 2) * 16));
    EXPECT_NEAR(e.max_concurrency, blocks / (512 + 385), 1e-9);
    // Per sequence: windowed layers stop at 4096 tokens.
    const double per_layer_token = 2.0 * 8 * 256 * 2;
    EXPECT_DOUBLE_EQ(e.kv_per_sequence.si(), per_layer_token * (21 * 8192.0 + 21 * 4096.0));
}

TEST(MemoryModel, RecurrentLayersTakeOneStatePagePerRequestInVllm) {
    // A Qwen3.5-35B-A3B-like hybrid: 10 attention layers (2 KV heads of 256) and 30 Gated
    // DeltaNet layers (16 key heads, 32 value heads, 128 x 128, fp32 state, conv width 4).
    ModelSpec m = llama_like("gdn-hybrid", 40, 2048, 16, 2, 0, 248320, 262144);
    m.head_dim = 256;
    m.moe = MoeSpec{256, 8, 1, 512, 0};
    m.state = StateSpec{StateKind::GatedDeltaNet, 30, 32, 16, 128, 128, 4, true};
    Deployment d = deploy(m, h100());
    d.engine.max_model_len = 8192;
    d.engine.kv_cache_memory = Bytes(20.0 * kGiB);
    const MemoryEstimate e = estimate_memory(d);
    // By hand: attention 2 x 2 x 256 x 2 B = 2048 B per token and layer; a GDN layer's state is
    // 3 x (2 x 16 x 128 + 32 x 128) x 2 B + 32 x 128 x 128 x 4 B = 2,146,304 B. vLLM raises the
    // block to 16 x ceil(2,146,304 / (16 x 2048)) = 16 x 66 = 1056 tokens, a 2,162,688-B page.
    const double state = 3.0 * (2 * 16 * 128 + 32 * 128) * 2 + 32.0 * 128 * 128 * 4;
    EXPECT_DOUBLE_EQ(e.kv_per_token.si(), 10 * 2048.0);
    EXPECT_DOUBLE_EQ(e.state_per_sequence.si(), 30 * state);
    EXPECT_DOUBLE_EQ(e.kv_per_sequence.si(), 10 * 8192 * 2048.0 + 30 * state);
    const double page = 1056.0 * 2048;
    // Groups of 10 layers (30 >= 1.5 x 10): one attention group, three state groups; a request
    // takes ceil(8192 / 1056) = 8 attention pages and one page per state group.
    const double blocks = std::floor(std::floor(20.0 * kGiB / page) / 10);
    EXPECT_EQ(e.kv_blocks, static_cast<std::int64_t>(blocks));
    EXPECT_EQ(e.kv_tokens, static_cast<std::int64_t>(std::floor(blocks / 4) * 1056));
    EXPECT_NEAR(e.max_concurrency, blocks / (8 + 3), 1e-9);
    EXPECT_EQ(e.engine.block_size, 1056); // the block vLLM runs with and logs
    // 4096 + 1024 tokens (average context 4608): 5 attention blocks and 3 state blocks a
    // request, the null block left out.
    Workload w;
    w.input_tokens = 4096;
    w.output_tokens = 1024;
    const double by_pages = std::floor((blocks - 1) / (5 + 3));
    MemoryEstimate started = e; // bf16 weights and a forced 20 GiB pool overfill an H100
    started.fits = true;
    EXPECT_EQ(replica_capacity(started, w), static_cast<int>(by_pages));
}

TEST(MemoryModel, RecurrentLayersMatchAPublishedVllmStartUp) {
    // vLLM v0.24.0 with Qwen3.6-35B-A3B (NVFP4, FP8 KV cache) on an RTX 5090 logs "Available KV
    // cache memory: 5.98 GiB" and "Maximum concurrency for 131,072 tokens per request: 4.33x"
    // (tests/fixtures/engine-logs/, SOURCE there). By hand: FP8 attention pages of
    // 2 x 2 x 256 x 1 B = 1024 B per token; a GDN state of 3 x 8192 x 2 B + 32 x 128 x 128 x 4 B
    // = 2,146,304 B, so 16 x ceil(2,146,304 / 16,384) = 2096-token blocks; 2991 pages of
    // 2,146,304 B in 5.98 GiB, 299 blocks of 10 layers; a request takes ceil(131072 / 2096) = 63
    // attention blocks and 3 state blocks: 299 / 66 = 4.53, 4.5 % above the log (whose
    // 567,978 tokens are 4.333 x 131072: vLLM 0.24 counts 286 blocks of the same 66 a request).
    ModelSpec m = llama_like("qwen3.6-35b-a3b", 40, 2048, 16, 2, 0, 248320, 262144);
    m.head_dim = 256;
    m.moe = MoeSpec{256, 8, 1, 512, 0};
    m.state = StateSpec{StateKind::GatedDeltaNet, 30, 32, 16, 128, 128, 4, true};
    Deployment d = deploy(m, h100());
    d.prec.kv_cache = parse_precision("fp8");
    d.engine.max_model_len = 131072;
    d.engine.max_num_batched_tokens = 8192;
    d.engine.kv_cache_memory = Bytes(5.98 * kGiB);
    const MemoryEstimate e = estimate_memory(d);
    EXPECT_NEAR(e.max_concurrency, 299.0 / 66.0, 1e-9);
    EXPECT_NEAR(e.max_concurrency, 4.33, 0.05 * 4.33);
}

TEST(MemoryModel, SeventyBDoesNotFitOneH100AndSaysWhy) {
    const MemoryEstimate e = estimate_memory(deploy(llama31_70b(), h100()));
    EXPECT_FALSE(e.fits);
    EXPECT_LT(e.kv_budget.si(), 0);
    EXPECT_LT(e.free.si(), 0);
    ASSERT_FALSE(e.reasons.empty());
    EXPECT_NE(e.reasons.front().find("no memory is left for the KV cache"), std::string::npos)
        << e.reasons.front();
}

TEST(MemoryModel, LongestContextAtAConcurrencyInvertsTheBlockArithmetic) {
    // 27,284 blocks: 100 sequences get ⌊27,284 / 100⌋ = 272 blocks = 4352 tokens each.
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.kv_cache_memory = Bytes(53.29 * kGiB);
    EXPECT_EQ(max_context_at_concurrency(d, 100), 4352);
    EXPECT_GE(max_concurrency_at_context(d, 4352), 100.0);
    EXPECT_LT(max_concurrency_at_context(d, 4353), 100.0);
    // One sequence: capped by the model's 8192-token context.
    EXPECT_EQ(max_context_at_concurrency(d, 1), 8192);
    // Nothing fits: no context works.
    EXPECT_EQ(max_context_at_concurrency(deploy(llama31_70b(), h100()), 1), std::nullopt);
}

TEST(MemoryModel, FewestGpusForSeventyBAtFullContextIsThreePipelineStages) {
    // One 131,072-token sequence of Llama-3.1-70B holds 20 GiB of KV (160 KiB/token).
    // TP 2: 65.7 GiB of weights per GPU leave ~1 GiB of the 0.9 × 79.2 = 71.3 GiB budget: no.
    // PP 3 (27/27/26 layers): 43.8 GiB of weights, ~25 GiB of KV at 108 KiB/token -> 1.6 sequences.
    Deployment d = deploy(llama31_70b(), h100());
    const auto plan = fewest_gpus(d);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->gpus, 3);
    EXPECT_EQ(plan->par.tp, 1);
    EXPECT_EQ(plan->par.pp, 3);
    EXPECT_TRUE(plan->memory.fits);
    EXPECT_GT(plan->memory.max_concurrency, 1.0);
    EXPECT_LT(plan->memory.max_concurrency, 2.0);
    // Four concurrent full-length sequences: TP 4 holds only 3.4, PP 5 (16 layers, 64 KiB per
    // token per GPU, ~43 GiB of KV) holds 5.3.
    const auto four = fewest_gpus(d, 4);
    ASSERT_TRUE(four.has_value());
    EXPECT_EQ(four->gpus, 5);
    // An 8B model fits one 4090.
    const auto small = fewest_gpus(deploy(llama3_8b(), rtx4090()));
    ASSERT_TRUE(small.has_value());
    EXPECT_EQ(small->gpus, 1);
}

TEST(MemoryModel, HostRamIsTwiceTheNodesGpuMemory) {
    const HostRamAdvice a = host_ram_advice(deploy(llama31_70b(), h100(), 4));
    EXPECT_EQ(a.gpus_per_node, 4);
    EXPECT_DOUBLE_EQ(a.recommended.si(), 2 * 4 * 80.0 * kGiB);
    EXPECT_DOUBLE_EQ(a.weight_file.si(), count_params(llama31_70b()).total * 2);
    // A big checkpoint on a small node: the weight file sets the floor.
    const HostRamAdvice b = host_ram_advice(deploy(deepseek_v3(), rtx4090()));
    EXPECT_DOUBLE_EQ(b.recommended.si(), b.weight_file.si());
}

TEST(EngineDefaults, VllmDefaultsDependOnTheGpu) {
    const EngineSettings big = resolve_engine(deploy(llama3_8b(), h100()));
    EXPECT_EQ(big.max_num_batched_tokens, 8192);
    EXPECT_EQ(big.max_num_seqs, 1024);
    EXPECT_EQ(big.block_size, 16);
    EXPECT_DOUBLE_EQ(big.memory_fraction, 0.9);
    EXPECT_EQ(big.max_model_len, 8192);
    // Graphs up to min(1024 × 2, 512, 8192) = 512 tokens: 51 sizes (docs/engines.md §1.5).
    EXPECT_EQ(big.cuda_graph_max_tokens, 512);
    EXPECT_EQ(big.cuda_graph_sizes, 51);
    const EngineSettings small = resolve_engine(deploy(llama3_8b(), rtx4090()));
    EXPECT_EQ(small.max_num_batched_tokens, 2048);
    EXPECT_EQ(small.max_num_seqs, 256);
    Deployment few = deploy(llama3_8b(), rtx4090());
    few.engine.max_num_seqs = 128;
    EXPECT_EQ(resolve_engine(few).cuda_graph_sizes, 35); // max 256
    Deployment a100 = deploy(llama3_8b(), h100());
    a100.gpu.name = "a100-sxm4-80gb";
    EXPECT_EQ(resolve_engine(a100).max_num_seqs, 256);
    Deployment no_chunk = deploy(llama3_8b(), h100());
    no_chunk.engine.enable_chunked_prefill = false;
    EXPECT_EQ(resolve_engine(no_chunk).max_num_batched_tokens, 8192);
}

TEST(EngineDefaults, SglangMemFractionFollowsItsHeuristic) {
    // H100 80 GiB = 81,920 MiB; reserved = 512 + 1.5 × 8192 + 2 × 256 + 1024 × 1 / 8 = 13,440;
    // (81,920 − 13,440) / 81,920 = 0.836.
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.kind = EngineKind::Sglang;
    const EngineSettings s = resolve_engine(d);
    EXPECT_DOUBLE_EQ(s.memory_fraction, 0.836);
    EXPECT_EQ(s.block_size, 1);
    EXPECT_EQ(s.max_num_batched_tokens, 8192);
    const MemoryEstimate e = estimate_memory(d);
    // KV pool = total × fraction − weights − context − NCCL; token-granular.
    EXPECT_NEAR(e.kv_budget.si(), (0.836 * 79.2 - 14.9575 - 0.5 - 0.4) * kGiB, 0.01 * kGiB);
    EXPECT_EQ(e.kv_tokens, static_cast<std::int64_t>(std::floor(e.kv_budget.si() / 131072)));
}

TEST(EngineDefaults, TensorRtLlmTakesAFractionOfWhatIsLeft) {
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.kind = EngineKind::TensorRtLlm;
    d.engine.usable_memory = Bytes(79.0 * kGiB);
    d.engine.non_torch_memory = Bytes(1.0 * kGiB);
    d.engine.activation_memory = Bytes(1.0 * kGiB);
    d.engine.cuda_graph_memory = Bytes(0);
    d.engine.cuda_context_memory = Bytes(0.5 * kGiB);
    const MemoryEstimate e = estimate_memory(d);
    const double weights = 8'030'261'248.0 * 2;
    EXPECT_NEAR(e.kv_budget.si(), 0.9 * (79.0 * kGiB - 2.5 * kGiB - weights), 1.0);
    EXPECT_EQ(resolve_engine(d).block_size, 32);
    EXPECT_EQ(e.kv_tokens % 32, 0);
}

TEST(EngineDefaults, LlamaCppAllocatesTheWholeContextUpFront) {
    Deployment d = deploy(llama3_8b(), rtx4090());
    d.engine.kind = EngineKind::LlamaCpp;
    d.engine.max_model_len = 4096;
    const MemoryEstimate e = estimate_memory(d);
    // 4096 tokens × 128 KiB = 512 MiB (docs/engines.md §5 example).
    EXPECT_DOUBLE_EQ(e.kv_budget.si(), 512.0 * kMiB);
    EXPECT_TRUE(e.fits);
    EXPECT_DOUBLE_EQ(e.max_concurrency, 1.0);
}

TEST(DeploymentValidation, NamesTheFieldAndTheFix) {
    // The GPU count is tp × pp × dp (Deployment::gpus()), so it cannot disagree with the layout;
    // a size below 1 is what validate names instead.
    Deployment d = deploy(llama3_8b(), h100(), 2);
    d.par.dp = 0;
    try {
        (void)estimate_memory(d);
        FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "tp=2 pp=1 dp=0 ep=1 has a size below 1; every size must be at least 1"),
                  std::string::npos)
            << e.what();
    }
    Deployment q = deploy(qwen25_7b(), h100(), 7); // 28 heads / 7 fine, 4 KV heads vs 7 not
    EXPECT_THROW((void)estimate_memory(q), InvalidArgument);
    Deployment u = deploy(llama3_8b(), h100());
    u.engine.gpu_memory_utilization = 1.5;
    EXPECT_THROW((void)estimate_memory(u), InvalidArgument);
    Deployment v = deploy(llama3_8b(), h100());
    v.engine.max_num_seqs = 512;
    v.engine.max_num_batched_tokens = 256;
    try {
        (void)estimate_memory(v);
        FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(
            std::string(e.what()).find("max_num_batched_tokens 256 is below max_num_seqs 512"),
            std::string::npos)
            << e.what();
    }
}

} // namespace
