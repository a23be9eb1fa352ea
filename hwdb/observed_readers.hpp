#pragma once
/// Readers of what a running deployment shows, for `gpuplan diagnose` (docs/diagnose.md):
/// vLLM's Prometheus /metrics text (one scrape, or two for rates over the window between them),
/// the JSON `vllm bench serve --save-result`, GuideLLM and AIPerf write, GPU telemetry
/// (`nvidia-smi --query-gpu=... --format=csv`, `nvidia-smi dmon`, the DCGM exporter) and
/// vLLM's start-up log lines about its KV cache. Each reader is strict: a malformed line or field
/// is a ConfigError naming the file, line and field and how to fix it (exit code 2). The parse_*
/// functions take the text and the name to report; the read_* functions read the file
/// (hwdb/file_io.hpp) and parse it.

#include "model/diagnose.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::hwdb {

/// One Prometheus text-format scrape: every sample's value summed over its label sets, by full
/// sample name (e.g. "vllm:time_to_first_token_seconds_sum"); gauges that are fractions
/// (kv_cache_usage_perc) are averaged instead. `timestamp_ms` is the largest sample timestamp
/// when the scrape has them.
struct MetricsScrape {
    std::map<std::string, double> sums;
    std::map<std::string, int> series; ///< label sets per sample name
    std::map<std::string, int> lines;  ///< the first line of each sample name, for messages
    std::optional<double> timestamp_ms;
    /// Histogram buckets by histogram name (without "_bucket"): le → cumulative count, summed
    /// over the other labels.
    std::map<std::string, std::map<double, double>> buckets;
};

/// Parses Prometheus text exposition format (prometheus.io/docs/instrumenting/exposition_formats).
[[nodiscard]] MetricsScrape parse_metrics_scrape(std::string_view text, const std::string& file);

/// The engine metrics of one scrape, or of the window between two (`later` after `earlier`):
/// histogram means and counters from the differences, gauges from `later`. `window_s`: the
/// seconds between the scrapes when known (a given value wins over the scrapes' timestamps).
/// Throws ConfigError when the scrape has no vllm: metric, or a counter went backwards (the
/// server restarted between the scrapes, or the files are in the wrong order).
[[nodiscard]] model::EngineMetrics engine_metrics(const MetricsScrape& later,
                                                  const std::string& file);
[[nodiscard]] model::EngineMetrics engine_metrics(const MetricsScrape& earlier,
                                                  const MetricsScrape& later,
                                                  const std::string& later_file,
                                                  std::optional<double> window_s);

/// Parses `vllm bench serve --save-result` JSON.
[[nodiscard]] model::BenchSummary parse_vllm_bench(std::string_view text, const std::string& file);

/// Parses nvidia-smi CSV (with or without units; any column order; a header line naming the
/// query fields is required).
[[nodiscard]] model::GpuTelemetry parse_nvidia_smi_csv(std::string_view text,
                                                       const std::string& file);

/// Parses GuideLLM's benchmarks.json (`guidellm benchmark --output-path`): benchmark `index`
/// of benchmarks[] (required when the file holds more than one). TPOT is its
/// inter_token_latency_ms (which excludes the first token); its time_per_output_token_ms
/// includes the first token and is kept apart (mean_ms_per_token_incl_first).
[[nodiscard]] model::BenchSummary parse_guidellm(std::string_view text, const std::string& file,
                                                 std::optional<int> index = std::nullopt);

/// Parses AIPerf's profile_export_aiperf.json (`aiperf profile`): {unit, avg, p50, p99, ...} per
/// metric; times converted to ms from their unit.
[[nodiscard]] model::BenchSummary parse_aiperf(std::string_view text, const std::string& file);

/// Parses `nvidia-smi dmon` text (its '# gpu pwr ...' header, any -s selection, -o DT): sm and
/// mem utilization, power, pclk, and pviol / tviol when selected (-s v). Samples averaged.
[[nodiscard]] model::GpuTelemetry parse_nvidia_smi_dmon(std::string_view text,
                                                        const std::string& file);

/// Parses a DCGM exporter scrape (Prometheus text): DCGM_FI_PROF_SM_ACTIVE, _DRAM_ACTIVE,
/// _PIPE_TENSOR_ACTIVE, DCGM_FI_DEV_POWER_USAGE, _SM_CLOCK, _GPU_UTIL and
/// _CLOCK_THROTTLE_REASONS (NVML bit mask), averaged over GPUs.
[[nodiscard]] model::GpuTelemetry parse_dcgm_metrics(std::string_view text,
                                                     const std::string& file);

/// Parses an engine's start-up log for its KV cache lines: vLLM's "GPU KV cache size: N tokens",
/// "Maximum concurrency for L tokens per request: Xx" (V1) and "# GPU blocks: B" (V0); SGLang's
/// "KV Cache is allocated. #tokens: N" and "max_total_num_tokens=N, ..., context_len=L";
/// TensorRT-LLM's "Allocated X GiB for max tokens in paged KV cache (N)". Other lines are
/// ignored; the smallest pool logged (one line per worker) is kept.
[[nodiscard]] model::EngineStartup parse_startup_log(std::string_view text,
                                                     const std::string& file);

/// Parses a training job's step-time log: Megatron-LM's training_log lines ("iteration N/M | ...
/// | elapsed time per iteration (ms): X | throughput per GPU (TFLOP/s/GPU): Y | ...", other lines
/// ignored, with report_memory's "max reserved" and PyTorch's "out of memory" noted), or a CSV
/// whose header is "step,seconds[,tokens]". The first step is left out of the statistics when
/// there are three or more (warm-up).
[[nodiscard]] model::TrainingLog parse_training_log(std::string_view text, const std::string& file);

/// A benchmark summary and what to call it: the file, or FILE#I for benchmark I of a sweep.
struct LabelledBench {
    std::string label;
    model::BenchSummary bench;
};

/// Any benchmark result, its tool found from its keys: GuideLLM (a "benchmarks" array: every
/// benchmark of a sweep), AIPerf (request_count, benchmark_duration or records), else
/// `vllm bench serve --save-result` (whose reader then names what is missing).
[[nodiscard]] std::vector<LabelledBench> parse_bench_results(std::string_view text,
                                                             const std::string& file);

[[nodiscard]] MetricsScrape read_metrics_scrape(const std::filesystem::path& path);
[[nodiscard]] std::vector<LabelledBench> read_bench_results(const std::filesystem::path& path);
[[nodiscard]] model::BenchSummary read_guidellm(const std::filesystem::path& path,
                                                std::optional<int> index = std::nullopt);
[[nodiscard]] model::BenchSummary read_aiperf(const std::filesystem::path& path);
[[nodiscard]] model::GpuTelemetry read_nvidia_smi_dmon(const std::filesystem::path& path);
[[nodiscard]] model::GpuTelemetry read_dcgm_metrics(const std::filesystem::path& path);
[[nodiscard]] model::EngineStartup read_startup_log(const std::filesystem::path& path);
[[nodiscard]] model::TrainingLog read_training_log(const std::filesystem::path& path);
[[nodiscard]] model::BenchSummary read_vllm_bench(const std::filesystem::path& path);
[[nodiscard]] model::GpuTelemetry read_nvidia_smi_csv(const std::filesystem::path& path);

/// The observation files of one diagnosis (`gpuplan diagnose` and the app's Diagnose tab); an
/// empty path is not given.
struct ObservationFiles {
    std::vector<std::filesystem::path> metrics; ///< one scrape, or two (earlier first)
    std::optional<double> interval_s;           ///< seconds between the two scrapes
    std::filesystem::path bench;                ///< `vllm bench serve --save-result` JSON
    std::filesystem::path guidellm;             ///< GuideLLM benchmarks.json
    std::optional<int> bench_index;             ///< which benchmark of a GuideLLM sweep
    std::filesystem::path aiperf;               ///< AIPerf profile_export_aiperf.json
    std::filesystem::path smi;                  ///< nvidia-smi --query-gpu CSV
    std::filesystem::path dmon;                 ///< nvidia-smi dmon
    std::filesystem::path dcgm;                 ///< DCGM exporter scrape
    std::filesystem::path startup_log;          ///< the engine's start-up log
    std::filesystem::path training_log;         ///< a training job's step-time log
    /// True when no file is given.
    [[nodiscard]] bool empty() const;
};

/// Reads every given file into one model::Observations: the scrapes through engine_metrics (two
/// give rates over the window), one benchmark result, and the GPU telemetry merged in the order
/// nvidia-smi CSV, DCGM, dmon (model::merge). Throws InvalidArgument when more than two scrapes
/// or more than one benchmark result is given, an interval is not a positive number or is given
/// without two scrapes, or a bench index without a GuideLLM file; a reader's ConfigError (file,
/// line and field) otherwise.
[[nodiscard]] model::Observations read_observations(const ObservationFiles& files);

} // namespace gpuplan::hwdb
