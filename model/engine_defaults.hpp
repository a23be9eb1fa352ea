#pragma once
/// Engine defaults that depend on the load as well as on the deployment (resolve_engine in
/// model/deployment.hpp holds those that depend on the deployment alone).
///
/// TensorRT-LLM: `trtllm-bench throughput` does not run the LLM API's max_batch_size 2048 /
/// max_num_tokens 8192; it chooses both from the model, the GPUs and the data set's mean input
/// and output lengths (NVIDIA/TensorRT-LLM@a7e572fb20c694e7711f0c09f21eeaedeb45ccaa:
/// tensorrt_llm/bench/build/tuning.py `calc_engine_setting` and `finetune_setting`), and runs
/// with chunked context on (@56851033051a6f9bd50e22219db64d68722a6f01:
/// tensorrt_llm/bench/benchmark/throughput.py). docs/engines.md §3.4 works one case by hand.

#include "model/deployment.hpp"

#include <optional>

namespace gpuplan::model {

struct Workload;

/// What trtllm-bench's heuristic chooses, with the figure it starts from.
struct TrtllmBenchSettings {
    double kv_cache_max_requests = 0; ///< requests of mean ISL + OSL the KV memory holds
    int max_batch_size = 0;           ///< rounded up ("slightly optimistic"), at least 64
    int max_num_tokens = 0;           ///< rounded up, at least 2048, at most 32768 before rounding
    friend bool operator==(const TrtllmBenchSettings&, const TrtllmBenchSettings&) = default;
};

/// trtllm-bench's heuristic for `d` (its model, GPU memory, tp, pp and precisions) and a data
/// set of mean input length `isl` and output length `osl` (tokens, > 0):
///   GiB per token = 2 × layers × max(tp, kv_heads) × head_dim × KV bytes ÷ 2^30;
///   KV GiB = 0.95 × (GPU memory × tp × pp − parameters × weight bytes ÷ 2^30);
///   requests = KV GiB ÷ (GiB per token × (isl + osl));
///   raw batch = min(requests, 4096) ÷ pp; raw tokens = min(raw batch × (1 + isl ÷ osl), 32768);
///   batch: below 256 max(64, ⌈raw ÷ 32⌉ × 32), below 1024 ⌈raw ÷ 128⌉ × 128, else ⌈raw ÷ 256⌉ ×
///   256; tokens: below 4096 max(2048, ⌈raw ÷ 256⌉ × 256), below 8192 ⌈raw ÷ 512⌉ × 512, else
///   ⌈raw ÷ 1024⌉ × 1024.
/// Bytes per element as trtllm-bench's table has them: FP8 1, NVFP4 0.5, anything else 2 (so a
/// weight-only int4 checkpoint counts 2 bytes per parameter there too). GPU memory is the memory
/// the device reports (cuda_visible_memory, or engine.usable_memory; trtllm-bench reads NVML's
/// total). The MLA latent cache and sliding windows are not in the formula, as in trtllm-bench.
/// nullopt when it refuses the model (the weights exceed the memory, or not one request fits).
[[nodiscard]] std::optional<TrtllmBenchSettings> trtllm_bench_settings(const Deployment& d,
                                                                       double isl, double osl);

/// `d` with the load-dependent engine defaults filled in where the scenario leaves them unset:
/// for TensorRT-LLM, max_num_seqs and max_num_batched_tokens from trtllm_bench_settings at the
/// workload's mean request (model/workload_mix.hpp), and chunked context on, as trtllm-bench
/// runs. Keys the scenario sets are kept; other engines, and a model trtllm-bench refuses, are
/// returned unchanged (the LLM API defaults of resolve_engine then apply). Pure.
[[nodiscard]] Deployment with_load_engine_defaults(const Deployment& d, const Workload& w);

} // namespace gpuplan::model
