#pragma once
/// The input of the training planner (model/training.hpp): a job's layout, method, optimizer and
/// the named overridable defaults, as the scenario's `training:` block gives them. Kept apart
/// from the formulas so that model/scenario.hpp carries only inputs.

#include "model/enum_names.hpp"
#include "model/failures.hpp"
#include "model/precision.hpp"
#include "model/units.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::model {

/// What is recomputed in the backward pass instead of stored (Korthikanti et al. 2022 §5).
enum class Recompute : std::uint8_t {
    None,      ///< every activation is stored
    Selective, ///< the attention core (QKᵀ, softmax, dropout, ×V) is recomputed
    Full,      ///< only each layer's input is stored; the whole forward runs again
};

/// The scenario spelling of each value, then accepted aliases (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<Recompute>, 4> enum_names(Recompute) noexcept {
    return {
        EnumName<Recompute>{"none", Recompute::None},
        EnumName<Recompute>{"selective", Recompute::Selective},
        EnumName<Recompute>{"full", Recompute::Full},
        EnumName<Recompute>{"off", Recompute::None},
    };
}

/// The optimizer whose state sizes the K term of the ZeRO accounting.
enum class TrainOptimizer : std::uint8_t {
    Adam,        ///< fp32 first and second moments (8 B per parameter)
    Adam8bit,    ///< block-wise 8-bit moments (Dettmers et al. 2022: 2 B per parameter)
    SgdMomentum, ///< one fp32 momentum buffer (4 B per parameter)
};

/// The scenario spelling of each value, then accepted aliases (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<TrainOptimizer>, 7>
enum_names(TrainOptimizer) noexcept {
    return {
        EnumName<TrainOptimizer>{"adam", TrainOptimizer::Adam},
        EnumName<TrainOptimizer>{"adam-8bit", TrainOptimizer::Adam8bit},
        EnumName<TrainOptimizer>{"sgd-momentum", TrainOptimizer::SgdMomentum},
        EnumName<TrainOptimizer>{"adamw", TrainOptimizer::Adam},
        EnumName<TrainOptimizer>{"adamw-8bit", TrainOptimizer::Adam8bit},
        EnumName<TrainOptimizer>{"adam8bit", TrainOptimizer::Adam8bit},
        EnumName<TrainOptimizer>{"sgd", TrainOptimizer::SgdMomentum},
    };
}

/// Which parameters are trained.
enum class FinetuneMethod : std::uint8_t {
    Full,  ///< every parameter
    Lora,  ///< low-rank adapters on a frozen 16-bit base (Hu et al. 2021)
    Qlora, ///< low-rank adapters on a frozen 4-bit NF4 base (Dettmers et al. 2023)
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<FinetuneMethod>, 3>
enum_names(FinetuneMethod) noexcept {
    return {
        EnumName<FinetuneMethod>{"full", FinetuneMethod::Full},
        EnumName<FinetuneMethod>{"lora", FinetuneMethod::Lora},
        EnumName<FinetuneMethod>{"qlora", FinetuneMethod::Qlora},
    };
}

/// What the layout search ranks by.
enum class RankBy : std::uint8_t { Time, Cost };

/// "none", "selective", "full".
[[nodiscard]] const char* to_string(Recompute r);
/// "adam", "adam-8bit", "sgd-momentum".
[[nodiscard]] const char* to_string(TrainOptimizer o);
/// "full", "lora", "qlora".
[[nodiscard]] const char* to_string(FinetuneMethod f);
/// "time", "cost".
[[nodiscard]] const char* to_string(RankBy r);
/// Parses to_string's names (also "adamw", "adamw-8bit", "sgd"); nullopt when unknown.
[[nodiscard]] std::optional<Recompute> find_recompute(std::string_view name);
[[nodiscard]] std::optional<TrainOptimizer> find_optimizer(std::string_view name);
[[nodiscard]] std::optional<FinetuneMethod> find_finetune_method(std::string_view name);

/// How one training job is laid out over its GPUs. GPUs = tp × pp × dp × cp; expert parallelism
/// is carved out of the data-parallel ranks (ep divides dp), as in Megatron-Core. Rank order is
/// tp fastest, then cp, then dp, then pp (Megatron-Core's "tp-cp-ep-dp-pp").
struct TrainingLayout {
    int tp = 1; ///< tensor parallel
    int pp = 1; ///< pipeline stages (1F1B schedule)
    int dp = 1; ///< data-parallel replicas
    int cp = 1; ///< context parallel (ring attention over the sequence)
    int ep = 1; ///< expert parallel (MoE only)
    /// ZeRO stage 0–3 over the dp × cp ranks: 1 shards optimizer states (Megatron's distributed
    /// optimizer), 2 also gradients (FSDP SHARD_GRAD_OP), 3 also weights (FSDP FULL_SHARD).
    int zero = 0;
    int micro_batch = 1; ///< sequences per micro-batch
    /// Model chunks per pipeline stage (Megatron's interleaved 1F1B, Narayanan et al. 2021
    /// §2.2.2): the bubble shrinks by this factor, pipeline sends grow by it. 1: plain 1F1B.
    int virtual_stages = 1;
    Recompute recompute = Recompute::Selective;
    bool sequence_parallel = true; ///< Megatron sequence parallelism (only with tp > 1)
    friend bool operator==(const TrainingLayout&, const TrainingLayout&) = default;
};

/// Low-rank adapters (LoRA / QLoRA).
struct LoraConfig {
    int rank = 16;
    /// Adapted linear layers, PEFT names: q_proj k_proj v_proj o_proj gate_proj up_proj
    /// down_proj, or "all-linear".
    std::vector<std::string> target_modules{"q_proj", "k_proj", "v_proj", "o_proj"};
    /// Bits per frozen base weight under QLoRA: 4-bit NF4 with double quantization is 4.127
    /// (Dettmers et al. 2023 §3: 0.127 bits of constants per parameter).
    double qlora_base_bits = 4.127;
    friend bool operator==(const LoraConfig&, const LoraConfig&) = default;
};

/// Share of the data-parallel gradient reduction that may hide behind backward compute when
/// not given: 1. PyTorch DDP and Megatron-LM's --overlap-grad-reduce put gradients in buckets
/// and launch each bucket's reduction as soon as its backward finishes (Li et al. 2020, PyTorch
/// Distributed, VLDB, §3.2.3-§3.2.4); FSDP reduce-scatters each unit's gradients as its backward
/// ends (Zhao et al. 2023, PyTorch FSDP, VLDB, §3.3). What cannot hide is the last bucket, which
/// is ready only when the backward ends, and whatever exceeds the backward compute:
///   exposed = comm − min(overlap × (comm − last bucket), backward compute).
/// 0: no overlap (Megatron-LM 2021), the reduction runs after the backward.
inline constexpr double kDefaultGradReduceOverlap = 1.0;
/// Gradient bucket size when not given: PyTorch DDP's bucket_cap_mb = 25 (MiB;
/// torch.nn.parallel.DistributedDataParallel, Li et al. 2020 §3.2.3).
inline constexpr double kDefaultGradBucketBytes = 25.0 * 1024 * 1024;
/// Fraction of activations and temporary buffers lost to caching-allocator fragmentation when
/// not given: ZeRO-R (Rajbhandari et al. 2020 §3.2, §6.3) reports out-of-memory with over 30 %
/// of memory free in extreme cases; 10 % is a stated guess for the usual case [U].
inline constexpr double kDefaultFragmentation = 0.10;

/// A training or fine-tuning job: what to train on, how, and the named overridable defaults.
struct TrainingConfig {
    double tokens = 0;    ///< tokens to train on (e.g. 300e9)
    int global_batch = 0; ///< sequences per optimizer step
    int seq_len = 0;      ///< tokens per sequence
    TrainingLayout layout;
    ComputeType compute = ComputeType::Bf16; ///< GEMM path: bf16 (or fp16) or fp8
    bool master_weights_fp32 = true;         ///< fp32 master copy in the optimizer state
    TrainOptimizer optimizer = TrainOptimizer::Adam;
    FinetuneMethod method = FinetuneMethod::Full;
    LoraConfig lora;
    /// FlashAttention: the s² attention matrix is never stored, and its backward recomputes it
    /// (so selective recomputation adds nothing). false: Megatron-LM's unfused attention as in
    /// Korthikanti et al. 2022.
    bool flash_attention = true;
    /// Dropout after attention and MLP (GPT-3, Megatron defaults) adds its 1-byte masks to the
    /// activations; Llama-style pre-training uses none.
    bool dropout = false;
    /// Share of the data-parallel reduction that may hide behind backward compute, [0, 1]
    /// (the last bucket never hides). nullopt: kDefaultGradReduceOverlap (1).
    std::optional<double> grad_reduce_overlap;
    /// Gradient bucket of the overlapped reduction. nullopt: kDefaultGradBucketBytes (25 MiB).
    std::optional<Bytes> grad_bucket;
    /// ZeRO-3 / FSDP: gather the next unit's (layer's) weights while this one computes, in the
    /// forward (FSDP forward_prefetch, and the CPU running ahead of the GPU) and the backward
    /// (FSDP's default backward_prefetch = BACKWARD_PRE; DeepSpeed stage3_prefetch_bucket_size).
    /// Only the first unit's gather of each pass, and whatever exceeds the pass's compute, is
    /// exposed. false: every gather waits (the model before prefetch).
    bool fsdp_prefetch = true;
    /// MoE with expert parallelism: the busiest rank's routed token copies ÷ the mean, >= 1.
    /// nullopt: the expected maximum under uniform top-k routing (model/moe.hpp).
    std::optional<double> moe_load_imbalance;
    /// MoE: share of the expert all-to-all hidden behind compute, [0, 1] (DeepSeek-V3's DualPipe,
    /// Megatron-Core --overlap-moe-expert-parallel-comm). nullopt: kDefaultEpOverlap (0).
    std::optional<double> ep_overlap;
    /// Tokens per second one node's input pipeline (data loader) delivers. nullopt: never stalls.
    std::optional<double> data_loader_tokens_per_s;
    /// Allocator fragmentation, a fraction of activations and buffers. nullopt: 0.10.
    std::optional<double> fragmentation;
    /// CUDA context, NCCL and cuBLAS workspaces per GPU. nullopt: 0.9 GiB on one GPU, 2.7 GiB
    /// with communicators (training.cpp, after memory.cpp's inference defaults).
    std::optional<Bytes> runtime_overhead;
    /// Average power per GPU over the run, when measured. nullopt: the power model
    /// (model/power.hpp) at the step's achieved FLOP and byte rates (TrainingEstimate::
    /// power_basis says which was used).
    std::optional<Watts> average_gpu_power;
    /// Failures, checkpoints and spares (the `failures:` block, model/failures.hpp). nullopt: a
    /// failure-free run, and no failure figures are reported.
    std::optional<FailureConfig> failures;
    friend bool operator==(const TrainingConfig&, const TrainingConfig&) = default;
};

} // namespace gpuplan::model
