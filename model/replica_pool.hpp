#pragma once
/// Heterogeneous fleets (issue 15, item 3): pools of replicas on different accelerators behind
/// the one router, each serving the request classes it lists and prompts up to a length, with
/// its own rent per GPU-hour. A pool's replicas run the scenario's model, precisions and engine
/// on the pool's hardware and tensor-parallel size. Header only.

#include "model/deployment.hpp"
#include "model/plan_config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// One pool of identical replicas.
struct ReplicaPool {
    std::string name;
    /// The accelerator (and optional node) with its links, and `gpu_hour` (rent per GPU-hour,
    /// the pool's cost); the purchase prices are not used.
    PlanCandidate hardware;
    int replicas = 1;
    int tp = 1; ///< GPUs of one replica (tensor parallel; no pipeline parallelism in pools)
    /// Class names it serves; empty: every class.
    std::vector<std::string> classes;
    /// Longest prompt it takes, tokens; nullopt: any. Length buckets: a request goes to the
    /// pools serving its class whose max_prompt_tokens is the smallest at or above its prompt
    /// (none counts as above every prompt); when no pool takes its length, it is rejected (or
    /// goes to the cloud endpoint as fallback): no pool takes a prompt over its bound.
    std::optional<int> max_prompt_tokens;
    /// With cluster.autoscaler: the bounds of this pool's replica count (each pool is scaled on
    /// its own replicas' metric, as one Horizontal Pod Autoscaler per deployment); nullopt:
    /// `replicas` (the pool does not scale that way). 1 <= min <= replicas <= max.
    std::optional<int> min_replicas;
    std::optional<int> max_replicas;
    /// Owned (true) or rented (false, the default). A rented pool pays `gpu_hour` for the
    /// GPU-hours it used; an owned one pays for every GPU it owns (max_replicas, or replicas
    /// when it does not scale, × tp) over the whole run whether used or not, `gpu_hour` then
    /// being the amortised owned cost per GPU-hour.
    bool owned = false;
    friend bool operator==(const ReplicaPool&, const ReplicaPool&) = default;
};

/// The deployment of one replica of `pool`: `base` (model, precisions, engine) on the pool's
/// accelerator, node links and tp, one replica (dp 1, pp 1, ep 1).
[[nodiscard]] inline Deployment pool_deployment(const Deployment& base, const ReplicaPool& pool) {
    Deployment d = base;
    d.gpu = pool.hardware.gpu;
    d.gpus_per_node = pool.hardware.gpus_per_node;
    d.intra_node_link = pool.hardware.intra_node_link;
    d.inter_node_link = pool.hardware.inter_node_link;
    d.par = Parallelism{};
    d.par.tp = pool.tp;
    d.clocks = ClockFactors{};
    return d;
}

} // namespace gpuplan::model
