#include "model/step_cost.hpp"

#include "model/comm.hpp"
#include "model/detail/shapes.hpp"
#include "model/error.hpp"
#include "model/kernel_time.hpp"
#include "model/lora.hpp"
#include "model/moe.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace gpuplan::model {

namespace {

// Per-element work of the elementwise kernels, in FLOPs (counted for completeness; their time
// comes from the bytes). RMSNorm: square, sum, scale, multiply by the weight.
constexpr double kNormFlops = 4.0;
// SiLU(gate) × up: the sigmoid's exp and divide plus two multiplies, ~4 FLOPs per output.
constexpr double kActFlops = 4.0;
// RoPE: a complex rotation per element pair, ~3 FLOPs per element.
constexpr double kRopeFlops = 3.0;
// The sampler reads the fp32 logits about three times (temperature/penalties, softmax,
// top-p/top-k sort) and runs ~5 kernels (vllm/v1/sample/sampler.py) [U].
constexpr double kSamplerPasses = 3.0;
constexpr double kSamplerFlops = 5.0;
constexpr int kSamplerKernels = 5;
constexpr double kLogitBytes = 4.0;

// Kernels per layer and operator in vLLM's CUDA path: fused QKV GEMM + rotary; cache write
// (reshape_and_cache) + attention; o_proj; fused gate_up GEMM + SiluAndMul + down; MoE: gate GEMM
// + topk softmax, then align/sort, two grouped GEMMs, activation and combine (fused_moe.py).
constexpr int kQkvKernels = 2;
constexpr int kMlaQkvKernels = 6;
constexpr int kAttentionKernels = 2;
constexpr int kMlpKernels = 3;
constexpr int kRouterKernels = 2;
constexpr int kExpertKernels = 5;

double d(int v) {
    return static_cast<double>(v);
}

FlopsPerSecond peak_for(const AcceleratorSpec& g, ComputeType t) {
    if (auto p = kernel_peak(g, t)) {
        return *p;
    }
    throw InvalidArgument("accelerator '" + g.name + "' has no dense peak for " +
                          std::string(to_string(t)) +
                          " or bf16/fp16/fp32; add dense.bf16 to its "
                          "hwdb entry");
}

void finish(OpCost& op, Seconds launch, bool comm) {
    op.overhead = launch * op.kernels;
    op.time += op.overhead;
    if (op.time.si() <= 0) {
        op.bound = Bound::None;
    } else if (comm) {
        op.bound = Bound::Communication;
    } else if (op.overhead > std::max(op.compute_time, op.memory_time)) {
        op.bound = Bound::Overhead;
    } else {
        op.bound = op.compute_time >= op.memory_time ? Bound::Compute : Bound::Memory;
    }
}

} // namespace

const char* to_string(Op op) {
    switch (op) {
    case Op::Embedding: return "embedding";
    case Op::Norms: return "norms";
    case Op::QkvProj: return "qkv_proj";
    case Op::AttentionPrefill: return "attention_prefill";
    case Op::AttentionDecode: return "attention_decode";
    case Op::OutProj: return "out_proj";
    case Op::Residual: return "residual";
    case Op::Mlp: return "mlp";
    case Op::MoeRouter: return "moe_router";
    case Op::MoeExperts: return "moe_experts";
    case Op::MoeShared: return "moe_shared";
    case Op::LmHead: return "lm_head";
    case Op::Sampling: return "sampling";
    case Op::TpAllReduce: return "tp_all_reduce";
    case Op::PpSend: return "pp_send";
    case Op::EpAllToAll: return "ep_all_to_all";
    case Op::Lora: return "lora";
    }
    return "unknown";
}

const char* to_string(Bound bound) {
    switch (bound) {
    case Bound::None: return "none";
    case Bound::Compute: return "compute";
    case Bound::Memory: return "memory";
    case Bound::Communication: return "communication";
    case Bound::Overhead: return "overhead";
    }
    return "none";
}

double expected_experts_touched(double experts, double top_k, double tokens) {
    if (experts <= 0 || tokens <= 0) {
        return 0.0;
    }
    // Each token misses a given expert with probability (1 − k/E) (uniform routing, tokens
    // independent), so the expert sees no token with probability (1 − k/E)^T.
    return experts * (1.0 - std::pow(1.0 - top_k / experts, tokens));
}

StepCostModel::StepCostModel(const Deployment& dep, const EfficiencyProfile& profile)
    : prof_(profile) {
    validate(dep);
    engine_ = resolve_engine(dep);
    const detail::Shapes s = detail::make_shapes(dep.model, dep.par);
    tp_ = s.tp;
    pp_ = s.pp;
    ep_ = s.ep;
    layers_ = s.layers;
    moe_layers_ = s.moe_layers;
    dense_layers_ = s.dense_layers;
    win_layers_ = s.windowed_layers;
    // Recurrent layers have no attention core over the context (their projections are still
    // priced as attention's: docs/model.md, "Layer kinds").
    full_layers_ = s.layers - s.windowed_layers - s.state_layers;
    state_layers_ = s.state_layers;
    state_bytes_ = s.state_bytes;
    if (dep.model.state) {
        // Per head: a decode step updates and reads the key_dim x value_dim state (gated delta
        // rule: decay, rank-1 update and readout, about 6 flops per element; Mamba-2's
        // exp(dt A) h + dt B x and C h likewise); a prefill token also attends within its
        // chunk of 64 tokens (the chunked form of Yang et al. 2024, arXiv 2412.06464, §3, and
        // of Mamba-2's SSD, arXiv 2405.21060, §6).
        const StateSpec& st = *dep.model.state;
        const double heads_rank = static_cast<double>(st.heads) / s.tp;
        const double dk = st.key_dim;
        const double dv = st.value_dim;
        const double chunk = 64.0;
        state_decode_flops_ = 6.0 * heads_rank * dk * dv;
        state_prefill_flops_ = state_decode_flops_ + 2.0 * chunk * heads_rank * (dk + dv);
    }
    window_ = s.window;
    h_ = s.h;
    vocab_ = s.vocab;
    vocab_rank_ = s.vocab / s.tp;
    mla_ = s.mla;
    gated_ = s.gated;
    heads_rank_ = s.heads_rank;
    qk_dim_ = s.qk_dim;
    v_dim_ = s.v_dim;
    q_width_ = s.q_width_rank;
    kv_width_ = s.kv_width_rank;
    o_in_ = s.o_in_rank;
    q_lora_ = s.q_lora;
    kv_lora_ = s.kv_lora;
    rope_ = s.rope;
    nope_ = s.nope;
    ffn_rank_ = s.ffn_rank;
    norms_per_layer_ = dep.model.norms_per_layer;
    experts_ = s.experts;
    top_k_ = s.top_k;
    experts_rank_ = s.experts_rank;
    expert_shard_ = s.expert_shard;
    expert_ffn_rank_ = s.expert_ffn_rank;
    shared_ffn_rank_ =
        s.shared_experts * (s.moe ? dep.model.moe->expert_ffn_size : 0) / static_cast<double>(s.tp);
    kv_elems_ = s.kv_elems_rank;

    const Precisions& p = dep.prec;
    wb_ = p.weights.bytes_per_element();
    ab_ = std::max(2.0, p.activations.bytes_per_element());
    sb_ = p.weights.bits_per_element >= 16.0 ? wb_ : 2.0;
    eb_ = embedding_precision(p).bytes_per_element();
    kvb_ = p.kv_cache.bytes_per_element();
    gemm_type_ = gemm_compute_type(p);
    // Weight-only formats (GPTQ, AWQ, GGUF) run mixed-input kernels on the activation path.
    // So does a narrow format without tensor cores of its own: vLLM serves FP8 checkpoints on
    // Ampere through its FP8 Marlin kernel (weights dequantized to 16 bit in registers).
    auto native = [&dep](ComputeType c) {
        const auto peak = dep.gpu.dense.for_type(c);
        return peak && peak->si() > 0;
    };
    if (p.weights.weight_only) {
        gemm_path_ = GemmPath::WeightOnly;
    } else if (p.weights.bits_per_element < 16.0 && !native(gemm_type_)) {
        gemm_path_ = GemmPath::WeightOnly;
        gemm_type_ = native(p.activations.compute) && p.activations.bits_per_element >= 16.0
                         ? p.activations.compute
                         : ComputeType::Bf16;
    }
    // The kernel class sets the efficiency scale (model/gemm_class.hpp): a block-scaled format
    // (MXFP8, NVFP4, MXFP4) run natively is a class of its own; the peak stays its path's.
    gemm_class_ = gemm_path_ == GemmPath::WeightOnly ? model::gemm_class(gemm_type_)
                                                     : gemm_class_of(p.weights);
    peak_gemm_ = peak_for(dep.gpu, gemm_type_);
    peak_attn_ = peak_for(dep.gpu, p.activations.compute);
    attn_type_ = p.activations.compute;
    bandwidth_ = dep.gpu.memory_bandwidth;
    // The Triton fused_moe's padding and alignment kernels are not priced on AMD GPUs: there the
    // grouped curve is fitted on aiter's whole fused-MoE kernel times, its own sorting and padding
    // included (docs/engines.md §8), so adding them again would count them twice.
    triton_fused_moe_ = (engine_.kind == EngineKind::Vllm || engine_.kind == EngineKind::Sglang) &&
                        dep.gpu.vendor != "amd";
    nominal_peak_ = peak_gemm_;
    nominal_attn_ = peak_attn_;
    nominal_bandwidth_ = bandwidth_;
    // A power cap lowers the core clock: every FLOP rate scales with it; the achieved memory
    // bandwidth scales with its own (much smaller) factor (model/power.cpp, docs/power.md).
    clocks_ = dep.clocks;
    peak_gemm_ = peak_gemm_ * clocks_.compute;
    peak_attn_ = peak_attn_ * clocks_.compute;
    bandwidth_ = bandwidth_ * clocks_.memory;

    const Link tp_link = group_link(dep, tp_, 1);
    const Link pp_link = group_link(dep, pp_, tp_);
    const Link ep_link = group_link(dep, ep_, 1);
    tp_bw_ = tp_link.bandwidth.si();
    tp_lat_ = tp_link.latency.si();
    pp_bw_ = pp_link.bandwidth.si();
    pp_lat_ = pp_link.latency.si();
    ep_bw_ = ep_link.bandwidth.si();
    ep_lat_ = ep_link.latency.si();
    all_reduce_ = dep.engine.all_reduce;
    // Attention data parallel with expert parallelism (the DeepSeek-V3 and Qwen3-MoE serving
    // recipes: vLLM --data-parallel-size with --enable-expert-parallel, SGLang --enable-dp-
    // attention): an EP group of ep GPUs takes the tokens of ep / tp attention groups, each
    // running its own batch. The simulator and the estimate cost one replica's batch; the other
    // groups are taken to run a batch of the same size (a symmetric load).
    attn_groups_ = ep_ > tp_ ? d(ep_) / d(tp_) : 1.0;
    fixed_imbalance_ = dep.engine.moe_load_imbalance.value_or(0.0);
    imbalance_z_ = expected_max_std_normal(ep_);
    ep_overlap_ = dep.engine.ep_overlap.value_or(kDefaultEpOverlap);
    if (dep.engine.lora) {
        // Per rank, over every layer each module is in (model/lora.hpp), at the adapters' rank.
        const LoraServingConfig& lc = *dep.engine.lora;
        for (const LoraModule m : lc.target_modules) {
            const LoraModuleDims w = lora_rank_dims(dep, m);
            const double layers = d(lora_module_layers(dep.model, m));
            lora_elems_ += layers * lc.rank * (w.in + w.out);
            lora_io_ += layers * (w.in + 2.0 * w.out + 2.0 * lc.rank);
            lora_kernels_ += 2 * lora_module_layers(dep.model, m);
            lora_nk_ = std::max(lora_nk_, lc.rank * w.in);
        }
        lora_slots_ = lc.max_loras;
    }
}

void StepCostModel::add(BatchStats& s, const PrefillChunk& c) const noexcept {
    const double n = d(c.tokens);
    const double cached = d(c.cached_context);
    if (n <= 0) {
        return;
    }
    s.prefill_tokens += n;
    s.prefills += 1;
    s.prefill_pairs += causal_query_key_pairs(cached, n, 0);
    s.prefill_kv_read += cached + n;
    if (window_ > 0) {
        const double w = d(window_);
        s.prefill_pairs_windowed += causal_query_key_pairs(cached, n, w);
        s.prefill_kv_read_windowed += std::min(cached, w) + n;
    }
}

void StepCostModel::add(BatchStats& s, const DecodeSeq& q) const noexcept {
    add_decodes(s, 1, q.context);
}

void StepCostModel::add_decodes(BatchStats& s, int n, int context) const noexcept {
    if (n <= 0) {
        return;
    }
    const double c = std::max(1.0, d(context));
    s.decodes += n;
    s.decode_context += n * c;
    if (window_ > 0) {
        s.decode_context_windowed += n * std::min(c, d(window_));
    }
}

void StepCostModel::add_decode_sums(BatchStats& s, std::int64_t n, std::int64_t context,
                                    std::int64_t windowed) const noexcept {
    if (n <= 0) {
        return;
    }
    s.decodes += static_cast<double>(n);
    s.decode_context += static_cast<double>(context);
    if (window_ > 0) {
        s.decode_context_windowed += static_cast<double>(windowed);
    }
}

BatchStats StepCostModel::stats(std::span<const PrefillChunk> prefills,
                                std::span<const DecodeSeq> decodes) const noexcept {
    BatchStats s;
    for (const PrefillChunk& c : prefills) {
        add(s, c);
    }
    for (const DecodeSeq& q : decodes) {
        add(s, q);
    }
    return s;
}

StepCost StepCostModel::cost(std::span<const PrefillChunk> prefills,
                             std::span<const DecodeSeq> decodes) const noexcept {
    return cost(stats(prefills, decodes));
}

StepCost StepCostModel::cost(const Batch& b) const noexcept {
    return cost(std::span<const PrefillChunk>(b.prefills), std::span<const DecodeSeq>(b.decodes));
}

void StepCostModel::gemm(OpCost& op, double m, double k, double n, double weight_bytes,
                         double layers, Work& acc, bool replicated,
                         bool sixteen_bit) const noexcept {
    if (m <= 0 || k <= 0 || n <= 0 || layers <= 0) {
        return;
    }
    // The router and the LM head stay at 16 bit and run on the activation path.
    const FlopsPerSecond peak = sixteen_bit ? peak_attn_ : peak_gemm_;
    const GemmClass type = sixteen_bit ? model::gemm_class(attn_type_) : gemm_class_;
    const GemmPath path = sixteen_bit ? GemmPath::Dense : gemm_path_;
    const KernelTime kt =
        gemm_kernel_time(m, k, n, weight_bytes, ab_, type, peak, bandwidth_, prof_, path);
    const double flops = 2.0 * m * k * n;
    const double wbytes = k * n * weight_bytes;
    const double bytes = wbytes + (m * k + m * n) * ab_;
    op.flops += Flops(flops * layers);
    op.bytes += Bytes(bytes * layers);
    op.compute_time += kt.compute * layers;
    op.memory_time += kt.memory * layers;
    op.time += kt.time * layers;
    op.kernels += static_cast<int>(layers);
    acc.weights += wbytes * layers;
    acc.add_matmul(flops * layers);
    if (replicated) {
        acc.replicated += flops * layers;
    }
}

void StepCostModel::stream(OpCost& op, double bytes, double flops, double layers) const noexcept {
    if (bytes <= 0 || layers <= 0) {
        return;
    }
    const KernelTime kt = stream_kernel_time(bytes, bandwidth_, prof_);
    op.flops += Flops(flops * layers);
    op.bytes += Bytes(bytes * layers);
    op.memory_time += kt.memory * layers;
    op.time += kt.time * layers;
}

void StepCostModel::Work::add_matmul(double flops) noexcept {
    if (after == nullptr) {
        matmul += flops;
        return;
    }
    assert(after->matmul_after_count < StepShape::kMaxMatmulTerms);
    after->matmul_after[static_cast<std::size_t>(after->matmul_after_count++)] = flops;
}

StepCost StepCostModel::cost(const BatchStats& s) const noexcept {
    StepShape sh;
    shape(s, sh);
    StepCost r;
    complete(sh, s, r);
    return r;
}

ShapeKey StepCostModel::shape_key(const BatchStats& s) const noexcept {
    ShapeKey k;
    k.tokens = s.prefill_tokens + s.decodes;
    k.rows = s.prefills + s.decodes + s.extra_logit_rows;
    if (mla_) {
        k.decodes = s.decodes;
        k.prefill_kv_read = s.prefill_kv_read;
    }
    if (lora_elems_ > 0) {
        k.sequences = s.prefills + s.decodes;
        k.lora_adapters = s.lora_adapters;
    }
    return k;
}

// cost() runs the operators in this order (attention's place between the QKV projection and
// the output projection); `acc` and `r.kv_bytes` are summed in it, so the order is part of the
// result: the matrix FLOPs after attention's place are recorded for complete() to add in order.
void StepCostModel::shape(const BatchStats& s, StepShape& out) const noexcept {
    out.key = shape_key(s);
    out.matmul_after_count = 0;
    out.launch = Seconds(0);
    StepCost& r = out.partial;
    r = StepCost{};
    const double nd = s.decodes;
    const double t = out.key.tokens;
    const double rows = out.key.rows;
    Work acc;
    if (t > 0) {
        r.cuda_graph = engine_.cuda_graphs && t <= engine_.cuda_graph_max_tokens;
        out.launch = r.cuda_graph ? prof_.graph_launch_overhead : prof_.launch_overhead;
        embedding_and_norms(r, t);
        qkv_projection(r, s, t, acc);
        acc.after = &out; // attention's place: acc.matmul stays the sum before it
        out_projection_and_mlp(r, t, nd, acc);
        if (lora_elems_ > 0) {
            lora(r, s, t, acc);
        }
        if (moe_layers_ > 0) {
            moe(r, t, acc);
        }
        // LM head over the rows that need logits, then sampling on the gathered fp32 logits.
        gemm(op_of(r, Op::LmHead), rows, h_, vocab_rank_, eb_, 1.0, acc, false, eb_ != wb_);
        stream(op_of(r, Op::Sampling), rows * vocab_ * kLogitBytes * kSamplerPasses,
               kSamplerFlops * rows * vocab_, 1.0);
        op_of(r, Op::Sampling).kernels = kSamplerKernels;
        communication(r, t, rows);
        finish_ops(r, out.launch, false);
    }
    out.weights = acc.weights;
    out.replicated = acc.replicated;
    out.matmul_before = acc.matmul;
}

void StepCostModel::complete(const StepShape& shape, const BatchStats& s,
                             StepCost& r) const noexcept {
    assert(shape.key == shape_key(s));
    r = shape.partial;
    const double t = s.prefill_tokens + s.decodes;
    r.tokens = static_cast<int>(t);
    r.prefill_tokens = static_cast<int>(s.prefill_tokens);
    r.sequences = static_cast<int>(s.prefills + s.decodes);
    if (t <= 0) {
        return;
    }
    Work acc;
    acc.weights = shape.weights;
    acc.replicated = shape.replicated;
    acc.matmul = shape.matmul_before;
    if (s.prefill_tokens > 0) {
        attention_prefill(r, s, acc);
    }
    if (s.decodes > 0) {
        attention_decode(r, s, acc);
    }
    for (int i = 0; i < shape.matmul_after_count; ++i) {
        acc.matmul += shape.matmul_after[static_cast<std::size_t>(i)];
    }
    finish_ops(r, shape.launch, true);
    totals(r, acc);
}

void StepCostModel::embedding_and_norms(StepCost& r, double t) const noexcept {
    // Embedding: gather T rows of the (vocab-parallel) table.
    stream(op_of(r, Op::Embedding), t * h_ * (eb_ + ab_), 0.0, 1.0);
    op_of(r, Op::Embedding).kernels = 1;

    // Norms: read and write the hidden state, per norm; the final norm once.
    OpCost& o = op_of(r, Op::Norms);
    const double per = 2.0 * t * h_ * ab_ + h_ * sb_;
    stream(o, per, kNormFlops * t * h_, norms_per_layer_ * layers_ + 1.0);
    o.kernels = static_cast<int>(norms_per_layer_ * layers_ + 1.0);
    if (mla_) {
        stream(o, 2.0 * t * (q_lora_ + kv_lora_) * ab_, kNormFlops * t * (q_lora_ + kv_lora_),
               layers_);
        o.kernels += static_cast<int>(2 * layers_);
    }
}

void StepCostModel::qkv_projection(StepCost& r, const BatchStats& s, double t,
                                   Work& acc) const noexcept {
    // Q, K, V projections and RoPE.
    OpCost& o = op_of(r, Op::QkvProj);
    if (mla_) {
        // DeepSeek-V2 MLA (arXiv 2405.04434 §2.1): replicated down-projections, per-head
        // up-projections; prefill up-projects the latent of the whole context (kv_b), decode
        // absorbs W_UK into the query (vLLM MLACommonImpl).
        if (q_lora_ > 0) {
            gemm(o, t, h_, q_lora_, wb_, layers_, acc, true);
            gemm(o, t, q_lora_, q_width_, wb_, layers_, acc, false);
        } else {
            gemm(o, t, h_, q_width_, wb_, layers_, acc, false);
        }
        gemm(o, t, h_, kv_lora_ + rope_, wb_, layers_, acc, true);
        gemm(o, s.prefill_kv_read, kv_lora_, heads_rank_ * (nope_ + v_dim_), wb_, layers_, acc,
             false);
        gemm(o, s.decodes, heads_rank_ * nope_, kv_lora_, wb_, layers_, acc, false);
        const double rope_elems = t * (heads_rank_ + 1.0) * rope_;
        stream(o, 2.0 * rope_elems * ab_, kRopeFlops * rope_elems, layers_);
        o.kernels = static_cast<int>(kMlaQkvKernels * layers_);
    } else {
        gemm(o, t, h_, q_width_ + kv_width_, wb_, layers_, acc, false);
        const double rope_elems = t * (q_width_ + kv_width_ / 2.0);
        stream(o, 2.0 * rope_elems * ab_, kRopeFlops * rope_elems, layers_);
        o.kernels = static_cast<int>(kQkvKernels * layers_);
    }
}

// One kernel of `flops` and `bytes` per layer, run `layers` times, added to its operator.
void StepCostModel::add_kernel(OpCost& o, const KernelTime& kt, double flops, double bytes,
                               double layers, Work& acc) noexcept {
    o.flops += Flops(flops * layers);
    o.bytes += Bytes(bytes * layers);
    o.compute_time += kt.compute * layers;
    o.memory_time += kt.memory * layers;
    o.time += kt.time * layers;
    acc.add_matmul(flops * layers);
}

// Attention FLOPs: 2 × heads × (d_qk + d_v) per query-key pair (QK^T and PV; docs/domain.md
// §2: 4 × d × heads × context per token when d_qk = d_v = d).
double StepCostModel::attention_pair_flops() const noexcept {
    return 2.0 * heads_rank_ * (qk_dim_ + v_dim_);
}

void StepCostModel::attention_prefill(StepCost& r, const BatchStats& s, Work& acc) const noexcept {
    OpCost& o = op_of(r, Op::AttentionPrefill);
    const double tp = s.prefill_tokens;
    const double heads_flops = attention_pair_flops();
    auto part = [&](double pairs, double kv_read, double layers) {
        if (layers <= 0 || pairs <= 0) {
            return;
        }
        const double flops = heads_flops * pairs;
        double bytes = tp * (q_width_ + o_in_) * ab_ + (kv_read + tp) * kv_elems_ * kvb_;
        if (mla_) {
            bytes += kv_read * heads_rank_ * (nope_ + v_dim_) * ab_; // up-projected K, V
        }
        const double x = std::sqrt(2.0 * pairs / std::max(1.0, s.prefills));
        const KernelTime kt =
            attention_prefill_kernel_time(flops, bytes, x, peak_attn_, bandwidth_, prof_);
        add_kernel(o, kt, flops, bytes, layers, acc);
        r.kv_bytes += Bytes((kv_read + tp) * kv_elems_ * kvb_ * layers);
    };
    part(s.prefill_pairs, s.prefill_kv_read, full_layers_);
    part(s.prefill_pairs_windowed, s.prefill_kv_read_windowed, win_layers_);
    recurrent_prefill(r, s, acc);
    o.kernels = static_cast<int>(kAttentionKernels * layers_);
}

// Recurrent layers' prefill (chunked scan) and decode (state update), priced in the attention
// operators with the attention kernels' efficiency curves (no published GDN or Mamba-2 kernel
// curve is in the profiles yet): each sequence's state is read and written once per step.
void StepCostModel::recurrent_prefill(StepCost& r, const BatchStats& s, Work& acc) const noexcept {
    if (state_layers_ <= 0 || s.prefill_tokens <= 0) {
        return;
    }
    OpCost& o = op_of(r, Op::AttentionPrefill);
    const double flops = state_prefill_flops_ * s.prefill_tokens;
    const double bytes =
        s.prefill_tokens * (q_width_ + o_in_) * ab_ + 2.0 * s.prefills * state_bytes_;
    const KernelTime kt =
        attention_prefill_kernel_time(flops, bytes, 64.0, peak_attn_, bandwidth_, prof_);
    add_kernel(o, kt, flops, bytes, state_layers_, acc);
}

void StepCostModel::recurrent_decode(StepCost& r, const BatchStats& s, Work& acc) const noexcept {
    if (state_layers_ <= 0 || s.decodes <= 0) {
        return;
    }
    OpCost& o = op_of(r, Op::AttentionDecode);
    const double flops = state_decode_flops_ * s.decodes;
    const double bytes = 2.0 * s.decodes * state_bytes_ + s.decodes * (q_width_ + o_in_) * ab_;
    const KernelTime kt = attention_decode_kernel_time(flops, bytes, peak_attn_, bandwidth_, prof_);
    add_kernel(o, kt, flops, bytes, state_layers_, acc);
}

void StepCostModel::attention_decode(StepCost& r, const BatchStats& s, Work& acc) const noexcept {
    OpCost& o = op_of(r, Op::AttentionDecode);
    const double nd = s.decodes;
    // MLA decode attends in the latent space: scores over kv_lora + rope, values over kv_lora.
    const double dec_flops =
        mla_ ? 2.0 * heads_rank_ * (2.0 * kv_lora_ + rope_) : attention_pair_flops();
    auto part = [&](double context, double layers) {
        if (layers <= 0 || context <= 0) {
            return;
        }
        const double flops = dec_flops * context;
        const double kv = (context + nd) * kv_elems_ * kvb_;
        const double bytes = kv + nd * (q_width_ + o_in_) * ab_;
        const KernelTime kt =
            attention_decode_kernel_time(flops, bytes, peak_attn_, bandwidth_, prof_);
        add_kernel(o, kt, flops, bytes, layers, acc);
        r.kv_bytes += Bytes(kv * layers);
    };
    part(s.decode_context, full_layers_);
    part(s.decode_context_windowed, win_layers_);
    recurrent_decode(r, s, acc);
    // Mixed batches run one varlen attention kernel (vLLM V1): no extra launches.
    o.kernels = s.prefill_tokens > 0 ? 0 : static_cast<int>(kAttentionKernels * layers_);
}

void StepCostModel::out_projection_and_mlp(StepCost& r, double t, double nd,
                                           Work& acc) const noexcept {
    // Output projection (MLA decode: plus the absorbed W_UV).
    OpCost& o = op_of(r, Op::OutProj);
    gemm(o, t, o_in_, h_, wb_, layers_, acc, false);
    if (mla_) {
        gemm(o, nd, heads_rank_ * kv_lora_, v_dim_, wb_, layers_, acc, false);
    }
    // Residual adds: two per layer, fused into the following norm (vLLM fused_add_rms_norm).
    stream(op_of(r, Op::Residual), 3.0 * t * h_ * ab_, t * h_, 2.0 * layers_);
    mlp(op_of(r, Op::Mlp), t, ffn_rank_, dense_layers_, acc);
}

void StepCostModel::mlp(OpCost& o, double t, double ffn, double layers, Work& acc) const noexcept {
    if (ffn <= 0 || layers <= 0) {
        return;
    }
    const double mats = gated_ ? 3.0 : 2.0;
    gemm(o, t, h_, (mats - 1.0) * ffn, wb_, layers, acc, false);
    stream(o, t * mats * ffn * ab_, kActFlops * t * ffn, layers);
    gemm(o, t, ffn, h_, wb_, layers, acc, false);
    o.kernels = static_cast<int>(kMlpKernels * layers);
}

void StepCostModel::moe(StepCost& r, double t, Work& acc) const noexcept {
    OpCost& router = op_of(r, Op::MoeRouter);
    gemm(router, t, h_, experts_, sb_, moe_layers_, acc, true, true);
    stream(router, t * experts_ * kLogitBytes, kNormFlops * t * experts_, moe_layers_);
    router.kernels = static_cast<int>(kRouterKernels * moe_layers_);

    // Routed experts: the EP group's tokens T' = T × (attention groups) make T' × k rows,
    // ÷ ep with expert parallelism, on the busiest rank × its imbalance (model/moe.hpp);
    // only experts with a token are read (E × (1 − (1 − k/E)^T') of them, spread over the
    // ranks that hold them). One grouped GEMM (routed_experts_kernel_time): its m is the rows
    // per touched expert, on the grouped row curve (gemm_grouped).
    OpCost& o = op_of(r, Op::MoeExperts);
    const double mats = gated_ ? 3.0 : 2.0;
    const double group_tokens = t * attn_groups_;
    r.moe_imbalance =
        ep_ > 1 ? (fixed_imbalance_ > 0
                       ? fixed_imbalance_
                       : moe_rank_imbalance(group_tokens, experts_, top_k_, ep_, imbalance_z_))
                : 1.0;
    const double expert_rows = group_tokens * top_k_ / (ep_ > 1 ? ep_ : 1) * r.moe_imbalance;
    const double touched = experts_rank_ * (1.0 - std::pow(1.0 - top_k_ / experts_, group_tokens));
    r.experts_touched = touched;
    const double per_expert = mats * h_ * expert_ffn_rank_;
    const double flops = 2.0 * expert_rows * per_expert;
    const double wbytes = touched * per_expert * wb_;
    const double act_bytes = expert_rows * (2.0 * h_ + 2.0 * mats * expert_ffn_rank_) * ab_;
    const double bytes = wbytes + act_bytes;
    // A grouped MoE kernel (its own row curve: efficiency at the rows per touched expert);
    // quantized weight-only experts run Marlin-style MoE kernels on the weight-only curve.
    const GemmPath path =
        gemm_path_ == GemmPath::WeightOnly ? GemmPath::WeightOnly : GemmPath::Grouped;
    // vLLM and SGLang run 16-bit and FP8 experts through the Triton fused_moe: each expert's
    // rows padded to its BLOCK_SIZE_M, and the alignment and combine kernels around the GEMMs
    // (kernel_time.hpp fused_moe_aux_kernel_time; their launches are in kExpertKernels).
    const double groups = touched > 0 ? touched : 1.0;
    const bool triton_moe = path == GemmPath::Grouped && triton_fused_moe_;
    const double block_m = triton_moe ? fused_moe_block_m(expert_rows / groups) : 0.0;
    const KernelTime kt =
        routed_experts_kernel_time(expert_rows, groups, h_, expert_ffn_rank_, mats, wb_, ab_,
                                   gemm_class_, path, peak_gemm_, bandwidth_, prof_, block_m);
    add_kernel(o, kt, flops, bytes, moe_layers_, acc);
    if (triton_moe && expert_rows > 0) {
        const double padded = moe_padded_rows(expert_rows, groups, block_m);
        const double aux_bytes = (expert_rows + padded + padded / block_m) * kMoeIndexBytes +
                                 (expert_rows + expert_rows / top_k_) * h_ * ab_;
        const KernelTime aux = fused_moe_aux_kernel_time(expert_rows, top_k_, padded, block_m, h_,
                                                         ab_, bandwidth_, prof_);
        add_kernel(o, aux, 0.0, aux_bytes, moe_layers_, acc);
    }
    o.kernels = static_cast<int>(kExpertKernels * moe_layers_);
    acc.weights += wbytes * moe_layers_;

    mlp(op_of(r, Op::MoeShared), t, shared_ffn_rank_, moe_layers_, acc);
}

// Batched multi-LoRA (Punica's SGMV/BGMV, S-LoRA; vLLM's lora_shrink and lora_expand): every
// token runs x·A (shrink to the rank) and (x·A)·B (expand) of its own adapter in every target
// module, 2 × rank × (in + out) FLOPs per module and token, and each distinct adapter's A and B
// are read once per step. Two kernels per module and layer.
void StepCostModel::lora(StepCost& r, const BatchStats& s, double t, Work& acc) const noexcept {
    const double seqs = s.prefills + s.decodes;
    const double adapters = s.lora_adapters > 0 ? s.lora_adapters : std::min(lora_slots_, seqs);
    OpCost& o = op_of(r, Op::Lora);
    const double flops = 2.0 * t * lora_elems_;
    const double weights = adapters * lora_elems_;
    const double act = t * lora_io_ * ab_;
    const KernelTime kt = matmul_kernel_time(flops, weights, ab_, act, t, lora_nk_, attn_type_,
                                             GemmPath::Dense, peak_attn_, bandwidth_, prof_);
    add_kernel(o, kt, flops, weights * ab_ + act, 1.0, acc);
    acc.weights += weights * ab_;
    o.kernels = lora_kernels_;
}

void StepCostModel::communication(StepCost& r, double t, double rows) const noexcept {
    const Seconds coll = prof_.comm.collective_overhead;
    if (tp_ > 1) {
        OpCost& o = op_of(r, Op::TpAllReduce);
        const Bytes msg(t * h_ * ab_);
        const Link link =
            effective_link(Link{BytesPerSecond(tp_bw_), Seconds(tp_lat_), false}, msg, prof_.comm);
        // Megatron-LM: one all-reduce after attention and one after the MLP in every layer,
        // plus one for the vocab-parallel embedding; logits are gathered once.
        const double count = 2.0 * layers_ + 1.0;
        const Seconds each = all_reduce_time(msg, tp_, link, all_reduce_) + coll;
        const Bytes logits(rows * vocab_ * ab_);
        const Link glink = effective_link(Link{BytesPerSecond(tp_bw_), Seconds(tp_lat_), false},
                                          logits, prof_.comm);
        const Seconds gather = all_gather_time(logits, tp_, glink) + coll;
        o.time = each * count + gather;
        o.memory_time = o.time;
        o.bytes = ring_all_reduce_bytes(msg, tp_) * count + logits * ((tp_ - 1.0) / tp_);
        o.kernels = static_cast<int>(count) + 1;
    }
    if (pp_ > 1) {
        OpCost& o = op_of(r, Op::PpSend);
        // vLLM sends IntermediateTensors (hidden states and residual) to the next stage.
        const Bytes msg(2.0 * t * h_ * ab_);
        const Link link =
            effective_link(Link{BytesPerSecond(pp_bw_), Seconds(pp_lat_), false}, msg, prof_.comm);
        o.time = (p2p_time(msg, link) + coll) * (pp_ - 1.0);
        o.memory_time = o.time;
        o.bytes = msg * (pp_ - 1.0);
        o.kernels = pp_ - 1;
    }
    if (ep_ > 1 && moe_layers_ > 0) {
        // Each rank dispatches its share of the group's token copies, T' × k / ep, and the
        // busiest rank receives (and sends back in the combine) its imbalance times that.
        OpCost& o = op_of(r, Op::EpAllToAll);
        const Bytes per_gpu(t * attn_groups_ * top_k_ * h_ * ab_ / ep_ * r.moe_imbalance);
        const Link link = effective_link(Link{BytesPerSecond(ep_bw_), Seconds(ep_lat_), false},
                                         per_gpu, prof_.comm);
        const double count = 2.0 * moe_layers_; // dispatch and combine
        o.time = (all_to_all_time(per_gpu, ep_, link) + coll) * count;
        o.memory_time = o.time;
        o.bytes = per_gpu * ((ep_ - 1.0) / ep_) * count;
        o.kernels = static_cast<int>(count);
    }
}

namespace {
bool is_attention(Op op) {
    return op == Op::AttentionPrefill || op == Op::AttentionDecode;
}
bool is_communication(Op op) {
    return op == Op::TpAllReduce || op == Op::PpSend || op == Op::EpAllToAll;
}
} // namespace

// Each operator's overhead and bound depend on itself alone, so the attention operators can be
// finished after the others.
void StepCostModel::finish_ops(StepCost& r, Seconds launch, bool attention) const noexcept {
    for (std::size_t i = 0; i < kOpCount; ++i) {
        const Op which = static_cast<Op>(i);
        if (is_attention(which) != attention) {
            continue;
        }
        OpCost& o = r.ops[i];
        if (!is_communication(which)) {
            finish(o, launch, false);
        } else if (o.time.si() > 0) {
            o.bound = Bound::Communication;
        }
    }
}

void StepCostModel::totals(StepCost& r, const Work& acc) const noexcept {
    for (std::size_t i = 0; i < kOpCount; ++i) {
        const OpCost& o = r.ops[i];
        if (!is_communication(static_cast<Op>(i))) {
            r.bytes += o.bytes;
        }
        r.flops += o.flops;
        r.time += o.time;
    }
    // All-to-all overlap (two-batch overlap, DeepEP): a share ep_overlap of the all-to-all
    // hides behind the step's compute; the rest is exposed:
    //   exposed = comm − min(ep_overlap × comm, compute).
    // The op keeps the whole collective in memory_time and the exposed part in time.
    if (OpCost& a2a = op_of(r, Op::EpAllToAll); ep_overlap_ > 0 && a2a.time.si() > 0) {
        Seconds compute(0);
        for (std::size_t i = 0; i < kOpCount; ++i) {
            const Op which = static_cast<Op>(i);
            if (which != Op::TpAllReduce && which != Op::PpSend && which != Op::EpAllToAll) {
                compute += r.ops[i].time;
            }
        }
        const Seconds hidden = std::min(a2a.time * ep_overlap_, compute);
        a2a.time -= hidden;
        r.time -= hidden;
    }
    r.step_overhead = prof_.step_overhead;
    r.time += r.step_overhead;
    r.weight_bytes = Bytes(acc.weights);
    // Replicated FLOPs (MLA down-projections, the router) are done once per replica, the
    // rest once per rank.
    r.model_flops = Flops((acc.matmul - acc.replicated) * tp_ + acc.replicated);
    r.pp_bubble = (pp_ - 1.0) / pp_;
}

StepCost step_cost(const Deployment& d, const Batch& batch, const EfficiencyProfile& profile) {
    return StepCostModel(d, profile).cost(batch);
}

StepCost step_cost(const Deployment& d, std::span<const PrefillChunk> prefills,
                   std::span<const DecodeSeq> decodes, const EfficiencyProfile& profile) {
    return StepCostModel(d, profile).cost(prefills, decodes);
}

} // namespace gpuplan::model
