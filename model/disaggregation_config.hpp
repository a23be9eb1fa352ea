#pragma once
/// The input of prefill/decode disaggregation (`cluster.disaggregation`, model/disaggregation.hpp
/// for its figures). Header only.

#include "model/enum_names.hpp"
#include "model/hardware_spec.hpp"
#include "model/replica_pool.hpp"

#include <array>

namespace gpuplan::model {

/// How a prompt's KV cache leaves the prefill replica.
enum class KvTransferMode {
    Whole,     ///< after the last prefill step, all layers at once
    Layerwise, ///< each layer's KV as soon as it is computed, overlapped with the prefill
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<KvTransferMode>, 2>
enum_names(KvTransferMode) noexcept {
    return {
        EnumName<KvTransferMode>{"whole", KvTransferMode::Whole},
        EnumName<KvTransferMode>{"layerwise", KvTransferMode::Layerwise},
    };
}

/// "whole", "layerwise".
[[nodiscard]] inline const char* to_string(KvTransferMode m) {
    return name_of(m);
}

/// `cluster.disaggregation`: the two pools and the link between them. The pools' classes and
/// max_prompt_tokens are not used (every request goes through both pools).
struct Disaggregation {
    ReplicaPool prefill;
    ReplicaPool decode;
    /// The link each GPU sends its share of the KV over (hwdb interconnect, or a bandwidth per
    /// direction and latency given in the scenario).
    InterconnectSpec link;
    KvTransferMode transfer = KvTransferMode::Layerwise;
    friend bool operator==(const Disaggregation&, const Disaggregation&) = default;
};

} // namespace gpuplan::model
