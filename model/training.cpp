#include "model/training.hpp"

#include "model/comm.hpp"
#include "model/detail/shapes.hpp"
#include "model/error.hpp"
#include "model/kernel_time.hpp"
#include "model/model_spec.hpp"
#include "model/power.hpp"
#include "model/validity.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace gpuplan::model {

namespace {

// ---- Named constants, each with its source ----

// Runtime memory per GPU outside PyTorch's allocator, after memory.cpp's inference defaults:
// CUDA context and framework start-up 0.5 GiB, non-torch (cuBLAS workspaces) 0.4 GiB, plus
// 1.8 GiB of NCCL buffers once communicators exist (vllm-project/vllm PR #10511's H100 log:
// +1.79 GiB from TP1 to TP2; docs/engines.md §1.6). Training creates several communicators (tp, dp,
// pp); their growth is unmeasured and assumed flat [U].
constexpr double kRuntimeBase = 0.9 * kGiB;
constexpr double kRuntimeNccl = 1.8 * kGiB;
// Megatron-Core DDP gradient bucket: max(40M, 1M × dp) elements
// (megatron/core/distributed/distributed_data_parallel_config.py, bucket_size), 16-bit here.
constexpr double kBucketElements = 40e6;
constexpr double kBucketPerRank = 1e6;
// ZeRO-3 / FSDP hold the layer being computed and the prefetched next one unsharded (FSDP
// forward/backward prefetch of one unit; DeepSpeed stage3_prefetch_bucket_size), and one layer's
// unsharded gradients before their reduce-scatter.
constexpr double kZero3GatheredLayers = 2.0;
constexpr double kZero3GradLayers = 1.0;
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

double d(int v) {
    return static_cast<double>(v);
}

// Bytes of the moments per trained parameter.
double moment_bytes(TrainOptimizer o) {
    switch (o) {
    case TrainOptimizer::Adam: return 8.0;     // two fp32 moments (ZeRO §3.1: K = 12 with master)
    case TrainOptimizer::Adam8bit: return 2.0; // Dettmers et al. 2022: two 8-bit block-wise states
    case TrainOptimizer::SgdMomentum: return 4.0;
    }
    return 8.0;
}

bool is_rope(const ModelSpec& m) {
    return m.position == PositionKind::Rope;
}

// One LoRA-adapted linear: input and output widths of the whole (unsharded) layer.
struct Module {
    const char* name;
    double in;
    double out;
    bool mlp;
};

} // namespace

// ---- Names ----

const char* to_string(Recompute r) {
    switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    }
    return "none";
}

const char* to_string(TrainOptimizer o) {
    switch (o) {
    case TrainOptimizer::Adam: return "adam";
    case TrainOptimizer::Adam8bit: return "adam-8bit";
    case TrainOptimizer::SgdMomentum: return "sgd-momentum";
    }
    return "adam";
}

const char* to_string(FinetuneMethod f) {
    switch (f) {
    case FinetuneMethod::Full: return "full";
    case FinetuneMethod::Lora: return "lora";
    case FinetuneMethod::Qlora: return "qlora";
    }
    return "full";
}

const char* to_string(RankBy r) {
    return r == RankBy::Cost ? "cost" : "time";
}

std::optional<Recompute> find_recompute(std::string_view n) {
    if (n == "none" || n == "off")
        return Recompute::None;
    if (n == "selective")
        return Recompute::Selective;
    if (n == "full")
        return Recompute::Full;
    return std::nullopt;
}

std::optional<TrainOptimizer> find_optimizer(std::string_view n) {
    if (n == "adam" || n == "adamw")
        return TrainOptimizer::Adam;
    if (n == "adam-8bit" || n == "adamw-8bit" || n == "adam8bit")
        return TrainOptimizer::Adam8bit;
    if (n == "sgd-momentum" || n == "sgd")
        return TrainOptimizer::SgdMomentum;
    return std::nullopt;
}

std::optional<FinetuneMethod> find_finetune_method(std::string_view n) {
    if (n == "full")
        return FinetuneMethod::Full;
    if (n == "lora")
        return FinetuneMethod::Lora;
    if (n == "qlora")
        return FinetuneMethod::Qlora;
    return std::nullopt;
}

const char* to_string(LayoutIssue issue) {
    switch (issue) {
    case LayoutIssue::None: return "runs";
    case LayoutIssue::GpuCount:
        return "tp × pp × dp × cp is not the GPU count; make their product the number of GPUs";
    case LayoutIssue::Heads:
        return "tp does not divide the attention heads; use a divisor of the head count";
    case LayoutIssue::KvHeads:
        return "tp and the kv heads do not divide one another; use a divisor of the kv heads";
    case LayoutIssue::Ffn: return "tp does not divide the mlp size; use a divisor of ffn_size";
    case LayoutIssue::Layers: return "pp exceeds the layer count; use at most one stage per layer";
    case LayoutIssue::Sequence:
        return "cp does not split the sequence into 2 × cp equal chunks; use a cp with seq_len "
               "divisible by 2 × cp";
    case LayoutIssue::Experts:
        return "ep does not divide both dp and the expert count; use a common divisor";
    case LayoutIssue::NotMoe: return "ep is above 1 but the model has no experts; use ep 1";
    case LayoutIssue::Batch:
        return "dp does not divide the global batch; use a global batch that is a multiple of dp";
    case LayoutIssue::MicroBatch:
        return "micro_batch does not divide the per-replica batch (global batch / dp); use a "
               "divisor";
    case LayoutIssue::ZeroStage: return "zero stage must be 0, 1, 2 or 3";
    case LayoutIssue::ZeroPipeline:
        return "zero stages 2 and 3 do not combine with pipeline parallelism (deepspeed refuses "
               "them); use zero 0 or 1 with pp > 1, or pp 1";
    case LayoutIssue::Interleave:
        return "virtual_stages above 1 needs pp > 1, at least pp × virtual_stages layers and a "
               "micro-batch count divisible by pp (megatron's interleaved schedule); use "
               "virtual_stages 1";
    case LayoutIssue::NoInterNodeLink:
        return "a parallel group spans nodes but no inter-node link is given; add one (e.g. "
               "ib-ndr) or keep the groups inside a node";
    }
    return "unknown";
}

// ---- Closed-form helpers ----

Flops training_compute(double params, double tokens) {
    // Kaplan et al. 2020 §2.1: forward 2N per token, backward twice that.
    return Flops(6.0 * params * tokens);
}

double pf_days(Flops flops) {
    return flops.si() / (1e15 * 86400.0);
}

ComputeOptimal chinchilla_for_params(double params) {
    // Hoffmann et al. 2022, Table 3: about 20 tokens per parameter at the compute optimum.
    const double tokens = 20.0 * params;
    return {params, tokens, training_compute(params, tokens)};
}

ComputeOptimal chinchilla_for_compute(Flops compute) {
    // C = 6·N·(20·N) = 120·N².
    const double params = std::sqrt(std::max(0.0, compute.si()) / 120.0);
    return {params, 20.0 * params, compute};
}

double amdahl_speedup(double serial_fraction, double n) {
    // Amdahl 1967: the serial part does not shrink with more workers.
    return 1.0 / (serial_fraction + (1.0 - serial_fraction) / n);
}

double amdahl_serial_fraction(double speedup, double n) {
    if (n <= 1.0 || speedup <= 0.0) {
        return 0.0;
    }
    return std::clamp((n / speedup - 1.0) / (n - 1.0), 0.0, 1.0);
}

double optimizer_state_bytes(TrainOptimizer optimizer, bool master_weights_fp32) {
    // ZeRO §3.1: mixed-precision Adam keeps an fp32 copy of the parameters, momentum and
    // variance: K = 4 + 4 + 4 = 12.
    return (master_weights_fp32 ? 4.0 : 0.0) + moment_bytes(optimizer);
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

namespace {

// Bytes per row (token) of one layer's stored activations, split into the part that tensor
// parallelism alone does not split (norm inputs, the inputs of the first GEMMs, dropout masks)
// and the part it does. Korthikanti et al. 2022 §4.1: attention 11sbh + 5as²b, MLP 19sbh, norms
// 4sbh; §4.2.2 for what TP splits (sbh(10 + 24/t)).
struct ActRow {
    double replicated = 0; ///< bytes per token, split by t only with sequence parallelism
    double split = 0;      ///< bytes per token, split by t
    double square = 0;     ///< bytes per token of the s² attention term (× keys), split by t
};

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

} // namespace

Bytes activation_bytes_per_layer(const ModelSpec& m, const ActivationShape& s, bool moe_layer) {
    const ActRow r = activation_row(m, s.flash_attention, s.dropout, moe_layer);
    const int cp = std::max(1, s.cp);
    const double rows = d(s.micro_batch) * d(s.seq) / cp;
    return Bytes(layer_activation_bytes(r, rows, d(s.seq), d(m.hidden_size), std::max(1, s.tp),
                                        s.sequence_parallel, s.recompute));
}

// ---- The model ----

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

TrainingModel::TrainingModel(const Deployment& hw, const TrainingConfig& cfg,
                             const EfficiencyProfile& profile, const TrainingCostInputs& prices)
    : cfg_(cfg), prof_(profile), model_(hw.model), hw_(hw) {
    validate(model_, "model '" + model_.name + "'");
    const std::string where = "training '" + model_.name + "' on '" + hw.gpu.name + "': ";
    const auto require = [&](bool ok, const std::string& what) {
        if (!ok) {
            throw InvalidArgument(where + what);
        }
    };
    require(hw.gpus() >= 1, "gpus is " + std::to_string(hw.gpus()) + "; use at least 1");
    require(hw.gpus_per_node >= 1, "gpus_per_node must be at least 1");
    // The ranges of the scenario file's keys (hwdb training reader), checked here too so flags
    // and code get them: 1e300 tokens made the total compute infinite.
    require(cfg.tokens > 0 && cfg.tokens <= 1e18,
            "tokens to train must be from 1 to 1e18; give e.g. 'tokens: 300e9'");
    require(cfg.global_batch >= 1 && cfg.global_batch <= (1 << 26),
            "global_batch (sequences per step) must be from 1 to 67108864");
    require(cfg.seq_len >= 1 && cfg.seq_len <= (1 << 28), "seq_len must be from 1 to 268435456");
    require(!cfg.grad_reduce_overlap ||
                (*cfg.grad_reduce_overlap >= 0 && *cfg.grad_reduce_overlap <= 1),
            "grad_reduce_overlap must lie in [0, 1]");
    require(!cfg.fragmentation || (*cfg.fragmentation >= 0 && *cfg.fragmentation < 1),
            "fragmentation must lie in [0, 1)");
    require(!cfg.runtime_overhead || cfg.runtime_overhead->si() >= 0,
            "runtime_overhead must not be negative");
    require(!cfg.data_loader_tokens_per_s || *cfg.data_loader_tokens_per_s > 0,
            "data_loader_tokens_per_s must be positive");
    require(cfg.method == FinetuneMethod::Full || cfg.lora.rank >= 1, "lora rank must be >= 1");
    require(hw.gpu.memory.si() > 0 && hw.gpu.memory_bandwidth.si() > 0,
            "the accelerator has no memory or bandwidth; check its hwdb entry");
    require(hw.clocks.compute > 0 && hw.clocks.compute <= 1 && hw.clocks.memory > 0 &&
                hw.clocks.memory <= 1,
            "clock factors must lie in (0, 1]");

    gpus_ = hw.gpus();
    gpus_per_node_ = hw.gpus_per_node;
    has_network_ = hw.inter_node_link.has_value();

    // bf16/fp16 need the GPU's own path (a V100 has no bf16), the rule serving applies too.
    check_compute_path(hw.gpu, cfg.compute, "training compute");
    // The GEMM path: fp8 needs a real fp8 peak (no silent fallback to bf16).
    const auto own = hw.gpu.dense.for_type(cfg.compute);
    if (cfg.compute == ComputeType::Fp8) {
        require(own && own->si() > 0, "'" + hw.gpu.name +
                                          "' has no fp8 tensor-core path; train in bf16 "
                                          "(compute: bf16)");
    }
    const auto gemm_peak = kernel_peak(hw.gpu, cfg.compute);
    const auto attn_peak = kernel_peak(hw.gpu, ComputeType::Bf16);
    require(gemm_peak.has_value() && attn_peak.has_value(),
            "the accelerator has no dense bf16/fp16/fp32 peak; add dense.bf16 to its hwdb entry");
    nominal_peak_ = gemm_peak->si();
    peak_ = nominal_peak_ * hw.clocks.compute;
    peak_attn_ = attn_peak->si() * hw.clocks.compute;
    bw_ = hw.gpu.memory_bandwidth.si() * hw.clocks.memory;
    wb_ = cfg.compute == ComputeType::Fp8 ? 1.0 : 2.0;

    const ParamCount pc = count_params(model_);
    params_ = pc.total;
    k_ = optimizer_state_bytes(cfg.optimizer, cfg.master_weights_fp32);
    overlap_ = cfg.grad_reduce_overlap.value_or(kDefaultGradReduceOverlap);
    frag_ = cfg.fragmentation.value_or(kDefaultFragmentation);
    runtime_ = cfg.runtime_overhead ? cfg.runtime_overhead->si()
                                    : kRuntimeBase + (gpus_ > 1 ? kRuntimeNccl : 0.0);
    loader_ = cfg.data_loader_tokens_per_s.value_or(0.0);

    // LoRA adapters: r × (in + out) parameters per adapted linear (Hu et al. 2021 §4.1).
    const bool lora = cfg.method != FinetuneMethod::Full;
    if (lora) {
        const double h = d(model_.hidden_size);
        const double q = d(model_.heads * model_.head_dim);
        const double kvw = d(model_.kv_heads * model_.head_dim);
        const double f = d(model_.ffn_size);
        const Module modules[] = {{"q_proj", h, q, false},   {"k_proj", h, kvw, false},
                                  {"v_proj", h, kvw, false}, {"o_proj", q, h, false},
                                  {"gate_proj", h, f, true}, {"up_proj", h, f, true},
                                  {"down_proj", f, h, true}};
        const double r = d(cfg.lora.rank);
        // MoE layers adapt every expert's MLP (PEFT all-linear on Mixtral adapts w1, w2, w3).
        const double mlp_copies =
            model_.moe ? d(model_.moe->experts + model_.moe->shared_experts) : 1.0;
        for (const std::string& name : cfg.lora.target_modules) {
            bool known = name == "all-linear";
            for (const Module& mod : modules) {
                if (name != "all-linear" && name != mod.name) {
                    continue;
                }
                known = true;
                if (model_.mlp == MlpKind::Plain && std::string_view(mod.name) == "gate_proj") {
                    continue; // a plain MLP has no gate
                }
                lora_modules_ += 1.0;
                const double copies = mod.mlp ? mlp_copies : 1.0;
                (mod.mlp ? lora_mlp_in_ : lora_attn_in_) += copies * (mod.in + 2.0 * r);
                (mod.mlp ? lora_mlp_out_ : lora_attn_out_) += copies * mod.out;
                lora_layer_ += copies * r * (mod.in + mod.out);
            }
            require(known, "unknown lora target module '" + name +
                               "'; use q_proj k_proj v_proj o_proj gate_proj up_proj down_proj "
                               "or all-linear");
        }
        require(lora_layer_ > 0, "lora target_modules is empty; name at least one module");
        trainable_ = lora_layer_ * d(model_.layers);
        frozen_bits_ = cfg.method == FinetuneMethod::Qlora ? cfg.lora.qlora_base_bits : 16.0;
    } else {
        trainable_ = params_;
    }

    // Optimizer-step traffic per trained parameter: read master (or the 16-bit weight), the
    // gradient and the moments; write them back plus the 16-bit weight; one more gradient read
    // for the global-norm clipping (Megatron clip_grad_norm).
    const double mom = moment_bytes(cfg.optimizer);
    const double master = cfg.master_weights_fp32 ? 4.0 : 2.0;
    opt_rw_bytes_ =
        (master + 2.0 + mom) + (master + mom + (cfg.master_weights_fp32 ? 2.0 : 0.0)) + 2.0;

    // Model FLOPs per token (Korthikanti et al. 2022 §6: 72·B·s·l·h²(1 + s/6h + V/12lh) for
    // GPT, i.e. 6 × (layer and LM-head matmul parameters) + 12·l·h·s; PaLM Appendix B:
    // 6N + 12·L·H·Q·T). Those papers count the full s × s attention product; a causal mask
    // leaves only the s(s+1)/2 pairs at or below the diagonal, and FlashAttention computes only
    // those (Dao 2023, FlashAttention-2 §4.1: causal FLOPs are half). Counting the square as
    // model FLOPs while the step time runs the causal half counted the masked half twice and
    // gave MFU and HFU above 1 at long sequences (issue 12: 1.197 at seq_len 524288), so model
    // FLOPs count the causal pairs, and hardware FLOPs what the kernels execute: the causal
    // pairs with FlashAttention, the full square on Megatron's unfused path.
    const double matmul =
        pc.active - pc.embedding - pc.lm_head + d(model_.vocab_size) * d(model_.hidden_size);
    const detail::Shapes whole = detail::make_shapes(model_, Parallelism{});
    const double s = d(cfg.seq_len);
    const double full_layers = d(model_.layers - whole.windowed_layers);
    double square_keys = full_layers * s; // keys per query, summed over layers
    double causal_keys = full_layers * causal_query_key_pairs(0, s) / s;
    if (whole.window > 0) {
        square_keys += d(whole.windowed_layers) * std::min(s, d(whole.window));
        causal_keys += d(whole.windowed_layers) * causal_query_key_pairs(0, s, d(whole.window)) / s;
    }
    const double per_key = 2.0 * whole.heads_rank * (whole.qk_dim + whole.v_dim);
    const double attn_model = per_key * causal_keys;
    const double attn_run = cfg.flash_attention ? attn_model : per_key * square_keys;
    const double linear = lora ? 4.0 * matmul + 6.0 * trainable_ // frozen: no weight gradient
                               : 6.0 * matmul;
    model_flops_token_ = linear + 3.0 * attn_model;
    hardware_flops_token_ = linear + 3.0 * attn_run;
    // Recomputation re-runs forward work: full recomputation the whole forward, selective (without
    // FlashAttention) the attention core (Korthikanti et al. 2022 §5).
    recompute_flops_token_full_ = 2.0 * matmul + (lora ? 2.0 * trainable_ : 0.0) + attn_run;
    recompute_flops_token_sel_ = cfg.flash_attention ? 0.0 : attn_run;

    // Energy and prices: the power model of model/power.hpp when the board power is known.
    power_model_ = prices.power_model;
    if (hw.gpu.board_power || power_model_.board_power) {
        const GpuPowerLevels levels = power_levels(hw.gpu, power_model_);
        has_power_ = true;
        resident_power_ = levels.resident.si();
        board_power_ = levels.board.si();
    }
    avg_power_ = cfg.average_gpu_power ? cfg.average_gpu_power->si() : 0.0;
    pue_ = prices.pue.value_or(1.0);
    if (prices.gpu_hour) {
        rent_per_gpu_s_ = prices.gpu_hour->money.amount / 3600.0;
    }
    if (prices.electricity && (!prices.gpu_hour || prices.electricity->money.currency ==
                                                       prices.gpu_hour->money.currency)) {
        energy_price_per_j_ = prices.electricity->money.amount / 3.6e6;
    }
}

const char* TrainingModel::power_basis() const {
    if (cfg_.average_gpu_power) {
        return "given";
    }
    return has_power_ ? "power-model" : "unknown";
}

LayoutIssue TrainingModel::check(const TrainingLayout& l) const noexcept {
    if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.cp < 1 || l.ep < 1 || l.micro_batch < 1 ||
        l.virtual_stages < 1 || static_cast<long long>(l.tp) * l.pp * l.dp * l.cp != gpus_) {
        return LayoutIssue::GpuCount;
    }
    if (model_.heads % l.tp != 0) {
        return LayoutIssue::Heads;
    }
    if (model_.attention != AttentionKind::Mla && model_.kv_heads % l.tp != 0 &&
        l.tp % model_.kv_heads != 0) {
        return LayoutIssue::KvHeads;
    }
    if (model_.ffn_size % l.tp != 0 ||
        (model_.moe && l.ep == 1 && model_.moe->expert_ffn_size % l.tp != 0)) {
        return LayoutIssue::Ffn;
    }
    if (l.pp > model_.layers) {
        return LayoutIssue::Layers;
    }
    if (l.cp > 1 && cfg_.seq_len % (2 * l.cp) != 0) {
        return LayoutIssue::Sequence;
    }
    if (l.ep > 1 && !model_.moe) {
        return LayoutIssue::NotMoe;
    }
    if (l.ep > 1 && (l.dp % l.ep != 0 || model_.moe->experts % l.ep != 0)) {
        return LayoutIssue::Experts;
    }
    if (cfg_.global_batch % l.dp != 0) {
        return LayoutIssue::Batch;
    }
    if ((cfg_.global_batch / l.dp) % l.micro_batch != 0) {
        return LayoutIssue::MicroBatch;
    }
    if (l.zero < 0 || l.zero > 3) {
        return LayoutIssue::ZeroStage;
    }
    if (l.zero >= 2 && l.pp > 1) {
        // deepspeed/runtime/pipe/engine.py: "ZeRO-2 and ZeRO-3 are incompatible with pipeline
        // parallelism".
        return LayoutIssue::ZeroPipeline;
    }
    if (l.virtual_stages > 1) {
        const long long m = cfg_.global_batch / (static_cast<long long>(l.dp) * l.micro_batch);
        if (l.pp == 1 || model_.layers < l.pp * l.virtual_stages || m % l.pp != 0) {
            return LayoutIssue::Interleave;
        }
    }
    if (!has_network_) {
        const auto spans = [&](long long size, long long stride) {
            return size > 1 && size * stride > gpus_per_node_;
        };
        if (spans(l.tp, 1) || spans(l.cp, l.tp) ||
            spans(static_cast<long long>(l.dp) * l.cp, l.tp) ||
            spans(l.ep, static_cast<long long>(l.tp) * l.cp) ||
            spans(l.pp, static_cast<long long>(l.tp) * l.cp * l.dp)) {
            return LayoutIssue::NoInterNodeLink;
        }
    }
    return LayoutIssue::None;
}

double TrainingModel::link_bw(int size, int stride, double message) const noexcept {
    const Link link = group_link(hw_, size, stride); // check() made sure a network exists
    return effective_link(link, Bytes(message), prof_.comm).bandwidth.si();
}

double TrainingModel::link_lat(int size, int stride) const noexcept {
    return group_link(hw_, size, stride).latency.si();
}

TrainingModel::Geometry TrainingModel::geometry(const TrainingLayout& l) const noexcept {
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
    const double s = d(cfg_.seq_len);
    const double rows = d(l.micro_batch) * s / d(l.cp);
    g.rows = rows;
    g.base = model_.layers / l.pp;
    g.extra = model_.layers % l.pp;
    g.first_moe =
        model_.moe ? std::clamp(model_.moe->first_dense_layers, 0, model_.layers) : model_.layers;

    const detail::Shapes sh = detail::make_shapes(model_, Parallelism{l.tp, l.pp, l.dp, l.ep});
    const double h = sh.h;
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
    g.head = (sh.lm_head > 0 ? sh.lm_head : (l.pp > 1 ? sh.vocab * h : 0.0)) / t + sh.final_norm;
    const bool lora = cfg_.method != FinetuneMethod::Full;
    g.lora_layer = lora ? lora_layer_ / t : 0.0;

    // Activations per layer and micro-batch.
    const ActRow dense_row = activation_row(model_, cfg_.flash_attention, cfg_.dropout, false);
    const ActRow moe_row = activation_row(model_, cfg_.flash_attention, cfg_.dropout, true);
    g.act_dense = layer_activation_bytes(dense_row, rows, s, h, l.tp, g.sp, l.recompute);
    g.act_moe = layer_activation_bytes(moe_row, rows, s, h, l.tp, g.sp, l.recompute);
    g.act_full_dense = layer_activation_bytes(dense_row, rows, s, h, l.tp, g.sp, Recompute::None);
    g.act_full_moe = layer_activation_bytes(moe_row, rows, s, h, l.tp, g.sp, Recompute::None);
    // The adapters' A outputs (r per module, 16 bit) are stored for B's weight gradient.
    g.act_lora = lora ? rows * 2.0 * d(cfg_.lora.rank) * lora_modules_ : 0.0;
    // Korthikanti §4.3: the embedding dropout mask on the first stage; on the last, the final
    // norm and LM-head inputs (4sbh/t) and the fp32 logits of the cross entropy (4sbV/t), with
    // the 16-bit logits (2sbV/t) alive while they are cast.
    g.act_first = cfg_.dropout ? rows * h / (g.sp ? t : 1.0) : 0.0;
    g.act_last = rows * 4.0 * h / (g.sp ? t : 1.0);
    g.logits = rows * 6.0 * sh.vocab / t;

    // ---- Times of one micro-batch on one rank ----
    const ComputeType ct = cfg_.compute;
    const FlopsPerSecond peak(peak_);
    const FlopsPerSecond peak_attn(peak_attn_);
    const BytesPerSecond bw(bw_);
    const double frozen_bytes = frozen_bits_ / 8.0;
    // A linear layer: forward, and the backward's data gradient and (when trained) weight
    // gradient, each as large as the forward (Narayanan et al. 2021 §5.1: backward = 2 ×
    // forward); QLoRA first dequantizes its 4-bit weight to 16 bit (read packed, write 16-bit)
    // in every pass (bitsandbytes dequantize_4bit before the matmul).
    struct Pass {
        double fwd = 0, bwd = 0; ///< seconds
        double mf = 0, mb = 0;   ///< of which on the memory roof (bytes / achieved bandwidth)
    };
    const auto linear = [&](double m, double k, double n, bool frozen) {
        Pass p;
        if (m <= 0 || k <= 0 || n <= 0) {
            return p;
        }
        const KernelTime f = gemm_kernel_time(m, k, n, wb_, 2.0, ct, peak, bw, prof_);
        const KernelTime dg = gemm_kernel_time(m, n, k, wb_, 2.0, ct, peak, bw, prof_);
        const KernelTime wg = gemm_kernel_time(k, m, n, 2.0, 2.0, ct, peak, bw, prof_);
        p.fwd = f.time.si();
        p.mf = f.memory.si();
        p.bwd = dg.time.si() + (frozen ? 0.0 : wg.time.si());
        p.mb = dg.memory.si() + (frozen ? 0.0 : wg.memory.si());
        if (frozen && cfg_.method == FinetuneMethod::Qlora) {
            const double deq =
                stream_kernel_time(k * n * (frozen_bytes + 2.0), bw, prof_).time.si();
            p.fwd += deq;
            p.bwd += deq;
            p.mf += deq;
            p.mb += deq;
        }
        return p;
    };
    const bool frozen = lora;
    const double mats = model_.mlp == MlpKind::Gated ? 3.0 : 2.0;
    const double qkv_n = std::max(0.0, (sh.attn_linear - sh.o_in_rank * h) / h);
    const Pass qkv = linear(rows, h, qkv_n, frozen);
    const Pass out = linear(rows, sh.o_in_rank, h, frozen);
    const Pass up = linear(rows, h, (mats - 1.0) * sh.ffn_rank, frozen);
    const Pass down = linear(rows, sh.ffn_rank, h, frozen);

    // The attention core.
    Pass attn;
    double attn_sel = 0; // what selective recomputation adds (unfused attention only)
    {
        const double b = d(l.micro_batch);
        const double heads_flops = 2.0 * sh.heads_rank * (sh.qk_dim + sh.v_dim);
        const auto core = [&](double window) {
            Pass p;
            if (cfg_.flash_attention) {
                // FlashAttention over causal pairs; context parallelism splits them evenly
                // (load-balanced ring attention, Megatron-Core).
                const double pairs = causal_query_key_pairs(0, s, window);
                const double flops = heads_flops * pairs * b / d(l.cp);
                const double bytes =
                    rows * (sh.q_width_rank + sh.kv_width_rank + sh.o_in_rank) * 2.0 +
                    (l.cp > 1 ? (s - s / d(l.cp)) * b * sh.kv_width_rank * 2.0 : 0.0);
                const double x = std::sqrt(2.0 * pairs);
                const KernelTime f =
                    attention_prefill_kernel_time(flops, bytes, x, peak_attn, bw, prof_);
                const KernelTime bk = attention_prefill_kernel_time(
                    kFlashBackwardFactor * flops, 2.0 * bytes, x, peak_attn, bw, prof_);
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
                const double gemm_ct = flops / (peak_attn_ * prof_.gemm.at(rows, sh.qk_dim * keys_w,
                                                                           ComputeType::Bf16));
                const double scores = sh.heads_rank * rows * keys_w;
                const double bytes = scores * (cfg_.dropout ? 13.0 : 8.0);
                const double st = stream_kernel_time(bytes, bw, prof_).time.si();
                p.fwd = gemm_ct + st;
                p.bwd = 2.0 * gemm_ct + 2.0 * st;
                p.mf = st;
                p.mb = 2.0 * st;
            }
            return p;
        };
        const Pass full = core(0);
        const Pass win = sh.window > 0 ? core(d(sh.window)) : full;
        const double w = g.windowed_share;
        attn.fwd = (1 - w) * full.fwd + w * win.fwd;
        attn.bwd = (1 - w) * full.bwd + w * win.bwd;
        attn.mf = (1 - w) * full.mf + w * win.mf;
        attn.mb = (1 - w) * full.mb + w * win.mb;
        attn_sel = cfg_.flash_attention ? 0.0 : attn.fwd;
    }

    // Elementwise kernels: two norms (read x, write y) and two residual adds (read 2, write 1)
    // on the sequence-parallel rows, bias-dropout-add masks, the MLP activation (plain: read f,
    // write f; gated: read 2f, write f) and RoPE on Q and K. The backward streams about twice as
    // much (gradient and saved input in, gradient out).
    const double norm_rows = g.sp ? rows / t : rows;
    const double rope =
        is_rope(model_) ? 2.0 * rows * (sh.q_width_rank + sh.kv_width_rank / 2.0) : 0.0;
    const double base_elems =
        (2.0 * 2.0 + 2.0 * 3.0 + (cfg_.dropout ? 1.0 : 0.0)) * norm_rows * h + rope;
    const auto act_elems = [&](double r, double f) { return (mats == 3.0 ? 3.0 : 2.0) * r * f; };
    const double elem_dense =
        stream_kernel_time(2.0 * (base_elems + act_elems(rows, sh.ffn_rank)), bw, prof_).time.si();
    const double launch_fwd = kFwdKernelsPerLayer * prof_.launch_overhead.si();
    const double launch_bwd = kBwdKernelsPerLayer * prof_.launch_overhead.si();

    // LoRA adapters: skinny GEMMs x·A then (x·A)·B per module; forward 2 FLOPs per adapter
    // parameter and token, backward twice that; memory: the module input, r and output widths.
    double lora_fwd = 0;
    double lora_mem = 0;
    if (lora) {
        const double flops = 2.0 * rows * lora_layer_ / t;
        const double bytes =
            rows * (lora_attn_in_ + lora_attn_out_ + lora_mlp_in_ + lora_mlp_out_) / t * 2.0;
        const double c = flops / (peak_ * prof_.gemm.at(rows, h * d(cfg_.lora.rank), ct));
        const double mt = stream_kernel_time(bytes, bw, prof_).time.si();
        lora_fwd = std::max(c, mt) + 2.0 * lora_modules_ * prof_.launch_overhead.si();
        lora_mem = mt;
    }

    g.fwd_dense =
        qkv.fwd + out.fwd + up.fwd + down.fwd + attn.fwd + elem_dense + launch_fwd + lora_fwd;
    g.bwd_dense = qkv.bwd + out.bwd + up.bwd + down.bwd + attn.bwd + 2.0 * elem_dense + launch_bwd +
                  2.0 * lora_fwd;
    g.rec_dense = l.recompute == Recompute::Full
                      ? g.fwd_dense
                      : (l.recompute == Recompute::Selective ? attn_sel : 0.0);
    const double mem_fwd_common = qkv.mf + out.mf + attn.mf + lora_mem;
    const double mem_bwd_common = qkv.mb + out.mb + attn.mb + 2.0 * lora_mem;
    {
        const double fwd = mem_fwd_common + up.mf + down.mf + elem_dense;
        const double rec =
            l.recompute == Recompute::Full
                ? fwd
                : (l.recompute == Recompute::Selective && !cfg_.flash_attention ? attn.mf : 0.0);
        g.mem_dense = fwd + mem_bwd_common + up.mb + down.mb + 2.0 * elem_dense + rec;
    }

    if (sh.moe) {
        // Routed experts: each rank computes rows × top-k token copies spread over its experts
        // (uniform routing), on expert GEMMs with rows / experts_rank rows each.
        const double copies = rows * sh.top_k;
        const double per_expert_rows = copies / std::max(1.0, sh.experts_rank);
        const double fe = sh.expert_ffn_rank;
        const auto expert_pass = [&](double flops_mult, double& mem) {
            const double flops = flops_mult * 2.0 * copies * mats * h * fe;
            const double wbytes = sh.experts_rank * mats * h * fe * wb_;
            const double bytes = flops_mult * (wbytes + copies * (2.0 * h + 2.0 * mats * fe) * 2.0);
            const double c = flops / (peak_ * prof_.gemm.at(per_expert_rows, h * fe, ct));
            mem = bytes / (bw_ * prof_.memory.at(bytes));
            return std::max(c, mem);
        };
        Pass experts;
        experts.fwd = expert_pass(1.0, experts.mf);
        experts.bwd = expert_pass(frozen ? 1.0 : 2.0, experts.mb);
        const Pass router = linear(rows, h, sh.experts_rank > 0 ? d(sh.experts) : 0.0, frozen);
        const double shared_f = sh.shared_experts > 0 ? sh.shared_linear_rank / (mats * h) : 0.0;
        const Pass sup = linear(rows, h, (mats - 1.0) * shared_f, frozen);
        const Pass sdown = linear(rows, shared_f, h, frozen);
        const double elem_moe =
            stream_kernel_time(2.0 * (base_elems + act_elems(copies, fe) +
                                      act_elems(rows, shared_f) + 2.0 * copies * h),
                               bw, prof_)
                .time.si();
        g.fwd_moe = qkv.fwd + out.fwd + attn.fwd + experts.fwd + router.fwd + sup.fwd + sdown.fwd +
                    elem_moe + launch_fwd + lora_fwd;
        g.bwd_moe = qkv.bwd + out.bwd + attn.bwd + experts.bwd + router.bwd + sup.bwd + sdown.bwd +
                    2.0 * elem_moe + launch_bwd + 2.0 * lora_fwd;
        g.rec_moe = l.recompute == Recompute::Full
                        ? g.fwd_moe
                        : (l.recompute == Recompute::Selective ? attn_sel : 0.0);
        const double fwd = mem_fwd_common + experts.mf + router.mf + sup.mf + sdown.mf + elem_moe;
        const double rec =
            l.recompute == Recompute::Full
                ? fwd
                : (l.recompute == Recompute::Selective && !cfg_.flash_attention ? attn.mf : 0.0);
        g.mem_moe = fwd + mem_bwd_common + experts.mb + router.mb + sup.mb + sdown.mb +
                    2.0 * elem_moe + rec;
    }

    // First stage: the embedding gather (read the rows of the table, write the activations);
    // its backward scatters the gradient back.
    const double emb = stream_kernel_time(rows * h * 4.0, bw, prof_).time.si();
    g.fwd_first = emb;
    g.bwd_first = 2.0 * emb;
    g.mem_first = 3.0 * emb;
    // Last stage: final norm, LM head, vocab-parallel cross entropy on fp32 logits.
    {
        const Pass headp = linear(rows, h, sh.vocab / t, frozen);
        const double ce =
            stream_kernel_time(rows * sh.vocab / t * 4.0 * kCrossEntropyPasses, bw, prof_)
                .time.si();
        const double norm = stream_kernel_time(2.0 * 2.0 * norm_rows * h, bw, prof_).time.si();
        g.fwd_last = headp.fwd + norm + ce * 2.0 / 3.0;
        g.bwd_last = headp.bwd + 2.0 * norm + ce / 3.0;
        g.rec_last = l.recompute == Recompute::Full ? headp.fwd : 0.0;
        g.mem_last = headp.mf + headp.mb + 3.0 * norm + ce +
                     (l.recompute == Recompute::Full ? headp.mf : 0.0);
    }

    // ---- Communication of one micro-batch ----
    const double ov = prof_.comm.collective_overhead.si();
    if (l.tp > 1) {
        // Megatron-LM (Shoeybi et al. 2019 §3): two all-reduces of the b·s·h activations per
        // layer in the forward and two in the backward; with sequence parallelism each becomes
        // an all-gather plus a reduce-scatter of the same volume (Korthikanti §4.2.2). Full
        // recomputation repeats the forward's two. Not overlapped with compute.
        const double msg = rows * h * 2.0;
        const Link link{BytesPerSecond(link_bw(l.tp, 1, msg)), Seconds(link_lat(l.tp, 1)), false};
        double one = 0;
        if (g.sp) {
            one = 2.0 * (all_gather_time(Bytes(msg), l.tp, link).si() + ov);
        } else {
            one = all_reduce_time(Bytes(msg), l.tp, link, AllReduceAlgorithm::Ring).si() + ov;
        }
        g.tp_layer = one * (4.0 + (l.recompute == Recompute::Full ? 2.0 : 0.0));
        g.tp_first = one;                                // vocab-parallel embedding
        g.tp_last = one + kCrossEntropyCollectives * ov; // LM-head input and the loss
    }
    if (l.ep > 1 && sh.moe) {
        // Expert dispatch and combine all-to-all of the top-k token copies, forward and backward
        // (plus the recomputed forward).
        const double per_gpu = rows * sh.top_k * h * 2.0;
        const int stride = l.tp * l.cp;
        const Link link{BytesPerSecond(link_bw(l.ep, stride, per_gpu)),
                        Seconds(link_lat(l.ep, stride)), false};
        const double each = all_to_all_time(Bytes(per_gpu), l.ep, link).si() + ov;
        g.ep_layer = each * (4.0 + (l.recompute == Recompute::Full ? 2.0 : 0.0));
    }
    if (l.cp > 1) {
        // Ring attention (Liu et al. 2023; Megatron-Core context parallelism): cp − 1 exchanges
        // of the local K and V per layer in the forward, K, V and their gradients in the
        // backward, overlapped with the attention blocks; only the excess is exposed.
        const double kv_bytes = rows * sh.kv_width_rank * 2.0;
        const Link link{BytesPerSecond(link_bw(l.cp, l.tp, kv_bytes)),
                        Seconds(link_lat(l.cp, l.tp)), false};
        const double fwd = (l.cp - 1.0) * p2p_time(Bytes(kv_bytes), link).si();
        g.cp_layer = std::max(0.0, fwd - attn.fwd) + std::max(0.0, 2.0 * fwd - attn.bwd) +
                     (l.recompute == Recompute::Full ? std::max(0.0, fwd - attn.fwd) : 0.0);
    }
    if (l.pp > 1) {
        // Each stage receives the activations and sends the gradient of every micro-batch;
        // Megatron's scatter/gather optimization sends 1/t of the b·s·h tensor per rank
        // (Narayanan et al. 2021 §4.1).
        const double msg = rows * h * 2.0 / t;
        const int stride = l.tp * l.cp * l.dp;
        const Link link{BytesPerSecond(link_bw(l.pp, stride, msg)), Seconds(link_lat(l.pp, stride)),
                        false};
        g.pp_mb = 2.0 * (p2p_time(Bytes(msg), link).si() + ov);
    }
    return g;
}

namespace {

struct StageShape {
    int layers = 0;
    int moe = 0;
    bool first = false;
    bool last = false;
};

// Stage k of pp: L / pp layers each, the remainder one each to the stages before the last (the
// partition of detail::pipeline_stage), in O(1).
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

} // namespace

StageMemory TrainingModel::memory_of(const TrainingLayout& l, const Geometry& g,
                                     int stage) const noexcept {
    const StageShape st = stage_shape(g.pp, g.base, g.extra, g.first_moe, stage);
    const double dense_layers = st.layers - st.moe;
    const double moe_layers = st.moe;
    const double nd = d(g.nd);
    const double params = dense_layers * (g.attn + g.dense) +
                          moe_layers * (g.attn + g.moe_shared + g.experts) +
                          (st.first ? g.emb : 0.0) + (st.last ? g.head : 0.0);
    StageMemory r;
    r.stage = stage;
    r.layers = st.layers;
    // 1F1B: stage k holds at most p − k micro-batches (Narayanan et al. 2021 §2.2.1), never more
    // than there are. Interleaved with v chunks per stage, Megatron's warm-up runs
    // 2(p − k − 1) + (v − 1)·p chunk forwards before the first backward, each chunk 1/v of the
    // stage's layers: ((v − 1)·p + 2(p − k) − 1)/v stage-worths (p + (p − 1)/v on the first
    // stage, Korthikanti et al. 2022 §4.2.3: L·(1 + (p − 1)/(p·v))).
    if (l.virtual_stages > 1) {
        const double v = d(l.virtual_stages);
        r.in_flight = ((v - 1.0) * g.pp + 2.0 * (g.pp - stage) - 1.0) / v;
    } else {
        r.in_flight = std::min(g.m, g.pp - stage);
    }
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
    double buffers = 0;
    if (g.nd > 1) {
        buffers += 2.0 * std::max(kBucketElements, kBucketPerRank * nd);
    }
    if (z3) {
        const double layer = g.attn + std::max(g.dense, g.moe_shared + g.experts);
        buffers += (kZero3GatheredLayers + kZero3GradLayers) * 2.0 * layer;
    }
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

TrainingModel::StageTime TrainingModel::stage_time(const TrainingLayout& l, const Geometry& g,
                                                   int stage, bool with_comm) const noexcept {
    const StageShape st = stage_shape(g.pp, g.base, g.extra, g.first_moe, stage);
    const double dense = st.layers - st.moe;
    const double moe = st.moe;
    StageTime t;
    t.fwd = dense * g.fwd_dense + moe * g.fwd_moe + (st.first ? g.fwd_first : 0.0) +
            (st.last ? g.fwd_last : 0.0);
    t.bwd = dense * (g.bwd_dense + g.rec_dense) + moe * (g.bwd_moe + g.rec_moe) +
            (st.first ? g.bwd_first : 0.0) + (st.last ? g.bwd_last + g.rec_last : 0.0);
    t.compute = t.fwd + t.bwd;
    t.mem = dense * g.mem_dense + moe * g.mem_moe + (st.first ? g.mem_first : 0.0) +
            (st.last ? g.mem_last : 0.0);
    if (with_comm) {
        t.tp =
            d(st.layers) * g.tp_layer + (st.first ? g.tp_first : 0.0) + (st.last ? g.tp_last : 0.0);
        t.ep = moe * g.ep_layer;
        t.cp = d(st.layers) * g.cp_layer;
        t.pp = g.pp_mb;
    }
    (void)l;
    return t;
}

void TrainingModel::finish(LayoutResult& r, const TrainingLayout& l,
                           const Geometry& g) const noexcept {
    // The slowest stage paces the pipeline: first and last stages have the embedding and the LM
    // head; middle stages at most one layer more than the last.
    int slow = 0;
    StageTime ts = stage_time(l, g, 0, true);
    const auto consider = [&](int k) {
        const StageTime t = stage_time(l, g, k, true);
        if (t.total() > ts.total()) {
            ts = t;
            slow = k;
        }
    };
    if (g.pp > 1) {
        consider(g.pp - 1);
        if (g.pp > 2) {
            consider(g.extra > 0 ? g.pp - 2 : 1);
        }
    }
    (void)slow;
    const double m = d(g.m);
    const double slot = ts.total();
    StepBreakdown& b = r.step;
    b.compute = Seconds(m * ts.compute);
    b.tp_comm = Seconds(m * ts.tp);
    b.ep_comm = Seconds(m * ts.ep);
    b.cp_comm = Seconds(m * ts.cp);
    // Interleaving sends v times as often (Narayanan et al. 2021 §2.2.2).
    const double v = d(l.virtual_stages);
    b.pp_comm = Seconds(m * ts.pp * v);
    // 1F1B: (m + p − 1) slots, p − 1 of them fill and drain (Narayanan et al. 2021 §2.2.1);
    // interleaving shrinks the fill and drain to (p − 1)/v slots (§2.2.2).
    b.bubble = Seconds((g.pp - 1.0) / v * (slot + (v - 1.0) * ts.pp));

    // Data-parallel gradient traffic of the fullest stage (the first, or the last with the LM
    // head). ZeRO §7: stages 0–2 move 2Ψ per rank (reduce-scatter + all-gather = all-reduce);
    // stage 3 moves 3Ψ (an all-gather in the forward and one in the backward, a reduce-scatter).
    // DeepSpeed reduces ZeRO-2/3 gradients in every micro-batch's backward; stages 0–1 once per
    // step after accumulation.
    double dp_comm = 0, hide = 0;
    if (g.nd > 1) {
        const StageMemory first = memory_of(l, g, 0);
        const StageMemory last = g.pp > 1 ? memory_of(l, g, g.pp - 1) : first;
        const double grad = std::max(first.gradients.si() * (l.zero >= 2 ? g.nd : 1.0),
                                     last.gradients.si() * (l.zero >= 2 ? g.nd : 1.0));
        const double weights = std::max(first.weights.si() * (l.zero >= 3 ? g.nd : 1.0),
                                        last.weights.si() * (l.zero >= 3 ? g.nd : 1.0));
        const double ov = prof_.comm.collective_overhead.si();
        const auto ar = [&](double bytes) {
            const Link link{BytesPerSecond(link_bw(g.nd, g.tp, bytes)),
                            Seconds(link_lat(g.nd, g.tp)), false};
            return all_reduce_time(Bytes(bytes), g.nd, link, AllReduceAlgorithm::Ring).si() + ov;
        };
        const auto half = [&](double bytes) { // reduce-scatter or all-gather
            const Link link{BytesPerSecond(link_bw(g.nd, g.tp, bytes)),
                            Seconds(link_lat(g.nd, g.tp)), false};
            return all_gather_time(Bytes(bytes), g.nd, link).si() + ov;
        };
        const StageTime t1 = ts;
        if (l.zero <= 1) {
            dp_comm = ar(grad);
            hide = t1.bwd; // only the last micro-batch's backward can hide it
        } else if (l.zero == 2) {
            dp_comm = m * half(grad) + half(weights);
            hide = m * t1.bwd;
        } else {
            const double gathers = 2.0 + (l.recompute == Recompute::Full ? 1.0 : 0.0);
            dp_comm = m * (gathers * half(weights) + half(grad));
            hide = m * (t1.fwd + t1.bwd);
        }
    }
    b.dp_comm = Seconds(dp_comm);
    b.dp_exposed = Seconds(dp_comm - std::min(overlap_ * dp_comm, hide));
    b.exposed_comm = b.tp_comm + b.ep_comm + b.cp_comm + b.pp_comm + b.dp_exposed;

    // Optimizer step: a streaming pass over this rank's shard of the trained parameters.
    {
        const double trained_per_rank = r.memory.optimizer_states.si() / std::max(k_, 1e-9);
        const double bytes = trained_per_rank * opt_rw_bytes_;
        b.optimizer = stream_kernel_time(bytes, BytesPerSecond(bw_), prof_).time +
                      prof_.launch_overhead * 4.0;
    }

    // Input stall: a prefetching loader overlaps loading with the step; the GPUs wait only when
    // the loaders deliver fewer tokens per second than the step consumes.
    const double busy = (b.compute + b.exposed_comm + b.bubble + b.optimizer).si();
    const double tokens_step = d(cfg_.global_batch) * d(cfg_.seq_len);
    if (loader_ > 0) {
        const double nodes = std::ceil(d(gpus_) / d(std::max(1, gpus_per_node_)));
        const double load = tokens_step / (loader_ * nodes);
        b.input_stall = Seconds(std::max(0.0, load - busy));
    }
    b.total = Seconds(busy) + b.input_stall;

    const double total = b.total.si();
    const double n = d(gpus_);
    r.micro_batches = g.m;
    r.tokens_per_s = total > 0 ? tokens_step / total : 0.0;
    r.tokens_per_s_per_gpu = r.tokens_per_s / n;
    r.model_flops = Flops(model_flops_token_ * tokens_step);
    const double rec =
        l.recompute == Recompute::Full
            ? recompute_flops_token_full_
            : (l.recompute == Recompute::Selective ? recompute_flops_token_sel_ : 0.0);
    r.hardware_flops = Flops((hardware_flops_token_ + rec) * tokens_step);
    r.mfu = total > 0 ? r.model_flops.si() / (total * n * nominal_peak_) : 0.0;
    r.hfu = total > 0 ? r.hardware_flops.si() / (total * n * nominal_peak_) : 0.0;
    // Every kernel runs at most at the peak, so a utilization above 1 is a FLOP counted twice
    // (evaluate() is noexcept and runs in the search loop: an assert, and a test over layouts).
    assert(r.hfu <= 1.0 + 1e-9 && r.mfu <= r.hfu + 1e-12);
    r.steps = cfg_.tokens / tokens_step;
    r.time_to_train = Seconds(r.steps * total);
    r.gpu_hours = r.time_to_train.si() * n / 3600.0;

    // Energy: a given average, else the power model (model/power.hpp) at the step's time-averaged
    // activity: hardware FLOPs over the datasheet peak (the HFU) and device bytes over the
    // datasheet bandwidth, at the clock the derating leaves. Waiting (bubble, exposed
    // communication, input stalls) lowers both, so it is charged near the resident power.
    double watts = avg_power_;
    if (has_power_ && total > 0) {
        const double bytes_per_gpu = (m * ts.mem + b.optimizer.si()) * bw_ * prof_.memory.max;
        StepActivity a;
        a.compute = std::min(1.0, r.hfu);
        a.memory = std::min(1.0, bytes_per_gpu / (hw_.gpu.memory_bandwidth.si() * total));
        GpuPowerLevels levels;
        levels.resident = Watts(resident_power_);
        levels.board = Watts(board_power_);
        levels.idle = levels.resident;
        if (watts <= 0) {
            watts = step_power(a, levels, power_model_, hw_.clocks.compute).si();
        }
        // While kernels run the activity is the step's divided by the busy share.
        const double busy = (b.compute + b.optimizer).si();
        if (busy > 0) {
            StepActivity k;
            k.compute = std::min(1.0, a.compute * total / busy);
            k.memory = std::min(1.0, a.memory * total / busy);
            r.busy_gpu_power = step_power(k, levels, power_model_, hw_.clocks.compute);
        }
    }
    r.average_gpu_power = Watts(watts);
    r.energy = Joules(watts * n * r.time_to_train.si());
    r.cost =
        rent_per_gpu_s_ * n * r.time_to_train.si() + energy_price_per_j_ * r.energy.si() * pue_;
}

LayoutResult TrainingModel::evaluate(const TrainingLayout& layout) const noexcept {
    LayoutResult r;
    r.layout = layout;
    r.layout.sequence_parallel = layout.sequence_parallel && layout.tp > 1;
    r.issue = check(layout);
    if (r.issue != LayoutIssue::None) {
        return r;
    }
    const Geometry g = geometry(r.layout);
    // The binding stage: the fullest of all (O(pp), no allocation).
    r.memory = memory_of(r.layout, g, 0);
    for (int k = 1; k < g.pp; ++k) {
        const StageMemory mk = memory_of(r.layout, g, k);
        if (mk.total > r.memory.total) {
            r.memory = mk;
        }
    }
    r.fits = r.memory.fits;
    finish(r, r.layout, g);
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

Seconds TrainingModel::single_gpu_step(const TrainingLayout& layout) const noexcept {
    TrainingLayout one;
    one.micro_batch = layout.micro_batch;
    one.recompute = layout.recompute;
    one.sequence_parallel = false;
    const Geometry g = geometry(one);
    const StageTime t = stage_time(one, g, 0, false);
    const double m = d(std::max(1, cfg_.global_batch / std::max(1, one.micro_batch)));
    // Every parameter's optimizer update on the one GPU.
    const double bytes = trainable_ * opt_rw_bytes_;
    double step = m * t.compute + stream_kernel_time(bytes, BytesPerSecond(bw_), prof_).time.si();
    if (loader_ > 0) {
        const double load = d(cfg_.global_batch) * d(cfg_.seq_len) / loader_;
        step = std::max(step, load);
    }
    return Seconds(step);
}

} // namespace gpuplan::model
