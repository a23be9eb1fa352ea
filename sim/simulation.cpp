#include "sim/simulation.hpp"

#include "model/error.hpp"

#include <string>

namespace gpuplan::sim {

std::uint64_t Simulation::schedule_at(Tick tick, EventHandler& target, std::uint32_t kind,
                                      std::uint64_t data) {
    GPUPLAN_CHECK(tick >= now_, "event scheduled in the past: tick " + std::to_string(tick) +
                                    " < now " + std::to_string(now_));
    return queue_.push(tick, &target, kind, data);
}

// `stop` by value although only read: a stop_token is a shared handle, passed by value like
// the standard library's own (std::jthread) and sim::simulate's.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
RunOutcome Simulation::run(Tick until, std::stop_token stop, const TickProgress& progress) {
    RunOutcome out;
    stop_requested_ = false;
    // Checking the token and the callback every 4096 events keeps their cost out of the loop.
    constexpr std::uint64_t kPollMask = 4095;
    while (!queue_.empty()) {
        if (queue_.top().tick > until) {
            now_ = until;
            return out;
        }
        const Event e = queue_.pop();
        now_ = e.tick;
        e.target->on_event(e.kind, e.data);
        ++out.events;
        ++handled_;
        if ((handled_ & kPollMask) == 0) {
            if (stop.stop_requested()) {
                out.stopped = true;
                return out;
            }
            if (progress) {
                progress(now_);
            }
        }
        if (stop_requested_) {
            return out;
        }
    }
    out.drained = true;
    return out;
}

} // namespace gpuplan::sim
