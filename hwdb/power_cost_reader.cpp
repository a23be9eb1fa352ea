#include "hwdb/detail/power_cost_reader.hpp"

#include <charconv>
#include <cmath>
#include <string>

namespace gpuplan::hwdb::detail {
namespace {

using model::Dimension;

std::optional<Watts> opt_watts(MapReader& m, const std::string& key) {
    if (auto v = m.opt_quantity(key, Dimension::Watts)) {
        return Watts(*v);
    }
    return std::nullopt;
}

// Amps and volts have no Dimension of their own: "32 A", "400 V" (a bare number is an error,
// as for every dimensional key).
std::optional<double> opt_electric(MapReader& m, const std::string& key, const char* unit,
                                   const char* example) {
    const auto text = m.opt_string(key);
    if (!text) {
        return std::nullopt;
    }
    std::string s = *text;
    while (!s.empty() && s.back() == ' ') {
        s.pop_back();
    }
    const std::string u = unit;
    if (s.size() <= u.size() || s.compare(s.size() - u.size(), u.size(), u) != 0) {
        m.fail_at(key, "'" + *text + "' needs the unit " + u + "; write e.g. '" + example + "'");
    }
    std::string number = s.substr(0, s.size() - u.size());
    while (!number.empty() && number.back() == ' ') {
        number.pop_back();
    }
    double v = 0;
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || ptr != number.data() + number.size() || !std::isfinite(v) || v <= 0) {
        m.fail_at(key, "'" + *text + "' is not a positive number of " + u + "; write e.g. '" +
                           example + "'");
    }
    return v;
}

} // namespace

void read_power_model(MapReader& m, model::PowerModel& pm) {
    pm.board_power = opt_watts(m, "board_power");
    pm.idle_power = opt_watts(m, "idle_power");
    pm.resident_power = opt_watts(m, "resident_power");
    pm.host_power = opt_watts(m, "host_power");
    pm.psu_efficiency = m.opt_number("psu_efficiency", 0.5, 1.0).value_or(pm.psu_efficiency);
    pm.idle_fraction = m.opt_number("idle_fraction", 0.0, 1.0).value_or(pm.idle_fraction);
    pm.resident_fraction =
        m.opt_number("resident_fraction", 0.0, 1.0).value_or(pm.resident_fraction);
    pm.compute_weight = m.opt_number("compute_weight", 0.0, 10.0).value_or(pm.compute_weight);
    pm.memory_weight = m.opt_number("memory_weight", 0.0, 10.0).value_or(pm.memory_weight);
    pm.dynamic_exponent = m.opt_number("dynamic_exponent", 1.0, 5.0).value_or(pm.dynamic_exponent);
    pm.memory_core_share =
        m.opt_number("memory_core_share", 0.0, 1.0).value_or(pm.memory_core_share);
    pm.memory_clock_sensitivity =
        m.opt_number("memory_clock_sensitivity", 0.0, 1.0).value_or(pm.memory_clock_sensitivity);
    pm.min_clock = m.opt_number("min_clock", 0.05, 1.0).value_or(pm.min_clock);
}

model::RackConfig read_rack(std::optional<MapReader> m) {
    model::RackConfig r;
    if (!m) {
        return r;
    }
    if (auto pdu = m->opt_map("pdu")) {
        r.pdu.current_a = opt_electric(*pdu, "amps", "A", "32 A").value_or(r.pdu.current_a);
        r.pdu.voltage_v = opt_electric(*pdu, "volts", "V", "400 V").value_or(r.pdu.voltage_v);
        r.pdu.phases = pdu->opt_integer("phases", 1, 3).value_or(r.pdu.phases);
        if (r.pdu.phases == 2) {
            pdu->fail_at("phases", "use 1 (single phase) or 3 (three phase)");
        }
        r.pdu.derating = pdu->opt_number("derating", 0.01, 1.0).value_or(r.pdu.derating);
        r.pdu.count = pdu->opt_integer("count", 1, 64).value_or(r.pdu.count);
        r.pdu.redundant = pdu->boolean_or("redundant", r.pdu.redundant);
        if (r.pdu.redundant && (r.pdu.count < 2 || r.pdu.count % 2 != 0)) {
            pdu->fail_at("count", "redundant (A+B) feeds need an even count of at least 2");
        }
        pdu->finish();
    }
    if (auto cool = m->opt_map("cooling")) {
        r.cooling.kind = opt_enum<model::CoolingKind>(*cool, "kind").value_or(r.cooling.kind);
        r.cooling.limit = opt_watts(*cool, "limit");
        cool->finish();
    }
    r.rack_units = m->opt_integer("rack_units", 1, 100).value_or(r.rack_units);
    r.nodes = m->opt_integer("nodes", 1, 1 << 20);
    r.nodes_per_rack = m->opt_integer("nodes_per_rack", 1, 1024);
    m->finish();
    return r;
}

model::CostConfig read_cost(std::optional<MapReader> m) {
    model::CostConfig c;
    if (!m) {
        return c;
    }
    c.amortization_years =
        m->opt_number("amortization_years", 0.1, 50).value_or(c.amortization_years);
    c.residual_fraction =
        m->opt_number("residual_fraction", 0.0, 0.99).value_or(c.residual_fraction);
    c.maintenance_fraction =
        m->opt_number("maintenance_fraction", 0.0, 1.0).value_or(c.maintenance_fraction);
    if (m->has("colocation")) {
        c.colocation = m->price("colocation");
        if (c.colocation->per != model::PriceBasis::KilowattMonth) {
            m->fail_at("colocation",
                       "wrong price unit; write it per kW-month, e.g. '$150/kW-month'");
        }
    } else {
        (void)m->opt_string("colocation");
    }
    if (m->has("utilization") && m->node()["utilization"].IsScalar()) {
        const std::string u = m->string("utilization");
        if (u != "steady") {
            m->fail_at("utilization", "'" + u +
                                          "': write 'steady' or a mapping with hours_per_day "
                                          "and days_per_month");
        }
    } else if (auto u = m->opt_map("utilization")) {
        c.utilization.hours_per_day = u->opt_number("hours_per_day", 0.01, 24).value_or(24);
        c.utilization.days_per_month = u->opt_number("days_per_month", 0.01, 30).value_or(30);
        u->finish();
    }
    c.off_hours = opt_enum<model::OffHours>(*m, "off_hours").value_or(c.off_hours);
    m->finish();
    return c;
}

std::optional<model::FleetConfig> read_fleet(std::optional<MapReader> m) {
    if (!m) {
        return std::nullopt;
    }
    model::FleetConfig c;
    c.span = opt_enum<model::FleetSpan>(*m, "span").value_or(c.span);
    c.step = opt_typed<Seconds>(*m, "step", Dimension::Seconds).value_or(c.step);
    c.diurnal_amplitude =
        m->opt_number("diurnal_amplitude", 0.0, 0.999999).value_or(c.diurnal_amplitude);
    c.peak_hour = m->opt_number("peak_hour", 0.0, 23.999999).value_or(c.peak_hour);
    c.weekend_factor = m->opt_number("weekend_factor", 1e-6, 1e6).value_or(c.weekend_factor);
    c.annual_growth = m->opt_number("annual_growth", -0.999999, 100).value_or(c.annual_growth);
    c.rented_cap = m->opt_integer("rented_cap", 0, 1 << 24);
    c.owned = m->opt_integer("owned", 0, 1 << 24);
    if (auto e = m->opt_map("electricity")) {
        model::TimeOfDayPrices t;
        t.peak = e->price("peak");
        t.off_peak = e->price("off_peak");
        for (const char* key : {"peak", "off_peak"}) {
            const model::Price& p = std::string(key) == "peak" ? t.peak : t.off_peak;
            if (p.per != model::PriceBasis::KilowattHour) {
                e->fail_at(key, "wrong price unit; write it per kWh, e.g. '$0.12/kWh'");
            }
        }
        t.peak_start = e->opt_integer("peak_start", 0, 23).value_or(t.peak_start);
        t.peak_end = e->opt_integer("peak_end", 0, 24).value_or(t.peak_end);
        e->finish();
        c.electricity = t;
    }
    try {
        model::validate(c);
    } catch (const InvalidArgument& e) {
        m->fail_here(e.what());
    }
    m->finish();
    return c;
}

} // namespace gpuplan::hwdb::detail
