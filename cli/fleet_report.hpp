#pragma once
/// `gpuplan plan FILE --fleet`: the fleet over the scenario's horizon and the cheapest mix of
/// owned and rented replicas (plan/fleet.hpp; docs/fleet.md, keys in docs/cli-json.md).

#include "cli/cli_context.hpp"
#include "model/fleet.hpp"
#include "model/scenario.hpp"
#include "plan/fleet.hpp"

#include <nlohmann/json.hpp>

namespace gpuplan::cli {

/// The plan --fleet --json object of `s`: the setup (traffic, one replica's capacity and
/// prices), the cost curve against the owned replicas, the answer's totals, months, days and
/// hours of the day.
[[nodiscard]] nlohmann::json fleet_json(const model::Scenario& s, const plan::FleetSetup& setup,
                                        const model::FleetPlan& p);

/// Prints the fleet report of `s` over `config` (text, or JSON when `json`); returns the exit
/// code. Throws InputError as plan::fleet_setup and model::plan_fleet do.
int run_fleet_plan(CliContext& ctx, const model::Scenario& s, const model::FleetConfig& config,
                   bool json);

} // namespace gpuplan::cli
