#pragma once
/// One price list: what an accelerator, a node and an hour of rent cost, and where each figure
/// comes from. A scenario's own prices apply to the hardware they were written for (its own
/// accelerator and node, or the ones `prices.accelerator` and `prices.node` name); any other
/// hardware gets the hwdb's newest dated estimate, with its date and source; otherwise there is
/// no price. Every command and the desktop app take prices from here (docs/cost.md).

#include "model/hardware_spec.hpp"
#include "model/money.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

struct Scenario;

/// A price and where it came from ("prices.gpu_hour", or "hwdb h100-sxm $2.99/h (2026-05, S51)").
struct PriceQuote {
    Price price;
    std::string source;
    friend bool operator==(const PriceQuote&, const PriceQuote&) = default;
};

/// Whether the scenario's accelerator prices (gpu_hour, gpu_purchase) are for `gpu`.
[[nodiscard]] bool scenario_prices_gpu(const Scenario& s, const AcceleratorSpec& gpu);

/// Whether the scenario's node_purchase is for the scenario's current node and accelerator
/// (unbound prices, accelerator "", apply to any).
[[nodiscard]] bool scenario_prices_node(const Scenario& s);

/// The currency the scenario's own prices are in (its first explicit price), or "" when it
/// gives none. hwdb estimates in another currency are skipped, never converted.
[[nodiscard]] std::string scenario_currency(const Scenario& s);

/// The newest hwdb estimate of `basis` among `prices`, in `currency` when not empty. When the
/// newest one is in another currency and `skipped` is given, it is reported there.
[[nodiscard]] const PriceEstimate* newest_price(const std::vector<PriceEstimate>& prices,
                                                PriceBasis basis, const std::string& currency,
                                                const PriceEstimate** skipped = nullptr);

/// "hwdb ENTRY $2.99/h (2026-05, S51)".
[[nodiscard]] std::string cite_price(const std::string& entry, const PriceEstimate& p);

/// Rent per GPU-hour of the scenario's accelerator: its prices.gpu_hour when those prices are
/// for this accelerator, else the newest hwdb hourly estimate in the scenario's currency;
/// nullopt when neither exists. A skipped estimate in another currency adds a note.
[[nodiscard]] std::optional<PriceQuote> gpu_hour_price(const Scenario& s,
                                                       std::vector<std::string>* notes = nullptr);

/// Purchase price of one of the scenario's accelerators, by the same rule.
[[nodiscard]] std::optional<PriceQuote>
gpu_purchase_price(const Scenario& s, std::vector<std::string>* notes = nullptr);

/// Purchase price of one of the scenario's nodes (`node`: its hwdb server, or null), by the
/// same rule.
[[nodiscard]] std::optional<PriceQuote>
node_purchase_price(const Scenario& s, const ServerSpec* node,
                    std::vector<std::string>* notes = nullptr);

/// Binds the scenario's prices to its current hardware before a price for it is set (a
/// command-line price): accelerator and node prices written for other hardware are dropped.
void bind_prices_to_hardware(Scenario& s);

} // namespace gpuplan::model
