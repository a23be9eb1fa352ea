#include "plan/fleet.hpp"

#include "model/cost.hpp"
#include "model/error.hpp"
#include "model/failures.hpp"
#include "model/memory.hpp"
#include "model/operating_point.hpp"
#include "model/serving.hpp"
#include "model/slo_capacity.hpp"
#include "model/workload_mix.hpp"
#include "plan/analysis.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::plan {
namespace {

// The scenario as `replicas` replicas of its shape in a closed loop of `running` sequences
// each, with the analytic request standing for its class mix.
model::Scenario at_load(const model::Scenario& s, int replicas, int running) {
    model::Scenario t = s;
    t.deployment.par.dp = replicas;
    t.workload = model::analytic_request(s.workload);
    model::set_closed_loop(t.workload, running * replicas);
    return t;
}

int cached_prefix(const model::Scenario& s) {
    const auto mean = model::mean_request(s.workload);
    return mean ? mean->cached_prefix : 0;
}

// One power link of the chain at a load (the power estimate holds the capped serving figures).
model::PowerEstimate power_at(const model::Scenario& t, const model::ServerSpec* server,
                              const model::EfficiencyProfile& profile, int cached) {
    AnalysisOptions o;
    o.parts = {.serving = false, .power = true, .racks = false, .cost = false};
    o.cached_prefix = cached;
    return *analyze_serving(t, server, profile, o).power;
}

// Whether the capped steady state at `running` meets the SLO; the first missed metric in `bound`.
bool within_slo(const model::Scenario& s, const model::PowerEstimate& p, int output_tokens,
                ReplicaCapacity& c, std::string& bound) {
    const auto& e = p.capped;
    c.ttft_s = (e.ttft_loaded.si() > 0 ? e.ttft_loaded : e.ttft).si();
    c.tpot_s = e.tpot.si();
    c.e2e_s = c.ttft_s + std::max(0, output_tokens - 1) * c.tpot_s;
    c.output_tok_s = e.throughput;
    c.rps = e.throughput / std::max(1, output_tokens);
    if (s.slo.ttft && c.ttft_s > s.slo.ttft->si()) {
        bound = "ttft";
    } else if (s.slo.tpot && c.tpot_s > s.slo.tpot->si()) {
        bound = "tpot";
    } else if (s.slo.e2e && c.e2e_s > s.slo.e2e->si()) {
        bound = "e2e";
    } else {
        return true;
    }
    return false;
}

std::string ms(double s) {
    return std::to_string(static_cast<long long>(std::lround(s * 1e3))) + " ms";
}

} // namespace

ReplicaCapacity replica_capacity_within_slo(const model::Scenario& s,
                                            const model::ServerSpec* server,
                                            const model::EfficiencyProfile& profile) {
    const model::Workload w = model::analytic_request(s.workload);
    model::Deployment one = s.deployment;
    one.par.dp = 1;
    const model::MemoryEstimate mem = model::estimate_memory(one);
    ReplicaCapacity best;
    best.most_running = model::replica_capacity(mem, w);
    if (best.most_running < 1) {
        throw InvalidArgument("one replica of " + s.deployment.model.name + " on " +
                              std::to_string(one.gpus()) + " x " + one.gpu.name +
                              " holds no sequence of the workload's lengths; give it more GPUs");
    }
    const int cached = cached_prefix(s);
    const int out = w.output_tokens;
    // The SLO metrics grow with the batch: bisect for the largest batch that meets them.
    ReplicaCapacity c;
    std::string bound;
    if (!within_slo(s, power_at(at_load(s, 1, 1), server, profile, cached), out, c, bound)) {
        throw InvalidArgument("a lone request on one replica already misses the SLO (" + bound +
                              ": TTFT " + ms(c.ttft_s) + ", TPOT " + ms(c.tpot_s) + ", E2E " +
                              ms(c.e2e_s) +
                              "); relax slo or choose faster hardware or more GPUs per replica");
    }
    c.running = 1;
    best = ReplicaCapacity{c.running, best.most_running, c.rps,   c.output_tok_s,
                           c.ttft_s,  c.tpot_s,          c.e2e_s, "memory"};
    int lo = 1;
    int hi = best.most_running + 1; // lo meets, hi misses (or lies beyond memory)
    std::string hi_bound = "memory";
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        ReplicaCapacity m;
        std::string b;
        if (within_slo(s, power_at(at_load(s, 1, mid), server, profile, cached), out, m, b)) {
            lo = mid;
            m.running = mid;
            m.most_running = best.most_running;
            best = m;
        } else {
            hi = mid;
            hi_bound = b;
        }
    }
    best.bound = hi_bound;
    // The rate it takes within the SLO's percentile under Poisson arrivals: model::slo_capacity,
    // the figure estimate, plan and curve print (uncapped), at most what the batch completes.
    const model::SloCapacity at_slo = model::slo_capacity(one, w, s.slo, profile, cached);
    if (at_slo.rate > 0 && at_slo.rate < best.rps) {
        best.rps = at_slo.rate;
        best.output_tok_s = at_slo.rate * out;
    }
    return best;
}

FleetSetup fleet_setup(const model::Scenario& s, const model::FleetConfig& config,
                       const model::ServerSpec* server, const model::EfficiencyProfile& profile) {
    FleetSetup f;
    model::FleetInputs& in = f.inputs;
    in.config = config;
    model::validate(in.config);
    const auto rate = model::offered_rate(s.workload);
    if (!rate || !(*rate > 0)) {
        throw InvalidArgument("the fleet needs an offered rate: set workload.requests_per_s (the "
                              "mean request rate of a weekday at the start of the horizon)");
    }
    in.base_rps = *rate;
    f.capacity = replica_capacity_within_slo(s, server, profile);
    in.replica_rps = f.capacity.rps;
    const int gpus = s.deployment.par.tp * s.deployment.par.pp;
    in.gpus_per_replica = gpus;

    // Owned figures from whole nodes: the replicas one node holds share its price and host.
    const int per_node = std::max(1, s.deployment.gpus_per_node / gpus);
    const model::Scenario node = at_load(s, per_node, f.capacity.running);
    AnalysisOptions o;
    o.parts = {.serving = false, .power = true, .racks = false, .cost = true};
    o.cached_prefix = cached_prefix(s);
    const ServingAnalysis a = analyze_serving(node, server, profile, o);
    const model::CostEstimate& cost = *a.cost;
    const model::CostInputs& ci = *a.cost_inputs;
    if (!cost.capex_monthly) {
        throw InvalidArgument("no purchase price for " + s.deployment.gpu.name +
                              ": set prices.gpu_purchase or prices.node_purchase to own replicas");
    }
    in.currency = cost.currency;
    // A year's share of the monthly figures, spread over its 8,760 hours (the cost model's
    // month is 30 days; its amortisation, maintenance and colocation are per year ÷ 12).
    double monthly = cost.capex_monthly->amount;
    for (const auto& m : {cost.maintenance_monthly, cost.colocation_monthly}) {
        if (m) {
            monthly += m->amount;
        }
    }
    in.owned_per_hour = monthly * 12.0 / (365.0 * 24.0) / per_node;
    if (ci.rent) {
        in.rent_per_hour = ci.rent->money.amount * gpus;
    }
    in.electricity = ci.electricity;
    in.pue = ci.pue;
    in.idle_power = a.power->deployment_idle / static_cast<double>(per_node);
    in.load_power = a.power->deployment_average / static_cast<double>(per_node);
    if (s.cluster.cloud) {
        const auto& cl = *s.cluster.cloud;
        const model::Workload w = model::analytic_request(s.workload);
        double per_request = 0;
        bool priced = false;
        for (const auto& [price, tokens] :
             {std::pair{cl.input_price, w.input_tokens}, {cl.output_price, w.output_tokens}}) {
            if (price) {
                if (price->per != model::PriceBasis::MillionTokens ||
                    price->money.currency != in.currency) {
                    throw InvalidArgument("cluster.cloud prices must be per million tokens in " +
                                          in.currency + " for the fleet, e.g. '$3/Mtok'");
                }
                per_request += price->money.amount * tokens / 1e6;
                priced = true;
            }
        }
        if (priced) {
            in.cloud_per_request = per_request;
        }
    }
    if (s.availability) {
        const model::ServingAvailability av = model::serving_availability(*s.availability, 1, gpus);
        in.unit_up = av.result.unit_up;
        in.availability_target = s.availability->target;
    }
    f.notes = ci.notes;
    if (!s.workload.classes.empty()) {
        f.notes.emplace_back("the request classes count as their mean request; the capacity "
                             "uses the scenario's slo, not per-class SLOs");
    }
    return f;
}

FleetAnswer fleet_answer(const model::Scenario& s, const model::FleetConfig& config,
                         const model::ServerSpec* server, const model::EfficiencyProfile& profile) {
    FleetAnswer a{fleet_setup(s, config, server, profile), {}};
    a.plan = model::plan_fleet(a.setup.inputs);
    return a;
}

} // namespace gpuplan::plan
