#pragma once
/// The router as a choice of `gpuplan plan` (docs/plan.md, "The router"): with several replicas
/// and a workload that shares prefixes, least outstanding, longest cached prefix and the
/// weighted mix are each judged on the chosen configuration, by the closed-form prefix hit rate
/// (model/prefix_routing.hpp) and by the simulator with the scenario's workload, and the one
/// that meets the SLO with the fewest replicas (then the higher SLO attainment, then the lower
/// TTFT at the SLO's percentile) wins. Without shared prefixes every prompt is unique, the
/// prefix-aware routers reduce to least outstanding and nothing is simulated.

#include "model/scenario.hpp"
#include "sim/simulate.hpp"

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

namespace gpuplan::plan {

/// One router on the configuration.
struct RouterOption {
    std::string router;           ///< the scenario spelling (cluster.router)
    double weight = 0;            ///< weighted: the prefix-cache share of the score
    double analytic_hit_rate = 0; ///< closed form (0 when there is none)
    bool simulated = false;
    bool meets_slo = false;    ///< at `replicas`: every class within its SLOs, nothing failed
    double slo_attainment = 0; ///< at `replicas`
    double hit_rate = 0;       ///< simulated prefix hit rate at `replicas`
    double ttft_mean_s = 0;    ///< simulated, at `replicas`
    double ttft_at_p_s = 0;    ///< TTFT at the SLO's percentile
    double tpot_at_p_s = 0;    ///< TPOT at the SLO's percentile
    double request_imbalance = 0;
    int replicas = 0; ///< the configuration's replicas
    /// The fewest replicas found meeting the SLO with this router (replicas − 1 tried when it
    /// meets at `replicas`); 0: it does not meet it at `replicas`.
    int fewest_replicas = 0;
    friend bool operator==(const RouterOption&, const RouterOption&) = default;
};

struct RouterComparison {
    bool choice = false;               ///< several replicas, prefix caching on, and shared prefixes
    int replicas = 0;                  ///< the configuration's replicas
    std::string chosen;                ///< the router the answer takes
    std::string verdict;               ///< which wins and why, with the figures
    bool closed_form = false;          ///< the analytic hit rates apply (no agent sessions)
    double prefix_tokens = 0;          ///< distinct shared-prefix tokens of the workload
    std::int64_t cache_tokens = 0;     ///< one replica's KV pool
    std::vector<RouterOption> options; ///< best first
    friend bool operator==(const RouterComparison&, const RouterComparison&) = default;
};

/// Compares the routers on `configured` (a scenario of the configuration, e.g.
/// plan::configured_scenario of the search's answer). `options` carries the profile, the node
/// and the requests per simulation (nullopt: the scenario's). Simulations run on `threads`
/// workers: at most three at the configuration's replicas and three at one replica fewer.
[[nodiscard]] RouterComparison compare_routers(const model::Scenario& configured,
                                               const sim::SimOptions& options, int threads = 0,
                                               std::stop_token stop = {});

} // namespace gpuplan::plan
