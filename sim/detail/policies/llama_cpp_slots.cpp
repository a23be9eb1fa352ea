// llama.cpp server's fixed slots (ggml-org/llama.cpp@001d906a6d86e2490e394361e7cc6f478b100088,
// tools/server/server-context.cpp): a request takes an idle slot or is deferred until one
// frees (process_single_task: "if no slot is available, we defer this task"); each update
// first adds one sampled token per generating slot to the batch, then feeds pending prompts
// slot by slot "without exceeding n_batch" (pre_decode). A slot owns n_ctx ÷ n_parallel
// tokens of KV allocated at start-up, so nothing is ever preempted.
//
// Mapping: slots = max_num_seqs (--parallel), a slot's context = max_model_len, the prompt
// budget = max_num_batched_tokens. Approximations: slots are served in the order their requests
// were admitted (llama.cpp iterates slots by index and picks an idle slot by prompt similarity
// or least recent use); the per-slot prompt cache (cache_prompt) and context shift are not
// modelled.
#include "sim/detail/scheduler_policy.hpp"

#include <cassert>

namespace gpuplan::sim::detail {
namespace {

class LlamaCppSlots final : public SchedulerPolicy {
  public:
    void form(SchedulerState& s) override;
    [[nodiscard]] bool can_schedule(int /*prompt*/, int /*output*/,
                                    const ReplicaConfig& config) const override {
        // A slot's context must fit the KV pool, or no request could ever take a slot.
        return ceil_div(config.max_model_len, config.block_size) <= config.kv_blocks;
    }
    // One llama_decode per update: a pipeline split across GPUs runs inside it, not as
    // several scheduled batches in flight.
    [[nodiscard]] bool pipelines() const noexcept override { return false; }
    [[nodiscard]] bool uses_prefix_cache() const noexcept override { return false; }
    [[nodiscard]] const char* name() const noexcept override { return "llama.cpp-slots"; }
};

void LlamaCppSlots::form(SchedulerState& s) {
    const std::vector<std::uint32_t>& running = s.running();
    // 1. Every generating slot adds its token (its KV cells were reserved with the slot), even
    //    past the prompt budget.
    for (const std::uint32_t slot : running) {
        Request& r = s.request(slot);
        if (SchedulerState::is_decode(r)) {
            const int n = s.decode_tokens(r);
            const bool reserved = s.grow(r, r.computed + n); // within the slot's context
            assert(reserved);
            (void)reserved;
            s.schedule(slot, r, n);
        }
    }
    // 2. Pending prompts, slot by slot, while the batch has room.
    for (const std::uint32_t slot : running) {
        if (s.budget() <= 0) {
            return;
        }
        Request& r = s.request(slot);
        if (!r.in_batch) {
            s.schedule(slot, r, std::min(r.num_tokens() - r.computed, s.budget()));
        }
    }
    // 3. Idle slots take deferred requests in arrival order, each reserving a whole slot
    //    context, while the batch has room for their first prompt tokens (a request taken
    //    into a full batch would start its prompt in the next update anyway).
    const int slot_blocks = s.blocks_for(s.config().max_model_len);
    while (s.budget() > 0 && static_cast<int>(running.size()) < s.config().max_num_seqs) {
        const std::uint32_t slot = s.front_waiting();
        if (slot == ~0u || slot_blocks > s.blocks().free()) {
            return;
        }
        const Request& r = s.request(slot);
        s.admit(slot, PrefixHit{}, std::min(r.num_tokens() - r.computed, s.budget()),
                s.config().max_model_len);
    }
}

} // namespace

std::unique_ptr<SchedulerPolicy> make_llama_cpp_slots() {
    return std::make_unique<LlamaCppSlots>();
}

} // namespace gpuplan::sim::detail
