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
    /// After the dense prefix, layer i is MoE when (i + 1) % layer_interval == 0 (Llama-4
    /// Maverick's interleave_moe_layer_step 2: every other layer); 1: every layer.
    int layer_interval = 1;
    friend bool operator==(const MoeSpec&, const MoeSpec&) = default;
};

/// Sliding-window attention on some layers (Gemma-2: every other layer; Mistral-7B v0.1: all).
/// A windowed layer caches at most `window` tokens of KV per sequence.
/// Chunked local attention (Llama 4: 8192-token chunks on 3 of 4 layers) is the same bound with
/// `chunked` set: a token attends only within its chunk, so a layer holds at most `window`
/// tokens of KV per sequence.
struct SlidingWindowSpec {
    int window = 0;          ///< tokens a windowed layer attends to (the chunk when chunked)
    int windowed_layers = 0; ///< how many of the layers use the window
    bool chunked = false;    ///< chunked local attention rather than a sliding window
    friend bool operator==(const SlidingWindowSpec&, const SlidingWindowSpec&) = default;
};

/// A token mixer that keeps a fixed-size state per sequence instead of a KV cache per token.
enum class StateKind { GatedDeltaNet, Mamba2 };

/// The model-file spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<StateKind>, 2> enum_names(StateKind) noexcept {
    return {
        EnumName<StateKind>{"gated_delta_net", StateKind::GatedDeltaNet},
        EnumName<StateKind>{"mamba2", StateKind::Mamba2},
    };
}

/// Recurrent (linear-attention or state-space) mixers on some layers, in place of attention:
/// Gated DeltaNet on 3 of 4 layers of Qwen3-Next and Qwen3.5 (Yang et al. 2024, arXiv
/// 2412.06464). Each such layer holds, per sequence, a convolution state of
/// (conv_kernel - 1) x conv channels and a recurrent state of heads x key_dim x value_dim
/// elements, whatever the sequence's length (model/kv_cache.hpp).
struct StateSpec {
    StateKind kind = StateKind::GatedDeltaNet;
    int state_layers = 0;    ///< layers whose mixer is recurrent; the others attend
    int heads = 0;           ///< value heads (GDN) or SSM heads (Mamba-2)
    int groups = 0;          ///< key heads (GDN) or B/C groups (Mamba-2)
    int key_dim = 0;         ///< key head size (GDN) or state size d_state (Mamba-2)
    int value_dim = 0;       ///< value head size (GDN) or SSM head size (Mamba-2)
    int conv_kernel = 4;     ///< width of the causal depthwise convolution
    bool fp32_state = false; ///< the recurrent state is kept in fp32 (else 16 bit)
    friend bool operator==(const StateSpec&, const StateSpec&) = default;
};

/// DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2; GLM-5), as in the Indexer of
/// deepseek-ai/DeepSeek-V3.2-Exp's inference/model.py:
/// on every attention layer `heads` small FP8 heads score each cached token with their own key
/// cache of `head_dim` per token, and the layer attends to the `top_k` best tokens only.
struct IndexerSpec {
    int heads = 0;
    int head_dim = 0;
    int top_k = 0;
    friend bool operator==(const IndexerSpec&, const IndexerSpec&) = default;
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
    std::optional<StateSpec> state;     ///< recurrent mixers on some layers (hybrid models)
    std::optional<IndexerSpec> indexer; ///< sparse attention with an indexer (DSA)
    bool attention_sinks = false;       ///< gpt-oss: one learned sink logit per head and layer
    /// Qwen3-Next/Qwen3.5 gated attention: q_proj also outputs a sigmoid gate per query element
    /// (attn_output_gate), doubling its width.
    bool output_gate = false;
    double published_params = 0;        ///< total parameters as published
    double published_active_params = 0; ///< active per token (MoE), 0 when dense
    std::string source;                 ///< where the architecture and counts come from
    /// Precision of the published checkpoint's linear-layer weights (an AWQ, GPTQ, FP8 or NVFP4
    /// checkpoint); nullopt: a 16-bit checkpoint. A scenario whose `precision.weights` is unset
    /// plans with this (model::checkpoint_weights).
    std::optional<Precision> weights;
    /// KV-cache precision the checkpoint was calibrated for (ModelOpt's kv_cache_quant_algo FP8);
    /// nullopt: the scenario's default. A scenario whose `precision.kv_cache` is unset plans
    /// with this (model::checkpoint_kv_cache).
    std::optional<Precision> kv_cache;
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

/// Parameters of one layer part, split into the projections a quantizer converts (`linear`)
/// and the rest that stays at 16 bit (`small`: convolutions, gates, norms, biases).
struct LayerParams {
    double linear = 0;
    double small = 0;
    friend bool operator==(const LayerParams&, const LayerParams&) = default;
};

/// One recurrent layer's mixer (ModelSpec::state); zero without state layers.
[[nodiscard]] LayerParams state_layer_params(const ModelSpec& m);

/// One attention layer's DSA indexer (ModelSpec::indexer); zero without one.
[[nodiscard]] LayerParams indexer_layer_params(const ModelSpec& m);

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

/// The KV-cache precision a scenario uses when it sets none: the checkpoint's
/// (ModelSpec::kv_cache), else `fallback`.
[[nodiscard]] Precision checkpoint_kv_cache(const ModelSpec& m, const Precision& fallback);

/// Layers that attend (and so hold KV per token): all but the recurrent ones.
[[nodiscard]] int attention_layer_count(const ModelSpec& m);

} // namespace gpuplan::model
