#pragma once
/// Inference memory per GPU: weights, KV cache, activations and runtime overheads, and the
/// serving engine's own start-up arithmetic (for vLLM: KV budget → blocks → "GPU KV cache size"
/// and "Maximum concurrency" as it logs them; docs/engines.md §1).

#include "model/deployment.hpp"
#include "model/units.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// What caps the number of sequences running at full length.
enum class ConcurrencyLimit {
    KvCache,    ///< the KV pool holds fewer max_model_len sequences than max_num_seqs
    MaxNumSeqs, ///< max_num_seqs is reached first: part of the KV pool stays idle
};

[[nodiscard]] const char* to_string(ConcurrencyLimit limit);

/// Memory of one GPU of the deployment. With pipeline parallelism every number is for the
/// stage with the fewest KV blocks (the engine takes the minimum over workers); `binding_stage`
/// says which.
struct MemoryEstimate {
    Bytes capacity;           ///< total device memory as CUDA reports it
    Bytes requested;          ///< what the engine may use: capacity × utilization (vLLM, SGLang)
    Bytes weights;            ///< this GPU's weight shard, quantization scales included
    Bytes activations;        ///< peak activation workspace at the largest step
    Bytes non_torch;          ///< NCCL / custom all-reduce buffers, cuBLAS workspaces
    Bytes cuda_graphs;        ///< CUDA-graph memory pool
    Bytes cuda_context;       ///< CUDA context, outside the engine's budget
    Bytes overhead;           ///< non_torch + cuda_graphs + cuda_context
    Bytes kv_per_token;       ///< KV bytes per token on this GPU (its layers and heads)
    Bytes kv_per_token_model; ///< KV bytes per token of the whole model, unsharded
    Bytes draft_weights;      ///< speculative proposer's weights on this GPU (0 when off)
    Bytes draft_kv_per_token; ///< the proposer's KV bytes per token on this GPU (0 when off)
    Bytes lora_slots;         ///< engine.lora: max_loras adapter slots on this GPU (0 when off)
    Bytes kv_per_sequence;    ///< this GPU's KV for one sequence at max_model_len (windows capped)
                              ///< plus its recurrent state
    Bytes state_per_sequence; ///< recurrent layers' state for one sequence on this GPU (0: none)
    /// vLLM with recurrent layers: the KV-cache groups of attention layers and of recurrent
    /// layers sharing the block pool (a request holds cdiv(context, block_size) blocks per
    /// attention group and one per state group; docs/engines.md §9.1); 0 otherwise.
    double attention_groups = 0;
    double state_groups = 0;
    Bytes kv_budget;            ///< KV pool; negative when the rest does not fit
    std::int64_t kv_blocks = 0; ///< blocks of block_size tokens (vLLM's num_gpu_blocks)
    std::int64_t kv_tokens = 0; ///< "GPU KV cache size: X tokens"
    /// "Maximum concurrency for max_model_len tokens per request: X x".
    double max_concurrency = 0.0;
    /// min(max_num_seqs, max_concurrency): full-length sequences that can run at once.
    double effective_concurrency = 0.0;
    ConcurrencyLimit concurrency_limit = ConcurrencyLimit::KvCache;
    Bytes total_used;  ///< everything the process allocates on this GPU
    Bytes free;        ///< capacity − total_used; negative: out of memory
    bool fits = false; ///< the engine starts and holds at least one max_model_len sequence
    std::vector<std::string> reasons; ///< why it does not fit, or what is tight
    int binding_stage = 0;
    EngineSettings engine; ///< the resolved engine settings used
    friend bool operator==(const MemoryEstimate&, const MemoryEstimate&) = default;
};

/// Estimates the memory of one GPU (the binding pipeline stage) and the engine's KV arithmetic.
/// vLLM: budget = utilization × capacity − weights − peak activations − non-torch − CUDA graphs;
/// num_blocks = ⌊budget / page⌋ / layers; max concurrency = num_blocks / ⌈max_model_len /
/// block_size⌉ (docs/engines.md §1.1-1.4; hybrid sliding-window grouping included).
/// TensorRT-LLM, SGLang and llama.cpp use their own rules (§3.2, §4.1, §5).
/// Throws InvalidArgument when the deployment does not validate. Cost: O(layers).
[[nodiscard]] MemoryEstimate estimate_memory(const Deployment& d);

/// Weight bytes of the whole model (all shards: the checkpoint size at these precisions).
[[nodiscard]] Bytes model_weight_bytes(const ModelSpec& m, const Precisions& p);

/// The default non-torch memory per GPU for this engine and parallelism (see memory.cpp).
[[nodiscard]] Bytes default_non_torch_memory(const Deployment& d);

/// The default CUDA-graph pool per GPU: 10 MiB per captured size.
[[nodiscard]] Bytes default_cuda_graph_memory(const Deployment& d);

/// The estimated peak activation memory per GPU of the engine's profiling step
/// (max_num_batched_tokens tokens), before activation_workspace_factor.
[[nodiscard]] Bytes default_activation_memory(const Deployment& d);

/// The longest max_model_len (at most the model's max_context) at which `n` sequences of that
/// length fit the KV cache at once; nullopt when not even one token per sequence fits.
/// Re-estimates memory per probe (binary search, about 17 estimates).
[[nodiscard]] std::optional<int> max_context_at_concurrency(const Deployment& d, int n);

/// max_concurrency with max_model_len set to `context`.
[[nodiscard]] double max_concurrency_at_context(const Deployment& d, int context);

/// A parallel layout found by fewest_gpus, with its memory estimate.
struct GpuPlan {
    Parallelism par;
    int gpus = 0;
    MemoryEstimate memory;
    friend bool operator==(const GpuPlan&, const GpuPlan&) = default;
};

/// The fewest GPUs (one replica: tp × pp) on which the deployment fits and holds at least
/// `min_concurrency` sequences of max_model_len. TP is a power of two up to the node size and
/// at most 8; PP fills the rest. At equal GPU count larger TP is preferred (lower latency, no
/// pipeline bubble). nullopt when nothing up to `max_gpus` fits.
[[nodiscard]] std::optional<GpuPlan> fewest_gpus(const Deployment& d, int min_concurrency = 1,
                                                 int max_gpus = 64);

/// Advice that can help when the deployment does not fit because its weights (with the
/// engine's fixed memory) overrun the budget: the fewest GPUs per replica (fewest_gpus), not
/// "lower gpu_memory_utilization". nullopt when it fits or the KV cache is what runs short.
[[nodiscard]] std::optional<std::string>
capacity_advice(const Deployment& d, const MemoryEstimate& m, int max_gpus = 64);

/// Host memory advice for one node of the deployment.
struct HostRamAdvice {
    int gpus_per_node = 0; ///< GPUs of the deployment on one node
    Bytes gpu_memory;      ///< their memory together
    Bytes rule_of_thumb;   ///< 2 × gpu_memory (docs/domain.md §3: system RAM ≥ 2 × GPU memory)
    Bytes weight_file;     ///< checkpoint size; loading maps it through the page cache
    Bytes recommended;     ///< max(rule_of_thumb, weight_file)
    std::string reason;    ///< which term sets the recommendation
    friend bool operator==(const HostRamAdvice&, const HostRamAdvice&) = default;
};

/// Host RAM advice: at least twice the node's GPU memory, and at least the weight file.
[[nodiscard]] HostRamAdvice host_ram_advice(const Deployment& d);

} // namespace gpuplan::model
