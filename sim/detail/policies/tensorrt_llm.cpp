// TensorRT-LLM's in-flight batching: the capacity scheduler decides which requests hold KV
// blocks, the micro-batch scheduler how many tokens each gets this iteration
// (NVIDIA/TensorRT-LLM@cf6abc45df6e3470d8c378366896882e1f43e60c:
// cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp,
// @b8b7b782622c5dc57307f42ea96628f66b34f922:
// cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp; docs/engines.md §3.3).
//
// Capacity scheduler:
// - GUARANTEED_NO_EVICT (TensorRT-LLM's default): a request is admitted only if the blocks of
//   its whole lifetime (prompt + max new tokens, less reused blocks) fit the free pool; the
//   first that does not fit stops admission (FCFS); a running request keeps its reservation
//   to the end, so nothing is ever evicted.
// - MAX_UTILIZATION: admits on the blocks of the step it is scheduled for; when a running
//   request cannot get its next block, the most recently started request is paused (its blocks
//   freed, its context recomputed when it is scheduled again), and nothing new starts that step.
// Micro-batch scheduler (FIRST_COME_FIRST_SERVED context chunking): generation tokens first,
// then context requests in order within max_num_tokens; without chunked context a prompt must
// fit the tokens left whole, with it each chunk that is not the prompt's rest is floored to a
// multiple of tokens_per_block (0: the request waits).
//
// Approximations: the reservation is held as allocated blocks (TensorRT-LLM counts it without
// allocating; admission sees the same free count); a request is admitted only when it gets
// context tokens in the same step (TensorRT-LLM may admit one that waits for the next
// micro-batch); MAX_UTILIZATION's two-step look-ahead with pipeline parallelism and the
// reuse-aware skip of a context whose next block another request is producing are not
// modelled.
#include "sim/detail/scheduler_policy.hpp"

namespace gpuplan::sim::detail {
namespace {

class TensorRtLlm final : public SchedulerPolicy {
  public:
    explicit TensorRtLlm(model::CapacityScheduler capacity) : capacity_(capacity) {}
    void form(SchedulerState& s) override;
    [[nodiscard]] bool can_schedule(int prompt, int /*output*/,
                                    const ReplicaConfig& config) const override {
        // Without chunked context a prompt longer than max_num_tokens is never scheduled.
        return config.chunked_prefill || prompt <= config.max_num_batched_tokens;
    }
    [[nodiscard]] bool pipelines() const noexcept override { return true; }
    [[nodiscard]] bool uses_prefix_cache() const noexcept override { return true; }
    [[nodiscard]] const char* name() const noexcept override {
        return no_evict() ? "tensorrt-llm-guaranteed-no-evict" : "tensorrt-llm-max-utilization";
    }

  private:
    [[nodiscard]] bool no_evict() const noexcept {
        return capacity_ == model::CapacityScheduler::GuaranteedNoEvict;
    }
    [[nodiscard]] static int context_tokens(const SchedulerState& s, int remaining);
    [[nodiscard]] static std::size_t pause_index(const SchedulerState& s);
    static bool run(SchedulerState& s, std::size_t& i, int tokens);
    static void schedule_running(SchedulerState& s);
    void admit_waiting(SchedulerState& s) const;

    model::CapacityScheduler capacity_;
};

// The context tokens a request with `remaining` prompt tokens gets from the budget left: the
// whole rest or, with chunked context, a chunk floored to whole blocks; 0 when it must wait.
int TensorRtLlm::context_tokens(const SchedulerState& s, int remaining) {
    if (remaining <= s.budget()) {
        return remaining;
    }
    if (!s.config().chunked_prefill) {
        return 0;
    }
    const int unit = s.config().block_size;
    return s.budget() / unit * unit;
}

// MAX_UTILIZATION's victim: the most recently started request not in flight in another
// micro-batch (the request that needs the blocks is not in flight, so there is one).
std::size_t TensorRtLlm::pause_index(const SchedulerState& s) {
    const std::vector<std::uint32_t>& running = s.running();
    std::size_t i = running.size() - 1;
    while (i > 0 && s.request(running[i]).in_flight) {
        --i;
    }
    return i;
}

// Schedules `tokens` of running()[i], pausing the newest requests until its blocks fit (never
// under GUARANTEED_NO_EVICT: its blocks were reserved at admission). False when it paused
// itself. `i` follows the request as the list shifts.
bool TensorRtLlm::run(SchedulerState& s, std::size_t& i, int tokens) {
    const std::vector<std::uint32_t>& running = s.running();
    const std::uint32_t slot = running[i];
    Request& r = s.request(slot);
    while (!s.grow(r, r.computed + tokens)) {
        const std::size_t v = pause_index(s);
        const bool self = running[v] == slot;
        s.preempt(v, Requeue::Front); // TensorRT-LLM recomputes a paused request's context
        if (self) {
            return false;
        }
        if (v < i) {
            --i;
        }
    }
    s.schedule(slot, r, tokens);
    return true;
}

// Running requests: every generation request's token(s) first, then the unfinished contexts'
// next chunks, both in admission order, until max_num_tokens is spent.
void TensorRtLlm::schedule_running(SchedulerState& s) {
    const std::vector<std::uint32_t>& running = s.running();
    for (int pass = 0; pass < 2; ++pass) {
        for (std::size_t i = 0; i < running.size(); ++i) {
            Request& r = s.request(running[i]);
            const bool decode = SchedulerState::is_decode(r);
            if (r.in_batch || (pass == 0) != decode) {
                continue;
            }
            const int n =
                decode ? s.decode_tokens(r) : context_tokens(s, r.num_tokens() - r.computed);
            if (n <= 0 || n > s.budget() || !run(s, i, n)) {
                return; // the token budget is spent, or a request paused itself
            }
        }
    }
}

// Waiting requests in order while one fits: its context tokens in this step's budget, and its
// blocks (the whole lifetime under GUARANTEED_NO_EVICT, this step's under MAX_UTILIZATION) in
// the free pool less the cache hits it takes out of it.
void TensorRtLlm::admit_waiting(SchedulerState& s) const {
    const int max_seqs = s.config().max_num_seqs;
    while (s.budget() > 0 && static_cast<int>(s.running().size()) < max_seqs) {
        const std::uint32_t slot = s.front_waiting();
        if (slot == ~0u) {
            return;
        }
        const Request& r = s.request(slot);
        const PrefixHit hit = s.lookup_prefix(r);
        const int computed0 = r.computed + hit.tokens;
        const int n = context_tokens(s, r.num_tokens() - computed0);
        const int reserve = no_evict() ? r.prompt + r.output : computed0 + n;
        const std::int64_t need = s.blocks_for(reserve) - hit.blocks + hit.free_blocks;
        if (n <= 0 || need > s.blocks().free()) {
            return;
        }
        s.admit(slot, hit, n, reserve);
    }
}

void TensorRtLlm::form(SchedulerState& s) {
    schedule_running(s);
    if (!s.preempted()) {
        admit_waiting(s);
    }
}

} // namespace

std::unique_ptr<SchedulerPolicy> make_tensorrt_llm(model::CapacityScheduler capacity) {
    return std::make_unique<TensorRtLlm>(capacity);
}

} // namespace gpuplan::sim::detail
