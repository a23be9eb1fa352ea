#pragma once
/// Availability of a fleet with hot spares under exponential failures and repairs, in closed
/// form. Each unit (a serving replica, a training node) fails independently after an
/// exponentially distributed time with mean MTBF and is back after a repair with mean MTTR, so in
/// steady state it is up with probability p = MTBF / (MTBF + MTTR) (an alternating renewal
/// process; Barlow & Proschan, Mathematical Theory of Reliability, 1965, ch. 7). With N units
/// needed and k hot spares, the fleet serves at full size while at least N of the N + k units are
/// up, which is the binomial tail
///     A(N, k) = Σ_{i=N}^{N+k} C(N+k, i) p^i (1 − p)^{N+k−i}
/// (a k-out-of-n:G system with independent repairs; for many units and a small down fraction it
/// tends to the Poisson/Erlang form P(Poisson(N·MTTR/MTBF) ≤ k)). This is the one availability
/// rule: the serving `availability:` block and the training spares both call it.

#include "model/units.hpp"

#include <optional>

namespace gpuplan::model {

/// The steady-state probability that one unit is up: MTBF / (MTBF + MTTR). Throws
/// InvalidArgument unless MTBF > 0 and MTTR ≥ 0 (both finite).
[[nodiscard]] double unit_availability(Seconds mtbf, Seconds mttr);

/// P(at least `needed` of `needed + spares` independent units are up) when each is up with
/// probability `p_up`. O(spares) terms, each from log-gamma (exact to ~1e-12 relative for
/// 10^6 units). Throws InvalidArgument unless needed ≥ 1, spares ≥ 0 and p_up in [0, 1].
[[nodiscard]] double fleet_availability(int needed, int spares, double p_up);

/// The smallest k ≤ max_spares with fleet_availability(needed, k, p_up) ≥ target; nullopt when
/// even max_spares does not reach it. A(N, k) rises with k, so a doubling then bisection search
/// finds it in O(log k) evaluations. Throws InvalidArgument unless target is in (0, 1).
[[nodiscard]] std::optional<int> spares_for_availability(int needed, double p_up, double target,
                                                         int max_spares = 1'000'000);

/// A fleet's availability question: units needed, their MTBF and MTTR, and the target.
struct AvailabilityInputs {
    int needed = 1;
    Seconds mtbf{0.0};
    Seconds mttr{0.0};
    double target = 0.999;
    friend bool operator==(const AvailabilityInputs&, const AvailabilityInputs&) = default;
};

/// The scenario's `availability:` block for a serving fleet. Unset fields take the documented
/// defaults of model/failures.hpp (serving_availability resolves them).
struct AvailabilityConfig {
    std::optional<int> replicas; ///< replicas needed; nullopt: the scenario's replica count
    std::optional<Seconds> mtbf; ///< per replica; nullopt: the per-GPU default ÷ its GPUs
    std::optional<Seconds> mttr; ///< per replica; nullopt: the default repair time
    double target = 0.999;       ///< in (0, 1)
    friend bool operator==(const AvailabilityConfig&, const AvailabilityConfig&) = default;
};

/// The answer: per-unit availability, the spares that reach the target and the fleet's
/// availability with them (and with none).
struct AvailabilityResult {
    double unit_up = 0;        ///< MTBF / (MTBF + MTTR)
    double without_spares = 0; ///< A(N, 0) = p^N
    std::optional<int> spares; ///< smallest k reaching the target; nullopt: unreachable
    double with_spares = 0;    ///< A(N, k) at that k (A(N, max) when unreachable)
    double expected_down = 0;  ///< mean units in repair among N + k: (N + k)(1 − p)
    friend bool operator==(const AvailabilityResult&, const AvailabilityResult&) = default;
};

/// unit_availability, then spares_for_availability and fleet_availability at the result.
/// Throws InvalidArgument for a bad input (see the functions above).
[[nodiscard]] AvailabilityResult plan_availability(const AvailabilityInputs& in);

} // namespace gpuplan::model
