#include "plan/choice_run.hpp"

#include "model/error.hpp"
#include "model/unit_parser.hpp"

namespace gpuplan::plan {

bool meets_every_slo(const sim::SimResult& r) {
    bool meets = r.overall.completed > 0 && !r.stopped;
    for (const auto& c : r.classes) {
        if ((c.ttft_slo || c.tpot_slo || c.e2e_slo) && c.summary.arrived > 0) {
            meets = meets && c.slo_met;
        }
    }
    return meets && r.overall.rejected + r.overall.timed_out == 0;
}

ChoiceRun simulate_choice(const model::Scenario& t, const sim::SimOptions& o,
                          const std::stop_token& stop) {
    ChoiceRun run;
    sim::SimResult r;
    try {
        r = sim::simulate(t, o, stop);
    } catch (const InputError&) {
        return run;
    }
    if (!r.ok || r.stopped) {
        return run;
    }
    run.ok = true;
    run.meets = meets_every_slo(r);
    run.attainment = r.overall.slo_attainment;
    run.hit = r.prefix_hit_rate;
    run.ttft_mean = r.overall.ttft.mean.si();
    run.ttft_p = sim::at_percentile(r.overall.ttft, t.slo.percentile).si();
    run.tpot_p = sim::at_percentile(r.overall.tpot, t.slo.percentile).si();
    run.imbalance = r.request_imbalance;
    run.kv_offload = r.kv_offload;
    run.lora = r.lora;
    return run;
}

std::string choice_pct(double fraction) {
    return model::format_fixed(100 * fraction, 1) + " %";
}

std::string choice_ms(double seconds) {
    return model::format_fixed(seconds * 1e3, seconds < 0.1 ? 1 : 0) + " ms";
}

} // namespace gpuplan::plan
