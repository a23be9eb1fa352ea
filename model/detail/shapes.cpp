#include "model/detail/shapes.hpp"

#include "model/kv_cache.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::model::detail {

namespace {
double d(int v) {
    return static_cast<double>(v);
}
} // namespace

Shapes make_shapes(const ModelSpec& m, const Parallelism& p) {
    Shapes s;
    s.tp = p.tp;
    s.pp = p.pp;
    s.ep = p.ep;
    s.layers = m.layers;
    s.moe_layers = moe_layer_count(m);
    s.dense_layers = m.layers - s.moe_layers;
    s.moe = s.moe_layers > 0;
    s.h = d(m.hidden_size);
    s.vocab = d(m.vocab_size);
    s.gated = m.mlp == MlpKind::Gated;
    s.mla = m.attention == AttentionKind::Mla && m.mla.has_value();
    if (m.sliding_window) {
        s.window = m.sliding_window->window;
        s.windowed_layers = m.sliding_window->windowed_layers;
    }
    const double tp = d(p.tp);
    const double h = s.h;
    const double norm_vec = (m.norm == NormKind::LayerNorm ? 2.0 : 1.0) * h;
    s.norms = d(m.norms_per_layer) * norm_vec;
    s.final_norm = norm_vec;
    s.heads_rank = d(m.heads) / tp;

    if (s.mla) {
        // Megatron-style sharding as in vLLM's DeepseekV2MLAAttention: the low-rank down
        // projections (fused q_a + kv_a) are ReplicatedLinear; q_b, kv_b (column) and o_proj
        // (row) are split by heads. The latent cache is one "head", never split by TP.
        const MlaSpec& r = *m.mla;
        s.q_lora = d(r.q_lora_rank);
        s.kv_lora = d(r.kv_lora_rank);
        s.rope = d(r.qk_rope_head_dim);
        s.nope = d(r.qk_nope_head_dim);
        s.qk_dim = s.nope + s.rope;
        s.v_dim = d(r.v_head_dim);
        s.head_dim = s.qk_dim;
        s.kv_heads_rank = 1;
        s.q_width_rank = s.heads_rank * s.qk_dim;
        s.o_in_rank = s.heads_rank * s.v_dim;
        double linear = 0;
        double small = 0;
        if (r.q_lora_rank > 0) {
            linear += h * s.q_lora + s.q_lora * s.q_width_rank;
            small += s.q_lora;
        } else {
            linear += h * s.q_width_rank;
        }
        linear += h * (s.kv_lora + s.rope);
        small += s.kv_lora;
        linear += s.kv_lora * s.heads_rank * (s.nope + s.v_dim);
        linear += s.o_in_rank * h;
        s.attn_linear = linear;
        s.attn_small = small;
        s.kv_elems_rank = s.kv_lora + s.rope;
        s.kv_elems_model = s.kv_elems_rank;
    } else {
        const double dh = d(m.head_dim);
        s.head_dim = dh;
        s.qk_dim = dh;
        s.v_dim = dh;
        // KV heads are split over TP ranks, or replicated (one per rank) when there are fewer
        // KV heads than ranks (vLLM QKVParallelLinear; docs/engines.md §1.2).
        s.kv_heads_rank = std::max(1.0, d(m.kv_heads) / tp);
        s.q_width_rank = s.heads_rank * dh;
        s.kv_width_rank = 2.0 * s.kv_heads_rank * dh;
        s.o_in_rank = s.q_width_rank;
        s.attn_linear = h * (s.q_width_rank + s.kv_width_rank) + s.o_in_rank * h;
        if (m.output_gate) {
            s.attn_linear += h * s.q_width_rank; // Qwen3-Next's gate half of q_proj
        }
        if (m.qkv_bias || m.linear_bias) {
            s.attn_small += s.q_width_rank + s.kv_width_rank;
        }
        if (m.linear_bias) {
            s.attn_small += h; // row-parallel bias, held by every rank
        }
        if (m.qk_norm) {
            s.attn_small += 2.0 * dh;
        }
        s.kv_elems_rank = s.kv_width_rank;
        s.kv_elems_model = 2.0 * d(m.kv_heads) * dh;
    }

    // Dense MLP: column-parallel gate/up, row-parallel down (Megatron-LM, Shoeybi et al. 2019).
    const double mats = s.gated ? 3.0 : 2.0;
    s.ffn_rank = d(m.ffn_size) / tp;
    s.dense_linear = mats * h * s.ffn_rank;
    if (m.linear_bias) {
        s.dense_small = (s.gated ? 2.0 : 1.0) * s.ffn_rank + h;
    }

    if (m.moe) {
        const MoeSpec& e = *m.moe;
        s.experts = e.experts;
        s.top_k = e.active_experts;
        s.shared_experts = e.shared_experts;
        const double fe = d(e.expert_ffn_size);
        s.router = h * d(e.experts);
        s.expert_linear = mats * h * fe;
        s.expert_small = m.linear_bias ? (s.gated ? 2.0 : 1.0) * fe + h : 0.0;
        if (p.ep > 1) {
            // Expert parallelism: whole experts, E / ep per rank (vLLM FusedMoE with EP).
            s.experts_rank = std::ceil(d(e.experts) / d(p.ep));
            s.expert_shard = 1.0;
            s.expert_ffn_rank = fe;
        } else {
            s.experts_rank = d(e.experts);
            s.expert_shard = 1.0 / tp;
            s.expert_ffn_rank = fe / tp;
        }
        // Shared experts are a dense MLP, tensor-sharded.
        s.shared_linear_rank = d(e.shared_experts) * s.expert_linear / tp;
        s.shared_small_rank = d(e.shared_experts) * s.expert_small / tp;
    }

    if (m.state) {
        const LayerParams sp = state_layer_params(m);
        s.state_layers = std::clamp(m.state->state_layers, 0, m.layers);
        s.state_linear = sp.linear / tp;
        s.state_small = sp.small / tp;
        s.state_bytes = m.layers > 0 && s.state_layers > 0
                            ? state_bytes_per_sequence(m).si() / d(s.state_layers) / tp
                            : 0.0;
    }
    if (m.indexer) {
        const LayerParams ip = indexer_layer_params(m);
        s.indexer_linear = ip.linear;
        s.indexer_small = ip.small;
        const int attention = attention_layer_count(m);
        s.indexer_bytes = attention > 0 ? indexer_bytes_per_token(m).si() / d(attention) : 0.0;
    }
    if (m.attention_sinks) {
        s.sinks = s.heads_rank;
    }

    s.embedding = s.vocab * h;
    if (m.position == PositionKind::Learned) {
        s.embedding += d(m.max_context) * h;
    }
    s.lm_head = m.tied_embeddings ? 0.0 : s.vocab * h;
    return s;
}

bool is_state_layer(const ModelSpec& m, int i) {
    if (!m.state || m.layers <= 0) {
        return false;
    }
    const long long w = m.state->state_layers;
    const long long l = m.layers;
    return (static_cast<long long>(i) + 1) * w / l > static_cast<long long>(i) * w / l;
}

bool is_windowed_layer(const ModelSpec& m, int i) {
    if (!m.sliding_window || m.layers <= 0) {
        return false;
    }
    const long long w = m.sliding_window->windowed_layers;
    const long long l = m.layers;
    return (static_cast<long long>(i) + 1) * w / l > static_cast<long long>(i) * w / l;
}

Stage pipeline_stage(const ModelSpec& m, int pp, int s) {
    // vLLM get_pp_indices: partitions = [L // pp] * pp; the L % pp extra layers go one each to
    // partitions[-2], partitions[-3], … (not the last stage, which also holds the LM head).
    const int base = m.layers / pp;
    const int extra = m.layers % pp;
    auto size = [&](int k) {
        const int from_end = pp - k; // 1 for the last stage
        return base + ((from_end >= 2 && from_end <= extra + 1) ? 1 : 0);
    };
    Stage st;
    for (int k = 0; k < s; ++k) {
        st.first_layer += size(k);
    }
    st.layers = size(s);
    st.first = s == 0;
    st.last = s == pp - 1;
    for (int i = st.first_layer; i < st.first_layer + st.layers; ++i) {
        st.moe_layers += is_moe_layer(m, i) ? 1 : 0;
        st.windowed_layers += is_windowed_layer(m, i) ? 1 : 0;
        st.state_layers += is_state_layer(m, i) ? 1 : 0;
    }
    return st;
}

} // namespace gpuplan::model::detail
