#include "model/kv_cache.hpp"

#include <algorithm>

namespace gpuplan::model {
namespace {

double elements_per_token_per_layer(const ModelSpec& m) {
    if (m.attention == AttentionKind::Mla && m.mla) {
        return m.mla->kv_lora_rank + m.mla->qk_rope_head_dim;
    }
    return 2.0 * m.kv_heads * m.head_dim;
}

} // namespace

Bytes kv_bytes_per_token(const ModelSpec& m, const Precision& kv) {
    return Bytes(m.layers * elements_per_token_per_layer(m) * kv.bytes_per_element());
}

Bytes kv_bytes_per_sequence(const ModelSpec& m, const Precision& kv, int context) {
    const double per_layer = elements_per_token_per_layer(m) * kv.bytes_per_element();
    const int windowed =
        m.sliding_window ? std::min(m.sliding_window->windowed_layers, m.layers) : 0;
    const int full = m.layers - windowed;
    const double windowed_tokens =
        m.sliding_window ? std::min(context, m.sliding_window->window) : 0;
    return Bytes(per_layer * (double(full) * context + double(windowed) * windowed_tokens));
}

} // namespace gpuplan::model
