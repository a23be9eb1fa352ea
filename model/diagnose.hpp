#pragma once
/// Diagnosis of a running deployment: what it shows (engine metrics, a benchmark's summary, GPU
/// telemetry) beside what the analytic model predicts for the same deployment at the same load,
/// turned into rows of a symptom → cause → check → fix table. Each row carries its evidence (the
/// numbers and the threshold that triggered it), the check that would confirm it and its fixes,
/// ordered framework → model → hardware, the first one re-estimated through the model.
/// Values in, values out: the readers of the files live in hwdb/observed_readers.hpp.
/// docs/diagnose.md describes the rows and their thresholds.

#include "model/bottleneck.hpp"
#include "model/deployment.hpp"
#include "model/efficiency.hpp"
#include "model/scenario.hpp"
#include "model/training.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// Figures from vLLM's Prometheus /metrics endpoint. With two scrapes, the histogram means and
/// counters are over the window between them; with one, since the server started. Gauges are
/// from the last scrape. Every field is nullopt when the scrape did not have it.
struct EngineMetrics {
    std::optional<double> ttft_mean_s; ///< vllm:time_to_first_token_seconds _sum / _count
    std::optional<double>
        itl_mean_s; ///< vllm:inter_token_latency_seconds (V0: time_per_output_token)
    std::optional<double> e2e_mean_s;     ///< vllm:e2e_request_latency_seconds
    std::optional<double> queue_mean_s;   ///< vllm:request_queue_time_seconds
    std::optional<double> prefill_mean_s; ///< vllm:request_prefill_time_seconds
    std::optional<double> decode_mean_s;  ///< vllm:request_decode_time_seconds
    std::optional<double> requests;       ///< finished requests (e2e histogram count)
    std::optional<double> running;        ///< vllm:num_requests_running, summed over engines
    std::optional<double> waiting;        ///< vllm:num_requests_waiting, summed over engines
    std::optional<double> kv_usage; ///< vllm:kv_cache_usage_perc (V0 gpu_cache_usage_perc), 0..1
    std::optional<double> prefix_queries;    ///< vllm:prefix_cache_queries (tokens)
    std::optional<double> prefix_hits;       ///< vllm:prefix_cache_hits (tokens)
    std::optional<double> prompt_tokens;     ///< vllm:prompt_tokens_total
    std::optional<double> generation_tokens; ///< vllm:generation_tokens_total
    std::optional<double> preemptions;       ///< vllm:num_preemptions_total
    std::optional<double> window_s;          ///< seconds between the two scrapes (rates need it)
    bool delta = false;                      ///< counters are differences of two scrapes
    /// P50 / P90 / P99 from the histograms' _bucket series (histogram_quantile below).
    std::optional<double> ttft_p50_s, ttft_p90_s, ttft_p99_s;
    std::optional<double> itl_p50_s, itl_p90_s, itl_p99_s;
    /// Speculative decoding (vllm/v1/spec_decode/metrics.py): vllm:spec_decode_num_drafts,
    /// _num_draft_tokens, _num_accepted_tokens, and _num_accepted_tokens_per_pos by its
    /// `position` label (0-based: how many drafts had at least position + 1 tokens accepted).
    std::optional<double> spec_drafts, spec_draft_tokens, spec_accepted_tokens;
    std::vector<double> spec_accepted_per_pos;
    /// vllm:iteration_tokens_total (tokens per engine step, a histogram): _sum / _count, and the
    /// steps counted.
    std::optional<double> iteration_tokens_mean, iteration_steps;
    friend bool operator==(const EngineMetrics&, const EngineMetrics&) = default;
};

/// One bucket of a Prometheus histogram: the cumulative count of observations <= `le`.
struct HistogramBucket {
    double le = 0;    ///< upper bound (+inf for the last bucket)
    double count = 0; ///< cumulative
    friend bool operator==(const HistogramBucket&, const HistogramBucket&) = default;
};

/// The q-quantile (0 <= q <= 1) of a histogram as Prometheus' histogram_quantile computes it
/// (prometheus/prometheus promql/quantile.go): rank = q × total; the first bucket whose
/// cumulative count reaches the rank holds it, and the value is interpolated linearly between
/// that bucket's lower bound (the previous bucket's le, or 0 for the first bucket when its le is
/// positive) and its le. A rank in the +Inf bucket gives the largest finite le. nullopt when the
/// histogram has no observations. Buckets in any order; throws InvalidArgument when q is outside
/// [0, 1], a bound is NaN, there is no +Inf bucket, or the cumulative counts decrease.
[[nodiscard]] std::optional<double> histogram_quantile(double q,
                                                       std::vector<HistogramBucket> buckets);

/// The summary `vllm bench serve --save-result` writes (milliseconds as in the file).
struct BenchSummary {
    double duration_s = 0;
    int completed = 0;
    std::optional<double> total_input_tokens, total_output_tokens;
    std::optional<double> request_throughput, output_throughput;
    std::optional<double> mean_ttft_ms, median_ttft_ms, p99_ttft_ms;
    std::optional<double> mean_tpot_ms, p99_tpot_ms, mean_itl_ms;
    std::optional<int> max_concurrency;
    /// GuideLLM's time_per_output_token_ms: request latency / output tokens, the first token
    /// included; kept apart from TPOT (which excludes it) and only reported.
    std::optional<double> mean_ms_per_token_incl_first;
    std::string tool = "vllm bench"; ///< "vllm bench", "guidellm", "aiperf"
    friend bool operator==(const BenchSummary&, const BenchSummary&) = default;
};

/// nvidia-smi --query-gpu samples, averaged over samples (and GPUs).
struct GpuTelemetry {
    int samples = 0;
    std::optional<double> utilization_gpu;    ///< 0..1: a kernel was running ("GPU busy")
    std::optional<double> utilization_memory; ///< 0..1: memory controller busy
    std::optional<double> memory_used_bytes, memory_total_bytes;
    std::optional<double> power_draw_w, power_limit_w;
    std::optional<double> sm_clock_mhz, max_sm_clock_mhz;
    /// Share of samples (0..1) with each throttle reason active (NVML nvmlClocksThrottleReasons).
    double power_cap_share = 0; ///< SwPowerCap (0x4)
    double thermal_share = 0;   ///< HwSlowdown, SwThermalSlowdown, HwThermalSlowdown, power brake
    bool has_throttle_reasons = false;
    /// DCGM profiling fields (0..1): DCGM_FI_PROF_SM_ACTIVE (share of SMs with a warp resident,
    /// time-averaged), DCGM_FI_PROF_DRAM_ACTIVE (share of cycles the memory interface is busy)
    /// and DCGM_FI_PROF_PIPE_TENSOR_ACTIVE (share of cycles the tensor pipes are busy).
    std::optional<double> sm_active, dram_active, tensor_active;
    std::string source = "nvidia-smi"; ///< where the samples came from ("+"-joined when merged)
    friend bool operator==(const GpuTelemetry&, const GpuTelemetry&) = default;
};

/// Telemetry from two sources (nvidia-smi --query-gpu, dmon, DCGM) as one: each field from `a`
/// when it has it, else from `b`.
[[nodiscard]] GpuTelemetry merge(const GpuTelemetry& a, const GpuTelemetry& b);

/// What an engine logs at start-up about its KV cache. vLLM V1: "GPU KV cache size: N tokens"
/// and "Maximum concurrency for L tokens per request: Xx"; V0: "# GPU blocks: B" (× block size);
/// SGLang's and TensorRT-LLM's token counts (hwdb::parse_startup_log).
struct EngineStartup {
    std::optional<std::int64_t> kv_tokens;  ///< tokens of KV cache per replica
    std::optional<std::int64_t> gpu_blocks; ///< V0's block count
    std::optional<double> max_concurrency;  ///< the "Xx" of the concurrency line
    std::optional<int> concurrency_len;     ///< its L (max_model_len)
    int line = 0;                           ///< where the KV size was read (for evidence)
    std::string engine;                     ///< whose lines: "vllm", "sglang", "tensorrt-llm"
    friend bool operator==(const EngineStartup&, const EngineStartup&) = default;
};

/// A training job's log of step times (hwdb::parse_training_log): Megatron-LM's iteration lines
/// or a CSV of step, seconds[, tokens]. Step statistics are over the steps read after the first
/// (warm-up: compilation, allocator growth, data-loader start) when there are at least three.
struct TrainingLog {
    int steps = 0;                          ///< steps the statistics are over
    double step_mean_s = 0;                 ///< mean step time
    double step_stddev_s = 0;               ///< standard deviation of the step times
    double step_max_s = 0;                  ///< slowest step
    int step_max_line = 0;                  ///< the line of the slowest step (for evidence)
    std::optional<double> tflops_per_gpu;   ///< Megatron's "throughput per GPU (TFLOP/s/GPU)"
    std::optional<double> tokens_per_step;  ///< the CSV's tokens column, mean
    std::optional<double> max_reserved_mib; ///< Megatron's memory report, largest "max reserved"
    int oom_line = 0;                       ///< first "out of memory" line (0: none)
    std::string format;                     ///< "megatron" or "csv"
    friend bool operator==(const TrainingLog&, const TrainingLog&) = default;
};

/// Everything observed; any subset.
struct Observations {
    std::optional<EngineMetrics> metrics;
    std::optional<BenchSummary> bench;
    std::optional<GpuTelemetry> gpu;
    std::optional<EngineStartup> startup;
    std::optional<TrainingLog> training;
    friend bool operator==(const Observations&, const Observations&) = default;
};

/// Where a fix acts, in the order to try them.
enum class FixLayer { Framework, Model, Hardware };

/// "framework", "model", "hardware".
[[nodiscard]] const char* to_string(FixLayer l);

/// One fix, and (when the model can express it) its re-estimate at the observed demand.
struct DiagnosisFix {
    FixLayer layer = FixLayer::Framework;
    std::string change;     ///< what to change, with the old and new values
    bool estimated = false; ///< the model re-estimated it (below)
    bool fits = false;
    int gpus = 0;
    int capacity = 0; ///< sequences the deployment runs at once after the change
    Seconds ttft, tpot;
    double throughput = 0.0;     ///< output tokens/s at the demand
    std::string effect;          ///< one sentence: before → after
    std::optional<Seconds> step; ///< training fixes: the re-estimated step time
    /// The changed deployment and workload (for --emit): the fix applied.
    std::optional<Deployment> deployment;
    std::optional<Workload> workload;
    friend bool operator==(const DiagnosisFix&, const DiagnosisFix&) = default;
};

/// A fix the model cannot express (no re-estimate): what to change and what it should do.
[[nodiscard]] DiagnosisFix advice(FixLayer layer, std::string change, std::string effect);

/// One row of the troubleshooting table that the numbers support.
struct DiagnosisRow {
    std::string id; ///< "kv-cache-full", "queueing", "low-batch", "decode-slow", ...
    std::string symptom;
    std::string cause;
    std::vector<std::string> evidence; ///< numbers and the threshold each crossed
    std::string check;                 ///< how to confirm it
    std::vector<DiagnosisFix> fixes;   ///< framework → model → hardware
    double severity = 0;               ///< ranking key (larger first): how far past its threshold
    friend bool operator==(const DiagnosisRow&, const DiagnosisRow&) = default;
};

/// One figure both observed and predicted.
struct Comparison {
    std::string figure; ///< "TPOT", "TTFT", "throughput", ...
    std::string unit;   ///< "ms", "tok/s", "sequences"
    double observed = 0, predicted = 0;
    std::string source; ///< "metrics", "bench"
    /// What the prediction assumes, in words: "analytic: ... without queueing", "simulated:
    /// a closed loop of N", "start-up memory" (so two predictions of one figure are told apart).
    std::string basis;
    friend bool operator==(const Comparison&, const Comparison&) = default;
};

/// The diagnosis.
struct Diagnosis {
    int running = 0;  ///< the observed sequences in flight the prediction is made at
    int demand = 0;   ///< running + waiting: the load the fixes are re-estimated at
    int capacity = 0; ///< sequences the deployment runs at once for these lengths (predicted)
    int input_tokens = 0, output_tokens = 0; ///< request lengths used (observed when available)
    BottleneckReport predicted;              ///< the model at the observed load
    std::vector<Comparison> comparisons;
    std::vector<DiagnosisRow> rows; ///< ranked, most severe first; empty: nothing stands out
    std::vector<std::string> notes; ///< what could not be judged, and why
    /// A training job's diagnosis (diagnose_training): running, demand, capacity and the
    /// serving prediction are unused; the step time is.
    bool training = false;
    Seconds predicted_step; ///< training: the model's step time for the scenario's layout
    friend bool operator==(const Diagnosis&, const Diagnosis&) = default;
};

/// Thresholds of the rows (docs/diagnose.md).
struct DiagnosisThresholds {
    double kv_full = 0.95;         ///< KV cache use at or above this is "full"
    double slow_factor = 3.0;      ///< observed TPOT / predicted beyond this: not the model's error
    double low_batch_share = 0.25; ///< running below this share of capacity with nothing waiting
    double busy_gpu = 0.90;        ///< nvidia-smi utilization.gpu at or above this is "busy"
    double clock_ratio = 0.85;     ///< SM clock below this share of its maximum: throttled
    double queue_share = 0.5;      ///< queue time above this share of TTFT: queueing dominates
    double prefill_factor = 2.0;   ///< observed TTFT / predicted (loaded) beyond this: slow prefill
    /// ... and by more than this many seconds: the HTTP server, tokenization and scheduling add
    /// tens of milliseconds to every first token that the step model does not count.
    double prefill_min_gap_s = 0.1;
    /// The start-up log's KV cache size against the model's: a relative difference beyond the
    /// larger of this and the profile's P90 error band is a row (kv-size-mismatch).
    double kv_size_band = 0.10;
    /// Observed draft acceptance rate (accepted / draft tokens) below this share of the
    /// predicted one: spec-low-acceptance.
    double spec_acceptance_share = 0.6;
    /// Mean tokens per engine step below this share of max_num_batched_tokens while requests
    /// wait: step-underfilled.
    double step_fill = 0.25;
    // Training rows (diagnose_training).
    /// Observed step time above this multiple of the compute floor (compute + optimizer, no
    /// communication, bubble or input stall) ...
    double train_floor_factor = 1.5;
    /// ... with an observed MFU below this: the GPUs wait for something.
    double train_low_mfu = 0.40;
    /// Communication plus pipeline bubble at or above this share of the predicted step:
    /// communication-bound.
    double train_comm_share = 0.25;
    /// Step time above the GPUs' own prediction (no input stall) by more than this share, with
    /// the GPUs idle or the predicted input stall at this share: input-bound.
    double train_input_gap = 0.20;
    /// Coefficient of variation of the step times above this, or the slowest step above
    /// `train_straggler_max` × the mean: stragglers.
    double train_step_cv = 0.10;
    double train_straggler_max = 1.5;
    /// Megatron's max reserved at or above this share of what CUDA reports: memory-bound.
    double train_memory_share = 0.95;
};

/// One row of the troubleshooting table whether or not it applies (docs/diagnose.md, "The rows"):
/// the ids diagnose() gives it (the throttled row has three, by reason) and when it fires.
struct TroubleshootingRow {
    std::vector<std::string> ids;
    std::string fires_when; ///< the condition, with the thresholds of `th`
    friend bool operator==(const TroubleshootingRow&, const TroubleshootingRow&) = default;
};

/// The clock row's id from GPU telemetry: "thermal-throttled" (thermal reasons in half the
/// samples or more), "power-capped" (the power cap in half the samples, or a draw within 5 % of
/// the limit), else "clock-throttled".
[[nodiscard]] std::string throttle_row_id(const GpuTelemetry& g);

/// Every row diagnose() can return, in the order of docs/diagnose.md, for front ends that show
/// the whole table with the rows that apply marked.
[[nodiscard]] std::vector<TroubleshootingRow>
troubleshooting_table(const DiagnosisThresholds& th = {});

/// Diagnoses the deployment `d` serving `w` (the scenario's) from `obs`: the model is
/// re-estimated at the observed running sequences (a closed loop, model::set_closed_loop) and
/// the observed request lengths, then every row whose threshold the numbers cross is returned,
/// ranked. Throws InvalidArgument when the observations contradict themselves (negative counts).
[[nodiscard]] Diagnosis diagnose(const Deployment& d, const Workload& w,
                                 const EfficiencyProfile& profile, const Observations& obs,
                                 const DiagnosisThresholds& th = {});

/// Diagnoses a training job (the scenario's `training:` block on `hw`) from a step-time log and
/// GPU telemetry: the log's step time beside the model's (model::estimate_training, the chain of
/// `gpuplan train`), and the training rows (docs/diagnose.md): comm-bound, input-stall,
/// training-memory, stragglers, and the clock rows (power-capped, thermal-throttled) re-estimated
/// as training steps. Throws InvalidArgument when `obs.training` is missing or the layout cannot
/// run (as estimate_training).
[[nodiscard]] Diagnosis diagnose_training(const Deployment& hw, const TrainingConfig& cfg,
                                          const EfficiencyProfile& profile,
                                          const TrainingCostInputs& prices, const Observations& obs,
                                          const DiagnosisThresholds& th = {});

} // namespace gpuplan::model
