// vLLM v1's continuous batching: Scheduler.schedule() in vllm/v1/core/sched/scheduler.py
// (docs/engines.md §2.2), with vLLM v0's swap preemption (swapped sequences resume before new
// requests are admitted).
#include "sim/detail/scheduler_policy.hpp"

#include "sim/detail/lora_cache.hpp"

#include <algorithm>
#include <cassert>

namespace gpuplan::sim::detail {
namespace {

class ContinuousBatching final : public SchedulerPolicy {
  public:
    void form(SchedulerState& s) override;
    [[nodiscard]] bool can_schedule(int prompt, int /*output*/,
                                    const ReplicaConfig& config) const override {
        // Without chunked prefill a whole prompt must fit one step's token budget.
        return config.chunked_prefill || prompt <= config.max_num_batched_tokens;
    }
    [[nodiscard]] bool pipelines() const noexcept override { return true; }
    [[nodiscard]] bool uses_prefix_cache() const noexcept override { return true; }
    [[nodiscard]] const char* name() const noexcept override { return "continuous"; }

  private:
    static void schedule_running(SchedulerState& s);
    static void schedule_prefills(SchedulerState& s);
    static void admit_swapped(SchedulerState& s);
    static void admit_waiting(SchedulerState& s);
    [[nodiscard]] static std::size_t victim_index(const SchedulerState& s);
};

// The preemption victim (vLLM: FCFS pops the last running request; priority takes the
// max by (priority, arrival)). Sequences in flight in another micro-batch (pipeline
// parallelism) are never victims; the sequence that needs the blocks is not in flight, so
// there is always one.
std::size_t ContinuousBatching::victim_index(const SchedulerState& s) {
    const std::vector<std::uint32_t>& running = s.running();
    if (s.config().scheduler.policy == model::SchedulingPolicy::Fcfs) {
        std::size_t i = running.size() - 1; // the most recently admitted
        while (i > 0 && s.request(running[i]).in_flight) {
            --i;
        }
        return i;
    }
    std::size_t best = running.size();
    for (std::size_t i = 0; i < running.size(); ++i) {
        const Request& a = s.request(running[i]);
        if (a.in_flight) {
            continue;
        }
        if (best == running.size()) {
            best = i;
            continue;
        }
        const Request& b = s.request(running[best]);
        // Later in (priority, arrival) order, ties to the later position.
        if (!(b.priority > a.priority || (b.priority == a.priority && b.id > a.id))) {
            best = i;
        }
    }
    return best;
}

// 1. Running requests: decodes first, then unfinished prefills, in admission order; a
//    sequence that cannot get its blocks preempts victims until it can, or preempts itself
//    (then no more running requests are scheduled this step, as in vLLM).
void ContinuousBatching::schedule_running(SchedulerState& s) {
    const std::vector<std::uint32_t>& running = s.running();
    bool stop = false;
    bool prefills = false; // an unfinished prefill sits in the running set
    for (int pass = 0; pass < 2 && !stop && (pass == 0 || prefills); ++pass) {
        for (std::size_t i = 0; i < running.size(); ++i) {
            if (s.budget() <= 0) {
                break;
            }
            const std::uint32_t slot = running[i];
            Request& r = s.request(slot);
            if (r.in_batch) {
                continue;
            }
            const bool decode = SchedulerState::is_decode(r);
            if ((pass == 0) != decode) {
                prefills = prefills || !decode;
                continue;
            }
            // A speculative decode verifies k + 1 tokens: it needs their KV slots and budget.
            const int n =
                decode ? s.decode_tokens(r) : std::min(r.num_tokens() - r.computed, s.budget());
            bool self = false;
            while (!s.grow(r, r.computed + n)) {
                const std::size_t v = victim_index(s);
                self = running[v] == slot;
                s.preempt(v);
                if (self) {
                    break;
                }
                if (v < i) {
                    --i; // the list shifted left under us
                }
            }
            if (self) {
                stop = true;
                break;
            }
            s.schedule(slot, r, std::min(n, s.budget()));
        }
    }
}

// 1, with the running decodes scheduled as a cohort (SchedulerState::schedule_cohort): the second
//    pass over the rest of the running set, in running order. No allocation fails here (the
//    cohort checked that the free blocks hold every prompt left), so nothing is preempted.
void ContinuousBatching::schedule_prefills(SchedulerState& s) {
    for (const std::uint32_t slot : s.outside_cohort()) {
        if (s.budget() <= 0) {
            break;
        }
        Request& r = s.request(slot);
        assert(!SchedulerState::is_decode(r));
        const int n = std::min(r.num_tokens() - r.computed, s.budget());
        const bool grown = s.grow(r, r.computed + n);
        assert(grown);
        (void)grown;
        s.schedule(slot, r, n);
    }
}

// 2. Swapped requests come back before new ones (vLLM v0), while their blocks fit above the
//    watermark.
void ContinuousBatching::admit_swapped(SchedulerState& s) {
    const std::int64_t wm = s.watermark_blocks();
    const int max_seqs = s.config().max_num_seqs;
    while (s.budget() > 0 && static_cast<int>(s.running().size()) < max_seqs) {
        const std::uint32_t slot = s.front_swapped();
        if (slot == ~0u) {
            break;
        }
        const Request& r = s.request(slot);
        const int n =
            SchedulerState::is_decode(r) ? 1 : std::min(r.num_tokens() - r.computed, s.budget());
        if (s.blocks_for(r.computed + n) > s.blocks().free() - wm) {
            break;
        }
        s.swap_in(slot, n);
    }
}

// 3. Waiting requests, head of the queue first, each with its prefix-cache hit; a request that
//    cannot get its blocks blocks the queue (vLLM: waiting requests never preempt), and
//    without chunked prefill so does one whose prompt exceeds the budget left.
void ContinuousBatching::admit_waiting(SchedulerState& s) {
    const std::int64_t wm = s.watermark_blocks();
    const int max_seqs = s.config().max_num_seqs;
    const bool chunked = s.config().chunked_prefill;
    while (s.budget() > 0 && static_cast<int>(s.running().size()) < max_seqs) {
        std::uint32_t slot = s.front_waiting();
        if (slot != ~0u && s.config().lora != nullptr && lora_blocked(s, s.request(slot))) {
            slot = lora_next_admissible(s); // vLLM skips it for max_loras (lora_cache.hpp)
        }
        if (slot == ~0u) {
            break;
        }
        const Request& r = s.request(slot);
        const PrefixHit hit = s.lookup_prefix(r);
        const int computed0 = r.computed + hit.tokens;
        int n = r.num_tokens() - computed0;
        if (!chunked && n > s.budget()) {
            break;
        }
        n = std::min(n, s.budget());
        const std::int64_t need = s.blocks_for(computed0 + n) - hit.blocks;
        if (need + hit.free_blocks > s.blocks().free() - wm) {
            break;
        }
        s.admit(slot, hit, n, computed0 + n);
    }
}

void ContinuousBatching::form(SchedulerState& s) {
    if (s.schedule_cohort()) {
        schedule_prefills(s);
    } else {
        schedule_running(s);
        if (s.preempted()) {
            return; // vLLM admits nothing in a step that preempted
        }
    }
    admit_swapped(s);
    admit_waiting(s);
}

} // namespace

std::unique_ptr<SchedulerPolicy> make_continuous_batching() {
    return std::make_unique<ContinuousBatching>();
}

} // namespace gpuplan::sim::detail
