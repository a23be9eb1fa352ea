#pragma once
/// Layer-private: what the training model's files share (training.cpp: names, checks and the
/// per-job set-up; training_memory.cpp: memory per GPU; training_geometry.cpp: per-layer shapes
/// and kernel times of one layout; training_time.cpp: the step, throughput, energy and cost).

#include "model/model_spec.hpp"
#include "model/training.hpp"

#include <algorithm>

namespace gpuplan::model::detail {

inline double d(int v) {
    return static_cast<double>(v);
}

/// Bytes of the optimizer moments per trained parameter.
[[nodiscard]] double moment_bytes(TrainOptimizer o);

/// Bytes per row (token) of one layer's stored activations, split into the part that tensor
/// parallelism alone does not split (norm inputs, the inputs of the first GEMMs, dropout masks)
/// and the part it does. Korthikanti et al. 2022 §4.1: attention 11sbh + 5as²b, MLP 19sbh, norms
/// 4sbh; §4.2.2 for what TP splits (sbh(10 + 24/t)).
struct ActRow {
    double replicated = 0; ///< bytes per token, split by t only with sequence parallelism
    double split = 0;      ///< bytes per token, split by t
    double square = 0;     ///< bytes per token of the s² attention term (× keys), split by t
};

[[nodiscard]] ActRow activation_row(const ModelSpec& m, bool flash, bool dropout, bool moe_layer);

/// Stored activation bytes of one layer for `rows` tokens attending to `keys` keys.
[[nodiscard]] double layer_activation_bytes(const ActRow& r, double rows, double keys, double h,
                                            int tp, bool sp, Recompute rc);

/// One pass of a kernel group over one micro-batch: forward and backward seconds, and the part
/// of each on the memory roof (bytes / achieved bandwidth).
struct KernelPass {
    double fwd = 0, bwd = 0; ///< seconds
    double mf = 0, mb = 0;   ///< of which on the memory roof
};

/// The layers, MoE layers and edges (embedding, LM head) of one pipeline stage.
struct StageShape {
    int layers = 0;
    int moe = 0;
    bool first = false;
    bool last = false;
};

/// Stage k of pp: L / pp layers each, the remainder one each to the stages before the last (the
/// partition of detail::pipeline_stage), in O(1).
[[nodiscard]] StageShape stage_shape(int pp, int base, int extra, int first_moe, int k);

} // namespace gpuplan::model::detail

namespace gpuplan::model {

/// Everything about one layout that the stages share: shapes, per-layer parameters, and the
/// time of each kind of layer for one micro-batch.
struct TrainingModel::Geometry {
    int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, nd = 1;
    int m = 1;       // micro-batches per step
    double rows = 0; // tokens per micro-batch on one rank (b·s/cp)
    bool sp = false;
    int base = 0, extra = 0, first_moe = 0;
    // Parameters per rank, one layer (elements).
    double attn = 0, dense = 0, moe_shared = 0, experts = 0;
    double attn_linear = 0, dense_linear = 0, moe_linear = 0;
    double emb = 0, head = 0;
    double lora_layer = 0; // adapter parameters per layer per rank
    // Activations per layer per micro-batch (bytes).
    double act_dense = 0, act_moe = 0, act_full_dense = 0, act_full_moe = 0;
    double act_lora = 0, act_first = 0, logits = 0, act_last = 0;
    // Times per layer per micro-batch (seconds): forward, backward, recompute extra.
    double fwd_dense = 0, bwd_dense = 0, rec_dense = 0;
    double fwd_moe = 0, bwd_moe = 0, rec_moe = 0;
    double fwd_first = 0, bwd_first = 0, fwd_last = 0, bwd_last = 0, rec_last = 0;
    // Memory-roof seconds per layer and micro-batch (forward, backward and recomputation), for
    // the power model's memory activity.
    double mem_dense = 0, mem_moe = 0, mem_first = 0, mem_last = 0;
    double tp_layer = 0, tp_first = 0, tp_last = 0, ep_layer = 0, cp_layer = 0, pp_mb = 0;
    double windowed_share = 0;
};

/// The kernels every transformer layer of a layout runs, dense or MoE: attention and its
/// projections, the elementwise kernels, launches and LoRA adapters (one micro-batch, one rank).
struct TrainingModel::LayerKernels {
    detail::KernelPass qkv, out, attn;
    double attn_sel = 0;   ///< what selective recomputation adds (unfused attention only)
    double mats = 2;       ///< weight matrices of the MLP (3 gated)
    double norm_rows = 0;  ///< rows of the norms and residuals (÷ t with sequence parallelism)
    double base_elems = 0; ///< elements the norms, residuals, masks and RoPE stream
    double launch_fwd = 0, launch_bwd = 0;
    double lora_fwd = 0, lora_mem = 0;
    bool frozen = false; ///< the base weights get no gradient (LoRA, QLoRA)
};

} // namespace gpuplan::model
