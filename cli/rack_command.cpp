// `gpuplan rack`: nodes per rack, racks needed and the binding limit (budget, PDU, cooling,
// rack units), on a node power basis the user picks, with the oversubscription a cap buys.
#include "cli/cli_context.hpp"
#include "cli/json_out.hpp"
#include "cli/options.hpp"
#include "cli/power_report.hpp"
#include "cli/scenario_options.hpp"
#include "cli/table.hpp"
#include "model/error.hpp"
#include "model/power.hpp"
#include "model/rack.hpp"
#include "model/unit_parser.hpp"
#include "plan/analysis.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>

namespace gpuplan::cli {
namespace {

struct RackFlags {
    std::optional<int> nodes, phases, pdus, rack_units;
    std::optional<double> amps, volts, derating;
    bool redundant = false;
    std::string cooling, cooling_limit, basis = "peak";
};

void add_rack_options(po::options_description& desc, RackFlags& f) {
    // clang-format off
    desc.add_options()
        ("nodes", po::value<int>()->notifier([&f](int v) { f.nodes = v; }), "nodes to place (default: the deployment's, else 1)")
        ("pdu-amps", po::value<double>()->notifier([&f](double v) { f.amps = v; }), "PDU breaker rating in amps (default 32)")
        ("pdu-volts", po::value<double>()->notifier([&f](double v) { f.volts = v; }), "PDU volts, line-to-line for three phases (default 400)")
        ("pdu-phases", po::value<int>()->notifier([&f](int v) { f.phases = v; }), "1 or 3 (default 3)")
        ("pdu-derating", po::value<double>()->notifier([&f](double v) { f.derating = v; }), "continuous-load fraction (default 0.8)")
        ("pdus", po::value<int>()->notifier([&f](int v) { f.pdus = v; }), "PDUs per rack (default 1)")
        ("redundant-pdus", po::bool_switch(&f.redundant), "A+B feeds: only half the PDUs count")
        ("cooling", po::value(&f.cooling), "air or liquid (default air)")
        ("cooling-limit", po::value(&f.cooling_limit), "heat the rack's cooling removes, e.g. '20 kW' (default air 20 kW, liquid 130 kW)")
        ("rack-units", po::value<int>()->notifier([&f](int v) { f.rack_units = v; }), "usable U per rack (default 42)")
        ("basis", po::value(&f.basis), "node power basis: nameplate (PSU max), peak (every GPU at its limit; default) or load (this workload)")
        ("json", "machine-readable output");
    // clang-format on
}

void apply_rack_flags(model::RackConfig& r, const RackFlags& f) {
    if (f.nodes)
        r.nodes = *f.nodes;
    if (f.amps)
        r.pdu.current_a = *f.amps;
    if (f.volts)
        r.pdu.voltage_v = *f.volts;
    if (f.phases)
        r.pdu.phases = *f.phases;
    if (f.derating)
        r.pdu.derating = *f.derating;
    if (f.pdus)
        r.pdu.count = *f.pdus;
    if (f.redundant)
        r.pdu.redundant = true;
    if (f.rack_units)
        r.rack_units = *f.rack_units;
    if (!f.cooling.empty()) {
        if (const auto kind = model::value_of<model::CoolingKind>(f.cooling)) {
            r.cooling.kind = *kind;
        } else {
            throw UsageError("--cooling takes 'air' or 'liquid', got '" + f.cooling + "'");
        }
    }
    if (!f.cooling_limit.empty()) {
        r.cooling.limit = model::parse_watts(f.cooling_limit, "--cooling-limit");
    }
    if (f.nodes && *f.nodes < 1) {
        throw UsageError("--nodes must be at least 1");
    }
}

/// One node power basis and its plan.
struct Basis {
    std::string name;
    std::string what;
    Watts node_power;
    model::RackPlan plan;
};

nlohmann::json plan_json(const model::RackPlan& p) {
    nlohmann::json limits = nlohmann::json::array();
    for (const auto& l : p.limits) {
        limits.push_back({{"limit", model::to_string(l.which)},
                          {"capacity", l.capacity},
                          {"unit", l.which == model::RackLimit::RackUnits ? "U" : "W"},
                          {"nodes_fit", l.nodes_fit},
                          {"used", l.used},
                          {"headroom", l.headroom}});
    }
    return {{"node_power_w", p.node_power.si()},
            {"node_units", p.node_units},
            {"nodes", p.nodes},
            {"nodes_per_rack", p.nodes_per_rack},
            {"racks", p.racks},
            {"binding", model::to_string(p.binding)},
            {"feasible", p.feasible},
            {"rack_power_w", p.rack_power.si()},
            {"pdu_nameplate_w", p.pdu_nameplate.si()},
            {"pdu_usable_w", p.pdu_usable.si()},
            {"pdu_capacity_w", p.pdu_capacity.si()},
            {"node_exceeds_one_pdu", p.node_exceeds_one_pdu},
            {"limits", limits},
            {"warnings", p.warnings}};
}

std::string capacity_text(const model::RackLimitFigure& l) {
    return l.which == model::RackLimit::RackUnits ? fixed(l.capacity, 0) + " U"
                                                  : watts(Watts(l.capacity));
}

std::string used_text(const model::RackLimitFigure& l, double v) {
    return l.which == model::RackLimit::RackUnits ? fixed(v, 0) + " U" : watts(Watts(v));
}

// The hwdb rack that is exactly one `server` (a rack-scale system such as gb300-nvl72), or null.
const model::RackSpec* rack_scale_system(const hwdb::Database& db,
                                         const model::ServerSpec* server) {
    if (server == nullptr) {
        return nullptr;
    }
    for (const auto& r : db.racks()) {
        if (r.servers == 1 &&
            hwdb::normalize_name(r.server) == hwdb::normalize_name(server->name)) {
            return &r;
        }
    }
    return nullptr;
}

// A rack-scale system is not packed into racks: it is the rack, with the power and cooling its
// vendor fixes (GB300 NVL72: ~135 kW, liquid only). One system per rack; a rack budget only says
// whether the facility can feed it.
void print_system_racks(CliContext& ctx, const model::RackSpec& rack,
                        const model::ServerSpec& system, int systems, std::optional<Watts> budget,
                        bool json) {
    const bool feasible = !budget || *budget >= rack.power;
    std::vector<std::string> notes{
        system.name + " is a rack-scale system: one per rack, " + watts(rack.power) + " at load, " +
        rack.cooling + " cooled, " + std::to_string(system.rack_units) + " U; its " +
        std::to_string(system.accelerators) + " GPUs share one NVLink domain"};
    if (!feasible) {
        notes.push_back("the rack budget " + watts(*budget) + " is below the system's " +
                        watts(rack.power) +
                        ": it cannot be fed; raise the budget or choose "
                        "8-GPU nodes");
    }
    if (json) {
        nlohmann::json j;
        j["node"] = system.name;
        j["rack_scale_system"] = rack.name;
        j["gpus_per_node"] = system.accelerators;
        j["nodes"] = systems;
        j["nodes_per_rack"] = 1;
        j["racks"] = feasible ? systems : 0;
        j["rack_power_w"] = rack.power.si();
        j["cooling"] = {{"kind", rack.cooling}, {"limit_w", rack.power.si()}};
        j["rack_units"] = system.rack_units;
        j["rack_budget_w"] = budget ? nlohmann::json(budget->si()) : nlohmann::json(nullptr);
        j["feasible"] = feasible;
        j["notes"] = notes;
        *ctx.out << json_text(j) << '\n';
        return;
    }
    auto& out = *ctx.out;
    out << "rack plan: " << systems << " x " << system.name << " (" << system.accelerators << " x "
        << system.accelerator << ", one NVLink domain)\n"
        << "rack:      fixed by the system (" << rack.name << "): 1 per rack, " << watts(rack.power)
        << " at load, " << rack.cooling << " cooling, " << system.rack_units << " U\n"
        << "racks:     " << (feasible ? std::to_string(systems) : std::string("none")) << '\n'
        << "budget:    " << (budget ? watts(*budget) : std::string("none"))
        << (feasible ? "" : " (does NOT feed one system)") << '\n';
    for (const auto& n : notes) {
        out << "  - " << n << '\n';
    }
}

} // namespace

int run_rack(CliContext& ctx) {
    po::options_description desc("options");
    ScenarioFlags flags;
    add_scenario_options(desc, flags);
    PowerFlags pflags;
    add_power_options(desc, pflags);
    RackFlags rflags;
    add_rack_options(desc, rflags);
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("rack", ctx.args, desc, pos, vm, *ctx.out,
                       "[FILE] [--node N --nodes K --rack-budget P --pdu-amps A ...] [--json]")) {
        return 0;
    }
    const bool have_scenario = !flags.file.empty() || !flags.model.empty();
    model::Scenario s;
    const model::ServerSpec* server = nullptr;
    model::AcceleratorSpec gpu;
    if (have_scenario) {
        s = build_scenario(ctx, flags);
        gpu = s.deployment.gpu;
    } else {
        if (flags.node.empty()) {
            throw UsageError(
                "gpuplan rack: give a scenario FILE, --model and --gpu, or at least --node "
                "(e.g. 'gpuplan rack --node dgx-h100 --nodes 16 --rack-budget 40kW')");
        }
        server = &ctx.db().server(flags.node);
        s.node_ref = server->name;
        const std::string acc = !flags.gpu.empty() ? flags.gpu : server->accelerator;
        if (acc.empty()) {
            throw UsageError("node '" + server->name + "' names no accelerator; add --gpu");
        }
        gpu = ctx.db().accelerator(acc);
    }
    apply_power_flags(s, pflags);
    apply_rack_flags(s.rack, rflags);

    model::NodePower node;
    if (have_scenario) {
        node = scenario_node(ctx, s, &server);
    } else {
        node = model::node_power_of(*server, s.power_model);
    }
    if (const model::RackSpec* system = rack_scale_system(ctx.db(), server)) {
        const int systems =
            s.rack.nodes ? *s.rack.nodes
                         : (have_scenario ? (s.deployment.gpus() + node.gpus - 1) / node.gpus : 1);
        print_system_racks(ctx, *system, *server, systems, s.power.rack_budget, vm.count("json"));
        return 0;
    }
    const model::GpuPowerLevels levels = model::power_levels(gpu, s.power_model);
    const model::GpuPowerLimit limit =
        model::gpu_power_limit(s.power, levels, node, s.power_model, s.rack.nodes_per_rack);
    const int nodes = s.rack.nodes
                          ? *s.rack.nodes
                          : (have_scenario ? (s.deployment.gpus() + node.gpus - 1) / node.gpus : 1);
    const Watts gpu_peak = std::min(levels.board, std::max(limit.per_gpu, levels.resident));

    std::vector<Basis> bases;
    const auto add = [&](std::string name, std::string what, Watts w) {
        bases.push_back(
            {std::move(name), std::move(what), w,
             model::plan_racks(w, node.rack_units, nodes, s.rack, s.power.rack_budget)});
    };
    if (node.nameplate) {
        add("nameplate", "PSU-sizing max_power", *node.nameplate);
    }
    if (gpu_peak < levels.board) {
        add("peak-uncapped", "every GPU at board power " + watts(levels.board) + " + host",
            model::node_wall_power(levels.board, node.gpus, node, s.power_model));
    }
    add("peak", "every GPU at its limit " + watts(gpu_peak) + " + host",
        model::node_wall_power(gpu_peak, node.gpus, node, s.power_model));
    std::optional<model::PowerEstimate> pe;
    if (have_scenario) {
        // The shared chain's power estimate (plan/analysis.hpp), as `estimate` and `cost` show it.
        plan::AnalysisOptions o;
        o.parts = {.serving = false, .power = true, .racks = false, .cost = false};
        pe =
            plan::analyze_serving(s, server, choose_profile(ctx, flags, s.deployment.gpu), o).power;
        add("load",
            "every GPU at this workload's steady draw " + watts(pe->gpu_average) + " + host",
            model::node_wall_power(pe->gpu_average, node.gpus, node, s.power_model));
    }
    const auto chosen = std::find_if(bases.begin(), bases.end(),
                                     [&](const Basis& b) { return b.name == rflags.basis; });
    if (chosen == bases.end()) {
        throw UsageError("--basis '" + rflags.basis + "' is not available here; use " +
                         std::string(node.nameplate ? "nameplate, " : "") + "peak" +
                         (have_scenario ? " or load" : "") +
                         (rflags.basis == "load" ? " (load needs a scenario with a model)" : ""));
    }
    const Basis& capped =
        *std::find_if(bases.begin(), bases.end(), [](const Basis& b) { return b.name == "peak"; });
    const auto uncapped_it = std::find_if(bases.begin(), bases.end(),
                                          [](const Basis& b) { return b.name == "peak-uncapped"; });
    const Basis& uncapped = uncapped_it != bases.end() ? *uncapped_it : capped;
    const model::RackPlan& plan = chosen->plan;
    const int more_nodes = capped.plan.nodes_per_rack - uncapped.plan.nodes_per_rack;

    if (vm.count("json")) {
        nlohmann::json j;
        j["node"] = server ? nlohmann::json(server->name) : nlohmann::json(nullptr);
        j["accelerator"] = gpu.name;
        j["gpus_per_node"] = node.gpus;
        j["host_power_w"] = node.host.si();
        j["nodes"] = nodes;
        j["basis"] = chosen->name;
        j["limit_w"] = limit.per_gpu.si();
        j["limit_source"] = model::to_string(limit.source);
        j["rack_budget_w"] = s.power.rack_budget ? nlohmann::json(s.power.rack_budget->si())
                                                 : nlohmann::json(nullptr);
        j["cooling"] = {{"kind", model::to_string(s.rack.cooling.kind)},
                        {"limit_w", model::cooling_limit(s.rack.cooling).si()}};
        j["pdu"] = {{"amps", s.rack.pdu.current_a}, {"volts", s.rack.pdu.voltage_v},
                    {"phases", s.rack.pdu.phases},  {"derating", s.rack.pdu.derating},
                    {"count", s.rack.pdu.count},    {"redundant", s.rack.pdu.redundant}};
        j["rack_units"] = s.rack.rack_units;
        j["plan"] = plan_json(plan);
        nlohmann::json b = nlohmann::json::array();
        for (const auto& x : bases) {
            b.push_back({{"basis", x.name},
                         {"node_power_w", x.node_power.si()},
                         {"nodes_per_rack", x.plan.nodes_per_rack},
                         {"racks", x.plan.racks},
                         {"binding", model::to_string(x.plan.binding)}});
        }
        j["bases"] = b;
        j["oversubscription"] = {
            {"nodes_per_rack_uncapped", uncapped.plan.nodes_per_rack},
            {"nodes_per_rack_capped", capped.plan.nodes_per_rack},
            {"more_gpus_per_rack", more_nodes * node.gpus},
            {"node_power_ratio",
             capped.node_power.si() > 0 ? uncapped.node_power / capped.node_power - 1.0 : 0.0}};
        j["power"] = pe ? power_json(*pe) : nlohmann::json(nullptr);
        j["notes"] = limit.notes;
        *ctx.out << json_text(j) << '\n';
        return 0;
    }

    auto& out = *ctx.out;
    const auto& pdu = s.rack.pdu;
    out << "rack plan: " << nodes << " x " << (server ? server->name : "node") << " (" << node.gpus
        << " x " << gpu.name << ", "
        << (node.rack_units > 0 ? std::to_string(node.rack_units) + " U" : "size unknown")
        << ", host " << watts(node.host) << ")\n"
        << "rack:      budget "
        << (s.power.rack_budget ? watts(*s.power.rack_budget) : std::string("none")) << "; PDU "
        << pdu.count << " x " << fixed(pdu.voltage_v, 0) << " V " << fixed(pdu.current_a, 0)
        << " A " << (pdu.phases == 3 ? "three-phase" : "single-phase")
        << (pdu.redundant ? " (A+B)" : "") << " = " << watts(plan.pdu_nameplate) << " each, "
        << watts(plan.pdu_usable) << " at " << fixed(pdu.derating * 100, 0) << " %; cooling "
        << model::to_string(s.rack.cooling.kind) << " "
        << watts(model::cooling_limit(s.rack.cooling)) << "; " << s.rack.rack_units << " U\n\n";
    Table t({"basis", "node power", "nodes/rack", "racks", "binding", "what"});
    for (const auto& b : bases) {
        t.add_row({(b.name == chosen->name ? "* " : "  ") + b.name, watts(b.node_power),
                   std::to_string(b.plan.nodes_per_rack), std::to_string(b.plan.racks),
                   model::to_string(b.plan.binding), b.what});
    }
    t.print(out);
    out << "\nlimits at " << plan.nodes_per_rack << " nodes per rack (basis " << chosen->name
        << ")\n";
    Table lt({"limit", "capacity", "allows", "used", "headroom"});
    for (const auto& l : plan.limits) {
        lt.add_row(
            {(l.which == plan.binding ? "* " : "  ") + std::string(model::to_string(l.which)),
             capacity_text(l), std::to_string(l.nodes_fit) + " nodes", used_text(l, l.used),
             used_text(l, l.headroom)});
    }
    lt.print(out);
    if (plan.feasible) {
        out << "\nanswer: " << plan.nodes_per_rack << " nodes (" << plan.nodes_per_rack * node.gpus
            << " GPUs) per rack, " << plan.racks << " rack" << (plan.racks == 1 ? "" : "s")
            << " for " << nodes << " nodes; " << model::to_string(plan.binding) << " binds\n";
    } else {
        out << "\nanswer: no rack holds one node; " << model::to_string(plan.binding)
            << " binds (see the warnings)\n";
    }
    if (limit.source != model::LimitSource::Board && uncapped.plan.feasible) {
        out << "oversubscription: the " << watts(limit.per_gpu) << " per-GPU limit ("
            << model::to_string(limit.source) << ") fits " << capped.plan.nodes_per_rack
            << " nodes per rack instead of " << uncapped.plan.nodes_per_rack << " ("
            << (more_nodes >= 0 ? "+" : "") << more_nodes * node.gpus << " GPUs per rack)";
        if (pe) {
            out << " at " << fixed(pe->throughput_loss * 100, 1)
                << " % less throughput per GPU on this workload";
        }
        out << '\n';
    }
    for (const auto& n : limit.notes) {
        if (n.find("sizes racks only") == std::string::npos) { // here it does exactly that
            out << "  - " << n << '\n';
        }
    }
    for (const auto& w : plan.warnings) {
        out << "warning: " << w << '\n';
    }
    if (chosen->name != "nameplate" && node.nameplate && *node.nameplate > plan.pdu_usable &&
        !plan.node_exceeds_one_pdu) {
        out << "warning: the nameplate " << watts(*node.nameplate) << " exceeds one PDU's "
            << watts(plan.pdu_usable) << "; the PSUs must be spread over several feeds\n";
    }
    return 0;
}

} // namespace gpuplan::cli
