#pragma once
/// The cost of one engine step (one forward pass over a mixed batch of prefill chunks and decode
/// sequences) per operator, on a roofline calibrated by an efficiency profile:
///   time(op) = max(FLOPs / (peak × eff_compute), bytes / (bandwidth × eff_bandwidth))
///              + kernels × launch overhead,
/// with communication (TP all-reduce, PP sends, EP all-to-all) from comm.hpp. The simulator
/// calls this for every step, so StepCostModel precomputes everything that does not depend on
/// the batch and `cost()` neither allocates nor throws.

#include "model/deployment.hpp"
#include "model/efficiency.hpp"
#include "model/kernel_time.hpp"
#include "model/units.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gpuplan::model {

struct KernelTime;

/// A piece of a prompt computed in this step.
struct PrefillChunk {
    int tokens = 0;         ///< new prompt tokens computed in this step
    int cached_context = 0; ///< tokens of this sequence already in the KV cache (earlier
                            ///< chunks or a prefix-cache hit)
    friend bool operator==(const PrefillChunk&, const PrefillChunk&) = default;
};

/// A sequence generating one token in this step.
struct DecodeSeq {
    int context = 0; ///< tokens the new token attends to (prompt + generated so far)
    friend bool operator==(const DecodeSeq&, const DecodeSeq&) = default;
};

/// One step's batch as the scheduler formed it.
struct Batch {
    std::vector<PrefillChunk> prefills;
    std::vector<DecodeSeq> decodes;
    friend bool operator==(const Batch&, const Batch&) = default;
};

/// The operators of a step, each summed over all layers (and all pipeline stages).
enum class Op : std::uint8_t {
    Embedding,
    Norms,            ///< RMSNorm/LayerNorm, final norm included
    QkvProj,          ///< Q, K, V projections and RoPE (MLA: the down/up projections)
    AttentionPrefill, ///< attention of prefill chunks (FlashAttention varlen)
    AttentionDecode,  ///< attention of decode sequences (paged decode)
    OutProj,
    Residual, ///< residual adds (fused into the norms in vLLM: no launches)
    Mlp,      ///< dense MLP: gate/up, activation, down
    MoeRouter,
    MoeExperts, ///< routed experts (only the touched experts' weights are read)
    MoeShared,  ///< shared experts
    LmHead,
    Sampling,
    TpAllReduce, ///< tensor-parallel all-reduces (and the logits gather)
    PpSend,      ///< activations sent between pipeline stages
    EpAllToAll,  ///< expert-parallel dispatch and combine
    Lora,        ///< batched LoRA shrink and expand kernels (engine.lora; model/lora.hpp)
};
inline constexpr std::size_t kOpCount = 17;

/// Lowercase name, e.g. "qkv_proj", "attention_decode", "tp_all_reduce".
[[nodiscard]] const char* to_string(Op op);

/// What limits an operator.
enum class Bound : std::uint8_t { None, Compute, Memory, Communication, Overhead };

/// "none", "compute", "memory", "communication", "overhead".
[[nodiscard]] const char* to_string(Bound bound);

/// One operator's cost in the step, per GPU, summed over layers and pipeline stages.
struct OpCost {
    Flops flops;
    Bytes bytes;          ///< device-memory traffic (weights, KV, activations); link bytes for comm
    Seconds compute_time; ///< Σ FLOPs / achieved FLOP/s
    Seconds memory_time;  ///< Σ bytes / achieved bandwidth (comm: the collective time)
    Seconds overhead;     ///< kernel launches
    Seconds time;         ///< Σ max(compute, memory) + overhead
    int kernels = 0;
    Bound bound = Bound::None;
    friend bool operator==(const OpCost&, const OpCost&) = default;
};

/// The cost of one step. Per-GPU figures are for one tensor-parallel rank, summed along the
/// pipeline (the critical path of one micro-batch).
struct StepCost {
    std::array<OpCost, kOpCount> ops{};
    Seconds time;          ///< step latency: Σ op times + step overhead
    Seconds step_overhead; ///< fixed per-step engine cost (from the profile)
    Flops flops;           ///< per GPU, Σ over ops
    Bytes bytes;           ///< per GPU device-memory traffic, Σ over non-communication ops
    Bytes weight_bytes;    ///< per GPU weight bytes read
    Bytes kv_bytes;        ///< per GPU KV bytes read and written
    Flops
        model_flops; ///< useful FLOPs of the whole replica (2 × active params × tokens + attention)
    double pp_bubble = 0.0; ///< idle fraction of each stage with one micro-batch: (pp − 1) / pp
    double experts_touched = 0.0; ///< routed experts with at least one token, per MoE layer and GPU
    double moe_imbalance = 1.0;   ///< busiest expert-parallel rank's routed rows ÷ the mean
    int tokens = 0;
    int prefill_tokens = 0;
    int sequences = 0;
    bool cuda_graph = false; ///< the step replays a captured graph
    /// One operator's entry.
    [[nodiscard]] const OpCost& op(Op o) const { return ops[static_cast<std::size_t>(o)]; }
    friend bool operator==(const StepCost&, const StepCost&) = default;
};

/// Sums of a batch that the cost depends on. Build it with `StepCostModel::add` (or from a
/// Batch with `StepCostModel::stats`); a simulator may keep one up to date incrementally.
struct BatchStats {
    double prefill_tokens = 0;
    double prefills = 0;
    double decodes = 0;
    double prefill_pairs = 0;          ///< causal query-key pairs, full-attention layers
    double prefill_pairs_windowed = 0; ///< the same, sliding-window layers
    double prefill_kv_read = 0;        ///< KV tokens read by prefill attention (full layers)
    double prefill_kv_read_windowed = 0;
    double decode_context = 0;          ///< Σ decode contexts (full layers)
    double decode_context_windowed = 0; ///< Σ min(context, window)
    /// Query tokens of prefill chunks that also produce logits beyond each chunk's last one
    /// (a speculative verify pass samples at every drafted position: k per sequence).
    double extra_logit_rows = 0;
    /// engine.lora: distinct adapters in the batch (each one's weights are read once per step).
    /// 0: min(max_loras, sequences), the most the batch can hold.
    double lora_adapters = 0;
    friend bool operator==(const BatchStats&, const BatchStats&) = default;
};

/// What the operators other than attention read of a batch (StepCostModel::shape_key).
struct ShapeKey {
    double tokens = 0;          ///< prefill and decode tokens of the step
    double rows = 0;            ///< positions producing logits
    double decodes = 0;         ///< MLA only (its decode absorbs W_UK, W_UV), else 0
    double prefill_kv_read = 0; ///< MLA only (prefill up-projects the context), else 0
    double sequences = 0;       ///< engine.lora only, else 0
    double lora_adapters = 0;   ///< engine.lora only, else 0
    friend bool operator==(const ShapeKey&, const ShapeKey&) = default;
};

/// The part of a step's cost that depends only on the batch's shape (`key`: tokens, logit
/// rows), not on its attention contexts: every operator but the two attention ones, finished,
/// and the matrix FLOPs summed before attention plus those added after it, in order, so that
/// StepCostModel::complete() adds the attention terms in cost()'s order and gets the same
/// bits. Steps of one shape recur (a steady decode batch, chunks filling the token budget), so
/// a simulator may keep the shapes of recent steps (sim/detail/step_cost_memo.hpp).
struct StepShape {
    static constexpr int kMaxMatmulTerms = 16;
    ShapeKey key;             ///< StepCostModel::shape_key of the batch
    StepCost partial;         ///< every operator but attention; the counts and totals zero
    Seconds launch;           ///< launch overhead per kernel (graph replay or eager)
    double weights = 0;       ///< weight bytes read (attention reads none)
    double replicated = 0;    ///< replicated FLOPs (attention has none)
    double matmul_before = 0; ///< matrix FLOPs summed before the attention operators
    std::array<double, kMaxMatmulTerms> matmul_after{}; ///< those after it, in order
    int matmul_after_count = 0;
};

/// A deployment's step-cost function with everything batch-independent precomputed.
class StepCostModel {
  public:
    /// Precomputes shapes, peaks and links. Throws InvalidArgument when the deployment does not
    /// validate or the GPU has no peak for the compute path.
    StepCostModel(const Deployment& d, const EfficiencyProfile& profile);

    /// Adds a prefill chunk to `s`. Allocation-free.
    void add(BatchStats& s, const PrefillChunk& c) const noexcept;
    /// Adds a decode sequence to `s`. Allocation-free.
    void add(BatchStats& s, const DecodeSeq& q) const noexcept;
    /// Adds `n` decode sequences at the same context.
    void add_decodes(BatchStats& s, int n, int context) const noexcept;
    /// Adds `n` decode sequences whose contexts (each at least 1) sum to `context` and whose
    /// contexts capped at window() sum to `windowed`: the same sums as `n` calls of
    /// add(DecodeSeq), to the bit (whole numbers below 2^53 add exactly in doubles), so a
    /// simulator can keep them as integers while it forms a batch.
    void add_decode_sums(BatchStats& s, std::int64_t n, std::int64_t context,
                         std::int64_t windowed) const noexcept;
    /// The sliding-window length of the windowed layers in tokens (0: no windowed layers).
    [[nodiscard]] int window() const noexcept { return window_; }
    /// The sums of a batch.
    [[nodiscard]] BatchStats stats(std::span<const PrefillChunk> prefills,
                                   std::span<const DecodeSeq> decodes) const noexcept;

    /// The cost of a step with these sums. O(1); allocation-free.
    [[nodiscard]] StepCost cost(const BatchStats& s) const noexcept;
    /// cost(s) in two halves: shape() costs what depends on shape_key(s) alone, complete()
    /// adds the attention operators and the totals. complete(shape of s, s) == cost(s) to the
    /// bit, and complete(shape of s', s) == cost(s) whenever shape_key(s') == shape_key(s).
    [[nodiscard]] ShapeKey shape_key(const BatchStats& s) const noexcept;
    void shape(const BatchStats& s, StepShape& out) const noexcept;
    void complete(const StepShape& shape, const BatchStats& s, StepCost& r) const noexcept;
    /// The cost of a step. O(batch); allocation-free.
    [[nodiscard]] StepCost cost(std::span<const PrefillChunk> prefills,
                                std::span<const DecodeSeq> decodes) const noexcept;
    /// The cost of a step.
    [[nodiscard]] StepCost cost(const Batch& b) const noexcept;

    /// Dense datasheet peak of the GEMM compute path, per GPU (not derated by the clocks).
    [[nodiscard]] FlopsPerSecond peak_flops() const { return nominal_peak_; }
    /// The MFU denominator per GPU: the higher of the datasheet peaks of the GEMM path and of
    /// the activation path (attention, router, a 16-bit LM head). Every model FLOP runs on one
    /// of them at most at its peak, so model FLOPs / (time × GPUs × this) cannot exceed 1,
    /// whichever path is faster (fp32 or tf32 weights run attention on the faster bf16 path).
    [[nodiscard]] FlopsPerSecond mfu_peak() const { return std::max(nominal_peak_, nominal_attn_); }
    /// Datasheet memory bandwidth per GPU (not derated by the clocks).
    [[nodiscard]] BytesPerSecond bandwidth() const { return nominal_bandwidth_; }
    /// The clock derating the kernel times use (Deployment::clocks).
    [[nodiscard]] ClockFactors clocks() const { return clocks_; }
    /// GPUs in one replica (tp × pp).
    [[nodiscard]] int replica_gpus() const { return tp_ * pp_; }
    /// The kernel the linear layers run on: weight-only for GPTQ/AWQ/GGUF weights and for narrow
    /// formats the GPU has no tensor-core path for (FP8 on Ampere).
    [[nodiscard]] GemmPath gemm_path() const { return gemm_path_; }
    /// The kernel class of the linear layers (model/gemm_class.hpp): its efficiency scale.
    [[nodiscard]] GemmClass gemm_class() const { return gemm_class_; }
    /// Tensor-parallel size.
    [[nodiscard]] int tp() const { return tp_; }
    /// Pipeline stages.
    [[nodiscard]] int pp() const { return pp_; }
    /// Resolved engine settings.
    [[nodiscard]] const EngineSettings& engine() const { return engine_; }
    /// The profile the model was built with.
    [[nodiscard]] const EfficiencyProfile& profile() const { return prof_; }

  private:
    /// Running sums of one cost() call.
    struct Work {
        double weights = 0;    ///< weight bytes read
        double matmul = 0;     ///< GEMM and attention FLOPs on this rank
        double replicated = 0; ///< of which every TP rank repeats the same
        /// shape(): after the attention operators' place, matrix FLOPs are recorded in order
        /// (into `after`) instead of summed, for complete() to add after attention's.
        StepShape* after = nullptr;
        void add_matmul(double flops) noexcept;
    };
    void finish_ops(StepCost& r, Seconds launch, bool attention) const noexcept;
    void gemm(OpCost& op, double m, double k, double n, double weight_bytes, double layers,
              Work& acc, bool replicated, bool sixteen_bit = false) const noexcept;
    void stream(OpCost& op, double bytes, double flops, double layers) const noexcept;
    static void add_kernel(OpCost& o, const KernelTime& kt, double flops, double bytes,
                           double layers, Work& acc) noexcept;
    // The parts of cost(), called in this order (each adds its operators to the step).
    [[nodiscard]] static OpCost& op_of(StepCost& r, Op o) noexcept {
        return r.ops[static_cast<std::size_t>(o)];
    }
    void embedding_and_norms(StepCost& r, double t) const noexcept;
    void qkv_projection(StepCost& r, const BatchStats& s, double t, Work& acc) const noexcept;
    [[nodiscard]] double attention_pair_flops() const noexcept;
    void attention_prefill(StepCost& r, const BatchStats& s, Work& acc) const noexcept;
    void attention_decode(StepCost& r, const BatchStats& s, Work& acc) const noexcept;
    void out_projection_and_mlp(StepCost& r, double t, double nd, Work& acc) const noexcept;
    void mlp(OpCost& o, double t, double ffn, double layers, Work& acc) const noexcept;
    void moe(StepCost& r, double t, Work& acc) const noexcept;
    void communication(StepCost& r, double t, double rows) const noexcept;
    void lora(StepCost& r, const BatchStats& s, double t, Work& acc) const noexcept;
    void totals(StepCost& r, const Work& acc) const noexcept;

    EfficiencyProfile prof_;
    EngineSettings engine_;
    // Shapes (per rank).
    int tp_ = 1, pp_ = 1, ep_ = 1;
    double layers_ = 0, dense_layers_ = 0, moe_layers_ = 0, full_layers_ = 0, win_layers_ = 0;
    int window_ = 0;
    // Recurrent layers (ModelSpec::state), per rank: their state per sequence in bytes and the
    // FLOPs of a decode step's state update and of a prefill token's chunked scan.
    double state_layers_ = 0, state_bytes_ = 0, state_decode_flops_ = 0, state_prefill_flops_ = 0;
    void recurrent_prefill(StepCost& r, const BatchStats& s, Work& acc) const noexcept;
    void recurrent_decode(StepCost& r, const BatchStats& s, Work& acc) const noexcept;
    double h_ = 0, vocab_rank_ = 0, vocab_ = 0;
    bool mla_ = false, gated_ = true;
    double heads_rank_ = 0, qk_dim_ = 0, v_dim_ = 0, q_width_ = 0, kv_width_ = 0, o_in_ = 0;
    double q_lora_ = 0, kv_lora_ = 0, rope_ = 0, nope_ = 0;
    double ffn_rank_ = 0, norms_per_layer_ = 0;
    double experts_ = 0, top_k_ = 0, experts_rank_ = 0, expert_shard_ = 1, expert_ffn_rank_ = 0;
    double shared_ffn_rank_ = 0;
    double kv_elems_ = 0;
    // Bytes per element.
    double wb_ = 2, ab_ = 2, sb_ = 2, eb_ = 2, kvb_ = 2;
    ComputeType gemm_type_ = ComputeType::Bf16;
    GemmClass gemm_class_ = GemmClass::Bf16; ///< the linear layers' kernel class
    ComputeType attn_type_ = ComputeType::Bf16;
    GemmPath gemm_path_ = GemmPath::Dense; ///< the linear layers' kernel (not router, LM head)
    bool triton_fused_moe_ = false; ///< experts padded to fused_moe's M tile (vLLM/SGLang, not AMD)
    FlopsPerSecond peak_gemm_, peak_attn_; ///< derated by clocks_.compute
    BytesPerSecond bandwidth_;             ///< derated by clocks_.memory
    FlopsPerSecond nominal_peak_;          ///< datasheet GEMM peak
    FlopsPerSecond nominal_attn_;          ///< datasheet peak of the activation path
    BytesPerSecond nominal_bandwidth_;     ///< datasheet bandwidth (MBU denominator)
    ClockFactors clocks_;
    // Links.
    double tp_bw_ = 0, tp_lat_ = 0, pp_bw_ = 0, pp_lat_ = 0, ep_bw_ = 0, ep_lat_ = 0;
    // MoE: attention-DP groups feeding one EP group, the imbalance knob (0: uniform routing's
    // expected maximum, with z = E[max of ep normals]) and the all-to-all overlap.
    double attn_groups_ = 1, fixed_imbalance_ = 0, imbalance_z_ = 0, ep_overlap_ = 0;
    AllReduceAlgorithm all_reduce_ = AllReduceAlgorithm::Auto;
    // Multi-LoRA (engine.lora): adapter elements per rank over all layers (A and B), elements
    // each token reads and writes in the shrink and expand kernels, GPU slots, kernels.
    double lora_elems_ = 0, lora_io_ = 0, lora_slots_ = 0, lora_nk_ = 0;
    int lora_kernels_ = 0;
};

/// The cost of one step of `batch` on the deployment (builds a StepCostModel; prefer keeping
/// one when costing many steps).
[[nodiscard]] StepCost step_cost(const Deployment& d, const Batch& batch,
                                 const EfficiencyProfile& profile);

/// The same over spans.
[[nodiscard]] StepCost step_cost(const Deployment& d, std::span<const PrefillChunk> prefills,
                                 std::span<const DecodeSeq> decodes,
                                 const EfficiencyProfile& profile);

/// Expected routed experts with at least one of `tokens` tokens when each token picks
/// `top_k` of `experts` uniformly: E × (1 − (1 − k/E)^T).
[[nodiscard]] double expected_experts_touched(double experts, double top_k, double tokens);

} // namespace gpuplan::model
