// `gpuplan cost`: monthly cost of owning (capex amortized, energy × PUE, maintenance,
// colocation) against renting per GPU-hour, cost per million output tokens at the workload's
// throughput (under the scenario's power limit) and the rent-vs-buy break-even month.
#include "cli/cli_context.hpp"
#include "cli/command_reports.hpp"
#include "cli/json_out.hpp"
#include "cli/load_report.hpp"
#include "cli/options.hpp"
#include "cli/power_report.hpp"
#include "cli/report_json.hpp"
#include "cli/scenario_options.hpp"
#include "cli/table.hpp"
#include "model/cost.hpp"
#include "model/error.hpp"
#include "model/power.hpp"
#include "model/price_list.hpp"
#include "model/unit_parser.hpp"
#include "plan/analysis.hpp"

#include <nlohmann/json.hpp>

#include <ostream>

namespace gpuplan::cli {
namespace {

struct CostFlags {
    std::string gpu_hour, gpu_price, node_price, electricity, colocation, off_hours;
    std::optional<double> years, residual, maintenance, hours_per_day, days_per_month;
};

void add_cost_options(po::options_description& desc, CostFlags& f) {
    // clang-format off
    desc.add_options()
        ("gpu-hour", po::value(&f.gpu_hour), "cloud rent per GPU-hour, e.g. '$2.49/h'")
        ("gpu-price", po::value(&f.gpu_price), "purchase price per GPU, e.g. '$25000'")
        ("node-price", po::value(&f.node_price), "purchase price per whole node, GPUs included, e.g. '$270000'")
        ("electricity", po::value(&f.electricity), "energy price, e.g. '0.6 CNY/kWh'")
        ("colocation", po::value(&f.colocation), "colocation per provisioned kW-month, e.g. '$150/kW-month'")
        ("years", po::value<double>()->notifier([&f](double v) { f.years = v; }), "amortization years (default 4)")
        ("residual", po::value<double>()->notifier([&f](double v) { f.residual = v; }), "resale value at the end, fraction of capex (default 0)")
        ("maintenance", po::value<double>()->notifier([&f](double v) { f.maintenance = v; }), "maintenance per year, fraction of capex (default 0)")
        ("hours-per-day", po::value<double>()->notifier([&f](double v) { f.hours_per_day = v; }), "serving hours per day (default 24)")
        ("days-per-month", po::value<double>()->notifier([&f](double v) { f.days_per_month = v; }), "serving days per month (default 30)")
        ("off-hours", po::value(&f.off_hours), "owned GPUs outside serving hours: resident (default), idle or off")
        ("json", "machine-readable output");
    // clang-format on
}

model::Price price_flag(const std::string& text, const char* flag, model::PriceBasis basis,
                        const char* example) {
    const model::Price p = model::parse_price_or_throw(text, flag);
    if (p.per != basis) {
        throw UsageError(std::string(flag) + " '" + text + "': wrong price unit; write e.g. '" +
                         example + "'");
    }
    return p;
}

void apply_cost_flags(model::Scenario& s, const CostFlags& f) {
    using model::PriceBasis;
    if (!f.gpu_hour.empty() || !f.gpu_price.empty() || !f.node_price.empty()) {
        model::bind_prices_to_hardware(s);
    }
    if (!f.gpu_hour.empty())
        s.prices.gpu_hour = price_flag(f.gpu_hour, "--gpu-hour", PriceBasis::Hour, "$2.49/h");
    if (!f.gpu_price.empty())
        s.prices.gpu_purchase = price_flag(f.gpu_price, "--gpu-price", PriceBasis::Once, "$25000");
    if (!f.node_price.empty())
        s.prices.node_purchase =
            price_flag(f.node_price, "--node-price", PriceBasis::Once, "$270000");
    if (!f.electricity.empty())
        s.prices.electricity =
            price_flag(f.electricity, "--electricity", PriceBasis::KilowattHour, "0.6 CNY/kWh");
    if (!f.colocation.empty())
        s.cost.colocation =
            price_flag(f.colocation, "--colocation", PriceBasis::KilowattMonth, "$150/kW-month");
    if (f.years)
        s.cost.amortization_years = *f.years;
    if (f.residual)
        s.cost.residual_fraction = *f.residual;
    if (f.maintenance)
        s.cost.maintenance_fraction = *f.maintenance;
    if (f.hours_per_day)
        s.cost.utilization.hours_per_day = *f.hours_per_day;
    if (f.days_per_month)
        s.cost.utilization.days_per_month = *f.days_per_month;
    if (!f.off_hours.empty()) {
        if (const auto hours = model::value_of<model::OffHours>(f.off_hours)) {
            s.cost.off_hours = *hours;
        } else {
            throw UsageError("--off-hours takes resident, idle or off, got '" + f.off_hours + "'");
        }
    }
}

nlohmann::json amount(const std::optional<model::Money>& m) {
    return m ? nlohmann::json(m->amount) : nlohmann::json(nullptr);
}

std::string money(const std::optional<model::Money>& m) {
    return m ? fixed(m->amount, 2) : std::string("-");
}

} // namespace

namespace {

/// The shared chain (plan/analysis.hpp): power at the scenario's load, then its cost.
plan::ServingAnalysis cost_analysis(CliContext& ctx, const model::Scenario& s,
                                    const model::EfficiencyProfile& profile,
                                    const model::ServerSpec** server) {
    (void)scenario_node(ctx, s, server);
    plan::AnalysisOptions o;
    o.parts = {.serving = false, .power = true, .racks = false, .cost = true};
    return plan::analyze_serving(s, *server, profile, o);
}

} // namespace

nlohmann::json cost_report(CliContext& ctx, const model::Scenario& s,
                           const model::EfficiencyProfile& profile) {
    const model::ServerSpec* server = nullptr;
    const plan::ServingAnalysis a = cost_analysis(ctx, s, profile, &server);
    const model::PowerEstimate& pe = *a.power;
    const model::CostInputs& in = *a.cost_inputs;
    const model::CostEstimate& c = *a.cost;
    const auto& u = s.cost.utilization;
    nlohmann::json j = scenario_json(s);
    j["operating_point"] = operating_point_json(pe.capped.operating_point);
    j["node"] = server ? nlohmann::json(server->name) : nlohmann::json(nullptr);
    j["nodes"] = in.nodes;
    j["currency"] = c.currency;
    j["hours_per_day"] = u.hours_per_day;
    j["days_per_month"] = u.days_per_month;
    j["off_hours"] = model::to_string(s.cost.off_hours);
    j["hours_serving"] = c.hours_serving;
    j["hours_off"] = c.hours_off;
    j["throughput_tok_s"] = in.throughput_tok_s;
    j["tokens_per_month"] = c.tokens;
    j["load_power_w"] = in.load_power.si();
    j["off_power_w"] = in.off_power.si();
    j["provisioned_power_w"] = in.provisioned_power.si();
    j["pue"] = in.pue;
    j["energy_kwh"] = c.energy_kwh;
    j["facility_kwh"] = c.facility_kwh;
    j["capex"] = amount(c.capex);
    j["capex_source"] = in.capex_source;
    j["amortization_years"] = s.cost.amortization_years;
    j["residual_fraction"] = s.cost.residual_fraction;
    j["maintenance_fraction"] = s.cost.maintenance_fraction;
    j["capex_monthly"] = amount(c.capex_monthly);
    j["energy_monthly"] = amount(c.energy_monthly);
    j["maintenance_monthly"] = amount(c.maintenance_monthly);
    j["colocation_monthly"] = amount(c.colocation_monthly);
    j["opex_monthly"] = amount(c.opex_monthly);
    j["own_monthly"] = amount(c.own_monthly);
    j["rent_monthly"] = amount(c.rent_monthly);
    j["rent_source"] = in.rent_source;
    j["own_per_million_tokens"] = amount(c.own_per_million_tokens);
    j["rent_per_million_tokens"] = amount(c.rent_per_million_tokens);
    j["break_even_month"] =
        c.break_even_month ? nlohmann::json(*c.break_even_month) : nlohmann::json(nullptr);
    j["cheaper"] = c.cheaper;
    j["excluded"] = c.excluded;
    j["power"] = power_json(pe);
    j["notes"] = c.notes;
    return j;
}

int run_cost(CliContext& ctx) {
    po::options_description desc("options");
    ScenarioFlags flags;
    add_scenario_options(desc, flags);
    PowerFlags pflags;
    add_power_options(desc, pflags);
    CostFlags cflags;
    add_cost_options(desc, cflags);
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("cost", ctx.args, desc, pos, vm, *ctx.out,
                       "[FILE] [--model M --gpu G ...] [--gpu-hour P --node-price P --electricity "
                       "P ...] [--json]")) {
        return 0;
    }
    model::Scenario s = build_scenario(ctx, flags);
    apply_power_flags(s, pflags);
    apply_cost_flags(s, cflags);
    const model::EfficiencyProfile profile = choose_profile(ctx, flags, s.deployment.gpu);
    if (vm.count("json")) {
        *ctx.out << json_text(cost_report(ctx, s, profile)) << '\n';
        return 0;
    }
    const model::ServerSpec* server = nullptr;
    const plan::ServingAnalysis a = cost_analysis(ctx, s, profile, &server);
    const model::PowerEstimate& pe = *a.power;
    const model::CostInputs& in = *a.cost_inputs;
    const model::CostEstimate& c = *a.cost;
    const auto& u = s.cost.utilization;

    auto& out = *ctx.out;
    const auto& d = s.deployment;
    out << s.name << ": " << d.model.name << " on " << d.gpus() << " x " << d.gpu.name;
    if (server) {
        out << " (" << in.nodes << " x " << server->name << ")";
    }
    out << "\nserving " << fixed(u.hours_per_day, 1) << " h/day x " << fixed(u.days_per_month, 0)
        << " days = " << fixed(c.hours_serving, 0) << " h/month (" << fixed(c.hours_off, 0)
        << " h off, GPUs " << model::to_string(s.cost.off_hours) << ")\n"
        << "load       " << load_line(pe.capped.operating_point) << '\n'
        << "throughput " << fixed(in.throughput_tok_s, 0) << " output tok/s"
        << (has_power_limit(s) ? " under the " + watts(pe.limit.per_gpu) + " per-GPU limit" : "")
        << " -> " << fixed(c.tokens / 1e6, 1) << " M tokens/month\n"
        << "power      " << watts(in.load_power) << " serving, " << watts(in.off_power) << " off, "
        << watts(in.provisioned_power) << " provisioned; " << fixed(c.energy_kwh, 0)
        << " kWh IT x PUE " << fixed(in.pue, 2) << " = " << fixed(c.facility_kwh, 0)
        << " kWh/month\n\n";
    const std::string cur = c.currency.empty() ? "" : " (" + c.currency + ")";
    Table t({"per month" + cur, "own", "rent"});
    t.add_row({"capex amortized (" + fixed(s.cost.amortization_years, 1) + " y, " +
                   fixed(s.cost.residual_fraction * 100, 0) + " % residual)",
               money(c.capex_monthly), ""});
    t.add_row({"energy", money(c.energy_monthly), ""});
    t.add_row({"maintenance (" + fixed(s.cost.maintenance_fraction * 100, 1) + " %/y)",
               money(c.maintenance_monthly), ""});
    t.add_row({"colocation", money(c.colocation_monthly), ""});
    t.add_row({"rent (" + std::to_string(d.gpus()) + " GPUs x " + fixed(c.hours_serving, 0) + " h)",
               "", money(c.rent_monthly)});
    t.add_row({"total", money(c.own_monthly), money(c.rent_monthly)});
    t.add_row({"per million output tokens", money(c.own_per_million_tokens),
               money(c.rent_per_million_tokens)});
    t.print(out);
    out << "\ncapex      " << money(c.capex) << cur
        << (in.capex_source.empty() ? "" : " from " + in.capex_source) << '\n'
        << "rent       "
        << (in.rent ? model::to_string(*in.rent) + " per GPU from " + in.rent_source
                    : std::string("-"))
        << '\n'
        << "break-even ";
    if (c.break_even_month) {
        out << "month " << *c.break_even_month
            << ": cumulative rent overtakes capex plus running costs\n";
    } else {
        out << "never (or not priced)\n";
    }
    if (!c.cheaper.empty()) {
        out << "cheaper    " << (c.cheaper == "own" ? "owning" : "renting")
            << " at this utilization\n";
    }
    if (!c.excluded.empty()) {
        out << "owning excludes ";
        for (std::size_t i = 0; i < c.excluded.size(); ++i) {
            out << (i ? ", " : "") << c.excluded[i];
        }
        out << '\n';
    }
    for (const auto& n : c.notes) {
        out << "  - " << n << '\n';
    }
    return 0;
}

} // namespace gpuplan::cli
