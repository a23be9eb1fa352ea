#pragma once
/// KV-cache and recurrent-state size per token and per sequence for a whole model (all layers,
/// no parallelism).

#include "model/model_spec.hpp"
#include "model/precision.hpp"
#include "model/units.hpp"

namespace gpuplan::model {

/// Bytes of KV cache one token occupies across the attention layers of an unsharded model:
/// MHA/GQA/MQA: 2 × layers × kv_heads × head_dim × bytes (docs/domain.md §2);
/// MLA: layers × (kv_lora_rank + qk_rope_head_dim) × bytes (DeepSeek-V2 paper, §2.1.2);
/// plus, with a DSA indexer, its FP8 key and one fp32 scale per 128 (indexer_bytes_per_token).
/// Recurrent layers (ModelSpec::state) hold no KV. Windowed layers cost the same per token;
/// they only stop growing at the window.
[[nodiscard]] Bytes kv_bytes_per_token(const ModelSpec& m, const Precision& kv);

/// KV bytes one sequence of `context` tokens holds, with windowed layers capped at the window,
/// plus the constant recurrent state of the state layers (state_bytes_per_sequence).
[[nodiscard]] Bytes kv_bytes_per_sequence(const ModelSpec& m, const Precision& kv, int context);

/// Bytes of the DSA indexer's key cache per token, all attention layers: head_dim FP8 bytes and
/// a 4-byte scale per 128 of them per layer, whatever the KV precision (vLLM's
/// DeepseekV32IndexerCache); 0 without an indexer.
[[nodiscard]] Bytes indexer_bytes_per_token(const ModelSpec& m);

/// Bytes of recurrent state one sequence holds across the state layers, independent of its
/// length: a convolution state of (conv_kernel − 1) × conv channels at 16 bit and the recurrent
/// state (GDN: heads × key_dim × value_dim; Mamba-2: heads × value_dim × d_state) at fp32 or
/// 16 bit; 0 without state layers.
[[nodiscard]] Bytes state_bytes_per_sequence(const ModelSpec& m);

} // namespace gpuplan::model
