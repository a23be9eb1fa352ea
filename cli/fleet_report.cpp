// `gpuplan plan FILE --fleet`: the fleet over the scenario's horizon and the cheapest mix of
// owned and rented replicas (plan/fleet.hpp, model/fleet.hpp; docs/fleet.md).
#include "cli/fleet_report.hpp"

#include "cli/json_out.hpp"
#include "cli/scenario_options.hpp"
#include "cli/table.hpp"
#include "model/fleet.hpp"

#include <algorithm>
#include <ostream>
#include <set>

namespace gpuplan::cli {
namespace {

const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

nlohmann::json totals_json(const model::FleetTotals& t) {
    return {{"hours", t.hours},
            {"requests", t.requests},
            {"peak_replicas", t.peak_need},
            {"mean_replicas", t.hours > 0 ? t.need_replica_hours / t.hours : 0.0},
            {"owned_replica_hours", t.owned_replica_hours},
            {"rented_replica_hours", t.rented_replica_hours},
            {"rent_hours", t.rent_hours},
            {"cloud_requests", t.cloud_requests},
            {"unserved_requests", t.unserved_requests},
            {"energy_kwh", t.energy_kwh},
            {"energy_cost", t.energy_cost},
            {"owned_cost", t.owned_cost},
            {"rented_cost", t.rented_cost},
            {"cloud_cost", t.cloud_cost},
            {"total_cost", t.total()}};
}

nlohmann::json opt(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

plan::FleetAnswer answer(CliContext& ctx, const model::Scenario& s,
                         const model::FleetConfig& config) {
    const model::ServerSpec* server = nullptr;
    std::optional<model::ServerSpec> node;
    if (!s.node_ref.empty()) {
        node = ctx.db().server(s.node_ref);
        server = &*node;
    }
    const model::EfficiencyProfile profile = choose_profile(ctx, ScenarioFlags{}, s.deployment.gpu);
    return plan::fleet_answer(s, config, server, profile);
}

std::string money(const std::string& currency, double v, int decimals = 0) {
    return fixed(v, decimals) + " " + currency;
}

std::string pct(double f) {
    return fixed(f * 100, 1) + " %";
}

} // namespace

nlohmann::json fleet_json(const model::Scenario& s, const plan::FleetSetup& setup,
                          const model::FleetPlan& p) {
    const model::FleetInputs& in = setup.inputs;
    const model::FleetConfig& c = in.config;
    const auto& cap = setup.capacity;
    nlohmann::json j;
    j["scenario"] = s.name;
    j["span"] = model::to_string(c.span);
    j["step_s"] = c.step.si();
    j["steps"] = p.run.steps;
    j["currency"] = in.currency;
    j["traffic"] = {{"base_rps", in.base_rps},
                    {"diurnal_amplitude", c.diurnal_amplitude},
                    {"peak_hour", c.peak_hour},
                    {"weekend_factor", c.weekend_factor},
                    {"annual_growth", c.annual_growth}};
    j["replica"] = {{"gpus", in.gpus_per_replica},
                    {"running", cap.running},
                    {"most_running", cap.most_running},
                    {"rps", cap.rps},
                    {"output_tok_s", cap.output_tok_s},
                    {"ttft_s", cap.ttft_s},
                    {"tpot_s", cap.tpot_s},
                    {"e2e_s", cap.e2e_s},
                    {"bound", cap.bound},
                    {"idle_power_w", in.idle_power.si()},
                    {"load_power_w", in.load_power.si()},
                    {"owned_per_hour", in.owned_per_hour},
                    {"rent_per_hour", opt(in.rent_per_hour)},
                    {"spare_unit_up", opt(in.unit_up)}};
    j["cloud_per_request"] = opt(in.cloud_per_request);
    j["rented_cap"] = c.rented_cap ? nlohmann::json(*c.rented_cap) : nlohmann::json(nullptr);
    j["peak_replicas"] = p.peak_need;
    j["mean_replicas"] = p.mean_need;
    j["break_even_utilisation"] = opt(p.break_even_utilisation);
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& pt : p.curve) {
        curve.push_back(
            {{"owned", pt.owned},
             {"spares", pt.spares},
             {"meets", pt.meets},
             {"total_cost", pt.total},
             {"share_of_hours", static_cast<std::size_t>(pt.owned) < p.share_at_least.size()
                                    ? p.share_at_least[static_cast<std::size_t>(pt.owned)]
                                    : 0.0}});
    }
    j["curve"] = curve;
    j["best_owned"] = p.best ? nlohmann::json(*p.best) : nlohmann::json(nullptr);
    j["owned"] = p.run.owned;
    j["spares"] = p.run.spares;
    j["meets"] = p.run.meets;
    j["why"] = p.run.why.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.run.why);
    j["total"] = totals_json(p.run.total);
    j["all_rented"] = totals_json(p.all_rented.total);
    nlohmann::json months = nlohmann::json::array();
    for (const auto& m : p.run.months) {
        months.push_back(totals_json(m));
    }
    j["months"] = months;
    nlohmann::json days = nlohmann::json::array();
    for (const auto& d : p.run.days) {
        days.push_back({{"requests", d.requests},
                        {"peak_replicas", d.peak_need},
                        {"mean_replicas", d.hours > 0 ? d.need_replica_hours / d.hours : 0.0},
                        {"rented_replica_hours", d.rented_replica_hours},
                        {"energy_kwh", d.energy_kwh},
                        {"total_cost", d.total()}});
    }
    j["days"] = days;
    nlohmann::json hours = nlohmann::json::array();
    for (const auto& h : p.run.by_hour) {
        hours.push_back({{"mean_replicas", h.hours > 0 ? h.need_replica_hours / h.hours : 0.0},
                         {"mean_rented", h.hours > 0 ? h.rented_replica_hours / h.hours : 0.0},
                         {"energy_kwh", h.energy_kwh},
                         {"energy_cost", h.energy_cost},
                         {"total_cost", h.total()}});
    }
    j["by_hour_of_day"] = hours;
    std::vector<std::string> notes = setup.notes;
    notes.insert(notes.end(), p.notes.begin(), p.notes.end());
    j["notes"] = notes;
    return j;
}

int run_fleet_plan(CliContext& ctx, const model::Scenario& s, const model::FleetConfig& config,
                   bool json) {
    const plan::FleetAnswer a = answer(ctx, s, config);
    const auto& in = a.setup.inputs;
    const auto& c = in.config;
    const auto& p = a.plan;
    const auto& cap = a.setup.capacity;
    if (json) {
        *ctx.out << json_text(fleet_json(s, a.setup, p)) << '\n';
        return 0;
    }
    auto& out = *ctx.out;
    const std::string& cur = in.currency;
    const auto& d = s.deployment;
    out << "fleet " << s.name << ": " << d.model.name << ", replicas of " << in.gpus_per_replica
        << " x " << d.gpu.name << ", a " << model::to_string(c.span) << " in steps of "
        << fixed(c.step.si() / 3600.0, 2) << " h (" << p.run.steps << " steady states)\n"
        << "traffic      " << fixed(in.base_rps, 2)
        << " requests/s on a weekday at the start, diurnal swing " << pct(c.diurnal_amplitude)
        << " peaking at " << fixed(c.peak_hour, 1) << " h, weekends x" << fixed(c.weekend_factor, 2)
        << ", growth " << pct(c.annual_growth) << " a year\n"
        << "replica      " << cap.running << " sequences within the SLO (a larger batch misses "
        << cap.bound << "; memory holds " << cap.most_running << "): " << fixed(cap.rps, 3)
        << " requests/s, TTFT " << fixed(cap.ttft_s * 1e3, 0) << " ms, TPOT "
        << fixed(cap.tpot_s * 1e3, 1) << " ms, E2E " << fixed(cap.e2e_s, 2) << " s\n"
        << "owned        " << money(cur, in.owned_per_hour, 2)
        << " per replica-hour (capex amortised, maintenance, colocation), "
        << fixed(in.idle_power.si() / 1e3, 2) << " kW resident to "
        << fixed(in.load_power.si() / 1e3, 2) << " kW loaded at the wall, PUE " << fixed(in.pue, 2)
        << '\n'
        << "rented       "
        << (in.rent_per_hour ? money(cur, *in.rent_per_hour, 2) + " per replica-hour"
                             : std::string("no rent price"))
        << (c.rented_cap ? ", at most " + std::to_string(*c.rented_cap) + " at once" : "")
        << (in.cloud_per_request
                ? "; beyond that the cloud at " + money(cur, *in.cloud_per_request * 1e3, 2) +
                      " per 1000 requests"
                : "")
        << '\n'
        << "need         peak " << p.peak_need << " replicas, mean " << fixed(p.mean_need, 2)
        << " over the " << model::to_string(c.span) << "\n\n";

    // The cost curve at a few B: the ends, the quarters and around the answer.
    std::set<int> shown = {0, p.peak_need};
    for (int q = 1; q < 4; ++q) {
        shown.insert(p.peak_need * q / 4);
    }
    for (const int b : {p.run.owned - 1, p.run.owned, p.run.owned + 1}) {
        if (b >= 0 && b <= p.peak_need) {
            shown.insert(b);
        }
    }
    out << "cost of the " << model::to_string(c.span) << " against the replicas owned:\n";
    Table t({"owned", "spares", "need reaches it", cur + " total", "meets"});
    for (const int b : shown) {
        const auto& pt = p.curve.at(static_cast<std::size_t>(b));
        t.add_row({std::to_string(b) + (p.best && b == *p.best ? " *" : ""),
                   std::to_string(pt.spares), pct(p.share_at_least.at(static_cast<std::size_t>(b))),
                   fixed(pt.total, 0), pt.meets ? "yes" : "no"});
    }
    t.print(out);
    out << '\n';

    const auto& r = p.run;
    const auto& tot = r.total;
    out << (c.owned ? "owned        " : "answer       ");
    if (p.best || c.owned) {
        out << "own " << r.owned << " replicas (+" << r.spares << " spares"
            << (in.unit_up ? " for availability " + fixed(in.availability_target * 100, 2) + " %"
                           : "")
            << ") and rent the rest: " << money(cur, tot.total()) << " for the "
            << model::to_string(c.span);
        if (p.all_rented.meets && p.all_rented.total.total() > 0) {
            out << ", " << pct(1.0 - tot.total() / p.all_rented.total.total())
                << " less than renting everything (" << money(cur, p.all_rented.total.total())
                << ")";
        }
        out << '\n';
    } else {
        out << "no mix of owned and rented replicas serves every request within the rented cap\n";
    }
    if (!r.meets) {
        out << "NOT MET      " << r.why << '\n';
    }
    if (p.break_even_utilisation) {
        out << "break-even   an owned replica costs less than renting one when it serves more "
               "than "
            << pct(*p.break_even_utilisation)
            << " of the hours (its hourly cost and resident energy over the rent less the energy "
               "its load adds); owned replica number "
            << r.owned + 1 << " would serve "
            << pct(static_cast<std::size_t>(r.owned + 1) < p.share_at_least.size()
                       ? p.share_at_least[static_cast<std::size_t>(r.owned + 1)]
                       : 0.0)
            << " of the hours\n";
    }
    out << "totals       owned " << money(cur, tot.owned_cost) << ", energy "
        << fixed(tot.energy_kwh, 0) << " kWh " << money(cur, tot.energy_cost) << ", rented "
        << money(cur, tot.rented_cost) << " (" << fixed(tot.rented_replica_hours, 0)
        << " replica-hours over " << fixed(tot.rent_hours, 0) << " h), cloud "
        << money(cur, tot.cloud_cost) << " (" << fixed(tot.cloud_requests, 0) << " requests)\n"
        << "served       " << fixed(tot.requests, 0) << " requests; owned replica-hours "
        << fixed(tot.owned_replica_hours, 0) << " of " << fixed(tot.need_replica_hours, 0)
        << " needed\n";

    if (r.months.size() > 1) {
        out << "\nby month:\n";
        Table m({"month", "requests", "peak", "mean", "rented rep-h", "kWh", cur});
        for (std::size_t i = 0; i < r.months.size(); ++i) {
            const auto& x = r.months[i];
            m.add_row({kMonths[i], fixed(x.requests, 0), std::to_string(x.peak_need),
                       fixed(x.hours > 0 ? x.need_replica_hours / x.hours : 0.0, 2),
                       fixed(x.rented_replica_hours, 0), fixed(x.energy_kwh, 0),
                       fixed(x.total(), 0)});
        }
        m.print(out);
    } else {
        out << "\nby day:\n";
        Table m({"day", "requests", "peak", "mean", "rented rep-h", "kWh", cur});
        for (std::size_t i = 0; i < r.days.size(); ++i) {
            const auto& x = r.days[i];
            m.add_row({std::to_string(i + 1), fixed(x.requests, 0), std::to_string(x.peak_need),
                       fixed(x.hours > 0 ? x.need_replica_hours / x.hours : 0.0, 2),
                       fixed(x.rented_replica_hours, 0), fixed(x.energy_kwh, 0),
                       fixed(x.total(), 0)});
        }
        m.print(out);
    }
    out << "\nby hour of the day (means over the " << model::to_string(c.span) << "):\n";
    Table h({"hour", "replicas", "rented", cur + "/kWh", cur + " a day"});
    const double days = std::max(1.0, tot.hours / 24.0);
    for (int i = 0; i < 24; ++i) {
        const auto& x = r.by_hour[static_cast<std::size_t>(i)];
        const auto price = model::fleet_electricity(c, i, in.electricity);
        h.add_row({std::to_string(i), fixed(x.hours > 0 ? x.need_replica_hours / x.hours : 0, 2),
                   fixed(x.hours > 0 ? x.rented_replica_hours / x.hours : 0, 2),
                   price ? fixed(price->money.amount, 4) : "-", fixed(x.total() / days, 0)});
    }
    h.print(out);
    for (const auto& n : a.setup.notes) {
        out << "note         " << n << '\n';
    }
    for (const auto& n : p.notes) {
        out << "note         " << n << '\n';
    }
    return 0;
}

} // namespace gpuplan::cli
