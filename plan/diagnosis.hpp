#pragma once
/// The diagnosis chain `gpuplan diagnose` and the app's Diagnose tab share (docs/diagnose.md):
/// model::diagnose at the observed load, then the percentiles the metrics' histograms give set
/// beside the simulator's at the observed demand instead of the analytic model's single value.
/// The observation files are read by hwdb::read_observations.

#include "model/diagnose.hpp"
#include "model/efficiency.hpp"
#include "model/scenario.hpp"

#include "model/power.hpp"
#include "model/training.hpp"

#include <optional>
#include <stop_token>

namespace gpuplan::plan {

/// What the diagnosis needs beyond the scenario that a front end looks up (hwdb, prices).
struct DiagnosisInputs {
    /// The scenario's node (host power, rack units) for the rack row; nullopt: GPUs only
    /// (model::unknown_node).
    std::optional<model::NodePower> node;
    /// A training job's prices and power limit as `gpuplan train` builds them; nullopt: the
    /// scenario's PUE and power model only.
    std::optional<model::TrainingCostInputs> training;
};

/// Diagnoses the scenario's deployment serving its workload from `obs` with `profile`
/// (model::diagnose), then, when the metrics gave histogram percentiles, re-predicts them with
/// the simulator: a closed loop of the observed running + waiting requests at the observed
/// lengths. When `stop` is requested during the simulation the percentiles keep the analytic
/// values (the caller reports the interruption). A training log with a scenario that has a
/// `training:` block diagnoses the training job instead (model::diagnose_training). With GPU
/// power draw and a rack budget, the rack row (rack-budget-exceeded, model::plan_racks at the
/// observed power) is added to either. Throws as model::diagnose does; InvalidArgument for a
/// training log without a `training:` block.
[[nodiscard]] model::Diagnosis diagnose_scenario(const model::Scenario& s,
                                                 const model::EfficiencyProfile& profile,
                                                 const model::Observations& obs,
                                                 std::stop_token stop = {},
                                                 const DiagnosisInputs& in = {});

} // namespace gpuplan::plan
