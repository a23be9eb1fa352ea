// The training model of one job: names and messages, the closed-form helpers, the per-job
// set-up (peaks, LoRA adapters, FLOPs per token, power and prices) and the layout check. The
// memory per GPU is in training_memory.cpp, the per-layout shapes and kernel times in
// training_geometry.cpp, the step time, energy and cost in training_time.cpp.

#include "model/training.hpp"

#include "model/detail/shapes.hpp"
#include "model/detail/training_parts.hpp"
#include "model/error.hpp"
#include "model/kernel_time.hpp"
#include "model/lora.hpp"
#include "model/model_spec.hpp"
#include "model/moe.hpp"
#include "model/power.hpp"
#include "model/validity.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuplan::model {

namespace {

using detail::d;

// Runtime memory per GPU outside PyTorch's allocator, after memory.cpp's inference defaults:
// CUDA context and framework start-up 0.5 GiB, non-torch (cuBLAS workspaces) 0.4 GiB, plus
// 1.8 GiB of NCCL buffers once communicators exist (vllm-project/vllm PR #10511's H100 log:
// +1.79 GiB from TP1 to TP2; docs/engines.md §1.6). Training creates several communicators (tp, dp,
// pp); their growth is unmeasured and assumed flat [U].
constexpr double kRuntimeBase = 0.9 * kGiB;
constexpr double kRuntimeNccl = 1.8 * kGiB;

// One LoRA-adapted linear: input and output widths of the whole (unsharded) layer.
// Throws InvalidArgument naming the job when `ok` is false.
void require(bool ok, const Deployment& hw, const std::string& what) {
    if (!ok) {
        throw InvalidArgument("training '" + hw.model.name + "' on '" + hw.gpu.name + "': " + what);
    }
}

// The ranges of the scenario file's keys (hwdb training reader), checked here too so flags and
// code get them: 1e300 tokens made the total compute infinite.
void check_job(const Deployment& hw, const TrainingConfig& cfg) {
    const auto req = [&](bool ok, const std::string& what) { require(ok, hw, what); };
    req(hw.gpus() >= 1, "gpus is " + std::to_string(hw.gpus()) + "; use at least 1");
    req(hw.gpus_per_node >= 1, "gpus_per_node must be at least 1");
    req(cfg.tokens > 0 && cfg.tokens <= 1e18,
        "tokens to train must be from 1 to 1e18; give e.g. 'tokens: 300e9'");
    req(cfg.global_batch >= 1 && cfg.global_batch <= (1 << 26),
        "global_batch (sequences per step) must be from 1 to 67108864");
    req(cfg.seq_len >= 1 && cfg.seq_len <= (1 << 28), "seq_len must be from 1 to 268435456");
    req(!cfg.grad_reduce_overlap ||
            (*cfg.grad_reduce_overlap >= 0 && *cfg.grad_reduce_overlap <= 1),
        "grad_reduce_overlap must lie in [0, 1]");
    req(!cfg.grad_bucket || cfg.grad_bucket->si() > 0, "grad_bucket must be positive");
    req(!cfg.moe_load_imbalance || *cfg.moe_load_imbalance >= 1.0,
        "moe_load_imbalance must be at least 1 (the busiest rank's load over the mean)");
    req(!cfg.ep_overlap || (*cfg.ep_overlap >= 0 && *cfg.ep_overlap <= 1),
        "ep_overlap must lie in [0, 1]");
    req(!cfg.fragmentation || (*cfg.fragmentation >= 0 && *cfg.fragmentation < 1),
        "fragmentation must lie in [0, 1)");
    req(!cfg.runtime_overhead || cfg.runtime_overhead->si() >= 0,
        "runtime_overhead must not be negative");
    req(!cfg.data_loader_tokens_per_s || *cfg.data_loader_tokens_per_s > 0,
        "data_loader_tokens_per_s must be positive");
    req(cfg.method == FinetuneMethod::Full || cfg.lora.rank >= 1, "lora rank must be >= 1");
    req(hw.gpu.memory.si() > 0 && hw.gpu.memory_bandwidth.si() > 0,
        "the accelerator has no memory or bandwidth; check its hwdb entry");
    req(hw.clocks.compute > 0 && hw.clocks.compute <= 1 && hw.clocks.memory > 0 &&
            hw.clocks.memory <= 1,
        "clock factors must lie in (0, 1]");
}

} // namespace

// ---- Names ----

const char* to_string(Recompute r) {
    return name_of(r);
}

const char* to_string(TrainOptimizer o) {
    return name_of(o);
}

const char* to_string(FinetuneMethod f) {
    return name_of(f);
}

const char* to_string(RankBy r) {
    return r == RankBy::Cost ? "cost" : "time";
}

std::optional<Recompute> find_recompute(std::string_view n) {
    return value_of<Recompute>(n);
}

std::optional<TrainOptimizer> find_optimizer(std::string_view n) {
    return value_of<TrainOptimizer>(n);
}

std::optional<FinetuneMethod> find_finetune_method(std::string_view n) {
    return value_of<FinetuneMethod>(n);
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

// ---- The model ----

TrainingModel::TrainingModel(const Deployment& hw, const TrainingConfig& cfg,
                             const EfficiencyProfile& profile, const TrainingCostInputs& prices)
    : cfg_(cfg), prof_(profile), model_(hw.model), hw_(hw) {
    validate(model_, "model '" + model_.name + "'");
    check_job(hw, cfg);
    gpus_ = hw.gpus();
    gpus_per_node_ = hw.gpus_per_node;
    has_network_ = hw.inter_node_link.has_value();
    set_peaks(hw, cfg);

    const ParamCount pc = count_params(model_);
    params_ = pc.total;
    k_ = optimizer_state_bytes(cfg.optimizer, cfg.master_weights_fp32);
    overlap_ = cfg.grad_reduce_overlap.value_or(kDefaultGradReduceOverlap);
    bucket_ = cfg.grad_bucket ? cfg.grad_bucket->si() : kDefaultGradBucketBytes;
    ep_overlap_ = cfg.ep_overlap.value_or(kDefaultEpOverlap);
    if (model_.moe) {
        // Expert-parallel groups never exceed the GPUs.
        const std::size_t top =
            std::min(max_normal_.size(), static_cast<std::size_t>(std::max(gpus_, 1)) + 1);
        for (std::size_t n = 1; n < top; ++n) {
            max_normal_[n] = expected_max_std_normal(static_cast<int>(n));
        }
    }
    frag_ = cfg.fragmentation.value_or(kDefaultFragmentation);
    runtime_ = cfg.runtime_overhead ? cfg.runtime_overhead->si()
                                    : kRuntimeBase + (gpus_ > 1 ? kRuntimeNccl : 0.0);
    loader_ = cfg.data_loader_tokens_per_s.value_or(0.0);
    set_lora(cfg);

    // Optimizer-step traffic per trained parameter: read master (or the 16-bit weight), the
    // gradient and the moments; write them back plus the 16-bit weight; one more gradient read
    // for the global-norm clipping (Megatron clip_grad_norm).
    const double mom = detail::moment_bytes(cfg.optimizer);
    const double master = cfg.master_weights_fp32 ? 4.0 : 2.0;
    opt_rw_bytes_ =
        (master + 2.0 + mom) + (master + mom + (cfg.master_weights_fp32 ? 2.0 : 0.0)) + 2.0;

    set_flops_per_token(cfg, pc.active - pc.embedding - pc.lm_head +
                                 d(model_.vocab_size) * d(model_.hidden_size));
    set_prices(hw, cfg, prices);
}

// The GEMM and attention peaks and the bandwidth, derated by the clocks.
void TrainingModel::set_peaks(const Deployment& hw, const TrainingConfig& cfg) {
    // bf16/fp16 need the GPU's own path (a V100 has no bf16), the rule serving applies too.
    check_compute_path(hw.gpu, cfg.compute, "training compute");
    // The GEMM path: fp8 needs a real fp8 peak (no silent fallback to bf16).
    const auto own = hw.gpu.dense.for_type(cfg.compute);
    if (cfg.compute == ComputeType::Fp8) {
        require(own && own->si() > 0, hw,
                "'" + hw.gpu.name +
                    "' has no fp8 tensor-core path; train in bf16 "
                    "(compute: bf16)");
    }
    const auto gemm_peak = kernel_peak(hw.gpu, cfg.compute);
    const auto attn_peak = kernel_peak(hw.gpu, ComputeType::Bf16);
    require(gemm_peak.has_value() && attn_peak.has_value(), hw,
            "the accelerator has no dense bf16/fp16/fp32 peak; add dense.bf16 to its hwdb entry");
    nominal_peak_ = gemm_peak->si();
    peak_ = nominal_peak_ * hw.clocks.compute;
    peak_attn_ = attn_peak->si() * hw.clocks.compute;
    bw_ = hw.gpu.memory_bandwidth.si() * hw.clocks.memory;
    wb_ = cfg.compute == ComputeType::Fp8 ? 1.0 : 2.0;
}

// LoRA adapters: r × (in + out) parameters per adapted linear (Hu et al. 2021 §4.1).
void TrainingModel::set_lora(const TrainingConfig& cfg) {
    if (cfg.method == FinetuneMethod::Full) {
        trainable_ = params_;
        return;
    }
    const double r = d(cfg.lora.rank);
    // MoE layers adapt every expert's MLP (PEFT all-linear on Mixtral adapts w1, w2, w3).
    const double mlp_copies =
        model_.moe ? d(model_.moe->experts + model_.moe->shared_experts) : 1.0;
    for (const std::string& name : cfg.lora.target_modules) {
        const std::optional<LoraModule> one = value_of<LoraModule>(name);
        require(one || name == "all-linear", hw_,
                "unknown lora target module '" + name + "'; use " + names_list<LoraModule>(" ") +
                    " or all-linear");
        for (const EnumName<LoraModule>& entry : enum_names(LoraModule{})) {
            if ((one && entry.value != *one) ||
                (entry.value == LoraModule::GateProj && model_.mlp == MlpKind::Plain)) {
                continue; // not this module, or a plain MLP, which has no gate
            }
            const LoraModuleDims dims = lora_module_dims(model_, entry.value);
            const bool mlp = lora_module_is_mlp(entry.value);
            const double copies = mlp ? mlp_copies : 1.0;
            lora_modules_ += 1.0;
            (mlp ? lora_mlp_in_ : lora_attn_in_) += copies * (dims.in + 2.0 * r);
            (mlp ? lora_mlp_out_ : lora_attn_out_) += copies * dims.out;
            lora_layer_ += copies * r * (dims.in + dims.out);
        }
    }
    require(lora_layer_ > 0, hw_, "lora target_modules is empty; name at least one module");
    trainable_ = lora_layer_ * d(model_.layers);
    frozen_bits_ = cfg.method == FinetuneMethod::Qlora ? cfg.lora.qlora_base_bits : 16.0;
}

// Model FLOPs per token (Korthikanti et al. 2022 §6: 72·B·s·l·h²(1 + s/6h + V/12lh) for
// GPT, i.e. 6 × (layer and LM-head matmul parameters) + 12·l·h·s; PaLM Appendix B:
// 6N + 12·L·H·Q·T), with `matmul` the matmul parameters. Those papers count the full s × s
// attention product; a causal mask leaves only the s(s+1)/2 pairs at or below the diagonal, and
// FlashAttention computes only those (Dao 2023, FlashAttention-2 §4.1: causal FLOPs are half).
// Counting the square as model FLOPs while the step time runs the causal half counted the
// masked half twice and gave MFU and HFU above 1 at long sequences (issue 12: 1.197 at seq_len
// 524288), so model FLOPs count the causal pairs, and hardware FLOPs what the kernels execute:
// the causal pairs with FlashAttention, the full square on Megatron's unfused path.
void TrainingModel::set_flops_per_token(const TrainingConfig& cfg, double matmul) {
    const bool lora = cfg.method != FinetuneMethod::Full;
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
}

// Energy and prices: the power model of model/power.hpp when the board power is known.
void TrainingModel::set_prices(const Deployment& hw, const TrainingConfig& cfg,
                               const TrainingCostInputs& prices) {
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

} // namespace gpuplan::model
