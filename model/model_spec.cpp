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
    if (m.output_gate) {
        n += h * q; // the gate half of q_proj
    }
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

LayerParams state_layer_params(const ModelSpec& m) {
    if (!m.state) {
        return {};
    }
    const StateSpec& st = *m.state;
    const double h = d(m.hidden_size);
    const double heads = d(st.heads);
    const double kernel = d(st.conv_kernel);
    if (st.kind == StateKind::GatedDeltaNet) {
        // transformers Qwen3NextGatedDeltaNet (Qwen3.5 splits the same projections): in_proj_qkvz
        // (q, k of key_dim per key head; v, z of value_dim per value head), in_proj_ba (beta and
        // alpha per value head) and out_proj; a bias-free depthwise conv1d over q, k, v, dt_bias
        // and A_log per value head, and a gated RMSNorm of value_dim.
        const double qk = 2.0 * d(st.groups) * d(st.key_dim);
        const double v = heads * d(st.value_dim);
        return {h * (qk + 2.0 * v) + h * 2.0 * heads + v * h,
                (qk + v) * kernel + 2.0 * heads + d(st.value_dim)};
    }
    // Mamba-2 (Dao & Gu 2024, arXiv 2405.21060; transformers NemotronHMamba2Mixer): in_proj to
    // z, x, B, C and dt, and out_proj; a depthwise conv1d with bias over x, B, C; dt_bias, A_log
    // and D per head; a gated RMSNorm over the inner width.
    const double inner = heads * d(st.value_dim);
    const double conv = inner + 2.0 * d(st.groups) * d(st.key_dim);
    return {h * (inner + conv + heads) + inner * h, conv * (kernel + 1.0) + 3.0 * heads + inner};
}

LayerParams indexer_layer_params(const ModelSpec& m) {
    if (!m.indexer) {
        return {};
    }
    // deepseek-ai/DeepSeek-V3.2-Exp, inference/model.py, class Indexer: wq_b from the query
    // latent, wk, the per-head weights_proj, and k_norm (a LayerNorm: weight and bias).
    const IndexerSpec& x = *m.indexer;
    const double h = d(m.hidden_size);
    const double q_in = m.mla && m.mla->q_lora_rank > 0 ? d(m.mla->q_lora_rank) : h;
    const double dim = d(x.head_dim);
    return {q_in * d(x.heads) * dim + h * dim + h * d(x.heads), 2.0 * dim};
}

bool is_moe_layer(const ModelSpec& m, int i) {
    if (i < 0 || i >= m.layers) {
        throw InvalidArgument("is_moe_layer: layer " + std::to_string(i) + " is outside 0.." +
                              std::to_string(m.layers - 1) + " of model '" + m.name + "'");
    }
    const int interval = m.moe ? std::max(m.moe->layer_interval, 1) : 1;
    return m.moe.has_value() && i >= m.moe->first_dense_layers && (i + 1) % interval == 0;
}

int moe_layer_count(const ModelSpec& m) {
    if (!m.moe || m.layers <= 0) {
        return 0;
    }
    const int dense = std::min(std::max(m.moe->first_dense_layers, 0), m.layers);
    if (m.moe->layer_interval <= 1) {
        return m.layers - dense;
    }
    int n = 0;
    for (int i = dense; i < m.layers; ++i) {
        n += (i + 1) % m.moe->layer_interval == 0 ? 1 : 0;
    }
    return n;
}

int attention_layer_count(const ModelSpec& m) {
    return m.layers - (m.state ? std::clamp(m.state->state_layers, 0, m.layers) : 0);
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

    // Recurrent layers replace attention; the indexer and the sinks sit on attention layers.
    double mixer = c.per_layer_attention;
    if (m.indexer) {
        const LayerParams x = indexer_layer_params(m);
        mixer += x.linear + x.small;
    }
    if (m.attention_sinks) {
        mixer += d(m.heads); // gpt-oss: one learned sink logit per query head
    }
    const int attention_layers = attention_layer_count(m);
    double layers_total = d(attention_layers) * mixer + d(m.layers) * norms;
    if (m.state) {
        const LayerParams st = state_layer_params(m);
        layers_total += d(m.layers - attention_layers) * (st.linear + st.small);
    }
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

    const bool any_dense = !m.moe || moe_layer_count(m) < m.layers;
    // Nemotron-H's mixer layers without an MoE block have no MLP at all: dense layers of
    // ffn_size 0 beside Mamba-2 layers (hwdb/hf_import.cpp, read_nemotron_h).
    const bool mlp_free_layers = m.state && m.state->kind == StateKind::Mamba2 && m.moe;
    if (any_dense && !mlp_free_layers) {
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

    if (m.moe) {
        require(m.moe->layer_interval >= 1 && m.moe->layer_interval <= m.layers, where,
                "moe.layer_interval",
                std::to_string(m.moe->layer_interval) + " is outside 1.." +
                    std::to_string(m.layers) +
                    "; use 1 when every layer after the dense ones "
                    "is MoE, 2 for every other layer");
        require(moe_layer_count(m) > 0, where, "moe.layer_interval",
                "leaves no MoE layer; lower it or remove the moe map");
    }
    if (m.state) {
        const StateSpec& st = *m.state;
        require(st.state_layers > 0 && st.state_layers < m.layers, where, "state.state_layers",
                std::to_string(st.state_layers) + " is outside 1.." + std::to_string(m.layers - 1) +
                    "; count the recurrent layers (at least one layer must attend)");
        positive(st.heads, "state.heads", "set the value (GDN) or SSM (Mamba-2) heads");
        positive(st.groups, "state.groups", "set the key heads (GDN) or groups (Mamba-2)");
        positive(st.key_dim, "state.key_dim", "set the key head size or d_state");
        positive(st.value_dim, "state.value_dim", "set the value head size or SSM head size");
        positive(st.conv_kernel, "state.conv_kernel", "set the conv1d width (4)");
    }
    if (m.indexer) {
        positive(m.indexer->heads, "indexer.heads", "set the indexer heads (index_n_heads)");
        positive(m.indexer->head_dim, "indexer.head_dim",
                 "set the indexer head size (index_head_dim)");
        positive(m.indexer->top_k, "indexer.top_k", "set the tokens attended (index_topk)");
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
    if (m.sliding_window && m.state) {
        require(false, where, "sliding_window",
                "is given with state: windowed and recurrent layers in one model are not "
                "supported yet; keep the one that holds the most memory");
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

Precision checkpoint_kv_cache(const ModelSpec& m, const Precision& fallback) {
    return m.kv_cache ? *m.kv_cache : fallback;
}

} // namespace gpuplan::model
