#pragma once
/// Roofline time of one kernel call on an efficiency profile: the per-kernel formulas of the
/// step-cost model (step_cost.cpp), written once here so that calibration (calib/) fits and
/// validates exactly what the model computes. Header-only; no allocation, no throwing.
///   time = max(FLOPs / (peak × eff_compute), bytes / (bandwidth × eff_memory))
/// (a weight-only GEMM may instead be two kernels, dequantize then GEMM; matmul_kernel_time).
/// Launch overhead is not included (the caller adds it per kernel).

#include "model/efficiency.hpp"
#include "model/hardware_spec.hpp"
#include "model/moe.hpp"
#include "model/units.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace gpuplan::model {

/// The compute and memory terms of one kernel and the larger of the two.
struct KernelTime {
    Seconds compute;
    Seconds memory;
    Seconds time; ///< max(compute, memory)
    friend bool operator==(const KernelTime&, const KernelTime&) = default;
};

/// The dense peak a kernel of `type` runs at: its own path, else bf16, fp16, fp32 (the same
/// fallback order as the step-cost model). nullopt when the device has none of them.
[[nodiscard]] inline std::optional<FlopsPerSecond> kernel_peak(const AcceleratorSpec& gpu,
                                                               ComputeType type) {
    for (ComputeType c : {type, ComputeType::Bf16, ComputeType::Fp16, ComputeType::Fp32}) {
        if (auto p = gpu.dense.for_type(c); p && p->si() > 0) {
            return *p;
        }
    }
    return std::nullopt;
}

/// The peak of a kernel class: its compute path's (model/gemm_class.hpp).
[[nodiscard]] inline std::optional<FlopsPerSecond> kernel_peak(const AcceleratorSpec& gpu,
                                                               GemmClass c) {
    return kernel_peak(gpu, compute_path(c));
}

/// Which kernel runs a matrix product: a dense tensor-core GEMM whose operands share one type
/// (cuBLAS, CUTLASS, DeepGEMM), a weight-only mixed-input kernel that dequantizes narrow
/// weights to 16 bit in registers (Marlin, Machete, AWQ/GPTQ, GGUF; FP8 weights without FP8
/// tensor cores), or a grouped MoE GEMM over the routed experts (CUTLASS grouped GEMM, Triton
/// fused_moe, DeepGEMM's grouped kernels), timed on the gemm_grouped row curve.
enum class GemmPath { Dense, WeightOnly, Grouped };

/// The compute efficiency of a product with `m` token rows (per group, for a grouped GEMM)
/// against an `nk`-element weight matrix: gemm.at for dense kernels,
/// weight_only_gemm_efficiency with gemm_weight_only for weight-only ones.
[[nodiscard]] inline double gemm_efficiency(double m, double nk, GemmClass type, GemmPath path,
                                            const EfficiencyProfile& p) {
    switch (path) {
    case GemmPath::WeightOnly:
        return weight_only_gemm_efficiency(p.gemm, p.gemm_weight_only, m, nk, type);
    case GemmPath::Grouped: return grouped_gemm_efficiency(p.gemm, p.gemm_grouped, m, nk, type);
    case GemmPath::Dense: break;
    }
    return p.gemm.at(m, nk, type);
}

/// The same for a compute path's own class.
[[nodiscard]] inline double gemm_efficiency(double m, double nk, ComputeType type, GemmPath path,
                                            const EfficiencyProfile& p) {
    return gemm_efficiency(m, nk, gemm_class(type), path, p);
}

/// Bytes per element of the 16-bit weights a dequantize-then-GEMM path writes and reads.
inline constexpr double kDequantizedWeightBytes = 2.0;

/// A matrix-product kernel (or a grouped GEMM: its total work, with `m` the mean rows per
/// group) of `flops` over `weight_elements` weights stored at `weight_bytes` each and
/// `activation_bytes` of inputs and outputs, against weight matrices of `nk` elements.
///   Dense: flops at peak × gemm.at(m, nk, type), bytes at bandwidth × memory.at(bytes).
///   Grouped: the same roofline with grouped_gemm_efficiency (m: rows per group).
///   WeightOnly: the faster of the fused mixed-input kernel (the same roofline with
///   weight_only_gemm_efficiency) and dequantize-then-GEMM: a stream kernel reading the packed
///   weights and writing them at 16 bit, then the dense GEMM reading 16-bit weights. The second
///   is what engines fall back to for large batches (vLLM's AWQ layer from 256 tokens,
///   llama.cpp's cuBLAS path); it bounds the fused kernel where its dequantization work no
///   longer hides behind the memory traffic. Its KernelTime is the sum of the two kernels, so
///   `time` is then compute + dequantization rather than a max.
[[nodiscard]] inline KernelTime
matmul_kernel_time(double flops, double weight_elements, double weight_bytes,
                   double activation_bytes, double m, double nk, GemmClass type, GemmPath path,
                   FlopsPerSecond peak, BytesPerSecond bandwidth, const EfficiencyProfile& p) {
    if (flops <= 0) {
        return {};
    }
    auto roofline = [&](double eff, double bytes) -> KernelTime {
        const Seconds ct = Flops(flops) / (peak * eff);
        const Seconds mt = Bytes(bytes) / (bandwidth * p.memory.at(bytes));
        return {ct, mt, std::max(ct, mt)};
    };
    const double stored = weight_elements * weight_bytes + activation_bytes;
    if (path != GemmPath::WeightOnly) {
        return roofline(gemm_efficiency(m, nk, type, path, p), stored);
    }
    const KernelTime fused =
        roofline(weight_only_gemm_efficiency(p.gemm, p.gemm_weight_only, m, nk, type), stored);
    const double dequant_bytes = weight_elements * (weight_bytes + kDequantizedWeightBytes);
    const Seconds dequant = Bytes(dequant_bytes) / (bandwidth * p.memory.at(dequant_bytes));
    const KernelTime dense = roofline(p.gemm.at(m, nk, type),
                                      weight_elements * kDequantizedWeightBytes + activation_bytes);
    if (fused.time <= dense.time + dequant) {
        return fused;
    }
    return {dense.compute, dense.memory + dequant, dense.time + dequant};
}

/// The same for a compute path's own class.
[[nodiscard]] inline KernelTime
matmul_kernel_time(double flops, double weight_elements, double weight_bytes,
                   double activation_bytes, double m, double nk, ComputeType type, GemmPath path,
                   FlopsPerSecond peak, BytesPerSecond bandwidth, const EfficiencyProfile& p) {
    return matmul_kernel_time(flops, weight_elements, weight_bytes, activation_bytes, m, nk,
                              gemm_class(type), path, peak, bandwidth, p);
}

/// One GEMM [m,k] x [k,n]: 2mkn FLOPs over k·n weights of `weight_bytes` each (the stored
/// bytes: 4.156 bits for AWQ g128) and (mk + mn) × act_bytes of activations; see
/// matmul_kernel_time.
[[nodiscard]] inline KernelTime gemm_kernel_time(double m, double k, double n, double weight_bytes,
                                                 double act_bytes, GemmClass type,
                                                 FlopsPerSecond peak, BytesPerSecond bandwidth,
                                                 const EfficiencyProfile& p,
                                                 GemmPath path = GemmPath::Dense) {
    if (m <= 0 || k <= 0 || n <= 0) {
        return {};
    }
    return matmul_kernel_time(2.0 * m * k * n, k * n, weight_bytes, (m * k + m * n) * act_bytes, m,
                              k * n, type, path, peak, bandwidth, p);
}

/// The same for a compute path's own class.
[[nodiscard]] inline KernelTime gemm_kernel_time(double m, double k, double n, double weight_bytes,
                                                 double act_bytes, ComputeType type,
                                                 FlopsPerSecond peak, BytesPerSecond bandwidth,
                                                 const EfficiencyProfile& p,
                                                 GemmPath path = GemmPath::Dense) {
    return gemm_kernel_time(m, k, n, weight_bytes, act_bytes, gemm_class(type), peak, bandwidth, p,
                            path);
}

/// The routed experts of one MoE layer as one grouped kernel: `rows` routed token copies
/// (tokens × top_k, on the busiest rank) over `groups` experts with at least one row, each
/// expert `mats` matrices of hidden × ffn weights (3: gate, up and down of a gated MLP; 2: up
/// and down). FLOPs 2 × rows × mats × hidden × ffn; the touched experts' weights
/// (groups × mats × hidden × ffn elements at `weight_bytes`); activations rows × (2 × hidden +
/// 2 × mats × ffn) at `act_bytes` (input and output of the block, the intermediate written and
/// read). `mats` = 1 is one grouped GEMM [rows, hidden] x [hidden, ffn] per group, activations
/// rows × (hidden + ffn). m = rows / groups, nk = hidden × ffn; see matmul_kernel_time (path:
/// Grouped, or WeightOnly for Marlin-style MoE kernels over quantized weights).
/// `block_m` > 0: each group's rows are padded to a multiple of that M tile before the GEMMs
/// (the Triton fused_moe's moe_align_block_size; moe_padded_rows), so the compute term runs
/// over the padded rows and the row curve is read at the padded rows per group; the weight and
/// activation traffic stay those of the real rows. 0: no padding.
[[nodiscard]] inline KernelTime
routed_experts_kernel_time(double rows, double groups, double hidden, double ffn, double mats,
                           double weight_bytes, double act_bytes, GemmClass type, GemmPath path,
                           FlopsPerSecond peak, BytesPerSecond bandwidth,
                           const EfficiencyProfile& p, double block_m = 0) {
    if (rows <= 0 || groups <= 0 || hidden <= 0 || ffn <= 0 || mats <= 0) {
        return {};
    }
    const double per_expert = mats * hidden * ffn;
    const double act =
        mats == 1.0 ? rows * (hidden + ffn) : rows * (2.0 * hidden + 2.0 * mats * ffn);
    const double computed = block_m > 0 ? moe_padded_rows(rows, groups, block_m) : rows;
    return matmul_kernel_time(2.0 * computed * per_expert, groups * per_expert, weight_bytes,
                              act * act_bytes, computed / groups, hidden * ffn, type, path, peak,
                              bandwidth, p);
}

/// The same for a compute path's own class.
[[nodiscard]] inline KernelTime
routed_experts_kernel_time(double rows, double groups, double hidden, double ffn, double mats,
                           double weight_bytes, double act_bytes, ComputeType type, GemmPath path,
                           FlopsPerSecond peak, BytesPerSecond bandwidth,
                           const EfficiencyProfile& p, double block_m = 0) {
    return routed_experts_kernel_time(rows, groups, hidden, ffn, mats, weight_bytes, act_bytes,
                                      gemm_class(type), path, peak, bandwidth, p, block_m);
}

/// Bytes per index of the Triton fused_moe's routing tensors (int32 topk_ids, sorted_token_ids,
/// expert_ids).
inline constexpr double kMoeIndexBytes = 4.0;

/// The Triton fused_moe's streaming kernels around its grouped GEMMs (vLLM
/// vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts; SGLang's copy): the
/// alignment (moe_align_block_size) reads the `rows` int32 expert ids (tokens × top_k) and
/// writes one int32 sorted index per padded row and one expert id per M tile, padded_rows ×
/// (1 + 1 / block_m) indices; the combine (moe_sum) reads the `rows` weighted expert outputs
/// and writes one row per token (rows / top_k), hidden elements of `act_bytes` each. Two
/// stream_kernel_time kernels, their times added (`time` is the sum). The activation's traffic
/// is in routed_experts_kernel_time; topk softmax is the router's (step_cost.cpp). Launches are
/// the caller's.
[[nodiscard]] inline KernelTime fused_moe_aux_kernel_time(double rows, double top_k,
                                                          double padded_rows, double block_m,
                                                          double hidden, double act_bytes,
                                                          BytesPerSecond bandwidth,
                                                          const EfficiencyProfile& p);

/// A streaming kernel moving `bytes` (read + written) at bandwidth × memory.at(bytes).
[[nodiscard]] inline KernelTime stream_kernel_time(double bytes, BytesPerSecond bandwidth,
                                                   const EfficiencyProfile& p) {
    if (bytes <= 0) {
        return {};
    }
    const Seconds mt = Bytes(bytes) / (bandwidth * p.memory.at(bytes));
    return {Seconds(0), mt, mt};
}

inline KernelTime fused_moe_aux_kernel_time(double rows, double top_k, double padded_rows,
                                            double block_m, double hidden, double act_bytes,
                                            BytesPerSecond bandwidth, const EfficiencyProfile& p) {
    if (rows <= 0 || top_k <= 0 || hidden <= 0) {
        return {};
    }
    const double tiles = block_m > 0 ? padded_rows / block_m : 0.0;
    const KernelTime align =
        stream_kernel_time((rows + padded_rows + tiles) * kMoeIndexBytes, bandwidth, p);
    const KernelTime sum =
        stream_kernel_time((rows + rows / top_k) * hidden * act_bytes, bandwidth, p);
    return {Seconds(0), align.memory + sum.memory, align.time + sum.time};
}

/// Causal query-key pairs of a chunk of n new tokens after c cached ones, each query seeing
/// at most `window` keys (window <= 0: no window): Σ_{j=c+1}^{c+n} min(j, window).
[[nodiscard]] inline double causal_query_key_pairs(double c, double n, double window = 0) {
    if (window <= 0 || c + n <= window) {
        return n * c + n * (n + 1) / 2;
    }
    if (c >= window) {
        return n * window;
    }
    return (window * (window + 1) - c * (c + 1)) / 2 + (c + n - window) * window;
}

/// Prefill attention over `flops` (2 × heads × (d_qk + d_v) per query-key pair) at
/// peak × attention_prefill.at(effective_seq), where effective_seq = sqrt(2 × pairs / chunks),
/// and `bytes` (Q, O, K, V traffic) at bandwidth × memory.at(bytes).
[[nodiscard]] inline KernelTime
attention_prefill_kernel_time(double flops, double bytes, double effective_seq, FlopsPerSecond peak,
                              BytesPerSecond bandwidth, const EfficiencyProfile& p) {
    if (flops <= 0) {
        return {};
    }
    const Seconds ct = Flops(flops) / (peak * p.attention_prefill.at(effective_seq));
    const Seconds mt = Bytes(bytes) / (bandwidth * p.memory.at(bytes));
    return {ct, mt, std::max(ct, mt)};
}

/// Decode attention: `bytes` (KV cache read plus Q and O) at bandwidth ×
/// attention_decode.at(bytes); `flops` at peak × attention_prefill.max (decode is memory-bound
/// except for huge head counts).
[[nodiscard]] inline KernelTime attention_decode_kernel_time(double flops, double bytes,
                                                             FlopsPerSecond peak,
                                                             BytesPerSecond bandwidth,
                                                             const EfficiencyProfile& p) {
    if (bytes <= 0) {
        return {};
    }
    const Seconds ct = Flops(flops) / (peak * std::clamp(p.attention_prefill.max, 1e-9, 1.0));
    const Seconds mt = Bytes(bytes) / (bandwidth * p.attention_decode.at(bytes));
    return {ct, mt, std::max(ct, mt)};
}

} // namespace gpuplan::model
