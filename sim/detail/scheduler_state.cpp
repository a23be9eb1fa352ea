#include "sim/detail/scheduler_state.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>

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

// The priority queue's order: a after b (vLLM orders by (priority, arrival)).
bool later(int pa, std::uint64_t ia, int pb, std::uint64_t ib) {
    return pa > pb || (pa == pb && ia > ib);
}

} // namespace

SchedulerState::SchedulerState(RequestPool& pool, Metrics& metrics, const ReplicaConfig& config,
                               bool prefix_cache)
    : pool_(pool), metrics_(metrics), cfg_(config),
      blocks_(config.kv_blocks, config.prefix_caching && prefix_cache) {
    if (cfg_.block_bytes > 0) {
        // Clamped so a huge swap space cannot overflow the block count (1e18 blocks is unlimited).
        swap_capacity_ = static_cast<std::int64_t>(
            std::min(cfg_.scheduler.swap_space.si() / cfg_.block_bytes, 1e18));
    }
    if (cfg_.kv_offload != nullptr && blocks_.caching() && cfg_.block_bytes > 0) {
        const auto tier = [&](const model::KvTier& t) {
            return KvTierCache::Tier{
                static_cast<std::int64_t>(std::min(t.capacity.si() / cfg_.block_bytes, 1e15)),
                t.bandwidth.si()};
        };
        tiers_ =
            std::make_unique<KvTierCache>(tier(cfg_.kv_offload->host), tier(cfg_.kv_offload->nvme),
                                          cfg_.block_bytes, metrics_.kv_offload());
        blocks_.set_lower_tiers(tiers_.get());
    }
    running_.reserve(static_cast<std::size_t>(cfg_.max_num_seqs));
    batch_.reserve(static_cast<std::size_t>(cfg_.max_num_seqs));
    others_.reserve(static_cast<std::size_t>(cfg_.max_num_seqs));
    member_cls_.assign(static_cast<std::size_t>(std::max(1, cfg_.classes)), 0);
    phases_.resize(static_cast<std::size_t>(std::max(1, cfg_.block_size)));
    phase_allocs_.assign(phases_.size(), 0);
}

std::int64_t SchedulerState::watermark_blocks() const {
    return static_cast<std::int64_t>(
        std::ceil(cfg_.scheduler.watermark * static_cast<double>(blocks_.total())));
}

void SchedulerState::push_waiting(std::uint32_t slot, bool front) {
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
    metrics_.queued(now_, +1);
}

std::uint32_t SchedulerState::front_waiting() {
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

void SchedulerState::pop_waiting() {
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
    metrics_.queued(now_, -1);
}

void SchedulerState::take_waiting(std::uint32_t slot) {
    if (cfg_.scheduler.policy == model::SchedulingPolicy::Priority || front_waiting() == slot) {
        pop_waiting();
        return;
    }
    // Under FCFS a policy may admit past the head (SGLang's lpm): drop its entry where it is.
    const auto it = std::find(waiting_.begin(), waiting_.end(), pool_.handle(slot));
    assert(it != waiting_.end());
    waiting_.erase(it);
    --waiting_live_;
    metrics_.queued(now_, -1);
}

void SchedulerState::waiting_slots(std::vector<std::uint32_t>& out) const {
    out.clear();
    const auto add = [&](std::uint64_t h) {
        const std::uint32_t s = pool_.resolve(h);
        if (s != ~0u && pool_[s].state == ReqState::Waiting && pool_[s].replica == cfg_.id) {
            out.push_back(s);
        }
    };
    for (const Queued& q : waiting_heap_) {
        add(q.handle);
    }
    for (const std::uint64_t h : waiting_) {
        add(h);
    }
}

void SchedulerState::forget_waiting(Tick now) {
    --waiting_live_;
    metrics_.queued(now, -1);
}

std::uint32_t SchedulerState::front_swapped() {
    while (!swapped_.empty()) {
        const std::uint32_t slot = pool_.resolve(swapped_.front());
        if (slot != ~0u && pool_[slot].state == ReqState::Swapped) {
            return slot;
        }
        swapped_.pop_front();
    }
    return ~0u;
}

std::uint64_t SchedulerState::block_hash(const Request& r, int index, std::uint64_t parent) const {
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

int SchedulerState::lookup_limit(const Request& r) const {
    const int max_blocks = (r.num_tokens() - 1) / cfg_.block_size;
    if (r.session == kNoSession && !r.own_hashed) {
        // A block from index shared_len / B on covers some of the request's own tokens, so its
        // hash holds the request's stream id (block_hash): only this request could have put it
        // in the cache, and it has not (hash_blocks sets own_hashed). Its lookup would miss.
        return std::min(max_blocks, r.shared_len / cfg_.block_size);
    }
    return max_blocks;
}

int SchedulerState::cached_prefix_tokens(const Request& r) const {
    // lookup_prefix without touching anything.
    if (!blocks_.caching()) {
        return 0;
    }
    const int max_blocks = lookup_limit(r);
    std::uint64_t parent = kRootHash;
    int b = 0;
    for (; b < max_blocks; ++b) {
        const std::uint64_t h = block_hash(r, b, parent);
        if (blocks_.lookup(h) < 0) {
            break;
        }
        parent = h;
    }
    if (tiers_ != nullptr) {
        for (; b < max_blocks; ++b) {
            const std::uint64_t h = block_hash(r, b, parent);
            if (tiers_->find(h) == KvTierCache::Where::None) {
                break;
            }
            parent = h;
        }
    }
    return b * cfg_.block_size;
}

int SchedulerState::lookup_lower(const Request& r, int b, int max_blocks, std::uint64_t parent) {
    lower_hits_.clear();
    for (; b < max_blocks; ++b) {
        const std::uint64_t h = block_hash(r, b, parent);
        if (tiers_->find(h) == KvTierCache::Where::None) {
            break;
        }
        lower_hits_.push_back(h);
        parent = h;
    }
    return static_cast<int>(lower_hits_.size());
}

void SchedulerState::load_lower(const Request& r, int blocks) {
    assert(static_cast<int>(lower_hits_.size()) == blocks);
    KvOffloadResult& st = metrics_.kv_offload();
    TierTally& tally = tier_tally_;
    const double before = tally.step_load;
    std::int64_t host = 0;
    for (const std::uint64_t h : lower_hits_) {
        const KvTierCache::Where w = tiers_->find(h);
        const double t = tiers_->load(h);
        swap_time_ += t;
        tally.step_load += t;
        host += w == KvTierCache::Where::Host ? 1 : 0;
        if (!r.started) {
            (w == KvTierCache::Where::Host ? st.host_hit_tokens : st.nvme_hit_tokens) +=
                cfg_.block_size;
            (w == KvTierCache::Where::Host ? tally.host_hit : tally.nvme_hit) += cfg_.block_size;
        }
    }
    ++st.loading_requests;
    const std::int64_t nvme = static_cast<std::int64_t>(lower_hits_.size()) - host;
    tally.step_host += host;
    tally.step_nvme += nvme;
    tally.changed = true;
    if (const auto& hook = metrics_.features().kv_tier_load) {
        const Seconds start = to_seconds(now_) + Seconds(before);
        hook(KvTierLoadRecord{r.id, cfg_.id, start, host, nvme,
                              static_cast<double>(host + nvme) * cfg_.block_bytes,
                              Seconds(tally.step_load - before)});
    }
}

void SchedulerState::report_tiers_now() {
    TierTally& t = tier_tally_;
    if (t.changed) {
        if (const auto& hook = metrics_.features().kv_tier_step) {
            hook(KvTierStepRecord{cfg_.id, to_seconds(now_), t.looked_up, t.gpu_hit, t.host_hit,
                                  t.nvme_hit, t.step_host, t.step_nvme, Seconds(t.step_load)});
        }
    }
    t.step_host = t.step_nvme = 0;
    t.step_load = 0;
    t.changed = false;
}

PrefixHit SchedulerState::lookup_prefix(const Request& r) {
    hits_.clear();
    PrefixHit hit;
    hit.hash = kRootHash;
    if (blocks_.caching() && r.computed == 0) {
        const int max_blocks = lookup_limit(r);
        std::uint64_t parent = kRootHash;
        // The full blocks of a shared prefix hash alike for every request of it: while nothing
        // is evicted, the pool's chain memo gives their lookups' answers at once.
        const int same =
            r.shared_id != 0 ? std::min(max_blocks, r.shared_len / cfg_.block_size) : 0;
        int b = same > 0 ? static_cast<int>(blocks_.recall_chain(
                               r.shared_id, static_cast<std::size_t>(same), hits_, parent))
                         : 0;
        for (const std::int32_t blk : hits_) {
            hit.free_blocks += blocks_.ref_count(blk) == 0 ? 1 : 0;
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
            hit.free_blocks += blocks_.ref_count(blk) == 0 ? 1 : 0;
            parent = h;
        }
        hit.hash = parent;
        hit.blocks = static_cast<int>(hits_.size());
        if (tiers_ != nullptr) {
            hit.lower_blocks = lookup_lower(r, b, max_blocks, parent);
        }
        hit.tokens = (hit.blocks + hit.lower_blocks) * cfg_.block_size;
    }
    return hit;
}

void SchedulerState::hash_blocks(Request& r, int upto_tokens, bool all) {
    int full = std::min(upto_tokens, r.num_tokens()) / cfg_.block_size;
    if (!all && r.session == kNoSession) {
        // Blocks past the shared prefix hold this request's own tokens: no other request can
        // ever hit them, so they are hashed only when the request is preempted (it may hit
        // them itself on resume). Lookups see exactly what vLLM's cache-everything would give;
        // the hash table just stays small.
        full = std::min(full, r.shared_len / cfg_.block_size);
    }
    if (all && full > r.hashed_blocks) {
        r.own_hashed = true;
    }
    for (int i = r.hashed_blocks; i < full; ++i) {
        const std::uint64_t h = block_hash(r, i, r.hashed_blocks == 0 ? kRootHash : r.last_hash);
        blocks_.insert(h, r.blocks[static_cast<std::size_t>(i)]);
        r.last_hash = h;
        r.hashed_blocks = i + 1;
    }
}

bool SchedulerState::grow_blocks(Request& r, int tokens) {
    const int need = blocks_for(tokens) - r.blocks_held;
    if (need <= 0) {
        return true;
    }
    if (need > blocks_.free()) {
        return false;
    }
    if (blocks_.caching()) {
        blocks_.allocate_run(need, r.blocks);
    } else {
        for (int i = 0; i < need; ++i) {
            (void)blocks_.allocate();
        }
    }
    r.blocks_held += need;
    return true;
}

void SchedulerState::free_blocks(Request& r) {
    if (blocks_.caching()) {
        // Tail first, so the deepest blocks are evicted first (vLLM's free order). The blocks
        // past the hashed ones were allocated for this sequence and never hashed, so no lookup
        // found them: one reference each, no hash; they go back as a run.
        const std::size_t own =
            std::min(static_cast<std::size_t>(r.hashed_blocks), r.blocks.size());
        blocks_.release_unshared(r.blocks.data() + own, r.blocks.data() + r.blocks.size());
        blocks_.release_run(r.blocks.data(), r.blocks.data() + own);
        r.blocks.clear();
    } else {
        blocks_.release_count(r.blocks_held);
    }
    r.blocks_held = 0;
    r.hashed_blocks = 0;
    r.last_hash = 0;
}

void SchedulerState::preempt(std::size_t index, Requeue where) {
    assert(!formed_); // a formed cohort's step never preempts (schedule_cohort declines)
    const std::uint32_t slot = running_[index];
    running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
    Request& r = pool_[slot];
    if (r.in_batch) {
        budget_ += r.sched; // give back the tokens it was scheduled this step
        if (is_decode(r) && cfg_.speculative == nullptr) {
            count_decode(r, -1);
        }
        ++unscheduled_;
        r.sched = 0;
        r.in_batch = false;
    }
    hash_full_blocks(r, r.computed, true); // its own blocks stay findable for its resume
    ++r.preemptions;
    ++preempted_count_;
    preempted_ = true;
    metrics_.preemption(cfg_.id);
    const bool swap = where == Requeue::SwapOrFront &&
                      cfg_.scheduler.preemption_mode == model::PreemptionMode::Swap &&
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
    push_waiting(slot, where != Requeue::Back);
}

void SchedulerState::swap_in(std::uint32_t slot, int tokens) {
    Request& r = pool_[slot];
    swapped_.pop_front();
    swap_time_ += r.swapped_blocks * cfg_.block_bytes / cfg_.swap_bandwidth;
    swap_used_ -= r.swapped_blocks;
    r.swapped_blocks = 0;
    (void)grow(r, r.computed + tokens);
    hash_full_blocks(r, r.computed);
    r.state = ReqState::Running;
    r.run_seq = ++run_seq_;
    running_.push_back(slot);
    if (formed_) {
        outside_.push_back(slot);
    }
    schedule(slot, r, tokens);
}

void SchedulerState::admit(std::uint32_t slot, const PrefixHit& hit, int tokens,
                           int reserve_tokens) {
    Request& r = pool_[slot];
    take_waiting(slot);
    if (blocks_.caching()) {
        assert(hit.blocks == 0 || static_cast<int>(hits_.size()) == hit.blocks);
        for (int i = 0; i < hit.blocks; ++i) {
            const std::int32_t blk = hits_[static_cast<std::size_t>(i)];
            blocks_.touch(blk);
            r.blocks.push_back(blk);
        }
        r.blocks_held = hit.blocks;
        r.hashed_blocks = hit.blocks;
        r.last_hash = hit.blocks > 0 ? hit.hash : kRootHash;
        if (hit.lower_blocks > 0) {
            load_lower(r, hit.lower_blocks); // before grow() can evict them further down
        }
    }
    r.computed += hit.tokens;
    (void)grow(r, reserve_tokens);
    if (r.transferred && r.first_token < 0) {
        // Disaggregation: the token sampled by the prefill reaches the client once the decode
        // replica holds the KV and runs the sequence.
        r.first_token = now_;
        r.last_token = now_;
    }
    if (!r.started) {
        r.started = true;
        r.first_scheduled = now_;
        r.cached_tokens = hit.tokens;
        if (blocks_.caching()) {
            metrics_.prefix_lookup(r.num_tokens(), hit.tokens);
            if (tiers_ != nullptr) {
                KvOffloadResult& st = metrics_.kv_offload();
                st.looked_up_tokens += r.num_tokens();
                st.gpu_hit_tokens += static_cast<std::int64_t>(hit.blocks) * cfg_.block_size;
                tier_tally_.looked_up += r.num_tokens();
                tier_tally_.gpu_hit += static_cast<std::int64_t>(hit.blocks) * cfg_.block_size;
                tier_tally_.changed = true;
            }
        }
    }
    r.state = ReqState::Running;
    r.run_seq = ++run_seq_;
    running_.push_back(slot);
    if (formed_) {
        outside_.push_back(slot);
    }
    schedule(slot, r, tokens);
}

void SchedulerState::drop_done() {
    std::erase_if(running_, [&](std::uint32_t s) { return pool_[s].state == ReqState::Done; });
}

namespace {

// Starts loading the block table of a request that has just finished: the step's end releases
// its blocks a little later, reading the whole table, which was last touched when its last
// block was allocated and is usually out of cache by then.
void prefetch_block_table(const Request& r) {
    constexpr std::size_t kLine = 64; // bytes per cache line
    const auto* table = reinterpret_cast<const char*>(r.blocks.data());
    const std::size_t bytes = r.blocks.size() * sizeof(std::int32_t);
    for (std::size_t at = 0; at < bytes; at += kLine) {
        __builtin_prefetch(table + at);
    }
}

// Removes the slots of `done` (distinct) from `slots`, keeping the order. Compares slot numbers
// only (the requests are not read again); the slots before the first one found are not moved,
// and once every one of `done` is found the rest moves as one block without comparisons.
void erase_slots(std::vector<std::uint32_t>& slots, const std::vector<std::uint32_t>& done) {
    const auto is_done = [&](std::uint32_t s) {
        return std::find(done.begin(), done.end(), s) != done.end();
    };
    auto out = std::find_if(slots.begin(), slots.end(), is_done);
    auto in = out;
    for (std::size_t left = done.size(); in != slots.end() && left > 0; ++in) {
        if (is_done(*in)) {
            --left;
        } else {
            *out++ = *in;
        }
    }
    slots.erase(std::move(in, slots.end(), out), slots.end());
}

} // namespace

void SchedulerState::drop_done(const std::vector<std::uint32_t>& done) {
    erase_slots(running_, done);
    if (formed_) {
        erase_slots(outside_, done);
    }
}

void SchedulerState::add_member(std::uint32_t slot, Request& r) {
    r.in_cohort = true;
    r.cohort_step = cstep_;
    ++members_;
    member_ctx_ += r.computed + 1;
    ++member_cls_[static_cast<std::size_t>(r.cls)];
    // Its phase lists, kept in running order (a prefill that finishes late joins behind
    // members admitted after it).
    const auto insert = [&](std::size_t p, bool alloc, bool hash) {
        std::vector<PhaseEntry>& v = phases_[p];
        auto it = v.end();
        while (it != v.begin() && std::prev(it)->seq > r.run_seq) {
            --it;
        }
        if (it != v.begin() && std::prev(it)->slot == slot) {
            std::prev(it)->alloc = std::prev(it)->alloc || alloc; // both in one phase
            std::prev(it)->hash = std::prev(it)->hash || hash;
        } else {
            v.insert(it, PhaseEntry{r.run_seq, slot, alloc, hash});
        }
        phase_allocs_[p] += alloc ? 1 : 0;
    };
    insert(alloc_phase(r), true, false);
    if (hashes_decodes(r)) {
        if (r.session == kNoSession) {
            redo_ = true; // a shared prefix still unhashed while decoding: not periodic
        }
        insert(hash_phase(r), false, true);
    }
    // Its last token comes at the end of the step where generated reaches output.
    done_events_.push_back(CohortEvent{cstep_ + (r.output - r.generated - 1), r.run_seq, slot});
    std::push_heap(done_events_.begin(), done_events_.end(), EventAfter{});
}

void SchedulerState::remove_phases(std::uint32_t slot, const Request& r) {
    const auto remove = [&](std::size_t p) {
        std::vector<PhaseEntry>& v = phases_[p];
        const auto it =
            std::find_if(v.begin(), v.end(), [&](const PhaseEntry& e) { return e.slot == slot; });
        if (it != v.end()) {
            phase_allocs_[p] -= it->alloc ? 1 : 0;
            v.erase(it);
        }
    };
    remove(alloc_phase(r));
    if (blocks_.caching() && r.session != kNoSession) {
        remove(hash_phase(r));
    }
}

bool SchedulerState::build_cohort() {
    // Every running decode joins, so the cohort is exactly the walk's first pass. A decode whose
    // last token was not at this step's start counts its gap alone: the walk handles the step.
    for (const std::uint32_t slot : running_) {
        const Request& r = pool_[slot];
        if (r.in_batch || (is_decode(r) && (r.last_token != now_ || r.first_token < 0))) {
            return false;
        }
    }
    formed_ = true;
    clear_cohort();
    cohort_end_ = now_;
    for (const std::uint32_t slot : running_) {
        Request& r = pool_[slot];
        if (is_decode(r)) {
            add_member(slot, r);
        } else {
            outside_.push_back(slot);
        }
    }
    return true;
}

bool SchedulerState::schedule_cohort() {
    if (!cohort_enabled_ || preempted_count_ > 0) {
        dissolve_cohort();
        return false;
    }
    if (formed_ && ((members_ > 0 && now_ != cohort_end_) || redo_)) {
        dissolve_cohort(); // a gap between steps: the members' gaps are not this step's
    }
    if (!formed_ && !build_cohort()) {
        return false;
    }
    if (members_ > budget_ || redo_) {
        dissolve_cohort();
        return false;
    }
    // The members of this step's phase may allocate a block each; the prefills after them
    // could need at most their whole prompts. While all of it fits, no allocation of this step
    // fails, so nothing is preempted.
    const auto phase = static_cast<std::size_t>(cstep_ % static_cast<std::int64_t>(phases_.size()));
    std::int64_t need = phase_allocs_[phase];
    for (const std::uint32_t slot : outside_) {
        const Request& r = pool_[slot];
        need += std::max(0, blocks_for(r.num_tokens()) - r.blocks_held);
    }
    if (need > blocks_.free()) {
        dissolve_cohort();
        return false;
    }
    // What the walk's grow() and hash_full_blocks() do for them, in running order.
    for (const PhaseEntry& e : phases_[phase]) {
        Request& r = pool_[e.slot];
        const std::int64_t c = r.computed + (cstep_ - r.cohort_step);
        if (e.alloc && c + 1 > static_cast<std::int64_t>(r.blocks_held) * cfg_.block_size) {
            const std::int32_t blk = blocks_.allocate();
            if (blocks_.caching()) {
                r.blocks.push_back(blk);
            }
            ++r.blocks_held;
        }
        if (e.hash) {
            settle(r);
            hash_full_blocks(r, r.computed + 1);
        }
    }
    budget_ -= static_cast<int>(members_);
    decodes_.n += members_;
    decodes_.context += member_ctx_; // no sliding window: Σ min(c, 0) is 0
    scheduled_ = members_;
    return true;
}

void SchedulerState::end_cohort_step(Tick now, std::vector<std::uint32_t>& finished,
                                     std::vector<std::int64_t>& same_gap,
                                     std::int64_t& out_tokens) {
    // Every member emits a token; its last one was at this step's start.
    for (std::size_t c = 0; c < member_cls_.size(); ++c) {
        same_gap[c] += member_cls_[c];
    }
    out_tokens += members_;
    const std::size_t first = finished.size();
    while (!done_events_.empty() && done_events_.front().step <= cstep_) {
        const CohortEvent e = done_events_.front();
        std::pop_heap(done_events_.begin(), done_events_.end(), EventAfter{});
        done_events_.pop_back();
        Request& r = pool_[e.slot];
        if (!is_member(r, e)) {
            continue;
        }
        member_ctx_ -= r.computed + (cstep_ - r.cohort_step) + 1;
        remove_phases(e.slot, r);
        --members_;
        --member_cls_[static_cast<std::size_t>(r.cls)];
        r.in_cohort = false;
        finished.push_back(e.slot);
        prefetch_block_table(r);
    }
    member_ctx_ += members_; // each remaining member's context grew by one
    ++cstep_;
    cohort_end_ = now;
    for (std::size_t i = first; i < finished.size(); ++i) {
        settle(pool_[finished[i]]);
    }
}

void SchedulerState::join_cohort(std::uint32_t slot, Request& r) {
    const auto it = std::find(outside_.rbegin(), outside_.rend(), slot);
    assert(it != outside_.rend());
    outside_.erase(std::next(it).base());
    add_member(slot, r);
}

void SchedulerState::dissolve_cohort() {
    if (!formed_) {
        return;
    }
    for (const std::uint32_t slot : running_) {
        Request& r = pool_[slot];
        if (r.in_cohort) {
            settle(r);
            r.in_cohort = false;
        }
    }
    formed_ = false;
    clear_cohort();
}

void SchedulerState::clear_cohort() {
    members_ = 0;
    member_ctx_ = 0;
    std::fill(member_cls_.begin(), member_cls_.end(), 0);
    clear_phases();
    done_events_.clear();
    outside_.clear();
    redo_ = false;
}

void SchedulerState::clear_phases() {
    for (std::vector<PhaseEntry>& v : phases_) {
        v.clear();
    }
    std::fill(phase_allocs_.begin(), phase_allocs_.end(), 0);
}

} // namespace gpuplan::sim::detail
