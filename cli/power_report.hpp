#pragma once
/// The power flags shared by `estimate`, `rack` and `cost` (--gpu-cap --node-cap --rack-budget
/// --pue --psu-efficiency --nodes-per-rack), the scenario's node as power figures, and the
/// power section of the reports (human and JSON; keys in docs/cli-json.md).

#include "cli/cli_context.hpp"
#include "cli/options.hpp"
#include "model/power.hpp"
#include "model/scenario.hpp"
#include "model/training.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>
#include <string>

namespace gpuplan::cli {

/// Values of the power flags as given (nullopt: not given).
struct PowerFlags {
    std::optional<std::string> gpu_cap, node_cap, rack_budget;
    std::optional<double> pue, psu_efficiency;
    std::optional<int> nodes_per_rack;
};

/// Adds the power flags to `desc`, bound to `flags`.
void add_power_options(po::options_description& desc, PowerFlags& flags);

/// Applies the given power flags to the scenario (they override its `power:` and `rack:`
/// blocks). Throws UsageError for a value without a unit or out of range.
void apply_power_flags(model::Scenario& s, const PowerFlags& flags);

/// True when the scenario limits the GPUs' power (a GPU cap, a node cap, or a rack budget with
/// rack.nodes_per_rack).
[[nodiscard]] bool has_power_limit(const model::Scenario& s);

/// The scenario's node as power figures (plan::scenario_node with its hwdb server, looked up
/// in the CLI's database). `server` is set to the hwdb entry when there is one.
[[nodiscard]] model::NodePower scenario_node(CliContext& ctx, const model::Scenario& s,
                                             const model::ServerSpec** server = nullptr);

/// The training job's prices, PUE, power model and per-GPU power limit (a cap, or a node or rack
/// budget turned into one), as `gpuplan train` and `gpuplan diagnose` use them.
[[nodiscard]] model::TrainingCostInputs training_cost_inputs(CliContext& ctx,
                                                             const model::Scenario& s);

/// "10.20 kW", "350 W".
[[nodiscard]] std::string watts(Watts w);

/// The power section as JSON.
[[nodiscard]] nlohmann::json power_json(const model::PowerEstimate& p);

/// The power section for humans: levels, the limit, per-phase clocks and slowdowns, the
/// throughput and SLO cost, node and facility power, energy per token, oversubscription.
void print_power(std::ostream& out, const model::PowerEstimate& p);

} // namespace gpuplan::cli
