#include "sim/event_queue.hpp"

#include "model/error.hpp"

#include <cmath>
#include <sstream>
#include <string>
#include <utility>

namespace gpuplan::sim {
namespace {

// Strict order of the heap: earlier tick first, then earlier insertion.
bool before(const Event& a, const Event& b) noexcept {
    return a.tick < b.tick || (a.tick == b.tick && a.seq < b.seq);
}

std::string fmt_seconds(double s) {
    std::ostringstream out;
    out << s << " s";
    return out.str();
}

} // namespace

Tick to_tick(Seconds s, const char* what) {
    const double ns = std::round(s.si() * static_cast<double>(kTicksPerSecond));
    if (std::isnan(ns) || ns < 0.0) {
        throw InvalidArgument(std::string(what) + ": " + fmt_seconds(s.si()) +
                              " is not a duration; give a finite time >= 0 s");
    }
    // 2^63 ns is exactly representable as a double; anything at or above it does not fit.
    if (ns >= 9223372036854775808.0) {
        throw InvalidArgument(std::string(what) + ": " + fmt_seconds(s.si()) +
                              " is beyond the simulator's clock (about 292 years); give a "
                              "shorter time");
    }
    return static_cast<Tick>(ns);
}

// A hand-written sift keeps the heap free of std::function and of comparator objects; the
// (tick, seq) key is unique, so the order of pops is fully determined.
std::uint64_t EventQueue::push(Tick tick, EventHandler* target, std::uint32_t kind,
                               std::uint64_t data) {
    const std::uint64_t seq = next_seq_++;
    heap_.push_back(Event{tick, seq, target, kind, data});
    std::size_t i = heap_.size() - 1;
    Event e = heap_[i];
    while (i > 0) {
        const std::size_t parent = (i - 1) / 2;
        if (!before(e, heap_[parent])) {
            break;
        }
        heap_[i] = heap_[parent];
        i = parent;
    }
    heap_[i] = e;
    return seq;
}

Event EventQueue::pop() {
    Event top = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n > 0) {
        std::size_t i = 0;
        for (;;) {
            std::size_t child = 2 * i + 1;
            if (child >= n) {
                break;
            }
            if (child + 1 < n && before(heap_[child + 1], heap_[child])) {
                ++child;
            }
            if (!before(heap_[child], last)) {
                break;
            }
            heap_[i] = heap_[child];
            i = child;
        }
        heap_[i] = last;
    }
    return top;
}

} // namespace gpuplan::sim
