#pragma once
/// The inputs of the analytic model: a model on some GPUs, split by tensor, pipeline, data and
/// expert parallelism, at given precisions, served by an engine with its knobs. Engine knobs use
/// vLLM's names; defaults that differ per engine are `std::optional` and resolved by
/// `resolve_engine` (the values and their sources are in deployment.cpp, summarized
/// with their engine source files in docs/engines.md §1.5, §3.1, §4.1 and §5).

#include "model/enum_names.hpp"
#include "model/hardware_spec.hpp"
#include "model/kv_offload_config.hpp"
#include "model/lora_config.hpp"
#include "model/model_spec.hpp"
#include "model/precision.hpp"
#include "model/speculative_config.hpp"
#include "model/units.hpp"

#include <array>
#include <optional>
#include <string>

namespace gpuplan::model {

/// The most GPUs one deployment may use (2^24, about 16.8 million; the scenario file's
/// hardware.count allows as many). validate() refuses larger products of tp × pp × dp, so GPU
/// counts, and what-ifs that double them, stay within an int.
inline constexpr long long kMaxGpus = 1LL << 24;

/// How one model replica is split over GPUs. A replica uses tp × pp GPUs; dp replicas run side
/// by side. Expert parallelism shards the routed experts of MoE layers over `ep` GPUs (vLLM
/// --enable-expert-parallel: ep = tp × dp), in which case experts are not tensor-sharded.
struct Parallelism {
    int tp = 1; ///< tensor parallel size (GPUs sharing every layer)
    int pp = 1; ///< pipeline parallel size (stages of consecutive layers)
    int dp = 1; ///< data parallel replicas
    int ep = 1; ///< expert parallel size (1: experts are tensor-sharded like the MLP)
    friend bool operator==(const Parallelism&, const Parallelism&) = default;
};

/// The 16-bit brain-float precision, the default for every tensor (find_precision("bf16")).
[[nodiscard]] Precision bf16_precision();

/// Storage and compute formats of the deployment's tensors.
struct Precisions {
    Precision weights = bf16_precision(); ///< linear-layer weights (quantization scales included)
    Precision activations = bf16_precision(); ///< activations between kernels
    Precision kv_cache =
        bf16_precision(); ///< KV cache (vLLM --kv-cache-dtype; "auto" = model dtype)
    /// Embedding table and LM head. nullopt: 16 bit (quantizers such as GPTQ/AWQ and vLLM's FP8
    /// keep them unquantized), or the weight precision when that is wider than 16 bit.
    std::optional<Precision> embeddings;
    friend bool operator==(const Precisions&, const Precisions&) = default;
};

/// The effective embedding / LM-head precision (see Precisions::embeddings).
[[nodiscard]] Precision embedding_precision(const Precisions& p);

/// The tensor-core path the linear layers run on: the weight format's own path, except for
/// weight-only formats (GPTQ, AWQ, GGUF), which are dequantized and run on the activation path.
[[nodiscard]] ComputeType gemm_compute_type(const Precisions& p);

/// Serving engines whose start-up memory arithmetic the model reproduces.
enum class EngineKind { Vllm, TensorRtLlm, Sglang, LlamaCpp };

/// The spellings (model/enum_names.hpp): the canonical name first, then accepted aliases.
[[nodiscard]] constexpr std::array<EnumName<EngineKind>, 9> enum_names(EngineKind) noexcept {
    return {
        EnumName<EngineKind>{"vllm", EngineKind::Vllm},
        EnumName<EngineKind>{"tensorrt-llm", EngineKind::TensorRtLlm},
        EnumName<EngineKind>{"sglang", EngineKind::Sglang},
        EnumName<EngineKind>{"llama.cpp", EngineKind::LlamaCpp},
        EnumName<EngineKind>{"trtllm", EngineKind::TensorRtLlm},
        EnumName<EngineKind>{"trt-llm", EngineKind::TensorRtLlm},
        EnumName<EngineKind>{"tensorrt_llm", EngineKind::TensorRtLlm},
        EnumName<EngineKind>{"llamacpp", EngineKind::LlamaCpp},
        EnumName<EngineKind>{"llama-cpp", EngineKind::LlamaCpp},
    };
}

/// "vllm", "tensorrt-llm", "sglang", "llama.cpp".
[[nodiscard]] const char* to_string(EngineKind kind);

/// Parses the names of enum_names(EngineKind), any case; nullopt when unknown.
[[nodiscard]] std::optional<EngineKind> find_engine(std::string_view name);

/// Collective algorithm for the tensor-parallel all-reduce.
enum class AllReduceAlgorithm {
    Auto, ///< the faster of ring and tree for each message (NCCL's tuner picks per size)
    Ring,
    Tree,
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<AllReduceAlgorithm>, 3>
enum_names(AllReduceAlgorithm) noexcept {
    return {
        EnumName<AllReduceAlgorithm>{"auto", AllReduceAlgorithm::Auto},
        EnumName<AllReduceAlgorithm>{"ring", AllReduceAlgorithm::Ring},
        EnumName<AllReduceAlgorithm>{"tree", AllReduceAlgorithm::Tree},
    };
}

/// Engine settings, with vLLM's names. nullopt means "the engine's default", resolved by
/// resolve_engine; every default is documented there with its source.
struct EngineConfig {
    EngineKind kind = EngineKind::Vllm;
    /// Longest sequence (prompt + output) the engine accepts. nullopt: the model's max_context
    /// (vLLM, TensorRT-LLM, SGLang); 4096 per slot for llama.cpp (its default n_ctx).
    std::optional<int> max_model_len;
    /// Allows max_model_len above the model's max_context (vLLM's
    /// VLLM_ALLOW_LONG_MAX_MODEL_LEN=1): for a model run with rope scaling beyond its trained
    /// context. Off: model::check_context_length refuses a longer max_model_len.
    bool allow_long_context = false;
    /// vLLM gpu_memory_utilization (fraction of total memory for this instance, default 0.9);
    /// TensorRT-LLM free_gpu_memory_fraction (of memory left after weights and activations,
    /// default 0.9); SGLang mem_fraction_static (weights + KV pool as a fraction of total,
    /// default from its memory heuristic). Ignored for llama.cpp.
    std::optional<double> gpu_memory_utilization;
    /// Sequences per step. vLLM: 1024 on GPUs with >= 70 GiB (not A100), else 256, and at most
    /// max_num_batched_tokens; TensorRT-LLM max_batch_size 2048; SGLang 2048 [U]; llama.cpp
    /// n_parallel 1.
    std::optional<int> max_num_seqs;
    /// Token budget per step. vLLM (OpenAI server): 8192 on GPUs with >= 70 GiB (not A100),
    /// else 2048; max_model_len when chunked prefill is off. TensorRT-LLM max_num_tokens 8192;
    /// SGLang chunked_prefill_size by GPU memory; llama.cpp n_ubatch 512.
    std::optional<int> max_num_batched_tokens;
    /// Tokens per KV block: vLLM 16, TensorRT-LLM 32, SGLang 1 (token pages), llama.cpp 256
    /// (KV size padding).
    std::optional<int> block_size;
    /// vLLM V1: on; TensorRT-LLM enable_block_reuse: on; SGLang radix cache: on; llama.cpp: off.
    std::optional<bool> enable_prefix_caching;
    /// vLLM V1: on; TensorRT-LLM: off; SGLang: on; llama.cpp: prompts are split in n_batch pieces.
    std::optional<bool> enable_chunked_prefill;
    /// Whether steps small enough run as captured CUDA graphs (vLLM: unless --enforce-eager).
    bool cuda_graphs = true;
    AllReduceAlgorithm all_reduce = AllReduceAlgorithm::Auto;
    /// Total memory as the CUDA driver reports it (cudaMemGetInfo). nullopt: the accelerator's
    /// memory × 0.99 (an 80 GiB H100 reports 79.22 GiB, docs/engines.md §1.6).
    std::optional<Bytes> usable_memory;
    /// Non-torch memory per GPU (NCCL and custom all-reduce buffers, cuBLAS workspaces).
    /// nullopt: the per-engine default of default_non_torch_memory().
    std::optional<Bytes> non_torch_memory;
    /// CUDA-graph pool per GPU. nullopt: 10 MiB per captured batch size
    /// (default_cuda_graph_memory()).
    std::optional<Bytes> cuda_graph_memory;
    /// CUDA context and framework start-up per GPU, outside the engine's budget. nullopt: 0.5 GiB.
    std::optional<Bytes> cuda_context_memory;
    /// Peak activation memory per GPU. nullopt: estimated from the step shape
    /// (default_activation_memory()).
    std::optional<Bytes> activation_memory;
    /// Multiplies the estimated activation peak (a calibration knob; 1 = the estimate as is).
    double activation_workspace_factor = 1.0;
    /// vLLM kv_cache_memory_bytes: a fixed KV pool per GPU that replaces the budget arithmetic.
    std::optional<Bytes> kv_cache_memory;
    /// Speculative decoding (`engine.speculative`, model/speculative.hpp); nullopt: off.
    std::optional<SpeculativeConfig> speculative;
    /// KV offload tiers behind the GPU's prefix cache (`engine.kv_offload`,
    /// model/kv_offload.hpp); nullopt: off.
    std::optional<KvOffloadConfig> kv_offload;
    /// Multi-LoRA serving (`engine.lora`, model/lora.hpp); nullopt: no adapters (vLLM without
    /// --enable-lora).
    std::optional<LoraServingConfig> lora;
    /// MoE with expert parallelism: the busiest rank's routed token copies ÷ the mean, >= 1 (a
    /// measured per-expert load, e.g. from an EPLB statistics dump). nullopt: the expected
    /// maximum under uniform top-k routing for the step's tokens (model/moe.hpp).
    std::optional<double> moe_load_imbalance;
    /// MoE: share of the expert-parallel all-to-all hidden behind the step's compute, [0, 1]
    /// (two-batch overlap: SGLang --enable-two-batch-overlap, vLLM --enable-dbo, DeepEP).
    /// nullopt: kDefaultEpOverlap (0, off as in the engines' defaults).
    std::optional<double> ep_overlap;
    friend bool operator==(const EngineConfig&, const EngineConfig&) = default;
};

/// GPU clocks relative to the datasheet, as a power cap leaves them (model/power.hpp). The
/// step-cost model multiplies the compute peaks by `compute` and the memory bandwidth by `memory`
/// (kernel times grow by 1/compute and 1/memory); launch, step and link costs are unchanged.
/// The MFU and MBU denominators stay the datasheet figures. {1, 1}: no derating, the default.
struct ClockFactors {
    double compute = 1.0; ///< core (SM) clock ÷ the clock the datasheet peaks assume, in (0, 1]
    double memory = 1.0;  ///< achieved memory bandwidth ÷ the un-derated one, in (0, 1]
    friend bool operator==(const ClockFactors&, const ClockFactors&) = default;
};

/// A model served on GPUs: everything the analytic model needs.
struct Deployment {
    ModelSpec model;
    AcceleratorSpec gpu;
    Parallelism par;
    Precisions prec;
    EngineConfig engine;
    InterconnectSpec intra_node_link; ///< between GPUs of one node (NVLink, PCIe)
    std::optional<InterconnectSpec>
        inter_node_link; ///< network between nodes, when there are several
    int gpus_per_node = 8;
    ClockFactors clocks; ///< derating under a power cap; default none
    /// All GPUs: tp × pp × dp (derived, never stored; see total_gpus).
    [[nodiscard]] int gpus() const;
    friend bool operator==(const Deployment&, const Deployment&) = default;
};

/// Engine settings with every default filled in (see EngineConfig for the defaults).
struct EngineSettings {
    EngineKind kind = EngineKind::Vllm;
    int max_model_len = 0;
    double memory_fraction = 0.9; ///< the engine's utilization knob, resolved
    int max_num_seqs = 0;
    int max_num_batched_tokens = 0;
    int block_size = 16;
    bool prefix_caching = true;
    bool chunked_prefill = true;
    bool cuda_graphs = true;
    int cuda_graph_max_tokens = 0; ///< steps with at most this many tokens replay a graph
    int cuda_graph_sizes = 0;      ///< number of captured batch sizes
    friend bool operator==(const EngineSettings&, const EngineSettings&) = default;
};

/// Resolves the engine defaults for this deployment (they depend on the GPU's memory, the model's
/// context and the engine). Pure and cheap.
[[nodiscard]] EngineSettings resolve_engine(const Deployment& d);

/// Throws InvalidArgument, naming the field and the fix, when the deployment is inconsistent:
/// non-positive sizes, more than kMaxGpus GPUs, heads not divisible by tp, pp above the layer
/// count, ep not dividing tp × dp, memory fraction outside (0, 1], and so on.
void validate(const Deployment& d);

/// All GPUs of the layout: tp × pp × dp, multiplied in 64 bits. Throws InvalidArgument when the
/// product is more than kMaxGpus in magnitude, so it never wraps an int; validate() refuses
/// sizes below 1.
[[nodiscard]] int total_gpus(const Parallelism& p);

/// GPUs of one replica: tp × pp.
[[nodiscard]] inline int replica_gpus(const Parallelism& p) {
    return p.tp * p.pp;
}

/// The replicas (dp) that `gpus` GPUs make, tp × pp GPUs each: gpus / (tp × pp). The one rule
/// behind the scenario's hardware.count, the CLI's --gpus and the app's GPU count. Throws
/// InvalidArgument "<what> is not a multiple of tp × pp = <tp × pp>; <fix>" when tp × pp does not
/// divide `gpus` (`what` names the count, e.g. "count 6"; `fix` says what to change).
[[nodiscard]] int replicas_of(long long gpus, const Parallelism& p, const std::string& what,
                              const std::string& fix);

} // namespace gpuplan::model
