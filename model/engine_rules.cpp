#include "model/engine_rules.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace gpuplan::model {

namespace {

/// The vendors (hwdb `vendor`) an engine's releases run on.
///  - vLLM: CUDA, ROCm, TPU and Intel Gaudi (docs.vllm.ai getting_started/installation);
///  - SGLang: CUDA and ROCm (docs.sglang.ai get_started/install; its TPU port is a separate
///    project, sglang-jax);
///  - TensorRT-LLM: NVIDIA GPUs only (NVIDIA/TensorRT-LLM README);
///  - llama.cpp: its CUDA and HIP back ends (ggml-org/llama.cpp docs/build.md); none drives a
///    TPU or a Gaudi.
struct VendorRow {
    EngineKind engine;
    std::array<std::string_view, 4> vendors;
};

constexpr std::array<VendorRow, 4> kVendors{{
    {EngineKind::Vllm, {"nvidia", "amd", "google", "intel"}},
    {EngineKind::Sglang, {"nvidia", "amd", "", ""}},
    {EngineKind::TensorRtLlm, {"nvidia", "", "", ""}},
    {EngineKind::LlamaCpp, {"nvidia", "amd", "", ""}},
}};

/// The generations (hwdb `architecture`) with FP8 tensor cores: Ada (sm_89) and Hopper (sm_90)
/// onwards, AMD CDNA3 (MI300) onwards, Gaudi 2 and 3. TPU v5e and v5p have none (bf16 and int8
/// only). vLLM's FP8 page (docs.vllm.ai features/quantization/fp8) names the same GPUs.
constexpr std::array<std::string_view, 7> kFp8Architectures{"ada",   "hopper", "blackwell", "cdna3",
                                                            "cdna4", "gaudi2", "gaudi3"};

/// The generations with FP4 and MXFP8 tensor cores: NVIDIA Blackwell (NVFP4, MXFP4, MXFP8) and
/// AMD CDNA4 (MI350X/MI355X: MXFP4, MXFP8).
constexpr std::array<std::string_view, 2> kFp4Architectures{"blackwell", "cdna4"};

template <std::size_t N> bool in(const std::array<std::string_view, N>& list, std::string_view v) {
    return std::find(list.begin(), list.end(), v) != list.end();
}

bool is_fp8(const Precision& p) {
    return p.name.starts_with("fp8");
}
bool is_fp4_class(const Precision& p) {
    return p.name == "nvfp4" || p.name == "mxfp4" || p.name == "mxfp8";
}
bool is_gguf(const Precision& p) {
    return checkpoint_format(p) == "gguf";
}

void vendor_rule(EngineKind e, const Deployment& d, std::vector<LaunchProblem>& out) {
    for (const VendorRow& row : kVendors) {
        if (row.engine == e && !d.gpu.vendor.empty() && !in(row.vendors, d.gpu.vendor)) {
            out.push_back({"hardware.accelerator",
                           std::string(to_string(e)) + " does not run on " + d.gpu.name + " (" +
                               d.gpu.vendor + "); plan it with an engine that does (vllm runs on " +
                               "nvidia, amd, google and intel accelerators)"});
        }
    }
}

void format_rules(EngineKind e, const Deployment& d, std::vector<LaunchProblem>& out) {
    const std::string& arch = d.gpu.architecture;
    const bool known = !arch.empty(); // an accelerator without a generation is not judged
    const Precision& w = d.prec.weights;
    if (known && is_fp8(w) && !in(kFp8Architectures, arch)) {
        out.push_back({"precision.weights", "fp8 weights need fp8 tensor cores (ada, hopper, "
                                            "blackwell, mi300 and later, gaudi); " +
                                                d.gpu.name + " (" + arch +
                                                ") has none: plan bf16 weights"});
    }
    if (known && is_fp4_class(w) && !in(kFp4Architectures, arch)) {
        out.push_back({"precision.weights", w.name +
                                                " weights need fp4/mxfp8 tensor cores "
                                                "(blackwell, mi350x/mi355x); " +
                                                d.gpu.name + " (" + arch + ") has none"});
    }
    // An fp8 KV cache is stored in fp8 and read by the attention kernel: vLLM's CUDA kernels
    // dequantize it on any NVIDIA GPU (--kv-cache-dtype: "CUDA 11.8+ supports fp8"); the other
    // engines and accelerators need fp8 hardware.
    const bool kv_anywhere = e == EngineKind::Vllm && d.gpu.vendor == "nvidia";
    if (known && is_fp8(d.prec.kv_cache) && !kv_anywhere && !in(kFp8Architectures, arch)) {
        out.push_back({"precision.kv_cache", std::string(to_string(e)) +
                                                 " has no fp8 kv cache on " + d.gpu.name + " (" +
                                                 arch + "): plan a 16-bit kv cache"});
    }
    if (is_gguf(w) && e != EngineKind::LlamaCpp) {
        out.push_back({"precision.weights",
                       w.name + " is a llama.cpp (GGUF) type: " + to_string(e) +
                           " serves safetensors checkpoints; launch it with llama.cpp or plan "
                           "bf16, fp8, awq or gptq weights"});
    }
    if (!is_gguf(w) && e == EngineKind::LlamaCpp && checkpoint_format(w) != "bf16") {
        out.push_back({"precision.weights",
                       "llama.cpp loads GGUF files, which have no " + w.name +
                           " weights: plan a GGUF type (q4_k_m, q8_0, ...) or 16-bit weights"});
    }
    if ((w.name.starts_with("awq") || w.name.starts_with("gptq")) &&
        (d.gpu.vendor == "google" || d.gpu.vendor == "intel")) {
        out.push_back({"precision.weights", std::string(to_string(e)) + " has no " + w.name +
                                                " kernels on " + d.gpu.name});
    }
}

/// The layouts each launcher accepts.
///  - vLLM: --enable-expert-parallel makes one expert-parallel group of all tp × dp ranks
///    (docs.vllm.ai serving/expert_parallel_deployment: "EP size = TP × DP").
///  - SGLang: the MoE layers run with moe_tp = tp_size / ep_size, so ep must divide the tp size
///    (tp × dp with --enable-dp-attention); python/sglang/srt/server_args.py.
///  - TensorRT-LLM: its Mapping requires moe_tp_size × moe_ep_size = tp_size
///    (tensorrt_llm/mapping.py), the tp size being tp × dp with enable_attention_dp.
///  - llama.cpp: no expert parallelism, and one split mode per server (--split-mode
///    none|layer|row, common/arg.cpp): rows (tp) or layers (pp), not both.
void layout_rules(EngineKind e, const Deployment& d, std::vector<LaunchProblem>& out) {
    const Parallelism& p = d.par;
    if (p.ep <= 1 && e != EngineKind::LlamaCpp) {
        return;
    }
    switch (e) {
    case EngineKind::Vllm:
        if (p.ep != p.tp * p.dp) {
            out.push_back({"hardware.ep", "vllm's expert parallel group is all tp x dp = " +
                                              std::to_string(p.tp * p.dp) + " gpus, not ep " +
                                              std::to_string(p.ep) + ": set ep to " +
                                              std::to_string(p.tp * p.dp) + " or 1"});
        }
        break;
    case EngineKind::Sglang:
    case EngineKind::TensorRtLlm: {
        const int tp = launcher_tp(e, p);
        if (tp % p.ep != 0) {
            out.push_back({"hardware.ep", std::string(to_string(e)) +
                                              " splits each expert over tp / ep gpus, so ep " +
                                              std::to_string(p.ep) + " must divide its tp size " +
                                              std::to_string(tp)});
        }
        break;
    }
    case EngineKind::LlamaCpp:
        if (p.ep > 1) {
            out.push_back({"hardware.ep", "llama.cpp has no expert parallelism: each server "
                                          "holds the whole model; plan ep 1"});
        }
        if (p.tp > 1 && p.pp > 1) {
            out.push_back({"hardware.pp", "llama.cpp splits a model by rows (tp) or by layers "
                                          "(pp), not both: plan tp 1 or pp 1"});
        }
        break;
    }
}

} // namespace

std::string checkpoint_format(const Precision& weights) {
    const std::string& n = weights.name;
    if (n == "bf16" || n == "fp16" || n == "fp32" || n == "tf32") {
        return "bf16";
    }
    if (n.size() > 1 && n[0] == 'q' && n[1] >= '0' && n[1] <= '9') {
        return "gguf";
    }
    if (n.starts_with("awq")) {
        return "awq";
    }
    return n.substr(0, n.find(':'));
}

int launcher_tp(EngineKind engine, const Parallelism& par) {
    const bool attention_dp = par.dp > 1 && par.ep > 1;
    if (attention_dp && (engine == EngineKind::Sglang || engine == EngineKind::TensorRtLlm)) {
        return par.tp * par.dp;
    }
    return par.tp;
}

std::vector<LaunchProblem> launch_problems(EngineKind engine, const Deployment& d) {
    std::vector<LaunchProblem> out;
    vendor_rule(engine, d, out);
    format_rules(engine, d, out);
    layout_rules(engine, d, out);
    return out;
}

} // namespace gpuplan::model
