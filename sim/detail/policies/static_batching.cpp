// Static batching (the request-level batching of early serving systems; Orca, OSDI '22, §2
// contrasts it with iteration-level scheduling): a batch is formed when static_batch_size
// requests wait or the head has waited static_max_wait, each member reserving the KV blocks of
// its whole prompt and output up front, and runs to completion before the next is formed.
#include "sim/detail/scheduler_policy.hpp"

namespace gpuplan::sim::detail {
namespace {

class StaticBatching final : public SchedulerPolicy {
  public:
    void form(SchedulerState& s) override;
    [[nodiscard]] bool pipelines() const noexcept override { return false; }
    [[nodiscard]] bool uses_prefix_cache() const noexcept override { return false; }
    [[nodiscard]] const char* name() const noexcept override { return "static"; }
};

void StaticBatching::form(SchedulerState& s) {
    const std::vector<std::uint32_t>& running = s.running();
    if (!running.empty()) {
        // The batch runs to completion: every unfinished member decodes (prompts were whole).
        for (const std::uint32_t slot : running) {
            Request& r = s.request(slot);
            s.schedule(slot, r, r.num_tokens() - r.computed);
        }
        return;
    }
    const std::uint32_t head = s.front_waiting();
    if (head == ~0u) {
        return;
    }
    const model::SchedulerConfig& cfg = s.config().scheduler;
    const int size = cfg.static_batch_size;
    const Tick deadline =
        add_ticks(s.request(head).enqueued, to_tick(cfg.static_max_wait, "engine.static_max_wait"));
    if (s.waiting() < size && s.now() < deadline) {
        s.wake_at(deadline);
        return;
    }
    while (static_cast<int>(running.size()) < size) {
        const std::uint32_t slot = s.front_waiting();
        if (slot == ~0u) {
            break;
        }
        const Request& r = s.request(slot);
        if (s.blocks_for(static_cast<std::int64_t>(r.prompt) + r.output) > s.blocks().free()) {
            break;
        }
        s.admit(slot, PrefixHit{}, r.num_tokens() - r.computed, r.prompt + r.output);
    }
}

} // namespace

std::unique_ptr<SchedulerPolicy> make_static_batching() {
    return std::make_unique<StaticBatching>();
}

} // namespace gpuplan::sim::detail
