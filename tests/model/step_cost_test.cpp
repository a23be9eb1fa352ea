/// Step cost: FLOPs and bytes per operator against hand arithmetic, invariants (monotone in
/// batch and context, weights read once per step), bounds, MoE expert load, communication
/// terms, and the allocation-free hot path.

#include "model/step_cost.hpp"

#include "fixtures.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

namespace {
std::atomic<long> g_allocations{0};
} // namespace

// Counts every heap allocation of the test program, so a test can assert that a call makes none.
// These are replacements of the global operators, so malloc/free inside them is the matching
// pair; GCC 12 still flags free() in an inlined replacement delete (-Wmismatched-new-delete).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n == 0 ? 1 : n)) {
        return p;
    }
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
// std::stable_sort's temporary buffer uses the nothrow forms: replace them too, so that every
// allocation and release goes through the same malloc/free pair.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}

namespace {

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

StepCost decode_step(const StepCostModel& m, int batch, int context) {
    BatchStats s;
    m.add_decodes(s, batch, context);
    return m.cost(s);
}

StepCost prefill_step(const StepCostModel& m, int tokens, int cached = 0) {
    BatchStats s;
    m.add(s, PrefillChunk{tokens, cached});
    return m.cost(s);
}

TEST(StepCost, DecodeFlopsPerTokenAreTwiceTheParametersPlusAttention) {
    // docs/domain.md §2: ≈ 2P (non-embedding parameters, LM head included) + 4 × L × d × a ×
    // context.
    const StepCostModel m(deploy(llama2_7b(), round_gpu()), default_profile());
    const double context = 1000;
    const StepCost c = decode_step(m, 1, static_cast<int>(context));
    const double p = 6'738'415'616.0 - 32000.0 * 4096; // minus the input embedding
    const double expected = 2 * p + 4.0 * 32 * 128 * 32 * context;
    EXPECT_NEAR(c.model_flops.si() / expected, 1.0, 1e-4);
    EXPECT_NEAR(c.op(Op::AttentionDecode).flops.si(), 4.0 * 32 * 128 * 32 * context, 1.0);
}

TEST(StepCost, PrefillFlopsCountCausalPairsAndOneLogitRow) {
    const StepCostModel m(deploy(llama2_7b(), round_gpu()), default_profile());
    const double t = 512;
    const StepCost c = prefill_step(m, 512);
    const double layer_linear = 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008;
    // Causal attention: token i attends to i keys -> t(t+1)/2 pairs, 4 × d × a FLOPs each.
    const double attention = 32 * 4.0 * 128 * 32 * (t * (t + 1) / 2);
    const double expected = 2 * 32 * layer_linear * t + 2.0 * 4096 * 32000 + attention;
    EXPECT_NEAR(c.model_flops.si() / expected, 1.0, 1e-9);
    EXPECT_NEAR(c.op(Op::AttentionPrefill).flops.si(), attention, 1.0);
    EXPECT_EQ(c.tokens, 512);
    EXPECT_EQ(c.sequences, 1);
}

TEST(StepCost, WeightsAreReadOncePerStepWhateverTheBatch) {
    const StepCostModel m(deploy(llama3_8b(), h100()), default_profile());
    EXPECT_DOUBLE_EQ(decode_step(m, 1, 1000).weight_bytes.si(),
                     decode_step(m, 64, 1000).weight_bytes.si());
    // All linear weights plus the LM head: 2 B × (8.03e9 − 128256 × 4096 − norms).
    const double norms = (2.0 * 32 + 1) * 4096;
    EXPECT_DOUBLE_EQ(decode_step(m, 1, 1000).weight_bytes.si(),
                     2.0 * (8'030'261'248.0 - 128256.0 * 4096 - norms));
}

TEST(StepCost, KvBytesAreLinearInContext) {
    const StepCostModel m(deploy(llama2_7b(), h100()), default_profile());
    // A decode reads `context` tokens of KV and writes one: (c + 1) × 512 KiB for Llama-2-7B.
    EXPECT_DOUBLE_EQ(decode_step(m, 1, 1000).kv_bytes.si(), 1001.0 * 512 * 1024);
    EXPECT_DOUBLE_EQ(decode_step(m, 8, 1000).kv_bytes.si(), 8 * 1001.0 * 512 * 1024);
}

TEST(StepCost, StepTimeIsMonotoneInBatchAndContext) {
    for (const ModelSpec& model : {llama3_8b(), mixtral_8x7b(), windowed_model()}) {
        const StepCostModel m(deploy(model, h100()), default_profile());
        Seconds previous(0);
        for (int b = 1; b <= 1024; ++b) {
            const Seconds t = decode_step(m, b, 2048).time;
            EXPECT_GE(t, previous) << model.name << " batch " << b;
            previous = t;
        }
        previous = Seconds(0);
        for (int c = 1; c <= 32768; c += 97) {
            const Seconds t = decode_step(m, 16, c).time;
            EXPECT_GE(t, previous) << model.name << " context " << c;
            previous = t;
        }
        previous = Seconds(0);
        for (int n = 1; n <= 16384; n += 61) {
            const Seconds t = prefill_step(m, n).time;
            EXPECT_GE(t, previous) << model.name << " prefill " << n;
            previous = t;
        }
    }
}

TEST(StepCost, DecodeIsBandwidthBoundAndPrefillComputeBound) {
    const StepCostModel m(deploy(llama3_8b(), h100()), default_profile());
    const StepCost decode = decode_step(m, 1, 1024);
    EXPECT_EQ(decode.op(Op::Mlp).bound, Bound::Memory);
    EXPECT_EQ(decode.op(Op::QkvProj).bound, Bound::Memory);
    // At 1024 tokens one sequence's attention is launch-bound; at 16K it streams the KV cache.
    EXPECT_EQ(decode.op(Op::AttentionDecode).bound, Bound::Overhead);
    EXPECT_EQ(decode_step(m, 1, 16384).op(Op::AttentionDecode).bound, Bound::Memory);
    const StepCost prefill = prefill_step(m, 4096);
    EXPECT_EQ(prefill.op(Op::Mlp).bound, Bound::Compute);
    EXPECT_EQ(prefill.op(Op::AttentionPrefill).bound, Bound::Compute);
    // Batch-1 decode moves ~16 GB at ≤ 3.35 TB/s: at least 4.8 ms, and the step overhead.
    EXPECT_GT(decode.time.si(), 15.0e9 / 3.35e12);
    EXPECT_LT(decode.time.si(), 10e-3);
}

// The gemm and memory curves of hwdb/profiles/a100-sxm-80gb.yaml (fitted on cuBLAS fp16 GEMMs,
// m_half 110 rows), under which issue 19's weight-only decode hit a false compute floor.
EfficiencyProfile a100_fitted_curves() {
    EfficiencyProfile p = default_profile();
    p.gemm.e_max = 0.7594;
    p.gemm.m_half = 110.232;
    p.gemm.nk_half = 526443;
    p.memory = {0.653423, 2.90222 * 1024 * 1024};
    return p;
}

TEST(StepCost, AwqInt4DecodeIsMemoryBoundAndFasterThanInt8) {
    Deployment awq = deploy(llama3_8b(), a100_80gb());
    awq.prec.weights = precision("awq-int4");
    Deployment int8 = deploy(llama3_8b(), a100_80gb());
    int8.prec.weights = precision("int8");
    const StepCostModel m4(awq, a100_fitted_curves());
    const StepCostModel m8(int8, a100_fitted_curves());
    EXPECT_EQ(m4.gemm_path(), GemmPath::WeightOnly);
    EXPECT_EQ(m8.gemm_path(), GemmPath::Dense);
    const StepCost s4 = decode_step(m4, 1, 2048);
    const StepCost s8 = decode_step(m8, 1, 2048);
    for (Op o : {Op::QkvProj, Op::OutProj, Op::Mlp}) {
        EXPECT_EQ(s4.op(o).bound, Bound::Memory) << to_string(o);
    }
    // Weights read per step: 32 layers × (2 × 4096² + 2 × 4096 × 1024 + 3 × 4096 × 14336)
    // linear weights at 4 + 20/128 bits (AWQ g128: fp16 scale, 4-bit zero), plus the bf16
    // LM head 128256 × 4096 × 2 bytes: 3.626 GB + 1.051 GB.
    const double linear = 32.0 * (2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336);
    const double weights = linear * (4.0 + 20.0 / 128.0) / 8.0 + 128256.0 * 4096 * 2;
    EXPECT_NEAR(s4.weight_bytes.si(), weights, 1e-6 * weights);
    // No faster than those bytes at the datasheet 2.039 TB/s; faster than W8A8 int8.
    EXPECT_GE(s4.time.si(), weights / 2.039e12);
    EXPECT_LT(s4.time.si(), s8.time.si());
}

TEST(StepCost, Fp8WeightsWithoutFp8TensorCoresRunWeightOnly) {
    // vLLM serves FP8 checkpoints on Ampere through FP8 Marlin: 1-byte weights, bf16 MMA.
    Deployment a = deploy(llama3_8b(), a100_80gb());
    a.prec.weights = precision("fp8");
    const StepCostModel ma(a, default_profile());
    EXPECT_EQ(ma.gemm_path(), GemmPath::WeightOnly);
    EXPECT_DOUBLE_EQ(ma.peak_flops().si(), 312e12);
    EXPECT_EQ(decode_step(ma, 1, 2048).op(Op::Mlp).bound, Bound::Memory);
    Deployment h = deploy(llama3_8b(), h100());
    h.prec.weights = precision("fp8");
    EXPECT_EQ(StepCostModel(h, default_profile()).gemm_path(), GemmPath::Dense);
    EXPECT_EQ(StepCostModel(deploy(llama3_8b(), a100_80gb()), default_profile()).gemm_path(),
              GemmPath::Dense);
}

TEST(StepCost, RoutedExpertsOfAWeightOnlyModelUseTheWeightOnlyCurve) {
    // Mixtral-8x7B in GPTQ int4 on an H100, one decode token: 2 rows over 2 touched experts
    // (8 × (1 − (1 − 2/8)^1)), so 1 row per expert; FLOPs 2 × 2 × 3 × 4096 × 14336 per layer at
    // 989.4 TFLOPS × 0.7 × 0.9/(1 + 8) (weight-only rows curve at M = 1, default profile).
    Deployment d = deploy(mixtral_8x7b(), h100());
    d.prec.weights = precision("gptq-int4");
    const StepCostModel m(d, default_profile());
    const StepCost step = decode_step(m, 1, 1024);
    const OpCost& experts = step.op(Op::MoeExperts);
    const double flops = 2.0 * 2.0 * 3.0 * 4096 * 14336;
    const double compute = flops / (989.4e12 * 0.7 * 0.9 / 9.0);
    EXPECT_NEAR(experts.compute_time.si(), 32.0 * compute, 1e-9 * 32.0 * compute);
    EXPECT_EQ(experts.bound, Bound::Memory);
}

TEST(StepCost, TotalsAreTheSumOfTheOperators) {
    const StepCostModel m(deploy(llama3_8b(), h100(), 2), default_profile());
    const StepCost c = decode_step(m, 32, 2000);
    Seconds t = c.step_overhead;
    Flops f(0);
    for (const OpCost& o : c.ops) {
        t += o.time;
        f += o.flops;
        EXPECT_GE(o.time.si(), 0.0);
    }
    EXPECT_NEAR(c.time.si(), t.si(), 1e-15);
    EXPECT_NEAR(c.flops.si(), f.si(), 1.0);
}

TEST(StepCost, ExpectedExpertsTouchedFollowsTheOccupancyFormula) {
    EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 1), 2.0);
    EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 4), 8.0 * (1 - std::pow(0.75, 4)));
    EXPECT_NEAR(expected_experts_touched(256, 8, 1000), 256.0, 1e-6);
    EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 0), 0.0);
}

TEST(StepCost, MoeDecodeReadsOnlyTouchedExperts) {
    const StepCostModel m(deploy(mixtral_8x7b(), h100(), 2), default_profile());
    const double expert = 3.0 * 4096 * 14336 / 2 * 2; // one expert's bytes per rank at TP 2
    const StepCost one = decode_step(m, 1, 1000);
    EXPECT_DOUBLE_EQ(one.experts_touched, 2.0);
    // Plus vLLM's alignment (2 ids read, 2 experts × one 16-row tile of sorted indices and one
    // tile id each, int32) and combine (2 rows read, 1 written, 4096 bf16 each).
    const double aux = (2.0 + 32.0 + 2.0) * 4.0 + (2.0 + 1.0) * 4096 * 2.0;
    EXPECT_NEAR(one.op(Op::MoeExperts).bytes.si(),
                32 * (2 * expert + 2 * (2.0 * 4096 + 2 * 3 * 14336 / 2.0) * 2 + aux), 1.0);
    const StepCost many = decode_step(m, 64, 1000);
    EXPECT_NEAR(many.experts_touched, 8.0, 1e-6);
    EXPECT_GT(many.weight_bytes.si() - one.weight_bytes.si(), 32 * 5.9 * expert);
}

TEST(StepCost, TensorParallelAddsTwoAllReducesPerLayer) {
    const StepCostModel m(deploy(llama2_7b(), h100(), 2), default_profile());
    const StepCost c = decode_step(m, 8, 1000);
    const OpCost& ar = c.op(Op::TpAllReduce);
    // 2 per layer + 1 for the vocab-parallel embedding, and one logits gather.
    EXPECT_EQ(ar.kernels, 2 * 32 + 1 + 1);
    EXPECT_EQ(ar.bound, Bound::Communication);
    EXPECT_GT(ar.time.si(), 0.0);
    // PCIe instead of NVLink: slower collectives.
    Deployment pcie = deploy(llama2_7b(), h100(), 2);
    pcie.intra_node_link = pcie4();
    const StepCost slow = decode_step(StepCostModel(pcie, default_profile()), 8, 1000);
    EXPECT_GT(slow.op(Op::TpAllReduce).time, ar.time);
    // No TP, no all-reduce.
    const StepCostModel one(deploy(llama2_7b(), h100()), default_profile());
    EXPECT_EQ(decode_step(one, 8, 1000).op(Op::TpAllReduce).time.si(), 0.0);
}

TEST(StepCost, PipelineSumsStagesAndReportsTheBubble) {
    const StepCostModel flat(deploy(llama3_8b(), h100()), default_profile());
    const StepCostModel piped(deploy(llama3_8b(), h100(), 1, 2), default_profile());
    const StepCost a = decode_step(flat, 16, 1000);
    const StepCost b = decode_step(piped, 16, 1000);
    EXPECT_DOUBLE_EQ(b.pp_bubble, 0.5);
    EXPECT_GT(b.op(Op::PpSend).time.si(), 0.0);
    EXPECT_EQ(b.op(Op::PpSend).kernels, 1);
    // Same layers on the critical path, plus the send.
    EXPECT_NEAR((b.time - b.op(Op::PpSend).time).si(), a.time.si(), 1e-12);
}

TEST(StepCost, MixedBatchCostsMoreThanEitherPart) {
    const StepCostModel m(deploy(llama3_8b(), h100()), default_profile());
    std::vector<PrefillChunk> prefills{{512, 0}, {256, 1024}};
    std::vector<DecodeSeq> decodes(32, DecodeSeq{2000});
    const StepCost mixed = m.cost(prefills, decodes);
    const StepCost only_prefill = m.cost(prefills, {});
    const StepCost only_decode = m.cost({}, decodes);
    EXPECT_GT(mixed.time, only_prefill.time);
    EXPECT_GT(mixed.time, only_decode.time);
    EXPECT_LT(mixed.time, only_prefill.time + only_decode.time); // weights read once
    EXPECT_EQ(mixed.tokens, 512 + 256 + 32);
    // The three entry points agree.
    Batch batch{prefills, decodes};
    EXPECT_EQ(m.cost(batch), mixed);
    EXPECT_EQ(step_cost(deploy(llama3_8b(), h100()), batch, default_profile()), mixed);
}

TEST(StepCost, CostingAStepDoesNotAllocate) {
    const StepCostModel m(deploy(deepseek_v3(), h200(), 8), default_profile());
    std::vector<PrefillChunk> prefills{{2048, 0}, {100, 4000}};
    std::vector<DecodeSeq> decodes(200, DecodeSeq{3000});
    const long before = g_allocations.load();
    Seconds total(0);
    for (int i = 0; i < 1000; ++i) {
        total += m.cost(prefills, decodes).time;
    }
    EXPECT_EQ(g_allocations.load(), before);
    EXPECT_GT(total.si(), 0.0);
}

TEST(StepCost, SlidingWindowCapsDecodeAttention) {
    const StepCostModel windowed(deploy(windowed_model(), h100()), default_profile());
    ModelSpec full_model = windowed_model();
    full_model.sliding_window.reset();
    const StepCostModel full(deploy(full_model, h100()), default_profile());
    const double at_short = decode_step(windowed, 4, 2000).op(Op::AttentionDecode).flops.si();
    EXPECT_DOUBLE_EQ(at_short, decode_step(full, 4, 2000).op(Op::AttentionDecode).flops.si());
    // At 8000 tokens the 21 windowed layers attend to 4096: (21 × 8000 + 21 × 4096) / (42 × 8000).
    const double ratio = decode_step(windowed, 4, 8000).op(Op::AttentionDecode).flops.si() /
                         decode_step(full, 4, 8000).op(Op::AttentionDecode).flops.si();
    EXPECT_NEAR(ratio, (8000.0 + 4096.0) / 16000.0, 1e-12);
}

TEST(StepCost, MlaDecodeReadsTheLatentOnce) {
    Deployment d = deploy(deepseek_v3(), h200(), 8);
    d.par.ep = 8;
    d.prec.weights = precision("fp8");
    const StepCostModel m(d, default_profile());
    const StepCost c = decode_step(m, 1, 10000);
    // 61 layers × 576 elements × 2 B × (10000 read + 1 written).
    EXPECT_DOUBLE_EQ(c.kv_bytes.si(), 61.0 * 576 * 2 * 10001);
    EXPECT_GT(c.op(Op::EpAllToAll).time.si(), 0.0);
    EXPECT_EQ(c.op(Op::EpAllToAll).kernels, 2 * 58);
}

TEST(StepCost, EmptyBatchCostsNothing) {
    const StepCostModel m(deploy(llama3_8b(), h100()), default_profile());
    const StepCost c = m.cost(BatchStats{});
    EXPECT_EQ(c.time.si(), 0.0);
    EXPECT_EQ(c.tokens, 0);
}

} // namespace

namespace grouped_moe {

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

// One MoE layer, hidden 1024, 4 experts (top-2) of ffn 2048, on the round GPU (100 TFLOPS bf16,
// 1 TB/s) with a flat 0.8 memory curve and one launch cost for graphs and eager launches.
Deployment tiny_moe() {
    ModelSpec m = llama_like("tiny-moe", 1, 1024, 8, 8, 2048, 256, 4096);
    m.moe = MoeSpec{4, 2, 0, 2048, 0};
    return deploy(m, round_gpu());
}

EfficiencyProfile flat_profile() {
    EfficiencyProfile p = default_profile();
    p.memory = {0.8, 0.0};
    p.launch_overhead = Seconds(2e-6);
    p.graph_launch_overhead = Seconds(2e-6);
    return p;
}

TEST(StepCost, RoutedExpertsRunOnTheGroupedCurve) {
    // 64 prompt tokens: 128 routed rows over 4 × (1 − 0.5^64) touched experts, i.e. 32 rows per
    // expert (to 1e-17). Grouped efficiency 0.7 × 32 / (32 + 100); the dense curve would give
    // 0.7 × 32 / (32 + 16) and a memory-bound kernel.
    // TensorRT-LLM's CUTLASS MoE: no Triton padding or alignment kernels (see below for vLLM).
    Deployment d = tiny_moe();
    d.engine.kind = EngineKind::TensorRtLlm;
    const EfficiencyProfile p = flat_profile();
    const StepCostModel model(d, p);
    BatchStats s;
    model.add(s, PrefillChunk{64, 0});
    const StepCost step = model.cost(s);
    const OpCost& e = step.op(Op::MoeExperts);
    const double touched = 4.0 * (1.0 - std::pow(0.5, 64));
    const double rows = 128, h = 1024, f = 2048;
    const double flops = 2.0 * rows * 3.0 * h * f;
    const double bytes = touched * 3.0 * h * f * 2.0 + rows * (2.0 * h + 6.0 * f) * 2.0;
    const double compute = flops / (100e12 * 0.7 * (rows / touched) / (rows / touched + 100.0));
    const double memory = bytes / (1e12 * 0.8);
    ASSERT_GT(compute, memory); // grouped: compute-bound at 32 rows per expert
    ASSERT_LT(flops / (100e12 * 0.7 * 32.0 / 48.0), memory); // dense: it would be memory-bound
    EXPECT_NEAR(e.compute_time.si(), compute, 1e-12 * compute);
    EXPECT_NEAR(e.memory_time.si(), memory, 1e-12 * memory);
    EXPECT_EQ(e.kernels, 5); // fused_moe: align/sort, two grouped GEMMs, activation, combine
    EXPECT_NEAR(e.time.si(), compute + 5 * 2e-6, 1e-12);
    EXPECT_EQ(e.bound, Bound::Compute);

    // The step time moves by exactly the experts' difference when the grouped row curve is the
    // dense one (max 1, half = m_half): nothing else uses the grouped curve.
    EfficiencyProfile same = p;
    same.gemm_grouped = {1.0, p.gemm.m_half};
    const StepCost dense_step = StepCostModel(d, same).cost(s);
    const double dense_experts = std::max(flops / (100e12 * 0.7 * 32.0 / 48.0), memory);
    EXPECT_NEAR(dense_step.op(Op::MoeExperts).time.si(), dense_experts + 5 * 2e-6, 1e-12);
    EXPECT_NEAR(step.time.si() - dense_step.time.si(), compute - dense_experts, 1e-12);
}

TEST(StepCost, VllmPadsEachExpertToItsTileAndRunsTheAlignmentAndCombine) {
    // 5 prompt tokens on the tiny MoE (top-2 of 4): 10 rows over 4 × (1 − 0.5^5) = 3.875
    // touched experts, 2.58 rows each, padded to one 16-row tile: 62 rows computed at the
    // grouped efficiency of 16 rows (0.7 × 16 / 116). Then the alignment ((10 + 62 + 3.875)
    // int32) and the combine ((10 + 5) × 1024 bf16) streams at 0.8 TB/s, and five launches.
    const Deployment d = tiny_moe();
    const EfficiencyProfile p = flat_profile();
    BatchStats s;
    const StepCostModel vllm(d, p);
    vllm.add(s, PrefillChunk{5, 0});
    const StepCost step = vllm.cost(s);
    const OpCost& e = step.op(Op::MoeExperts);
    const double h = 1024, f = 2048, touched = 3.875;
    const double compute = 2.0 * 62.0 * 3.0 * h * f / (100e12 * 0.7 * 16.0 / 116.0);
    const double weights = touched * 3.0 * h * f * 2.0 + 10.0 * (2.0 * h + 6.0 * f) * 2.0;
    const double aux = ((10.0 + 62.0 + 3.875) * 4.0 + 15.0 * h * 2.0) / 0.8e12;
    EXPECT_NEAR(e.compute_time.si(), compute, 1e-12 * compute);
    EXPECT_NEAR(e.memory_time.si(), weights / 0.8e12 + aux, 1e-18 + 1e-12 * weights / 0.8e12);
    EXPECT_NEAR(e.time.si(), std::max(compute, weights / 0.8e12) + aux + 5 * 2e-6, 1e-15);
    EXPECT_NEAR(e.flops.si(), 2.0 * 10.0 * 3.0 * h * f, 1.0); // useful FLOPs, not padded ones
}

TEST(StepCost, VllmOnAnAmdGpuKeepsTheGroupedCurvesOwnPadding) {
    // AMD grouped curves are fitted on aiter's whole fused-MoE kernels (their sorting and
    // padding included): vLLM's experts there cost what TensorRT-LLM's unpadded ones do.
    Deployment d = tiny_moe();
    d.gpu.vendor = "amd";
    BatchStats s;
    const StepCostModel vllm(d, flat_profile());
    vllm.add(s, PrefillChunk{5, 0});
    d.engine.kind = EngineKind::TensorRtLlm;
    const StepCostModel trt(d, flat_profile());
    const StepCost vllm_step = vllm.cost(s);
    const StepCost trt_step = trt.cost(s);
    const OpCost& v = vllm_step.op(Op::MoeExperts);
    const OpCost& t = trt_step.op(Op::MoeExperts);
    EXPECT_EQ(v.time.si(), t.time.si());
    EXPECT_EQ(v.memory_time.si(), t.memory_time.si());
}

} // namespace grouped_moe

namespace step_shape {

using namespace gpuplan::model;

// A batch of `decodes` decode sequences of mean context `context`, plus `prefills` chunks of
// `chunk` tokens after `cached` cached ones.
BatchStats batch(const StepCostModel& m, int decodes, int context, int prefills, int chunk,
                 int cached) {
    BatchStats s;
    for (int i = 0; i < decodes; ++i) {
        m.add(s, DecodeSeq{context + 37 * i});
    }
    for (int i = 0; i < prefills; ++i) {
        m.add(s, PrefillChunk{chunk, cached + i});
    }
    return s;
}

// complete() over the shape of another batch of the same shape key gives the step's own cost to
// the bit: the memo of recent shapes in the simulator relies on it.
TEST(StepShape, AnotherBatchOfTheSameShapeGivesTheSameBits) {
    const std::vector<Deployment> deployments = {
        deploy(llama3_8b(), h100()), deploy(mixtral_8x7b(), h100(), 2),
        deploy(deepseek_v3(), h200(), 8), deploy(windowed_model(), h100(), 2, 2)};
    for (const Deployment& d : deployments) {
        const StepCostModel m(d, default_profile());
        for (const auto& [decodes, prefills] :
             {std::pair{0, 1}, std::pair{1, 0}, std::pair{48, 0}, std::pair{31, 2}}) {
            const BatchStats early = batch(m, decodes, 100, prefills, 512, 0);
            const BatchStats late = batch(m, decodes, 3000, prefills, 512, 0);
            ASSERT_EQ(m.shape_key(early), m.shape_key(late)) << d.model.name;
            StepShape shape;
            m.shape(early, shape);
            StepCost r;
            m.complete(shape, late, r);
            EXPECT_EQ(r, m.cost(late)) << d.model.name << ' ' << decodes << ' ' << prefills;
            if (decodes > 0) { // longer decode contexts read more KV
                EXPECT_GT(r.time.si(), m.cost(early).time.si()) << d.model.name;
            }
        }
    }
}

// The shape key holds what the operators other than attention read: the step's tokens and
// logit rows, not the contexts nor how the tokens split into prefill and decode.
TEST(StepShape, KeyHoldsTokensNotContexts) {
    const StepCostModel m(deploy(llama3_8b(), h100()), default_profile());
    EXPECT_EQ(m.shape_key(batch(m, 8, 100, 1, 256, 0)), m.shape_key(batch(m, 8, 900, 1, 256, 64)));
    const BatchStats split = batch(m, 9, 100, 1, 255, 0); // 264 tokens, 10 rows: as 8 + 2 × 128
    EXPECT_EQ(m.shape_key(batch(m, 8, 100, 2, 128, 0)), m.shape_key(split));
    StepShape other;
    m.shape(batch(m, 8, 100, 2, 128, 0), other);
    StepCost r;
    m.complete(other, split, r);
    EXPECT_EQ(r, m.cost(split));
    EXPECT_EQ(r.prefill_tokens, 255);
    EXPECT_EQ(r.sequences, 10);
    EXPECT_NE(m.shape_key(batch(m, 8, 100, 1, 256, 0)), m.shape_key(batch(m, 9, 100, 1, 256, 0)));
    EXPECT_NE(m.shape_key(batch(m, 8, 100, 1, 256, 0)), m.shape_key(batch(m, 8, 100, 1, 128, 0)));
}

} // namespace step_shape
