#pragma once
/// Autoscaling of a serving cluster (issue 15, item 1): the `cluster.autoscaler:` block and its
/// one decision rule. Every `interval` the autoscaler scrapes one metric averaged over the
/// replicas that are up and not draining, and sets the desired replica count as Kubernetes'
/// Horizontal Pod Autoscaler does (kubernetes.io, "Horizontal Pod Autoscaling", Algorithm
/// details):
///     desired = ceil(current × metric / target)
/// unless metric / target is within `tolerance` of 1, clamped to [min_replicas, max_replicas].
/// A new replica is up `provisioning` + the cluster's cold start (weights ÷ load_bandwidth +
/// startup, model::ColdStart) after the decision; a replica chosen for removal is drained (takes
/// no new requests, leaves when empty). Scale-downs wait `cooldown` after the last change. Header
/// plus model/autoscaler.cpp; its validity rule is
/// model::check_autoscaler (model/validity.hpp).

#include "model/enum_names.hpp"
#include "model/units.hpp"

namespace gpuplan::model {

/// What the autoscaler scales on (averaged over the replicas that are up and not draining).
enum class ScaleMetric {
    QueueLength, ///< requests waiting (gateway and engine queues) per replica
    Utilisation, ///< running sequences / max_num_seqs
    KvUse,       ///< fraction of KV blocks in use
};

/// The scenario spellings (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<ScaleMetric>, 3> enum_names(ScaleMetric) noexcept {
    return {
        EnumName<ScaleMetric>{"queue_length", ScaleMetric::QueueLength},
        EnumName<ScaleMetric>{"utilisation", ScaleMetric::Utilisation},
        EnumName<ScaleMetric>{"kv_use", ScaleMetric::KvUse},
    };
}

/// "queue_length", "utilisation", "kv_use".
[[nodiscard]] inline const char* to_string(ScaleMetric m) noexcept {
    return name_of(m);
}

/// The `cluster.autoscaler:` block. Defaults are Kubernetes' HPA defaults where it has one.
struct Autoscaler {
    ScaleMetric metric = ScaleMetric::Utilisation;
    double target = 0.7; ///< the metric's target value per replica (> 0)
    /// Between scrapes (and so decisions): HPA's --horizontal-pod-autoscaler-sync-period, 15 s.
    Seconds interval{15};
    /// From a scale-up decision to a machine ready to load weights (instance provisioning); the
    /// cold start (cluster.cold_start) follows.
    Seconds provisioning{0};
    /// No scale-down until this long after the last scale-up or scale-down: HPA's scale-down
    /// stabilization window, 300 s.
    Seconds cooldown{300};
    /// No change while |metric / target − 1| ≤ tolerance: HPA's default, 0.1.
    double tolerance = 0.1;
    int min_replicas = 1;
    int max_replicas = 1;
    friend bool operator==(const Autoscaler&, const Autoscaler&) = default;
};

/// The HPA rule: ceil(current × metric / target), `current` when |metric / target − 1| ≤
/// tolerance, clamped to [min_replicas, max_replicas]. `current` ≥ 1, metric ≥ 0.
[[nodiscard]] int desired_replicas(const Autoscaler& a, int current, double metric);

} // namespace gpuplan::model
