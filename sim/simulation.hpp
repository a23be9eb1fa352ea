#pragma once
/// The discrete-event kernel: a clock, an event queue and a run loop. It knows nothing about
/// GPUs or requests; components derive from EventHandler and schedule events on it.

#include "sim/event_queue.hpp"
#include "sim/rng.hpp"
#include "sim/tick.hpp"

#include <cstdint>
#include <functional>
#include <stop_token>

namespace gpuplan::sim {

/// Called from the run loop every few thousand events with the current time.
using TickProgress = std::function<void(Tick now)>;

/// How a run ended.
struct RunOutcome {
    std::uint64_t events = 0; ///< events handled by this call
    bool stopped = false;     ///< the stop token asked to stop
    bool drained = false;     ///< no events were left
    friend bool operator==(const RunOutcome&, const RunOutcome&) = default;
};

/// One simulation: its clock, its future events and its random numbers. No global state, so
/// any number of simulations can run side by side on different threads.
class Simulation {
  public:
    /// A simulation at time 0 whose RNG is seeded with `seed`.
    explicit Simulation(std::uint64_t seed = 1) : rng_(seed) {}
    Simulation(const Simulation&) = delete;
    Simulation& operator=(const Simulation&) = delete;

    /// The current time.
    [[nodiscard]] Tick now() const noexcept { return now_; }
    /// The simulation's random numbers (fork it per component).
    [[nodiscard]] Rng& rng() noexcept { return rng_; }

    /// Schedules `kind`/`data` for `target` at absolute time `tick` (>= now(); earlier times
    /// throw InternalError). Returns the event's sequence number. O(log pending).
    std::uint64_t schedule_at(Tick tick, EventHandler& target, std::uint32_t kind,
                              std::uint64_t data = 0);
    /// Schedules an event `delay` (>= 0) ticks from now; the time saturates at kNever
    /// instead of wrapping.
    std::uint64_t schedule_in(Tick delay, EventHandler& target, std::uint32_t kind,
                              std::uint64_t data = 0) {
        return schedule_at(add_ticks(now_, delay), target, kind, data);
    }

    /// Runs events in (tick, sequence) order until none are left, the next one lies after
    /// `until`, stop() is called or `stop` is requested. The clock ends at the last event run
    /// (or at `until` when events remain beyond it). `progress` is called every 4096 events.
    RunOutcome run(Tick until = kNever, std::stop_token stop = {},
                   const TickProgress& progress = {});

    /// Makes run() return after the current event.
    void stop() noexcept { stop_requested_ = true; }

    /// Pending events.
    [[nodiscard]] std::size_t pending() const noexcept { return queue_.size(); }
    /// Events handled since construction.
    [[nodiscard]] std::uint64_t events_handled() const noexcept { return handled_; }
    /// Pre-allocates room for `n` pending events.
    void reserve(std::size_t n) { queue_.reserve(n); }

  private:
    EventQueue queue_;
    Rng rng_;
    Tick now_ = 0;
    std::uint64_t handled_ = 0;
    bool stop_requested_ = false;
};

} // namespace gpuplan::sim
