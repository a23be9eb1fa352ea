#pragma once
/// KV-cache size per token for a whole model (all layers, no parallelism).

#include "model/model_spec.hpp"
#include "model/precision.hpp"
#include "model/units.hpp"

namespace gpuplan::model {

/// Bytes of KV cache one token occupies across all layers of an unsharded model:
/// MHA/GQA/MQA: 2 × layers × kv_heads × head_dim × bytes (docs/domain.md §2);
/// MLA: layers × (kv_lora_rank + qk_rope_head_dim) × bytes (DeepSeek-V2 paper, §2.1.2).
/// Windowed layers cost the same per token; they only stop growing at the window.
[[nodiscard]] Bytes kv_bytes_per_token(const ModelSpec& m, const Precision& kv);

/// KV bytes one sequence of `context` tokens holds, with windowed layers capped at the window.
[[nodiscard]] Bytes kv_bytes_per_sequence(const ModelSpec& m, const Precision& kv, int context);

} // namespace gpuplan::model
