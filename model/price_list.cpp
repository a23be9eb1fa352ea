#include "model/price_list.hpp"

#include "model/scenario.hpp"

namespace gpuplan::model {

bool scenario_prices_gpu(const Scenario& s, const AcceleratorSpec& gpu) {
    return s.prices.accelerator.empty() || s.prices.accelerator == gpu.name;
}

bool scenario_prices_node(const Scenario& s) {
    // Unbound prices (a scenario built in code) apply to any hardware; bound ones to the node
    // they name, "" being no node.
    return scenario_prices_gpu(s, s.deployment.gpu) &&
           (s.prices.accelerator.empty() || s.prices.node == s.node_ref);
}

std::string scenario_currency(const Scenario& s) {
    for (const auto* price : {&s.prices.node_purchase, &s.prices.gpu_purchase, &s.prices.gpu_hour,
                              &s.prices.electricity, &s.cost.colocation}) {
        if (*price) {
            return (*price)->money.currency;
        }
    }
    return "";
}

const PriceEstimate* newest_price(const std::vector<PriceEstimate>& prices, PriceBasis basis,
                                  const std::string& currency, const PriceEstimate** skipped) {
    const PriceEstimate* best = nullptr;
    for (const PriceEstimate& p : prices) {
        if (p.price.per != basis) {
            continue;
        }
        // Dates are ISO (YYYY-MM[-DD]), so string order is time order.
        if (!currency.empty() && p.price.money.currency != currency) {
            if (skipped && (!*skipped || p.date > (*skipped)->date)) {
                *skipped = &p;
            }
            continue;
        }
        if (!best || p.date > best->date) {
            best = &p;
        }
    }
    return best;
}

std::string cite_price(const std::string& entry, const PriceEstimate& p) {
    return "hwdb " + entry + " " + to_string(p.price) + " (" + p.date + ", " + p.source + ")";
}

namespace {

/// The scenario's own price when it applies, else the hwdb's newest of `basis` for `entry`.
std::optional<PriceQuote> quote(const std::optional<Price>& own, bool own_applies,
                                const char* own_key, const std::string& entry,
                                const std::vector<PriceEstimate>& hwdb, PriceBasis basis,
                                const std::string& currency, std::vector<std::string>* notes) {
    if (own && own_applies) {
        return PriceQuote{*own, std::string("prices.") + own_key};
    }
    const PriceEstimate* skipped = nullptr;
    if (const PriceEstimate* p = newest_price(hwdb, basis, currency, &skipped)) {
        return PriceQuote{p->price, cite_price(entry, *p)};
    }
    if (skipped && notes) {
        notes->push_back("skipped " + cite_price(entry, *skipped) + ": not in " + currency);
    }
    return std::nullopt;
}

} // namespace

std::optional<PriceQuote> gpu_hour_price(const Scenario& s, std::vector<std::string>* notes) {
    const AcceleratorSpec& gpu = s.deployment.gpu;
    return quote(s.prices.gpu_hour, scenario_prices_gpu(s, gpu), "gpu_hour", gpu.name, gpu.prices,
                 PriceBasis::Hour, scenario_currency(s), notes);
}

std::optional<PriceQuote> gpu_purchase_price(const Scenario& s, std::vector<std::string>* notes) {
    const AcceleratorSpec& gpu = s.deployment.gpu;
    return quote(s.prices.gpu_purchase, scenario_prices_gpu(s, gpu), "gpu_purchase", gpu.name,
                 gpu.prices, PriceBasis::Once, scenario_currency(s), notes);
}

std::optional<PriceQuote> node_purchase_price(const Scenario& s, const ServerSpec* node,
                                              std::vector<std::string>* notes) {
    return quote(s.prices.node_purchase, scenario_prices_node(s), "node_purchase",
                 node ? node->name : "", node ? node->prices : std::vector<PriceEstimate>{},
                 PriceBasis::Once, scenario_currency(s), notes);
}

void bind_prices_to_hardware(Scenario& s) {
    if (!scenario_prices_node(s)) {
        s.prices.node_purchase.reset();
    }
    if (!scenario_prices_gpu(s, s.deployment.gpu)) {
        s.prices.gpu_hour.reset();
        s.prices.gpu_purchase.reset();
    }
    s.prices.accelerator = s.deployment.gpu.name;
    s.prices.node = s.node_ref;
}

} // namespace gpuplan::model
