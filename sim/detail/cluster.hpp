#pragma once
/// The serving cluster (layer-private): a gateway with admission control in front of N
/// replicas behind a router, replica cold starts and scale-ups, and an optional cloud endpoint
/// for hybrid routing. It owns the replicas and retires every request exactly once.

#include "model/disaggregation.hpp"
#include "model/step_cost.hpp"
#include "model/workload.hpp"
#include "sim/detail/metrics.hpp"
#include "sim/detail/replica.hpp"
#include "sim/detail/request.hpp"
#include "sim/quantile_sketch.hpp"
#include "sim/result.hpp"
#include "sim/scaling_result.hpp"
#include "sim/simulation.hpp"

#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace gpuplan::sim::detail {

/// Most autoscaler scrapes, replica failure events and link events (each) one run may have: a
/// scrape every 15 s for four years. An interval or MTBF so short that it would pass this is
/// refused (InvalidArgument naming the key), where it would otherwise run for hours or exhaust
/// memory (issue 33: a 1 ns interval or MTBF).
inline constexpr std::int64_t kMaxClusterEvents = 10'000'000;

/// Told when a request leaves the system, before its slot is recycled (closed loop, agents).
class RequestListener {
  public:
    virtual void request_ended(const Request& r, Outcome outcome) = 0;

  protected:
    RequestListener() = default;
    RequestListener(const RequestListener&) = default;
    RequestListener& operator=(const RequestListener&) = default;
    ~RequestListener() = default;
};

/// One pool of a heterogeneous fleet (model::ReplicaPool, resolved).
struct PoolSetup {
    ReplicaConfig replica;                      ///< its replicas' settings (id filled per replica)
    const model::StepCostModel* cost = nullptr; ///< its step costs (not owned; outlives the run)
    int replicas = 1;
    std::vector<bool> classes;     ///< by class index: served (empty: every class)
    std::optional<int> max_prompt; ///< longest prompt it takes (nullopt: any)
    Tick load_time = 0;            ///< cold start of one of its replicas
    int min_replicas = 1;          ///< with the autoscaler: its bounds
    int max_replicas = 1;
};

/// Prefill/decode disaggregation (model::Disaggregation, resolved): the pools' roles are in
/// their ReplicaConfig; this is the link between them.
struct DisaggSetup {
    model::Deployment model; ///< the model and KV precision whose cache moves
    model::Link link;        ///< model::transfer_link
    std::string link_name;
    model::KvTransferMode mode = model::KvTransferMode::Layerwise;
};

/// Everything the cluster needs besides the kernel objects.
struct ClusterSetup {
    model::Cluster config;
    int replicas = 1;
    Tick load_time = 0; ///< cold start of one replica
    ReplicaConfig replica;
    std::vector<model::RouteTarget> class_routes;
    /// A heterogeneous fleet: these pools' replicas (then `replicas` and `replica` are unused).
    /// Empty: `replicas` replicas of `replica` on the cluster's cost model.
    std::vector<PoolSetup> pools;
    /// Replica failures (cluster.failures set): per-replica MTBF and MTTR as resolved.
    Seconds fail_mtbf{0};
    Seconds fail_mttr{0};
    /// Disaggregation: `pools` are the prefill pool and the decode pool (by role).
    std::optional<DisaggSetup> disagg;
    /// Degraded links (cluster.failures.degraded_link): the slowed step costs (not owned) and
    /// the per-replica MTBF and MTTR as resolved.
    const model::StepCostModel* link_cost = nullptr;
    const model::PowerCappedStepCost* link_capped = nullptr;
    Seconds link_mtbf{0};
    Seconds link_mttr{0};
};

class Cluster final : public EventHandler, public ReplicaHost {
  public:
    Cluster(Simulation& sim, const model::StepCostModel& cost, RequestPool& pool, Metrics& metrics,
            ClusterSetup setup, Rng cloud_rng);

    void set_listener(RequestListener* l) { listener_ = l; }
    /// Brings up the initial replicas and schedules the scale-ups.
    void start();
    /// A new request (already filled in) arrives now.
    void submit(std::uint32_t slot);
    /// Retires every request still in flight as cancelled (after a stopped run).
    void cancel_all();
    [[nodiscard]] int replica_count() const { return static_cast<int>(replicas_.size()); }
    /// engine.lora: every replica's adapter-cache counts summed (failed replicas included).
    [[nodiscard]] LoraCounts lora_counts() const;
    /// What the autoscaler did up to `end` (the end of the run); nullopt without one.
    [[nodiscard]] std::optional<AutoscalerResult> scaling(Tick end) const;
    /// What replica failures did up to `end`; nullopt without cluster.failures.
    [[nodiscard]] std::optional<FailureResult> failures(Tick end) const;
    /// Disaggregation's figures up to `end`; nullopt without it.
    [[nodiscard]] std::optional<DisaggregationResult> disaggregation(Tick end);
    /// The most replicas of pool `p` provisioning or up at once (autoscaler).
    [[nodiscard]] int peak_replicas(int p) const { return pool_peak_[static_cast<std::size_t>(p)]; }
    /// Brings the availability account up to now (before the metrics finish).
    void settle() {
        if (setup_.config.failures) {
            account();
        }
    }
    /// The pool of replica `i` (0 without pools).
    [[nodiscard]] int pool_of(int i) const { return pool_of_[static_cast<std::size_t>(i)]; }

    void request_done(int replica, std::uint32_t slot) override;
    void on_event(std::uint32_t kind, std::uint64_t data) override;

  private:
    /// Counts one event in `seen`; throws InvalidArgument naming `key` past kMaxClusterEvents.
    static void bound_events(std::int64_t& seen, const char* key, const char* what);
    enum Kind : std::uint32_t {
        kTimeout,
        kRetry,
        kCloudDone,
        kReplicaUp,
        kScale,
        kScrape,
        kUnitFail,
        kUnitRepaired,
        kTransferDone,
        kLinkDown,
        kLinkRepaired
    };

    void add_replica(Tick up_at, int pool);
    /// When a replica of `pool` added now is up: the cold start when cluster.cold_start loads
    /// weights.
    [[nodiscard]] Tick scale_up_at(Tick delay, int pool = 0) const {
        return add_ticks(add_ticks(sim_.now(), delay),
                         setup_.config.cold_start.load_bandwidth
                             ? pools_[static_cast<std::size_t>(pool)].load_time
                             : 0);
    }
    /// The autoscaler (docs/simulator.md, "Autoscaling"): one scrape and decision per pool.
    void scrape();
    /// The HPA decision for pool `p` given its ready replicas' metric sum.
    void scale_pool(int p, int ready, double sum);
    /// Whether pool `p` may serve request `r` (class and length bucket; true without pools).
    [[nodiscard]] bool pool_takes(int p, const Request& r) const;
    /// With failures and the autoscaler: a new unit (machine) serving replica `replica`.
    void add_unit(int replica);
    /// The unit serving replica `i` leaves the fleet (drained by the autoscaler).
    void release_unit_of(std::size_t i);
    /// Replica `i` no longer replaces a failed one (up, failed or drained).
    void end_replacement(std::size_t i);
    /// Adds replica `i`'s paid time up to now to the autoscaler's account.
    void pay_until_now(std::size_t i);
    /// Starts draining replica `i` (provisioning: cancels it); removes it once empty.
    void drain_replica(std::size_t i);
    /// Removes a draining replica once it holds no request.
    void remove_if_empty(std::size_t i);
    /// Replicas provisioning or up and not draining (of pool `pool`; -1: all).
    [[nodiscard]] int active_count(int pool = -1) const;
    void note_count();
    /// Failures (docs/simulator.md, "Replica failures"): a unit's next failure or repair.
    void schedule_unit(std::size_t unit, Kind kind, Seconds mean);
    void unit_failed(std::size_t unit);
    void unit_repaired(std::size_t unit);
    /// An up unit not serving starts serving (a new replica, up after the cold start).
    void take_over(std::size_t unit, int pool);
    /// Replica `i` (just added) replaces a failed one until it is up.
    void start_replacement(std::size_t i);
    /// Degraded links: replica `i`'s link goes down or is repaired.
    void link_event(std::size_t i, bool down);
    /// Ends replica `i`'s degraded time (repaired, failed or drained).
    void end_degraded(std::size_t i);
    /// Replica `i` fails: its requests are retried or lost.
    void fail_replica(std::size_t i);
    /// Adds the time since the last call to the availability integrals.
    void account();
    /// With failures, ends the run once nothing but failure events is left.
    void maybe_end();
    /// Marks in allowed_ the replicas whose pool may take `r` (all without pools).
    void restrict_to_pools(const Request& r);
    [[nodiscard]] bool usable(int i) const {
        const auto si = static_cast<std::size_t>(i);
        return up_[si] && allowed_[si];
    }
    /// Disaggregation: the prompt of `slot` is prefilled on replica `from`; its KV leaves.
    void start_transfer(int from, std::uint32_t slot);
    /// Disaggregation: the KV of `slot` reached the decode pool; a decode replica takes it.
    void transfer_done(std::uint32_t slot);
    [[nodiscard]] ReplicaRole role_of(std::size_t i) const {
        return pools_[static_cast<std::size_t>(pool_of_[i])].replica.role;
    }
    void admit(std::uint32_t slot);
    void reject(std::uint32_t slot);
    void dispatch(std::uint32_t slot);
    void drain();
    void to_cloud(std::uint32_t slot);
    void retire(std::uint32_t slot, Outcome outcome, RejectReason why = RejectReason::None);
    [[nodiscard]] bool can_dispatch() const;
    [[nodiscard]] bool cloud_eligible(const Request& r) const;
    [[nodiscard]] int queued() const;
    [[nodiscard]] int pick(const Request& r);
    /// Routers LongestPrefix and Weighted (docs/simulator.md, "Prefix-aware routing").
    [[nodiscard]] int pick_by_prefix(const Request& r) const;

    Simulation& sim_;
    const model::StepCostModel& cost_;
    RequestPool& pool_;
    Metrics& metrics_;
    ClusterSetup setup_;
    Rng rng_;
    RequestListener* listener_ = nullptr;
    std::vector<std::unique_ptr<Replica>> replicas_;
    std::vector<bool> up_;
    std::vector<PoolSetup> pools_; // one for a homogeneous cluster
    std::vector<int> pool_of_;     // per replica
    std::vector<bool> allowed_;    // per replica: its pool may take the request being routed
    int up_count_ = 0;
    std::deque<std::uint64_t> gateway_; // handles, FCFS
    int gateway_live_ = 0;
    int inflight_ = 0; // requests inside replicas
    std::size_t rr_ = 0;
    // Autoscaler state, per replica: draining (no new requests), removed, paid from.
    std::vector<bool> draining_;
    std::vector<bool> removed_;
    std::vector<Tick> paid_from_;
    std::vector<Tick> last_change_; // per pool
    AutoscalerResult scaled_;
    bool scrape_pending_ = false;
    std::vector<int> pool_peak_; // per pool: the most replicas active at once
    // Failures: units (the replicas' machines and the spares), each up or in repair, serving
    // replica `replica` or idle.
    struct Unit {
        bool up = true;
        int replica = -1;
        bool released = false; // left the fleet (autoscaler): its events are ignored
    };
    std::vector<Unit> units_;
    Rng fail_rng_;
    std::int64_t unit_events_ = 0; // failure and repair events pending
    // Scrapes, failures and link events so far, each bounded by kMaxClusterEvents (issue 33).
    std::int64_t scrapes_seen_ = 0, failures_seen_ = 0, link_events_seen_ = 0;
    FailureResult failed_;
    Tick acc_from_ = 0;
    double acc_ok_s_ = 0;              // time with at least the needed replicas up
    double acc_up_s_ = 0;              // ∫ replicas up dt
    double acc_need_s_ = 0;            // ∫ replicas needed dt (autoscaler: up + replacing)
    int replacing_ = 0;                // replicas cold-starting in place of a failed one
    std::vector<bool> replacement_;    // per replica: replaces a failed one and is not up yet
    std::vector<Tick> degraded_since_; // per replica: its link degraded since (-1: not)
    // Disaggregation: per replica, when its link is free; what moved.
    std::vector<Tick> link_free_;
    double link_busy_s_ = 0;
    std::int64_t transfers_ = 0;
    double kv_moved_ = 0;
    QuantileSketch transfer_s_, exposed_s_, prefill_queue_s_, decode_queue_s_;
    double bucket_ = 0; // cloud rate-limit tokens
    Tick bucket_time_ = 0;
};

} // namespace gpuplan::sim::detail
