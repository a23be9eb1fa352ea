#pragma once
/// The `engine.lora` block as a value: the LoRA adapters a server is started with (vLLM's
/// --enable-lora with --lora-modules) and the engine's limits on them (--max-loras,
/// --max-lora-rank, --max-cpu-loras), with the popularity of the adapters in the requests.
/// Kept apart from model/lora.hpp (the formulas) so that deployment.hpp can hold the block.

#include "model/enum_names.hpp"
#include "model/units.hpp"

#include <array>
#include <optional>
#include <vector>

namespace gpuplan::model {

/// A linear layer an adapter modifies (PEFT's target_modules names for Llama-style models).
enum class LoraModule {
    QProj,
    KProj,
    VProj,
    OProj,
    GateProj,
    UpProj,
    DownProj,
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<LoraModule>, 7> enum_names(LoraModule) noexcept {
    return {
        EnumName<LoraModule>{"q_proj", LoraModule::QProj},
        EnumName<LoraModule>{"k_proj", LoraModule::KProj},
        EnumName<LoraModule>{"v_proj", LoraModule::VProj},
        EnumName<LoraModule>{"o_proj", LoraModule::OProj},
        EnumName<LoraModule>{"gate_proj", LoraModule::GateProj},
        EnumName<LoraModule>{"up_proj", LoraModule::UpProj},
        EnumName<LoraModule>{"down_proj", LoraModule::DownProj},
    };
}

/// How requests pick their adapter.
enum class LoraPopularity {
    Uniform, ///< each of the N adapters equally often
    Zipf,    ///< adapter i (1-based) with probability i^-s / Σ_j j^-s
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<LoraPopularity>, 2>
enum_names(LoraPopularity) noexcept {
    return {
        EnumName<LoraPopularity>{"uniform", LoraPopularity::Uniform},
        EnumName<LoraPopularity>{"zipf", LoraPopularity::Zipf},
    };
}

/// vLLM's default --max-lora-rank (vllm/config/lora.py @a78dc92f).
inline constexpr int kDefaultMaxLoraRank = 16;
/// Host-to-GPU copy rate of an adapter when the accelerator names no host link (PCIe 4.0 x16
/// achieved, as the swap default).
inline constexpr double kDefaultLoraLoadBandwidth = 25e9;
/// Rate at which an adapter not in the CPU cache is read from local disk: 2 GB/s, an
/// assumption for a datacenter NVMe drive reading safetensors files (sequential reads reach
/// 3-7 GB/s; parsing and pinning cost some of that).
inline constexpr double kDefaultLoraDiskBandwidth = 2e9;

/// The `engine.lora` block. Every request names one of `adapters` adapters, all of rank `rank`
/// on `target_modules` in every decoder layer.
struct LoraServingConfig {
    int adapters = 1; ///< distinct adapters served
    int rank = 16;    ///< r of every adapter, at most max_lora_rank
    std::vector<LoraModule> target_modules{LoraModule::QProj, LoraModule::KProj, LoraModule::VProj,
                                           LoraModule::OProj};
    int max_loras = 1;                ///< GPU slots: distinct adapters in one batch (vLLM 1)
    std::optional<int> max_lora_rank; ///< rank each slot is sized for; nullopt: 16 (vLLM)
    std::optional<int> max_cpu_loras; ///< host cache of adapters; nullopt: max_loras (vLLM)
    LoraPopularity popularity = LoraPopularity::Uniform;
    double zipf_s = 1.0; ///< Zipf exponent s > 0 (popularity zipf)
    /// Host-to-GPU copy rate per GPU; nullopt: the accelerator's host link (resolved by the
    /// loader), else kDefaultLoraLoadBandwidth.
    std::optional<BytesPerSecond> load_bandwidth;
    /// Disk read rate for an adapter not in the CPU cache; nullopt: kDefaultLoraDiskBandwidth.
    std::optional<BytesPerSecond> disk_bandwidth;
    friend bool operator==(const LoraServingConfig&, const LoraServingConfig&) = default;
};

/// max_lora_rank resolved (16 when not given).
[[nodiscard]] inline int max_lora_rank(const LoraServingConfig& c) {
    return c.max_lora_rank.value_or(kDefaultMaxLoraRank);
}
/// max_cpu_loras resolved (max_loras when not given).
[[nodiscard]] inline int max_cpu_loras(const LoraServingConfig& c) {
    return c.max_cpu_loras.value_or(c.max_loras);
}

/// Throws InvalidArgument naming the key and the fix when the block is inconsistent: a count
/// below 1, a rank above max_lora_rank, a max_lora_rank vLLM does not accept (1, 8, 16, 32,
/// 64, 128, 256, 320, 512), max_cpu_loras below max_loras, no or repeated target modules,
/// zipf_s not above 0, or a bandwidth not above 0.
void validate(const LoraServingConfig& c);

} // namespace gpuplan::model
