#pragma once
/// Replica failures in the simulator (issue 15, item 2): the `cluster.failures:` block. Each of
/// the cluster's replicas and `spares` hot spares fails after an exponentially distributed time
/// with mean `mtbf` and is back after an exponentially distributed repair with mean `mttr`, the
/// assumptions of model/availability.hpp, whose closed form A(N, k) the run's measured
/// availability is checked against. The defaults are model/failures.hpp's: the per-GPU MTBF
/// implied by Llama 3's 419 unexpected interruptions in 54 days on 16,384 H100 GPUs
/// (arXiv:2407.21783, §3.3.4) divided by the GPUs of a replica, and a 24 h repair. Header only.

#include "model/enum_names.hpp"
#include "model/units.hpp"

#include <optional>

namespace gpuplan::model {

/// What happens to the requests of a replica that fails.
enum class FailedRequests {
    Retry, ///< sent again through the gateway (the client retries; progress is lost)
    Lose,  ///< lost (reported as failed)
};

/// The scenario spellings (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<FailedRequests>, 2>
enum_names(FailedRequests) noexcept {
    return {
        EnumName<FailedRequests>{"retry", FailedRequests::Retry},
        EnumName<FailedRequests>{"lose", FailedRequests::Lose},
    };
}

/// The `cluster.failures:` block.
struct ReplicaFailures {
    std::optional<Seconds> mtbf; ///< per replica; nullopt: kDefaultGpuMtbf ÷ GPUs per replica
    std::optional<Seconds> mttr; ///< repair or replacement; nullopt: kDefaultRepairTime
    int spares = 0; ///< hot spares: one takes a failed replica's place after its cold start
    FailedRequests in_flight = FailedRequests::Retry;
    friend bool operator==(const ReplicaFailures&, const ReplicaFailures&) = default;
};

} // namespace gpuplan::model
