#pragma once
/// Replica failures in the simulator (issue 15, item 2): the `cluster.failures:` block. Each of
/// the cluster's replicas and `spares` hot spares fails after an exponentially distributed time
/// with mean `mtbf` and is back after an exponentially distributed repair with mean `mttr`, the
/// assumptions of model/availability.hpp, whose closed form A(N, k) the run's measured
/// availability is checked against. The defaults are model/failures.hpp's: the per-GPU MTBF
/// implied by Llama 3's 419 unexpected interruptions in 54 days on 16,384 H100 GPUs
/// (arXiv:2407.21783, §3.3.4) divided by the GPUs of a replica, and a 24 h repair. Header only.

#include "model/deployment.hpp"
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

/// A degraded link (`cluster.failures.degraded_link:`): instead of killing a replica, a failure
/// leaves it serving with its GPU-to-GPU link (Deployment::intra_node_link, NVLink) at
/// `bandwidth_factor` of its bandwidth until the repair, after an exponentially distributed
/// time with mean `mtbf` per replica, for an exponentially distributed repair with mean `mttr`.
/// The default factor is one NVLink lane of an H100's 18 down (17/18; NVIDIA H100 Tensor Core
/// GPU datasheet: 18 NVLink 4 links, 900 GB/s).
struct LinkDegradation {
    Seconds mtbf{0};                       ///< per replica, > 0
    std::optional<Seconds> mttr;           ///< nullopt: the block's repair time
    double bandwidth_factor = 17.0 / 18.0; ///< in (0, 1]
    friend bool operator==(const LinkDegradation&, const LinkDegradation&) = default;
};

/// `d` with its GPU-to-GPU link at `factor` of its bandwidth (a degraded link); latency as is.
[[nodiscard]] inline Deployment degraded_link(const Deployment& d, double factor) {
    Deployment out = d;
    out.intra_node_link.bandwidth_per_direction =
        d.intra_node_link.bandwidth_per_direction * factor;
    return out;
}

/// The `cluster.failures:` block.
struct ReplicaFailures {
    std::optional<Seconds> mtbf; ///< per replica; nullopt: kDefaultGpuMtbf ÷ GPUs per replica
    std::optional<Seconds> mttr; ///< repair or replacement; nullopt: kDefaultRepairTime
    int spares = 0; ///< hot spares: one takes a failed replica's place after its cold start
    FailedRequests in_flight = FailedRequests::Retry;
    std::optional<LinkDegradation> degraded_link; ///< link failures that slow a replica
    friend bool operator==(const ReplicaFailures&, const ReplicaFailures&) = default;
};

} // namespace gpuplan::model
