#pragma once
/// Simulated time: an integer count of nanoseconds. Integer ticks make event order exact (no
/// floating-point ties that depend on summation order) and runs reproducible bit for bit.

#include "model/units.hpp"

#include <cstdint>
#include <limits>

namespace gpuplan::sim {

/// Simulated time in nanoseconds since the start of the run.
using Tick = std::int64_t;

/// Ticks per simulated second.
inline constexpr Tick kTicksPerSecond = 1'000'000'000;

/// The largest representable time (about 292 years); "never".
inline constexpr Tick kNever = std::numeric_limits<Tick>::max();

/// The longest simulated span a run may cover: 10 years of 365 days. The time series coarsen
/// their bins as a run grows (at most 65,536 bins), so memory does not grow with the span; the
/// limit keeps every tick far from the clock's 292-year range and refuses inputs that are
/// mistakes (a trace row at 1e12 s, a rate of 1e-9 requests/s) before the run.
inline constexpr double kMaxSimulatedSpanS = 10.0 * 365.0 * 86400.0;

/// Converts a duration or instant to ticks, rounding to the nearest nanosecond. The one
/// conversion from Seconds: values that are negative, NaN or infinite, or beyond kNever (about
/// 292 years), throw InvalidArgument naming `what` (a key such as "workload.duration"), so no
/// tick can be garbage. Values in (-0.5 ns, 0) round to 0.
[[nodiscard]] Tick to_tick(Seconds s, const char* what);

/// `a + b` for non-negative ticks, saturating at kNever instead of wrapping.
[[nodiscard]] constexpr Tick add_ticks(Tick a, Tick b) noexcept {
    if (b > 0 && a > kNever - b) {
        return kNever;
    }
    if (b < 0 && a < std::numeric_limits<Tick>::min() - b) {
        return std::numeric_limits<Tick>::min();
    }
    return a + b;
}

/// Converts ticks to seconds.
[[nodiscard]] constexpr Seconds to_seconds(Tick t) noexcept {
    return Seconds(static_cast<double>(t) / static_cast<double>(kTicksPerSecond));
}

/// Ticks as a plain double in seconds (for statistics).
[[nodiscard]] constexpr double tick_s(Tick t) noexcept {
    return static_cast<double>(t) / static_cast<double>(kTicksPerSecond);
}

} // namespace gpuplan::sim
