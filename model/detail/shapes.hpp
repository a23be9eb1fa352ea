#pragma once
/// Layer-private: per-GPU tensor shapes and parameter counts of one model replica, derived once
/// from a ModelSpec and a Parallelism and shared by the memory and step-cost models.

#include "model/deployment.hpp"
#include "model/model_spec.hpp"

namespace gpuplan::model::detail {

/// Dimensions and element counts per tensor-parallel rank. Counts are elements, not bytes.
/// "linear" counts are the weights a quantizer converts; "small" counts (biases, norm vectors,
/// the MoE router) stay at 16 bit.
struct Shapes {
    int tp = 1, pp = 1, ep = 1;
    int layers = 0, moe_layers = 0, dense_layers = 0, windowed_layers = 0;
    int state_layers = 0; ///< recurrent layers (no KV; a constant state per sequence)
    int window = 0;       ///< sliding window in tokens (0: none)
    double h = 0, vocab = 0;
    bool mla = false;
    bool gated = true;
    bool moe = false;

    // Attention, per rank.
    double heads_rank = 0;    ///< query heads on this rank
    double kv_heads_rank = 0; ///< KV heads on this rank (replicated to 1 when kv_heads < tp)
    double head_dim = 0;
    double qk_dim = 0;        ///< per-head query/key width in prefill attention
    double v_dim = 0;         ///< per-head value width
    double q_width_rank = 0;  ///< Q projection output per rank
    double kv_width_rank = 0; ///< K and V projection outputs per rank (non-MLA)
    double o_in_rank = 0;     ///< output projection input width per rank
    // MLA ranks (0 when not MLA).
    double q_lora = 0, kv_lora = 0, rope = 0, nope = 0;

    // Parameters per rank, one layer.
    double attn_linear = 0;
    double attn_small = 0;
    double norms = 0;        ///< the layer's norm vectors (replicated)
    double dense_linear = 0; ///< dense MLP, per rank
    double dense_small = 0;
    double ffn_rank = 0;      ///< dense MLP intermediate size per rank
    double router = 0;        ///< MoE gate (replicated)
    double expert_linear = 0; ///< one whole expert's linear weights
    double expert_small = 0;
    double expert_ffn_rank = 0; ///< an expert's intermediate size on this rank
    double experts_rank = 0;    ///< experts held by this rank (fractional when tensor-sharded)
    double expert_shard = 1;    ///< fraction of each held expert on this rank (1/tp or 1)
    double shared_linear_rank = 0;
    double shared_small_rank = 0;
    int experts = 0, top_k = 0, shared_experts = 0;

    // Outside the layers, whole (unsharded) counts.
    double embedding = 0; ///< vocab × h (plus a learned position table)
    double lm_head = 0;   ///< vocab × h; 0 when tied (see lm_head_stored)
    double final_norm = 0;

    // Recurrent layers and the DSA indexer, per rank: heads split over TP ranks as vLLM's
    // GDN and Mamba-2 layers and the replicated indexer (one head of keys).
    double state_linear = 0;   ///< one recurrent layer's projections on this rank
    double state_small = 0;    ///< its conv, gates and norm on this rank
    double state_bytes = 0;    ///< one recurrent layer's state per sequence on this rank
    double indexer_linear = 0; ///< one attention layer's indexer projections (replicated)
    double indexer_small = 0;  ///< its key norm
    double indexer_bytes = 0;  ///< indexer key cache per token and attention layer
    double sinks = 0;          ///< attention sink logits per layer on this rank

    // KV cache elements per token and layer.
    double kv_elems_rank = 0;  ///< on one rank (MLA: the latent, not sharded)
    double kv_elems_model = 0; ///< the whole layer's, before sharding
};

/// Builds the shapes. Preconditions: the model validates and the parallelism is valid for it.
[[nodiscard]] Shapes make_shapes(const ModelSpec& m, const Parallelism& p);

/// One pipeline stage, partitioned as vLLM's get_pp_indices does (vllm/distributed/utils.py):
/// L // pp layers each, the remainder given one each to the stages before the last.
struct Stage {
    int first_layer = 0;
    int layers = 0;
    int moe_layers = 0;
    int windowed_layers = 0;
    int state_layers = 0;
    bool first = true; ///< holds the input embedding
    bool last = true;  ///< holds the final norm and the LM head
};

/// Stage `s` (0-based) of `pp`.
[[nodiscard]] Stage pipeline_stage(const ModelSpec& m, int pp, int s);

/// Whether layer i is recurrent (ModelSpec::state): spread evenly over the depth, as Qwen3.5's
/// every fourth attention layer (which exact layers does not change any total).
[[nodiscard]] bool is_state_layer(const ModelSpec& m, int i);

/// Whether layer i uses the sliding window: windowed layers are spread evenly over the depth
/// (Gemma-2 alternates; which exact layers does not change any total).
[[nodiscard]] bool is_windowed_layer(const ModelSpec& m, int i);

} // namespace gpuplan::model::detail
