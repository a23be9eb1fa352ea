#pragma once
/// A serving fleet over a long horizon (a day, a week or a year) in coarse steps: the hourly
/// offered rate (a diurnal cycle, a weekend factor and an annual growth rate on the workload's
/// base rate), the replicas each step needs at one replica's capacity within the SLO, and what
/// the fleet costs when B replicas are owned (capex amortised per hour, energy at that hour's
/// electricity price), the rest of the need is rented by the hour and what exceeds a rented cap
/// goes to a cloud endpoint priced per token. Each step is a steady state of the analytic model:
/// no queue carries over from one step to the next (docs/fleet.md). Results are kept per day,
/// per month and per hour of the day, never per step, so a year of 8,760 hourly steps runs in
/// bounded memory. Pure functions; plan/fleet.hpp builds the inputs from a scenario.

#include "model/enum_names.hpp"
#include "model/money.hpp"
#include "model/units.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// How long the fleet runs.
enum class FleetSpan {
    Day,  ///< 24 h
    Week, ///< 7 days, Monday to Sunday
    Year, ///< 365 days (52 weeks and a Monday), 12 calendar months of a non-leap year
};

/// The scenario spellings (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<FleetSpan>, 3> enum_names(FleetSpan) noexcept {
    return {
        EnumName<FleetSpan>{"day", FleetSpan::Day},
        EnumName<FleetSpan>{"week", FleetSpan::Week},
        EnumName<FleetSpan>{"year", FleetSpan::Year},
    };
}

/// "day", "week", "year".
[[nodiscard]] const char* to_string(FleetSpan s);

/// The length of a span: 86,400 s, 604,800 s or 31,536,000 s.
[[nodiscard]] Seconds span_length(FleetSpan s);

/// Time-of-day electricity prices: `peak` from peak_start to peak_end (hours of the day, the
/// interval wraps past midnight when start > end), `off_peak` otherwise; both per kWh.
struct TimeOfDayPrices {
    Price peak;
    Price off_peak;
    int peak_start = 8; ///< hour of the day, 0-23
    int peak_end = 20;  ///< hour of the day, 0-24 (exclusive)
    friend bool operator==(const TimeOfDayPrices&, const TimeOfDayPrices&) = default;
};

/// The scenario's `fleet:` block. The traffic at time t (t = 0: Monday 00:00) is
///     rate(t) = base × (1 + diurnal_amplitude × cos(2π (hour(t) − peak_hour) / 24))
///                    × (weekend_factor on Saturdays and Sundays, else 1)
///                    × (1 + annual_growth)^(t / 365 days)
/// where base is the workload's offered rate (the mean of a weekday at t = 0).
struct FleetConfig {
    FleetSpan span = FleetSpan::Year;
    Seconds step{3600.0};           ///< one steady state; divides a day, 1 min to 24 h
    double diurnal_amplitude = 0.0; ///< relative swing over the day, in [0, 1)
    double peak_hour = 14.0;        ///< hour of the day of the busiest moment, in [0, 24)
    double weekend_factor = 1.0;    ///< Saturday and Sunday traffic over a weekday's, > 0
    double annual_growth = 0.0;     ///< compound growth per 365 days, > −1 (0.5: +50 %/year)
    std::optional<int> rented_cap;  ///< most replicas rented at once (nullopt: no limit)
    std::optional<int> owned;       ///< the owned replicas to report (nullopt: the cheapest)
    std::optional<TimeOfDayPrices> electricity; ///< nullopt: prices.electricity all day
    friend bool operator==(const FleetConfig&, const FleetConfig&) = default;
};

/// Throws InvalidArgument naming the key for a value out of its range (see FleetConfig).
void validate(const FleetConfig& c);

/// The traffic factor at `t`: rate(t) ÷ base (see FleetConfig). Pure; O(1).
[[nodiscard]] double fleet_rate_factor(const FleetConfig& c, Seconds t);

/// The electricity price of hour `hour` (0-23) of the day: the time-of-day price when the
/// config has one, else `flat` (nullopt when neither).
[[nodiscard]] std::optional<Price> fleet_electricity(const FleetConfig& c, int hour,
                                                     const std::optional<Price>& flat);

/// Everything the fleet model needs, resolved (plan::fleet_inputs builds it from a scenario).
/// Money is in `currency`, as plain amounts.
struct FleetInputs {
    FleetConfig config;
    double base_rps = 0;    ///< the workload's offered requests/s at t = 0 (weekday mean)
    double replica_rps = 0; ///< requests/s one replica carries within the SLO, > 0
    int gpus_per_replica = 1;
    std::string currency;
    double owned_per_hour = 0;           ///< one owned replica's capex + maintenance + colocation
    std::optional<double> rent_per_hour; ///< one rented replica (GPUs × rent per GPU-hour)
    std::optional<Price> electricity;    ///< flat price per kWh (the time-of-day one is in config)
    double pue = 1.0;
    Watts idle_power;                        ///< one owned replica resident, no load, at the wall
    Watts load_power;                        ///< one owned replica at replica_rps, at the wall
    std::optional<double> cloud_per_request; ///< the cloud endpoint's price of one request
    /// Availability of one replica (MTBF ÷ (MTBF + MTTR)) and the fleet's target; nullopt: no
    /// spares are planned.
    std::optional<double> unit_up;
    double availability_target = 0.999;
    friend bool operator==(const FleetInputs&, const FleetInputs&) = default;
};

/// Sums over a period (the horizon, a day, a month, or one hour of the day over all days).
struct FleetTotals {
    double hours = 0;
    double requests = 0;             ///< offered
    int peak_need = 0;               ///< replicas needed in the busiest step
    double need_replica_hours = 0;   ///< Σ need × hours (÷ hours: the mean need)
    double owned_replica_hours = 0;  ///< owned replicas serving, Σ min(need, B) × hours
    double rented_replica_hours = 0; ///< Σ rented × hours
    double rent_hours = 0;           ///< hours with at least one replica rented
    double cloud_requests = 0;
    double unserved_requests = 0; ///< beyond owned + rented cap with no cloud endpoint
    double energy_kwh = 0;        ///< owned replicas (and spares) at the wall, before PUE
    double energy_cost = 0;       ///< facility energy × that hour's price
    double owned_cost = 0;        ///< capex amortised + maintenance + colocation of B + spares
    double rented_cost = 0;
    double cloud_cost = 0;
    [[nodiscard]] double total() const {
        return energy_cost + owned_cost + rented_cost + cloud_cost;
    }
    friend bool operator==(const FleetTotals&, const FleetTotals&) = default;
};

/// The fleet over the horizon with `owned` replicas owned.
struct FleetRun {
    int owned = 0;     ///< B: owned replicas that serve
    int spares = 0;    ///< owned hot spares for the availability target
    bool meets = true; ///< every request served (locally or in the cloud), spares found
    std::string why;   ///< why not, when !meets
    FleetTotals total;
    std::vector<FleetTotals> days;         ///< one per day (empty unless asked for)
    std::vector<FleetTotals> months;       ///< calendar months of the year (empty unless asked for)
    std::array<FleetTotals, 24> by_hour{}; ///< hour of the day, over all days (when asked for)
    std::vector<double> need_hours;        ///< [n]: hours in which n replicas are needed (0..peak)
    int steps = 0;
    friend bool operator==(const FleetRun&, const FleetRun&) = default;
};

/// Runs the horizon with `owned` replicas owned (and the spares model/availability.hpp gives
/// them). `detail`: keep the per-day, per-month and per-hour-of-day sums. Memory: O(days), never
/// O(steps); time O(steps). Throws InvalidArgument for an invalid config or non-positive
/// replica_rps, and when an owned replica has no price.
[[nodiscard]] FleetRun run_fleet(const FleetInputs& in, int owned, bool detail = false);

/// One point of the cost curve against the owned replicas.
struct FleetCostPoint {
    int owned = 0;
    int spares = 0;
    bool meets = false;
    double total = 0;
    friend bool operator==(const FleetCostPoint&, const FleetCostPoint&) = default;
};

/// The owned-against-rented answer.
struct FleetPlan {
    std::vector<FleetCostPoint> curve; ///< B = 0 .. peak need, every value
    std::optional<int> best;           ///< cheapest B that meets (nullopt: none does)
    FleetRun run;                      ///< the horizon at best (or at config.owned), detailed
    FleetRun all_rented;               ///< B = 0 (what renting everything costs)
    int peak_need = 0;
    double mean_need = 0;
    /// The fraction of hours a replica must serve for owning it to cost less than renting it:
    /// (owned per hour + resident energy) ÷ (rent per hour − the energy its load adds), at the
    /// mean electricity price; nullopt without rent. The B-th replica is worth owning when the
    /// need reaches B in more than that fraction of the hours.
    std::optional<double> break_even_utilisation;
    /// [b]: the fraction of the hours in which the need reaches b replicas (b = 0..peak need):
    /// the utilisation the b-th owned replica would have.
    std::vector<double> share_at_least;
    std::vector<std::string> notes;
};

/// Scans B from 0 to the peak need (the cost is piecewise linear in B between spare changes,
/// so a scan finds the minimum), then runs the cheapest (or config.owned) in detail. Cost:
/// (peak need + 3) runs of the horizon; throws InvalidArgument when that exceeds 10^8 steps
/// (about a second; choose a coarser step or a smaller fleet).
[[nodiscard]] FleetPlan plan_fleet(const FleetInputs& in);

} // namespace gpuplan::model
