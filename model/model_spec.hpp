#pragma once
/// Architecture of a transformer LLM: everything needed to count parameters, size weights and
/// KV cache, and cost each operator. Field names match the catalog YAML (hwdb/models/*.yaml).

#include "model/enum_names.hpp"
#include "model/precision.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

enum class AttentionKind { Mha, Gqa, Mqa, Mla };

/// The model-file spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<AttentionKind>, 4> enum_names(AttentionKind) noexcept {
    return {
        EnumName<AttentionKind>{"mha", AttentionKind::Mha},
        EnumName<AttentionKind>{"gqa", AttentionKind::Gqa},
        EnumName<AttentionKind>{"mqa", AttentionKind::Mqa},
        EnumName<AttentionKind>{"mla", AttentionKind::Mla},
    };
}

enum class NormKind { RmsNorm, LayerNorm };

/// The model-file spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<NormKind>, 2> enum_names(NormKind) noexcept {
    return {
        EnumName<NormKind>{"rmsnorm", NormKind::RmsNorm},
        EnumName<NormKind>{"layernorm", NormKind::LayerNorm},
    };
}

/// Gated MLPs (SwiGLU, GeGLU) have three matrices; plain ones (GELU) two.
enum class MlpKind { Gated, Plain };

/// The model-file spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<MlpKind>, 2> enum_names(MlpKind) noexcept {
    return {
        EnumName<MlpKind>{"gated", MlpKind::Gated},
        EnumName<MlpKind>{"plain", MlpKind::Plain},
    };
}

enum class PositionKind { Rope, Learned };

/// The model-file spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<PositionKind>, 2> enum_names(PositionKind) noexcept {
    return {
        EnumName<PositionKind>{"rope", PositionKind::Rope},
        EnumName<PositionKind>{"learned", PositionKind::Learned},
    };
}

/// Multi-head latent attention ranks (DeepSeek-V2/V3).
struct MlaSpec {
    int q_lora_rank = 0; ///< 0: queries are not compressed
    int kv_lora_rank = 0;
    int qk_nope_head_dim = 0;
    int qk_rope_head_dim = 0;
    int v_head_dim = 0;
    friend bool operator==(const MlaSpec&, const MlaSpec&) = default;
};

/// Mixture of experts. Layers before `first_dense_layers` (and those not on the
/// `moe_layer_interval`) use the dense MLP of size `ffn_size`.
struct MoeSpec {
    int experts = 0;            ///< routed experts per MoE layer
    int active_experts = 0;     ///< routed experts per token (top-k)
    int shared_experts = 0;     ///< always-on experts per MoE layer
    int expert_ffn_size = 0;    ///< intermediate size of one expert
    int first_dense_layers = 0; ///< leading layers with a dense MLP
    friend bool operator==(const MoeSpec&, const MoeSpec&) = default;
};

/// Sliding-window attention on some layers (Gemma-2: every other layer; Mistral-7B v0.1: all).
/// A windowed layer caches at most `window` tokens of KV per sequence.
struct SlidingWindowSpec {
    int window = 0;          ///< tokens a windowed layer attends to
    int windowed_layers = 0; ///< how many of the layers use the window
    friend bool operator==(const SlidingWindowSpec&, const SlidingWindowSpec&) = default;
};

/// A published checkpoint of a catalog model: its Hugging Face id and weight format.
struct Checkpoint {
    std::string format; ///< model::checkpoint_format of its weights
    std::string hf_id;  ///< the Hub repository, e.g. "Qwen/Qwen2.5-72B-Instruct-AWQ"
    friend bool operator==(const Checkpoint&, const Checkpoint&) = default;
};

/// A model architecture. Sizes are element counts.
struct ModelSpec {
    std::string name; ///< canonical lowercase name, e.g. "llama-3.1-70b"
    std::vector<std::string> aliases;
    std::string family; ///< e.g. "llama", "qwen2", "deepseek-v3"
    std::string hf_id;  ///< Hugging Face repository id, when there is one
    int layers = 0;
    int hidden_size = 0;
    int heads = 0;
    int kv_heads = 0;
    int head_dim = 0; ///< usually hidden_size / heads
    int ffn_size = 0; ///< dense MLP intermediate size
    MlpKind mlp = MlpKind::Gated;
    int vocab_size = 0;
    bool tied_embeddings = false;
    int max_context = 0;
    AttentionKind attention = AttentionKind::Gqa;
    NormKind norm = NormKind::RmsNorm;
    PositionKind position = PositionKind::Rope;
    bool qkv_bias = false;    ///< Qwen2 adds biases to Q, K, V
    bool linear_bias = false; ///< GPT-3 style: biases on every linear layer
    bool qk_norm = false;     ///< Qwen3: RMSNorm on Q and K per head
    int norms_per_layer = 2;  ///< Gemma-2 has 4 (pre and post, attention and MLP)
    std::optional<MlaSpec> mla;
    std::optional<MoeSpec> moe;
    std::optional<SlidingWindowSpec> sliding_window;
    double published_params = 0;        ///< total parameters as published
    double published_active_params = 0; ///< active per token (MoE), 0 when dense
    std::string source;                 ///< where the architecture and counts come from
    /// Precision of the published checkpoint's linear-layer weights (an AWQ, GPTQ, FP8 or NVFP4
    /// checkpoint); nullopt: a 16-bit checkpoint. A scenario whose `precision.weights` is unset
    /// plans with this (model::checkpoint_weights).
    std::optional<Precision> weights;
    /// Published checkpoints of this architecture by format (model::checkpoint_format: "bf16",
    /// "fp8", "awq", "gptq-int4", "nvfp4", "gguf", ...): the Hub id `--emit` launches for a
    /// deployment of that weight format. Empty: only `hf_id`.
    std::vector<Checkpoint> checkpoints;
    friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

/// Parameter counts computed from the architecture.
struct ParamCount {
    double total = 0;               ///< every parameter, embeddings and LM head included
    double active = 0;              ///< used for one token (routed experts: only the top-k)
    double embedding = 0;           ///< input embedding (and positional table)
    double lm_head = 0;             ///< output projection (0 when tied)
    double per_layer_attention = 0; ///< one layer's attention parameters
    friend bool operator==(const ParamCount&, const ParamCount&) = default;
};

/// Counts parameters from the architecture alone (no published figures used).
[[nodiscard]] ParamCount count_params(const ModelSpec& m);

/// Whether layer `i` (0-based) has an MoE MLP.
[[nodiscard]] bool is_moe_layer(const ModelSpec& m, int i);

/// Number of MoE layers.
[[nodiscard]] int moe_layer_count(const ModelSpec& m);

/// Throws InvalidArgument when the architecture is inconsistent (zero sizes, kv_heads not
/// dividing heads, top-k above the expert count, ...); `where` prefixes the message.
void validate(const ModelSpec& m, const std::string& where);

[[nodiscard]] const char* to_string(AttentionKind kind);

/// The weight precision a scenario uses when it sets none: the checkpoint's (ModelSpec::weights),
/// else bf16.
[[nodiscard]] Precision checkpoint_weights(const ModelSpec& m);

} // namespace gpuplan::model
