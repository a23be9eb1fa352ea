#pragma once
/// Total cost of ownership against renting: capex amortized over years with a residual value,
/// opex (energy × price × PUE, maintenance as a fraction of capex per year, colocation per
/// provisioned kW-month), cloud rent per GPU-hour, a utilization profile, cost per million
/// output tokens and the rent-vs-buy break-even month. Money keeps its currency: mixing
/// currencies is an error, never a conversion (docs/cost.md).

#include "model/cost_config.hpp"
#include "model/hardware_spec.hpp"
#include "model/money.hpp"
#include "model/units.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

struct Scenario;
struct PowerEstimate;

/// A month is 30 days of 24 h (docs/domain.md §2's electricity example: 24 h × 30 days); the
/// calendar average is 30.44.
inline constexpr double kMonthDays = 30.0;
inline constexpr double kMonthHours = 24.0 * kMonthDays;

/// Electricity cost of drawing `power` for `hours` at `price` (per kWh) in a facility of
/// power usage effectiveness `pue`: kW × hours × price × pue. Throws InvalidArgument when the
/// price is not per kWh. docs/domain.md §2: 8 kW × 24 h × 30 days × 0.6 CNY/kWh = 3,456 CNY.
[[nodiscard]] Money energy_cost(Watts power, double hours, const Price& price, double pue = 1.0);

/// Everything the cost model needs, resolved (cost_inputs() builds it from a scenario).
struct CostInputs {
    int gpus = 1;
    int nodes = 1;
    std::optional<Money> capex; ///< purchase of all GPUs and nodes
    std::string capex_source;   ///< where the purchase price came from
    std::optional<Price> rent;  ///< per GPU-hour
    std::string rent_source;
    std::optional<Price> electricity; ///< per kWh
    double pue = 1.0;
    Watts load_power;              ///< the deployment at the wall while serving
    Watts off_power;               ///< the deployment at the wall outside the serving hours
    Watts provisioned_power;       ///< the power the colocation contract is sized for (the peak)
    double throughput_tok_s = 0.0; ///< output tokens/s while serving
    bool host_priced = true;       ///< capex includes the hosts (a node price), not GPUs alone
    CostConfig config;
    std::vector<std::string> notes; ///< from the resolution (prices skipped, host not priced)
};

/// Monthly costs, owning and renting, in one currency.
struct CostEstimate {
    std::string currency;
    double hours_serving = 0.0; ///< per month
    double hours_off = 0.0;     ///< per month, owned hardware not serving
    double energy_kwh = 0.0;    ///< IT energy per month (before PUE)
    double facility_kwh = 0.0;  ///< energy_kwh × PUE
    double tokens = 0.0;        ///< output tokens per month
    std::optional<Money> capex;
    std::optional<Money> capex_monthly; ///< capex × (1 − residual) ÷ (years × 12)
    std::optional<Money> energy_monthly;
    std::optional<Money> maintenance_monthly;
    std::optional<Money> colocation_monthly;
    std::optional<Money> opex_monthly; ///< energy + maintenance + colocation
    std::optional<Money> own_monthly;  ///< capex_monthly + opex_monthly
    std::optional<Money> rent_monthly; ///< rent × GPUs × serving hours
    std::optional<Money> own_per_million_tokens;
    std::optional<Money> rent_per_million_tokens;
    /// First month at whose end cumulative rent reaches cumulative ownership (capex up front,
    /// then opex; the residual value is ignored). nullopt: never (rent ≤ opex) or unpriced.
    std::optional<int> break_even_month;
    std::string cheaper; ///< "own", "rent" or "" (monthly, amortized)
    /// What the cost of owning leaves out, each with the key that would add it, e.g.
    /// "energy (set prices.electricity)"; every cost output lists them.
    std::vector<std::string> excluded;
    std::vector<std::string> notes;
};

/// The monthly costs. Throws InvalidArgument when prices of different currencies meet (naming
/// both), when a price has the wrong basis, or when the profile or fractions are out of range.
[[nodiscard]] CostEstimate estimate_cost(const CostInputs& in);

/// The cost inputs of a scenario: capex from prices.node_purchase × nodes, else
/// prices.gpu_purchase × GPUs, else the node's newest hwdb purchase price × nodes, else the
/// GPU's × GPUs; rent from prices.gpu_hour, else the GPU's newest hwdb hourly price (hwdb
/// prices in another currency than the scenario's are skipped, with a note); power from the
/// power estimate (serving: its steady average; off-hours: resident, idle or nothing;
/// provisioned: its capped peak). `node` is the scenario's hwdb server, or null.
[[nodiscard]] CostInputs cost_inputs(const Scenario& s, const ServerSpec* node,
                                     const PowerEstimate& p);

} // namespace gpuplan::model
