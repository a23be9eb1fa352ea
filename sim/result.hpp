#pragma once
/// What a serving simulation reports: per-request records, summaries overall and per class
/// (latency percentiles, SLO attainment, goodput, throughput), per-replica figures, 1-second
/// time series and an optional step log. Metric definitions follow `vllm bench serve`
/// (vllm/benchmarks/serve.py; docs/engines.md §6.1): TTFT = first token − arrival; E2E = last
/// token − arrival; TPOT = (E2E − TTFT) / (output − 1) for outputs longer than one token;
/// ITL = gaps between successive tokens, pooled over all requests; percentiles interpolate
/// linearly between order statistics (numpy's default), exactly up to 2^20 samples (ITL: runs
/// of equal gaps) per class and within 0.5 % above (QuantileSketch); count, mean and max are
/// always exact. All times are seconds.

#include "model/money.hpp"
#include "model/operating_point.hpp"
#include "model/units.hpp"
#include "sim/scaling_result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::sim {

/// How a request ended.
enum class Outcome : std::uint8_t {
    Completed, ///< served by a local replica
    Cloud,     ///< served by the cloud endpoint
    Rejected,  ///< refused: gateway queue full, cloud rate limit, or longer than the engine takes
    TimedOut,  ///< not started within the admission timeout
    Cancelled, ///< still in flight when the run was stopped
};

/// "completed", "cloud", "rejected", "timed_out", "cancelled".
[[nodiscard]] const char* to_string(Outcome o);

/// Why a request was rejected (Outcome::Rejected).
enum class RejectReason : std::uint8_t {
    None,
    TooLong,          ///< prompt + output beyond max_model_len, or more than the KV pool holds
    QueueFull,        ///< the gateway's queue (cluster.admission.max_queue) was full
    CloudRateLimited, ///< the cloud endpoint's rate limit (HTTP 429)
    NoCloudEndpoint,  ///< routed to the cloud (route: cloud, or a fallback) with no cloud block
    ReplicaFailed,    ///< lost with the replica that failed under it (failures.in_flight: lose)
};

/// Rejections by reason; they sum to RequestSummary::rejected.
struct RejectCounts {
    std::int64_t too_long = 0;
    std::int64_t queue_full = 0;
    std::int64_t cloud_rate_limited = 0;
    std::int64_t no_cloud_endpoint = 0;
    std::int64_t replica_failed = 0;
    void add(RejectReason why) noexcept;
    RejectCounts& operator+=(const RejectCounts& o) noexcept;
    friend bool operator==(const RejectCounts&, const RejectCounts&) = default;
};

/// One request as it went through the system. Latencies are nullopt when they did not happen.
struct RequestRecord {
    std::uint64_t id = 0;                ///< arrival order, from 0
    int request_class = 0;               ///< index into SimResult::classes
    std::optional<std::int64_t> session; ///< agent session (nullopt: none)
    int step = 0;                        ///< step within the session
    std::optional<int> replica;          ///< replica that served it (nullopt: none or cloud)
    int input_tokens = 0;
    int output_tokens = 0; ///< tokens generated (the request's output length when completed)
    int cached_tokens = 0; ///< prompt tokens served by the prefix cache at first scheduling
    int preemptions = 0;
    int retries = 0;
    Outcome outcome = Outcome::Completed;
    Seconds arrival;
    std::optional<Seconds> queue; ///< arrival → first scheduled in an engine step
    std::optional<Seconds> ttft;
    std::optional<Seconds> tpot; ///< outputs of more than one token
    std::optional<Seconds> e2e;
    bool slo_met = false; ///< every SLO of its class met
    friend bool operator==(const RequestRecord&, const RequestRecord&) = default;
};

/// Mean and percentiles of one latency over the requests that have it.
struct LatencyStats {
    std::int64_t count = 0;
    Seconds mean, p50, p90, p95, p99, max;
    friend bool operator==(const LatencyStats&, const LatencyStats&) = default;
};

/// Counts and latencies of a set of requests (all, or one class).
struct RequestSummary {
    std::int64_t arrived = 0;
    std::int64_t completed = 0; ///< local + cloud
    std::int64_t cloud = 0;     ///< served by the cloud endpoint
    std::int64_t rejected = 0;
    RejectCounts rejected_by_reason; ///< `rejected`, split by why
    std::int64_t timed_out = 0;
    std::int64_t cancelled = 0;
    std::int64_t slo_met = 0;       ///< requests meeting every SLO of their class
    double slo_attainment = 0;      ///< slo_met / arrived
    double goodput_rps = 0;         ///< slo_met / duration
    double throughput_rps = 0;      ///< completed / duration
    std::int64_t input_tokens = 0;  ///< prompt tokens of completed requests
    std::int64_t output_tokens = 0; ///< tokens generated for completed requests
    std::int64_t cached_tokens = 0; ///< prompt tokens served by the prefix cache
    LatencyStats ttft, tpot, itl, e2e, queue;
    friend bool operator==(const RequestSummary&, const RequestSummary&) = default;
};

/// One request class's results and its SLO verdict.
struct ClassResult {
    std::string name;
    std::optional<Seconds> ttft_slo, tpot_slo, e2e_slo; ///< the SLOs applied
    double slo_percentile = 99;
    /// The class's percentile of each SLO metric is within its SLO (and something completed).
    bool slo_met = false;
    RequestSummary summary;
    friend bool operator==(const ClassResult&, const ClassResult&) = default;
};

/// One replica's figures.
struct ReplicaResult {
    Seconds available;        ///< when it could first serve (cold start)
    double busy_fraction = 0; ///< busy time / (duration − cold start)
    std::int64_t steps = 0;
    std::int64_t requests = 0; ///< requests routed to it
    std::int64_t preemptions = 0;
    std::int64_t kv_blocks = 0; ///< KV pool size
    double kv_use_mean = 0;     ///< time-averaged fraction of blocks in use while up
    double kv_use_max = 0;
    double outstanding_mean = 0; ///< time-averaged requests assigned and not finished, over the run
    std::int64_t prefix_queried_tokens = 0; ///< prompt tokens of requests first admitted here
    std::int64_t prefix_hit_tokens = 0;     ///< of which served by its prefix cache
    double prefix_hit_rate = 0;             ///< hit ÷ queried (0 when nothing was admitted)
    int pool = 0;                           ///< index into SimResult::pools (0 without pools)
    friend bool operator==(const ReplicaResult&, const ReplicaResult&) = default;
};

/// One pool of a heterogeneous fleet (model::ReplicaPool): its replicas' figures and its cost.
struct PoolResult {
    std::string name;
    std::string accelerator;
    int replicas = 0;
    int gpus = 0;              ///< replicas × tp
    std::int64_t requests = 0; ///< requests routed to its replicas
    double busy_fraction = 0;  ///< mean over its replicas
    double prefix_hit_rate = 0;
    double gpu_hours = 0;             ///< GPUs × (end of the run − when each was up), hours
    std::optional<model::Money> cost; ///< gpu_hours × its gpu_hour (nullopt: no price)
    std::optional<model::Money> cost_per_hour; ///< gpus × its gpu_hour (nullopt: no price)
    /// With the autoscaler: the replica-seconds it paid for in this pool (gpu_hours is then
    /// replica_seconds × tp ÷ 3,600 and cost_per_hour is at its initial replicas), and its
    /// most replicas at once; 0 without.
    double replica_seconds = 0;
    int peak_replicas = 0;
    /// model::ReplicaPool::owned: cost is then the GPUs it owns (its max_replicas, or replicas
    /// when it does not scale, × tp) × the run's span × its gpu_hour, used or not; rented:
    /// the GPU-hours it used × its gpu_hour.
    bool owned = false;
    int owned_gpus = 0; ///< GPUs it owns (0 when rented)
    friend bool operator==(const PoolResult&, const PoolResult&) = default;
};

/// Prefill/decode disaggregation (cluster.disaggregation): the KV transfers and each pool's
/// queue. The pools' replicas, requests and busy fractions are in SimResult::pools.
struct DisaggregationResult {
    std::string link;          ///< the hwdb interconnect ("" when given as a bandwidth)
    std::string mode;          ///< "whole" or "layerwise"
    double link_bandwidth = 0; ///< bytes/s of one transfer (per-GPU bandwidth × GPU pairs)
    std::int64_t transfers = 0;
    double kv_bytes = 0;         ///< KV moved, all transfers
    LatencyStats transfer_time;  ///< link time of one prompt's KV: latency + bytes / bandwidth
    LatencyStats exposed;        ///< from the prefill's end until the KV is at the decode pool
    LatencyStats prefill_queue;  ///< from arrival to the first prefill step
    LatencyStats decode_queue;   ///< from the KV's arrival to the decode replica's admission
    double link_utilisation = 0; ///< Σ link time / (prefill replicas × the run's span)
    friend bool operator==(const DisaggregationResult&, const DisaggregationResult&) = default;
};

/// One window of SimResult::slo_windows: the SLO attainment (and availability) over time.
struct SloWindow {
    Seconds t;                 ///< window start
    std::int64_t finished = 0; ///< requests that left the system in the window (any outcome)
    std::int64_t slo_met = 0;  ///< of them, completed within every SLO of their class
    /// slo_met ÷ finished (the run's slo_attainment over this window); nullopt: none finished.
    std::optional<double> attainment;
    /// With cluster.failures: the share of the window with the needed replicas up (the
    /// run's availability over this window).
    std::optional<double> availability;
    friend bool operator==(const SloWindow&, const SloWindow&) = default;
};

/// One bin of the time series (1 second unless the span is long: SimResult::series_bin).
/// Levels are time averages over the bin.
struct TimeBin {
    Seconds t; ///< bin start
    std::int64_t arrivals = 0;
    std::int64_t completions = 0;
    double running = 0;      ///< sequences in running engine batches (all replicas)
    double waiting = 0;      ///< requests queued (gateway and engines, not yet started)
    double kv_use = 0;       ///< mean fraction of KV blocks in use over the replicas
    double input_tok_s = 0;  ///< prompt tokens computed (prefill, recompute included)
    double output_tok_s = 0; ///< tokens generated
    Watts power;             ///< the deployment's power at the wall (PowerResult::total_power)
    friend bool operator==(const TimeBin&, const TimeBin&) = default;
};

/// One engine step (kept when SimOptions::keep_steps, streamed to SimOptions::on_step; for
/// Chrome traces).
struct StepRecord {
    int replica = 0;
    Seconds start;
    Seconds duration;
    int prefills = 0; ///< prefill chunks
    int prefill_tokens = 0;
    int decodes = 0;
    int preempted = 0; ///< sequences preempted while forming this step
    double clock = 1;  ///< core clock factor the step ran at (below 1 under a power cap)
    Watts power;       ///< mean power of each GPU of the replica over the step (0: not modelled)
    int running = 0;   ///< sequences in the replica's running set when the step started
    double kv_use = 0; ///< fraction of the replica's KV blocks in use when it started
    Seconds draft;     ///< speculative decoding: the proposer's share of the step's duration
    friend bool operator==(const StepRecord&, const StepRecord&) = default;
};

/// Power and energy of the deployment, observed from its engine steps (docs/simulator.md,
/// "Power and energy"). Accelerator power per step is model::step_power of that exact batch at
/// the clock it ran at; between steps a replica's GPUs draw their resident power (model
/// loaded, no work), before the replica is up (cold start, later scale-ups) their idle power.
/// Hosts draw their power at load throughout, a partly used node its share. Energies cover
/// [0, span], span being the time of the last event. Watts are at the wall (accelerators ÷
/// PSU efficiency + hosts) unless named gpu_.
struct PowerResult {
    /// False when the accelerator has no board power (set power.board_power); nothing below
    /// is filled then.
    bool modelled = false;
    std::vector<std::string> notes;
    Watts limit;                 ///< per-GPU limit (the board power when nothing limits it)
    std::string limit_source;    ///< "board", "gpu_cap", "node_cap" or "rack_budget"
    bool capped = false;         ///< the limit is below the board power: steps may slow down
    Watts idle, resident, board; ///< one GPU's levels
    int gpus = 0;                ///< replicas × GPUs per replica
    int nodes = 0;               ///< ceil(gpus ÷ GPUs per node), filled replica by replica
    int nodes_per_rack = 0;      ///< rack.nodes_per_rack, else what model::plan_racks packs
    int racks = 0;
    double pue = 1;
    Seconds span;                 ///< energies and averages cover [0, span]
    Joules gpu_energy;            ///< all accelerators
    Joules busy_energy;           ///< of which inside engine steps
    Joules host_energy;           ///< the hosts (their share of partly used nodes)
    Joules energy;                ///< wall: gpu_energy ÷ PSU efficiency + host_energy
    Joules facility_energy;       ///< energy × PUE
    Watts avg_power;              ///< energy ÷ span
    Watts peak_power;             ///< highest bin of the deployment's wall power (series_bin)
    Watts gpu_avg_power;          ///< gpu_energy ÷ (gpus × span)
    Watts gpu_peak_power;         ///< highest per-GPU step power
    Joules energy_per_token;      ///< facility energy ÷ output tokens of completed requests
    Joules energy_per_request;    ///< facility energy ÷ completed requests
    double mean_clock = 1;        ///< core clock factor averaged over busy time
    double capped_time_share = 0; ///< share of busy time in steps run below full clock
    /// Bins of SimResult::series_bin (1 s unless the span is over about 18 hours) from 0 (the
    /// last one covers [t, span]): per replica, the power of each
    /// of its GPUs (they run the same steps); per node and per rack (GPUs numbered replica by
    /// replica, nodes filled in order, racks filled in order) and the whole deployment, wall.
    std::vector<std::vector<Watts>> gpu_power;
    std::vector<std::vector<Watts>> node_power;
    std::vector<std::vector<Watts>> rack_power;
    std::vector<Watts> total_power;
    friend bool operator==(const PowerResult&, const PowerResult&) = default;
};

/// What speculative decoding did in a run (engine.speculative set).
struct SpeculativeResult {
    std::string method;                    ///< draft_model, eagle, mtp or ngram
    int k = 0;                             ///< draft tokens per step
    double expected_tokens_per_step = 1.0; ///< the closed form for the configured acceptance
    std::int64_t verifies = 0;             ///< sequence-steps that verified at least one draft
    std::int64_t drafted = 0;              ///< draft tokens proposed
    std::int64_t accepted = 0;             ///< of which accepted
    double acceptance_rate = 0;            ///< accepted / drafted
    double tokens_per_step = 0;            ///< (accepted + verifies) / verifies, as run
    Seconds draft_time;                    ///< the proposer's GPU time, all replicas
    friend bool operator==(const SpeculativeResult&, const SpeculativeResult&) = default;
};

/// What the KV offload tiers did in a run (engine.kv_offload set), all replicas together.
/// Hits count the first admissions' prompt tokens, as prefix_hit_rate does.
struct KvOffloadResult {
    std::int64_t host_capacity_blocks = 0; ///< per replica
    std::int64_t nvme_capacity_blocks = 0; ///< per replica
    double block_bytes = 0;                ///< KV bytes of one block on one GPU
    std::int64_t looked_up_tokens = 0;     ///< prompt tokens of first admissions
    std::int64_t gpu_hit_tokens = 0;       ///< of which found in the GPU's prefix cache
    std::int64_t host_hit_tokens = 0;      ///< ... loaded from host memory
    std::int64_t nvme_hit_tokens = 0;      ///< ... loaded from NVMe
    std::int64_t host_loaded_blocks = 0;   ///< every load (resumed requests included)
    std::int64_t nvme_loaded_blocks = 0;
    Seconds host_load_time;            ///< Σ load time from host, all GPUs in parallel
    Seconds nvme_load_time;            ///< Σ load time from NVMe
    std::int64_t loading_requests = 0; ///< admissions that loaded at least one block
    std::int64_t demoted_to_host = 0;  ///< blocks the GPU evicted into host memory
    std::int64_t demoted_to_nvme = 0;  ///< blocks host memory evicted into NVMe
    std::int64_t dropped = 0;          ///< blocks evicted from the lowest tier
    [[nodiscard]] double rate(std::int64_t tokens) const noexcept {
        return looked_up_tokens > 0
                   ? static_cast<double>(tokens) / static_cast<double>(looked_up_tokens)
                   : 0.0;
    }
    friend bool operator==(const KvOffloadResult&, const KvOffloadResult&) = default;
};

/// What multi-LoRA serving did in a run (engine.lora set), summed over the replicas.
struct LoraResult {
    int adapters = 0;
    int max_loras = 0;
    int max_cpu_loras = 0;
    std::int64_t requests = 0;    ///< requests whose first step ran
    std::int64_t hits = 0;        ///< of those, adapter already in a GPU slot
    double hit_rate = 0;          ///< hits / requests
    double expected_hit_rate = 0; ///< Che's approximation for one replica's max_loras slots
    std::int64_t loads = 0;       ///< host → GPU adapter loads
    std::int64_t disk_loads = 0;  ///< of those, read from disk first
    Seconds load_time;            ///< Σ time steps waited for loads
    Seconds load_time_each;       ///< one host → GPU load (its per-GPU shard)
    Seconds disk_time_each;       ///< one disk read
    double adapters_per_step = 0; ///< mean distinct adapters in a step
    friend bool operator==(const LoraResult&, const LoraResult&) = default;
};

/// Everything one simulation reports.
struct SimResult {
    /// False when the deployment does not fit (then `reasons` says why and nothing ran).
    bool ok = true;
    std::vector<std::string> reasons;
    /// What the run changed, capped or dropped of its input, in words (nothing is silent).
    std::vector<std::string> notes;
    bool stopped = false; ///< the stop token ended the run early
    std::uint64_t seed = 0;
    model::OperatingPoint operating_point; ///< the load the run was driven at
    Seconds duration;                      ///< first arrival → last request finished
    Seconds arrival_window;                ///< first arrival → last arrival
    /// The rate the deployment sustained while load was offered: requests completed between
    /// the first and the last arrival over that window, or the run-long rate where that is
    /// higher (an offline batch, whose window is an instant). The run-long figures
    /// (RequestSummary::throughput_rps, output_tok_s) divide by the whole run, drain included,
    /// as `vllm bench serve` does.
    double served_rps = 0;
    double served_goodput_rps = 0;  ///< the same for requests meeting every SLO of their class
    double served_output_tok_s = 0; ///< output tokens of those requests per second, the same way
    /// Share of the run after the last arrival (the drain): (duration − window) ÷ duration.
    double drain_share = 0;
    RequestSummary overall;
    std::vector<ClassResult> classes;
    std::vector<ReplicaResult> replicas;
    std::vector<PoolResult> pools; ///< with cluster.pools or disaggregation (empty without)
    std::optional<DisaggregationResult> disaggregation; ///< with cluster.disaggregation
    double input_tok_s = 0;  ///< Σ input tokens of completed requests / duration
    double output_tok_s = 0; ///< Σ output tokens / duration
    double total_tok_s = 0;
    std::int64_t preemptions = 0;
    std::int64_t prefill_tokens_computed = 0; ///< recomputation included
    double prefix_hit_rate = 0; ///< prompt tokens hit / prompt tokens looked up (first admissions)
    double kv_use_mean = 0;     ///< mean over replicas of their time-averaged block use
    /// Load balance across replicas: the most requests routed to one replica over the mean
    /// (1: even; 0: nothing routed).
    double request_imbalance = 0;
    /// The highest time-averaged outstanding requests of a replica over the mean (1: even).
    double outstanding_imbalance = 0;
    double kv_use_max = 0;
    double mean_in_system = 0;  ///< time-averaged requests in the system (Little's L)
    double mean_running = 0;    ///< time-averaged running sequences, all replicas
    double batch_size_mean = 0; ///< sequences per step
    std::vector<std::int64_t> batch_size_histogram; ///< steps with 1, 2-3, 4-7, 8-15, ... sequences
    double prefill_time_share = 0;                  ///< share of busy time in prefill-only steps
    double decode_time_share = 0;                   ///< in decode-only steps
    double mixed_time_share = 0;                    ///< in steps mixing prefill chunks and decodes
    std::int64_t steps = 0;
    std::uint64_t events = 0;                     ///< kernel events handled
    model::Money cloud_spend;                     ///< cost of the cloud endpoint's tokens
    std::optional<SpeculativeResult> speculative; ///< when engine.speculative is set
    std::optional<KvOffloadResult> kv_offload;    ///< when engine.kv_offload is set
    std::optional<LoraResult> lora;               ///< when engine.lora is set
    PowerResult power;                            ///< power, energy and the effect of a power cap
    std::optional<AutoscalerResult> autoscaler;   ///< when cluster.autoscaler is set
    std::optional<FailureResult> failures;        ///< when cluster.failures is set
    /// Bins from time 0, of series_bin each. Levels and rates are averages over the bin;
    /// arrivals and completions are counts per bin.
    std::vector<TimeBin> series;
    /// Width of the series' bins (and of PowerResult's): 1 s, doubled as often as needed to
    /// keep at most 65,536 bins (spans over about 18 hours), so memory does not grow with the
    /// simulated span.
    Seconds series_bin{1.0};
    /// The SLO attainment over time: windows of slo_window from 0 to the end of the run, built
    /// from the series' bins (so memory stays bounded): 60 s, or whole series bins when those
    /// are longer, widened so there are at most kMaxSloWindows.
    std::vector<SloWindow> slo_windows;
    Seconds slo_window{60.0};
    static constexpr std::size_t kMaxSloWindows = 1440; ///< a day of minutes
    std::vector<RequestRecord> requests;                ///< when SimOptions::keep_requests
    std::vector<StepRecord> step_log; ///< when SimOptions::keep_steps (max_steps_kept)
    friend bool operator==(const SimResult&, const SimResult&) = default;
};

} // namespace gpuplan::sim
