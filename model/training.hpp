#pragma once
/// The training planner: memory per GPU under ZeRO/FSDP and tensor, pipeline, data, context and
/// expert parallelism; the time of one optimizer step on the same calibrated roofline as
/// inference (model/kernel_time.hpp, model/comm.hpp); MFU and HFU, time and GPU-hours to train,
/// scaling from one GPU, energy and cost; and a search over layouts. The formulas and their
/// sources are in training*.cpp and docs/training.md:
///   model states (ZeRO, Rajbhandari et al. 2020 §3.1, §5): (2 + 2 + K) bytes per parameter,
///     K = 12 for mixed-precision Adam, sharded over data parallel by stage 1 (K), 2 (+ grads)
///     and 3 (+ weights);
///   activations (Korthikanti et al. 2022, eq. 1–5): s·b·h·(34 + 5·a·s/h) bytes per layer and
///     micro-batch, ÷ t with tensor and sequence parallelism, without the 5·a·s/h term under
///     selective recomputation, 2·s·b·h under full recomputation; 1F1B keeps up to p micro-batches
///     in flight on the first stage (Narayanan et al. 2021 §2.2);
///   FLOPs (Korthikanti et al. 2022 §6, PaLM Appendix B): 6 × matmul parameters + 12·L·h·s per
///     token, recomputation adding its forward;
///   pipeline bubble (p − 1)/(m + p − 1) of a 1F1B step (Narayanan et al. 2021 §2.2.1).
/// TrainingModel::evaluate is allocation-free so that search_layouts ranks > 10,000 layouts/s.

#include "model/deployment.hpp"
#include "model/efficiency.hpp"
#include "model/failures.hpp"
#include "model/money.hpp"
#include "model/power_model.hpp"
#include "model/precision.hpp"
#include "model/training_config.hpp"
#include "model/units.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::model {

namespace detail {
struct Shapes;     // model/detail/shapes.hpp
struct KernelPass; // model/detail/training_parts.hpp
} // namespace detail

/// Why a layout cannot run (None when it can).
enum class LayoutIssue : std::uint8_t {
    None,
    GpuCount,       ///< tp × pp × dp × cp is not the GPU count
    Heads,          ///< tp does not divide the attention heads
    KvHeads,        ///< tp and the KV heads do not divide one another
    Ffn,            ///< tp does not divide the MLP size
    Layers,         ///< more stages than layers
    Sequence,       ///< cp does not divide the sequence into 2·cp chunks
    Experts,        ///< ep does not divide dp and the expert count
    NotMoe,         ///< ep > 1 on a dense model
    Batch,          ///< dp does not divide the global batch
    MicroBatch,     ///< micro_batch does not divide the per-replica batch
    ZeroStage,      ///< ZeRO stage outside 0–3
    ZeroPipeline,   ///< ZeRO-2/3 with pipeline parallelism (DeepSpeed refuses it)
    Interleave,     ///< virtual stages without pp > 1, enough layers, or m divisible by pp
    NoInterNodeLink ///< a group spans nodes and there is no network
};

/// One lowercase sentence saying what is wrong and how to fix it.
[[nodiscard]] const char* to_string(LayoutIssue issue);

/// Time of one optimizer step, split into what the issue asks to see. compute + exposed_comm +
/// bubble + optimizer + input_stall = total.
struct StepBreakdown {
    Seconds compute;      ///< forward + backward (+ recompute) kernels, m micro-batches
    Seconds exposed_comm; ///< TP, CP, EP and PP communication plus the unhidden DP reduction
    Seconds bubble;       ///< pipeline fill and drain: (p − 1) micro-batch slots
    Seconds optimizer;    ///< the optimizer step over this GPU's shard (memory-bound)
    Seconds input_stall;  ///< waiting for the data loader
    Seconds total;
    // Communication details (before overlap), per step.
    Seconds tp_comm;    ///< tensor-parallel all-reduces / all-gathers + reduce-scatters
    Seconds pp_comm;    ///< activation and gradient sends between stages
    Seconds dp_comm;    ///< gradient (and ZeRO-3 parameter) collectives, before overlap
    Seconds dp_exposed; ///< the part of dp_comm not hidden behind backward compute
    Seconds ep_comm;    ///< expert all-to-all
    Seconds cp_comm;    ///< context-parallel KV exchange not hidden behind attention
    friend bool operator==(const StepBreakdown&, const StepBreakdown&) = default;
};

/// Memory of one GPU of one pipeline stage, with the verdict.
struct StageMemory {
    int stage = 0;
    int layers = 0;
    /// Micro-batches whose activations are held: min(m, p − k) under 1F1B; with v virtual
    /// stages ((v − 1)·p + 2(p − k) − 1)/v (Megatron's interleaved warm-up, Korthikanti §4.2.3).
    double in_flight = 0;
    Bytes weights; ///< compute copy (frozen base included for LoRA)
    Bytes gradients;
    Bytes optimizer_states; ///< master weights and moments
    Bytes activations;      ///< stored activations of the micro-batches in flight
    Bytes logits;           ///< fp32 logits of the loss (last stage)
    Bytes buffers;          ///< communication buckets, ZeRO-3 gathered layers
    Bytes runtime;          ///< CUDA context, NCCL, cuBLAS
    Bytes fragmentation;
    Bytes total;
    Bytes capacity; ///< what CUDA reports (99 % of the physical memory)
    Bytes free;     ///< capacity − total; negative when short
    bool fits = false;
    friend bool operator==(const StageMemory&, const StageMemory&) = default;
};

/// One layout's answer. Allocation-free (TrainingModel::evaluate builds it in the search loop).
struct LayoutResult {
    TrainingLayout layout;
    LayoutIssue issue = LayoutIssue::None;
    bool fits = false;
    StageMemory memory;    ///< the binding (fullest) stage
    int micro_batches = 0; ///< m: micro-batches per step per pipeline (gradient accumulation)
    StepBreakdown step;
    double tokens_per_s = 0;
    double tokens_per_s_per_gpu = 0;
    double mfu = 0;       ///< model FLOPs / (step time × GPUs × dense peak of the compute path)
    double hfu = 0;       ///< the same with recomputation counted
    Flops model_flops;    ///< per step, all GPUs
    Flops hardware_flops; ///< per step, all GPUs, recomputation included
    double steps = 0;     ///< optimizer steps to train the tokens
    Seconds time_to_train;
    double gpu_hours = 0;
    Watts average_gpu_power; ///< 0 when unknown
    /// Per GPU while kernels run (compute and optimizer): what a power limit holds down; 0 when
    /// unknown.
    Watts busy_gpu_power;
    Joules energy;   ///< GPUs only, facility PUE excluded; 0 when unknown
    double cost = 0; ///< in the ranking currency (0 when no prices)
    friend bool operator==(const LayoutResult&, const LayoutResult&) = default;
};

/// Prices and facility figures for energy and cost (the scenario's prices: and power:).
struct TrainingCostInputs {
    std::optional<Price> gpu_hour;    ///< rent per GPU-hour
    std::optional<Price> electricity; ///< per kWh, for owned hardware
    std::optional<double> pue;        ///< facility power usage effectiveness
    PowerModel power_model;           ///< the scenario's power-model overrides
    /// Per-GPU power limit (a cap, or a node or rack budget turned into one, model/power.hpp
    /// gpu_power_limit): the GPUs run at the highest clock whose busy power fits.
    std::optional<Watts> gpu_power_limit;
    friend bool operator==(const TrainingCostInputs&, const TrainingCostInputs&) = default;
};

/// The training cost model of one job on one kind of hardware, with everything that does not
/// depend on the layout precomputed. `evaluate` neither allocates nor throws.
class TrainingModel {
  public:
    /// `hw` supplies the model, GPU, GPU count, GPUs per node, links and clock derating (its
    /// `par`, `prec` and `engine` are ignored). Throws InvalidArgument when the job is
    /// inconsistent (no tokens, batch or sequence; unknown LoRA module; no peak for the compute
    /// path; a negative override).
    TrainingModel(const Deployment& hw, const TrainingConfig& cfg, const EfficiencyProfile& profile,
                  const TrainingCostInputs& prices = {});

    /// The memory, step time and throughput of `layout` on all GPUs. O(1), allocation-free.
    [[nodiscard]] LayoutResult evaluate(const TrainingLayout& layout) const noexcept;

    /// Memory of every pipeline stage of `layout` (a valid layout).
    [[nodiscard]] std::vector<StageMemory> stage_memory(const TrainingLayout& layout) const;

    /// The step time of the whole global batch on one GPU with no communication, memory not
    /// checked (the reference of the scaling efficiency).
    [[nodiscard]] Seconds single_gpu_step(const TrainingLayout& layout) const noexcept;

    /// Model FLOPs per trained token (6 × matmul parameters + 12·L·h·s, or 4× frozen for LoRA).
    [[nodiscard]] double model_flops_per_token() const { return model_flops_token_; }
    /// Total parameters.
    [[nodiscard]] double params() const { return params_; }
    /// Trained parameters (all, or the adapters).
    [[nodiscard]] double trainable_params() const { return trainable_; }
    /// K: optimizer-state bytes per trained parameter (12 for mixed-precision Adam).
    [[nodiscard]] double optimizer_bytes_per_param() const { return k_; }
    /// The resolved overlap, fragmentation and runtime defaults.
    [[nodiscard]] double grad_reduce_overlap() const { return overlap_; }
    [[nodiscard]] double fragmentation() const { return frag_; }
    /// Runtime overhead per GPU (multi-GPU communicators included when gpus > 1).
    [[nodiscard]] Bytes runtime_overhead() const { return Bytes(runtime_); }
    /// Dense datasheet peak of the compute path (MFU denominator).
    [[nodiscard]] FlopsPerSecond peak() const { return FlopsPerSecond(nominal_peak_); }
    [[nodiscard]] int gpus() const { return gpus_; }
    [[nodiscard]] const TrainingConfig& config() const { return cfg_; }
    /// How the average power is found: "given", "power-model" or "unknown".
    [[nodiscard]] const char* power_basis() const;

  private:
    struct Geometry;     // model/detail/training_parts.hpp
    struct LayerKernels; // model/detail/training_parts.hpp
    struct StageTime {
        double compute = 0, tp = 0, ep = 0, cp = 0, pp = 0, fwd = 0, bwd = 0;
        double mem = 0; ///< memory-roof seconds of the kernels (bytes / achieved bandwidth)
        [[nodiscard]] double total() const { return compute + tp + ep + cp + pp; }
    };
    // The job, once (training.cpp).
    void set_peaks(const Deployment& hw, const TrainingConfig& cfg);
    void set_lora(const TrainingConfig& cfg);
    void set_flops_per_token(const TrainingConfig& cfg, double matmul);
    void set_prices(const Deployment& hw, const TrainingConfig& cfg,
                    const TrainingCostInputs& prices);
    [[nodiscard]] LayoutIssue check(const TrainingLayout& l) const noexcept;
    // One layout's shapes and kernel times (training_geometry.cpp).
    [[nodiscard]] Geometry geometry(const TrainingLayout& l) const noexcept;
    [[nodiscard]] Geometry layout_geometry(const TrainingLayout& l,
                                           const detail::Shapes& sh) const noexcept;
    void set_activations(Geometry& g, const TrainingLayout& l,
                         const detail::Shapes& sh) const noexcept;
    [[nodiscard]] detail::KernelPass linear_pass(double m, double k, double n,
                                                 bool frozen) const noexcept;
    [[nodiscard]] detail::KernelPass
    attention_core(const TrainingLayout& l, const detail::Shapes& sh, double window) const noexcept;
    [[nodiscard]] LayerKernels layer_kernels(const Geometry& g, const TrainingLayout& l,
                                             const detail::Shapes& sh) const noexcept;
    void set_dense_times(Geometry& g, const TrainingLayout& l, const detail::Shapes& sh,
                         const LayerKernels& k) const noexcept;
    void set_moe_times(Geometry& g, const TrainingLayout& l, const detail::Shapes& sh,
                       const LayerKernels& k) const noexcept;
    void set_edge_times(Geometry& g, const TrainingLayout& l, const detail::Shapes& sh,
                        double norm_rows) const noexcept;
    void set_comm_times(Geometry& g, const TrainingLayout& l, const detail::Shapes& sh,
                        const detail::KernelPass& attn) const noexcept;
    [[nodiscard]] double link_bw(int size, int stride, double message) const noexcept;
    [[nodiscard]] double link_lat(int size, int stride) const noexcept;
    // Memory of one stage (training_memory.cpp).
    [[nodiscard]] StageMemory memory_of(const TrainingLayout& l, const Geometry& g,
                                        int stage) const noexcept;
    // The step (training_time.cpp).
    [[nodiscard]] StageTime stage_time(const TrainingLayout& l, const Geometry& g, int stage,
                                       bool with_comm) const noexcept;
    [[nodiscard]] StageTime slowest_stage(const TrainingLayout& l,
                                          const Geometry& g) const noexcept;
    void set_dp_comm(StepBreakdown& b, const TrainingLayout& l, const Geometry& g,
                     const StageTime& ts) const noexcept;
    void set_throughput(LayoutResult& r, const TrainingLayout& l, const Geometry& g) const noexcept;
    void set_energy(LayoutResult& r, const Geometry& g, const StageTime& ts) const noexcept;
    void finish(LayoutResult& r, const TrainingLayout& l, const Geometry& g) const noexcept;

    TrainingConfig cfg_;
    EfficiencyProfile prof_;
    ModelSpec model_;
    Deployment hw_;
    int gpus_ = 1, gpus_per_node_ = 8;
    bool has_network_ = false;
    double params_ = 0, trainable_ = 0, k_ = 12;
    double overlap_ = kDefaultGradReduceOverlap, frag_ = kDefaultFragmentation;
    double bucket_ = kDefaultGradBucketBytes; ///< gradient bucket bytes
    double ep_overlap_ = 0;                   ///< share of the EP all-to-all hidden
    /// E[max of n standard normals] for n <= 256 (MoE models only; model/moe.hpp).
    std::array<double, 257> max_normal_{};
    /// The busiest EP rank's routed rows ÷ the mean for `tokens` routed by an EP group of `ep`.
    [[nodiscard]] double moe_imbalance(double tokens, int ep) const noexcept;
    double runtime_ = 0;
    double peak_ = 0, nominal_peak_ = 0, peak_attn_ = 0, bw_ = 0;
    double wb_ = 2;            ///< bytes per weight element read by a GEMM
    double frozen_bits_ = 16;  ///< bits per frozen linear weight (LoRA 16, QLoRA 4.127)
    double opt_rw_bytes_ = 28; ///< optimizer-step traffic per trained parameter
    double model_flops_token_ = 0, hardware_flops_token_ = 0, recompute_flops_token_full_ = 0,
           recompute_flops_token_sel_ = 0;
    double lora_attn_in_ = 0, lora_attn_out_ = 0, lora_mlp_in_ = 0, lora_mlp_out_ = 0;
    double lora_layer_ = 0;   ///< adapter parameters per layer (whole, not sharded)
    double lora_modules_ = 0; ///< adapted linears per layer
    double loader_ = 0;       ///< tokens/s per node; 0: unlimited
    double avg_power_ = 0;
    bool has_power_ = false;
    double resident_power_ = 0, board_power_ = 0; ///< GpuPowerLevels of model/power.hpp
    PowerModel power_model_;
    double rent_per_gpu_s_ = 0, energy_price_per_j_ = 0, pue_ = 1;
};

/// Everything `gpuplan train` reports for one layout.
struct TrainingEstimate {
    LayoutResult result;
    std::vector<StageMemory> stages; ///< per pipeline stage, the verdict of each
    double params = 0;
    double trainable_params = 0;
    double state_bytes_per_param = 0; ///< 2 + 2 + K before sharding (16 for mixed-precision Adam)
    Flops total_flops;                ///< model FLOPs for all tokens
    double pf_days = 0;               ///< total_flops / (1e15 FLOP/s × 86,400 s)
    double consumed_tokens_per_s = 0; ///< what the GPUs could consume without input stalls
    double loader_tokens_per_s = 0;   ///< what the data loaders deliver (0: unlimited)
    // Scaling from one GPU to N (same micro-batch and recomputation, memory not checked).
    Seconds single_gpu_step;
    double speedup = 0;
    double scaling_efficiency = 0;
    double serial_fraction = 0;         ///< Amdahl's s implied by the speed-up
    std::optional<double> amdahl_limit; ///< 1 / s; nullopt when s = 0
    // Energy and cost.
    std::string power_basis;                   ///< "given", "power-model" or "unknown"
    std::optional<double> energy_kwh;          ///< GPUs × average power × time (facility: × PUE)
    std::optional<double> facility_energy_kwh; ///< × PUE when a PUE is given
    std::optional<Money> rent_cost;            ///< GPU-hours × rent per GPU-hour
    std::optional<Money> energy_cost;          ///< facility energy × electricity price
    // Under a power limit (TrainingCostInputs::gpu_power_limit).
    std::optional<Watts> power_limit; ///< the per-GPU limit applied
    double clock = 1.0;               ///< core clock factor the limiter settles at
    double power_slowdown = 1.0;      ///< step time under the limit / uncapped
    double grad_reduce_overlap = 0;
    double fragmentation = 0;
    Bytes runtime_overhead;
    std::vector<std::string> notes; ///< why it does not fit, what stalls, what was assumed
    /// With a failures block: checkpoints (weights + optimizer states of the trained parameters,
    /// 2 + K bytes each), restarts, the Young/Daly interval, expected time and goodput, spares.
    std::optional<TrainingFailures> failures;
    /// With failures and a rent price: the failures' expected GPU-hours × rent per GPU-hour.
    std::optional<Money> rent_cost_with_failures;
    friend bool operator==(const TrainingEstimate&, const TrainingEstimate&) = default;
};

/// The full estimate of the configured layout. Throws InvalidArgument naming the fix when the
/// layout cannot run (see LayoutIssue).
[[nodiscard]] TrainingEstimate estimate_training(const Deployment& hw, const TrainingConfig& cfg,
                                                 const EfficiencyProfile& profile,
                                                 const TrainingCostInputs& prices = {});

/// Which layouts the search enumerates. Pinned dimensions (set optionals) are not varied.
struct SearchOptions {
    int top = 5;
    RankBy rank_by = RankBy::Time;
    int max_micro_batch = 16;
    int max_cp = 16; ///< context parallelism is tried only where seq_len / cp >= 2048
    std::optional<int> tp, pp, cp, ep, zero, micro_batch, virtual_stages;
    std::optional<Recompute> recompute;
    friend bool operator==(const SearchOptions&, const SearchOptions&) = default;
};

/// The ranked layouts and how many were looked at.
struct SearchResult {
    std::vector<LayoutResult> top; ///< fitting layouts, best first
    long long enumerated = 0;      ///< layouts generated
    long long invalid = 0;         ///< cannot run (LayoutIssue)
    long long not_fitting = 0;     ///< valid but out of memory
    long long fitting = 0;
    std::optional<LayoutResult> closest_miss; ///< the non-fitting layout short by the least
    std::string why;                          ///< why the best wins (or why none fits)
    friend bool operator==(const SearchResult&, const SearchResult&) = default;
};

/// Enumerates TP × PP × DP × CP × EP × ZeRO stage × micro-batch × recomputation (× virtual
/// pipeline stages 1, 2, 4) for the
/// configured GPUs and global batch, drops layouts that cannot run or do not fit, and ranks the
/// rest by time to train (or cost). Allocation-free per layout; > 10,000 layouts/s on one core
/// (bench/training_bench.cpp). Throws InvalidArgument when ranking by cost without prices.
[[nodiscard]] SearchResult search_layouts(const Deployment& hw, const TrainingConfig& cfg,
                                          const EfficiencyProfile& profile,
                                          const SearchOptions& options,
                                          const TrainingCostInputs& prices = {});

// ---- Closed-form helpers (hand calculations, docs and tests) ----

/// Training compute C = 6·N·D FLOPs for N parameters and D tokens (Kaplan et al. 2020 §2.1;
/// Hoffmann et al. 2022).
[[nodiscard]] Flops training_compute(double params, double tokens);

/// FLOPs expressed in PF-days: C / (1e15 FLOP/s × 86,400 s) (Brown et al. 2020, Table D.1).
[[nodiscard]] double pf_days(Flops flops);

/// A compute-optimal model size and token count (Chinchilla: D ≈ 20·N, C = 6·N·D; Hoffmann et
/// al. 2022, Table 3).
struct ComputeOptimal {
    double params = 0;
    double tokens = 0;
    Flops compute;
    friend bool operator==(const ComputeOptimal&, const ComputeOptimal&) = default;
};
/// Tokens for N parameters: 20·N, and C = 6·N·20·N.
[[nodiscard]] ComputeOptimal chinchilla_for_params(double params);
/// Parameters and tokens for a budget C: N = sqrt(C / 120), D = 20·N.
[[nodiscard]] ComputeOptimal chinchilla_for_compute(Flops compute);

/// Amdahl's law: speed-up on n workers with a serial fraction s: 1 / (s + (1 − s)/n).
[[nodiscard]] double amdahl_speedup(double serial_fraction, double n);
/// The serial fraction implied by a measured speed-up S on n > 1 workers: (n/S − 1)/(n − 1).
[[nodiscard]] double amdahl_serial_fraction(double speedup, double n);

/// K, optimizer-state bytes per trained parameter: fp32 master (4, when kept) plus the moments
/// (Adam 8, 8-bit Adam 2, SGD momentum 4). Mixed-precision Adam: 12 (ZeRO §3.1).
[[nodiscard]] double optimizer_state_bytes(TrainOptimizer optimizer, bool master_weights_fp32);

/// Model states per GPU for Ψ parameters on nd data-parallel GPUs (ZeRO §5, Fig. 1): 16-bit
/// weights 2Ψ and gradients 2Ψ, optimizer KΨ; stage 1 divides KΨ by nd, stage 2 also the
/// gradients, stage 3 also the weights.
struct ModelStates {
    Bytes weights;
    Bytes gradients;
    Bytes optimizer;
    [[nodiscard]] Bytes total() const { return weights + gradients + optimizer; }
    friend bool operator==(const ModelStates&, const ModelStates&) = default;
};
[[nodiscard]] ModelStates zero_model_states(double params, double k, int stage, int nd);

/// The shape of one activation-memory question.
struct ActivationShape {
    int seq = 0; ///< s (the full sequence; cp divides it)
    int micro_batch = 1;
    int tp = 1;
    int cp = 1;
    bool sequence_parallel = false;
    Recompute recompute = Recompute::None;
    bool flash_attention = false;
    bool dropout = true;
};

/// Stored activation bytes of one transformer layer for one micro-batch, 16-bit activations and
/// 1-byte dropout masks (Korthikanti et al. 2022 §4.1–4.2). For a GPT layer (MHA, 4h GELU MLP,
/// dropout) this is s·b·h·(34 + 5·a·s/h) without parallelism, s·b·h·(10 + 24/t + 5·a·s/(h·t))
/// with tensor parallelism, s·b·h/t·(34 + 5·a·s/h) with sequence parallelism, the 5·a·s/h term
/// dropped by selective recomputation or FlashAttention, and 2·s·b·h (÷ t with sequence
/// parallelism) under full recomputation; the general form counts GQA, gated MLPs and MoE.
[[nodiscard]] Bytes activation_bytes_per_layer(const ModelSpec& m, const ActivationShape& shape,
                                               bool moe_layer = false);

} // namespace gpuplan::model
