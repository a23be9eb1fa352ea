#pragma once
/// The sizing search's question beyond the scenario (the scenario's `plan:` block): which
/// hardware, layouts, precisions and engine limits to try, how many simulations to spend, and
/// the constraints a configuration must meet besides the SLOs (monthly budget, power budget,
/// racks). hwdb resolves the candidates' names into specs; plan::size_deployment searches.
/// Header only: plain aggregates with defaulted `==`; defaults are documented once, here.

#include "model/enum_names.hpp"
#include "model/hardware_spec.hpp"
#include "model/money.hpp"
#include "model/precision.hpp"
#include "model/units.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// One hardware candidate: an accelerator, optionally in a server, with optional prices that
/// override the hwdb estimates (the scenario's own `prices:` price the scenario's hardware).
struct PlanCandidate {
    std::string accelerator_ref; ///< hwdb name as written
    std::string node_ref;        ///< hwdb server name as written, "" when none
    AcceleratorSpec gpu;
    std::optional<ServerSpec> node;   ///< host power, links, GPUs per node, node price
    InterconnectSpec intra_node_link; ///< the node's link, else the GPU's scale-up or host link
    std::optional<InterconnectSpec> inter_node_link;
    int gpus_per_node = 8;
    std::optional<Price> gpu_hour;      ///< rent per GPU-hour
    std::optional<Price> gpu_purchase;  ///< purchase per GPU
    std::optional<Price> node_purchase; ///< purchase per whole node
    friend bool operator==(const PlanCandidate&, const PlanCandidate&) = default;
};

/// What a configuration's monthly cost is.
enum class PlanPricing {
    Own,  ///< capex amortized + energy + maintenance + colocation (model/cost.hpp)
    Rent, ///< cloud rent per GPU-hour × GPUs × serving hours
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<PlanPricing>, 2> enum_names(PlanPricing) noexcept {
    return {
        EnumName<PlanPricing>{"own", PlanPricing::Own},
        EnumName<PlanPricing>{"rent", PlanPricing::Rent},
    };
}

/// name_of(p): "own", "rent".
[[nodiscard]] inline const char* to_string(PlanPricing p) {
    return name_of(p);
}

/// The search space and the constraints.
struct PlanConfig {
    /// Hardware to try. Empty: the scenario's own accelerator and node.
    std::vector<PlanCandidate> candidates;
    int max_gpus = 64;               ///< most GPUs in one configuration (all replicas)
    std::vector<int> tp;             ///< tensor-parallel sizes; empty: 1, 2, 4, 8 within a node
    std::vector<int> pp;             ///< pipeline sizes; empty: 1
    std::vector<Precision> weights;  ///< weight precisions; empty: the scenario's
    std::vector<Precision> kv_cache; ///< KV-cache precisions; empty: the scenario's
    std::vector<int> max_num_seqs;   ///< engine limits; empty: the scenario's engine setting
    /// Speculative decoding with (true) and/or without (false) the scenario's
    /// engine.speculative block; empty: as the scenario says.
    std::vector<bool> speculative;
    std::optional<Price> budget;       ///< monthly ceiling (basis Month)
    std::optional<Watts> power_budget; ///< ceiling on the deployment's peak power at the wall
    std::optional<int> max_racks;      ///< ceiling on racks (model/rack.hpp on the capped peak)
    PlanPricing pricing = PlanPricing::Own;
    int top = 5; ///< configurations to rank
    /// Requests per simulated configuration (the workload's own count when smaller).
    int requests = 1000;
    int max_simulations = 64; ///< simulator runs the search may spend
    /// The analytic pruning gives every configuration this much benefit of the doubt: a lone
    /// request's TTFT/TPOT/E2E must exceed the SLO by this fraction, and the replicas' capacity
    /// fall short of the rate by it, before the configuration is dropped without a simulation.
    double prune_margin = 0.25;
    friend bool operator==(const PlanConfig&, const PlanConfig&) = default;
};

} // namespace gpuplan::model
