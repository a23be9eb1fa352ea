// `gpuplan curve`: sizing curves — throughput, TTFT, TPOT and E2E against offered load for the
// scenario's GPU and its plan candidates, with the highest load that meets the SLO
// (plan::load_curve, the function the desktop app's Curves tab calls); --simulate confirms the
// loads with the simulator's percentiles (plan::simulate_curve).
#include "cli/cli_context.hpp"
#include "cli/interrupt.hpp"
#include "cli/json_out.hpp"
#include "cli/options.hpp"
#include "cli/power_report.hpp"
#include "cli/scenario_options.hpp"
#include "cli/table.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"
#include "plan/load_curve.hpp"
#include "plan/sizing_search.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <sstream>

namespace gpuplan::cli {
namespace {

std::vector<double> parse_loads(const std::string& text) {
    std::vector<double> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || !(v > 0)) {
            throw UsageError("--loads '" + text + "': '" + item +
                             "' is not a number above 0; give a comma-separated list, e.g. "
                             "--loads 1,2,4,8");
        }
        out.push_back(v);
    }
    if (out.empty()) {
        throw UsageError("--loads is empty; give a comma-separated list, e.g. --loads 1,2,4,8");
    }
    return out;
}

std::string ms(double s) {
    return fixed(s * 1e3, 1);
}

nlohmann::json point_json(const plan::CurvePoint& p) {
    nlohmann::json j = {
        {"load", p.load},        {"fits", p.fits},           {"throughput_tok_s", p.throughput},
        {"ttft_s", p.ttft.si()}, {"tpot_s", p.tpot.si()},    {"e2e_s", p.e2e.si()},
        {"running", p.running},  {"meets_slo", p.meets_slo}, {"miss", p.miss}};
    j["utilisation"] = p.utilisation ? nlohmann::json(*p.utilisation) : nlohmann::json();
    return j;
}

nlohmann::json simulated_json(const plan::SimulatedPoint& p) {
    return {{"load", p.load},
            {"ok", p.ok},
            {"reason", p.reason},
            {"throughput_tok_s", p.throughput},
            {"ttft_p50_s", p.ttft_p50_s},
            {"ttft_p99_s", p.ttft_p99_s},
            {"tpot_p50_s", p.tpot_p50_s},
            {"tpot_p99_s", p.tpot_p99_s},
            {"completed", p.completed},
            {"failed", p.failed},
            {"meets_slo", p.meets_slo}};
}

nlohmann::json slo_json(const model::Slo& slo) {
    const auto opt = [](const std::optional<Seconds>& s) {
        return s ? nlohmann::json(s->si()) : nlohmann::json();
    };
    return {{"ttft_s", opt(slo.ttft)},
            {"tpot_s", opt(slo.tpot)},
            {"e2e_s", opt(slo.e2e)},
            {"percentile", slo.percentile}};
}

} // namespace

int run_curve(CliContext& ctx) {
    po::options_description desc("options");
    ScenarioFlags flags;
    add_scenario_options(desc, flags);
    std::string axis_text, loads_text;
    std::vector<std::string> extra;
    int points = 12;
    int requests = 500;
    desc.add_options()("axis", po::value(&axis_text),
                       "the load axis: concurrency or rate (default: rate when the scenario "
                       "offers one, else concurrency)")(
        "loads", po::value(&loads_text),
        "comma-separated loads on the axis, e.g. 1,2,4,8 (default: --points loads up to the "
        "deployment's capacity)")("points", po::value(&points),
                                  "loads when --loads is not given (default 12)")(
        "candidate", po::value(&extra)->multitoken(),
        "another GPU to draw, with the scenario's layout (repeatable; the scenario's plan "
        "candidates are drawn too)")("simulate",
                                     "confirm every load with the simulator (percentiles; slower)")(
        "requests", po::value(&requests),
        "requests per simulated load (default 500)")("json", "machine-readable output");
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("curve", ctx.args, desc, pos, vm, *ctx.out,
                       "[FILE] [--axis concurrency|rate] [--loads L,...] [--candidate GPU]... "
                       "[--simulate] [--json]")) {
        return 0;
    }
    if (points < 2 || points > 1000) {
        throw UsageError("--points " + std::to_string(points) +
                         " is out of range; give 2 to 1000, e.g. --points 12");
    }
    if (requests < 1) {
        throw UsageError("--requests " + std::to_string(requests) +
                         " is not above 0; give a number of requests, e.g. --requests 500");
    }
    const model::Scenario s = build_scenario(ctx, flags);
    plan::LoadAxis axis = plan::default_axis(s);
    if (axis_text == "concurrency") {
        axis = plan::LoadAxis::Concurrency;
    } else if (axis_text == "rate") {
        axis = plan::LoadAxis::RequestRate;
    } else if (!axis_text.empty()) {
        throw UsageError("--axis '" + axis_text + "' is not an axis; use concurrency or rate");
    }
    const std::vector<double> loads =
        loads_text.empty() ? std::vector<double>{} : parse_loads(loads_text);
    // A fractional concurrency, or a rate for a trace replay, is an input error (exit 2).
    for (double load : loads.empty() ? std::vector<double>{1.0} : loads) {
        (void)plan::at_load(s, axis, load);
    }

    const model::ServerSpec* server = nullptr;
    const model::NodePower node = scenario_node(ctx, s, &server);
    std::vector<model::PlanCandidate> others;
    if (s.plan) {
        others = s.plan->candidates;
    }
    for (const std::string& name : extra) {
        others.push_back(hwdb::plan_candidate(ctx.db(), name));
    }
    const auto choose = [&](const model::AcceleratorSpec& g) {
        return choose_profile(ctx, ScenarioFlags{}, g);
    };
    const std::vector<plan::CurveCandidate> candidates =
        plan::curve_candidates(s, choose_profile(ctx, flags, s.deployment.gpu), others, choose);
    const plan::LoadCurve curve = plan::load_curve(candidates, axis, loads, points);

    std::vector<std::vector<plan::SimulatedPoint>> simulated(candidates.size());
    if (vm.count("simulate")) {
        for (std::size_t i = 0; i < candidates.size(); ++i) {
            std::vector<double> at;
            for (const auto& p : curve.curves[i].points) {
                at.push_back(p.load);
            }
            // The scenario's own node; another GPU is drawn without one (host power unknown).
            std::optional<model::NodePower> n;
            if (i == 0) {
                n = node;
            }
            simulated[i] = plan::simulate_curve(candidates[i].scenario, candidates[i].profile, n,
                                                axis, at, requests, 0, interrupt_token());
            throw_if_interrupted();
        }
    }

    const char* unit = axis == plan::LoadAxis::Concurrency ? "sequences" : "req/s";
    if (vm.count("json")) {
        nlohmann::json j = {{"axis", plan::to_string(axis)}, {"slo", slo_json(curve.slo)}};
        j["candidates"] = nlohmann::json::array();
        for (std::size_t i = 0; i < curve.curves.size(); ++i) {
            const plan::CandidateCurve& c = curve.curves[i];
            nlohmann::json cj = {{"gpu", c.name}, {"error", c.error}};
            cj["max_load"] = c.max_load ? nlohmann::json(*c.max_load) : nlohmann::json();
            cj["points"] = nlohmann::json::array();
            for (const auto& p : c.points) {
                cj["points"].push_back(point_json(p));
            }
            if (vm.count("simulate")) {
                cj["simulated"] = nlohmann::json::array();
                for (const auto& p : simulated[i]) {
                    cj["simulated"].push_back(simulated_json(p));
                }
            }
            j["candidates"].push_back(cj);
        }
        *ctx.out << json_text(j) << '\n';
        return 0;
    }
    std::ostream& out = *ctx.out;
    out << "sizing curves of " << s.name << " against " << plan::to_string(axis)
        << " (analytic: mean values without queueing";
    if (vm.count("simulate")) {
        out << "; simulated: percentiles over " << requests << " requests";
    }
    out << ")\nSLO:";
    bool any = false;
    for (const auto& [name, target] :
         {std::pair{"TTFT", curve.slo.ttft}, std::pair{"TPOT", curve.slo.tpot},
          std::pair{"E2E", curve.slo.e2e}}) {
        if (target) {
            out << ' ' << name << " <= " << ms(target->si()) << " ms";
            any = true;
        }
    }
    out << (any ? " at p" + fixed(curve.slo.percentile, 0) : std::string(" none")) << '\n';
    for (std::size_t i = 0; i < curve.curves.size(); ++i) {
        const plan::CandidateCurve& c = curve.curves[i];
        out << '\n' << c.name << '\n';
        if (!c.error.empty()) {
            out << "  cannot be estimated: " << c.error << '\n';
            continue;
        }
        if (c.points.empty()) {
            out << "  no load to draw: the deployment does not fit in memory at this layout\n";
            continue;
        }
        std::vector<std::string> header = {std::string("load (") + unit + ")",
                                           "throughput (tok/s)",
                                           "TTFT (ms)",
                                           "TPOT (ms)",
                                           "E2E (ms)",
                                           "meets SLO"};
        const bool sim = vm.count("simulate") > 0;
        if (sim) {
            for (const char* h :
                 {"sim tok/s", "sim TTFT p50/p99 (ms)", "sim TPOT p50/p99 (ms)", "sim meets"}) {
                header.emplace_back(h);
            }
        }
        Table t(header);
        for (std::size_t k = 0; k < c.points.size(); ++k) {
            const plan::CurvePoint& p = c.points[k];
            const int decimals = axis == plan::LoadAxis::Concurrency ? 0 : 3;
            std::vector<std::string> row = {
                fixed(p.load, decimals), fixed(p.throughput, 0),
                ms(p.ttft.si()),         ms(p.tpot.si()),
                ms(p.e2e.si()),          p.meets_slo ? "yes" : (p.fits ? "no" : "no (overload)")};
            if (sim) {
                const plan::SimulatedPoint& q = simulated[i][k];
                if (q.ok) {
                    row.push_back(fixed(q.throughput, 0));
                    row.push_back(ms(q.ttft_p50_s) + "/" + ms(q.ttft_p99_s));
                    row.push_back(ms(q.tpot_p50_s) + "/" + ms(q.tpot_p99_s));
                    row.emplace_back(q.meets_slo ? "yes" : "no");
                } else {
                    row.insert(row.end(), {"-", "-", "-", "-"});
                }
            }
            t.add_row(row);
        }
        t.print(out);
        if (c.max_load && axis == plan::LoadAxis::Concurrency) {
            out << "  most sequences in flight meeting the SLO (steady-state means): "
                << fixed(*c.max_load, 0) << ' ' << unit << " (analytic)\n";
        } else if (c.max_load) {
            out << "  capacity at the SLO (p" << fixed(curve.slo.percentile, 0)
                << ", Poisson arrivals): " << fixed(*c.max_load, 3) << ' ' << unit
                << " (analytic)\n";
        } else {
            out << "  no load meets the SLO\n";
        }
    }
    return 0;
}

} // namespace gpuplan::cli
