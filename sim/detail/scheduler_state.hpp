#pragma once
/// A replica's scheduling state (layer-private): its waiting, running and swapped sequences,
/// the paged KV pool and the step being formed, with the mechanics a scheduler policy acts
/// through (allocate KV blocks, schedule tokens, preempt, admit, swap in). The policy
/// (sim/detail/scheduler_policy.hpp) decides what runs next; this class does the bookkeeping
/// its decisions imply, so a policy holds no KV or queue state of its own and a test can build
/// a state by hand without a simulation.

#include "model/deployment.hpp"
#include "model/kv_offload.hpp"
#include "model/power.hpp"
#include "model/speculative.hpp"
#include "model/workload.hpp"
#include "sim/block_manager.hpp"
#include "sim/detail/metrics.hpp"
#include "sim/detail/request.hpp"
#include "sim/kv_tiers.hpp"
#include "sim/tick.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace gpuplan::sim::detail {

struct LoraSetup;

/// A replica's fixed settings.
/// What a replica runs (prefill/decode disaggregation, model/disaggregation.hpp).
enum class ReplicaRole : std::uint8_t {
    Both,    ///< co-located: prompts and their outputs
    Prefill, ///< prompts only: a request leaves once its prompt is computed
    Decode,  ///< requests whose prompt's KV came from a prefill replica
};

struct ReplicaConfig {
    int id = 0;
    ReplicaRole role = ReplicaRole::Both;
    /// The engine whose scheduler the replica follows (make_scheduler_policy).
    model::EngineKind engine = model::EngineKind::Vllm;
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
    /// Running decodes as a cohort (SchedulerState::schedule_cohort; false: walked every step).
    bool decode_cohort = true;
    /// Under a power limit: each step runs at the highest clock whose power fits (not owned;
    /// outlives the replica). Null: every step at the deployment's own clocks.
    const model::PowerCappedStepCost* capped = nullptr;
    /// Speculative decoding (not owned; outlives the replica). Null: off. Each decode step then
    /// verifies k + 1 tokens per sequence, runs the proposer, and advances each sequence by
    /// its accepted drafts + 1, the accepted count drawn position by position from the
    /// replica's own RNG stream (deterministic per seed; no draws when off).
    const model::SpeculativeModel* speculative = nullptr;
    /// KV offload tiers, resolved per GPU (engine.kv_offload; not owned, outlives the
    /// replica). Null: off. With prefix caching the state then keeps a KvTierCache under its
    /// pool (sim/kv_tiers.hpp).
    const model::KvTiers* kv_offload = nullptr;
    /// Multi-LoRA serving (sim/detail/lora_cache.hpp; not owned). Null: off.
    const LoraSetup* lora = nullptr;
    /// The model's sliding attention window in tokens (0: none), for the decode sums
    /// (model::StepCostModel::window(); the replica sets it from its cost model).
    int attention_window = 0;
};

/// The decode sequences scheduled in the step being formed, summed as the cost model needs
/// them (model::StepCostModel::add_decode_sums): kept as each is scheduled or preempted, so
/// the replica does not walk the batch again. Without speculative decoding only.
struct DecodeSums {
    std::int64_t n = 0;
    std::int64_t context = 0;  ///< Σ (computed + 1)
    std::int64_t windowed = 0; ///< Σ min(computed + 1, attention_window)
};

/// The longest run of a request's leading blocks found in the prefix cache (lookup_prefix).
struct PrefixHit {
    int blocks = 0;               ///< cached blocks, from block 0
    int tokens = 0;               ///< blocks × block size
    std::int64_t free_blocks = 0; ///< of those, blocks no sequence references (they leave the
                                  ///< free pool when admitted)
    std::uint64_t hash = 0;       ///< hash of the last hit block (the root hash when none)
    int lower_blocks = 0; ///< blocks after those found in the KV offload tiers (in `tokens`;
                          ///< admitting loads them into newly allocated blocks)
};

/// Where SchedulerState::preempt puts a sequence.
enum class Requeue : std::uint8_t {
    SwapOrFront, ///< swapped to host memory when the preemption mode and swap space allow,
                 ///< else recomputed from the head of the waiting queue (vLLM)
    Front,       ///< recomputed from the head of the waiting queue
    Back,        ///< recomputed from the back of the waiting queue
};

/// `a / b` rounded up, for token counts over a block size.
[[nodiscard]] inline int ceil_div(std::int64_t a, int b) noexcept {
    return static_cast<int>((a + b - 1) / b);
}

class SchedulerState {
  public:
    /// `prefix_cache`: whether the KV pool hashes blocks for reuse (the configuration's prefix
    /// caching and a policy that looks prefixes up). `pool` and `metrics` outlive the state.
    SchedulerState(RequestPool& pool, Metrics& metrics, const ReplicaConfig& config,
                   bool prefix_cache);

    // ---- What a policy reads -------------------------------------------------------------

    [[nodiscard]] const ReplicaConfig& config() const noexcept { return cfg_; }
    /// The simulated time of the step being formed (or of the last enqueue).
    [[nodiscard]] Tick now() const noexcept { return now_; }
    [[nodiscard]] Request& request(std::uint32_t slot) { return pool_[slot]; }
    [[nodiscard]] const Request& request(std::uint32_t slot) const { return pool_[slot]; }
    /// Running sequences (slots), in admission order. preempt() and admit() change it.
    [[nodiscard]] const std::vector<std::uint32_t>& running() const noexcept { return running_; }
    /// Tokens left in this step's budget (max_num_batched_tokens less what is scheduled).
    [[nodiscard]] int budget() const noexcept { return budget_; }
    /// Whether this step has preempted a sequence.
    [[nodiscard]] bool preempted() const noexcept { return preempted_; }
    /// Requests in the waiting queue (preempted ones included).
    [[nodiscard]] int waiting() const noexcept { return waiting_live_; }
    [[nodiscard]] const BlockManager& blocks() const noexcept { return blocks_; }
    /// Blocks kept free when admitting new requests (the scheduler's watermark).
    [[nodiscard]] std::int64_t watermark_blocks() const;
    /// KV blocks that hold `tokens` tokens.
    [[nodiscard]] int blocks_for(std::int64_t tokens) const noexcept {
        return ceil_div(tokens, cfg_.block_size);
    }
    /// Whether `r`'s next step is a decode (its prompt and earlier outputs all computed).
    [[nodiscard]] static bool is_decode(const Request& r) noexcept {
        return r.generated > 0 && r.computed == r.num_tokens() - 1;
    }
    /// Tokens a decode of `r` computes this step: 1, or 1 + its drafts when speculating.
    [[nodiscard]] int decode_tokens(const Request& r) const {
        if (cfg_.speculative == nullptr) {
            return 1;
        }
        // No drafts past the output length (vLLM caps speculation at max_tokens).
        return 1 + std::min(cfg_.speculative->k(), std::max(0, r.output - r.generated - 1));
    }
    /// The head of the waiting queue in the scenario's order (FCFS, or by (priority, arrival)
    /// under the priority policy); ~0u when empty. Drops entries of cancelled requests.
    [[nodiscard]] std::uint32_t front_waiting();
    /// Writes the waiting requests' slots to `out` in queue order (FCFS; the heap's order under
    /// the priority policy). O(queue entries).
    void waiting_slots(std::vector<std::uint32_t>& out) const;
    /// The oldest swapped-out sequence; ~0u when none. Drops stale entries.
    [[nodiscard]] std::uint32_t front_swapped();
    /// The cached leading blocks of `r`, leaving at least its last token to compute (vLLM caps
    /// a hit at num_tokens − 1). No hit without prefix caching or when `r` has computed tokens.
    /// Remembers the blocks for the admit() that follows. O(hit blocks).
    [[nodiscard]] PrefixHit lookup_prefix(const Request& r);
    /// lookup_prefix's token count without touching anything (0 without prefix caching).
    [[nodiscard]] int cached_prefix_tokens(const Request& r) const;

    // ---- What a policy does --------------------------------------------------------------

    /// Makes `r` hold the blocks for `tokens` tokens; false (and nothing allocated) when the
    /// free pool is short.
    [[nodiscard]] bool grow(Request& r, int tokens) {
        if (tokens <= r.blocks_held * cfg_.block_size) {
            return true; // fits the blocks it holds (most decode steps)
        }
        return grow_blocks(r, tokens);
    }
    /// Puts `tokens` of running sequence `slot` (`r`) in this step's batch; takes them from the
    /// budget.
    void schedule(std::uint32_t slot, Request& r, int tokens) {
        r.sched = tokens;
        r.in_batch = true;
        batch_.push_back(slot);
        if (is_decode(r) && cfg_.speculative == nullptr) {
            count_decode(r, +1);
        } else {
            others_.push_back(slot);
        }
        budget_ -= tokens;
        hash_full_blocks(r, r.computed + tokens);
    }
    /// Preempts running()[index]: its tokens in this step go back to the budget, its blocks are
    /// freed, and it is swapped to host memory (`where` SwapOrFront in swap mode, when it has
    /// computed tokens and the swap space holds them) or put back in the waiting queue, at the
    /// head unless `where` is Back, to recompute.
    void preempt(std::size_t index, Requeue where = Requeue::SwapOrFront);
    /// Admits waiting request `slot` (the head of the queue, or under FCFS any waiting request):
    /// takes `hit` (from lookup_prefix, or a default PrefixHit for none), reserves blocks for
    /// `reserve_tokens` tokens (the caller checked they are free), and schedules `tokens` of it
    /// in this step.
    void admit(std::uint32_t slot, const PrefixHit& hit, int tokens, int reserve_tokens);
    /// Brings the head of the swapped queue, `slot`, back (its blocks copied in during this
    /// step) and schedules `tokens` of it; the caller checked the blocks are free.
    void swap_in(std::uint32_t slot, int tokens);
    /// Asks the replica to form a step again at `at` even if nothing arrives (a static batch
    /// waiting to fill).
    void wake_at(Tick at) noexcept { wake_ = at; }

    // ---- What the replica uses -----------------------------------------------------------

    /// Starts forming a step at `now`: an empty batch, no preemptions, no swap traffic.
    void begin_step(Tick now) noexcept {
        now_ = now;
        batch_.clear();
        others_.clear();
        decodes_ = DecodeSums{};
        scheduled_ = 0;
        unscheduled_ = 0;
        preempted_count_ = 0;
        swap_time_ = 0;
        wake_.reset();
    }
    /// Starts one attempt at forming the step: the full token budget, nothing preempted yet.
    void begin_attempt() noexcept {
        budget_ = cfg_.max_num_batched_tokens;
        preempted_ = false;
    }
    /// Adds a request at `now` to the back of the waiting queue.
    void enqueue(std::uint32_t slot, Tick now) {
        now_ = now;
        push_waiting(slot, false);
    }
    /// A waiting request left the queue without starting (its entry goes stale).
    void forget_waiting(Tick now);
    /// The slots of this step's batch (preempted ones still listed, with in_batch false).
    [[nodiscard]] std::vector<std::uint32_t>& batch() noexcept { return batch_; }
    /// The batch's entries that decode_sums() does not cover (prefill chunks, and every entry
    /// with speculative decoding), in batch order; preempted ones still listed.
    [[nodiscard]] const std::vector<std::uint32_t>& others() const noexcept { return others_; }
    /// The batch's plain decodes (preempted ones taken out again).
    [[nodiscard]] const DecodeSums& decode_sums() const noexcept { return decodes_; }
    /// Batch entries preempted after they were scheduled (0: batch() has no stale entry).
    [[nodiscard]] int unscheduled() const noexcept { return unscheduled_; }
    /// Sequences preempted while forming this step.
    [[nodiscard]] int preempted_count() const noexcept { return preempted_count_; }
    /// Seconds of swap traffic this step (out and in).
    [[nodiscard]] double swap_time() const noexcept { return swap_time_; }
    /// When a policy asked to form a step again (wake_at), if it did this step.
    [[nodiscard]] std::optional<Tick> wake() const noexcept { return wake_; }
    /// Frees the blocks of a finished sequence.
    void release(Request& r) { free_blocks(r); }
    /// Once a step is formed: with KV offload tiers and a trace, the step's tier figures go to
    /// the features' hook (FeatureHooks::kv_tier_step) if it looked up or loaded any.
    void report_tiers() {
        if (tiers_ != nullptr) {
            report_tiers_now();
        }
    }
    /// Drops finished (Done) sequences from the running set.
    void drop_done();
    /// The same when `done` lists every one of them (compares slots; reads no request).
    void drop_done(const std::vector<std::uint32_t>& done);

    // ---- The running-decode cohort (docs/simulator.md, "Performance") --------------------
    //
    // Running plain decodes advance one token per step. While the cohort is formed they are
    // not walked: a member's computed/generated/last_token are kept as of the cohort step it
    // joined at (Request::cohort_step) and follow from the steps since; the cohort keeps their
    // count, their Σ (computed + 1) and their count per class. Per-member work happens only at
    // its events, in running order: a new KV block (or a block hash) at the form of a step,
    // completion at its end. The results are the walk's to the bit: the cohort declines a
    // step whenever the walk could do something else (then it is dissolved and re-formed later).

    /// Allows the cohort (the replica: one step in flight, one stage, no speculative decoding,
    /// no sliding-window layers). Without it schedule_cohort() always declines.
    void enable_cohort(bool on) noexcept { cohort_enabled_ = on; }
    /// Continuous batching's first pass: schedules every running decode for one token, as the
    /// walk in running order would. O(1) plus O(log n) per member with a block event. Declines
    /// (false; the cohort dissolved, every request's fields current) when the budget is below
    /// the decodes, when this step's block allocations (the members' and the running
    /// prefills' whole prompts) could exceed the free blocks, when a decode's last token was
    /// not at this step's start, or when this step has preempted.
    [[nodiscard]] bool schedule_cohort();
    /// Whether the cohort is formed (set by schedule_cohort for the step being formed).
    [[nodiscard]] bool cohort_formed() const noexcept { return formed_; }
    /// While formed: the running sequences outside the cohort (prefills, and the sequences
    /// admitted or swapped in this step), in running order.
    [[nodiscard]] const std::vector<std::uint32_t>& outside_cohort() const noexcept {
        return outside_;
    }
    /// Members scheduled in the step being formed (0 when the cohort declined).
    [[nodiscard]] std::int64_t cohort_scheduled() const noexcept { return scheduled_; }
    /// The end at `now` of a step the cohort was formed for: each member emits a token
    /// (`same_gap` and `out_tokens` count them); those that finish are appended to `finished`
    /// in running order, their fields current, and leave the cohort.
    void end_cohort_step(Tick now, std::vector<std::uint32_t>& finished,
                         std::vector<std::int64_t>& same_gap, std::int64_t& out_tokens);
    /// After a formed step's end: running decode `slot` (`r`), which emitted a token at this
    /// end outside the cohort, joins it.
    void join_cohort(std::uint32_t slot, Request& r);
    /// Makes every member's fields current and dissolves the cohort (before anything reads
    /// the running requests: a failure, a cancelled run).
    void dissolve_cohort();

  private:
    void count_decode(const Request& r, int sign) noexcept {
        const std::int64_t c = r.computed + 1;
        decodes_.n += sign;
        decodes_.context += sign * c;
        decodes_.windowed += sign * std::min<std::int64_t>(c, cfg_.attention_window);
    }
    [[nodiscard]] bool grow_blocks(Request& r, int tokens);
    /// The most leading blocks of `r` a prefix lookup could find (lookup_prefix's bound).
    [[nodiscard]] int lookup_limit(const Request& r) const;
    /// A member's completion at the end of cohort step `step` (`seq`: its run_seq).
    struct CohortEvent {
        std::int64_t step = 0;
        std::uint64_t seq = 0;
        std::uint32_t slot = 0;
    };
    /// The completion heap's order: a min-heap by (step, run_seq), so the members finishing at
    /// one step come in running order.
    struct EventAfter {
        bool operator()(const CohortEvent& a, const CohortEvent& b) const noexcept {
            return a.step > b.step || (a.step == b.step && a.seq > b.seq);
        }
    };
    /// Whether event `e` is still of a member of this cohort: the slot may since have been
    /// recycled for a request of any replica (run_seq counts per replica).
    [[nodiscard]] bool is_member(const Request& r, const CohortEvent& e) const noexcept {
        return r.in_cohort && r.run_seq == e.seq && r.replica == cfg_.id;
    }
    /// A member in a phase list: at the steps of that phase (cohort step mod block size) it may
    /// allocate (`alloc`) or hash (`hash`) a block.
    struct PhaseEntry {
        std::uint64_t seq = 0;
        std::uint32_t slot = 0;
        bool alloc = false;
        bool hash = false;
    };
    [[nodiscard]] bool build_cohort();
    /// Brings a member's fields up to the current cohort step.
    void settle(Request& r) const noexcept {
        const std::int64_t d = cstep_ - r.cohort_step;
        if (d > 0) {
            r.computed += static_cast<int>(d);
            r.generated += static_cast<int>(d);
            r.last_token = cohort_end_;
            r.cohort_step = cstep_;
        }
    }
    void add_member(std::uint32_t slot, Request& r);
    /// Takes finished member `slot` out of its phase lists.
    void remove_phases(std::uint32_t slot, const Request& r);
    /// Empties the cohort's members, sums, phases, completions and outsiders (formed_ aside).
    void clear_cohort();
    void clear_phases();
    /// A decode of member `r` allocates a block at the cohort steps of this phase: the walk's
    /// grow() allocates when computed + 1 exceeds the blocks held, once every block size
    /// steps. The phase stays the same while the member decodes (a step adds one to computed
    /// and to cohort_step when settled, an allocation a block size of tokens).
    [[nodiscard]] std::size_t alloc_phase(const Request& r) const noexcept {
        const std::int64_t b = cfg_.block_size;
        const std::int64_t k =
            r.cohort_step + static_cast<std::int64_t>(r.blocks_held) * b - r.computed;
        return static_cast<std::size_t>(((k % b) + b) % b);
    }
    /// ... and hashes a block (agent sessions: the walk's hash_full_blocks hashes each block
    /// as it fills).
    [[nodiscard]] std::size_t hash_phase(const Request& r) const noexcept {
        const std::int64_t b = cfg_.block_size;
        const std::int64_t k = r.cohort_step + (r.hashed_blocks + 1) * b - 1 - r.computed;
        return static_cast<std::size_t>(((k % b) + b) % b);
    }
    /// Whether the walk's hash_full_blocks would hash a block of decode `r`.
    [[nodiscard]] bool hashes_decodes(const Request& r) const noexcept {
        return blocks_.caching() &&
               (r.session != kNoSession ||
                r.hashed_blocks * cfg_.block_size + cfg_.block_size <= r.shared_len);
    }
    void free_blocks(Request& r);
    /// Inserts the hashes of r's blocks that are full below `upto_tokens`; `all` also those
    /// past the shared prefix of a request outside agent sessions.
    void hash_full_blocks(Request& r, int upto_tokens, bool all = false) {
        if (!blocks_.caching()) {
            return;
        }
        if (!all && r.session == kNoSession &&
            r.hashed_blocks * cfg_.block_size + cfg_.block_size > r.shared_len) {
            return; // the shared prefix is hashed already (the common case of a decode step)
        }
        hash_blocks(r, upto_tokens, all);
    }
    void hash_blocks(Request& r, int upto_tokens, bool all);
    [[nodiscard]] std::uint64_t block_hash(const Request& r, int index, std::uint64_t parent) const;
    void push_waiting(std::uint32_t slot, bool front);
    void pop_waiting();
    void take_waiting(std::uint32_t slot);

    RequestPool& pool_;
    Metrics& metrics_;
    ReplicaConfig cfg_;
    BlockManager blocks_;
    Tick now_ = 0;

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
    std::int64_t swap_used_ = 0;     // blocks in host memory
    std::int64_t swap_capacity_ = 0; // blocks that fit in swap_space

    // The step being formed.
    std::vector<std::uint32_t> batch_;
    std::vector<std::uint32_t> others_; // entries not in decodes_
    DecodeSums decodes_;
    int unscheduled_ = 0;
    std::vector<std::int32_t> hits_; // the last lookup_prefix's blocks
    // KV offload (engine.kv_offload): the tiers under the pool, and the last lookup's hashes
    // found there. Null without the block.
    std::unique_ptr<KvTierCache> tiers_;
    std::vector<std::uint64_t> lower_hits_;
    /// Continues a lookup into the tiers from block `b` after `parent`; fills lower_hits_.
    int lookup_lower(const Request& r, int b, int max_blocks, std::uint64_t parent);
    /// Loads the last lookup's tier blocks for `r`'s admission (their time joins the step's).
    void load_lower(const Request& r, int blocks);
    // This replica's tier figures for a trace (FeatureHooks::kv_tier_*): its first admissions'
    // lookups so far, and the current step's loads.
    struct TierTally {
        std::int64_t looked_up = 0, gpu_hit = 0, host_hit = 0, nvme_hit = 0;
        std::int64_t step_host = 0, step_nvme = 0;
        double step_load = 0;
        bool changed = false;
    };
    TierTally tier_tally_;
    void report_tiers_now();
    int budget_ = 0;
    bool preempted_ = false;
    int preempted_count_ = 0;
    double swap_time_ = 0;
    std::optional<Tick> wake_;

    // The cohort.
    bool cohort_enabled_ = false;
    bool formed_ = false;
    std::int64_t cstep_ = 0;               // cohort steps ended so far (the step being formed)
    Tick cohort_end_ = 0;                  // the end of the last cohort step
    std::int64_t members_ = 0;             // running decodes in the cohort
    std::int64_t member_ctx_ = 0;          // Σ (computed + 1) at the step being formed
    std::vector<std::int64_t> member_cls_; // members per class
    std::int64_t scheduled_ = 0;           // members scheduled in the step being formed
    std::vector<CohortEvent> done_events_; // completions, a min-heap (EventAfter)
    std::vector<std::vector<PhaseEntry>> phases_; // per phase, members by run_seq
    std::vector<std::int64_t> phase_allocs_;      // per phase, entries with `alloc`
    std::vector<std::uint32_t> outside_;          // running, not members, in running order
    bool redo_ = false; // a member the phases cannot follow joined: form by the walk
    std::uint64_t run_seq_ = 0;
};

} // namespace gpuplan::sim::detail
