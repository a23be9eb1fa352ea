#pragma once
/// Roofline time of one kernel call on an efficiency profile: the per-kernel formulas of the
/// step-cost model (step_cost.cpp), written once here so that calibration (calib/) fits and
/// validates exactly what the model computes. Header-only; no allocation, no throwing.
///   time = max(FLOPs / (peak × eff_compute), bytes / (bandwidth × eff_memory))
/// Launch overhead is not included (the caller adds it per kernel).

#include "model/efficiency.hpp"
#include "model/hardware_spec.hpp"
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

/// One GEMM [m,k] x [k,n]: 2mkn FLOPs at peak × gemm.at(m, k·n, type); bytes = the weight
/// (k·n × weight_bytes per element) plus input and output activations ((mk + mn) × act_bytes)
/// at bandwidth × memory.at(bytes).
[[nodiscard]] inline KernelTime gemm_kernel_time(double m, double k, double n, double weight_bytes,
                                                 double act_bytes, ComputeType type,
                                                 FlopsPerSecond peak, BytesPerSecond bandwidth,
                                                 const EfficiencyProfile& p) {
    if (m <= 0 || k <= 0 || n <= 0) {
        return {};
    }
    const double flops = 2.0 * m * k * n;
    const double bytes = k * n * weight_bytes + (m * k + m * n) * act_bytes;
    const Seconds ct = Flops(flops) / (peak * p.gemm.at(m, k * n, type));
    const Seconds mt = Bytes(bytes) / (bandwidth * p.memory.at(bytes));
    return {ct, mt, std::max(ct, mt)};
}

/// A streaming kernel moving `bytes` (read + written) at bandwidth × memory.at(bytes).
[[nodiscard]] inline KernelTime stream_kernel_time(double bytes, BytesPerSecond bandwidth,
                                                   const EfficiencyProfile& p) {
    if (bytes <= 0) {
        return {};
    }
    const Seconds mt = Bytes(bytes) / (bandwidth * p.memory.at(bytes));
    return {Seconds(0), mt, mt};
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
    const Seconds ct = Flops(flops) / (peak * std::max(p.attention_prefill.max, 1e-9));
    const Seconds mt = Bytes(bytes) / (bandwidth * p.attention_decode.at(bytes));
    return {ct, mt, std::max(ct, mt)};
}

} // namespace gpuplan::model
