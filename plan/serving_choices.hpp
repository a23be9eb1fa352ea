#pragma once
/// Serving features as choices of `gpuplan plan` (docs/plan.md, "KV offload and LoRA slots"),
/// compared on the plan's answer as the router is (plan/routing.hpp): each choice is simulated
/// on the answer's configuration with the plan's requests and seed (plan/choice_run.hpp), and
/// the one meeting the SLO, then with the higher SLO attainment, then the lower TTFT at the
/// SLO's percentile wins; ties keep the cheaper choice (the list order: fewer resources first).
///
/// - KV offload tiers (engine.kv_offload): off, and a host tier of 1×, 2× and 4× the GPU's KV
///   pool (the scenario's NVMe tier kept), beside the scenario's own tiers when they differ. A
///   choice with engine.kv_offload, or with prefix caching on and shared prefixes (where the
///   tiers could hold what the GPU evicts).
/// - Speculative decoding's k (engine.speculative.num_speculative_tokens), ranked on TPOT.
/// - LoRA slots (engine.lora.max_loras): the scenario's, ×2 and ×4, at most the adapters; each
///   slot's memory (model::lora_reserved_bytes) comes out of the KV pool.

#include "model/scenario.hpp"
#include "sim/simulate.hpp"

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

namespace gpuplan::plan {

/// One choice on the configuration, simulated.
struct ServingOption {
    std::string name;       ///< "off", "host 2x", "scenario's", "max_loras 32"
    double value = 0;       ///< offload: host bytes per GPU (0: off); LoRA: max_loras
    bool scenario = false;  ///< the scenario's own setting
    bool simulated = false; ///< false: it did not fit or did not run
    bool meets_slo = false; ///< every class within its SLOs, nothing failed
    double slo_attainment = 0;
    double ttft_mean_s = 0;
    double ttft_at_p_s = 0;     ///< TTFT at the SLO's percentile
    double tpot_at_p_s = 0;     ///< TPOT at the SLO's percentile
    std::int64_t kv_tokens = 0; ///< one replica's GPU KV pool (model::estimate_memory)
    // KV offload: the prompt tokens of first admissions served by each tier.
    double prefix_hit_rate = 0; ///< every tier together
    double gpu_hit_rate = 0;
    double host_hit_rate = 0;
    double nvme_hit_rate = 0;
    // LoRA.
    double lora_hit_rate = 0;        ///< requests whose adapter was in a GPU slot
    std::int64_t lora_loads = 0;     ///< host → GPU adapter loads
    std::int64_t kv_tokens_lost = 0; ///< KV tokens the extra slots take against the scenario's
    friend bool operator==(const ServingOption&, const ServingOption&) = default;
};

struct ServingChoice {
    std::string dimension;              ///< "kv_offload", "max_loras" or "num_speculative_tokens"
    bool choice = false;                ///< false: nothing to compare (verdict says why)
    std::string chosen;                 ///< the winner's name
    std::string verdict;                ///< which wins and why, with the figures
    std::vector<ServingOption> options; ///< best first
    friend bool operator==(const ServingChoice&, const ServingChoice&) = default;
};

/// KV offload on/off and host tier sizes on `configured` (plan::configured_scenario of the
/// answer). `options` as for compare_routers. Not a choice with prefix caching off, or with
/// neither engine.kv_offload nor shared prefixes.
[[nodiscard]] ServingChoice compare_kv_offload(const model::Scenario& configured,
                                               const sim::SimOptions& options, int threads = 0,
                                               std::stop_token stop = {});

/// engine.lora.max_loras: the scenario's, ×2 and ×4 (at most the adapters). Not a choice
/// without engine.lora or when the scenario's slots already hold every adapter.
[[nodiscard]] ServingChoice compare_max_loras(const model::Scenario& configured,
                                              const sim::SimOptions& options, int threads = 0,
                                              std::stop_token stop = {});

/// engine.speculative's num_speculative_tokens k: half the scenario's (at least 1), its own and
/// twice it (per-position acceptance is measured for its k positions: only fewer, truncated),
/// ranked on TPOT at the percentile instead of TTFT. Not a choice without engine.speculative.
[[nodiscard]] ServingChoice compare_speculative_tokens(const model::Scenario& configured,
                                                       const sim::SimOptions& options,
                                                       int threads = 0, std::stop_token stop = {});

} // namespace gpuplan::plan
