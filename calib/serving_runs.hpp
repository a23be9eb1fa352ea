#pragma once
/// End-to-end validation of the serving simulator against measured vLLM runs: LLMServingSim's
/// bench/examples/<GPU>/<model>/vllm folders (meta.json with the engine settings and KV pool,
/// requests.jsonl with one line per request) are replayed through sim::simulate with the same
/// arrivals and token counts, and the mean/P50/P99 TTFT, TPOT and E2E are compared.
/// scripts/validate_llmservingsim.py does the same through `gpuplan simulate` (a cross-check).

#include "hwdb/database.hpp"
#include "model/efficiency.hpp"
#include "model/scenario.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::calib {

/// One request of a measured run, on vLLM's engine clock (seconds).
struct ServingRequest {
    int input_tokens = 0;
    int output_tokens = 0;
    double queued_s = 0; ///< arrival at the engine
    double first_token_s = 0;
    double last_token_s = 0;
};

/// A measured vLLM serving run (meta.json + requests.jsonl).
struct ServingRun {
    std::filesystem::path dir; ///< the folder holding meta.json and requests.jsonl
    std::string label;         ///< "<GPU folder>/<model folder>", e.g. "RTX4090/Llama-3.1-8B"
    std::string gpu;           ///< hardware.device_name, else the GPU folder's name
    std::string model;         ///< meta.json "model" (a Hugging Face id)
    std::string vllm_version;  ///< "?" when absent
    int tensor_parallel = 1;
    int data_parallel = 1;
    bool expert_parallel = false;
    int max_num_seqs = 0;
    int max_num_batched_tokens = 0;
    std::optional<int> max_model_len;
    std::string dtype = "bfloat16";
    std::string kv_cache_dtype = "auto";
    int block_size = 16;
    bool prefix_caching = false;
    std::optional<long long> num_gpu_blocks; ///< nullopt: meta.json has no kv_cache section
    std::vector<ServingRequest> requests;
};

/// Reads a run folder. Throws InputError naming file:line for a missing file, bad JSON or a
/// missing field.
[[nodiscard]] ServingRun read_serving_run(const std::filesystem::path& dir);

/// The run folders under `root`: root itself when it holds meta.json and requests.jsonl, else
/// every <root>/llmservingsim/bench/examples/*/*/vllm and <root>/bench/examples/*/*/vllm
/// (sorted). Empty when there are none.
[[nodiscard]] std::vector<std::filesystem::path>
find_serving_runs(const std::filesystem::path& root);

/// Mean and percentiles of one latency; the percentiles by the simulator's rule
/// (sim::QuantileSketch: linear interpolation between order statistics, numpy's default).
struct LatencySummary {
    int count = 0;
    double mean = 0, p50 = 0, p99 = 0;
};

/// TTFT, TPOT and E2E of a set of requests (seconds).
struct ServingLatencies {
    LatencySummary ttft, tpot, e2e;
};

/// The measured latencies (SOURCE.md): TTFT = first_token - queued, TPOT = (last_token -
/// first_token) / (output - 1) over requests with more than one output token, E2E = last_token -
/// queued.
[[nodiscard]] ServingLatencies measured_latencies(const ServingRun& run);

/// A run replayed through the simulator, or why it was skipped.
struct ServingComparison {
    std::string label;
    std::filesystem::path dir;
    int requests = 0;
    std::string vllm_version;
    bool replayed = false;
    std::string skip_reason;     ///< when !replayed
    std::string gpu;             ///< hwdb accelerator
    std::string model;           ///< catalog model
    std::string profile;         ///< the efficiency profile's provenance description
    bool default_profile = true; ///< no profile was found for the GPU
    ServingLatencies measured;
    ServingLatencies simulated;
    /// Output tokens per second from the first arrival to the last token.
    double measured_output_tok_s = 0;
    double simulated_output_tok_s = 0;
};

/// The scenario of a run, as `gpuplan simulate` reads the script's: the hwdb accelerator and
/// catalog model, TP from meta.json, a vLLM engine with its max_model_len, max_num_seqs,
/// max_num_batched_tokens, block size, prefix caching and a KV pool of num_gpu_blocks ×
/// block_size tokens; its workload is left as the loader's default. nullopt, with the reason in
/// `skip_reason`, for runs replay_serving_run skips.
[[nodiscard]] std::optional<model::Scenario>
serving_run_scenario(const ServingRun& run, const hwdb::Database& db, std::string& skip_reason);

/// Replays `run` as `gpuplan simulate` replays the script's scenario: the hwdb accelerator and
/// catalog model of the run, TP from meta.json, a vLLM engine with its max_model_len,
/// max_num_seqs, max_num_batched_tokens, block size, prefix caching and a KV pool of
/// num_gpu_blocks × block_size tokens, and a trace of the queued times (relative to the first,
/// rounded to the microsecond) and token counts. `profile_for` gives the efficiency profile for
/// the GPU (nullopt: model::default_profile()). Runs whose GPU or model is not in the hwdb, that
/// use data or expert parallelism, or whose meta.json lacks the KV pool are skipped with the
/// reason.
[[nodiscard]] ServingComparison replay_serving_run(
    const ServingRun& run, const hwdb::Database& db,
    const std::function<std::optional<model::EfficiencyProfile>(const model::AcceleratorSpec&)>&
        profile_for);

} // namespace gpuplan::calib
