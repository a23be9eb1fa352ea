#pragma once
/// Launch commands for a configuration, with the engine's real flag names (vLLM's engine
/// arguments: docs.vllm.ai/en/latest/configuration/engine_args.html).

#include "model/deployment.hpp"

#include <string>

namespace gpuplan::cli {

/// `vllm serve MODEL --tensor-parallel-size ... --max-model-len ... --gpu-memory-utilization ...
/// --max-num-seqs ... --max-num-batched-tokens ...` and the flags for chunked prefill, prefix
/// caching, the KV cache dtype, the quantization or dtype and eager mode, from the deployment
/// with its engine defaults resolved. The model is its Hugging Face id when the catalog has one.
[[nodiscard]] std::string vllm_serve_command(const model::Deployment& d);

/// `vllm bench serve --backend vllm --model MODEL --dataset-name random --random-input-len IN
/// --random-output-len OUT --max-concurrency C --num-prompts N --ignore-eos --save-result`: a
/// closed-loop benchmark of `concurrency` clients at the given lengths (10 prompts per client, at
/// least 50; --ignore-eos keeps every output at OUT tokens), whose result file
/// `gpuplan calib validate --scenario` and `gpuplan diagnose --bench` read.
[[nodiscard]] std::string vllm_bench_command(const model::Deployment& d, int input_tokens,
                                             int output_tokens, int concurrency);

} // namespace gpuplan::cli
