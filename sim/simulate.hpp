#pragma once
/// Runs a scenario's serving workload through the discrete-event simulator: the workload
/// generator feeds a gateway (admission control, router, optional cloud endpoint) in front of
/// replicas of the deployment, each a vLLM-like engine (continuous or static batching, chunked
/// prefill, paged KV with prefix caching and preemption) whose every step takes the time
/// model::StepCostModel gives for that exact batch.

#include "model/efficiency.hpp"
#include "model/power.hpp"
#include "model/scenario.hpp"
#include "sim/feature_trace.hpp"
#include "sim/result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>

namespace gpuplan::sim {

/// The most requests one run may send (as workload.requests allows in YAML); a duration and rate
/// that imply more are refused before the run starts.
inline constexpr std::int64_t kMaxRequests = std::int64_t{1} << 30;

/// Per-run overrides and output switches.
struct SimOptions {
    std::optional<std::uint64_t> seed;               ///< nullopt: the scenario's seed
    std::optional<Seconds> duration;                 ///< overrides Workload::duration
    std::optional<int> requests;                     ///< overrides Workload::requests
    std::optional<model::EfficiencyProfile> profile; ///< nullopt: model::default_profile()
    bool keep_requests = false;                      ///< fill SimResult::requests
    bool keep_steps = false;                         ///< fill SimResult::step_log
    std::size_t max_steps_kept = 200000; ///< cap on the step log (steps past it are not kept)
    /// Called with every engine step as it is issued, in simulated-time order per replica, for
    /// a trace written while the run goes (every step, whatever keep_steps). Must not throw
    /// unless the run is to end with that exception.
    std::function<void(const StepRecord&)> on_step;
    /// Called with every request as it leaves the system (the order of SimResult::requests),
    /// for per-request output written while the run goes instead of kept (keep_requests).
    std::function<void(const RequestRecord&)> on_request;
    /// Called with the serving features' events (speculative steps, KV transfers, prefix hit
    /// rates, KV offload tier loads, LoRA adapter loads) as they happen, for a trace
    /// (sim/feature_trace.hpp); null hooks: none.
    FeatureHooks features;
    /// Pipeline-parallel replicas run up to pp micro-batches at once (docs/simulator.md); false:
    /// one batch at a time through all stages (same latency, up to pp× less throughput), for
    /// comparisons.
    bool pipeline_micro_batches = true;
    /// Running decodes advance as one cohort between their events (docs/simulator.md,
    /// "Performance"); false: every decode walked every step. The results are the same to the
    /// bit either way (tests compare them).
    bool decode_cohort = true;
    /// The node the GPUs sit in, for host power and GPUs per node (the front end resolves the
    /// scenario's hwdb server with model::node_power_of). nullopt: model::unknown_node of
    /// Deployment::gpus_per_node (host power from power.host_power, else not counted).
    std::optional<model::NodePower> node;
};

/// Progress in [0, 1] (requests finished / requests expected, or simulated time / duration).
using ProgressFn = std::function<void(double fraction)>;

/// Simulates the scenario. Deterministic: the same scenario, options and seed give an identical
/// result. A power limit (scenario.power turned into a per-GPU limit by model::gpu_power_limit)
/// runs every step at the highest clock whose power fits (model::PowerCappedStepCost); power
/// and energy are observed per step (SimResult::power). Throws InvalidArgument for an
/// inconsistent scenario (no classes with a positive share, an empty trace for trace replay, a
/// power limit on an accelerator without board power, ...); a deployment that does not fit gives
/// `ok == false` with reasons. Stops early (result.stopped) when `stop` is requested. Cost:
/// O(events × log pending + Σ sequences per step).
[[nodiscard]] SimResult simulate(const model::Scenario& scenario, const SimOptions& options = {},
                                 std::stop_token stop = {}, const ProgressFn& progress = {});

/// The request classes the simulator uses for a workload: its classes, or one class "default"
/// with the fixed input_tokens/output_tokens when it has none.
[[nodiscard]] std::vector<model::RequestClass> effective_classes(const model::Workload& w);

/// The SLO percentile rule: the latency at percentile `p` (1-100) as a class's SLO is judged,
/// the reported percentile at or above p (p50, p90, p95, p99, else the maximum).
[[nodiscard]] Seconds at_percentile(const LatencyStats& s, double p);

} // namespace gpuplan::sim
