#pragma once
/// Which serving engine can launch which deployment: the hardware vendors each engine runs on,
/// the weight and KV formats it runs on each GPU generation, and the parallel layouts its
/// launcher accepts. One table (engine_rules.cpp, each row with its source) that `--emit`,
/// `estimate`, `plan`, `compare` and `diagnose` read, so they refuse and warn alike.

#include "model/deployment.hpp"

#include <string>
#include <vector>

namespace gpuplan::model {

/// One rule a deployment breaks for an engine.
struct LaunchProblem {
    std::string key;    ///< the scenario key it concerns: "hardware.ep", "precision.weights", ...
    std::string reason; ///< one lowercase sentence: what the engine needs and how to fix it
    friend bool operator==(const LaunchProblem&, const LaunchProblem&) = default;
};

/// The format a checkpoint of these weights is published in: "bf16" for 16- and 32-bit floats
/// (one checkpoint serves them all through the engine's dtype), "gguf" for llama.cpp's types,
/// "awq" for AWQ at any group size, else the precision's name without its group size
/// ("fp8", "gptq-int4", "gptq-int8", "nvfp4", "mxfp4", "int8", ...).
[[nodiscard]] std::string checkpoint_format(const Precision& weights);

/// The rules `engine` breaks for `d` as the model estimated it: the accelerator's vendor, the
/// weight and KV formats on its generation, and the tp/pp/dp/ep layout. Empty: the engine can
/// launch it. Pure and cheap; the sources of each rule are in engine_rules.cpp and
/// docs/emit.md.
[[nodiscard]] std::vector<LaunchProblem> launch_problems(EngineKind engine, const Deployment& d);

/// The tensor-parallel size the engine's launcher takes for this layout: tp × dp when the
/// layout is attention data parallel with expert parallelism (dp > 1 and ep > 1: SGLang's
/// --enable-dp-attention and TensorRT-LLM's enable_attention_dp count the attention groups in
/// the tp size), else tp.
[[nodiscard]] int launcher_tp(EngineKind engine, const Parallelism& par);

} // namespace gpuplan::model
