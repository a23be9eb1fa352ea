#include "cli/power_report.hpp"

#include "model/validity.hpp"

#include "cli/table.hpp"
#include "model/unit_parser.hpp"
#include "plan/analysis.hpp"

#include <cmath>
#include <ostream>

namespace gpuplan::cli {

void add_power_options(po::options_description& desc, PowerFlags& f) {
    // clang-format off
    desc.add_options()
        ("gpu-cap", po::value<std::string>()->notifier([&f](const std::string& v) { f.gpu_cap = v; }), "per-GPU power limit, e.g. '350 W'")
        ("node-cap", po::value<std::string>()->notifier([&f](const std::string& v) { f.node_cap = v; }), "per-node power limit at the wall, e.g. '8 kW'")
        ("rack-budget", po::value<std::string>()->notifier([&f](const std::string& v) { f.rack_budget = v; }), "per-rack power budget, e.g. '40 kW'")
        ("nodes-per-rack", po::value<int>()->notifier([&f](int v) { f.nodes_per_rack = v; }), "nodes sharing one rack budget (turns it into a per-GPU cap)")
        ("pue", po::value<double>()->notifier([&f](double v) { f.pue = v; }), "facility power usage effectiveness, e.g. 1.3")
        ("psu-efficiency", po::value<double>()->notifier([&f](double v) { f.psu_efficiency = v; }), "node DC / wall power (default 1: hwdb host power is at the wall)");
    // clang-format on
}

void apply_power_flags(model::Scenario& s, const PowerFlags& f) {
    if (f.gpu_cap)
        s.power.gpu_cap = model::parse_watts(*f.gpu_cap, "--gpu-cap");
    if (f.node_cap)
        s.power.node_cap = model::parse_watts(*f.node_cap, "--node-cap");
    if (f.rack_budget)
        s.power.rack_budget = model::parse_watts(*f.rack_budget, "--rack-budget");
    for (const auto& [w, flag] : {std::pair{s.power.gpu_cap, "--gpu-cap"},
                                  {s.power.node_cap, "--node-cap"},
                                  {s.power.rack_budget, "--rack-budget"}}) {
        if (w && w->si() <= 0) {
            throw UsageError(std::string(flag) + " must be greater than zero");
        }
    }
    if (f.gpu_cap) {
        // The driver's settable range (model/validity.hpp), the rule the loader applies too.
        model::check_gpu_cap(s.deployment.gpu, *s.power.gpu_cap, "--gpu-cap");
    }
    if (f.pue) {
        if (*f.pue < 1.0 || *f.pue > 5.0) {
            throw UsageError("--pue must be from 1 to 5, e.g. 1.3");
        }
        s.power.pue = *f.pue;
    }
    if (f.psu_efficiency) {
        if (*f.psu_efficiency < 0.5 || *f.psu_efficiency > 1.0) {
            throw UsageError("--psu-efficiency must be from 0.5 to 1, e.g. 0.94");
        }
        s.power_model.psu_efficiency = *f.psu_efficiency;
    }
    if (f.nodes_per_rack) {
        if (*f.nodes_per_rack < 1) {
            throw UsageError("--nodes-per-rack must be at least 1");
        }
        s.rack.nodes_per_rack = *f.nodes_per_rack;
    }
}

bool has_power_limit(const model::Scenario& s) {
    return s.power.gpu_cap || s.power.node_cap || (s.power.rack_budget && s.rack.nodes_per_rack);
}

model::NodePower scenario_node(CliContext& ctx, const model::Scenario& s,
                               const model::ServerSpec** server) {
    const model::ServerSpec* spec = s.node_ref.empty() ? nullptr : &ctx.db().server(s.node_ref);
    if (server) {
        *server = spec;
    }
    return plan::scenario_node(s, spec);
}

std::string watts(Watts w) {
    return std::abs(w.si()) >= 1e3 ? fixed(w.si() / 1e3, 2) + " kW" : fixed(w.si(), 0) + " W";
}

namespace {

std::string ms(Seconds s) {
    return fixed(s.si() * 1e3, 1) + " ms";
}
std::string pct(double f) {
    return fixed(f * 100, 1) + " %";
}

nlohmann::json phase_json(const model::PhasePower& p) {
    return {{"clock", p.clock},
            {"slowdown", p.slowdown},
            {"uncapped_power_w", p.uncapped.si()},
            {"capped_power_w", p.capped.si()},
            {"compute_activity", p.activity.compute},
            {"memory_activity", p.activity.memory}};
}

nlohmann::json slo_json(const model::SloCheck& c) {
    return {{"target_s", c.target ? nlohmann::json(c.target->si()) : nlohmann::json(nullptr)},
            {"uncapped_s", c.uncapped.si()},
            {"capped_s", c.capped.si()},
            {"met_uncapped", c.met_uncapped()},
            {"met_capped", c.met_capped()}};
}

std::string met(const model::SloCheck& c, Seconds t, bool ok) {
    if (!c.target) {
        return ms(t);
    }
    return ms(t) + (ok ? " (meets " : " (MISSES ") + ms(*c.target) + ")";
}

} // namespace

nlohmann::json power_json(const model::PowerEstimate& p) {
    return {{"idle_power_w", p.levels.idle.si()},
            {"resident_power_w", p.levels.resident.si()},
            {"board_power_w", p.levels.board.si()},
            {"limit_w", p.limit.per_gpu.si()},
            {"limit_source", model::to_string(p.limit.source)},
            {"limited", p.limited},
            {"unreachable", p.unreachable},
            {"below_resident", p.limit.below_resident},
            {"prefill", phase_json(p.prefill)},
            {"steady", phase_json(p.steady)},
            {"ttft_uncapped_s", p.uncapped.ttft.si()},
            {"ttft_capped_s", p.capped.ttft.si()},
            {"tpot_uncapped_s", p.uncapped.tpot.si()},
            {"tpot_capped_s", p.capped.tpot.si()},
            {"throughput_uncapped_tok_s", p.uncapped.throughput},
            {"throughput_capped_tok_s", p.capped.throughput},
            {"throughput_loss", p.throughput_loss},
            {"slo", {{"ttft", slo_json(p.ttft)}, {"tpot", slo_json(p.tpot)}}},
            {"nodes", p.nodes},
            {"node_known", p.node.known},
            {"host_power_w", p.node.host.si()},
            {"gpu_average_w", p.gpu_average.si()},
            {"gpu_peak_w", p.gpu_peak.si()},
            {"deployment_average_w", p.deployment_average.si()},
            {"deployment_peak_w", p.deployment_peak.si()},
            {"deployment_idle_w", p.deployment_idle.si()},
            {"node_peak_uncapped_w", p.node_peak_uncapped.si()},
            {"node_peak_w", p.node_peak.si()},
            {"pue", p.pue},
            {"facility_average_w", p.facility_average.si()},
            {"energy_per_token_j", p.energy_per_token_j},
            {"gpu_energy_per_token_j", p.gpu_energy_per_token_j},
            {"oversubscription", p.oversubscription},
            {"nodes_per_rack_uncapped", p.racks_uncapped.nodes_per_rack},
            {"nodes_per_rack_capped", p.racks_capped.nodes_per_rack},
            {"rack_binding_uncapped", model::to_string(p.racks_uncapped.binding)},
            {"rack_binding_capped", model::to_string(p.racks_capped.binding)},
            {"notes", p.notes}};
}

void print_power(std::ostream& out, const model::PowerEstimate& p) {
    out << "power per GPU: idle " << watts(p.levels.idle) << ", model resident "
        << watts(p.levels.resident) << ", board " << watts(p.levels.board) << "; limit "
        << watts(p.limit.per_gpu) << " (" << model::to_string(p.limit.source) << ")\n";
    Table t({"phase", "power uncapped", "power capped", "clock", "slowdown"});
    t.add_row({"prefill (TTFT step)", watts(p.prefill.uncapped), watts(p.prefill.capped),
               pct(p.prefill.clock), fixed(p.prefill.slowdown, 3) + "x"});
    t.add_row({"steady (TPOT cycle)", watts(p.steady.uncapped), watts(p.steady.capped),
               pct(p.steady.clock), fixed(p.steady.slowdown, 3) + "x"});
    t.print(out);
    out << "TTFT        " << met(p.ttft, p.uncapped.ttft, p.ttft.met_uncapped()) << " -> "
        << met(p.ttft, p.capped.ttft, p.ttft.met_capped()) << '\n'
        << "TPOT        " << met(p.tpot, p.uncapped.tpot, p.tpot.met_uncapped()) << " -> "
        << met(p.tpot, p.capped.tpot, p.tpot.met_capped()) << '\n'
        << "throughput  " << fixed(p.uncapped.throughput, 0) << " -> "
        << fixed(p.capped.throughput, 0) << " tok/s (" << pct(p.throughput_loss)
        << " lost to the limit)\n"
        << "draw        " << watts(p.gpu_average) << " per GPU at this load; deployment "
        << watts(p.deployment_average) << " average, " << watts(p.deployment_peak) << " peak, "
        << watts(p.deployment_idle) << " resident"
        << (p.node.known ? " (host share included)" : " (no host counted)") << '\n'
        << "facility    " << watts(p.facility_average) << " at PUE " << fixed(p.pue, 2) << "; "
        << fixed(p.energy_per_token_j, 2) << " J per output token ("
        << fixed(p.gpu_energy_per_token_j, 2) << " J in the GPUs)\n"
        << "node peak   " << watts(p.node_peak_uncapped) << " uncapped, " << watts(p.node_peak)
        << " under the limit: " << pct(p.oversubscription) << " more nodes per power budget\n"
        << "racks       " << p.racks_uncapped.nodes_per_rack << " nodes per rack uncapped ("
        << model::to_string(p.racks_uncapped.binding) << " binds) -> "
        << p.racks_capped.nodes_per_rack << " under the limit ("
        << model::to_string(p.racks_capped.binding) << " binds); gpuplan rack shows every limit\n";
    for (const auto& n : p.notes) {
        out << "  - " << n << '\n';
    }
}

} // namespace gpuplan::cli
