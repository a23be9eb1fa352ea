#include "model/model_spec.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuplan::model {

namespace {

// Counts are accumulated in double: every product below is an integer far under 2^53
// (the largest, DeepSeek-V3's 256 experts x 3 x 7168 x 2048 x 58 layers, is 6.5e11), so the
// sums are exact.
double d(int v) {
    return static_cast<double>(v);
}

/// Parameters of one MLP (dense or one expert) of intermediate size `ffn`.
/// Gated (SwiGLU/GeGLU, Shazeer 2020 "GLU Variants Improve Transformer"): gate, up, down;
/// plain (GPT-2/3): up, down. With linear biases each matrix adds its output width.
double mlp_params(const ModelSpec& m, int ffn) {
    const double h = d(m.hidden_size);
    const double f = d(ffn);
    const bool gated = m.mlp == MlpKind::Gated;
    double n = (gated ? 3.0 : 2.0) * h * f;
    if (m.linear_bias) {
        n += (gated ? 2.0 : 1.0) * f + h;
    }
    return n;
}

/// One layer's attention parameters.
double attention_params(const ModelSpec& m) {
    const double h = d(m.hidden_size);
    const double a = d(m.heads);
    if (m.attention == AttentionKind::Mla && m.mla) {
        // DeepSeek-V2 paper (arXiv 2405.04434) eqs. 9-13 and 37-40, as in the HF
        // DeepseekV3Attention module: q_a_proj + q_a_layernorm + q_b_proj (or a plain q_proj
        // when q_lora_rank is 0), kv_a_proj_with_mqa (latent plus the shared RoPE key),
        // kv_a_layernorm, kv_b_proj (per-head no-RoPE key and value), o_proj.
        const MlaSpec& r = *m.mla;
        const double q_head = d(r.qk_nope_head_dim) + d(r.qk_rope_head_dim);
        double n = 0;
        if (r.q_lora_rank > 0) {
            n += h * d(r.q_lora_rank) + d(r.q_lora_rank) + d(r.q_lora_rank) * a * q_head;
        } else {
            n += h * a * q_head;
        }
        n += h * (d(r.kv_lora_rank) + d(r.qk_rope_head_dim)) + d(r.kv_lora_rank);
        n += d(r.kv_lora_rank) * a * (d(r.qk_nope_head_dim) + d(r.v_head_dim));
        n += a * d(r.v_head_dim) * h;
        return n;
    }
    const double q = a * d(m.head_dim);              // query width
    const double kv = d(m.kv_heads) * d(m.head_dim); // key (and value) width
    double n = h * q + 2.0 * h * kv + q * h;         // Q, K, V, O projections
    if (m.qkv_bias || m.linear_bias) {
        n += q + 2.0 * kv;
    }
    if (m.linear_bias) {
        n += h; // output projection bias
    }
    if (m.qk_norm) {
        n += 2.0 * d(m.head_dim); // Qwen3: one RMSNorm weight vector for Q, one for K
    }
    return n;
}

/// Elements of one norm: RMSNorm has a weight, LayerNorm a weight and a bias.
double norm_params(const ModelSpec& m) {
    return (m.norm == NormKind::LayerNorm ? 2.0 : 1.0) * d(m.hidden_size);
}

std::string prefix(const std::string& where, const char* field) {
    return where + ": " + field + ": ";
}

void require(bool ok, const std::string& where, const char* field, const std::string& what) {
    if (!ok) {
        throw InvalidArgument(prefix(where, field) + what);
    }
}

} // namespace

bool is_moe_layer(const ModelSpec& m, int i) {
    if (i < 0 || i >= m.layers) {
        throw InvalidArgument("is_moe_layer: layer " + std::to_string(i) + " is outside 0.." +
                              std::to_string(m.layers - 1) + " of model '" + m.name + "'");
    }
    return m.moe.has_value() && i >= m.moe->first_dense_layers;
}

int moe_layer_count(const ModelSpec& m) {
    if (!m.moe || m.layers <= 0) {
        return 0;
    }
    const int dense = std::min(std::max(m.moe->first_dense_layers, 0), m.layers);
    return m.layers - dense;
}

ParamCount count_params(const ModelSpec& m) {
    ParamCount c;
    const double h = d(m.hidden_size);
    c.embedding = d(m.vocab_size) * h;
    if (m.position == PositionKind::Learned) {
        c.embedding += d(m.max_context) * h; // GPT-2/3 learned position table
    }
    c.lm_head = m.tied_embeddings ? 0.0 : d(m.vocab_size) * h;
    c.per_layer_attention = attention_params(m);

    const double norms = d(m.norms_per_layer) * norm_params(m);
    const int moe_layers = moe_layer_count(m);
    const int dense_layers = m.layers - moe_layers;

    double layers_total = d(m.layers) * (c.per_layer_attention + norms);
    double layers_active = layers_total;
    layers_total += d(dense_layers) * mlp_params(m, m.ffn_size);
    layers_active += d(dense_layers) * mlp_params(m, m.ffn_size);
    if (m.moe && moe_layers > 0) {
        // Router: a hidden x experts gate without bias (Mixtral, Qwen3-MoE, DeepSeek-V3; the
        // latter's 256-element e_score_correction_bias is left out, 0.00002 % of the model).
        // Shared experts always run; of the routed ones a token uses only the top-k
        // (Fedus et al. 2021; DeepSeekMoE, arXiv 2401.06066).
        const MoeSpec& e = *m.moe;
        const double expert = mlp_params(m, e.expert_ffn_size);
        const double router = h * d(e.experts);
        const double shared = d(e.shared_experts) * expert;
        layers_total += d(moe_layers) * (router + d(e.experts) * expert + shared);
        layers_active += d(moe_layers) * (router + d(e.active_experts) * expert + shared);
    }

    const double outside = c.embedding + c.lm_head + norm_params(m); // final norm included
    c.total = outside + layers_total;
    c.active = outside + layers_active;
    return c;
}

void validate(const ModelSpec& m, const std::string& where) {
    const auto positive = [&](int v, const char* field, const std::string& fix) {
        require(v > 0, where, field, std::to_string(v) + " is not a positive count; " + fix);
    };
    require(!m.name.empty(), where, "name",
            "is empty; give a canonical lowercase name such as "
            "'llama-3.1-8b'");
    positive(m.layers, "layers", "set the number of transformer blocks (num_hidden_layers)");
    positive(m.hidden_size, "hidden_size", "set the model width (hidden_size)");
    positive(m.heads, "heads", "set the number of query heads (num_attention_heads)");
    positive(m.kv_heads, "kv_heads",
             "set the number of key/value heads (num_key_value_heads; equal to heads for mha)");
    positive(m.head_dim, "head_dim", "set the per-head size (usually hidden_size / heads)");
    positive(m.vocab_size, "vocab_size", "set the tokenizer vocabulary size");
    positive(m.max_context, "max_context",
             "set the longest context in tokens "
             "(max_position_embeddings)");
    require(m.norms_per_layer >= 0, where, "norms_per_layer",
            std::to_string(m.norms_per_layer) + " is negative; use 2 (pre-attention and "
                                                "pre-MLP) or 4 (Gemma-2)");

    const bool any_dense = !m.moe || m.moe->first_dense_layers > 0;
    if (any_dense) {
        positive(m.ffn_size, "ffn_size", "set the dense MLP intermediate size");
    } else {
        require(m.ffn_size >= 0, where, "ffn_size",
                std::to_string(m.ffn_size) + " is negative; set the dense MLP intermediate "
                                             "size or 0");
    }

    if (m.attention != AttentionKind::Mla) {
        require(m.kv_heads <= m.heads && m.heads % m.kv_heads == 0, where, "kv_heads",
                std::to_string(m.kv_heads) + " does not divide heads (" + std::to_string(m.heads) +
                    "); each key/value head serves a whole group "
                    "of query heads, so use a divisor of heads");
    }
    switch (m.attention) {
    case AttentionKind::Mha:
        require(m.kv_heads == m.heads, where, "kv_heads",
                std::to_string(m.kv_heads) + " differs from heads (" + std::to_string(m.heads) +
                    ") but attention is mha; set kv_heads to heads or attention to gqa/mqa");
        break;
    case AttentionKind::Mqa:
        require(m.kv_heads == 1, where, "kv_heads",
                std::to_string(m.kv_heads) + " is not 1 but attention is mqa; set kv_heads: 1 "
                                             "or attention: gqa");
        break;
    case AttentionKind::Gqa:
        require(m.kv_heads < m.heads, where, "kv_heads",
                std::to_string(m.kv_heads) + " equals heads, which is mha, not gqa; set "
                                             "attention: mha");
        break;
    case AttentionKind::Mla: break;
    }

    if (m.attention == AttentionKind::Mla) {
        require(m.mla.has_value(), where, "mla",
                "is missing but attention is mla; add mla: {q_lora_rank, kv_lora_rank, "
                "qk_nope_head_dim, qk_rope_head_dim, v_head_dim}");
        const MlaSpec& r = *m.mla;
        require(r.q_lora_rank >= 0, where, "mla.q_lora_rank",
                std::to_string(r.q_lora_rank) + " is negative; use 0 for uncompressed queries");
        positive(r.kv_lora_rank, "mla.kv_lora_rank",
                 "set the KV latent rank (512 in "
                 "DeepSeek-V3)");
        require(r.qk_nope_head_dim >= 0, where, "mla.qk_nope_head_dim",
                std::to_string(r.qk_nope_head_dim) + " is negative; set the per-head key size "
                                                     "without RoPE");
        positive(r.qk_rope_head_dim, "mla.qk_rope_head_dim", "set the decoupled RoPE key size");
        positive(r.v_head_dim, "mla.v_head_dim", "set the per-head value size");
        require(!m.qkv_bias && !m.linear_bias && !m.qk_norm, where, "attention",
                "mla does not support qkv_bias, linear_bias or qk_norm; remove them");
    } else {
        require(!m.mla.has_value(), where, "mla",
                std::string("is given but attention is ") + to_string(m.attention) +
                    "; set attention: mla or remove the mla map");
    }

    if (m.moe) {
        const MoeSpec& e = *m.moe;
        positive(e.experts, "moe.experts", "set the routed experts per MoE layer");
        require(e.active_experts > 0 && e.active_experts <= e.experts, where, "moe.active_experts",
                std::to_string(e.active_experts) + " is outside 1.." + std::to_string(e.experts) +
                    "; set the top-k routed experts per token, at "
                    "most moe.experts");
        require(e.shared_experts >= 0, where, "moe.shared_experts",
                std::to_string(e.shared_experts) + " is negative; use 0 when there are none");
        positive(e.expert_ffn_size, "moe.expert_ffn_size",
                 "set the intermediate size of one expert");
        require(e.first_dense_layers >= 0 && e.first_dense_layers < m.layers, where,
                "moe.first_dense_layers",
                std::to_string(e.first_dense_layers) + " is outside 0.." +
                    std::to_string(m.layers - 1) +
                    "; at least one layer must be MoE, or "
                    "remove the moe map");
    }

    if (m.sliding_window) {
        const SlidingWindowSpec& s = *m.sliding_window;
        positive(s.window, "sliding_window.window", "set the window in tokens");
        require(s.windowed_layers > 0 && s.windowed_layers <= m.layers, where,
                "sliding_window.windowed_layers",
                std::to_string(s.windowed_layers) + " is outside 1.." + std::to_string(m.layers) +
                    "; count the layers that use the window, or "
                    "remove sliding_window");
    }

    require(std::isfinite(m.published_params) && m.published_params >= 0, where, "published_params",
            "must be a non-negative number such as 70.6e9");
    require(std::isfinite(m.published_active_params) && m.published_active_params >= 0 &&
                (m.published_params == 0 || m.published_active_params <= m.published_params),
            where, "published_active_params",
            "must be a non-negative number no larger than published_params");
}

const char* to_string(AttentionKind kind) {
    return name_of(kind);
}

Precision checkpoint_weights(const ModelSpec& m) {
    if (m.weights) {
        return *m.weights;
    }
    return parse_precision("bf16");
}

} // namespace gpuplan::model
