#pragma once
/// Prefill/decode disaggregation against co-location at the same GPU count (`gpuplan plan` on a
/// scenario with cluster.disaggregation; docs/simulator.md, "Prefill/decode disaggregation").
///
/// The GPUs of the scenario's two pools are split every way the layouts allow: P prefill
/// replicas of tp_p and D decode replicas of tp_d with P × tp_p + D × tp_d = G (tp_p and tp_d
/// from 1, 2, 4, 8 where the model fits), and G / tp co-located replicas of the scenario's own
/// accelerator for each tp that fits. Each is sized analytically (model::estimate_disaggregated,
/// model::estimate_serving); the `max_simulations` with the most capacity are simulated with the
/// scenario's workload, and ranked: meeting every SLO first, then the lower rent per hour (when
/// every pool has a gpu_hour), then the higher SLO attainment, then the lower P99 TPOT.

#include "model/disaggregation.hpp"
#include "model/efficiency.hpp"
#include "model/scenario.hpp"

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace gpuplan::plan {

/// One layout of the G GPUs.
struct DisaggLayout {
    bool disaggregated = false;
    int prefill_replicas = 0, prefill_tp = 0; ///< disaggregated
    int decode_replicas = 0, decode_tp = 0;   ///< disaggregated
    int replicas = 0, tp = 0;                 ///< co-located
    int gpus = 0;
    std::string name; ///< "2P x tp4 : 2D x tp4" or "4 x tp4 co-located"
    // Analytic.
    double capacity_rps = 0;
    std::string bottleneck; ///< disaggregated: prefill, decode or link; co-located: "replicas"
    // Simulated (when `simulated`).
    bool simulated = false;
    bool meets_slo = false;
    double slo_attainment = 0;
    double ttft_p99_s = 0;
    double tpot_p99_s = 0;
    double e2e_p99_s = 0;
    double output_tok_s = 0;
    double link_utilisation = 0;         ///< disaggregated
    double transfer_mean_s = 0;          ///< disaggregated
    std::optional<double> rent_per_hour; ///< Σ GPUs × gpu_hour (nullopt: a pool has no rent)
    std::string currency;
    friend bool operator==(const DisaggLayout&, const DisaggLayout&) = default;
};

struct DisaggComparison {
    int gpus = 0;
    std::vector<DisaggLayout> ranked;        ///< simulated, best first
    std::vector<DisaggLayout> not_simulated; ///< enumerated, left out by capacity
    std::string verdict;                     ///< which wins and why, with the figures
    friend bool operator==(const DisaggComparison&, const DisaggComparison&) = default;
};

/// Compares the layouts for `s` (which must have cluster.disaggregation). `profile_for` picks
/// each accelerator's efficiency profile. Throws InvalidArgument without the block.
[[nodiscard]] DisaggComparison compare_disaggregation(
    const model::Scenario& s,
    const std::function<model::EfficiencyProfile(const model::AcceleratorSpec&)>& profile_for,
    int threads = 0, int max_simulations = 8, std::stop_token stop = {});

/// The scenario's own pools in the analytic model: model::estimate_disaggregated of its mean
/// request (model::analytic_request) at its offered rate (0: closed loop or none), with the
/// prefill accelerator's profile, as compare_disaggregation sizes each split. What `estimate`
/// prints and the app shows; nullopt without cluster.disaggregation. Throws as
/// estimate_disaggregated does.
[[nodiscard]] std::optional<model::DisaggregatedEstimate> scenario_disaggregation(
    const model::Scenario& s,
    const std::function<model::EfficiencyProfile(const model::AcceleratorSpec&)>& profile_for);

} // namespace gpuplan::plan
