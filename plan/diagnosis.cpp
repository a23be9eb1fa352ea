#include "plan/diagnosis.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"
#include "model/operating_point.hpp"
#include "model/power.hpp"
#include "model/rack.hpp"
#include "sim/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace gpuplan::plan {
namespace {

/// The percentiles the buckets give are set beside the simulator's at the observed demand (a
/// closed loop of running + waiting requests of the observed lengths) instead of the analytic
/// model's single steady-state value: the simulator has the spread (queueing, prefill beside
/// decode) the analytic model leaves out.
void simulate_percentiles(const model::Scenario& s, const model::EfficiencyProfile& profile,
                          model::Diagnosis& g, const std::stop_token& stop) {
    const bool any =
        std::any_of(g.comparisons.begin(), g.comparisons.end(),
                    [](const model::Comparison& c) { return c.source == "metrics buckets"; });
    if (!any)
        return;
    model::Scenario x = s;
    x.workload.classes.clear();
    x.workload.trace.clear();
    x.workload.duration.reset();
    x.workload.input_tokens = g.input_tokens;
    x.workload.output_tokens = g.output_tokens;
    const int clients = std::max(1, g.demand);
    model::set_closed_loop(x.workload, clients);
    sim::SimOptions o;
    o.requests = std::clamp(20 * clients, 200, 4000);
    o.profile = profile;
    const sim::SimResult r = sim::simulate(x, o, stop);
    if (stop.stop_requested())
        return;
    if (!r.ok || r.overall.completed == 0) {
        g.notes.push_back("the simulator could not run this deployment; the percentiles are set "
                          "beside the analytic model's single value");
        return;
    }
    const auto& o_ttft = r.overall.ttft;
    const auto& o_itl = r.overall.itl;
    const std::map<std::string, double> sim_ms{
        {"TTFT P50", o_ttft.p50.si() * 1e3}, {"TTFT P90", o_ttft.p90.si() * 1e3},
        {"TTFT P99", o_ttft.p99.si() * 1e3}, {"ITL P50", o_itl.p50.si() * 1e3},
        {"ITL P90", o_itl.p90.si() * 1e3},   {"ITL P99", o_itl.p99.si() * 1e3},
        {"TTFT", o_ttft.mean.si() * 1e3},    {"TPOT", r.overall.tpot.mean.si() * 1e3}};
    // Every latency is then predicted one way: under load, simulated (the analytic TTFT has no
    // queue, so beside a queueing deployment's it would read as a second, contradicting figure).
    const std::string basis =
        gpuplan::checked_format("simulated: a closed loop of {} (running + waiting)", clients);
    for (auto& c : g.comparisons) {
        const auto it = sim_ms.find(c.figure);
        if (it == sim_ms.end()) {
            continue;
        }
        c.predicted = it->second;
        c.basis = basis;
        if (c.source == "metrics buckets") {
            c.source = "buckets vs simulator";
        }
    }
    g.notes.push_back(gpuplan::checked_format(
        "percentiles: the simulator's over {} requests, a closed loop of {} (running + waiting) "
        "at {} + {} tokens, beside the histograms' (Prometheus histogram_quantile)",
        *o.requests, clients, g.input_tokens, g.output_tokens));
}

/// The rack row: the nodes that share a rack, at the GPUs' observed power draw (with the host,
/// at the wall), against the rack budget; model::plan_racks says how many nodes the budget
/// takes at that draw, model::gpu_power_limit the per-GPU cap that keeps them within it.
void rack_row(const model::Scenario& s, const model::EfficiencyProfile& profile,
              const model::Observations& obs, const model::NodePower& node,
              const std::optional<model::TrainingCostInputs>& training, model::Diagnosis& g) {
    if (!obs.gpu || !obs.gpu->power_draw_w || !s.power.rack_budget)
        return;
    const double draw = *obs.gpu->power_draw_w;
    const int gpus = s.deployment.gpus();
    const int per_node = std::max(1, std::min(node.gpus, gpus));
    const int nodes = (gpus + per_node - 1) / per_node;
    const int sharing = std::min(nodes, s.rack.nodes_per_rack.value_or(nodes));
    const Watts budget = *s.power.rack_budget;
    const Watts node_wall = model::node_wall_power(Watts(draw), per_node, node, s.power_model);
    const Watts rack = node_wall * static_cast<double>(sharing);
    if (!(rack > budget))
        return;
    const double pue = s.power.pue.value_or(1.0);
    model::DiagnosisRow r;
    r.id = "rack-budget-exceeded";
    r.symptom = "the nodes of a rack draw more than its power budget";
    r.cause = "the GPUs draw more power than the rack was budgeted for";
    r.evidence.push_back(gpuplan::checked_format(
        "observed {:.0f} W per GPU × {} GPUs per node{}: {:.2f} kW per node at the wall", draw,
        per_node, node.known ? " + the host" : " (no host counted: no node given)",
        node_wall.si() / 1e3));
    r.evidence.push_back(gpuplan::checked_format(
        "{} node{} sharing the rack draw {:.2f} kW against a budget "
        "of {:.2f} kW ({:.0f} % of it); × PUE {:.2f}: {:.2f} kW at "
        "the facility",
        sharing, sharing == 1 ? "" : "s", rack.si() / 1e3, budget.si() / 1e3,
        100 * rack.si() / budget.si(), pue, rack.si() * pue / 1e3));
    r.check = "the rack PDUs' measured load (or `nvidia-smi --query-gpu=power.draw` on every "
              "node summed with the hosts' IPMI power readings) against the budget";
    // Fix 1: cap each GPU so that the nodes fit the budget.
    try {
        const model::GpuPowerLevels levels = model::power_levels(s.deployment.gpu, s.power_model);
        model::PowerBudget b;
        b.rack_budget = budget;
        const model::GpuPowerLimit cap =
            model::gpu_power_limit(b, levels, node, s.power_model, sharing);
        const Watts capped_rack =
            model::node_wall_power(cap.per_gpu, per_node, node, s.power_model) *
            static_cast<double>(sharing);
        model::DiagnosisFix f;
        f.layer = model::FixLayer::Framework;
        f.change = gpuplan::checked_format(
            "cap each GPU at {:.0f} W (nvidia-smi -pl {:.0f}; power.gpu_cap "
            "in the scenario)",
            std::floor(cap.per_gpu.si()), std::floor(cap.per_gpu.si()));
        f.estimated = true;
        f.fits = !cap.below_resident;
        f.gpus = gpus;
        f.effect = gpuplan::checked_format(
            "the rack's {} node{} draw {:.2f} kW → {:.2f} kW (budget {:.2f} kW)", sharing,
            sharing == 1 ? "" : "s", rack.si() / 1e3, capped_rack.si() / 1e3, budget.si() / 1e3);
        // What the cap costs, through the one chain of each job: the training step under the
        // per-GPU limit, or the serving estimate under the cap.
        if (g.training && s.training) {
            model::TrainingCostInputs p = training.value_or(model::TrainingCostInputs{});
            p.gpu_power_limit = cap.per_gpu;
            const model::TrainingEstimate capped =
                model::estimate_training(s.deployment, *s.training, profile, p);
            p.gpu_power_limit.reset();
            const model::TrainingEstimate free =
                model::estimate_training(s.deployment, *s.training, profile, p);
            f.step = capped.result.step.total;
            f.throughput = capped.result.tokens_per_s;
            f.fits = f.fits && capped.result.fits;
            f.effect += gpuplan::checked_format(
                "; predicted step {:.1f} s → {:.1f} s (clock {:.0f} %)",
                free.result.step.total.si(), capped.result.step.total.si(), capped.clock * 100);
        } else if (!g.training) {
            model::PowerBudget pb = s.power;
            pb.gpu_cap = cap.per_gpu;
            model::Workload w = s.workload;
            if (g.running > 0) {
                w.input_tokens = g.input_tokens;
                w.output_tokens = g.output_tokens;
                model::set_closed_loop(w, g.running);
            }
            const model::PowerEstimate pe = model::estimate_power(
                s.deployment, w, profile, s.power_model, pb, node, s.slo, s.rack);
            f.ttft = pe.capped.ttft_loaded;
            f.tpot = pe.capped.tpot;
            f.throughput = pe.capped.throughput;
            f.effect += gpuplan::checked_format(
                "; predicted {:.0f} → {:.0f} tok/s, TPOT {:.1f} ms → {:.1f} ms",
                pe.uncapped.throughput, pe.capped.throughput, pe.uncapped.tpot.si() * 1e3,
                pe.capped.tpot.si() * 1e3);
        }
        if (cap.below_resident) {
            f.effect += "; the cap is below the GPU's resident power: not a workable cap";
        }
        r.fixes.push_back(std::move(f));
    } catch (const InputError& err) {
        model::DiagnosisFix f;
        f.layer = model::FixLayer::Framework;
        f.change = "cap each GPU's power (nvidia-smi -pl)";
        f.effect = std::string("not estimated: ") + err.what();
        r.fixes.push_back(std::move(f));
    }
    // Fix 2: fewer nodes per rack at the observed draw.
    try {
        const model::RackPlan plan =
            model::plan_racks(node_wall, node.rack_units, nodes, s.rack, budget);
        model::DiagnosisFix f;
        f.layer = model::FixLayer::Hardware;
        f.change = gpuplan::checked_format("spread the nodes: {} per rack at the observed draw",
                                           plan.nodes_per_rack);
        f.estimated = plan.feasible;
        f.fits = plan.feasible;
        f.gpus = gpus;
        f.effect = plan.feasible
                       ? gpuplan::checked_format(
                             "model::plan_racks at {:.2f} kW per node: {} node{} per "
                             "rack ({} binds), {} rack{} for {} node{}",
                             node_wall.si() / 1e3, plan.nodes_per_rack,
                             plan.nodes_per_rack == 1 ? "" : "s", model::to_string(plan.binding),
                             plan.racks, plan.racks == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s")
                       : "not even one node fits the budget at this draw: cap the GPUs";
        r.fixes.push_back(std::move(f));
    } catch (const InputError& err) {
        model::DiagnosisFix f;
        f.layer = model::FixLayer::Hardware;
        f.change = "spread the nodes over more racks";
        f.effect = std::string("not estimated: ") + err.what();
        r.fixes.push_back(std::move(f));
    }
    r.severity = rack.si() / budget.si();
    g.rows.push_back(std::move(r));
    std::stable_sort(g.rows.begin(), g.rows.end(),
                     [](const model::DiagnosisRow& a, const model::DiagnosisRow& b) {
                         return a.severity > b.severity;
                     });
}

} // namespace

// `stop` by value although only read: a stop_token is a shared handle, passed by value like
// sim::simulate's and plan::size_deployment's.
model::Diagnosis diagnose_scenario(const model::Scenario& s,
                                   const model::EfficiencyProfile& profile,
                                   // NOLINTNEXTLINE(performance-unnecessary-value-param)
                                   const model::Observations& obs, std::stop_token stop,
                                   const DiagnosisInputs& in) {
    const model::NodePower node =
        in.node ? *in.node : model::unknown_node(s.deployment.gpus_per_node, s.power_model);
    if (obs.training) {
        if (!s.training) {
            throw InvalidArgument("a training log is given but the scenario has no training: "
                                  "block; describe the job (docs/training.md) or drop the log");
        }
        model::TrainingCostInputs prices;
        if (in.training) {
            prices = *in.training;
        } else {
            prices.pue = s.power.pue;
            prices.power_model = s.power_model;
        }
        model::Diagnosis g =
            model::diagnose_training(s.deployment, *s.training, profile, prices, obs);
        rack_row(s, profile, obs, node, in.training, g);
        return g;
    }
    model::Diagnosis g = model::diagnose(s.deployment, s.workload, profile, obs);
    simulate_percentiles(s, profile, g, stop);
    rack_row(s, profile, obs, node, in.training, g);
    return g;
}

} // namespace gpuplan::plan
