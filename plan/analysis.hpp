#pragma once
/// The analysis chain of one scenario: serving estimate and bottleneck → power → racks → cost.
/// One function, so the figures `gpuplan estimate` (its power section), `gpuplan cost`,
/// `gpuplan rack` (its load basis) and the desktop app show are computed the same way. It
/// composes model/ functions and adds no formula of its own (docs/architecture.md lists where
/// each formula lives).

#include "model/bottleneck.hpp"
#include "model/cost.hpp"
#include "model/efficiency.hpp"
#include "model/hardware_spec.hpp"
#include "model/power.hpp"
#include "model/rack.hpp"
#include "model/scenario.hpp"
#include "model/serving.hpp"

#include <optional>
#include <string>

namespace gpuplan::plan {

/// Which links of the chain to compute. Racks and cost need the power estimate: asking for
/// them asks for it.
struct AnalysisParts {
    bool serving = true; ///< the serving estimate and its bottleneck (model::find_bottleneck)
    bool power = true;   ///< model::estimate_power with the scenario's budget, node, SLOs and racks
    bool racks = true; ///< model::plan_racks at every GPU's limit plus the host (`rack` basis peak)
    bool cost = true;  ///< model::cost_inputs and model::estimate_cost at the power estimate
};

/// What a failing power, rack or cost link does. The serving estimate always throws: without
/// it there is nothing to show.
enum class OnError {
    Throw,  ///< rethrow the error (a command line: exit code 2 with its message)
    Record, ///< keep the message in the result's `*_error` and go on (the desktop app)
};

/// How to run the chain.
struct AnalysisOptions {
    AnalysisParts parts;
    int cached_prefix = 0; ///< prompt tokens per request served by the prefix cache
    OnError on_error = OnError::Throw;
};

/// The chain's figures. A link not asked for, or one that failed under OnError::Record, has its
/// optional empty; a failed one has its message in the matching `*_error`.
struct ServingAnalysis {
    std::optional<model::BottleneckReport> bottleneck; ///< its `estimate` is the serving estimate
    std::optional<model::PowerEstimate> power;
    std::string power_error;
    std::optional<model::RackPlan> rack;
    std::string rack_error;
    std::optional<model::CostInputs> cost_inputs;
    std::optional<model::CostEstimate> cost;
    std::string cost_error;
};

/// The scenario's node as power figures: `server` (its hwdb entry) when given, else a node of
/// deployment.gpus_per_node GPUs with no host counted (model::unknown_node).
[[nodiscard]] model::NodePower scenario_node(const model::Scenario& s,
                                             const model::ServerSpec* server);

/// Runs the chain on `s` with `profile`; `server` is the scenario's hwdb server, or null. Throws
/// InvalidArgument when the serving estimate fails, and, under OnError::Throw, what
/// model::estimate_power, model::plan_racks, model::cost_inputs or model::estimate_cost throw.
/// Cost: one serving estimate per link asked for (the power estimate makes its own, capped).
[[nodiscard]] ServingAnalysis analyze_serving(const model::Scenario& s,
                                              const model::ServerSpec* server,
                                              const model::EfficiencyProfile& profile,
                                              const AnalysisOptions& options = {});

} // namespace gpuplan::plan
