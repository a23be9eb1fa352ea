#include "plan/analysis.hpp"

#include "model/engine_defaults.hpp"
#include "model/error.hpp"

#include <utility>

namespace gpuplan::plan {

model::NodePower scenario_node(const model::Scenario& s, const model::ServerSpec* server) {
    return server ? model::node_power_of(*server, s.power_model)
                  : model::unknown_node(s.deployment.gpus_per_node, s.power_model);
}

namespace {

// Runs one link: its error propagates (Throw) or lands in `error` (Record). Only the project's
// own errors are recorded; anything else is a bug and always propagates.
template <class F> void link(OnError on_error, std::string& error, F&& f) {
    if (on_error == OnError::Throw) {
        f();
        return;
    }
    try {
        f();
    } catch (const Error& e) {
        error = e.what();
    }
}

} // namespace

ServingAnalysis analyze_serving(const model::Scenario& s, const model::ServerSpec* server,
                                const model::EfficiencyProfile& profile, const AnalysisOptions& o) {
    ServingAnalysis a;
    // Load-dependent engine limits (TensorRT-LLM's trtllm-bench defaults), as simulate fills them.
    const model::Deployment d = model::with_load_engine_defaults(s.deployment, s.workload);
    const AnalysisParts& parts = o.parts;
    if (parts.serving) {
        a.bottleneck = model::find_bottleneck(d, s.workload, profile, o.cached_prefix);
    }
    if (!parts.power && !parts.racks && !parts.cost) {
        return a;
    }
    const model::NodePower node = scenario_node(s, server);
    link(o.on_error, a.power_error, [&] {
        a.power = model::estimate_power(d, s.workload, profile, s.power_model, s.power, node, s.slo,
                                        s.rack, o.cached_prefix);
    });
    if (!a.power) {
        if (parts.racks) {
            a.rack_error = "needs the power estimate: " + a.power_error;
        }
        if (parts.cost) {
            a.cost_error = "needs the power estimate: " + a.power_error;
        }
        return a;
    }
    if (parts.racks) {
        link(o.on_error, a.rack_error, [&] {
            // The `rack` command's peak basis: every GPU at its limit, plus the host.
            const int nodes = s.rack.nodes.value_or(a.power->nodes);
            a.rack = model::plan_racks(a.power->node_peak, node.rack_units, nodes, s.rack,
                                       s.power.rack_budget);
        });
    }
    if (parts.cost) {
        link(o.on_error, a.cost_error, [&] {
            a.cost_inputs = model::cost_inputs(s, server, *a.power);
            a.cost = model::estimate_cost(*a.cost_inputs);
        });
    }
    return a;
}

} // namespace gpuplan::plan
