#include "plan/diagnosis.hpp"

#include "model/operating_point.hpp"
#include "sim/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
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
        {"ITL P90", o_itl.p90.si() * 1e3},   {"ITL P99", o_itl.p99.si() * 1e3}};
    for (auto& c : g.comparisons) {
        const auto it = sim_ms.find(c.figure);
        if (c.source == "metrics buckets" && it != sim_ms.end()) {
            c.predicted = it->second;
            c.source = "buckets vs simulator";
        }
    }
    g.notes.push_back(fmt::format(
        "percentiles: the simulator's over {} requests, a closed loop of {} (running + waiting) "
        "at {} + {} tokens, beside the histograms' (Prometheus histogram_quantile)",
        *o.requests, clients, g.input_tokens, g.output_tokens));
}

} // namespace

// `stop` by value although only read: a stop_token is a shared handle, passed by value like
// sim::simulate's and plan::size_deployment's.
model::Diagnosis diagnose_scenario(const model::Scenario& s,
                                   const model::EfficiencyProfile& profile,
                                   // NOLINTNEXTLINE(performance-unnecessary-value-param)
                                   const model::Observations& obs, std::stop_token stop) {
    model::Diagnosis g = model::diagnose(s.deployment, s.workload, profile, obs);
    simulate_percentiles(s, profile, g, stop);
    return g;
}

} // namespace gpuplan::plan
