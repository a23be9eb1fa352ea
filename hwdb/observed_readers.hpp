#pragma once
/// Readers of what a running deployment shows, for `gpuplan diagnose` (docs/diagnose.md):
/// vLLM's Prometheus /metrics text (one scrape, or two for rates over the window between them),
/// the JSON `vllm bench serve --save-result` writes, and `nvidia-smi --query-gpu=... --format=csv`
/// samples. Each reader is strict: a malformed line or field is a ConfigError naming the file,
/// line and field and how to fix it (exit code 2). The parse_* functions take the text and the
/// name to report; the read_* functions read the file (hwdb/file_io.hpp) and parse it.

#include "model/diagnose.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace gpuplan::hwdb {

/// One Prometheus text-format scrape: every sample's value summed over its label sets, by full
/// sample name (e.g. "vllm:time_to_first_token_seconds_sum"); gauges that are fractions
/// (kv_cache_usage_perc) are averaged instead. `timestamp_ms` is the largest sample timestamp
/// when the scrape has them.
struct MetricsScrape {
    std::map<std::string, double> sums;
    std::map<std::string, int> series; ///< label sets per sample name
    std::optional<double> timestamp_ms;
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

[[nodiscard]] MetricsScrape read_metrics_scrape(const std::filesystem::path& path);
[[nodiscard]] model::BenchSummary read_vllm_bench(const std::filesystem::path& path);
[[nodiscard]] model::GpuTelemetry read_nvidia_smi_csv(const std::filesystem::path& path);

} // namespace gpuplan::hwdb
