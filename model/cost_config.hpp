#pragma once
/// The input of the cost model (model/cost.hpp): the scenario's `cost:` block. Kept apart from
/// the formulas so that model/scenario.hpp carries only inputs.

#include "model/enum_names.hpp"
#include "model/money.hpp"

#include <optional>

namespace gpuplan::model {

/// When the hardware is in use. Steady: 24 h a day, 30 days a month.
struct UtilizationProfile {
    double hours_per_day = 24.0;  ///< hours of serving per day, in (0, 24]
    double days_per_month = 30.0; ///< days of serving per month, in (0, 30]
    friend bool operator==(const UtilizationProfile&, const UtilizationProfile&) = default;
};

/// What owned hardware draws when not serving.
enum class OffHours {
    Resident, ///< the model stays loaded (a CUDA context pins the clocks: resident power)
    Idle,     ///< the engine stops: bare idle power
    Off,      ///< powered off: nothing
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<OffHours>, 3> enum_names(OffHours) noexcept {
    return {
        EnumName<OffHours>{"resident", OffHours::Resident},
        EnumName<OffHours>{"idle", OffHours::Idle},
        EnumName<OffHours>{"off", OffHours::Off},
    };
}

/// "resident", "idle", "off".
[[nodiscard]] const char* to_string(OffHours o);

/// The scenario's `cost:` block. Defaults that are conventions, not facts, say so.
struct CostConfig {
    /// Straight-line amortization period. 4 years is a planning convention [U] (hyperscalers
    /// depreciate servers over 5-6 years; accelerators are often planned shorter).
    double amortization_years = 4.0;
    double residual_fraction = 0.0;    ///< resale value at the end, a fraction of capex
    double maintenance_fraction = 0.0; ///< support and spares per year, a fraction of capex
    std::optional<Price> colocation;   ///< per provisioned kW-month
    UtilizationProfile utilization;
    OffHours off_hours = OffHours::Resident;
    friend bool operator==(const CostConfig&, const CostConfig&) = default;
};

} // namespace gpuplan::model
