#pragma once
/// Efficiency profiles: how far below the datasheet peaks real kernels run, per operator class,
/// as saturating functions of the work size. The roofline model divides by `peak × efficiency`.
/// Every curve parameter is a plain field so a fitter (calib/) can set it from measurements.

#include "model/gemm_class.hpp"
#include "model/precision.hpp"
#include "model/units.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

namespace gpuplan::model {

/// eff(x) = max × x / (x + half): 0 at x = 0, max/2 at x = half, approaching max for large x.
/// `half` = 0 gives the constant `max`.
struct SaturatingCurve {
    double max = 1.0;  ///< plateau efficiency, a fraction of the peak (0, 1]
    double half = 0.0; ///< size at which the curve reaches max/2, in the caller's unit
    /// The efficiency at size x (x <= 0 gives `max` when half is 0, else 0), never above 1: no
    /// kernel beats the datasheet peak for long (a profile's `max` may be read up to 2).
    [[nodiscard]] double at(double x) const {
        if (half <= 0.0) {
            return std::min(max, 1.0);
        }
        return x <= 0.0 ? 0.0 : std::min(max * x / (x + half), 1.0);
    }
    friend bool operator==(const SaturatingCurve&, const SaturatingCurve&) = default;
};

/// Number of ComputeType values (for per-type tables).
inline constexpr std::size_t kComputeTypeCount = 7;

/// Dense GEMM (cuBLAS / CUTLASS / DeepGEMM) compute efficiency:
/// eff = e_max × scale(class) × M / (M + m_half) × NK / (NK + nk_half),
/// with M the token rows of the product and NK = N × K the weight matrix elements, and
/// scale(class) the kernel class's own scale (model/gemm_class.hpp): dtype_scale of a compute
/// path, or class_scale of a block-scaled format (MXFP8, NVFP4, MXFP4) when the profile has one,
/// else the scale of the path it runs on.
struct GemmEfficiency {
    double e_max = 0.7;
    double m_half = 16.0; ///< tokens
    double nk_half = 0.0; ///< weight elements; 0: no dependence on the matrix size
    /// Multiplier on e_max per ComputeType (indexed by its enum value): lower-precision kernels
    /// usually reach a smaller fraction of their (higher) peak.
    std::array<double, kComputeTypeCount> dtype_scale{1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
    /// Own scales of the block-scaled classes (index: GemmClass − Mxfp8: mxfp8, nvfp4, mxfp4);
    /// nullopt: the class runs on its compute path's dtype_scale (fp8, fp4).
    std::array<std::optional<double>, kBlockScaledClassCount> class_scale{};
    /// The multiplier on e_max of a kernel class: its own scale, else its compute path's.
    [[nodiscard]] double scale(GemmClass c) const;
    /// Whether `c` takes a scale of its own (a compute path always does; a block-scaled class
    /// when class_scale has it) rather than falling back to its compute path's.
    [[nodiscard]] bool has_own_scale(GemmClass c) const;
    /// The efficiency of an M × K × N product of the given class, in (0, 1] (capped at 1 when
    /// e_max × scale exceeds it).
    [[nodiscard]] double at(double m, double nk, GemmClass c) const;
    /// The same for a compute path (its own class).
    [[nodiscard]] double at(double m, double nk, ComputeType type) const {
        return at(m, nk, gemm_class(type));
    }
    friend bool operator==(const GemmEfficiency&, const GemmEfficiency&) = default;
};

/// Compute efficiency of a weight-only (mixed-input) GEMM — Marlin, Machete, AWQ/GPTQ, GGUF
/// dequantizing kernels: quantized weights are expanded to 16 bit in registers and fed to the
/// 16-bit tensor cores. It is the dense curve `g` with its row factor M / (M + m_half) replaced
/// by `rows.at(M)`: the same plateau, matrix-size and data-type terms, but the row efficiency of
/// a kernel that keeps skinny products memory-bound. In (0, 1] for M > 0.
[[nodiscard]] double weight_only_gemm_efficiency(const GemmEfficiency& g,
                                                 const SaturatingCurve& rows, double m, double nk,
                                                 GemmClass type);
[[nodiscard]] inline double weight_only_gemm_efficiency(const GemmEfficiency& g,
                                                        const SaturatingCurve& rows, double m,
                                                        double nk, ComputeType type) {
    return weight_only_gemm_efficiency(g, rows, m, nk, gemm_class(type));
}

/// Compute efficiency of a grouped MoE GEMM (CUTLASS grouped GEMM, Triton fused_moe, DeepGEMM's
/// grouped kernels, aiter's fused MoE): one launch over the routed experts, each group a product
/// of its own rows against its expert's weights. It is the dense curve `g` with its row factor
/// M / (M + m_half) replaced by `rows.at(M)`, M the mean rows per group (tokens per expert): the
/// same plateau, matrix-size and data-type terms, but the row efficiency of a kernel whose
/// groups are padded to its M tile and scheduled group by group, which runs far below a dense
/// GEMM of the same M at few tokens per expert. In (0, 1] for M > 0.
[[nodiscard]] double grouped_gemm_efficiency(const GemmEfficiency& g, const SaturatingCurve& rows,
                                             double m, double nk, GemmClass type);
[[nodiscard]] inline double grouped_gemm_efficiency(const GemmEfficiency& g,
                                                    const SaturatingCurve& rows, double m,
                                                    double nk, ComputeType type) {
    return grouped_gemm_efficiency(g, rows, m, nk, gemm_class(type));
}

/// When a GEMM of class `c` runs on its compute path's scale because the profile has none of
/// its own: "nvfp4 GEMMs take the fp4 scale (the profile has no nvfp4 scale of its own)";
/// nullopt when the class has its own scale.
[[nodiscard]] std::optional<std::string> gemm_scale_fallback_note(const GemmEfficiency& g,
                                                                  GemmClass c);

/// Collective communication (NCCL, custom all-reduce): achieved link bandwidth fraction as a
/// function of the message size in bytes, plus a fixed software cost per collective.
struct CommEfficiency {
    SaturatingCurve bandwidth{0.8, 0.0}; ///< x: message bytes
    Seconds collective_overhead{10e-6};  ///< per collective call (kernel launch, sync)
    friend bool operator==(const CommEfficiency&, const CommEfficiency&) = default;
};

/// Where a profile's numbers come from.
enum class ProvenanceKind { SpecSheet, Microbenchmark, EngineProfile };

/// "spec-sheet", "microbenchmark", "engine-profile".
[[nodiscard]] const char* to_string(ProvenanceKind kind);

/// The origin of a profile: its kind, the file it was loaded or fitted from ("" when built
/// in), and a one-line description (GPU, driver, date, command when measured).
struct Provenance {
    ProvenanceKind kind = ProvenanceKind::SpecSheet;
    std::string file;
    std::string description;
    friend bool operator==(const Provenance&, const Provenance&) = default;
};

/// Relative error of the profile's predictions on held-back measurements: estimates carry it
/// as their uncertainty (t × (1 ± mape) typical, t × (1 ± p90) for 9 in 10 cases).
struct ErrorBand {
    double mape = 0.0;        ///< mean absolute percentage error, as a fraction (0.15 = 15 %)
    double p90 = 0.0;         ///< 90th percentile of the absolute relative error
    int points = 0;           ///< validation points behind the figures (0: not validated)
    std::string validated_on; ///< what the residuals were measured on
    friend bool operator==(const ErrorBand&, const ErrorBand&) = default;
};

/// Efficiency per operator class, the kernel-launch and per-step overheads, and where they come
/// from. A value type: copy and modify freely.
struct EfficiencyProfile {
    std::string name;
    GemmEfficiency gemm;
    /// Weight-only GEMMs (int4/int8 weights with 16-bit activations, FP8 weights on GPUs without
    /// FP8 tensor cores): row efficiency vs the token rows M, relative to the dense plateau;
    /// see weight_only_gemm_efficiency. The defaults are derived in efficiency.cpp.
    SaturatingCurve gemm_weight_only{0.9, 8.0};
    /// Grouped MoE GEMMs (the routed experts): row efficiency vs the mean rows per expert,
    /// relative to the dense plateau; see grouped_gemm_efficiency. The defaults are derived in
    /// efficiency.cpp.
    SaturatingCurve gemm_grouped{1.0, 100.0};
    /// Streaming kernels (weight reads of small-M GEMMs, norms, elementwise, embedding
    /// gathers, sampling): achieved fraction of memory bandwidth vs bytes per kernel call.
    SaturatingCurve memory{0.85, 2.0 * 1024 * 1024};
    /// Prefill attention (FlashAttention): compute efficiency vs the effective sequence length
    /// sqrt(2 × query-key pairs) of the kernel call, in tokens.
    SaturatingCurve attention_prefill{0.7, 1024.0};
    /// Decode attention (paged, FlashInfer / FlashAttention): bandwidth efficiency vs KV bytes
    /// read per kernel call.
    SaturatingCurve attention_decode{0.9, 4.0 * 1024 * 1024};
    CommEfficiency comm;
    Seconds launch_overhead{4e-6};         ///< per kernel launched eagerly
    Seconds graph_launch_overhead{1.5e-6}; ///< per kernel replayed from a CUDA graph
    Seconds step_overhead{0.5e-3}; ///< per engine step: scheduling, input prep, sampling host work
    Provenance provenance;
    ErrorBand error_band;
    friend bool operator==(const EfficiencyProfile&, const EfficiencyProfile&) = default;
};

/// The built-in profile: round efficiencies from vendor peaks and published kernel figures,
/// not fitted to any measurement (provenance "spec-sheet defaults"; the constants and their
/// sources are documented in efficiency.cpp). Its error band is a stated guess.
[[nodiscard]] EfficiencyProfile default_profile();

} // namespace gpuplan::model
