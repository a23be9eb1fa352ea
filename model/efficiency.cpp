#include "model/efficiency.hpp"

namespace gpuplan::model {

namespace {

// The default curves. None is fitted: each is a round number read off published kernel
// measurements and stated as a default for calib/ to replace.
//
// GEMM plateau 0.70 of the dense peak: cuBLAS BF16 on H100 SXM reaches roughly 650-750 of 989
// TFLOPS on large shapes, and LLMCompass (Zhang et al., ISCA 2024, fig. 5) shows A100 matmuls at
// ~0.7-0.8 of peak. Half saturation at M = 16 rows, the row granularity of the m16n8k16
// tensor-core MMA (and of Marlin's weight-only kernels): a GEMM with fewer rows costs about as
// much compute as 16, so skinny decode GEMMs stay memory-bound, as measured. The H100 FP8
// DeepGEMM rows of BLIS's H100 GEMM table (inference-sim/inference-sim@a410740f:
// bench_data/gemm/h100/data.csv) run ~2x slower than max(compute, memory) of this curve around
// M = 256-512, where neither roof is reached; a fitted profile should capture that transition.
constexpr double kGemmMax = 0.70;
constexpr double kGemmMHalf = 16.0;
// FP8 DeepGEMM plateaus at 0.63 of the FP8 peak in the BLIS data (0.63 / 0.70 = 0.9); INT8 and
// FP4 paths are assumed alike [U].
constexpr double kLowPrecisionScale = 0.9;

// Weight-only GEMMs (Marlin and the kernels built on it: vLLM's gptq_marlin/awq_marlin, Machete)
// dequantize in registers and run the same 16-bit MMA as the dense kernel, but keep small-M
// products memory-bound far longer than a cuBLAS-fitted row curve says. Frantar et al., "MARLIN:
// Mixed-Precision Auto-Regressive Parallel Inference on Large Language Models" (arXiv:2408.11743,
// abstract; IST-DASLab/marlin README): on a 72k x 18k layer at groupsize 128 on an A10 (125
// TFLOPS fp16 dense, 600 GB/s, ECC off) the speedup over fp16 stays close to the ideal 3.87x
// (4.125 bits per weight) up to batch 16-32 and decreases gradually for batch 64-128. Within 5 %
// of ideal at M = 32 needs 2 x 32 / (125e12 x eff) <= 1.05 x 0.516 / (600e9 x 0.85) (bandwidth
// plateau as below), i.e. eff(32) >= 0.48. The plateau relative to the dense one is 0.9 [U]:
// the dequantization instructions take issue slots from the MMA once compute binds; no
// published kernel ratio is used, and matmul_kernel_time caps the kernel by dequantize-then-
// GEMM, so the value only matters between the two regimes. With the 0.70 dense plateau,
// 0.63 x 32 / (32 + half) >= 0.48 gives half <= 10 rows; half saturation at 8 rows (half an
// m16n8k16 MMA tile) meets it and gives 2.1x at batch 64 and 1.1x at batch 128 on the same A10
// arithmetic: "gradually decreasing" speedups.
constexpr double kWeightOnlyRowMax = 0.9;
constexpr double kWeightOnlyRowHalf = 8.0;

// Grouped MoE GEMMs: DeepGEMM's README (deepseek-ai/DeepGEMM, "Performance", the tables as
// of its first release, 2025-02) gives FP8 grouped GEMMs on an H800 (the H100's SM90 tensor
// cores, 1979 TFLOPS dense FP8): masked layout, 4 groups of 256 rows, 815-932 TFLOPS; 2 x 512,
// 916-1040; 1 x 1024, 925-1233; contiguous layout, 8 x 4096 and 4 x 8192 rows, 1093-1297
// (N x K = 4096 x 7168 and 7168 x 2048). Relative to the default FP8 dense plateau (0.70 x 0.9
// of the peak, 1247 TFLOPS) that is 0.65-0.75 at 256 rows per group, 0.73-0.83 at 512,
// 0.74-0.99 at 1024 and 0.88-1.04 at 4096-8192; max x M / (M + half) with max 1.0 and half
// 100 rows gives 0.72, 0.84, 0.91 and 0.98. Below 256 rows per group no NVIDIA kernel-level
// set was at hand; the curve extrapolates, and the AMD fits (aiter's fused-MoE tables,
// hwdb/profiles/mi300x.yaml and mi355x.yaml) are where it was checked at 1-256 rows. A dense GEMM
// of the same M reaches M / (M + 16): 6x the grouped efficiency at 1 row per expert, 3.8x at 16.
constexpr double kGroupedRowMax = 1.0;
constexpr double kGroupedRowHalf = 100.0;

// Streaming bandwidth plateau 0.85 of the datasheet bandwidth (STREAM-like copies reach ~0.85-0.9
// on HBM3; decode attention in BLIS's bench_data/mha/decode reaches 0.93 at 60+ MB per call) and
// half saturation at 2 MiB per kernel (kernels too small to fill every SM).
constexpr double kMemoryMax = 0.85;
constexpr double kMemoryHalf = 2.0 * 1024 * 1024;

// FlashAttention-3 prefill on H100
// (inference-sim/inference-sim@a410740f:bench_data/mha/prefill/h100, BF16): mfu 0.64 at 4K tokens,
// 0.73 at 8K, 0.77 at 16K; FlashAttention-2 on A100 reaches ~0.7 (Dao 2023, fig. 4). A 0.7
// plateau with half saturation at 1K tokens is a middle ground for unknown GPUs.
constexpr double kAttnPrefillMax = 0.7;
constexpr double kAttnPrefillHalf = 1024.0;

// FlashInfer paged decode on H100
// (inference-sim/inference-sim@a410740f:bench_data/mha/decode/h100): 0.93 of 3.35 TB/s once a call
// reads 60+ MB; small calls are dominated by fixed costs, which the launch overhead covers.
constexpr double kAttnDecodeMax = 0.9;
constexpr double kAttnDecodeHalf = 4.0 * 1024 * 1024;

// NCCL ring all-reduce reaches ~0.8 of the per-direction link bandwidth as bus bandwidth on
// NVLink for large messages (nccl-tests README, "busbw"); small messages are latency-bound:
// microsoft/vidur@7d475133:data/profiling/network/h100_dgx/all_reduce.csv shows 20-40 µs for
// 2 KB-2 MB on 8 H100s, i.e. roughly 10 µs of software overhead on top of the per-hop latency.
constexpr double kCommMax = 0.8;
constexpr double kCollectiveOverhead = 10e-6;

// Launch costs: ~4 µs per eager PyTorch kernel launch on the host, ~1.5 µs between kernels
// replayed from a CUDA graph (NVIDIA CUDA Graphs blog, 2019). Per-step engine overhead 0.5 ms:
// vLLM V1's scheduler, input preparation and sampling not hidden by async scheduling
// (vllm/v1/core/sched/async_scheduler.py; no engine documents it as a constant, docs/engines.md
// §2.5) [U].
constexpr double kLaunch = 4e-6;
constexpr double kGraphLaunch = 1.5e-6;
constexpr double kStepOverhead = 0.5e-3;

// No validation has been run on these constants; the band is a stated guess, to be replaced
// by the residuals of a fitted profile.
constexpr double kGuessMape = 0.30;
constexpr double kGuessP90 = 0.50;

} // namespace

double GemmEfficiency::scale(GemmClass c) const {
    if (is_block_scaled(c)) {
        if (const auto& own = class_scale[static_cast<std::size_t>(c) - kComputeTypeCount]) {
            return *own;
        }
    }
    const auto i = static_cast<std::size_t>(compute_path(c));
    return i < dtype_scale.size() ? dtype_scale[i] : 1.0;
}

bool GemmEfficiency::has_own_scale(GemmClass c) const {
    return !is_block_scaled(c) ||
           class_scale[static_cast<std::size_t>(c) - kComputeTypeCount].has_value();
}

std::optional<std::string> gemm_scale_fallback_note(const GemmEfficiency& g, GemmClass c) {
    if (g.has_own_scale(c)) {
        return std::nullopt;
    }
    const std::string cls(to_string(c));
    const std::string path(to_string(compute_path(c)));
    return cls + " GEMMs take the " + path + " scale (the profile has no " + cls +
           " scale of its own)";
}

double GemmEfficiency::at(double m, double nk, GemmClass c) const {
    double eff = e_max * scale(c);
    if (m_half > 0.0) {
        eff *= m > 0.0 ? m / (m + m_half) : 0.0;
    }
    if (nk_half > 0.0) {
        eff *= nk > 0.0 ? nk / (nk + nk_half) : 0.0;
    }
    return std::min(eff, 1.0);
}

double grouped_gemm_efficiency(const GemmEfficiency& g, const SaturatingCurve& rows, double m,
                               double nk, GemmClass type) {
    // The same form as the weight-only curve: the dense plateau, data-type scale and matrix-size
    // term, with the row factor replaced.
    return weight_only_gemm_efficiency(g, rows, m, nk, type);
}

double weight_only_gemm_efficiency(const GemmEfficiency& g, const SaturatingCurve& rows, double m,
                                   double nk, GemmClass type) {
    double eff = g.e_max * g.scale(type) * (m > 0.0 ? rows.at(m) : 0.0);
    if (g.nk_half > 0.0) {
        eff *= nk > 0.0 ? nk / (nk + g.nk_half) : 0.0;
    }
    return std::min(eff, 1.0);
}

const char* to_string(ProvenanceKind kind) {
    switch (kind) {
    case ProvenanceKind::SpecSheet: return "spec-sheet";
    case ProvenanceKind::Microbenchmark: return "microbenchmark";
    case ProvenanceKind::EngineProfile: return "engine-profile";
    }
    return "spec-sheet";
}

EfficiencyProfile default_profile() {
    EfficiencyProfile p;
    p.name = "default";
    p.gemm.e_max = kGemmMax;
    p.gemm.m_half = kGemmMHalf;
    p.gemm.nk_half = 0.0;
    p.gemm.dtype_scale.fill(1.0);
    p.gemm.dtype_scale[static_cast<std::size_t>(ComputeType::Fp8)] = kLowPrecisionScale;
    p.gemm.dtype_scale[static_cast<std::size_t>(ComputeType::Int8)] = kLowPrecisionScale;
    p.gemm.dtype_scale[static_cast<std::size_t>(ComputeType::Fp4)] = kLowPrecisionScale;
    p.gemm_weight_only = {kWeightOnlyRowMax, kWeightOnlyRowHalf};
    p.gemm_grouped = {kGroupedRowMax, kGroupedRowHalf};
    p.memory = {kMemoryMax, kMemoryHalf};
    p.attention_prefill = {kAttnPrefillMax, kAttnPrefillHalf};
    p.attention_decode = {kAttnDecodeMax, kAttnDecodeHalf};
    p.comm.bandwidth = {kCommMax, 0.0};
    p.comm.collective_overhead = Seconds(kCollectiveOverhead);
    p.launch_overhead = Seconds(kLaunch);
    p.graph_launch_overhead = Seconds(kGraphLaunch);
    p.step_overhead = Seconds(kStepOverhead);
    p.provenance = {ProvenanceKind::SpecSheet, "",
                    "spec-sheet defaults: datasheet peaks with round efficiencies from published "
                    "kernel figures, not fitted"};
    p.error_band = {kGuessMape, kGuessP90, 0, "not validated: a stated guess"};
    return p;
}

} // namespace gpuplan::model
