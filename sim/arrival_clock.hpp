#pragma once
/// Arrival times of open-loop processes. A renewal process of unit rate (exponential, gamma
/// with a given coefficient of variation, or evenly spaced gaps) runs in "operational time" s;
/// the rate curve maps it to real time through the cumulative rate Λ(t) = ∫ λ: t = Λ⁻¹(s)
/// (time rescaling, Brown et al. 2002), which gives a Poisson process exactly its varying rate
/// and every other process the same burstiness at each rate.

#include "model/workload.hpp"
#include "sim/rng.hpp"

#include <optional>
#include <vector>

namespace gpuplan::sim {

/// Generates successive arrival times of a Poisson, Gamma or Constant process.
class ArrivalClock {
  public:
    /// `base_rate` (requests/s, > 0) is the flat rate, and the rate before a step curve's first
    /// step and the mean of a diurnal one. Throws InvalidArgument for a non-positive rate or
    /// cv, a step curve that is not sorted, or a diurnal amplitude outside [0, 1).
    ArrivalClock(const model::ArrivalProcess& p, double base_rate);
    /// The next arrival time in seconds from the start (non-decreasing); nullopt when the rate
    /// stays zero forever.
    [[nodiscard]] std::optional<double> next(Rng& rng);
    /// Λ(t): expected arrivals in [0, t).
    [[nodiscard]] double cumulative(double t) const;

  private:
    [[nodiscard]] double unit_gap(Rng& rng) const;
    [[nodiscard]] std::optional<double> invert(double s);

    model::ArrivalKind kind_;
    model::RateCurveKind curve_;
    double rate_;
    double shape_ = 1; // gamma shape = 1 / cv²
    // Step curve: segment starts, rates and Λ at each start.
    std::vector<double> seg_start_, seg_rate_, seg_lambda_;
    std::size_t seg_ = 0;
    // Diurnal curve.
    double amplitude_ = 0, omega_ = 0, peak_ = 0;
    double s_ = 0; // operational time of the last arrival
    double t_ = 0; // its real time
};

} // namespace gpuplan::sim
