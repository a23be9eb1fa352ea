#pragma once
/// Launch and benchmark commands for a configuration (`--emit ENGINE` on estimate, plan, compare
/// and diagnose), with each engine's real flag names, one function per engine:
///  - vLLM `vllm serve`: docs.vllm.ai/en/latest/configuration/engine_args.html;
///  - SGLang `python -m sglang.launch_server`: sgl-project/sglang
///    python/sglang/srt/server_args.py at commit 469c63e5;
///  - TensorRT-LLM `trtllm-serve`: NVIDIA/TensorRT-LLM tensorrt_llm/commands/serve.py at commit
///    00209af1;
///  - llama.cpp `llama-server`: ggml-org/llama.cpp tools/server/README.md at commit 00dc8057.
/// docs/emit.md lists the flags each setting becomes.

#include "model/deployment.hpp"
#include "model/operating_point.hpp"
#include "model/scenario.hpp"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace gpuplan::cli {

enum class EmitEngine { Vllm, Sglang, TensorRtLlm, LlamaCpp };

/// "vllm", "sglang", "tensorrt-llm" (also "trtllm", "trt-llm"), "llama.cpp" (also "llamacpp");
/// throws UsageError naming the choices otherwise.
[[nodiscard]] EmitEngine parse_emit_engine(const std::string& name);

/// The value of an --emit option: nullopt when it was not given (empty), else parse_emit_engine.
[[nodiscard]] std::optional<EmitEngine> emit_option(const std::string& value);

/// "vllm", "sglang", "tensorrt-llm", "llama.cpp".
[[nodiscard]] const char* to_string(EmitEngine e);

/// The load a benchmark command replays: request lengths and a closed loop of `concurrency`
/// clients, or an offered `request_rate` (requests/s, Poisson) when given.
struct BenchLoad {
    int input_tokens = 0;
    int output_tokens = 0;
    int concurrency = 1;
    std::optional<double> request_rate;
};

/// The benchmark load of a scenario's workload at an operating point: the mean request's lengths
/// (model::analytic_request), the operating point's concurrency, and its rate when it is an
/// offered rate.
[[nodiscard]] BenchLoad bench_load(const model::Workload& w, const model::OperatingPoint& op);

/// The commands of one configuration for one engine.
struct LaunchCommands {
    std::string engine;             ///< to_string(EmitEngine)
    std::string serve;              ///< the server's launch command
    std::string benchmark;          ///< `vllm bench serve ... --save-result` against it
    std::vector<std::string> notes; ///< what the flags cannot say, and engine differences
};

/// `vllm serve MODEL --tensor-parallel-size ... --max-model-len ... --gpu-memory-utilization ...
/// --max-num-seqs ... --max-num-batched-tokens ...` and the flags for chunked prefill, prefix
/// caching, the KV cache dtype, the quantization or dtype and eager mode, from the deployment
/// with its engine defaults resolved. The model is its Hugging Face id when the catalog has one.
[[nodiscard]] std::string vllm_serve_command(const model::Deployment& d);

/// `python -m sglang.launch_server --model-path MODEL --tp-size ... --context-length ...
/// --mem-fraction-static ... --max-running-requests ... --chunked-prefill-size ...` and
/// --pp-size, --dp-size, --ep-size, --page-size, --disable-radix-cache, --kv-cache-dtype,
/// --quantization or --dtype, --disable-cuda-graph where they apply, and --schedule-policy lpm
/// and --schedule-conservativeness X when `sched` sets them away from SGLang's defaults (fcfs, 1).
[[nodiscard]] std::string sglang_serve_command(const model::Deployment& d,
                                               const model::SchedulerConfig& sched = {});

/// `trtllm-serve MODEL --backend pytorch --tp_size ... --pp_size ... --max_batch_size ...
/// --max_num_tokens ... --max_seq_len ... --kv_cache_free_gpu_memory_fraction ...` and
/// --ep_size, --enable_chunked_prefill where they apply. trtllm-serve has no flag for the
/// capacity scheduler: with `sched.capacity_scheduler` MAX_UTILIZATION (not TensorRT-LLM's
/// default) the command first writes `scheduler_config: capacity_scheduler_policy:
/// MAX_UTILIZATION` to trtllm-extra-options.yaml and passes it with --extra_llm_api_options
/// (the LLM API's SchedulerConfig; nvidia.github.io/TensorRT-LLM "Useful Runtime Options").
[[nodiscard]] std::string trtllm_serve_command(const model::Deployment& d,
                                               const model::SchedulerConfig& sched = {});

/// `llama-server -m MODEL.gguf -c CTX -ngl 999 -np SLOTS -b ... -ub ...` (-c is the context of
/// all slots together: max_model_len × slots) and -sm row, -ctk/-ctv q8_0 where they apply.
[[nodiscard]] std::string llamacpp_serve_command(const model::Deployment& d);

/// The serve command for `e`, the benchmark and notes. The benchmark is `vllm bench serve
/// --dataset-name random --random-input-len IN --random-output-len OUT --ignore-eos --save-result`
/// with `--max-concurrency C --num-prompts 10×C` (at least 50) for a closed loop or
/// `--request-rate R --num-prompts 600×R` for an offered rate; `--backend vllm` for vLLM, else
/// `--backend openai --base-url` of the engine's default port. Its result file is what
/// `gpuplan diagnose --bench` and `calib validate --scenario` read. `d` is the deployment as the
/// model estimated it; when its engine is not `e`, the engine-specific settings the scenario
/// left open are resolved with `e`'s defaults and a note says so; for TensorRT-LLM those are
/// trtllm-bench's max batch size and max num tokens at the load's lengths
/// (model::with_load_engine_defaults). `sched` holds the scenario's scheduler knobs.
[[nodiscard]] LaunchCommands launch_commands(EmitEngine e, const model::Deployment& d,
                                             const BenchLoad& load,
                                             const model::SchedulerConfig& sched = {});

/// {"engine", "command", "benchmark", "notes"}.
[[nodiscard]] nlohmann::json launch_json(const LaunchCommands& c);

/// "launch (ENGINE):\n  SERVE\nmeasure:\n  BENCH\nnote: ..." with `indent` before each line.
void print_launch(std::ostream& out, const LaunchCommands& c, const std::string& indent = "");

} // namespace gpuplan::cli
