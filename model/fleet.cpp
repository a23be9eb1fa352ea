#include "model/fleet.hpp"

#include "model/availability.hpp"
#include "model/cost.hpp"
#include "model/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace gpuplan::model {
namespace {

constexpr double kDay = 86400.0;
constexpr double kYear = 365.0 * kDay;
// Days of the months of a non-leap year (the span of FleetSpan::Year).
constexpr std::array<int, 12> kMonthLengths = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

void require(bool ok, const std::string& message) {
    if (!ok) {
        throw InvalidArgument(message);
    }
}

std::string num(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') {
        s.pop_back();
    }
    return s;
}

// A need beyond any fleet (and beyond an int): a bad rate or growth, reported out of line so
// the step loop stays lean (an inline throw there made it four times slower with GCC 12).
[[noreturn]] void too_many_replicas(double need, long long step) {
    throw InvalidArgument("the fleet would need " + num(std::ceil(need)) + " replicas at step " +
                          std::to_string(step) +
                          "; check workload.requests_per_s and fleet.annual_growth (at most "
                          "10,000,000 replicas)");
}

// Adds one step's figures to a period's sums.
void add(FleetTotals& to, const FleetTotals& step, int need) {
    to.hours += step.hours;
    to.requests += step.requests;
    to.peak_need = std::max(to.peak_need, need);
    to.need_replica_hours += step.need_replica_hours;
    to.owned_replica_hours += step.owned_replica_hours;
    to.rented_replica_hours += step.rented_replica_hours;
    to.rent_hours += step.rent_hours;
    to.cloud_requests += step.cloud_requests;
    to.unserved_requests += step.unserved_requests;
    to.energy_kwh += step.energy_kwh;
    to.energy_cost += step.energy_cost;
    to.owned_cost += step.owned_cost;
    to.rented_cost += step.rented_cost;
    to.cloud_cost += step.cloud_cost;
}

// The spares that keep `owned` replicas serving at the target (0 without an availability
// block or with nothing owned); nullopt when no number of spares reaches it.
std::optional<int> spares_for(const FleetInputs& in, int owned) {
    if (!in.unit_up || owned == 0) {
        return 0;
    }
    return spares_for_availability(owned, *in.unit_up, in.availability_target);
}

} // namespace

const char* to_string(FleetSpan s) {
    return name_of(s);
}

Seconds span_length(FleetSpan s) {
    switch (s) {
    case FleetSpan::Day: return Seconds(kDay);
    case FleetSpan::Week: return Seconds(7 * kDay);
    case FleetSpan::Year: return Seconds(kYear);
    }
    return Seconds(kDay);
}

void validate(const FleetConfig& c) {
    const double step = c.step.si();
    require(step >= 60.0 && step <= kDay,
            "fleet.step must lie between 1 min and 24 h, e.g. '1 h'; found " + num(step) + " s");
    const double per_day = kDay / step;
    require(std::abs(per_day - std::round(per_day)) < 1e-9,
            "fleet.step must divide a day (e.g. 15 min, 1 h, 6 h); found " + num(step) + " s");
    require(c.diurnal_amplitude >= 0 && c.diurnal_amplitude < 1,
            "fleet.diurnal_amplitude must lie in [0, 1), e.g. 0.5; found " +
                num(c.diurnal_amplitude));
    require(c.peak_hour >= 0 && c.peak_hour < 24,
            "fleet.peak_hour must lie in [0, 24), e.g. 14; found " + num(c.peak_hour));
    require(c.weekend_factor > 0 && std::isfinite(c.weekend_factor),
            "fleet.weekend_factor must be positive, e.g. 0.7; found " + num(c.weekend_factor));
    require(c.annual_growth > -1 && c.annual_growth <= 100,
            "fleet.annual_growth must lie in (-1, 100], e.g. 0.5 for +50 % a year; found " +
                num(c.annual_growth));
    require(!c.rented_cap || *c.rented_cap >= 0, "fleet.rented_cap must not be negative");
    require(!c.owned || *c.owned >= 0, "fleet.owned must not be negative");
    if (c.electricity) {
        const auto& e = *c.electricity;
        require(e.peak.per == PriceBasis::KilowattHour &&
                    e.off_peak.per == PriceBasis::KilowattHour,
                "fleet.electricity prices must be per kWh, e.g. '$0.12/kWh'");
        require(e.peak.money.currency == e.off_peak.money.currency,
                "fleet.electricity.peak and off_peak must be in one currency; found " +
                    e.peak.money.currency + " and " + e.off_peak.money.currency);
        require(e.peak_start >= 0 && e.peak_start <= 23 && e.peak_end >= 0 && e.peak_end <= 24,
                "fleet.electricity.peak_start must be an hour 0-23 and peak_end 0-24");
    }
}

double fleet_rate_factor(const FleetConfig& c, Seconds t) {
    const double s = t.si();
    const double hour = std::fmod(s, kDay) / 3600.0;
    const double diurnal =
        1.0 + c.diurnal_amplitude * std::cos(2.0 * std::numbers::pi * (hour - c.peak_hour) / 24.0);
    // t = 0 is Monday 00:00: days 5 and 6 of each week are Saturday and Sunday.
    const auto day_of_week = static_cast<long long>(std::floor(s / kDay)) % 7;
    const double weekly = day_of_week >= 5 ? c.weekend_factor : 1.0;
    const double growth = std::pow(1.0 + c.annual_growth, s / kYear);
    return diurnal * weekly * growth;
}

std::optional<Price> fleet_electricity(const FleetConfig& c, int hour,
                                       const std::optional<Price>& flat) {
    if (!c.electricity) {
        return flat;
    }
    const auto& e = *c.electricity;
    const bool peak = e.peak_start <= e.peak_end ? hour >= e.peak_start && hour < e.peak_end
                                                 : hour >= e.peak_start || hour < e.peak_end;
    return peak ? e.peak : e.off_peak;
}

FleetRun run_fleet(const FleetInputs& in, int owned, bool detail) {
    const FleetConfig& c = in.config;
    validate(c);
    require(in.replica_rps > 0 && std::isfinite(in.replica_rps),
            "a replica carries no requests within the SLO; relax the SLO or change the hardware");
    require(in.base_rps >= 0 && std::isfinite(in.base_rps),
            "the fleet needs a non-negative offered rate (workload.requests_per_s)");
    require(owned >= 0, "the owned replicas must not be negative");
    require(in.pue >= 1.0, "pue must be at least 1");

    FleetRun run;
    run.owned = owned;
    const auto spares = spares_for(in, owned);
    run.spares = spares.value_or(0);
    if (!spares) {
        run.meets = false;
        run.why = "no number of spares brings " + std::to_string(owned) +
                  " owned replicas to the availability target";
    }

    // Facility energy cost of 1 kW for 1 h at each hour of the day (model::energy_cost, the
    // one electricity rule), so each step multiplies instead of building Money.
    std::array<double, 24> kwh_cost{};
    for (int h = 0; h < 24; ++h) {
        if (const auto p = fleet_electricity(c, h, in.electricity)) {
            require(p->money.currency == in.currency,
                    "the electricity price " + to_string(*p) + " is in " + p->money.currency +
                        ", the fleet's other prices in " + in.currency +
                        "; give every price in one currency");
            kwh_cost[h] = energy_cost(Watts(1e3), 1.0, *p, in.pue).amount;
        }
    }

    const double step_s = c.step.si();
    const double step_h = step_s / 3600.0;
    const long long steps = std::llround(span_length(c.span).si() / step_s);
    const auto steps_per_day = static_cast<long long>(std::llround(kDay / step_s));
    const int cap = c.rented_cap.value_or(std::numeric_limits<int>::max());
    const int rentable = in.rent_per_hour ? cap : 0;
    const double idle_kw = in.idle_power.si() / 1e3;
    const double load_kw = std::max(0.0, (in.load_power - in.idle_power).si() / 1e3);
    const double fixed_per_step = (owned + run.spares) * in.owned_per_hour * step_h;

    if (detail) {
        const auto days = static_cast<std::size_t>(steps / steps_per_day);
        run.days.assign(days, FleetTotals{});
        run.months.assign(c.span == FleetSpan::Year ? kMonthLengths.size() : 1, FleetTotals{});
    }
    std::size_t month = 0;
    long long month_end_day = c.span == FleetSpan::Year ? kMonthLengths[0] : 1 << 30;

    for (long long i = 0; i < steps; ++i) {
        const double t = static_cast<double>(i) * step_s;
        const double rate = in.base_rps * fleet_rate_factor(c, Seconds(t));
        const double need_exact = rate / in.replica_rps;
        if (!(need_exact <= 1e7)) [[unlikely]] {
            too_many_replicas(need_exact, i);
        }
        const int need = static_cast<int>(std::ceil(need_exact - 1e-9));
        const int own_serving = std::min(need, owned);
        const int rented = std::min(need - own_serving, rentable);
        const double excess_rps =
            std::max(0.0, rate - static_cast<double>(own_serving + rented) * in.replica_rps);
        const int hour = static_cast<int>(static_cast<double>(i % steps_per_day) * step_s / 3600.0);

        FleetTotals s;
        s.hours = step_h;
        s.requests = rate * step_s;
        s.need_replica_hours = need * step_h;
        s.owned_replica_hours = own_serving * step_h;
        s.rented_replica_hours = rented * step_h;
        s.rent_hours = rented > 0 ? step_h : 0.0;
        if (in.cloud_per_request) {
            s.cloud_requests = excess_rps * step_s;
            s.cloud_cost = s.cloud_requests * *in.cloud_per_request;
        } else {
            s.unserved_requests = excess_rps * step_s;
        }
        // Owned replicas carry the load first; each draws its resident power plus the share of
        // the loaded draw its load brings, spares stay resident (hot).
        const double owned_load = std::min(need_exact, static_cast<double>(owned));
        const double kw = (owned + run.spares) * idle_kw + owned_load * load_kw;
        s.energy_kwh = kw * step_h;
        s.energy_cost = kw * step_h * kwh_cost[static_cast<std::size_t>(hour)];
        s.owned_cost = fixed_per_step;
        s.rented_cost = rented > 0 ? rented * *in.rent_per_hour * step_h : 0.0;

        add(run.total, s, need);
        if (static_cast<std::size_t>(need) >= run.need_hours.size()) {
            run.need_hours.resize(static_cast<std::size_t>(need) + 1, 0.0);
        }
        run.need_hours[static_cast<std::size_t>(need)] += step_h;
        if (detail) {
            const auto day = static_cast<std::size_t>(i / steps_per_day);
            if (static_cast<long long>(day) >= month_end_day && month + 1 < run.months.size()) {
                ++month;
                month_end_day += kMonthLengths[month];
            }
            add(run.days[day], s, need);
            add(run.months[month], s, need);
            add(run.by_hour[static_cast<std::size_t>(hour)], s, need);
        }
    }
    run.steps = static_cast<int>(steps);
    if (run.meets && run.total.unserved_requests > 0.5) {
        run.meets = false;
        run.why = "owned " + std::to_string(owned) + " + rented at most " +
                  (in.rent_per_hour ? std::to_string(cap) : std::string("0 (no rent price)")) +
                  " replicas leave " + num(std::round(run.total.unserved_requests)) +
                  " requests unserved and no cloud endpoint takes them";
    }
    return run;
}

namespace {
constexpr double kMaxFleetScanSteps = 1e8; // see plan_fleet in fleet.hpp
} // namespace

FleetPlan plan_fleet(const FleetInputs& in) {
    FleetPlan p;
    // B = 0 first: the peak need and the mean need do not depend on B.
    p.all_rented = run_fleet(in, 0);
    p.peak_need = p.all_rented.total.peak_need;
    p.mean_need = p.all_rented.total.hours > 0
                      ? p.all_rented.total.need_replica_hours / p.all_rented.total.hours
                      : 0.0;
    // The scan is bounded before it starts, so no input runs for minutes (issue 33: 500,000
    // requests/s needed 10^5 replicas × 8,760 steps and ran past 30 s): 10^8 steps take about
    // a second.
    const double work = (static_cast<double>(p.peak_need) + 3.0) * p.all_rented.steps;
    require(work <= kMaxFleetScanSteps,
            "the owned-against-rented scan would run " + num(work) + " steps (" +
                std::to_string(p.peak_need) + " replicas at the peak × " +
                std::to_string(p.all_rented.steps) +
                " steps), above the limit of 1e8; choose a coarser fleet.step, a faster replica "
                "or a lower workload.requests_per_s");
    for (int b = 0; b <= p.peak_need; ++b) {
        const FleetRun r = b == 0 ? p.all_rented : run_fleet(in, b);
        p.curve.push_back({b, r.spares, r.meets, r.total.total()});
        if (r.meets &&
            (!p.best || r.total.total() < p.curve[static_cast<std::size_t>(*p.best)].total)) {
            p.best = b;
        }
    }
    double at_least = 0;
    p.share_at_least.assign(p.all_rented.need_hours.size(), 0.0);
    for (std::size_t n = p.all_rented.need_hours.size(); n-- > 0;) {
        at_least += p.all_rented.need_hours[n];
        p.share_at_least[n] =
            p.all_rented.total.hours > 0 ? at_least / p.all_rented.total.hours : 0.0;
    }
    const int chosen = in.config.owned.value_or(p.best.value_or(p.peak_need));
    p.run = run_fleet(in, chosen, true);
    if (!in.rent_per_hour) {
        p.notes.emplace_back("no rent price: nothing can be rented, the owned replicas must carry "
                             "the peak (set prices.gpu_hour)");
    }
    if (!in.electricity && !in.config.electricity) {
        p.notes.emplace_back("energy is not priced (set prices.electricity or fleet.electricity)");
    }
    if (!in.unit_up) {
        p.notes.emplace_back("no spares planned (add an availability: block with a target)");
    }
    if (in.rent_per_hour) {
        // Mean price of 1 kWh at the facility over the day.
        double mean_kwh = 0;
        for (int h = 0; h < 24; ++h) {
            if (const auto pr = fleet_electricity(in.config, h, in.electricity)) {
                mean_kwh += energy_cost(Watts(1e3), 1.0, *pr, in.pue).amount / 24.0;
            }
        }
        const double idle = in.idle_power.si() / 1e3 * mean_kwh;
        const double extra = std::max(0.0, (in.load_power - in.idle_power).si() / 1e3) * mean_kwh;
        const double saved = *in.rent_per_hour - extra;
        if (saved > 0) {
            p.break_even_utilisation = (in.owned_per_hour + idle) / saved;
        }
    }
    return p;
}

} // namespace gpuplan::model
