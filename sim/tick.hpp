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

/// Converts a duration or instant to ticks, rounding to the nearest nanosecond; negative values
/// give 0 and values beyond kNever saturate. The one conversion from Seconds.
[[nodiscard]] Tick to_tick(Seconds s) noexcept;

/// Converts ticks to seconds.
[[nodiscard]] constexpr Seconds to_seconds(Tick t) noexcept {
    return Seconds(static_cast<double>(t) / static_cast<double>(kTicksPerSecond));
}

/// Ticks as a plain double in seconds (for statistics).
[[nodiscard]] constexpr double tick_s(Tick t) noexcept {
    return static_cast<double>(t) / static_cast<double>(kTicksPerSecond);
}

}  // namespace gpuplan::sim
