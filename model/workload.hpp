#pragma once
/// The simulator's side of a scenario, as values: how requests arrive (open-loop processes with
/// optional rate curves, closed loop, trace replay), how long they are (length distributions),
/// the request classes with their SLOs and shared prefixes, the replica scheduler's knobs that
/// vLLM's EngineConfig does not cover, and the cluster around the replicas (router, gateway
/// admission control, cold start, a cloud endpoint for hybrid routing). The scenario YAML maps
/// onto these one to one (docs/scenario-schema.md, `workload:` and `cluster:`); defaults live
/// here, documented once. Header only: plain aggregates with defaulted `==`.

#include "model/autoscaler.hpp"
#include "model/disaggregation_config.hpp"
#include "model/enum_names.hpp"
#include "model/money.hpp"
#include "model/replica_failures.hpp"
#include "model/replica_pool.hpp"
#include "model/units.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// Shapes of a token-length distribution.
enum class LengthKind {
    Fixed,     ///< always `mean`
    Uniform,   ///< integers uniform in [min, max]
    Normal,    ///< N(mean, stddev), rounded, clamped to [min, max]
    LogNormal, ///< log-normal with this mean and stddev of the length, rounded, clamped
    Empirical, ///< `values` drawn with `weights` (equal weights when empty)
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<LengthKind>, 5> enum_names(LengthKind) noexcept {
    return {
        EnumName<LengthKind>{"fixed", LengthKind::Fixed},
        EnumName<LengthKind>{"uniform", LengthKind::Uniform},
        EnumName<LengthKind>{"normal", LengthKind::Normal},
        EnumName<LengthKind>{"lognormal", LengthKind::LogNormal},
        EnumName<LengthKind>{"empirical", LengthKind::Empirical},
    };
}

/// A distribution of token counts. Every draw is rounded and clamped to [min, max].
struct LengthDistribution {
    LengthKind kind = LengthKind::Fixed;
    double mean = 256;           ///< Fixed: the value; Normal/LogNormal: the mean length
    double stddev = 0;           ///< Normal/LogNormal: the standard deviation of the length
    int min = 1;                 ///< smallest draw (Uniform: the lower bound)
    int max = 1 << 24;           ///< largest draw (Uniform: the upper bound)
    std::vector<int> values;     ///< Empirical: the lengths
    std::vector<double> weights; ///< Empirical: their relative frequencies (empty: equal)
    /// A fixed length.
    [[nodiscard]] static LengthDistribution fixed(int n) {
        LengthDistribution d;
        d.mean = n;
        return d;
    }
    friend bool operator==(const LengthDistribution&, const LengthDistribution&) = default;
};

/// How the arrival rate varies over time (applied by time rescaling to any renewal process).
enum class RateCurveKind {
    Flat,    ///< the process's own rate throughout
    Step,    ///< piecewise constant: `steps` give the rate from each `at` on
    Diurnal, ///< rate × (1 + amplitude × sin(2π (t − peak_at) / period + π/2))
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<RateCurveKind>, 3> enum_names(RateCurveKind) noexcept {
    return {
        EnumName<RateCurveKind>{"flat", RateCurveKind::Flat},
        EnumName<RateCurveKind>{"step", RateCurveKind::Step},
        EnumName<RateCurveKind>{"diurnal", RateCurveKind::Diurnal},
    };
}

/// One piece of a step curve: from `at` on the rate is `requests_per_s`.
struct RatePoint {
    Seconds at;
    double requests_per_s = 0;
    friend bool operator==(const RatePoint&, const RatePoint&) = default;
};

/// A time-varying arrival rate.
struct RateCurve {
    RateCurveKind kind = RateCurveKind::Flat;
    std::vector<RatePoint> steps; ///< Step: sorted by `at`; before the first, the base rate
    Seconds period{86400};        ///< Diurnal: the cycle length
    double amplitude = 0.5;       ///< Diurnal: relative swing in [0, 1)
    Seconds peak_at{0};           ///< Diurnal: time of the maximum rate
    friend bool operator==(const RateCurve&, const RateCurve&) = default;
};

/// Arrival processes.
enum class ArrivalKind {
    Poisson,    ///< exponential inter-arrival times
    Gamma,      ///< gamma inter-arrival times with coefficient of variation `cv` (vLLM
                ///< bench "burstiness" = 1 / cv²)
    Constant,   ///< evenly spaced
    ClosedLoop, ///< `users` clients, each sending its next request `think_time` after the last
                ///< one finished
    Trace,      ///< replay Workload::trace
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<ArrivalKind>, 5> enum_names(ArrivalKind) noexcept {
    return {
        EnumName<ArrivalKind>{"poisson", ArrivalKind::Poisson},
        EnumName<ArrivalKind>{"gamma", ArrivalKind::Gamma},
        EnumName<ArrivalKind>{"constant", ArrivalKind::Constant},
        EnumName<ArrivalKind>{"closed_loop", ArrivalKind::ClosedLoop},
        EnumName<ArrivalKind>{"trace", ArrivalKind::Trace},
    };
}

/// When requests arrive.
struct ArrivalProcess {
    ArrivalKind kind = ArrivalKind::Poisson;
    /// Mean rate of open-loop processes; nullopt: Workload::requests_per_s, else 1 request/s.
    std::optional<double> requests_per_s;
    double cv = 1.0;            ///< Gamma: coefficient of variation of the inter-arrival time
    int users = 1;              ///< ClosedLoop: concurrent clients
    Seconds think_time{0};      ///< ClosedLoop: mean pause after a response (exponential; 0: none)
    RateCurve curve;            ///< open-loop processes: rate over time
    double trace_speedup = 1.0; ///< Trace: divides the trace's timestamps (2: twice the rate)
    friend bool operator==(const ArrivalProcess&, const ArrivalProcess&) = default;
};

/// One request of a trace: its arrival time (from the start of the trace) and token counts.
struct TraceRecord {
    Seconds arrival;
    int input_tokens = 0;
    int output_tokens = 0;
    friend bool operator==(const TraceRecord&, const TraceRecord&) = default;
};

/// Where a class may be served.
enum class RouteTarget {
    Any,   ///< local replicas; the cloud endpoint as fallback when one is configured
    Local, ///< local replicas only (sensitive data)
    Cloud, ///< the cloud endpoint only (complex requests)
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<RouteTarget>, 3> enum_names(RouteTarget) noexcept {
    return {
        EnumName<RouteTarget>{"any", RouteTarget::Any},
        EnumName<RouteTarget>{"local", RouteTarget::Local},
        EnumName<RouteTarget>{"cloud", RouteTarget::Cloud},
    };
}

/// Agent sessions: a session is `steps` requests in sequence; each re-sends the growing
/// context (the shared prefix, then all earlier inputs and outputs) plus a new input.
struct AgentSession {
    int steps = 4;                                                  ///< requests per session
    LengthDistribution step_input = LengthDistribution::fixed(200); ///< new tokens per step
    Seconds think_time{0}; ///< pause between a response and the next step (tool time)
    friend bool operator==(const AgentSession&, const AgentSession&) = default;
};

/// A kind of request with its lengths, shared prefix, priority, SLO and routing.
/// A request's prompt is `shared_prefix` tokens common to its prefix group, then `input`
/// tokens of its own.
struct RequestClass {
    std::string name = "default";
    double share = 1.0; ///< relative share of arrivals (sessions for agents)
    LengthDistribution input = LengthDistribution::fixed(1024); ///< unique prompt tokens
    LengthDistribution output = LengthDistribution::fixed(256); ///< tokens generated
    int shared_prefix = 0;       ///< tokens at the start of the prompt shared within a prefix group
                                 ///< (system prompt, RAG documents, an agent's tool descriptions)
    int prefix_groups = 1;       ///< distinct shared prefixes, drawn uniformly per request/session
    int priority = 0;            ///< smaller runs first under scheduling_policy priority (vLLM)
    std::optional<Seconds> ttft; ///< SLO on time to first token; nullopt: the scenario's slo
    std::optional<Seconds> tpot; ///< SLO on time per output token
    std::optional<Seconds> e2e;  ///< SLO on end-to-end latency
    RouteTarget route = RouteTarget::Any;
    std::optional<AgentSession> agent; ///< set: arrivals start agent sessions
    friend bool operator==(const RequestClass&, const RequestClass&) = default;
};

/// Engine batching disciplines.
enum class BatchingMode {
    Continuous, ///< iteration-level scheduling (Orca, vLLM): sequences join and leave each step
    Static,     ///< a batch is formed, run to completion, then the next is formed
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<BatchingMode>, 2> enum_names(BatchingMode) noexcept {
    return {
        EnumName<BatchingMode>{"continuous", BatchingMode::Continuous},
        EnumName<BatchingMode>{"static", BatchingMode::Static},
    };
}

/// Order of the waiting queue and choice of preemption victim (vLLM scheduling_policy).
enum class SchedulingPolicy {
    Fcfs,     ///< arrival order; preempt the most recently admitted
    Priority, ///< by (class priority, arrival); preempt the largest (priority, arrival)
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<SchedulingPolicy>, 2>
enum_names(SchedulingPolicy) noexcept {
    return {
        EnumName<SchedulingPolicy>{"fcfs", SchedulingPolicy::Fcfs},
        EnumName<SchedulingPolicy>{"priority", SchedulingPolicy::Priority},
    };
}

/// What happens to a preempted sequence's KV blocks.
enum class PreemptionMode {
    Recompute, ///< freed; the sequence re-runs its prefill later (vLLM v1)
    Swap,      ///< copied to host memory over PCIe and back on resume (vLLM v0)
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<PreemptionMode>, 2>
enum_names(PreemptionMode) noexcept {
    return {
        EnumName<PreemptionMode>{"recompute", PreemptionMode::Recompute},
        EnumName<PreemptionMode>{"swap", PreemptionMode::Swap},
    };
}

/// TensorRT-LLM's capacity scheduler policy (its SchedulerConfig capacity_scheduler_policy):
/// which requests keep or get KV blocks each iteration (sim/detail/policies/tensorrt_llm.cpp).
enum class CapacityScheduler {
    GuaranteedNoEvict, ///< reserve prompt + max new tokens at admission; never evict (default)
    MaxUtilization,    ///< admit on next-step blocks; pause the newest request when they run out
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<CapacityScheduler>, 2>
enum_names(CapacityScheduler) noexcept {
    return {
        EnumName<CapacityScheduler>{"guaranteed_no_evict", CapacityScheduler::GuaranteedNoEvict},
        EnumName<CapacityScheduler>{"max_utilization", CapacityScheduler::MaxUtilization},
    };
}

/// SGLang's waiting-queue order (its --schedule-policy; sim/detail/policies/sglang.cpp).
enum class SglangSchedulePolicy {
    Fcfs, ///< arrival order (SGLang's default)
    Lpm,  ///< longest cached prefix first; arrival order when more than 128 requests wait
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<SglangSchedulePolicy>, 2>
enum_names(SglangSchedulePolicy) noexcept {
    return {
        EnumName<SglangSchedulePolicy>{"fcfs", SglangSchedulePolicy::Fcfs},
        EnumName<SglangSchedulePolicy>{"lpm", SglangSchedulePolicy::Lpm},
    };
}

/// Scheduler knobs of a replica beyond EngineConfig (vLLM names where vLLM has them).
struct SchedulerConfig {
    BatchingMode batching = BatchingMode::Continuous;
    int static_batch_size = 8;     ///< Static: sequences per batch
    Seconds static_max_wait{0.05}; ///< Static: longest a partial batch waits for more requests
    SchedulingPolicy policy = SchedulingPolicy::Fcfs;
    PreemptionMode preemption_mode = PreemptionMode::Recompute;
    /// Swap: host-to-device bandwidth per GPU. nullopt: the accelerator's host link (the
    /// loader fills it in from hwdb), else 25 GB/s (PCIe 4.0 x16 in practice).
    std::optional<BytesPerSecond> swap_bandwidth;
    Bytes swap_space{4.0 * 1024 * 1024 *
                     1024}; ///< Swap: host KV space per GPU (vLLM swap_space, 4 GiB)
    /// Fraction of KV blocks kept free when admitting new requests (vLLM's admission
    /// watermark; 0 = none, as in vLLM v1 by default).
    double watermark = 0.0;
    /// TensorRT-LLM only: the capacity scheduler (default GUARANTEED_NO_EVICT, TensorRT-LLM's).
    CapacityScheduler capacity_scheduler = CapacityScheduler::GuaranteedNoEvict;
    /// SGLang only: the waiting-queue order (default fcfs, SGLang's).
    SglangSchedulePolicy schedule_policy = SglangSchedulePolicy::Fcfs;
    /// SGLang only: scales the initial new_token_ratio, min(0.7 × this, 1) (default 1, SGLang's).
    double schedule_conservativeness = 1.0;
    friend bool operator==(const SchedulerConfig&, const SchedulerConfig&) = default;
};

/// How the gateway picks a replica.
enum class RouterPolicy {
    RoundRobin,
    LeastOutstanding, ///< fewest requests assigned and not finished
    LeastKv,          ///< lowest KV-block use (then fewest outstanding)
    PrefixAffinity,   ///< requests of one prefix group go to one replica (hash), unless it has
                      ///< far more outstanding requests than the least loaded
    LongestPrefix,    ///< the replica whose prefix cache holds the longest prefix of the prompt
                      ///< (ties: fewest outstanding), unless the replicas are out of balance
                      ///< (PrefixRouting's thresholds: then the least outstanding)
    Weighted,         ///< the best score PrefixRouting::weight × hit fraction + (1 − weight) ×
                      ///< queue score, with the same balance escape
    AdapterAffinity,  ///< engine.lora: the least outstanding replica whose GPU holds the
                      ///< request's adapter, unless it has a full batch more than the least
                      ///< loaded; else the least loaded
};

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<RouterPolicy>, 7> enum_names(RouterPolicy) noexcept {
    return {
        EnumName<RouterPolicy>{"round_robin", RouterPolicy::RoundRobin},
        EnumName<RouterPolicy>{"least_outstanding", RouterPolicy::LeastOutstanding},
        EnumName<RouterPolicy>{"least_kv", RouterPolicy::LeastKv},
        EnumName<RouterPolicy>{"prefix_affinity", RouterPolicy::PrefixAffinity},
        EnumName<RouterPolicy>{"longest_prefix", RouterPolicy::LongestPrefix},
        EnumName<RouterPolicy>{"weighted", RouterPolicy::Weighted},
        EnumName<RouterPolicy>{"adapter_affinity", RouterPolicy::AdapterAffinity},
    };
}

/// The scenario spelling of a router ("round_robin", "least_outstanding", "least_kv",
/// "prefix_affinity", "longest_prefix", "weighted", "adapter_affinity").
[[nodiscard]] inline const char* to_string(RouterPolicy p) noexcept {
    return name_of(p);
}

/// Knobs of the prefix-aware routers (LongestPrefix, Weighted; the others ignore them).
/// Defaults: the balance rule and its thresholds are SGLang's router (sgl-router cache_aware
/// policy: --balance-abs-threshold 64, --balance-rel-threshold 1.5), the weight is llm-d's
/// default scheduling profile (prefix-cache scorer weight 3, queue scorer weight 2: 3 / 5).
struct PrefixRouting {
    /// Weighted: share of the prefix-cache score in [0, 1] (0: least outstanding; 1: longest
    /// prefix).
    double weight = 0.6;
    /// The replicas are out of balance when the most outstanding exceeds the fewest by more
    /// than this many requests...
    int balance_abs_threshold = 64;
    /// ...and is more than this many times the fewest; then the least outstanding is taken.
    double balance_rel_threshold = 1.5;
    friend bool operator==(const PrefixRouting&, const PrefixRouting&) = default;
};

/// Gateway admission control. Everything off by default: requests go straight to the engines.
struct Admission {
    std::optional<int> max_queue;       ///< queued (not yet started) requests beyond which new
                                        ///< ones are rejected
    std::optional<int> max_concurrency; ///< requests inside the engines at once; more wait at
                                        ///< the gateway
    std::optional<Seconds> timeout;     ///< a request not started within this fails fast (or
                                        ///< falls back to the cloud)
    int max_retries = 0;                ///< a rejected request is retried this many times
    Seconds retry_backoff{1};           ///< after this pause
    friend bool operator==(const Admission&, const Admission&) = default;
};

/// Replica start-up: weights read from storage at `load_bandwidth` per GPU plus a fixed
/// `startup` (process, CUDA graphs).
struct ColdStart {
    std::optional<BytesPerSecond> load_bandwidth; ///< nullopt: replicas are warm at time 0
    Seconds startup{0};
    bool at_start = false; ///< the initial replicas also start cold (else only scale-ups)
    friend bool operator==(const ColdStart&, const ColdStart&) = default;
};

/// At `at`, the cluster grows to `replicas` (new ones cold-start).
struct ScaleEvent {
    Seconds at;
    int replicas = 1;
    friend bool operator==(const ScaleEvent&, const ScaleEvent&) = default;
};

/// A hosted LLM API as a routing target.
struct CloudEndpoint {
    std::string name = "cloud";
    Seconds ttft_median{0.6};             ///< median time to first token (log-normal)
    double ttft_sigma = 0.4;              ///< log-normal shape of the TTFT
    double output_tokens_per_s = 80;      ///< streaming speed after the first token
    std::optional<double> rate_limit_rps; ///< requests/s allowed (token bucket, burst = 1 s)
    std::optional<Price> input_price;     ///< per million input tokens
    std::optional<Price> output_price;    ///< per million output tokens
    friend bool operator==(const CloudEndpoint&, const CloudEndpoint&) = default;
};

/// The serving cluster: replicas of the deployment behind a router, a gateway and optionally
/// a cloud endpoint.
struct Cluster {
    std::optional<int> replicas; ///< nullopt: the deployment's data-parallel size
    /// A heterogeneous fleet: the replicas are these pools' (then `replicas` and `scale` stay
    /// unset). Empty: `replicas` replicas of the scenario's deployment.
    std::vector<ReplicaPool> pools;
    RouterPolicy router = RouterPolicy::LeastOutstanding;
    PrefixRouting prefix_routing; ///< router longest_prefix or weighted
    Admission admission;
    ColdStart cold_start;
    std::vector<ScaleEvent> scale; ///< scale-ups over time, sorted by `at`
    /// Scales the replicas on a metric (model/autoscaler.hpp); nullopt: a fixed count (and
    /// `scale`). Not with pools or `scale`.
    std::optional<Autoscaler> autoscaler;
    /// Replica failures and repairs with hot spares (model/replica_failures.hpp); nullopt:
    /// replicas never fail. Not with pools, `scale` or the autoscaler.
    std::optional<ReplicaFailures> failures;
    std::optional<CloudEndpoint> cloud;
    /// Prefill/decode disaggregation (model/disaggregation.hpp): a prefill pool and a decode
    /// pool with the KV moving between them; nullopt: co-located replicas. Not with pools,
    /// `replicas`, `scale`, the autoscaler or failures.
    std::optional<Disaggregation> disaggregation;
    /// With a cloud endpoint: class Any requests that time out at the gateway or are rejected
    /// go to the cloud instead of failing (local first, fallback to the cloud).
    bool cloud_fallback = true;
    friend bool operator==(const Cluster&, const Cluster&) = default;
};

} // namespace gpuplan::model
