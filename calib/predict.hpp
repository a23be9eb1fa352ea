#pragma once
/// The model's prediction of a measured time: the per-kernel roofline of model/kernel_time.hpp
/// and the collectives of model/comm.hpp, on an efficiency profile. Fitting and validation both
/// go through these functions, so a fitted profile is judged by exactly what the model computes.

#include "hwdb/profile_loader.hpp"
#include "model/efficiency.hpp"
#include "model/hardware_spec.hpp"
#include "model/kernel_time.hpp"
#include "model/measurement.hpp"
#include "model/precision.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::calib {

using model::Measurement;
using model::OpClass;

/// The hardware measurements ran on: the accelerator and every link a point may name.
struct Hardware {
    model::AcceleratorSpec gpu;
    std::vector<model::InterconnectSpec> links;
    /// The link with this name or alias (case-insensitive); null when unknown.
    [[nodiscard]] const model::InterconnectSpec* find_link(std::string_view name) const;
};

/// A measurement reduced to the numbers the roofline needs, so that a fit can re-evaluate it
/// cheaply for every trial profile.
struct PreparedPoint {
    OpClass op_class = OpClass::Gemm;
    model::ComputeType type = model::ComputeType::Bf16;
    /// GEMMs: the kernel class whose scale applies (the format's own class on a native kernel,
    /// the compute path's on a weight-only one); the peak is `type`'s.
    model::GemmClass cls = model::GemmClass::Bf16;
    double peak = 0;                                             ///< FLOP/s of the compute path
    double bandwidth = 0;                                        ///< device memory B/s
    double m = 0, k = 0, n = 0, weight_bytes = 2, act_bytes = 2; ///< GEMM
    /// Grouped GEMM: m routed rows (tokens × top_k), k hidden, n ffn, over `groups` touched
    /// experts of `mats` matrices each (model::routed_experts_kernel_time).
    double groups = 0, mats = 3;
    /// Grouped GEMM timed as the Triton fused_moe block (ops vllm_fused_moe, sglang_fused_moe):
    /// `tokens` entering, `experts` on the GPU, `top_k`; see predict_kernel.
    bool triton_moe = false;
    double tokens = 0, experts = 0, top_k = 0;
    /// GEMM: a weight-only (mixed-input) kernel, timed on the gemm_weight_only row curve;
    /// grouped GEMM: Grouped (or WeightOnly for quantized integer weights).
    model::GemmPath path = model::GemmPath::Dense;
    double flops = 0; ///< attention FLOPs
    double bytes = 0; ///< streamed bytes, attention traffic or message size
    double x = 0;     ///< prefill attention: effective sequence length
    int group = 1;    ///< collective: GPUs
    double link_bandwidth = 0, link_latency = 0; ///< collective: per direction, per hop
    bool host = false;                           ///< host-timed: a harness offset applies
    double time_s = 0;                           ///< measured
};

/// Prepares a point; nullopt (with the reason in `why` when given) when the model cannot
/// predict it: unknown data type or link, no peak for the compute path, a missing shape.
[[nodiscard]] std::optional<PreparedPoint> prepare(const Measurement& m, const Hardware& hw,
                                                   std::string* why = nullptr);

/// The model's kernel (or collective) time in seconds, without harness offsets.
[[nodiscard]] double predict_kernel(const PreparedPoint& p, const model::EfficiencyProfile& prof);

/// The predicted measured time: kernel time plus, for host-timed points, `host_offset`.
[[nodiscard]] inline double predict(const PreparedPoint& p, const model::EfficiencyProfile& prof,
                                    double host_offset) {
    return predict_kernel(p, prof) + (p.host ? host_offset : 0.0);
}

/// The offset applied to host-timed points of `source`: the fitted one when `offsets` has it,
/// else the profile's launch overhead.
[[nodiscard]] double host_offset_for(const std::string& source,
                                     const std::vector<hwdb::TimingOffset>& offsets,
                                     const model::EfficiencyProfile& prof);

/// Predicts one measurement; nullopt when it cannot be predicted (see prepare).
[[nodiscard]] std::optional<double>
predict_time(const Measurement& m, const Hardware& hw, const model::EfficiencyProfile& prof,
             const std::vector<hwdb::TimingOffset>& offsets = {});

/// Bytes per element and compute path of a data type name ("fp16", "bf16", "fp8", ...).
struct DtypeInfo {
    double bytes = 2;
    model::ComputeType type = model::ComputeType::Bf16;
    bool weight_only = false; ///< an integer weight-only format (GPTQ, AWQ, GGUF)
    /// The kernel class of a native GEMM in this format (model/gemm_class.hpp).
    model::GemmClass cls = model::GemmClass::Bf16;
};
[[nodiscard]] std::optional<DtypeInfo> dtype_info(std::string_view name);

} // namespace gpuplan::calib
