// The training model's view of one layout: per-rank parameters and activations of each kind of
// layer, the forward, backward and recomputation times of one micro-batch on the calibrated
// roofline (model/kernel_time.hpp), and the communication of each parallel group
// (model/comm.hpp). Sources are cited where each formula is used.

#include "model/comm.hpp"
#include "model/detail/shapes.hpp"
#include "model/detail/training_parts.hpp"
#include "model/kernel_time.hpp"
#include "model/moe.hpp"
#include "model/training.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::model {

namespace {

using detail::d;
using detail::KernelPass;

// FlashAttention-2 backward runs 5 matrix multiplies against the forward's 2 (Dao 2023, §3.1):
// 2.5× the forward FLOPs.
constexpr double kFlashBackwardFactor = 2.5;
// Kernels per layer in a training step [U]: fused QKV, rotary, attention, out-proj, two
// bias-dropout-add or residual kernels, two norms, up/gate, activation, down; the backward
// launches about twice as many.
constexpr double kFwdKernelsPerLayer = 12.0;
constexpr double kBwdKernelsPerLayer = 24.0;
// Vocab-parallel cross entropy: fp32 logits read about three times (max, softmax, gradient)
// (Megatron-LM tensor_parallel/cross_entropy.py), three small all-reduces of per-token scalars.
constexpr double kCrossEntropyPasses = 3.0;
constexpr double kCrossEntropyCollectives = 3.0;

bool is_rope(const ModelSpec& m) {
    return m.position == PositionKind::Rope;
}

// The seconds recomputation adds to a layer whose forward takes `fwd`: all of it (full), the
// unfused attention core (selective), or nothing.
double recompute_time(Recompute rc, double fwd, double attn_sel) {
    return rc == Recompute::Full ? fwd : (rc == Recompute::Selective ? attn_sel : 0.0);
}

// The memory-roof seconds recomputation adds: the forward's (full) or the unfused attention's.
double recompute_memory(Recompute rc, bool flash, double fwd, double attn_mf) {
    return rc == Recompute::Full ? fwd : (rc == Recompute::Selective && !flash ? attn_mf : 0.0);
}

} // namespace

TrainingModel::Geometry TrainingModel::geometry(const TrainingLayout& l) const noexcept {
    const detail::Shapes sh = detail::make_shapes(model_, Parallelism{l.tp, l.pp, l.dp, l.ep});
    Geometry g = layout_geometry(l, sh);
    set_activations(g, l, sh);
    // ---- Times of one micro-batch on one rank ----
    const LayerKernels k = layer_kernels(g, l, sh);
    set_dense_times(g, l, sh, k);
    if (sh.moe) {
        set_moe_times(g, l, sh, k);
    }
    set_edge_times(g, l, sh, k.norm_rows);
    // ---- Communication of one micro-batch ----
    set_comm_times(g, l, sh, k.attn);
    return g;
}

TrainingModel::Geometry TrainingModel::layout_geometry(const TrainingLayout& l,
                                                       const detail::Shapes& sh) const noexcept {
    Geometry g;
    g.tp = l.tp;
    g.pp = l.pp;
    g.dp = l.dp;
    g.cp = l.cp;
    g.ep = l.ep;
    g.nd = l.dp * l.cp;
    g.m = static_cast<int>(std::max<long long>(
        1,
        cfg_.global_batch / std::max<long long>(1, static_cast<long long>(l.dp) * l.micro_batch)));
    g.sp = l.sequence_parallel && l.tp > 1;
    const double t = d(l.tp);
    g.rows = d(l.micro_batch) * d(cfg_.seq_len) / d(l.cp);
    g.base = model_.layers / l.pp;
    g.extra = model_.layers % l.pp;
    g.first_moe =
        model_.moe ? std::clamp(model_.moe->first_dense_layers, 0, model_.layers) : model_.layers;
    g.windowed_share = model_.layers > 0 ? d(sh.windowed_layers) / d(model_.layers) : 0.0;

    // Parameters per rank and layer.
    g.attn = sh.attn_linear + sh.attn_small + sh.norms;
    g.attn_linear = sh.attn_linear;
    g.dense = sh.dense_linear + sh.dense_small;
    g.dense_linear = sh.dense_linear;
    g.moe_shared = sh.router + sh.shared_linear_rank + sh.shared_small_rank;
    g.experts = sh.experts_rank * sh.expert_shard * (sh.expert_linear + sh.expert_small);
    g.moe_linear = sh.shared_linear_rank + sh.experts_rank * sh.expert_shard * sh.expert_linear;
    // Vocab-parallel embedding on the first stage; the LM head on the last, where a tied
    // embedding is kept as a second copy when pp > 1 (Megatron shares it by an all-reduce).
    g.emb = sh.embedding / t;
    g.head = (sh.lm_head > 0 ? sh.lm_head : (l.pp > 1 ? sh.vocab * sh.h : 0.0)) / t + sh.final_norm;
    g.lora_layer = cfg_.method != FinetuneMethod::Full ? lora_layer_ / t : 0.0;
    return g;
}

void TrainingModel::set_activations(Geometry& g, const TrainingLayout& l,
                                    const detail::Shapes& sh) const noexcept {
    const double t = d(l.tp);
    const double s = d(cfg_.seq_len);
    const double h = sh.h;
    const double rows = g.rows;
    const detail::ActRow dense_row =
        detail::activation_row(model_, cfg_.flash_attention, cfg_.dropout, false);
    const detail::ActRow moe_row =
        detail::activation_row(model_, cfg_.flash_attention, cfg_.dropout, true);
    using detail::layer_activation_bytes;
    g.act_dense = layer_activation_bytes(dense_row, rows, s, h, l.tp, g.sp, l.recompute);
    g.act_moe = layer_activation_bytes(moe_row, rows, s, h, l.tp, g.sp, l.recompute);
    g.act_full_dense = layer_activation_bytes(dense_row, rows, s, h, l.tp, g.sp, Recompute::None);
    g.act_full_moe = layer_activation_bytes(moe_row, rows, s, h, l.tp, g.sp, Recompute::None);
    // The adapters' A outputs (r per module, 16 bit) are stored for B's weight gradient.
    g.act_lora =
        cfg_.method != FinetuneMethod::Full ? rows * 2.0 * d(cfg_.lora.rank) * lora_modules_ : 0.0;
    // Korthikanti §4.3: the embedding dropout mask on the first stage; on the last, the final
    // norm and LM-head inputs (4sbh/t) and the fp32 logits of the cross entropy (4sbV/t), with
    // the 16-bit logits (2sbV/t) alive while they are cast.
    g.act_first = cfg_.dropout ? rows * h / (g.sp ? t : 1.0) : 0.0;
    g.act_last = rows * 4.0 * h / (g.sp ? t : 1.0);
    g.logits = rows * 6.0 * sh.vocab / t;
}

// A linear layer: forward, and the backward's data gradient and (when trained) weight gradient,
// each as large as the forward (Narayanan et al. 2021 §5.1: backward = 2 × forward); QLoRA first
// dequantizes its 4-bit weight to 16 bit (read packed, write 16-bit) in every pass
// (bitsandbytes dequantize_4bit before the matmul).
KernelPass TrainingModel::linear_pass(double m, double k, double n, bool frozen) const noexcept {
    KernelPass p;
    if (m <= 0 || k <= 0 || n <= 0) {
        return p;
    }
    const ComputeType ct = cfg_.compute;
    const FlopsPerSecond peak(peak_);
    const BytesPerSecond bw(bw_);
    const KernelTime f = gemm_kernel_time(m, k, n, wb_, 2.0, ct, peak, bw, prof_);
    const KernelTime dg = gemm_kernel_time(m, n, k, wb_, 2.0, ct, peak, bw, prof_);
    const KernelTime wg = gemm_kernel_time(k, m, n, 2.0, 2.0, ct, peak, bw, prof_);
    p.fwd = f.time.si();
    p.mf = f.memory.si();
    p.bwd = dg.time.si() + (frozen ? 0.0 : wg.time.si());
    p.mb = dg.memory.si() + (frozen ? 0.0 : wg.memory.si());
    if (frozen && cfg_.method == FinetuneMethod::Qlora) {
        const double deq =
            stream_kernel_time(k * n * (frozen_bits_ / 8.0 + 2.0), bw, prof_).time.si();
        p.fwd += deq;
        p.bwd += deq;
        p.mf += deq;
        p.mb += deq;
    }
    return p;
}

// The attention core of one layer whose queries see at most `window` keys (0: all).
KernelPass TrainingModel::attention_core(const TrainingLayout& l, const detail::Shapes& sh,
                                         double window) const noexcept {
    const double s = d(cfg_.seq_len);
    const double b = d(l.micro_batch);
    const double rows = b * s / d(l.cp);
    const BytesPerSecond bw(bw_);
    const double heads_flops = 2.0 * sh.heads_rank * (sh.qk_dim + sh.v_dim);
    KernelPass p;
    if (cfg_.flash_attention) {
        // FlashAttention over causal pairs; context parallelism splits them evenly
        // (load-balanced ring attention, Megatron-Core).
        const FlopsPerSecond peak_attn(peak_attn_);
        const double pairs = causal_query_key_pairs(0, s, window);
        const double flops = heads_flops * pairs * b / d(l.cp);
        const double bytes = rows * (sh.q_width_rank + sh.kv_width_rank + sh.o_in_rank) * 2.0 +
                             (l.cp > 1 ? (s - s / d(l.cp)) * b * sh.kv_width_rank * 2.0 : 0.0);
        const double x = std::sqrt(2.0 * pairs);
        const KernelTime f = attention_prefill_kernel_time(flops, bytes, x, peak_attn, bw, prof_);
        const KernelTime bk = attention_prefill_kernel_time(kFlashBackwardFactor * flops,
                                                            2.0 * bytes, x, peak_attn, bw, prof_);
        p.fwd = f.time.si();
        p.bwd = bk.time.si();
        p.mf = f.memory.si();
        p.mb = bk.memory.si();
    } else {
        // Megatron's unfused path: two batched GEMMs over the full s × s square, then
        // scale-mask-softmax and dropout streaming the a·s² scores (2-byte writes and
        // reads, a 1-byte mask).
        const double keys_w = window > 0 ? std::min(s, window) : s;
        const double flops = heads_flops * rows * keys_w;
        const double gemm_ct =
            flops / (peak_attn_ * prof_.gemm.at(rows, sh.qk_dim * keys_w, ComputeType::Bf16));
        const double scores = sh.heads_rank * rows * keys_w;
        const double bytes = scores * (cfg_.dropout ? 13.0 : 8.0);
        const double st = stream_kernel_time(bytes, bw, prof_).time.si();
        p.fwd = gemm_ct + st;
        p.bwd = 2.0 * gemm_ct + 2.0 * st;
        p.mf = st;
        p.mb = 2.0 * st;
    }
    return p;
}

TrainingModel::LayerKernels TrainingModel::layer_kernels(const Geometry& g, const TrainingLayout& l,
                                                         const detail::Shapes& sh) const noexcept {
    const double t = d(l.tp);
    const double h = sh.h;
    const double rows = g.rows;
    LayerKernels k;
    k.frozen = cfg_.method != FinetuneMethod::Full;
    k.mats = model_.mlp == MlpKind::Gated ? 3.0 : 2.0;
    const double qkv_n = std::max(0.0, (sh.attn_linear - sh.o_in_rank * h) / h);
    k.qkv = linear_pass(rows, h, qkv_n, k.frozen);
    k.out = linear_pass(rows, sh.o_in_rank, h, k.frozen);

    // The attention core, full and windowed layers in their shares.
    const KernelPass full = attention_core(l, sh, 0);
    const KernelPass win = sh.window > 0 ? attention_core(l, sh, d(sh.window)) : full;
    const double w = g.windowed_share;
    k.attn.fwd = (1 - w) * full.fwd + w * win.fwd;
    k.attn.bwd = (1 - w) * full.bwd + w * win.bwd;
    k.attn.mf = (1 - w) * full.mf + w * win.mf;
    k.attn.mb = (1 - w) * full.mb + w * win.mb;
    k.attn_sel = cfg_.flash_attention ? 0.0 : k.attn.fwd;

    // Elementwise kernels: two norms (read x, write y) and two residual adds (read 2, write 1)
    // on the sequence-parallel rows, bias-dropout-add masks, the MLP activation (plain: read f,
    // write f; gated: read 2f, write f) and RoPE on Q and K. The backward streams about twice as
    // much (gradient and saved input in, gradient out).
    k.norm_rows = g.sp ? rows / t : rows;
    const double rope =
        is_rope(model_) ? 2.0 * rows * (sh.q_width_rank + sh.kv_width_rank / 2.0) : 0.0;
    k.base_elems = (2.0 * 2.0 + 2.0 * 3.0 + (cfg_.dropout ? 1.0 : 0.0)) * k.norm_rows * h + rope;
    k.launch_fwd = kFwdKernelsPerLayer * prof_.launch_overhead.si();
    k.launch_bwd = kBwdKernelsPerLayer * prof_.launch_overhead.si();

    // LoRA adapters: skinny GEMMs x·A then (x·A)·B per module; forward 2 FLOPs per adapter
    // parameter and token, backward twice that; memory: the module input, r and output widths.
    if (k.frozen) {
        const double flops = 2.0 * rows * lora_layer_ / t;
        const double bytes =
            rows * (lora_attn_in_ + lora_attn_out_ + lora_mlp_in_ + lora_mlp_out_) / t * 2.0;
        const double c = flops / (peak_ * prof_.gemm.at(rows, h * d(cfg_.lora.rank), cfg_.compute));
        const double mt = stream_kernel_time(bytes, BytesPerSecond(bw_), prof_).time.si();
        k.lora_fwd = std::max(c, mt) + 2.0 * lora_modules_ * prof_.launch_overhead.si();
        k.lora_mem = mt;
    }
    return k;
}

namespace {

// Elements the MLP activation streams for r rows of width f (plain: read f, write f; gated:
// read 2f, write f).
double act_elems(double mats, double r, double f) {
    return (mats == 3.0 ? 3.0 : 2.0) * r * f;
}

} // namespace

void TrainingModel::set_dense_times(Geometry& g, const TrainingLayout& l, const detail::Shapes& sh,
                                    const LayerKernels& k) const noexcept {
    const double h = sh.h;
    const double rows = g.rows;
    const KernelPass up = linear_pass(rows, h, (k.mats - 1.0) * sh.ffn_rank, k.frozen);
    const KernelPass down = linear_pass(rows, sh.ffn_rank, h, k.frozen);
    const double elem_dense =
        stream_kernel_time(2.0 * (k.base_elems + act_elems(k.mats, rows, sh.ffn_rank)),
                           BytesPerSecond(bw_), prof_)
            .time.si();
    g.fwd_dense = k.qkv.fwd + k.out.fwd + up.fwd + down.fwd + k.attn.fwd + elem_dense +
                  k.launch_fwd + k.lora_fwd;
    g.bwd_dense = k.qkv.bwd + k.out.bwd + up.bwd + down.bwd + k.attn.bwd + 2.0 * elem_dense +
                  k.launch_bwd + 2.0 * k.lora_fwd;
    g.rec_dense = recompute_time(l.recompute, g.fwd_dense, k.attn_sel);
    const double mem_fwd_common = k.qkv.mf + k.out.mf + k.attn.mf + k.lora_mem;
    const double mem_bwd_common = k.qkv.mb + k.out.mb + k.attn.mb + 2.0 * k.lora_mem;
    const double fwd = mem_fwd_common + up.mf + down.mf + elem_dense;
    const double rec = recompute_memory(l.recompute, cfg_.flash_attention, fwd, k.attn.mf);
    g.mem_dense = fwd + mem_bwd_common + up.mb + down.mb + 2.0 * elem_dense + rec;
}

double TrainingModel::moe_imbalance(double tokens, int ep) const noexcept {
    if (cfg_.moe_load_imbalance) {
        return ep > 1 ? *cfg_.moe_load_imbalance : 1.0;
    }
    if (ep <= 1 || !model_.moe) {
        return 1.0;
    }
    const double z = static_cast<std::size_t>(ep) < max_normal_.size()
                         ? max_normal_[static_cast<std::size_t>(ep)]
                         : expected_max_std_normal(ep);
    return moe_rank_imbalance(tokens, d(model_.moe->experts), d(model_.moe->active_experts), ep, z);
}

void TrainingModel::set_moe_times(Geometry& g, const TrainingLayout& l, const detail::Shapes& sh,
                                  const LayerKernels& k) const noexcept {
    const double h = sh.h;
    const double rows = g.rows;
    const double mats = k.mats;
    // Routed experts: each rank computes rows × top-k token copies spread over its experts, as
    // one grouped GEMM with copies / experts_rank rows per expert (per expert, not pooled), on
    // the roofline of model/kernel_time.hpp with the grouped row curve (gemm_grouped); the
    // backward is twice the forward unless frozen.
    // With expert parallelism the EP group routes rows × ep tokens and the busiest rank sets
    // the pace: it computes its imbalance (model/moe.hpp) times the mean.
    const double copies = rows * sh.top_k * moe_imbalance(rows * d(l.ep), l.ep);
    const double per_expert_rows = copies / std::max(1.0, sh.experts_rank);
    const double fe = sh.expert_ffn_rank;
    const auto expert_pass = [&](double flops_mult) {
        return matmul_kernel_time(
            flops_mult * 2.0 * copies * mats * h * fe, flops_mult * sh.experts_rank * mats * h * fe,
            wb_, flops_mult * copies * (2.0 * h + 2.0 * mats * fe) * 2.0, per_expert_rows, h * fe,
            cfg_.compute, GemmPath::Grouped, FlopsPerSecond(peak_), BytesPerSecond(bw_), prof_);
    };
    const KernelTime ef = expert_pass(1.0);
    const KernelTime eb = expert_pass(k.frozen ? 1.0 : 2.0);
    const KernelPass experts{ef.time.si(), eb.time.si(), ef.memory.si(), eb.memory.si()};
    const KernelPass router =
        linear_pass(rows, h, sh.experts_rank > 0 ? d(sh.experts) : 0.0, k.frozen);
    const double shared_f = sh.shared_experts > 0 ? sh.shared_linear_rank / (mats * h) : 0.0;
    const KernelPass sup = linear_pass(rows, h, (mats - 1.0) * shared_f, k.frozen);
    const KernelPass sdown = linear_pass(rows, shared_f, h, k.frozen);
    const double elem_moe =
        stream_kernel_time(2.0 * (k.base_elems + act_elems(mats, copies, fe) +
                                  act_elems(mats, rows, shared_f) + 2.0 * copies * h),
                           BytesPerSecond(bw_), prof_)
            .time.si();
    g.fwd_moe = k.qkv.fwd + k.out.fwd + k.attn.fwd + experts.fwd + router.fwd + sup.fwd +
                sdown.fwd + elem_moe + k.launch_fwd + k.lora_fwd;
    g.bwd_moe = k.qkv.bwd + k.out.bwd + k.attn.bwd + experts.bwd + router.bwd + sup.bwd +
                sdown.bwd + 2.0 * elem_moe + k.launch_bwd + 2.0 * k.lora_fwd;
    g.rec_moe = recompute_time(l.recompute, g.fwd_moe, k.attn_sel);
    const double mem_fwd_common = k.qkv.mf + k.out.mf + k.attn.mf + k.lora_mem;
    const double mem_bwd_common = k.qkv.mb + k.out.mb + k.attn.mb + 2.0 * k.lora_mem;
    const double fwd = mem_fwd_common + experts.mf + router.mf + sup.mf + sdown.mf + elem_moe;
    const double rec = recompute_memory(l.recompute, cfg_.flash_attention, fwd, k.attn.mf);
    g.mem_moe =
        fwd + mem_bwd_common + experts.mb + router.mb + sup.mb + sdown.mb + 2.0 * elem_moe + rec;
}

void TrainingModel::set_edge_times(Geometry& g, const TrainingLayout& l, const detail::Shapes& sh,
                                   double norm_rows) const noexcept {
    const double t = d(l.tp);
    const double h = sh.h;
    const double rows = g.rows;
    const BytesPerSecond bw(bw_);
    // First stage: the embedding gather (read the rows of the table, write the activations);
    // its backward scatters the gradient back.
    const double emb = stream_kernel_time(rows * h * 4.0, bw, prof_).time.si();
    g.fwd_first = emb;
    g.bwd_first = 2.0 * emb;
    g.mem_first = 3.0 * emb;
    // Last stage: final norm, LM head, vocab-parallel cross entropy on fp32 logits.
    const bool frozen = cfg_.method != FinetuneMethod::Full;
    const KernelPass headp = linear_pass(rows, h, sh.vocab / t, frozen);
    const double ce =
        stream_kernel_time(rows * sh.vocab / t * 4.0 * kCrossEntropyPasses, bw, prof_).time.si();
    const double norm = stream_kernel_time(2.0 * 2.0 * norm_rows * h, bw, prof_).time.si();
    g.fwd_last = headp.fwd + norm + ce * 2.0 / 3.0;
    g.bwd_last = headp.bwd + 2.0 * norm + ce / 3.0;
    g.rec_last = l.recompute == Recompute::Full ? headp.fwd : 0.0;
    g.mem_last =
        headp.mf + headp.mb + 3.0 * norm + ce + (l.recompute == Recompute::Full ? headp.mf : 0.0);
}

void TrainingModel::set_comm_times(Geometry& g, const TrainingLayout& l, const detail::Shapes& sh,
                                   const KernelPass& attn) const noexcept {
    const double t = d(l.tp);
    const double h = sh.h;
    const double rows = g.rows;
    const double ov = prof_.comm.collective_overhead.si();
    const double repeats = 4.0 + (l.recompute == Recompute::Full ? 2.0 : 0.0);
    const auto link = [&](int size, int stride, double msg) {
        return Link{BytesPerSecond(link_bw(size, stride, msg)), Seconds(link_lat(size, stride)),
                    false};
    };
    if (l.tp > 1) {
        // Megatron-LM (Shoeybi et al. 2019 §3): two all-reduces of the b·s·h activations per
        // layer in the forward and two in the backward; with sequence parallelism each becomes
        // an all-gather plus a reduce-scatter of the same volume (Korthikanti §4.2.2). Full
        // recomputation repeats the forward's two. Not overlapped with compute.
        const double msg = rows * h * 2.0;
        const Link tp_link = link(l.tp, 1, msg);
        const double one =
            g.sp ? 2.0 * (all_gather_time(Bytes(msg), l.tp, tp_link).si() + ov)
                 : all_reduce_time(Bytes(msg), l.tp, tp_link, AllReduceAlgorithm::Ring).si() + ov;
        g.tp_layer = one * repeats;
        g.tp_first = one;                                // vocab-parallel embedding
        g.tp_last = one + kCrossEntropyCollectives * ov; // LM-head input and the loss
    }
    if (l.ep > 1 && sh.moe) {
        // Expert dispatch and combine all-to-all of the top-k token copies, forward and backward
        // (plus the recomputed forward).
        // The busiest rank receives (and returns) its imbalance times the mean.
        const double per_gpu = rows * sh.top_k * h * 2.0 * moe_imbalance(rows * d(l.ep), l.ep);
        const double each =
            all_to_all_time(Bytes(per_gpu), l.ep, link(l.ep, l.tp * l.cp, per_gpu)).si() + ov;
        g.ep_layer = each * repeats;
    }
    if (l.cp > 1) {
        // Ring attention (Liu et al. 2023; Megatron-Core context parallelism): cp − 1 exchanges
        // of the local K and V per layer in the forward, K, V and their gradients in the
        // backward, overlapped with the attention blocks; only the excess is exposed.
        const double kv_bytes = rows * sh.kv_width_rank * 2.0;
        const double fwd =
            (l.cp - 1.0) * p2p_time(Bytes(kv_bytes), link(l.cp, l.tp, kv_bytes)).si();
        g.cp_layer = std::max(0.0, fwd - attn.fwd) + std::max(0.0, 2.0 * fwd - attn.bwd) +
                     (l.recompute == Recompute::Full ? std::max(0.0, fwd - attn.fwd) : 0.0);
    }
    if (l.pp > 1) {
        // Each stage receives the activations and sends the gradient of every micro-batch;
        // Megatron's scatter/gather optimization sends 1/t of the b·s·h tensor per rank
        // (Narayanan et al. 2021 §4.1).
        const double msg = rows * h * 2.0 / t;
        const int stride = l.tp * l.cp * l.dp;
        g.pp_mb = 2.0 * (p2p_time(Bytes(msg), link(l.pp, stride, msg)).si() + ov);
    }
}

double TrainingModel::link_bw(int size, int stride, double message) const noexcept {
    const Link link = group_link(hw_, size, stride); // check() made sure a network exists
    return effective_link(link, Bytes(message), prof_.comm).bandwidth.si();
}

double TrainingModel::link_lat(int size, int stride) const noexcept {
    return group_link(hw_, size, stride).latency.si();
}

} // namespace gpuplan::model
