#include "model/kv_cache.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::model {
namespace {

double elements_per_token_per_layer(const ModelSpec& m) {
    if (m.attention == AttentionKind::Mla && m.mla) {
        return m.mla->kv_lora_rank + m.mla->qk_rope_head_dim;
    }
    return 2.0 * m.kv_heads * m.head_dim;
}

/// One attention layer's indexer key: FP8 values and one fp32 scale per 128-value block
/// (vLLM DeepseekV32IndexerCache: index_head_dim + index_head_dim // 128 * 4 bytes).
double indexer_bytes_per_layer(const ModelSpec& m) {
    if (!m.indexer) {
        return 0.0;
    }
    const double dim = m.indexer->head_dim;
    return dim + std::ceil(dim / 128.0) * 4.0;
}

} // namespace

Bytes indexer_bytes_per_token(const ModelSpec& m) {
    return Bytes(attention_layer_count(m) * indexer_bytes_per_layer(m));
}

Bytes state_bytes_per_sequence(const ModelSpec& m) {
    if (!m.state) {
        return Bytes(0.0);
    }
    // vLLM MambaStateShapeCalculator (model_executor/layers/mamba/mamba_utils.py): the conv
    // state is (conv_kernel − 1) × conv_dim in the model dtype; the temporal state is
    // heads × key_dim × value_dim (GDN) or heads × head_dim × d_state (Mamba-2) in
    // mamba_ssm_cache_dtype.
    const StateSpec& s = *m.state;
    const double heads = s.heads;
    double conv_dim = 0;
    double recurrent = 0;
    if (s.kind == StateKind::GatedDeltaNet) {
        conv_dim = 2.0 * s.groups * s.key_dim + heads * s.value_dim;
        recurrent = heads * s.key_dim * s.value_dim;
    } else {
        conv_dim = heads * s.value_dim + 2.0 * s.groups * s.key_dim;
        recurrent = heads * s.value_dim * s.key_dim;
    }
    const double per_layer =
        (s.conv_kernel - 1.0) * conv_dim * 2.0 + recurrent * (s.fp32_state ? 4.0 : 2.0);
    return Bytes(std::clamp(s.state_layers, 0, m.layers) * per_layer);
}

Bytes kv_bytes_per_token(const ModelSpec& m, const Precision& kv) {
    const double attention = attention_layer_count(m);
    return Bytes(attention * elements_per_token_per_layer(m) * kv.bytes_per_element()) +
           indexer_bytes_per_token(m);
}

Bytes kv_bytes_per_sequence(const ModelSpec& m, const Precision& kv, int context) {
    const double per_layer =
        elements_per_token_per_layer(m) * kv.bytes_per_element() + indexer_bytes_per_layer(m);
    const int windowed =
        m.sliding_window ? std::min(m.sliding_window->windowed_layers, m.layers) : 0;
    const int full = attention_layer_count(m) - windowed;
    const double windowed_tokens =
        m.sliding_window ? std::min(context, m.sliding_window->window) : 0;
    return Bytes(per_layer * (double(full) * context + double(windowed) * windowed_tokens)) +
           state_bytes_per_sequence(m);
}

} // namespace gpuplan::model
