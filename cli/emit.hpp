#pragma once
/// Launch and benchmark commands for a configuration (`--emit ENGINE` on estimate, plan, compare
/// and diagnose), with each engine's real flag names, one function per engine:
/// the flags read from each engine's argument parser at the commits tests/fixtures/engines/SOURCE
/// names (tests/cli/emit_parser_test.cpp parses every emitted command against those tables).
/// docs/emit.md lists the flags each setting becomes.

#include "model/deployment.hpp"
#include "model/operating_point.hpp"
#include "model/scenario.hpp"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
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
    int input_tokens = 0; ///< mean prompt, the shared prefix included
    int output_tokens = 0;
    int concurrency = 1;
    std::optional<double> request_rate;
    int prefix_tokens = 0;          ///< mean shared prefix (vllm bench --random-prefix-len)
    double range_ratio = 0;         ///< lengths drawn in [mean × (1 − r), mean × (1 + r)]
    double burstiness = 1;          ///< gamma arrivals: 1 / cv² (1: Poisson)
    std::vector<std::string> notes; ///< what the benchmark cannot replay of the workload
};

/// The benchmark load of a scenario's workload at an operating point: the mean request's lengths
/// (model::analytic_request) with its mean shared prefix (model::mean_request), the spread of a
/// single class's prompt lengths as vLLM's uniform range ratio r = √3 σ / mean (the uniform
/// distribution of that standard deviation, at most 1), gamma arrivals' burstiness 1 / cv², the
/// operating point's concurrency, and its rate when it is an offered rate.
[[nodiscard]] BenchLoad bench_load(const model::Workload& w, const model::OperatingPoint& op);

/// The commands of one configuration for one engine, or the reasons it cannot be launched as
/// estimated (then `serve` and `benchmark` are empty).
struct LaunchCommands {
    std::string engine;               ///< to_string(EmitEngine)
    std::string serve;                ///< the server's launch command, one POSIX sh line
    std::string benchmark;            ///< `vllm bench serve ... --save-result` against it
    std::vector<std::string> notes;   ///< what the flags cannot say, and engine differences
    std::vector<std::string> refused; ///< each setting the engine cannot launch, with the reason
};

/// `word` as one POSIX sh word: as is when it holds only [A-Za-z0-9@%+=:,./_-] (and is not
/// empty), else in single quotes with each ' written '\'' (POSIX XCU 2.2.2: nothing is special
/// inside single quotes). Every value --emit prints goes through this one function.
[[nodiscard]] std::string shell_quote(std::string_view word);

/// The words quoted (shell_quote) and joined with single spaces.
[[nodiscard]] std::string shell_join(const std::vector<std::string>& words);

/// Whether `id` is a Hugging Face repository id as huggingface_hub validates one
/// (src/huggingface_hub/utils/_validators.py, REPO_ID_REGEX and validate_repo_id): an optional
/// NAMESPACE/ then a name of 1-96 characters, each part of letters, digits, '_', '-' and '.',
/// starting and ending with a letter, digit or '_', with no "--" or "..", not ending in ".git".
[[nodiscard]] bool valid_hub_id(std::string_view id);

/// The serve command for `e`, the benchmark and notes, or the refusals. `d` is the deployment
/// as the model estimated it. The command launches the checkpoint of d's weight format (the Hub
/// id the user gave, else the catalog's checkpoint of that format; FP8 from a 16-bit checkpoint
/// by online quantization on vLLM and SGLang) and carries every setting the estimate used: the
/// layout as the engine's launcher takes it, the limits (max_model_len, sequences, tokens per
/// step, chunked prefill, prefix caching: the estimate's, whatever engine it modelled), the KV
/// dtype, speculative decoding, LoRA, the KV memory cap, KV offload, two-batch overlap and the
/// scheduler knobs. A setting the engine cannot take, a rule of model::launch_problems, a
/// configuration that does not fit under the engine's own memory arithmetic, or a model id that
/// is not a Hub id is a refusal naming it. The memory fraction and KV page size, which mean
/// different things per engine, take `e`'s defaults when d modelled another engine (a note
/// says so). The benchmark is `vllm bench serve --dataset-name random` with the load's lengths,
/// `--max-concurrency C --num-prompts 10×C` (at least 50) for a closed loop or
/// `--request-rate R --num-prompts 600×R` for an offered rate; `--backend vllm` for vLLM, else
/// `--backend openai --base-url` of the engine's default port. Its result file is what
/// `gpuplan diagnose --bench` and `calib validate --scenario` read. `sched` holds the scenario's
/// scheduler knobs.
[[nodiscard]] LaunchCommands launch_commands(EmitEngine e, const model::Deployment& d,
                                             const BenchLoad& load,
                                             const model::SchedulerConfig& sched = {});

/// {"engine", "command", "benchmark", "notes", "refused"}; command and benchmark are null when
/// refused.
[[nodiscard]] nlohmann::json launch_json(const LaunchCommands& c);

/// "launch (ENGINE):\n  SERVE\nmeasure:\n  BENCH\nnote: ..." with `indent` before each line.
void print_launch(std::ostream& out, const LaunchCommands& c, const std::string& indent = "");

} // namespace gpuplan::cli
