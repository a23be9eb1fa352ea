#pragma once
/// The metrics observer (layer-private): components report state changes and finished
/// requests; it keeps time integrals, 1-second bins and the per-request samples from which
/// finish() computes the SimResult summaries. It never influences the simulation.

#include "model/step_cost.hpp"
#include "sim/detail/power_observer.hpp"
#include "sim/detail/request.hpp"
#include "sim/feature_trace.hpp"
#include "sim/quantile_sketch.hpp"
#include "sim/result.hpp"
#include "sim/tick.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace gpuplan::sim::detail {

/// The SLOs applied to one class, in ticks (nullopt: none).
struct ClassSlo {
    std::optional<Tick> ttft, tpot, e2e;
};

/// What one engine step looked like, for the observer.
struct StepSample {
    int replica = 0;
    Tick start = 0;
    Tick end = 0;
    int sequences = 0; ///< scheduled sequences
    int running = 0;   ///< sequences in the running set
    int prefills = 0;
    int prefill_tokens = 0;
    int decodes = 0;
    int preempted = 0;
    std::int64_t used_blocks = 0;
    std::int64_t total_blocks = 0;
    const model::StepCost* cost = nullptr; ///< the step's cost (null: swap traffic only)
    double clock = 1.0;                    ///< core clock factor it ran at
    Tick compute_end = 0;                  ///< start + the cost's time (swap time follows)
    double draft_s = 0;                    ///< speculative: the proposer's time in the step
};

class Metrics {
  public:
    Metrics(std::vector<ClassSlo> slos, int replicas, bool keep_requests, bool keep_steps,
            std::size_t max_steps);

    // Level changes (integrated over time).
    void in_system(Tick now, int delta);
    void queued(Tick now, int delta);

    void arrival(Tick now);
    /// A request left the system (any outcome). `outcome` says how; latencies come from `r`.
    void finished(Tick now, const Request& r, Outcome outcome);
    /// Gaps between successive tokens: `count` gaps of `gap` ticks for class `cls`.
    void itl(int cls, Tick gap, std::int64_t count);
    void step(const StepSample& s);
    /// A pipeline-parallel replica between its steps' stage-0 slices with micro-batches still
    /// in flight in later stages: its running set and KV use over [from, to] (not busy time).
    void hold(int replica, Tick from, Tick to, int running, std::int64_t used_blocks,
              std::int64_t total_blocks);
    void tokens(Tick now, std::int64_t prefill_tokens, std::int64_t output_tokens);
    void prefix_lookup(std::int64_t queried, std::int64_t hit);
    /// A speculative verify of `drafted` tokens of which `accepted` were kept.
    void speculative_verify(std::int64_t drafted, std::int64_t accepted) {
        ++spec_verifies_;
        spec_drafted_ += drafted;
        spec_accepted_ += accepted;
        ++step_verifies_;
        step_drafted_ += drafted;
        step_accepted_ += accepted;
    }
    /// The end of a speculative replica's step: its verifies since the last call go to the
    /// features' hook (sim/feature_trace.hpp), if any.
    void speculative_step(int replica, Tick now);
    /// A prompt's KV on prefill replica `replica`'s link over [link_start, arrival], issued at
    /// `ready`, for the features' hook.
    void kv_transfer(std::uint64_t request, int replica, Tick ready, Tick link_start, Tick arrival,
                     Seconds transfer, double bytes) const;
    /// Seconds the proposer ran in a step.
    void speculative_draft_time(double s) { spec_draft_s_ += s; }
    /// Fills `out`'s counts from what was recorded.
    void speculative_counts(SpeculativeResult& out) const {
        out.verifies = spec_verifies_;
        out.drafted = spec_drafted_;
        out.accepted = spec_accepted_;
        out.draft_time = Seconds(spec_draft_s_);
    }
    /// The KV offload tiers' counters (sim/kv_tiers.hpp writes them; engine.kv_offload).
    [[nodiscard]] KvOffloadResult& kv_offload() noexcept { return kv_offload_; }
    void preemption(int replica);
    void replica_up(int replica, Tick at);
    void routed(int replica);
    /// Requests assigned to `replica` and not finished change by `delta` now (load balance).
    void outstanding(int replica, Tick now, int delta);
    void cloud_cost(double amount, const std::string& currency);
    /// Replica failures are on: the SLO windows report availability.
    void enable_availability() { availability_ = true; }
    /// The needed replicas were up over [from, to) (cluster.failures).
    void available(Tick from, Tick to);
    /// Observes power and energy too (SimResult::power); without it power is not modelled.
    void enable_power(PowerSetup setup);
    /// Calls `f` with every engine step as it starts (a trace writer; null: none).
    void on_step(std::function<void(const StepRecord&)> f) { on_step_ = std::move(f); }
    /// Calls `f` with every request as it leaves the system (null: none).
    void on_request(std::function<void(const RequestRecord&)> f) { on_request_ = std::move(f); }
    /// Calls the features' hooks as their events happen (null hooks: none).
    void on_features(FeatureHooks f) { features_ = std::move(f); }
    /// The features' hooks, for the components that report to them directly (KV offload
    /// tiers, LoRA adapters; each null unless a trace is written).
    [[nodiscard]] const FeatureHooks& features() const noexcept { return features_; }

    /// The most time-series bins kept: past it the bin width doubles (the span at 1-second
    /// resolution is 2^16 s, about 18 hours).
    static constexpr std::size_t kMaxBins = std::size_t{1} << 16;

    /// Builds the result (summaries, series); `end` is the time of the last event.
    void finish(Tick end, SimResult& out);
    /// SimResult's served rates and drain share, from `all` (the overall summary).
    void served_rates(const RequestSummary& all, SimResult& out) const;

  private:
    struct Level {
        double level = 0;
        Tick since = 0;
        double integral = 0; // level × seconds
    };
    struct Samples {
        QuantileSketch ttft, tpot, e2e, queue, itl;
        RequestSummary s;
    };
    struct ReplicaAcc {
        Tick up = 0;
        Tick busy = 0;
        std::int64_t steps = 0, requests = 0, preemptions = 0, blocks = 0;
        double kv_integral = 0; // fraction × seconds
        double kv_max = 0;
        int outstanding = 0;
        Tick outstanding_since = 0;
        double outstanding_integral = 0; // requests × seconds
        std::int64_t prefix_queried = 0, prefix_hit = 0;
    };
    void integrate(Level& l, Tick now, double new_level, int field);
    void add_span(Tick a, Tick b, double value, int field);
    void bin_count(Tick t, int field, double v);
    /// Coarsens the bins (all fields and the power observer's) until time `t` falls in one of
    /// at most kMaxBins bins.
    void cover(Tick t);

    std::vector<ClassSlo> slos_;
    std::vector<Samples> classes_;
    std::vector<ReplicaAcc> replicas_;
    Level in_system_, queued_;
    // arrivals, completions, running, waiting, kv, in_tok, out_tok, finished (any outcome),
    // slo met, available (seconds with the needed replicas up)
    std::vector<double> bins_[10];
    bool availability_ = false;
    Tick bin_ = kTicksPerSecond; // bin width: 1 s, doubled whenever the span needs more bins
    bool keep_requests_;
    bool keep_steps_;
    std::size_t max_steps_;
    std::vector<RequestRecord> records_;
    std::vector<StepRecord> step_log_;
    std::vector<std::int64_t> batch_hist_;
    std::int64_t steps_ = 0;
    double batch_sum_ = 0;
    double running_integral_ = 0;
    Tick prefill_time_ = 0, decode_time_ = 0, mixed_time_ = 0;
    std::int64_t preemptions_ = 0;
    std::int64_t prefill_tokens_ = 0;
    std::int64_t lookup_queried_ = 0, lookup_hit_ = 0;
    std::int64_t spec_verifies_ = 0, spec_drafted_ = 0, spec_accepted_ = 0;
    double spec_draft_s_ = 0;
    std::int64_t step_verifies_ = 0, step_drafted_ = 0, step_accepted_ = 0; // since the last step
    FeatureHooks features_;
    KvOffloadResult kv_offload_;
    Tick first_arrival_ = -1;
    Tick last_arrival_ = 0;
    Tick last_finish_ = 0;
    /// At the first and the last arrival (before it entered): requests in the system and the
    /// integral of that count, for the served rate over the arrival window (served_rates).
    struct AtArrival {
        double in_system = 0, integral = 0;
    };
    AtArrival at_first_arrival_, at_last_arrival_;
    std::int64_t arrivals_ = 0;
    double cloud_spend_ = 0;
    std::string cloud_currency_ = "USD";
    std::optional<PowerObserver> power_;
    std::function<void(const StepRecord&)> on_step_;
    std::function<void(const RequestRecord&)> on_request_;
};

} // namespace gpuplan::sim::detail
