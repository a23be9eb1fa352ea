#pragma once
/// One measured kernel or collective time with the shape it ran on: the unit that calibration
/// imports (calib/), stores in profile YAML (hwdb/profile_loader) and fits efficiency curves to.
/// A plain value type; which fields are meaningful depends on the operator class.

#include <optional>
#include <string>
#include <string_view>

namespace gpuplan::model {

/// The operator classes an efficiency profile has a curve for.
enum class OpClass {
    Gemm,             ///< dense matrix product [m,k] x [k,n] (a linear layer)
    AttentionPrefill, ///< attention of prompt tokens (FlashAttention varlen)
    AttentionDecode,  ///< attention of one new token per sequence over its KV cache
    MemoryBound,      ///< streaming kernels: norms, elementwise, rotary, embedding gathers
    AllReduce,        ///< NCCL all-reduce over a group of GPUs
    SendRecv,         ///< one point-to-point send between two GPUs
    GroupedGemm,      ///< the routed experts of an MoE layer as one grouped kernel
};
inline constexpr int kOpClassCount = 7;

/// "gemm", "attention_prefill", "attention_decode", "memory_bound", "all_reduce", "send_recv",
/// "grouped_gemm".
[[nodiscard]] inline const char* to_string(OpClass c) {
    switch (c) {
    case OpClass::Gemm: return "gemm";
    case OpClass::AttentionPrefill: return "attention_prefill";
    case OpClass::AttentionDecode: return "attention_decode";
    case OpClass::MemoryBound: return "memory_bound";
    case OpClass::AllReduce: return "all_reduce";
    case OpClass::SendRecv: return "send_recv";
    case OpClass::GroupedGemm: return "grouped_gemm";
    }
    return "gemm";
}

/// The class named by to_string, or nullopt.
[[nodiscard]] inline std::optional<OpClass> find_op_class(std::string_view name) {
    for (int i = 0; i < kOpClassCount; ++i) {
        const auto c = static_cast<OpClass>(i);
        if (name == to_string(c)) {
            return c;
        }
    }
    return std::nullopt;
}

/// How a time was taken. Kernel: the GPU kernel duration (Kineto, CUDA events around the
/// kernel). Host: a host timer around the call with a device synchronize, so it includes the
/// launch and framework overhead of the harness (tens of microseconds in PyTorch).
enum class Timing { Kernel, Host };

/// "kernel" or "host".
[[nodiscard]] inline const char* to_string(Timing t) {
    return t == Timing::Host ? "host" : "kernel";
}

/// A measured time and everything needed to predict it. Shape fields that do not apply are 0.
struct Measurement {
    OpClass op_class = OpClass::Gemm;
    std::string op; ///< the operator's name in the source, e.g. "mlp_up_proj", "layernorm"
    // GEMM: [m, k] x [k, n], with m the token rows and k × n the weight matrix.
    // Grouped GEMM (the routed experts, model/kernel_time.hpp routed_experts_kernel_time): m
    // tokens entering the layer, each routed to `top_k` of the `experts` held on the GPU, k the
    // hidden size and n the expert's intermediate (ffn) width; `matrices` per expert.
    double m = 0, n = 0, k = 0;
    int experts = 0, top_k = 0;
    int matrices = 3; ///< grouped GEMM: 3 gate/up/down (gated), 2 up/down, 1 one grouped GEMM
    // Attention: `batch` sequences, each with `tokens` new query tokens (1 for decode) over
    // `context` tokens already in the KV cache; heads per GPU.
    int batch = 0;
    double tokens = 0;
    double context = 0;
    int heads = 0, kv_heads = 0, head_dim = 0;
    /// Memory-bound: bytes read plus written by the kernel. Communication: the message size.
    double bytes = 0;
    std::string dtype = "bf16"; ///< compute/storage type: "bf16", "fp16", "fp8", "int8", ...
    std::string gpu;            ///< hwdb accelerator name, e.g. "a100-sxm-80gb"
    /// Compute: the tensor-parallel degree the shard was cut for (informational).
    /// Communication: the number of GPUs in the group.
    int tp = 1;
    int nodes = 1;    ///< communication: nodes the group spans
    std::string link; ///< communication: hwdb interconnect name of the bottleneck link ("" unknown)
    Timing timing = Timing::Kernel;
    double time_s = 0;       ///< measured time of one call, seconds
    std::string source;      ///< data-set tag: "vidur", "blis", "llmcompass", "torch", ...
    std::string source_file; ///< the file it was read from
    int row = 0;             ///< 1-based line in that file
    friend bool operator==(const Measurement&, const Measurement&) = default;
};

} // namespace gpuplan::model
