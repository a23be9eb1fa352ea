#pragma once
/// The diagnosis chain `gpuplan diagnose` and the app's Diagnose tab share (docs/diagnose.md):
/// model::diagnose at the observed load, then the percentiles the metrics' histograms give set
/// beside the simulator's at the observed demand instead of the analytic model's single value.
/// The observation files are read by hwdb::read_observations.

#include "model/diagnose.hpp"
#include "model/efficiency.hpp"
#include "model/scenario.hpp"

#include <stop_token>

namespace gpuplan::plan {

/// Diagnoses the scenario's deployment serving its workload from `obs` with `profile`
/// (model::diagnose), then, when the metrics gave histogram percentiles, re-predicts them with
/// the simulator: a closed loop of the observed running + waiting requests at the observed
/// lengths. When `stop` is requested during the simulation the percentiles keep the analytic
/// values (the caller reports the interruption). Throws as model::diagnose does.
[[nodiscard]] model::Diagnosis diagnose_scenario(const model::Scenario& s,
                                                 const model::EfficiencyProfile& profile,
                                                 const model::Observations& obs,
                                                 std::stop_token stop = {});

} // namespace gpuplan::plan
