#pragma once
/// Serving figures from the step cost: time to first token, time per output token, steady-state
/// and peak throughput, the single-stream decode bound, and MFU / MBU for prefill and decode.
/// Steady state is continuous batching without queueing: every running sequence decodes once
/// per step while prompts of arriving requests ride along as prefill chunks. The workload is
/// scenario.hpp's Workload at its operating point (model/operating_point.hpp): a closed loop at
/// a concurrency, or an offered rate whose mean number in flight follows from Little's law.

#include "model/deployment.hpp"
#include "model/efficiency.hpp"
#include "model/kv_offload.hpp"
#include "model/lora.hpp"
#include "model/memory.hpp"
#include "model/operating_point.hpp"
#include "model/scenario.hpp"
#include "model/speculative.hpp"
#include "model/step_cost.hpp"
#include "model/units.hpp"

namespace gpuplan::model {

/// Time, work and utilization of one phase.
struct PhaseFigures {
    Seconds time;
    Flops model_flops; ///< useful FLOPs of the replica
    Bytes bytes;       ///< weight + KV bytes read per GPU (the MBU numerator)
    double mfu = 0.0;  ///< model FLOPs / (time × mfu_peak × GPUs of the replica), <= 1
    double mbu = 0.0;  ///< (weight + KV bytes) / (time × bandwidth), per GPU, <= 1
    friend bool operator==(const PhaseFigures&, const PhaseFigures&) = default;
};

/// What speculative decoding does at the operating point (model/speculative.hpp).
struct SpeculativeFigures {
    SpeculativeMethod method = SpeculativeMethod::Eagle;
    int k = 0;                      ///< draft tokens per step
    std::vector<double> acceptance; ///< per-position conditional acceptance, length k
    double tokens_per_step = 1.0;   ///< expected tokens a sequence advances per verify step
    Seconds verify_time;            ///< the verify pass of a decode step at the running batch
    Seconds draft_time;             ///< the proposer's time in that step
    Seconds tpot_off;               ///< steady-state TPOT at the same batch without speculation
    double speedup = 1.0;           ///< tpot_off / tpot (below 1: speculation costs time)
    Bytes draft_weights;            ///< the proposer's weights per GPU
    Bytes draft_kv_per_token;       ///< the proposer's KV per token per GPU
    friend bool operator==(const SpeculativeFigures&, const SpeculativeFigures&) = default;
};

/// Speed and capacity of a deployment for a workload.
struct ServingEstimate {
    MemoryEstimate memory;
    OperatingPoint operating_point; ///< the load every figure below is computed at
    Seconds ttft;        ///< a lone request's prefill (chunked by max_num_batched_tokens when on)
    Seconds ttft_loaded; ///< its prefill sharing steps with the other running sequences' decodes
    Seconds tpot;        ///< steady-state time per output token at the running batch
    Seconds tpot_decode_only; ///< a decode-only step at the running batch and average context
    int running = 0; ///< sequences running per replica (capped by KV cache and max_num_seqs)
    /// Output tokens/s of the whole deployment at the operating point (0 when it does not fit);
    /// at an offered rate the deployment can serve, exactly the offered output tokens/s.
    double throughput = 0.0;
    double peak_throughput = 0.0;     ///< output tokens/s at peak_concurrency
    int peak_concurrency = 0;         ///< the most sequences the deployment runs at once
    double single_stream_bound = 0.0; ///< tokens/s ≤ bandwidth / bytes read per token (batch 1)
    PhaseFigures prefill;             ///< the lone prefill behind ttft
    PhaseFigures decode;              ///< the decode-only step behind tpot_decode_only
    StepCost decode_step;             ///< that step, per operator
    StepCost prefill_step;            ///< the largest prefill step behind ttft, per operator
    /// Speculative decoding's figures when engine.speculative is set (tpot, throughput and
    /// ttft above already include it).
    std::optional<SpeculativeFigures> speculative;
    /// KV offload tiers' figures when engine.kv_offload is set (ttft, tpot and throughput
    /// above already include their hits and load times).
    std::optional<KvOffloadFigures> kv_offload;
    /// Multi-LoRA's steady-state figures when engine.lora is set (model/lora.hpp; tpot and
    /// throughput above include the batched LoRA kernels, not the adapter loads).
    std::optional<LoraFigures> lora;
    Provenance provenance; ///< the efficiency profile's
    ErrorBand error_band;  ///< relative uncertainty of the times and throughputs
    friend bool operator==(const ServingEstimate&, const ServingEstimate&) = default;
};

/// Time to first token of a lone request of `input_len` tokens with `cached` of them in the
/// prefix cache: the sum of its prefill steps (chunks of max_num_batched_tokens when chunked
/// prefill is on; at least the last token is always computed, as in vLLM).
[[nodiscard]] Seconds ttft(const StepCostModel& m, int input_len, int cached = 0);

/// Time of one decode step of `batch` sequences at `context` tokens each (one micro-batch
/// through every pipeline stage). With `spec`: the time per output token of speculative steps,
/// (verify pass of k + 1 tokens per sequence + the proposer's k passes) / expected tokens per
/// step.
[[nodiscard]] Seconds tpot(const StepCostModel& m, int batch, int context,
                           const SpeculativeModel* spec = nullptr);

/// Steady-state output tokens/s of one replica running `running` sequences of the workload
/// (average context input + output/2), `cached_prefix` prompt tokens of each request served by
/// the prefix cache when it is on. With PP the replica runs pp micro-batches. With `spec` every
/// step is a speculative verify step (see tpot).
[[nodiscard]] double replica_throughput(const StepCostModel& m, const Workload& w, int running,
                                        int cached_prefix = 0,
                                        const SpeculativeModel* spec = nullptr);

/// How prompt chunks stretch the decode steps of one replica running `running` sequences of the
/// workload (the steady state replica_throughput costs): a step without a prompt chunk takes
/// `decode_step`; a step that carries one takes `extra` longer (the chunk's time beyond the
/// decode-only step it replaces; SGLang: its whole prefill step, which runs besides); `share` of
/// the steps carry one. The mean time per output token is decode_step + share × extra. When
/// prompts fill the token budget in every step (`every_step`), decode_step is the mixed step,
/// extra is 0 and share is 1. With speculative decoding the steps are the verify steps per
/// output token and the split is not modelled (share 0, decode_step the mean).
struct ChunkInterference {
    Seconds decode_step;
    Seconds extra;
    double share = 0.0;
    int chunk_steps =
        1; ///< the steps one prompt's chunks take (a share counts share ÷ this prompts)
    bool every_step = false;
    friend bool operator==(const ChunkInterference&, const ChunkInterference&) = default;
};

[[nodiscard]] ChunkInterference chunk_interference(const StepCostModel& m, const Workload& w,
                                                   int running, int cached_prefix = 0,
                                                   const SpeculativeModel* spec = nullptr);

/// The most sequences one replica runs at once for this workload: max_num_seqs, or what the KV
/// cache holds at the average context (rounded up to blocks), whichever is smaller.
[[nodiscard]] int replica_capacity(const MemoryEstimate& mem, const Workload& w);

/// Whether the requested load fits: `concurrency` sequences of the workload's lengths running
/// at once on the deployment's dp replicas (replica_capacity each), not only one sequence of
/// max_model_len (MemoryEstimate::fits). The headroom gpu_memory_utilization holds back is not
/// counted as room.
struct LoadFit {
    bool fits = false;   ///< the engine starts and the replicas run `requested` at once
    long long holds = 0; ///< sequences of these lengths the replicas run at once
    int requested = 0;   ///< the concurrency asked for
    std::string reason;  ///< why not, with what to change (empty when it fits)
};

[[nodiscard]] LoadFit load_fit(const Deployment& d, const MemoryEstimate& mem, const Workload& w,
                               int concurrency);

/// Single-stream decode bound: bandwidth / (weight + KV bytes read per token) at `context`
/// (docs/domain.md §2: 1 TB/s ÷ 14 GB ≈ 71 tokens/s for a 7B FP16 model). Only the embedding rows
/// used are counted, not the whole table; MoE reads only the top-k experts.
[[nodiscard]] double single_stream_decode_bound(const StepCostModel& m, int context = 1);

/// Every serving figure for the workload; `cached_prefix` prompt tokens per request hit the
/// prefix cache (when the engine has it on). Throws InvalidArgument when the deployment or the
/// workload is invalid (non-positive lengths, prompt + output longer than max_model_len, ...).
[[nodiscard]] ServingEstimate estimate_serving(const Deployment& d, const Workload& w,
                                               const EfficiencyProfile& profile,
                                               int cached_prefix = 0);

} // namespace gpuplan::model
