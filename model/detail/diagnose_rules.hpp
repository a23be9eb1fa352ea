#pragma once
// The serving rows of model::diagnose (docs/diagnose.md), one function per row, split out of
// diagnose() so that each rule reads at once. Private to model/.

#include "model/diagnose.hpp"
#include "model/serving.hpp"

#include <optional>
#include <string>

namespace gpuplan::model::detail {

/// The figures the rows read, merged from every source (metrics first, then the benchmark).
struct Figures {
    std::optional<double> tpot_s, ttft_s, queue_s, prefill_s, throughput, running, waiting;
    std::optional<double> kv_usage, preemptions, preemptions_per_s, prefix_hit_rate;
    std::optional<double> input_tokens, output_tokens;
    std::string tpot_source, ttft_source, throughput_source;
};

/// What the serving rules read: the inputs of diagnose(), the observed load, the model's
/// prediction at it and the flags several rules share. The references point at diagnose()'s
/// locals and live as long as the call.
struct ServingFacts {
    const Deployment& d;                      ///< the scenario's deployment
    const EngineSettings& eng;                ///< its engine, defaults resolved
    const EfficiencyProfile& profile;         ///< the efficiency profile every estimate uses
    const Observations& obs;                  ///< what was observed, as given
    const DiagnosisThresholds& th;            ///< the rules' thresholds
    const Figures& f;                         ///< the observed figures, merged from every source
    const Workload& wp;                       ///< the observed lengths at the running load
    const Workload& wdemand;                  ///< the same at the demand (running + waiting)
    const ServingEstimate& e;                 ///< the model at the running load
    const ServingEstimate& at_demand;         ///< the model at the demand
    int running = 0;                          ///< sequences running (observed, else the scenario's)
    int waiting = 0;                          ///< sequences waiting (observed, else 0)
    int capacity = 0;                         ///< sequences the deployment holds at once
    std::optional<double> clock_ratio;        ///< SM clock / its maximum, at most 1
    std::optional<double> observed_kv_tokens; ///< the start-up log's KV pool, in tokens
    bool busy = false;                        ///< GPU utilization at or above th.busy_gpu
    bool throttled = false;                   ///< clock_ratio below th.clock_ratio
    bool kv_full = false;                     ///< KV cache full with requests waiting or preempted
    bool queue_dominates = false;             ///< queue time above th.queue_share of TTFT
};

/// Appends the serving rows that apply, in the troubleshooting table's order, and the notes and
/// comparisons the speculative and step rows add.
void add_serving_rows(const ServingFacts& s, Diagnosis& out);

} // namespace gpuplan::model::detail
