#pragma once
/// The power observer (layer-private): told when a replica comes up and when each engine step
/// runs (its cost and the clock it ran at), it integrates every GPU's power over time with the
/// model's per-step power (model::step_power) and fills SimResult::power and the power column
/// of the 1-second series. It never influences the simulation (power is an
/// observer of state changes).
///
/// Power of one GPU of replica r at time t:
///   before r is up (cold start, a later scale-up)   P_idle
///   inside a step of compute time c                  step_power(step, clock) for c, then
///                                                    P_resident for its swap time
///   otherwise                                        P_resident (model loaded, no work)
/// Every GPU of a replica runs the same steps, so one series per replica stands for each of
/// its GPUs. Node power = Σ its GPUs ÷ PSU efficiency + the host's share; racks sum nodes.

#include "model/power.hpp"
#include "model/step_cost.hpp"
#include "sim/result.hpp"
#include "sim/tick.hpp"

#include <cstddef>
#include <vector>

namespace gpuplan::sim::detail {

/// What the observer needs to know about the hardware.
struct PowerSetup {
    model::GpuPowerLevels levels;
    model::PowerModel model;
    model::NodePower node;
    model::GpuPowerLimit limit;
    FlopsPerSecond peak;      ///< datasheet GEMM peak (the activity denominator)
    BytesPerSecond bandwidth; ///< datasheet bandwidth
    int replica_gpus = 1;
    int nodes_per_rack = 1;
    double pue = 1.0;
    std::vector<std::string> notes;
};

class PowerObserver {
  public:
    explicit PowerObserver(PowerSetup setup);

    /// Replica `replica` serves from `at` on (its GPUs idle before).
    void replica_up(int replica, Tick at);
    /// A step of `replica` over [start, end): compute until `compute_end` (start + the cost's
    /// time) at core clock factor `clock`, then swap traffic until `end` (resident power);
    /// `cost` null: swap traffic only. Returns the mean power of each of the replica's GPUs
    /// over [start, end).
    double step(int replica, Tick start, Tick compute_end, Tick end, const model::StepCost* cost,
                double clock);
    /// Doubles the width of the energy bins (1 s at first), merging neighbours; Metrics keeps
    /// its bins and these on one grid.
    void coarsen();
    /// Fills out.power and the power column of out.series (call after the series exist, with
    /// out.series_bin equal to this observer's bin width).
    /// `end` is the time of the last event; `output_tokens` and `completed` come from the
    /// overall summary.
    void finish(Tick end, std::int64_t output_tokens, std::int64_t completed, SimResult& out) const;

  private:
    struct Replica {
        Tick up = 0;
        Tick busy = 0;             // Σ step durations
        double busy_energy = 0;    // joules per GPU inside steps
        std::vector<double> extra; // per bin: joules per GPU above the resident floor
    };
    void add_extra(Replica& r, Tick a, Tick b, double watts);
    Replica& at(int replica);

    PowerSetup s_;
    std::vector<Replica> replicas_;
    Tick bin_ = kTicksPerSecond; // bin width
    double peak_step_ = 0;       // highest per-GPU step power
    double clock_time_ = 0;      // Σ clock × compute seconds
    double compute_time_ = 0;    // Σ compute seconds
    double capped_time_ = 0;     // compute seconds below full clock
};

} // namespace gpuplan::sim::detail
