#pragma once
/// The `engine.speculative` block as a value, and the closed forms of speculative decoding's
/// acceptance (model/speculative.hpp costs the steps). Kept apart so that deployment.hpp can hold
/// the block without depending on the step-cost model.

#include "model/enum_names.hpp"
#include "model/model_spec.hpp"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::model {

/// Who proposes the draft tokens.
enum class SpeculativeMethod {
    DraftModel, ///< a smaller model of the same tokenizer runs k decode steps
    Eagle,      ///< an EAGLE head: one decoder layer on the target's hidden states
    Mtp,        ///< a multi-token-prediction module shipped with the model (DeepSeek-V3)
    Ngram,      ///< n-gram lookup in the prompt and the output so far (CPU, no GPU time)
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<SpeculativeMethod>, 4>
enum_names(SpeculativeMethod) noexcept {
    return {
        EnumName<SpeculativeMethod>{"draft_model", SpeculativeMethod::DraftModel},
        EnumName<SpeculativeMethod>{"eagle", SpeculativeMethod::Eagle},
        EnumName<SpeculativeMethod>{"mtp", SpeculativeMethod::Mtp},
        EnumName<SpeculativeMethod>{"ngram", SpeculativeMethod::Ngram},
    };
}

/// name_of(method): "draft_model", "eagle", "mtp", "ngram".
[[nodiscard]] const char* to_string(SpeculativeMethod method);

/// value_of<SpeculativeMethod>(name); nullopt when unknown.
[[nodiscard]] std::optional<SpeculativeMethod> find_speculative_method(std::string_view name);

/// The `engine.speculative` block. Acceptance is either per position (`acceptance[i]`: the
/// probability that draft token i + 1 is accepted given that tokens 1..i were, as measured by
/// vLLM's per-position acceptance counters) or one mean rate α for every position (independent
/// acceptance, Leviathan et al. §3.1); neither given: default_acceptance_rate(method).
struct SpeculativeConfig {
    SpeculativeMethod method = SpeculativeMethod::Eagle;
    /// Draft tokens per step, k >= 1. nullopt: default_num_speculative_tokens(method).
    std::optional<int> num_speculative_tokens;
    std::optional<double> acceptance_rate; ///< α in [0, 1), the same at every position
    std::vector<double> acceptance;        ///< per position, each in [0, 1]; length k when given
    std::string draft_model;               ///< catalog name of the draft (DraftModel only)
    std::optional<ModelSpec> draft;        ///< the draft's architecture, resolved by hwdb
    friend bool operator==(const SpeculativeConfig&, const SpeculativeConfig&) = default;
};

/// Default k per method: 4 for a draft model and n-gram lookup, 3 for EAGLE, 1 for MTP
/// (DeepSeek-V3 ships one MTP module). These follow the examples in vLLM's speculative
/// decoding documentation; they are conventions, not measurements.
[[nodiscard]] int default_num_speculative_tokens(SpeculativeMethod method);

/// Default α per method, from published acceptance measurements (the sources and which parts
/// are assumptions are in speculative.cpp and docs/simulator.md): draft model 0.7, EAGLE 0.75,
/// MTP 0.85, n-gram 0.4.
[[nodiscard]] double default_acceptance_rate(SpeculativeMethod method);

/// Expected tokens a sequence advances per step with independent acceptance α and k drafts:
/// Σ_{i=0..k} α^i = (1 − α^(k+1)) / (1 − α) (Leviathan et al. eq. 1). α in [0, 1), k >= 0.
[[nodiscard]] double expected_tokens_per_step(double alpha, int k);

/// Expected tokens per step with per-position conditional acceptance a_1..a_k:
/// 1 + Σ_i Π_{j<=i} a_j (the bonus token plus each accepted prefix).
[[nodiscard]] double expected_tokens_per_step(std::span<const double> acceptance);

/// k resolved (the default when not given).
[[nodiscard]] int speculative_tokens(const SpeculativeConfig& c);

/// The per-position acceptance the config implies, length k: the list as given, or α (given or
/// default) at every position.
[[nodiscard]] std::vector<double> acceptance_by_position(const SpeculativeConfig& c);

/// Throws InvalidArgument naming the key and the fix when the config is inconsistent: k < 1,
/// α outside [0, 1), a position outside [0, 1], a list whose length is not k, both a list and a
/// rate, a draft model without its name or architecture, or a draft name for another method.
void validate(const SpeculativeConfig& c);

} // namespace gpuplan::model
