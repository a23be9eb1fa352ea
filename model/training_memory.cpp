// Memory per GPU of a training layout: model states under ZeRO/FSDP (Rajbhandari et al. 2020),
// stored activations (Korthikanti et al. 2022), communication buffers and runtime overheads, for
// each pipeline stage.

#include "model/detail/training_parts.hpp"
#include "model/memory.hpp"
#include "model/training.hpp"

#include <algorithm>
#include <vector>

namespace gpuplan::model {

namespace {

using detail::ActRow;
using detail::d;
using detail::StageShape;

// Megatron-Core DDP gradient bucket: max(40M, 1M × dp) elements
// (megatron/core/distributed/distributed_data_parallel_config.py, bucket_size), 16-bit here.
constexpr double kBucketElements = 40e6;
constexpr double kBucketPerRank = 1e6;
// ZeRO-3 / FSDP hold the layer being computed and the prefetched next one unsharded (FSDP
// forward/backward prefetch of one unit; DeepSpeed stage3_prefetch_bucket_size), and one layer's
// unsharded gradients before their reduce-scatter.
constexpr double kZero3GatheredLayers = 2.0;
constexpr double kZero3GradLayers = 1.0;

// Micro-batches whose activations stage k holds. 1F1B: at most p − k (Narayanan et al. 2021
// §2.2.1), never more than there are. Interleaved with v chunks per stage, Megatron's warm-up
// runs 2(p − k − 1) + (v − 1)·p chunk forwards before the first backward, each chunk 1/v of the
// stage's layers: ((v − 1)·p + 2(p − k) − 1)/v stage-worths (p + (p − 1)/v on the first stage,
// Korthikanti et al. 2022 §4.2.3: L·(1 + (p − 1)/(p·v))).
double in_flight(int virtual_stages, int pp, int m, int stage) {
    if (virtual_stages > 1) {
        const double v = d(virtual_stages);
        return ((v - 1.0) * pp + 2.0 * (pp - stage) - 1.0) / v;
    }
    return std::min(m, pp - stage);
}

// Gradient buckets with data parallelism over nd ranks, and ZeRO-3's unsharded layers (of
// `layer` parameters, the largest layer).
double buffer_bytes(int nd, bool z3, double layer) {
    double buffers = 0;
    if (nd > 1) {
        buffers += 2.0 * std::max(kBucketElements, kBucketPerRank * d(nd));
    }
    if (z3) {
        buffers += (kZero3GatheredLayers + kZero3GradLayers) * 2.0 * layer;
    }
    return buffers;
}

} // namespace

namespace detail {

double moment_bytes(TrainOptimizer o) {
    switch (o) {
    case TrainOptimizer::Adam: return 8.0;     // two fp32 moments (ZeRO §3.1: K = 12 with master)
    case TrainOptimizer::Adam8bit: return 2.0; // Dettmers et al. 2022: two 8-bit block-wise states
    case TrainOptimizer::SgdMomentum: return 4.0;
    }
    return 8.0;
}

ActRow activation_row(const ModelSpec& m, bool flash, bool dropout, bool moe_layer) {
    const double h = d(m.hidden_size);
    const double a = d(m.heads);
    double qk = d(m.head_dim);
    double v = d(m.head_dim);
    double kv = d(m.kv_heads);
    if (m.attention == AttentionKind::Mla && m.mla) {
        qk = d(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim);
        v = d(m.mla->v_head_dim);
        kv = a; // prefill materializes per-head K and V from the latent
    }
    ActRow r;
    // Two norm inputs (2 × 2h), the QKV input and the MLP input (2h each), dropout masks after
    // attention and MLP (1 byte each).
    r.replicated = 4.0 * h + 2.0 * h + 2.0 * h + (dropout ? 2.0 * h : 0.0);
    // Q and K for QKᵀ, V, the out-projection input.
    r.split = 2.0 * (a * qk + kv * qk) + 2.0 * kv * v + 2.0 * a * v;
    const bool gated = m.mlp == MlpKind::Gated;
    // Plain MLP: the activation's input and output (2f + 2f, GELU: 8sbh + 8sbh for f = 4h);
    // gated: gate, up and their product (6f).
    const auto mlp = [&](double f) { return (gated ? 6.0 : 4.0) * f; };
    if (moe_layer && m.moe) {
        const MoeSpec& e = *m.moe;
        const double fe = d(e.expert_ffn_size);
        // Each token is dispatched to top-k experts: a permuted copy of its input (2h) and the
        // expert's MLP activations per copy; shared experts see every token; fp32 router probs.
        r.split += d(e.active_experts) * (2.0 * h + mlp(fe)) + d(e.shared_experts) * mlp(fe) +
                   4.0 * d(e.experts);
    } else {
        r.split += mlp(d(m.ffn_size));
    }
    if (flash) {
        // FlashAttention keeps only O (the out-projection input, counted) and the fp32
        // log-sum-exp per head.
        r.split += 4.0 * a;
    } else {
        // Softmax output (2 bytes), dropout mask (1) and dropout output (2) per head and key:
        // 5as per token (2as without dropout).
        r.square = (dropout ? 5.0 : 2.0) * a;
    }
    return r;
}

double layer_activation_bytes(const ActRow& r, double rows, double keys, double h, int tp, bool sp,
                              Recompute rc) {
    const double t = d(tp);
    const double rep_div = sp && tp > 1 ? t : 1.0;
    if (rc == Recompute::Full) {
        // Only the layer input, 2sbh (÷ t when sequence parallel keeps it sharded).
        return rows * 2.0 * h / rep_div;
    }
    double per_row = r.replicated / rep_div + r.split / t;
    if (rc == Recompute::None) {
        per_row += r.square * keys / t;
    }
    return rows * per_row;
}

StageShape stage_shape(int pp, int base, int extra, int first_moe, int k) {
    StageShape st;
    const auto bonus = [&](int j) { return pp - j >= 2 && pp - j <= extra + 1; };
    st.layers = base + (bonus(k) ? 1 : 0);
    const int before = std::clamp(k - (pp - 1 - extra), 0, extra);
    const int first = k * base + before;
    st.moe = std::max(0, first + st.layers - std::max(first, first_moe));
    st.moe = std::min(st.moe, st.layers);
    st.first = k == 0;
    st.last = k == pp - 1;
    return st;
}

} // namespace detail

double optimizer_state_bytes(TrainOptimizer optimizer, bool master_weights_fp32) {
    // ZeRO §3.1: mixed-precision Adam keeps an fp32 copy of the parameters, momentum and
    // variance: K = 4 + 4 + 4 = 12.
    return (master_weights_fp32 ? 4.0 : 0.0) + detail::moment_bytes(optimizer);
}

ModelStates zero_model_states(double params, double k, int stage, int nd) {
    // ZeRO §5.1–5.3 and Fig. 1: P_os shards KΨ, P_os+g also 2Ψ of gradients, P_os+g+p also 2Ψ of
    // parameters, each over Nd data-parallel ranks.
    const double n = std::max(1, nd);
    ModelStates s;
    s.weights = Bytes(2.0 * params / (stage >= 3 ? n : 1.0));
    s.gradients = Bytes(2.0 * params / (stage >= 2 ? n : 1.0));
    s.optimizer = Bytes(k * params / (stage >= 1 ? n : 1.0));
    return s;
}

Bytes activation_bytes_per_layer(const ModelSpec& m, const ActivationShape& s, bool moe_layer) {
    const ActRow r = detail::activation_row(m, s.flash_attention, s.dropout, moe_layer);
    const int cp = std::max(1, s.cp);
    const double rows = d(s.micro_batch) * d(s.seq) / cp;
    return Bytes(detail::layer_activation_bytes(
        r, rows, d(s.seq), d(m.hidden_size), std::max(1, s.tp), s.sequence_parallel, s.recompute));
}

StageMemory TrainingModel::memory_of(const TrainingLayout& l, const Geometry& g,
                                     int stage) const noexcept {
    const StageShape st = detail::stage_shape(g.pp, g.base, g.extra, g.first_moe, stage);
    const double dense_layers = st.layers - st.moe;
    const double moe_layers = st.moe;
    const double nd = d(g.nd);
    const double params = dense_layers * (g.attn + g.dense) +
                          moe_layers * (g.attn + g.moe_shared + g.experts) +
                          (st.first ? g.emb : 0.0) + (st.last ? g.head : 0.0);
    StageMemory r;
    r.stage = stage;
    r.layers = st.layers;
    r.in_flight = in_flight(l.virtual_stages, g.pp, g.m, stage);
    const bool z3 = l.zero >= 3, z2 = l.zero >= 2, z1 = l.zero >= 1;
    if (cfg_.method == FinetuneMethod::Full) {
        // ZeRO §3.1, §5: 16-bit weights (2Ψ) and gradients (2Ψ), optimizer states KΨ.
        r.weights = Bytes(2.0 * params / (z3 ? nd : 1.0));
        r.gradients = Bytes(2.0 * params / (z2 ? nd : 1.0));
        r.optimizer_states = Bytes(k_ * params / (z1 ? nd : 1.0));
    } else {
        // The frozen base: linear weights at 16 bit (LoRA) or NF4 (QLoRA), the rest 16 bit;
        // adapters in 16 bit with their gradients and optimizer states.
        const double linear = dense_layers * (g.attn_linear + g.dense_linear) +
                              moe_layers * (g.attn_linear + g.moe_linear);
        const double adapters = d(st.layers) * g.lora_layer;
        const double base = linear * frozen_bits_ / 8.0 + (params - linear) * 2.0;
        r.weights = Bytes(base / (z3 ? nd : 1.0) + 2.0 * adapters / (z3 ? nd : 1.0));
        r.gradients = Bytes(2.0 * adapters / (z2 ? nd : 1.0));
        r.optimizer_states = Bytes(k_ * adapters / (z1 ? nd : 1.0));
    }
    const double per_mb_full = dense_layers * g.act_dense + moe_layers * g.act_moe +
                               d(st.layers) * g.act_lora + (st.first ? g.act_first : 0.0) +
                               (st.last ? g.act_last : 0.0);
    double act = r.in_flight * per_mb_full;
    if (l.recompute == Recompute::Full) {
        // The backward rematerializes one layer's full activations at a time.
        act += std::max(moe_layers > 0 ? g.act_full_moe : 0.0,
                        dense_layers > 0 ? g.act_full_dense : 0.0);
    }
    r.activations = Bytes(act);
    r.logits = Bytes(st.last ? g.logits : 0.0);
    const double buffers =
        buffer_bytes(g.nd, z3, g.attn + std::max(g.dense, g.moe_shared + g.experts));
    r.buffers = Bytes(buffers);
    r.runtime = Bytes(runtime_);
    r.fragmentation = Bytes(frag_ * (act + r.logits.si() + buffers));
    r.total = r.weights + r.gradients + r.optimizer_states + r.activations + r.logits + r.buffers +
              r.runtime + r.fragmentation;
    r.capacity = cuda_visible_memory(hw_.gpu);
    r.free = r.capacity - r.total;
    r.fits = r.total <= r.capacity;
    return r;
}

std::vector<StageMemory> TrainingModel::stage_memory(const TrainingLayout& layout) const {
    std::vector<StageMemory> out;
    TrainingLayout l = layout;
    l.sequence_parallel = layout.sequence_parallel && layout.tp > 1;
    if (check(l) != LayoutIssue::None) {
        return out;
    }
    const Geometry g = geometry(l);
    out.reserve(static_cast<std::size_t>(g.pp));
    for (int k = 0; k < g.pp; ++k) {
        out.push_back(memory_of(l, g, k));
    }
    return out;
}

} // namespace gpuplan::model
