#pragma once
/// One engine replica (layer-private): a scheduler over a paged KV pool that runs one step at a
/// time, each lasting what model::StepCostModel gives for its exact batch. What each step runs
/// is the replica's SchedulerPolicy's decision (sim/detail/scheduler_policy.hpp: continuous
/// batching after vLLM v1, or static batching), made over its SchedulerState (queues, running
/// set, KV pool); the replica owns the events, the step timing and the metrics. Under a power
/// limit a step takes the time of model::PowerCappedStepCost instead.
///
/// Pipeline parallelism (pp > 1, continuous batching) runs up to pp micro-batches at once, as
/// vLLM's pipeline-parallel engine does (one scheduled batch per pipeline stage in flight): each
/// micro-batch is formed from sequences not already in flight, with the full token budget,
/// and enters stage 0 as soon as stage 0 is free. A micro-batch's step time T (the cost model
/// sums the stages) is split evenly over the stages, T / pp each (an approximation: real
/// stages differ by the embedding, LM head and sampling on the first and last), and the stages
/// are a flow shop: a micro-batch enters stage j when it has left stage j − 1 and the one
/// before it has left stage j. The KV pool, the running set and max_num_seqs are shared.

#include "model/step_cost.hpp"
#include "sim/detail/lora_cache.hpp"
#include "sim/detail/metrics.hpp"
#include "sim/detail/request.hpp"
#include "sim/detail/scheduler_policy.hpp"
#include "sim/detail/scheduler_state.hpp"
#include "sim/detail/step_cost_memo.hpp"
#include "sim/rng.hpp"
#include "sim/simulation.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace gpuplan::sim::detail {

/// The cluster side of a replica: told when a request leaves the replica.
class ReplicaHost {
  public:
    /// The request in `slot` finished generating on `replica` (its state is Done).
    virtual void request_done(int replica, std::uint32_t slot) = 0;

  protected:
    ReplicaHost() = default;
    ReplicaHost(const ReplicaHost&) = default;
    ReplicaHost& operator=(const ReplicaHost&) = default;
    ~ReplicaHost() = default;
};

class Replica final : public EventHandler {
  public:
    Replica(Simulation& sim, const model::StepCostModel& cost, RequestPool& pool, Metrics& metrics,
            ReplicaHost& host, const ReplicaConfig& config);

    /// Whether a request of `prompt` + `output` tokens can ever run here (max_model_len, the
    /// whole KV pool less the watermark, the token budget without chunked prefill).
    [[nodiscard]] bool fits(int prompt, int output) const;
    /// Adds a request to the waiting queue and starts a step if idle.
    void enqueue(std::uint32_t slot);
    /// Removes a waiting request that never started (admission timeout). False when it has
    /// started or is not waiting here.
    bool cancel(std::uint32_t slot);
    /// The replica fails (cluster.failures): it stops at once and ignores its pending events.
    /// The cluster takes its requests back (they still name this replica); it is never used
    /// again.
    void kill() noexcept {
        state_.dissolve_cohort();
        dead_ = true;
    }
    /// Makes the fields of its running requests current (the run was stopped: the cluster
    /// reads them as it cancels them).
    void settle() noexcept { state_.dissolve_cohort(); }
    /// A degraded link (cluster.failures.degraded_link): steps started from now on cost
    /// `cost` (and `capped` under a power cap), the replica's deployment with its link slowed;
    /// nullptr, nullptr: its own cost again (repaired). Not owned; they outlive the run.
    void set_link_cost(const model::StepCostModel* cost,
                       const model::PowerCappedStepCost* capped) noexcept {
        link_cost_ = cost;
        link_capped_ = capped;
    }

    [[nodiscard]] int id() const noexcept { return cfg_.id; }
    /// Requests assigned here and not finished.
    [[nodiscard]] int outstanding() const noexcept { return assigned_; }
    /// Requests in the waiting queue (preempted ones included).
    [[nodiscard]] int waiting() const noexcept { return state_.waiting(); }
    /// Fraction of KV blocks referenced by sequences.
    [[nodiscard]] double kv_use() const noexcept {
        const BlockManager& b = state_.blocks();
        return b.total() > 0 ? static_cast<double>(b.used()) / static_cast<double>(b.total()) : 0.0;
    }
    [[nodiscard]] const BlockManager& blocks() const noexcept { return state_.blocks(); }
    /// Prompt tokens of `r` (not yet admitted anywhere) that this replica's prefix cache holds
    /// now: its leading cached blocks, at most num_tokens − 1 tokens, as the first admission
    /// would find them if nothing were evicted before. 0 without prefix caching or with static
    /// batching. O(hit blocks).
    [[nodiscard]] int cached_prefix_tokens(const Request& r) const {
        return state_.cached_prefix_tokens(r);
    }

    /// engine.lora: whether adapter `a` is in one of this replica's GPU slots.
    [[nodiscard]] bool lora_resident(int a) const noexcept {
        return lora_ != nullptr && lora_->resident(a);
    }
    /// engine.lora: what the adapter caches did (null when off).
    [[nodiscard]] const LoraCache* lora() const noexcept { return lora_.get(); }

    void on_event(std::uint32_t kind, std::uint64_t data) override;

  private:
    enum Kind : std::uint32_t { kStepEnd, kKick, kStaticTimer, kStageFree };

    void kick();
    /// Whether a new (micro-)batch may start now: fewer than the pipeline depth in flight and
    /// stage 0 free.
    [[nodiscard]] bool can_issue() const noexcept {
        return in_flight_ < depth_ && sim_.now() >= stage0_free_;
    }
    void start_step();
    void end_step(std::size_t mb);
    /// PP: reports the running set and KV use over [covered_, now] while micro-batches are in
    /// flight but none occupies stage 0 (the pipeline draining).
    void cover_until(Tick now);

    Simulation& sim_;
    const model::StepCostModel& cost_;
    RequestPool& pool_;
    Metrics& metrics_;
    ReplicaHost& host_;
    ReplicaConfig cfg_;
    std::unique_ptr<SchedulerPolicy> policy_; // chosen once, from the engine settings
    SchedulerState state_;                    // queues, running set, KV pool, step being formed
    int assigned_ = 0;
    bool dead_ = false;                                       // failed: every event is ignored
    const model::StepCostModel* link_cost_ = nullptr;         // degraded link: the step costs
    const model::PowerCappedStepCost* link_capped_ = nullptr; // ... under a power cap

    std::vector<std::uint32_t> finished_;
    std::vector<std::int64_t> same_gap_; // per class: tokens whose gap is the step duration
    bool in_end_ = false; // processing a step's end: the next step starts right after
    bool kick_pending_ = false;
    bool timer_pending_ = false;
    model::StepCost step_cost_;       // the last started step's cost (the power observer reads it)
    StepCostMemo cost_memo_;          // shapes of recent steps of cost_
    Rng spec_rng_;                    // speculative acceptance draws (a sub-stream of the seed)
    std::unique_ptr<LoraCache> lora_; // engine.lora: adapter residency (null when off)

    // Steps in flight: one without pipeline parallelism, up to pp micro-batches with it.
    struct MicroBatch {
        std::vector<std::uint32_t> seqs; // without the cohort's members
        Tick start = 0;
        bool cohort = false; // formed with the running-decode cohort
    };
    std::vector<MicroBatch> mbs_; // depth_ entries; the free ones have an empty `seqs`
    std::vector<bool> mb_busy_;
    std::vector<Tick> stage_free_; // PP: when each stage finishes its last micro-batch
    int stages_ = 1;               // pipeline stages (pp)
    int depth_ = 1;                // micro-batches that may be in flight
    int in_flight_ = 0;
    Tick stage0_free_ = 0; // when stage 0 can take the next micro-batch
    Tick covered_ = 0;     // PP: metrics have the replica's state up to here
};

} // namespace gpuplan::sim::detail
