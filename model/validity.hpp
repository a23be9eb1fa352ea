#pragma once
/// The validity rules every front end applies the same way: the loader, every command, the
/// what-ifs and the desktop app call these functions (model::validate(Deployment) calls the
/// deployment ones), so one combination is refused everywhere with one message that says what
/// to change. Each rule throws InvalidArgument (an InputError); `format_support` also answers
/// without throwing, for searches that skip what cannot run.

#include "model/deployment.hpp"
#include "model/hardware_spec.hpp"
#include "model/precision.hpp"
#include "model/units.hpp"

#include <string>

namespace gpuplan::model {

struct Scenario;
struct Autoscaler;
struct ReplicaFailures;

/// Whether a weight format is a GGUF (llama.cpp) quantization: q8_0, q6_k, q5_k_m, q4_k_m, q4_0.
[[nodiscard]] bool is_gguf(const Precision& p);

/// Whether an engine can run the deployment's formats on its GPU.
struct FormatSupport {
    bool runs = true;
    std::string problem; ///< why not, with the fix (empty when it runs)
    std::string note;    ///< a caveat when it runs (e.g. GGUF in vLLM is experimental)
};

/// Engine × weight format × GPU:
/// - llama.cpp loads GGUF files only: the GGUF quantizations, MXFP4, and F32/F16/BF16 GGUF files
///   (ggml-org/llama.cpp, gguf-py/gguf/constants.py GGMLQuantizationType); FP8, INT8 (W8A8),
///   GPTQ, AWQ, INT4/INT8 weight-only and NVFP4 checkpoints are refused.
/// - TensorRT-LLM has no GGUF loader (NVIDIA TensorRT-LLM docs, "Numerical Precision"), and its
///   FP8 and FP4 kernels need the GPU's own FP8/FP4 tensor cores (Ada/Hopper/Blackwell).
/// - vLLM runs GGUF, "highly experimental and under-optimized" (docs.vllm.ai, Quantization →
///   GGUF): allowed with a note. FP8/FP4 checkpoints on a GPU without those tensor cores run as
///   weight-only (vLLM's FP8/FP4 Marlin kernels); SGLang reuses those kernels.
/// - The 16-bit (or wider) paths the GPU computes on must exist: bf16 activations or weights on
///   a GPU without bf16 peaks (a V100, a T4) are refused with fp16 as the alternative, and the
///   other way round (a TPU has no fp16).
[[nodiscard]] FormatSupport format_support(EngineKind engine, const Precisions& prec,
                                           const AcceleratorSpec& gpu);

/// Throws InvalidArgument with format_support's problem when the combination cannot run.
void check_format_support(const Deployment& d);

/// max_model_len (resolved) above the model's max_context is refused, as vLLM refuses to start
/// ("User-specified max_model_len ... is greater than the derived max_model_len"), unless the
/// scenario sets engine.allow_long_context (vLLM's VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, for a
/// model run with rope scaling beyond its trained context). SGLang refuses alike (unless
/// SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1), and so does TensorRT-LLM's build; llama.cpp
/// only warns ("possible training context overflow"), so it is not refused.
void check_context_length(const Deployment& d);

/// A request of `input` + `output` tokens longer than `max_model_len` is refused (vLLM rejects
/// such a request). `where` prefixes the message ("workload: ").
void check_request_length(long long input, long long output, int max_model_len,
                          const std::string& where = "workload: ");

/// A per-GPU power cap outside what the driver lets one set: [power_limit_min, power_limit_max]
/// when the hwdb gives them (nvidia-smi -q "Min/Max Power Limit"), else (0, board power].
/// `what` names the setting in the message ("--gpu-cap", "power.gpu_cap").
void check_gpu_cap(const AcceleratorSpec& gpu, Watts cap, const std::string& what);

/// A 16-bit compute path (bf16 or fp16) the GPU has no peak for is refused, naming the other
/// one when the GPU has it (training's `compute:`; serving formats go through format_support).
/// `what` names the setting ("training compute").
void check_compute_path(const AcceleratorSpec& gpu, ComputeType type, const std::string& what);

/// The `cluster.autoscaler:` block (model/autoscaler.hpp). Throws InvalidArgument unless target > 0
/// (≤ 1 for utilisation and kv_use), interval > 0, provisioning, cooldown and tolerance ≥ 0, 1 ≤
/// min_replicas ≤ max_replicas and `initial` (the replicas at the start) is within [min_replicas,
/// max_replicas].
void check_autoscaler(const Autoscaler& a, int initial);

/// The `cluster.failures:` block (model/replica_failures.hpp). Throws InvalidArgument unless a
/// given MTBF is > 0, a given MTTR is >= 0 (both finite) and spares >= 0.
void check_replica_failures(const ReplicaFailures& f);

/// Every rule above that applies to a whole scenario: validate(deployment) and the power cap
/// (power.gpu_cap). The desktop app checks an edited scenario with this; the loader and the
/// command-line flags apply the same functions with file positions and flag names.
void validate_scenario(const Scenario& s);

} // namespace gpuplan::model
