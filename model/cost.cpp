#include "model/cost.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"
#include "model/power.hpp"
#include "model/price_list.hpp"
#include "model/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace gpuplan::model {

namespace {

void require(bool ok, const std::string& message) {
    if (!ok) {
        throw InvalidArgument(message);
    }
}

void require_basis(const std::optional<Price>& p, PriceBasis basis, const char* what,
                   const char* example) {
    if (p && p->per != basis) {
        throw InvalidArgument(std::string("cost: ") + what + " is " + to_string(*p) +
                              "; write it per " + (to_string(basis) + 1) + ", e.g. '" + example +
                              "'");
    }
}

} // namespace

const char* to_string(OffHours o) {
    return name_of(o);
}

Money energy_cost(Watts power, double hours, const Price& price, double pue) {
    require(price.per == PriceBasis::KilowattHour,
            "electricity price " + to_string(price) + " is not per kWh; write e.g. '0.6 CNY/kWh'");
    const double kwh = power.si() / 1e3 * hours;
    return price.money * (kwh * pue);
}

CostEstimate estimate_cost(const CostInputs& in) {
    const CostConfig& c = in.config;
    require(c.amortization_years > 0, "cost.amortization_years must be positive, e.g. 4");
    require(c.residual_fraction >= 0 && c.residual_fraction < 1,
            "cost.residual_fraction must be in [0, 1), e.g. 0.1");
    require(c.maintenance_fraction >= 0, "cost.maintenance_fraction must not be negative");
    require(c.utilization.hours_per_day > 0 && c.utilization.hours_per_day <= 24,
            "cost.utilization.hours_per_day must be in (0, 24]");
    require(c.utilization.days_per_month > 0 && c.utilization.days_per_month <= kMonthDays,
            "cost.utilization.days_per_month must be in (0, 30] (a month is 30 days here)");
    require(in.pue >= 1.0, "pue must be at least 1");
    require_basis(in.rent, PriceBasis::Hour, "the rent", "$2.10/h");
    require_basis(in.electricity, PriceBasis::KilowattHour, "the electricity price", "0.6 CNY/kWh");
    require_basis(c.colocation, PriceBasis::KilowattMonth, "the colocation price", "$150/kW-month");

    // One currency: name the two that clash rather than let Money's operator+ throw later.
    std::vector<std::pair<std::string, std::string>> priced; // what, currency
    if (in.capex) {
        priced.emplace_back("the purchase price (" + in.capex_source + ")", in.capex->currency);
    }
    if (in.rent) {
        priced.emplace_back("the rent (" + in.rent_source + ")", in.rent->money.currency);
    }
    if (in.electricity) {
        priced.emplace_back("the electricity price", in.electricity->money.currency);
    }
    if (c.colocation) {
        priced.emplace_back("the colocation price", c.colocation->money.currency);
    }
    for (std::size_t i = 1; i < priced.size(); ++i) {
        require(priced[i].second == priced[0].second,
                "cost: " + priced[i].first + " is in " + priced[i].second + " but " +
                    priced[0].first + " is in " + priced[0].second +
                    "; give every price in one currency (gpuplan never converts)");
    }

    CostEstimate r;
    r.notes = in.notes;
    r.currency = priced.empty() ? "" : priced[0].second;
    r.hours_serving = c.utilization.hours_per_day * c.utilization.days_per_month;
    r.hours_off = kMonthHours - r.hours_serving;
    r.tokens = in.throughput_tok_s * r.hours_serving * 3600.0;
    const Watts off = c.off_hours == OffHours::Off ? Watts(0) : in.off_power;
    r.energy_kwh = (in.load_power.si() * r.hours_serving + off.si() * r.hours_off) / 1e3;
    r.facility_kwh = r.energy_kwh * in.pue;

    if (in.capex) {
        r.capex = *in.capex;
        const double months = c.amortization_years * 12.0;
        r.capex_monthly = *in.capex * ((1.0 - c.residual_fraction) / months);
        r.maintenance_monthly = *in.capex * (c.maintenance_fraction / 12.0);
    }
    if (in.electricity) {
        r.energy_monthly = in.electricity->money * r.facility_kwh;
    } else {
        r.notes.push_back("no electricity price: owning excludes energy (set prices.electricity)");
    }
    if (c.colocation) {
        r.colocation_monthly = c.colocation->money * (in.provisioned_power.si() / 1e3);
    }
    // Opex: whatever is priced.
    for (const auto* part : {&r.energy_monthly, &r.maintenance_monthly, &r.colocation_monthly}) {
        if (*part) {
            r.opex_monthly = r.opex_monthly ? *r.opex_monthly + **part : **part;
        }
    }
    if (r.capex_monthly) {
        r.own_monthly = r.opex_monthly ? *r.capex_monthly + *r.opex_monthly : *r.capex_monthly;
    } else {
        r.notes.push_back("no purchase price: owning cannot be costed (set prices.node_purchase "
                          "or prices.gpu_purchase)");
    }
    if (in.rent) {
        r.rent_monthly = in.rent->money * (in.gpus * r.hours_serving);
    } else {
        r.notes.push_back("no rent: renting cannot be costed (set prices.gpu_hour)");
    }
    if (!in.capex) {
        r.excluded.emplace_back("purchase (set prices.node_purchase or prices.gpu_purchase)");
    } else if (!in.host_priced) {
        r.excluded.emplace_back("hosts (set prices.node_purchase)");
    }
    if (!in.electricity) {
        r.excluded.emplace_back("energy (set prices.electricity)");
    } else if (in.pue <= 1.0) {
        r.excluded.emplace_back("facility overhead (set power.pue)");
    }
    if (!c.colocation) {
        r.excluded.emplace_back("colocation (set cost.colocation)");
    }
    if (r.tokens > 0) {
        const double per = 1e6 / r.tokens;
        if (r.own_monthly) {
            r.own_per_million_tokens = *r.own_monthly * per;
        }
        if (r.rent_monthly) {
            r.rent_per_million_tokens = *r.rent_monthly * per;
        }
    }
    if (r.own_monthly && r.rent_monthly) {
        r.cheaper = r.own_monthly->amount <= r.rent_monthly->amount ? "own" : "rent";
        const double opex = r.opex_monthly ? r.opex_monthly->amount : 0.0;
        const double saving = r.rent_monthly->amount - opex;
        if (saving > 0) {
            // Cumulative rent m × R meets capex + m × opex at m = capex ÷ (R − opex).
            r.break_even_month =
                std::max(1, static_cast<int>(std::ceil(r.capex->amount / saving - 1e-9)));
            if (*r.break_even_month > c.amortization_years * 12.0) {
                r.notes.push_back("buying breaks even only after the " +
                                  std::to_string(static_cast<int>(c.amortization_years * 12)) +
                                  "-month amortization period: renting wins over the "
                                  "hardware's planned life");
            }
        } else {
            r.notes.push_back("renting costs no more per month than running owned hardware "
                              "(energy, upkeep, colocation): buying never breaks even");
        }
    }
    return r;
}

CostInputs cost_inputs(const Scenario& s, const ServerSpec* node, const PowerEstimate& p) {
    const Deployment& d = s.deployment;
    CostInputs in;
    in.gpus = d.gpus();
    in.nodes = p.nodes;
    in.config = s.cost;
    in.electricity = s.prices.electricity;
    in.pue = s.power.pue.value_or(1.0);
    if (!s.power.pue) {
        in.notes.push_back("power.pue not set: energy is IT power only (global average PUE 1.58, "
                           "Uptime Institute 2023 survey; new builds <= 1.3)");
    }

    // Whole nodes are bought, but a deployment on part of a node pays its share: the other
    // GPUs serve something else (the same share as its host power, power.cpp).
    const double node_share = static_cast<double>(d.gpus()) / p.node.gpus;
    const std::string nodes_text =
        gpuplan::checked_format("{:g} node{}", node_share, node_share == 1.0 ? "" : "s");
    if (std::abs(node_share - std::round(node_share)) > 1e-9) {
        in.notes.push_back("the deployment uses " + std::to_string(d.gpus()) + " of " +
                           std::to_string(p.node.gpus) +
                           " GPUs per node: it is charged that share of a node");
    }
    // The scenario's node price, else its GPU price, else the hwdb's node, else its GPU.
    const bool own_node = s.prices.node_purchase && scenario_prices_node(s);
    const bool own_gpu = s.prices.gpu_purchase && scenario_prices_gpu(s, d.gpu);
    std::optional<PriceQuote> node_price;
    if (own_node || !own_gpu) {
        node_price = node_purchase_price(s, node, &in.notes);
    }
    if (node_price) {
        in.capex = node_price->price.money * node_share;
        in.capex_source = node_price->source + " × " + nodes_text;
    } else if (const auto gpu_price = gpu_purchase_price(s, &in.notes)) {
        in.capex = gpu_price->price.money * d.gpus();
        in.capex_source = gpu_price->source + " × " + std::to_string(d.gpus()) + " GPUs";
        in.notes.push_back("host (CPUs, chassis, network) not priced: set prices.node_purchase "
                           "for whole servers");
        in.host_priced = false;
    }
    if (const auto rent = gpu_hour_price(s, &in.notes)) {
        in.rent = rent->price;
        in.rent_source = rent->source;
    }

    in.load_power = p.deployment_average;
    in.provisioned_power = p.deployment_peak;
    const double share = static_cast<double>(d.gpus()) / p.node.gpus;
    switch (s.cost.off_hours) {
    case OffHours::Resident: in.off_power = p.deployment_idle; break;
    case OffHours::Idle:
        in.off_power = p.node.idle
                           ? *p.node.idle * share
                           : deployment_wall_power(p.levels.idle, d.gpus(), p.node, s.power_model);
        break;
    case OffHours::Off: in.off_power = Watts(0); break;
    }
    in.throughput_tok_s = p.capped.throughput;
    return in;
}

} // namespace gpuplan::model
