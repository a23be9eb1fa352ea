#pragma once
/// One engine replica (layer-private): a vLLM-like scheduler over a paged KV pool that runs one
/// step at a time, each lasting what model::StepCostModel gives for its exact batch.
/// Continuous batching follows vLLM v1's schedule() (vllm/v1/core/sched/scheduler.py;
/// docs/engines.md §2.2):
/// running sequences first (decodes, then unfinished prefills), preempting the most recently
/// admitted (or lowest-priority) sequence when blocks run out; then waiting requests, only if
/// nothing was preempted, while the token budget and max_num_seqs allow, with a prefix-cache
/// lookup on first admission. Static batching forms a batch, runs it to completion, then forms
/// the next. Under a power limit a step takes the time of model::PowerCappedStepCost instead.
///
/// Pipeline parallelism (pp > 1, continuous batching) runs up to pp micro-batches at once, as
/// vLLM's pipeline-parallel engine does (one scheduled batch per pipeline stage in flight): each
/// micro-batch is formed from sequences not already in flight, with the full token budget,
/// and enters stage 0 as soon as stage 0 is free. A micro-batch's step time T (the cost model
/// sums the stages) is split evenly over the stages, T / pp each (an approximation: real
/// stages differ by the embedding, LM head and sampling on the first and last), and the stages
/// are a flow shop: a micro-batch enters stage j when it has left stage j − 1 and the one
/// before it has left stage j. The KV pool, the running set and max_num_seqs are shared.

#include "model/power.hpp"
#include "model/speculative.hpp"
#include "model/step_cost.hpp"
#include "model/workload.hpp"
#include "sim/block_manager.hpp"
#include "sim/detail/metrics.hpp"
#include "sim/detail/request.hpp"
#include "sim/rng.hpp"
#include "sim/simulation.hpp"

#include <cstdint>
#include <deque>
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

/// A replica's fixed settings.
struct ReplicaConfig {
    int id = 0;
    int max_num_seqs = 256;
    int max_num_batched_tokens = 8192;
    int block_size = 16;
    int max_model_len = 8192;
    bool chunked_prefill = true;
    bool prefix_caching = true;
    std::int64_t kv_blocks = 0;
    model::SchedulerConfig scheduler;
    double block_bytes = 0;       ///< KV bytes of one block on one GPU (swap traffic)
    double swap_bandwidth = 25e9; ///< bytes/s per GPU
    int classes = 1;
    /// PP with continuous batching: up to pp micro-batches in flight (false: one batch).
    bool pipeline_micro_batches = true;
    /// Under a power limit: each step runs at the highest clock whose power fits (not owned;
    /// outlives the replica). Null: every step at the deployment's own clocks.
    const model::PowerCappedStepCost* capped = nullptr;
    /// Speculative decoding (not owned; outlives the replica). Null: off. Each decode step then
    /// verifies k + 1 tokens per sequence, runs the proposer, and advances each sequence by
    /// its accepted drafts + 1, the accepted count drawn position by position from the
    /// replica's own RNG stream (deterministic per seed; no draws when off).
    const model::SpeculativeModel* speculative = nullptr;
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

    [[nodiscard]] int id() const noexcept { return cfg_.id; }
    /// Requests assigned here and not finished.
    [[nodiscard]] int outstanding() const noexcept { return assigned_; }
    /// Requests in the waiting queue (preempted ones included).
    [[nodiscard]] int waiting() const noexcept { return waiting_live_; }
    /// Fraction of KV blocks referenced by sequences.
    [[nodiscard]] double kv_use() const noexcept {
        return blocks_.total() > 0
                   ? static_cast<double>(blocks_.used()) / static_cast<double>(blocks_.total())
                   : 0.0;
    }
    [[nodiscard]] const BlockManager& blocks() const noexcept { return blocks_; }
    /// Prompt tokens of `r` (not yet admitted anywhere) that this replica's prefix cache holds
    /// now: its leading cached blocks, at most num_tokens − 1 tokens, as the first admission
    /// would find them if nothing were evicted before. 0 without prefix caching or with static
    /// batching. O(hit blocks).
    [[nodiscard]] int cached_prefix_tokens(const Request& r) const;

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
    void form_continuous();
    void form_static();
    void end_step(std::size_t mb);
    /// PP: reports the running set and KV use over [covered_, now] while micro-batches are in
    /// flight but none occupies stage 0 (the pipeline draining).
    void cover_until(Tick now);
    [[nodiscard]] bool grow(Request& r, int tokens);
    /// Tokens a decode of `r` computes this step: 1, or 1 + its drafts when speculating.
    [[nodiscard]] int decode_tokens(const Request& r) const;
    void free_blocks(Request& r);
    /// Inserts the hashes of r's blocks that are full below `upto_tokens`; `all` also those
    /// past the shared prefix of a request outside agent sessions.
    void hash_full_blocks(Request& r, int upto_tokens, bool all = false);
    [[nodiscard]] std::uint64_t block_hash(const Request& r, int index, std::uint64_t parent) const;
    void add_to_batch(std::uint32_t slot, Request& r, int tokens);
    [[nodiscard]] std::size_t victim_index() const;
    void preempt(std::size_t index);
    [[nodiscard]] std::uint32_t front_waiting();
    void pop_waiting();
    void push_waiting(std::uint32_t slot, bool front);
    [[nodiscard]] std::int64_t watermark_blocks() const;

    Simulation& sim_;
    const model::StepCostModel& cost_;
    RequestPool& pool_;
    Metrics& metrics_;
    ReplicaHost& host_;
    ReplicaConfig cfg_;
    BlockManager blocks_;

    std::vector<std::uint32_t> running_; // admission order
    std::deque<std::uint64_t> waiting_;  // handles; FCFS order (preempted at the front)
    struct Queued {
        int priority = 0;
        std::uint64_t id = 0;
        std::uint64_t handle = 0;
    };
    std::vector<Queued> waiting_heap_; // priority policy: min-heap by (priority, id)
    std::deque<std::uint64_t> swapped_;
    int waiting_live_ = 0;
    int assigned_ = 0;
    std::int64_t swap_used_ = 0;     // blocks in host memory
    std::int64_t swap_capacity_ = 0; // blocks that fit in swap_space

    // The step being formed or run.
    std::vector<std::uint32_t> batch_;
    std::vector<std::uint32_t> finished_;
    std::vector<std::int32_t> hits_;
    std::vector<std::int64_t> same_gap_; // per class: tokens whose gap is the step duration
    int budget_ = 0;
    bool preempted_ = false;
    int preempted_count_ = 0;
    double swap_time_ = 0;
    bool in_end_ = false; // processing a step's end: the next step starts right after
    bool kick_pending_ = false;
    bool timer_pending_ = false;
    model::StepCost step_cost_; // the last started step's cost (the power observer reads it)
    Rng spec_rng_;              // speculative acceptance draws (a sub-stream of the seed)

    // Steps in flight: one without pipeline parallelism, up to pp micro-batches with it.
    struct MicroBatch {
        std::vector<std::uint32_t> seqs;
        Tick start = 0;
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
