#pragma once
/// What the autoscaler did in a run (cluster.autoscaler, model/autoscaler.hpp): the replica
/// count over time, the replica-seconds it paid for and their cost; and what replica failures
/// did (cluster.failures, model/replica_failures.hpp). Header only; part of SimResult.

#include "model/money.hpp"
#include "model/units.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace gpuplan::sim {

/// A change of the replica count at `t`: `replicas` provisioned or up and not draining from
/// then on (scale-ups count from the decision, scale-downs from the start of the drain).
struct ReplicaCountPoint {
    Seconds t;
    int replicas = 0;
    friend bool operator==(const ReplicaCountPoint&, const ReplicaCountPoint&) = default;
};

/// The autoscaler's account of a run.
struct AutoscalerResult {
    /// Σ over replicas of (removal, or the end of the run − the scale-up decision, or 0 for the
    /// initial replicas): the time each replica was paid for, provisioning and cold start
    /// included.
    double replica_seconds = 0;
    /// replica_seconds / 3600 × GPUs per replica × the scenario's gpu_hour (nullopt: no price).
    std::optional<model::Money> cost;
    int gpus_per_replica = 1;
    /// With cluster.pools: replica_seconds of each pool (their sum is replica_seconds).
    std::vector<double> pool_replica_seconds;
    int scale_ups = 0;     ///< replicas added
    int scale_downs = 0;   ///< replicas drained and removed (or cancelled while provisioning)
    int peak_replicas = 0; ///< the most replicas provisioned or up at once
    std::int64_t scrapes = 0;
    std::vector<ReplicaCountPoint> timeline; ///< from t = 0, one point per change
    friend bool operator==(const AutoscalerResult&, const AutoscalerResult&) = default;
};

/// Replica failures in a run.
struct FailureResult {
    int needed = 0;                    ///< replicas configured (N)
    int spares = 0;                    ///< hot spares (k)
    Seconds mtbf;                      ///< per replica, as resolved
    Seconds mttr;                      ///< as resolved
    int failures = 0;                  ///< of serving replicas and idle spares
    int takeovers = 0;                 ///< a spare (or a repaired unit) started serving
    std::int64_t requests_lost = 0;    ///< in flight on a failed replica (in_flight: lose)
    std::int64_t requests_retried = 0; ///< in flight on a failed replica, sent again
    /// Fraction of the run with at least `needed` replicas up and serving.
    double availability = 0;
    /// Time-average of the replicas up and serving / needed.
    double mean_up_fraction = 0;
    /// model::fleet_availability(N, k, MTBF / (MTBF + MTTR)): the steady state the run should
    /// approach (instant takeover; a cold start lowers the measured figure). 0 with the
    /// autoscaler (replacements, not repairs).
    double expected_availability = 0;
    std::vector<Seconds> failed_at; ///< when each serving replica failed, in order
    /// Degraded links (degraded_link): how often a replica's link went down, and the
    /// replica-seconds served with a degraded link.
    int link_degradations = 0;
    double degraded_replica_seconds = 0;
    friend bool operator==(const FailureResult&, const FailureResult&) = default;
};

} // namespace gpuplan::sim
