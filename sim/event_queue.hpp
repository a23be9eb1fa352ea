#pragma once
/// The future event list: a binary min-heap of events ordered by (tick, insertion sequence), so
/// events at the same tick fire in the order they were scheduled, always.

#include "sim/tick.hpp"

#include <cstdint>
#include <vector>

namespace gpuplan::sim {

/// A component that receives events. Events carry a small integer `kind` and a 64-bit payload
/// so scheduling one allocates nothing; the component interprets both.
class EventHandler {
  public:
    /// Handles one event at the simulation's current time.
    virtual void on_event(std::uint32_t kind, std::uint64_t data) = 0;

  protected:
    EventHandler() = default;
    EventHandler(const EventHandler&) = default;
    EventHandler& operator=(const EventHandler&) = default;
    ~EventHandler() = default;
};

/// One scheduled event. `target` does not own the handler; handlers outlive their events.
struct Event {
    Tick tick = 0;
    std::uint64_t seq = 0; ///< insertion sequence number, the tie-breaker
    EventHandler* target = nullptr;
    std::uint32_t kind = 0;
    std::uint64_t data = 0;
};

/// A binary min-heap of events by (tick, seq). Push and pop are O(log n) and allocate only when
/// the heap outgrows its capacity.
class EventQueue {
  public:
    /// Adds an event; returns its sequence number.
    std::uint64_t push(Tick tick, EventHandler* target, std::uint32_t kind, std::uint64_t data);
    /// The earliest event. Precondition: !empty().
    [[nodiscard]] const Event& top() const { return heap_.front(); }
    /// Removes and returns the earliest event. Precondition: !empty().
    Event pop();
    [[nodiscard]] bool empty() const noexcept { return heap_.empty(); }
    [[nodiscard]] std::size_t size() const noexcept { return heap_.size(); }
    /// Events pushed so far (the next sequence number).
    [[nodiscard]] std::uint64_t pushed() const noexcept { return next_seq_; }
    /// Pre-allocates room for `n` pending events.
    void reserve(std::size_t n) { heap_.reserve(n); }
    /// Drops every pending event.
    void clear() noexcept { heap_.clear(); }

  private:
    std::vector<Event> heap_;
    std::uint64_t next_seq_ = 0;
};

} // namespace gpuplan::sim
