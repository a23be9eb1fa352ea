#include "sim/detail/replica.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace gpuplan::sim::detail {
namespace {

// Hash-chain step: a 64-bit mix (splitmix64's finalizer over a boost::hash_combine-style
// combination). Zero is reserved for "no hash".
std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h == 0 ? 1 : h;
}

// The parent of block 0 (vLLM's NONE_HASH), fixed so runs are reproducible.
constexpr std::uint64_t kRootHash = 0x6a09e667f3bcc908ULL;

bool later(int pa, std::uint64_t ia, int pb, std::uint64_t ib) {
    return pa > pb || (pa == pb && ia > ib);
}

int cdiv(std::int64_t a, int b) {
    return static_cast<int>((a + b - 1) / b);
}

// Whether `r`'s blocks already hold `tokens` (most decode steps): grow() has nothing to do.
// Inline so the per-sequence step loop skips the call.
bool holds(const Request& r, int tokens, int block_size) {
    return tokens <= r.blocks_held * block_size;
}

// Whether a request outside agent sessions has hashed every full block of its shared prefix
// (the common case of a decode step): hash_full_blocks() without `all` has nothing to do.
bool prefix_hashed(const Request& r, int block_size) {
    return r.session == kNoSession && r.hashed_blocks * block_size + block_size > r.shared_len;
}

} // namespace

int Replica::decode_tokens(const Request& r) const {
    if (cfg_.speculative == nullptr) {
        return 1;
    }
    // No drafts past the output length (vLLM caps speculation at max_tokens).
    return 1 + std::min(cfg_.speculative->k(), std::max(0, r.output - r.generated - 1));
}

Replica::Replica(Simulation& sim, const model::StepCostModel& cost, RequestPool& pool,
                 Metrics& metrics, ReplicaHost& host, const ReplicaConfig& config)
    : sim_(sim), cost_(cost), pool_(pool), metrics_(metrics), host_(host), cfg_(config),
      blocks_(config.kv_blocks, config.prefix_caching &&
                                    config.scheduler.batching == model::BatchingMode::Continuous),
      same_gap_(static_cast<std::size_t>(std::max(1, config.classes)), 0),
      spec_rng_(sim.rng().fork(0x5bec0000ULL + static_cast<std::uint64_t>(config.id))) {
    if (cfg_.block_bytes > 0) {
        // Clamped so a huge swap space cannot overflow the block count (1e18 blocks is unlimited).
        swap_capacity_ = static_cast<std::int64_t>(
            std::min(cfg_.scheduler.swap_space.si() / cfg_.block_bytes, 1e18));
    }
    running_.reserve(static_cast<std::size_t>(cfg_.max_num_seqs));
    batch_.reserve(static_cast<std::size_t>(cfg_.max_num_seqs));
    stages_ = std::max(1, cost_.pp());
    // Static batching runs its batch to completion before forming the next: one in flight.
    depth_ =
        cfg_.scheduler.batching == model::BatchingMode::Continuous && cfg_.pipeline_micro_batches
            ? stages_
            : 1;
    mbs_.resize(static_cast<std::size_t>(depth_));
    for (MicroBatch& m : mbs_) {
        m.seqs.reserve(static_cast<std::size_t>(cfg_.max_num_seqs));
    }
    mb_busy_.assign(static_cast<std::size_t>(depth_), false);
    stage_free_.assign(static_cast<std::size_t>(stages_), 0);
}

std::int64_t Replica::watermark_blocks() const {
    return static_cast<std::int64_t>(
        std::ceil(cfg_.scheduler.watermark * static_cast<double>(blocks_.total())));
}

bool Replica::fits(int prompt, int output) const {
    const std::int64_t tokens = static_cast<std::int64_t>(prompt) + output;
    if (tokens > cfg_.max_model_len) {
        return false;
    }
    if (cdiv(tokens, cfg_.block_size) > blocks_.total() - watermark_blocks()) {
        return false;
    }
    if (cfg_.scheduler.batching == model::BatchingMode::Continuous && !cfg_.chunked_prefill &&
        prompt > cfg_.max_num_batched_tokens) {
        return false;
    }
    return true;
}

void Replica::push_waiting(std::uint32_t slot, bool front) {
    Request& r = pool_[slot];
    r.state = ReqState::Waiting;
    r.replica = cfg_.id;
    const std::uint64_t h = pool_.handle(slot);
    if (cfg_.scheduler.policy == model::SchedulingPolicy::Priority) {
        waiting_heap_.push_back(Queued{r.priority, r.id, h});
        std::push_heap(waiting_heap_.begin(), waiting_heap_.end(),
                       [](const Queued& a, const Queued& b) {
                           return later(a.priority, a.id, b.priority, b.id);
                       });
    } else if (front) {
        waiting_.push_front(h);
    } else {
        waiting_.push_back(h);
    }
    ++waiting_live_;
    metrics_.queued(sim_.now(), +1);
}

// The first live waiting request (stale entries of cancelled requests are dropped); ~0u if none.
std::uint32_t Replica::front_waiting() {
    const auto live = [&](std::uint64_t h) {
        const std::uint32_t s = pool_.resolve(h);
        return s != ~0u && pool_[s].state == ReqState::Waiting && pool_[s].replica == cfg_.id ? s
                                                                                              : ~0u;
    };
    if (cfg_.scheduler.policy == model::SchedulingPolicy::Priority) {
        while (!waiting_heap_.empty()) {
            const std::uint32_t s = live(waiting_heap_.front().handle);
            if (s != ~0u) {
                return s;
            }
            std::pop_heap(waiting_heap_.begin(), waiting_heap_.end(),
                          [](const Queued& a, const Queued& b) {
                              return later(a.priority, a.id, b.priority, b.id);
                          });
            waiting_heap_.pop_back();
        }
        return ~0u;
    }
    while (!waiting_.empty()) {
        const std::uint32_t s = live(waiting_.front());
        if (s != ~0u) {
            return s;
        }
        waiting_.pop_front();
    }
    return ~0u;
}

void Replica::pop_waiting() {
    if (cfg_.scheduler.policy == model::SchedulingPolicy::Priority) {
        std::pop_heap(waiting_heap_.begin(), waiting_heap_.end(),
                      [](const Queued& a, const Queued& b) {
                          return later(a.priority, a.id, b.priority, b.id);
                      });
        waiting_heap_.pop_back();
    } else {
        waiting_.pop_front();
    }
    --waiting_live_;
    metrics_.queued(sim_.now(), -1);
}

void Replica::enqueue(std::uint32_t slot) {
    Request& r = pool_[slot];
    r.enqueued = sim_.now();
    ++assigned_;
    push_waiting(slot, false);
    kick();
}

bool Replica::cancel(std::uint32_t slot) {
    Request& r = pool_[slot];
    if (r.state != ReqState::Waiting || r.replica != cfg_.id || r.started) {
        return false;
    }
    r.state = ReqState::Done; // its queue entry goes stale and is dropped when reached
    --waiting_live_;
    --assigned_;
    metrics_.queued(sim_.now(), -1);
    return true;
}

void Replica::kick() {
    if (!in_end_ && !kick_pending_ && can_issue()) {
        kick_pending_ = true;
        sim_.schedule_in(0, *this, kKick);
    }
}

void Replica::on_event(std::uint32_t kind, std::uint64_t data) {
    switch (kind) {
    case kStepEnd: end_step(static_cast<std::size_t>(data)); break;
    case kKick:
        kick_pending_ = false;
        if (can_issue()) {
            start_step();
        }
        break;
    case kStaticTimer:
        timer_pending_ = false;
        if (can_issue()) {
            start_step();
        }
        break;
    case kStageFree:
        if (!kick_pending_ && can_issue()) {
            start_step();
        }
        break;
    default: break;
    }
}

std::uint64_t Replica::block_hash(const Request& r, int index, std::uint64_t parent) const {
    // Token content is modelled by segments: the shared prefix (shared_id, shared_len), then the
    // request's (or agent session's) own stream. Block `index` covers tokens [start, start + B);
    // its content is which segments it overlaps and where the boundary falls. Chained with the
    // parent, equal hashes mean equal token prefixes (vLLM hashes parent + token ids).
    const std::int64_t start = static_cast<std::int64_t>(index) * cfg_.block_size;
    const std::int64_t end = start + cfg_.block_size;
    const std::int64_t L = r.shared_len;
    const std::uint64_t a = start < L ? r.shared_id : 0;
    const auto boundary =
        static_cast<std::uint64_t>(std::clamp<std::int64_t>(L - start, 0, cfg_.block_size));
    const std::uint64_t c = end > L ? r.stream_id : 0;
    return mix(mix(mix(parent, a), boundary), c);
}

int Replica::cached_prefix_tokens(const Request& r) const {
    // The lookup of the first admission in form_continuous(), without touching anything
    // (static batching does no lookup).
    if (!blocks_.caching() || cfg_.scheduler.batching != model::BatchingMode::Continuous) {
        return 0;
    }
    const int max_blocks = (r.num_tokens() - 1) / cfg_.block_size;
    std::uint64_t parent = kRootHash;
    int b = 0;
    for (; b < max_blocks; ++b) {
        const std::uint64_t h = block_hash(r, b, parent);
        if (blocks_.lookup(h) < 0) {
            break;
        }
        parent = h;
    }
    return b * cfg_.block_size;
}

void Replica::hash_full_blocks(Request& r, int upto_tokens, bool all) {
    if (!blocks_.caching()) {
        return;
    }
    if (!all && prefix_hashed(r, cfg_.block_size)) {
        return; // the shared prefix is hashed already (the common case of a decode step)
    }
    int full = std::min(upto_tokens, r.num_tokens()) / cfg_.block_size;
    if (!all && r.session == kNoSession) {
        // Blocks past the shared prefix hold this request's own tokens: no other request can
        // ever hit them, so they are hashed only when the request is preempted (it may hit
        // them itself on resume). Lookups see exactly what vLLM's cache-everything would give;
        // the hash table just stays small.
        full = std::min(full, r.shared_len / cfg_.block_size);
    }
    for (int i = r.hashed_blocks; i < full; ++i) {
        const std::uint64_t h = block_hash(r, i, r.hashed_blocks == 0 ? kRootHash : r.last_hash);
        blocks_.insert(h, r.blocks[static_cast<std::size_t>(i)]);
        r.last_hash = h;
        r.hashed_blocks = i + 1;
    }
}

bool Replica::grow(Request& r, int tokens) {
    if (holds(r, tokens, cfg_.block_size)) {
        return true; // fits the blocks it holds (most decode steps)
    }
    const int need = cdiv(tokens, cfg_.block_size) - r.blocks_held;
    if (need <= 0) {
        return true;
    }
    if (need > blocks_.free()) {
        return false;
    }
    for (int i = 0; i < need; ++i) {
        const std::int32_t b = blocks_.allocate();
        if (blocks_.caching()) {
            r.blocks.push_back(b);
        }
    }
    r.blocks_held += need;
    return true;
}

void Replica::free_blocks(Request& r) {
    if (blocks_.caching()) {
        // Tail first, so the deepest blocks are evicted first (vLLM's free order).
        for (auto it = r.blocks.rbegin(); it != r.blocks.rend(); ++it) {
            blocks_.release(*it);
        }
        r.blocks.clear();
    } else {
        blocks_.release_count(r.blocks_held);
    }
    r.blocks_held = 0;
    r.hashed_blocks = 0;
    r.last_hash = 0;
}

void Replica::add_to_batch(std::uint32_t slot, Request& r, int tokens) {
    r.sched = tokens;
    r.in_batch = true;
    batch_.push_back(slot);
    budget_ -= tokens;
    if (blocks_.caching() && !prefix_hashed(r, cfg_.block_size)) {
        hash_full_blocks(r, r.computed + tokens);
    }
}

// Sequences in flight in another micro-batch (pipeline parallelism) are never victims; the
// sequence that needs the blocks is not in flight, so there is always one.
std::size_t Replica::victim_index() const {
    if (cfg_.scheduler.policy == model::SchedulingPolicy::Fcfs) {
        std::size_t i = running_.size() - 1; // the most recently admitted
        while (i > 0 && pool_[running_[i]].in_flight) {
            --i;
        }
        return i;
    }
    std::size_t best = running_.size();
    for (std::size_t i = 0; i < running_.size(); ++i) {
        const Request& a = pool_[running_[i]];
        if (a.in_flight) {
            continue;
        }
        if (best == running_.size()) {
            best = i;
            continue;
        }
        const Request& b = pool_[running_[best]];
        if (!later(b.priority, b.id, a.priority, a.id)) {
            best = i;
        }
    }
    return best;
}

void Replica::preempt(std::size_t index) {
    const std::uint32_t slot = running_[index];
    running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
    Request& r = pool_[slot];
    if (r.in_batch) {
        budget_ += r.sched; // give back the tokens it was scheduled this step
        r.sched = 0;
        r.in_batch = false;
    }
    hash_full_blocks(r, r.computed, true); // its own blocks stay findable for its resume
    ++r.preemptions;
    ++preempted_count_;
    preempted_ = true;
    metrics_.preemption(cfg_.id);
    const bool swap = cfg_.scheduler.preemption_mode == model::PreemptionMode::Swap &&
                      r.computed > 0 && swap_used_ + r.blocks_held <= swap_capacity_;
    if (swap) {
        // The blocks are copied to host memory over PCIe during this step.
        swap_time_ += r.blocks_held * cfg_.block_bytes / cfg_.swap_bandwidth;
        swap_used_ += r.blocks_held;
        r.swapped_blocks = r.blocks_held;
        free_blocks(r);
        r.state = ReqState::Swapped;
        swapped_.push_back(pool_.handle(slot));
        return;
    }
    free_blocks(r);
    r.computed = 0;
    push_waiting(slot, true);
}

void Replica::form_continuous() {
    const int B = cfg_.block_size;
    // 1. Running requests: decodes first, then unfinished prefills, in admission order.
    bool stop = false;
    bool prefills = false; // an unfinished prefill sits in the running set
    for (int pass = 0; pass < 2 && !stop && (pass == 0 || prefills); ++pass) {
        for (std::size_t i = 0; i < running_.size(); ++i) {
            if (budget_ <= 0) {
                break;
            }
            const std::uint32_t slot = running_[i];
            Request& r = pool_[slot];
            if (r.in_batch) {
                continue;
            }
            const bool decode = r.generated > 0 && r.computed == r.num_tokens() - 1;
            if ((pass == 0) != decode) {
                prefills = prefills || !decode;
                continue;
            }
            // A speculative decode verifies k + 1 tokens: it needs their KV slots and budget.
            const int n =
                decode ? decode_tokens(r) : std::min(r.num_tokens() - r.computed, budget_);
            bool self = false;
            while (!holds(r, r.computed + n, B) && !grow(r, r.computed + n)) {
                const std::size_t v = victim_index();
                self = running_[v] == slot;
                preempt(v);
                if (self) {
                    break;
                }
                if (v < i) {
                    --i; // the list shifted left under us
                }
            }
            if (self) {
                stop = true; // vLLM stops scheduling running requests for this step
                break;
            }
            add_to_batch(slot, r, std::min(n, budget_));
        }
    }
    if (preempted_) {
        return; // vLLM admits nothing in a step that preempted
    }
    const std::int64_t wm = watermark_blocks();
    const int max_seqs = cfg_.max_num_seqs;
    // 2. Swapped requests come back before new ones (vLLM v0).
    while (!swapped_.empty() && budget_ > 0 && static_cast<int>(running_.size()) < max_seqs) {
        const std::uint32_t slot = pool_.resolve(swapped_.front());
        if (slot == ~0u || pool_[slot].state != ReqState::Swapped) {
            swapped_.pop_front();
            continue;
        }
        Request& r = pool_[slot];
        const bool decode = r.generated > 0 && r.computed == r.num_tokens() - 1;
        const int n = decode ? 1 : std::min(r.num_tokens() - r.computed, budget_);
        if (cdiv(r.computed + n, B) > blocks_.free() - wm) {
            break;
        }
        swapped_.pop_front();
        swap_time_ += r.swapped_blocks * cfg_.block_bytes / cfg_.swap_bandwidth;
        swap_used_ -= r.swapped_blocks;
        r.swapped_blocks = 0;
        (void)grow(r, r.computed + n);
        hash_full_blocks(r, r.computed);
        r.state = ReqState::Running;
        running_.push_back(slot);
        add_to_batch(slot, r, n);
    }
    // 3. Waiting requests, head of the queue first; a request that cannot get its blocks
    //    blocks the queue (vLLM: waiting requests never preempt).
    while (budget_ > 0 && static_cast<int>(running_.size()) < max_seqs) {
        const std::uint32_t slot = front_waiting();
        if (slot == ~0u) {
            break;
        }
        Request& r = pool_[slot];
        hits_.clear();
        int hit_tokens = 0;
        std::int64_t free_hits = 0;
        std::uint64_t hit_hash = kRootHash;
        if (blocks_.caching() && r.computed == 0) {
            // Longest run of cached blocks from the start, leaving at least the last token to
            // compute (vLLM caps the hit at num_tokens − 1).
            const int max_blocks = (r.num_tokens() - 1) / B;
            std::uint64_t parent = kRootHash;
            // The full blocks of a shared prefix hash alike for every request of it: while
            // nothing is evicted, the pool's chain memo gives their lookups' answers at once.
            const int same = r.shared_id != 0 ? std::min(max_blocks, r.shared_len / B) : 0;
            int b = same > 0 ? static_cast<int>(blocks_.recall_chain(
                                   r.shared_id, static_cast<std::size_t>(same), hits_, parent))
                             : 0;
            for (const std::int32_t blk : hits_) {
                free_hits += blocks_.ref_count(blk) == 0 ? 1 : 0;
            }
            for (; b < max_blocks; ++b) {
                const std::uint64_t h = block_hash(r, b, parent);
                const std::int32_t blk = blocks_.lookup(h);
                if (blk < 0) {
                    break;
                }
                if (b < same) {
                    blocks_.remember_chain(r.shared_id, static_cast<std::size_t>(b), h, blk);
                }
                hits_.push_back(blk);
                free_hits += blocks_.ref_count(blk) == 0 ? 1 : 0;
                parent = h;
            }
            hit_hash = parent;
            hit_tokens = static_cast<int>(hits_.size()) * B;
        }
        const int computed0 = r.computed + hit_tokens;
        int n = r.num_tokens() - computed0;
        if (!cfg_.chunked_prefill && n > budget_) {
            break;
        }
        n = std::min(n, budget_);
        const std::int64_t need = cdiv(computed0 + n, B) - static_cast<std::int64_t>(hits_.size());
        if (need + free_hits > blocks_.free() - wm) {
            break;
        }
        pop_waiting();
        if (blocks_.caching()) {
            for (const std::int32_t blk : hits_) {
                blocks_.touch(blk);
                r.blocks.push_back(blk);
            }
            r.blocks_held = static_cast<int>(hits_.size());
            r.hashed_blocks = static_cast<int>(hits_.size());
            r.last_hash = hit_hash;
        }
        r.computed = computed0;
        (void)grow(r, computed0 + n);
        if (!r.started) {
            r.started = true;
            r.first_scheduled = sim_.now();
            r.cached_tokens = hit_tokens;
            if (blocks_.caching()) {
                metrics_.prefix_lookup(r.num_tokens(), hit_tokens);
            }
        }
        r.state = ReqState::Running;
        running_.push_back(slot);
        add_to_batch(slot, r, n);
    }
}

void Replica::form_static() {
    const int B = cfg_.block_size;
    if (!running_.empty()) {
        // The batch runs to completion: every unfinished member decodes (prompts were whole).
        for (const std::uint32_t slot : running_) {
            Request& r = pool_[slot];
            add_to_batch(slot, r, r.num_tokens() - r.computed);
        }
        return;
    }
    const std::uint32_t head = front_waiting();
    if (head == ~0u) {
        return;
    }
    const int size = cfg_.scheduler.static_batch_size;
    const Tick deadline = add_ticks(
        pool_[head].enqueued, to_tick(cfg_.scheduler.static_max_wait, "engine.static_max_wait"));
    if (waiting_live_ < size && sim_.now() < deadline) {
        if (!timer_pending_) {
            timer_pending_ = true;
            sim_.schedule_at(deadline, *this, kStaticTimer);
        }
        return;
    }
    // Form the batch: each member reserves blocks for its whole prompt and output up front.
    while (static_cast<int>(running_.size()) < size) {
        const std::uint32_t slot = front_waiting();
        if (slot == ~0u) {
            break;
        }
        Request& r = pool_[slot];
        if (cdiv(static_cast<std::int64_t>(r.prompt) + r.output, B) > blocks_.free()) {
            break;
        }
        pop_waiting();
        (void)grow(r, r.prompt + r.output);
        r.started = true;
        r.first_scheduled = sim_.now();
        r.state = ReqState::Running;
        running_.push_back(slot);
        add_to_batch(slot, r, r.num_tokens() - r.computed);
    }
}

void Replica::start_step() {
    batch_.clear();
    preempted_count_ = 0;
    swap_time_ = 0;
    // A step whose only running sequence preempted itself is empty; forming again admits
    // from the waiting queue (which a preempting step skips), so the replica never stalls.
    for (int attempt = 0; attempt < 4; ++attempt) {
        budget_ = cfg_.max_num_batched_tokens;
        preempted_ = false;
        if (cfg_.scheduler.batching == model::BatchingMode::Static) {
            form_static();
        } else {
            form_continuous();
        }
        if (!batch_.empty() || !preempted_) {
            break;
        }
    }
    // Sums for the cost model; preempted entries were unmarked and are skipped.
    model::BatchStats stats;
    model::BatchStats draft_stats; // the proposer's batch (speculative decoding)
    StepSample sample;
    std::size_t kept = 0;
    for (const std::uint32_t slot : batch_) {
        const Request& r = pool_[slot];
        if (!r.in_batch) {
            continue;
        }
        batch_[kept++] = slot;
        if (r.generated > 0 && r.computed == r.num_tokens() - 1) {
            if (cfg_.speculative != nullptr && r.sched > 1) {
                // The verify pass: the last sampled token and r.sched − 1 drafts.
                cfg_.speculative->add_verify(cost_, stats, r.computed, r.sched - 1);
                if (const model::StepCostModel* dm = cfg_.speculative->draft()) {
                    dm->add(draft_stats, model::DecodeSeq{r.computed + 1});
                }
            } else {
                cost_.add(stats, model::DecodeSeq{r.computed + 1});
            }
            ++sample.decodes;
        } else {
            cost_.add(stats, model::PrefillChunk{r.sched, r.computed});
            if (cfg_.speculative != nullptr && cfg_.speculative->draft() != nullptr) {
                cfg_.speculative->draft()->add(draft_stats,
                                               model::PrefillChunk{r.sched, r.computed});
            }
            ++sample.prefills;
            sample.prefill_tokens += r.sched;
        }
    }
    batch_.resize(kept);
    if (batch_.empty() && swap_time_ <= 0) {
        return; // nothing to run; an arrival or a step's end starts the next
    }
    double t = 0.0;
    if (!batch_.empty()) {
        if (cfg_.capped) {
            const model::PowerCappedStepCost::Step st = cfg_.capped->cost(stats);
            step_cost_ = st.cost;
            sample.clock = st.clock;
        } else {
            step_cost_ = cost_.cost(stats);
            sample.clock = cost_.clocks().compute;
        }
        t = step_cost_.time.si();
        if (cfg_.speculative != nullptr) {
            // The proposer runs before the verify pass on the same GPUs (at full clocks).
            const double draft = cfg_.speculative->draft_time(draft_stats).si();
            t += draft;
            metrics_.speculative_draft_time(draft);
            sample.draft_s = draft;
        }
        sample.cost = &step_cost_;
    }
    const Tick start = sim_.now();
    std::size_t mb = 0;
    while (mb_busy_[mb]) {
        ++mb;
    }
    Tick end = 0;
    if (stages_ == 1) {
        sample.compute_end = add_ticks(start, to_tick(Seconds(t), "a step's compute time"));
        t += swap_time_;
        end = add_ticks(start, std::max<Tick>(1, to_tick(Seconds(t), "a step's time")));
        sample.end = end;
        stage0_free_ = end;
    } else {
        // The step time split evenly over the stages (cumulative rounding, so the last stage
        // ends exactly T after the start when the pipeline is empty); swap traffic likewise.
        cover_until(start);
        const double total = t + swap_time_;
        const double per_stage = total / stages_;
        Tick c = start;
        Tick prev = 0;
        for (int j = 0; j < stages_; ++j) {
            const Tick off = j + 1 == stages_
                                 ? to_tick(Seconds(total), "a pipeline step's time")
                                 : to_tick(Seconds(per_stage * (j + 1)), "a pipeline stage's time");
            const Tick d = std::max<Tick>(1, off - prev);
            prev = std::max(prev, off);
            Tick& free = stage_free_[static_cast<std::size_t>(j)];
            c = add_ticks(std::max(c, free), d);
            free = c;
        }
        end = c;
        stage0_free_ = stage_free_[0];
        // Metrics see the micro-batch's time in stage 0: every stage is busy that long with
        // it, so busy time and energy are per GPU, and the slices of a replica never overlap.
        sample.end = stage0_free_;
        sample.compute_end =
            std::min(stage0_free_,
                     add_ticks(start, to_tick(Seconds(t / stages_), "a pipeline stage's time")));
        covered_ = stage0_free_;
        sim_.schedule_at(stage0_free_, *this, kStageFree);
    }
    for (const std::uint32_t slot : batch_) {
        pool_[slot].in_flight = true;
    }
    MicroBatch& m = mbs_[mb];
    m.seqs.swap(batch_);
    m.start = start;
    mb_busy_[mb] = true;
    ++in_flight_;
    sample.replica = cfg_.id;
    sample.start = start;
    sample.sequences = static_cast<int>(m.seqs.size());
    sample.running = static_cast<int>(running_.size());
    sample.preempted = preempted_count_;
    sample.used_blocks = blocks_.used();
    sample.total_blocks = blocks_.total();
    metrics_.step(sample);
    sim_.schedule_at(end, *this, kStepEnd, mb);
}

void Replica::cover_until(Tick now) {
    if (in_flight_ > 0 && now > covered_) {
        metrics_.hold(cfg_.id, covered_, now, static_cast<int>(running_.size()), blocks_.used(),
                      blocks_.total());
    }
    covered_ = std::max(covered_, now);
}

void Replica::end_step(std::size_t mb) {
    const Tick now = sim_.now();
    if (stages_ > 1) {
        cover_until(now);
    }
    MicroBatch& m = mbs_[mb];
    const Tick step_start = m.start;
    const Tick gap = now - step_start;
    std::int64_t prefill_tokens = 0;
    std::int64_t out_tokens = 0;
    finished_.clear();
    for (const std::uint32_t slot : m.seqs) {
        Request& r = pool_[slot];
        if (!r.in_batch) {
            continue;
        }
        r.in_batch = false;
        r.in_flight = false;
        const bool decode = r.generated > 0 && r.computed == r.num_tokens() - 1;
        if (!decode) {
            prefill_tokens += r.sched;
        }
        int advance = 1; // tokens this step emits for r once its prompt is done
        if (decode && cfg_.speculative != nullptr && r.sched > 1) {
            // Draft i is kept when drafts 1..i − 1 were and it passes its own test (Leviathan
            // et al., arXiv:2211.17192, §2.3); the verify pass then samples one more token.
            const int drafts = r.sched - 1;
            const auto& acc = cfg_.speculative->acceptance();
            int accepted = 0;
            while (accepted < drafts &&
                   spec_rng_.uniform() < acc[static_cast<std::size_t>(accepted)]) {
                ++accepted;
            }
            advance = std::min(accepted + 1, r.output - r.generated);
            metrics_.speculative_verify(drafts, accepted);
            r.computed += advance;
        } else {
            r.computed += r.sched;
        }
        r.sched = 0;
        if (r.computed < r.num_tokens()) {
            continue; // a prefill chunk that did not reach the end of the prompt
        }
        // The step that computes the last pending token samples the next one (speculative: the
        // accepted drafts and one more, streamed together: their gaps after the first are 0).
        r.generated += advance;
        out_tokens += advance;
        if (advance > 1) {
            metrics_.itl(r.cls, 0, advance - 1);
        }
        if (r.first_token < 0) {
            r.first_token = now;
        } else if (r.last_token == step_start) {
            ++same_gap_[static_cast<std::size_t>(r.cls)];
        } else {
            metrics_.itl(r.cls, now - r.last_token, 1);
        }
        r.last_token = now;
        if (r.generated >= r.output) {
            finished_.push_back(slot);
        }
    }
    m.seqs.clear();
    mb_busy_[mb] = false;
    --in_flight_;
    for (std::size_t c = 0; c < same_gap_.size(); ++c) {
        if (same_gap_[c] > 0) {
            metrics_.itl(static_cast<int>(c), gap, same_gap_[c]);
            same_gap_[c] = 0;
        }
    }
    metrics_.tokens(now, prefill_tokens, out_tokens);
    in_end_ = true; // keeps enqueue() from scheduling a kick; the next step starts right here
    if (!finished_.empty()) {
        for (const std::uint32_t slot : finished_) {
            Request& r = pool_[slot];
            free_blocks(r);
            r.state = ReqState::Done;
        }
        std::erase_if(running_, [&](std::uint32_t s) { return pool_[s].state == ReqState::Done; });
        // Tell the cluster after the running set is consistent; it may enqueue more here.
        for (const std::uint32_t slot : finished_) {
            --assigned_;
            host_.request_done(cfg_.id, slot);
        }
    }
    in_end_ = false;
    if (can_issue()) {
        start_step();
    }
}

} // namespace gpuplan::sim::detail
