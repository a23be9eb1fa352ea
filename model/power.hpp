#pragma once
/// Power of accelerators, nodes and facilities, and what a power cap does to the clocks.
///
/// Per accelerator (docs/power.md has the derivation, the fit and its residuals):
///   idle (no process)       P_idle      measured (hwdb idle_power) or idle_fraction × P_board
///   model resident, no work P_resident  resident_fraction × P_board (a CUDA context pins clocks)
///   running a step at core clock k (k = 1: datasheet clocks)
///     P = P_resident + (P_board − P_resident)
///         × min(1, a_c·u_c·k^(γ−1) + a_m·u_m·(1 − β + β·k^(γ−1)))
/// with u_c = FLOPs ÷ (peak × time) and u_m = bytes ÷ (bandwidth × time) of the step as costed
/// at that clock (energy is spent per operation; V² ∝ k^(γ−1) per operation), a_c and a_m
/// fitted to Splitwise's per-phase power levels and a saturated-serving measurement, γ the
/// DVFS exponent (P_dyn ∝ f·V², V ∝ f: a compute-bound step draws ∝ k^γ), β the share of
/// memory-phase power in the core clock domain.
///
/// A power limit (per-GPU cap, node cap or rack budget turned into a per-GPU limit) makes the
/// GPU run each step at the highest clock whose power fits; compute time scales with 1/k,
/// memory time with 1/(1 − μ(1 − k)) (μ small: the limiter lowers the core clock, not the HBM
/// clock). Everything here is pure: the simulator calls step_power() per step.

#include "model/deployment.hpp"
#include "model/efficiency.hpp"
#include "model/hardware_spec.hpp"
#include "model/power_model.hpp"
#include "model/rack.hpp"
#include "model/scenario.hpp"
#include "model/serving.hpp"
#include "model/step_cost.hpp"
#include "model/units.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// One accelerator's power levels, resolved from its spec and the model's overrides.
struct GpuPowerLevels {
    Watts idle;     ///< no process
    Watts resident; ///< a model loaded, no work (the floor while serving)
    Watts board;    ///< board power (TDP): the default limit
    friend bool operator==(const GpuPowerLevels&, const GpuPowerLevels&) = default;
};

/// The levels of `gpu` under `m`. Throws InvalidArgument when neither the spec nor the model
/// gives a board power (TPUs), naming the key to set.
[[nodiscard]] GpuPowerLevels power_levels(const AcceleratorSpec& gpu, const PowerModel& m);

/// How hard a step drives one GPU: achieved rates as fractions of the datasheet rates.
struct StepActivity {
    double compute = 0.0; ///< FLOPs ÷ (datasheet peak × step time), in [0, 1]
    double memory = 0.0;  ///< (device-memory bytes + collective bytes) ÷ (bandwidth × time)
    friend bool operator==(const StepActivity&, const StepActivity&) = default;
};

/// The activity of a step (one GPU of one rank) against a datasheet peak and bandwidth.
/// An empty step has zero activity.
[[nodiscard]] StepActivity step_activity(const StepCost& c, FlopsPerSecond peak,
                                         BytesPerSecond bandwidth) noexcept;

/// The activity of a step costed by `m`, against its datasheet peak and bandwidth.
[[nodiscard]] StepActivity step_activity(const StepCost& c, const StepCostModel& m) noexcept;

/// Per-GPU power while running a step of activity `a` at core clock factor `clock`, the
/// activity measured on the step as costed at that clock. Between the resident and the board
/// power.
[[nodiscard]] Watts step_power(const StepActivity& a, const GpuPowerLevels& g, const PowerModel& m,
                               double clock = 1.0) noexcept;

/// Per-GPU power of a step costed by `sm`, at the model's own clock (sm.clocks().compute).
/// The simulator's per-step call: pure, allocation-free.
[[nodiscard]] Watts step_power(const StepCost& c, const StepCostModel& sm, const GpuPowerLevels& g,
                               const PowerModel& m) noexcept;

/// Energy one GPU spends on the step: step_power × c.time.
[[nodiscard]] Joules step_energy(const StepCost& c, const StepCostModel& sm,
                                 const GpuPowerLevels& g, const PowerModel& m) noexcept;

/// The clock factors at core clock `clock`: compute = clock, memory = 1 − μ(1 − clock).
[[nodiscard]] ClockFactors clock_factors(double clock, const PowerModel& m) noexcept;

/// A node's power overheads: accelerators per node and the host (CPUs, switches, NICs, fans).
struct NodePower {
    int gpus = 8;
    Watts host;                     ///< host at load, at the wall (ServerSpec::host_power)
    std::optional<Watts> idle;      ///< whole node idle (ServerSpec::idle_power)
    std::optional<Watts> nameplate; ///< PSU-sizing maximum (ServerSpec::max_power)
    int rack_units = 0;             ///< 0: unknown
    bool known = false;             ///< false: no node given, host power not counted
    friend bool operator==(const NodePower&, const NodePower&) = default;
};

/// The node figures of a hwdb server, with the model's host_power override applied.
[[nodiscard]] NodePower node_power_of(const ServerSpec& s, const PowerModel& m);

/// A node of `gpus` accelerators with no server given: host power from the model's override,
/// else zero (not counted).
[[nodiscard]] NodePower unknown_node(int gpus, const PowerModel& m);

/// The node's DC ÷ wall power: PowerModel::psu_efficiency, 1 when not positive.
[[nodiscard]] inline double psu_efficiency(const PowerModel& m) noexcept {
    return m.psu_efficiency > 0 ? m.psu_efficiency : 1.0;
}

/// Wall power of a deployment's `gpus` accelerators each drawing `per_gpu` (a board, DC, figure)
/// with their share gpus ÷ n.gpus of the hosts of the nodes they use (a partly used node's other
/// GPUs serve something else): per_gpu × gpus ÷ psu_efficiency + host × gpus ÷ n.gpus. The one
/// rule behind the deployment's average, peak, idle and off-hours power.
[[nodiscard]] Watts deployment_wall_power(Watts per_gpu, int gpus, const NodePower& n,
                                          const PowerModel& m) noexcept;

/// Wall power of a node whose `gpus_busy` accelerators each draw `per_gpu`:
/// (gpus_busy × per_gpu + host × psu_efficiency) ÷ psu_efficiency. The host figure is a wall
/// figure (hwdb derives it from wall measurements), the accelerator figure a board (DC) figure.
[[nodiscard]] Watts node_wall_power(Watts per_gpu, int gpus_busy, const NodePower& n,
                                    const PowerModel& m) noexcept;

/// Facility power for an IT load: it × pue.
[[nodiscard]] inline Watts facility_power(Watts it, double pue) noexcept {
    return it * pue;
}

/// Where a per-GPU power limit comes from.
enum class LimitSource { Board, GpuCap, NodeCap, RackBudget };

/// "board", "gpu_cap", "node_cap", "rack_budget".
[[nodiscard]] const char* to_string(LimitSource s);

/// The per-GPU limit a power budget implies.
struct GpuPowerLimit {
    Watts per_gpu; ///< the tightest of the limits (board power if none)
    LimitSource source = LimitSource::Board;
    bool below_resident = false;    ///< the limit is under the resident floor
    std::vector<std::string> notes; ///< how each budget turned into a per-GPU figure
    friend bool operator==(const GpuPowerLimit&, const GpuPowerLimit&) = default;
};

/// The per-GPU limit: min(board, gpu_cap, (node_cap × psu − host) ÷ gpus,
/// (rack_budget ÷ nodes_per_rack × psu − host) ÷ gpus). The rack budget only caps the GPUs when
/// `nodes_per_rack` says how many nodes share it; otherwise it only sizes racks (rack.hpp).
[[nodiscard]] GpuPowerLimit gpu_power_limit(const PowerBudget& b, const GpuPowerLevels& g,
                                            const NodePower& n, const PowerModel& m,
                                            std::optional<int> nodes_per_rack = std::nullopt);

/// The highest core clock factor in [min_clock, 1] at which `power_at(clock)` stays within
/// `limit` (bisection; power_at must grow with the clock). Returns 1 when the full clock fits
/// and min_clock when nothing does.
template <class PowerAt>
[[nodiscard]] double solve_clock(PowerAt&& power_at, Watts limit, double min_clock) {
    if (power_at(1.0) <= limit) {
        return 1.0;
    }
    if (power_at(min_clock) > limit) {
        return min_clock;
    }
    double lo = min_clock; // fits
    double hi = 1.0;       // does not fit
    for (int i = 0; i < 40 && hi - lo > 1e-5; ++i) {
        const double mid = 0.5 * (lo + hi);
        (power_at(mid) <= limit ? lo : hi) = mid;
    }
    return lo;
}

/// A step-cost function under a per-GPU power limit, for the simulator: the GPU runs each step
/// at the highest clock of a ladder of `levels` clock factors (1, …, min_clock; a GPU's DVFS
/// steps) whose power stays within the limit. Holds one StepCostModel per level; cost() is
/// O(log levels) StepCostModel::cost calls and allocation-free.
class PowerCappedStepCost {
  public:
    /// The clock and power a capped step ran at.
    struct Step {
        StepCost cost; ///< at `clock`
        double clock = 1.0;
        Watts power;   ///< per GPU
        Joules energy; ///< per GPU: power × cost.time
    };
    /// Throws InvalidArgument as StepCostModel and power_levels do; levels >= 2.
    PowerCappedStepCost(const Deployment& d, const EfficiencyProfile& profile, const PowerModel& m,
                        Watts limit, int levels = 41);
    /// The step at the highest clock level within the limit (the lowest level when none is).
    [[nodiscard]] Step cost(const BatchStats& s) const noexcept;
    /// The uncapped model (clock 1).
    [[nodiscard]] const StepCostModel& uncapped() const { return ladder_.front(); }
    [[nodiscard]] Watts limit() const { return limit_; }
    [[nodiscard]] const GpuPowerLevels& levels() const { return levels_; }

  private:
    std::vector<StepCostModel> ladder_;
    std::vector<double> clocks_;
    PowerModel model_;
    GpuPowerLevels levels_;
    Watts limit_;
};

/// Power, clock and speed of one phase, uncapped and under the limit.
struct PhasePower {
    StepActivity activity; ///< at full clock
    Watts uncapped;        ///< per GPU at full clock
    Watts capped;          ///< per GPU at `clock`
    double clock = 1.0;    ///< core clock factor the limiter settles at
    double slowdown = 1.0; ///< phase time under the limit ÷ uncapped
    friend bool operator==(const PhasePower&, const PhasePower&) = default;
};

/// Does an analytic time meet an objective (mean-value model, not a percentile).
struct SloCheck {
    std::optional<Seconds> target;
    Seconds uncapped;
    Seconds capped;
    [[nodiscard]] bool met_uncapped() const { return !target || uncapped <= *target; }
    [[nodiscard]] bool met_capped() const { return !target || capped <= *target; }
    friend bool operator==(const SloCheck&, const SloCheck&) = default;
};

/// The power figures of a deployment serving a workload, and what its power limit costs.
struct PowerEstimate {
    GpuPowerLevels levels;
    GpuPowerLimit limit;
    bool limited = false;     ///< the limit is below what the load draws uncapped
    bool unreachable = false; ///< even min_clock draws more than the limit
    PhasePower prefill;       ///< the lone prefill behind TTFT
    PhasePower steady;        ///< the steady-state cycle behind TPOT and throughput
    ServingEstimate uncapped;
    ServingEstimate capped;       ///< TTFT at the prefill clock, the rest at the steady clock
    double throughput_loss = 0.0; ///< 1 − capped ÷ uncapped throughput
    SloCheck ttft;
    SloCheck tpot;
    NodePower node;
    int nodes = 1;            ///< ceil(gpus ÷ gpus per node)
    Watts gpu_average;        ///< per GPU at the steady load, under the limit
    Watts gpu_peak;           ///< per GPU at most: min(board, limit)
    Watts deployment_average; ///< all GPUs at the steady load plus the hosts, at the wall
    Watts deployment_peak;    ///< all GPUs at gpu_peak plus the hosts, at the wall
    Watts deployment_idle;    ///< all GPUs resident (model loaded, no work) plus the hosts
    Watts node_peak_uncapped; ///< one node, every GPU at board power, at the wall
    Watts node_peak;          ///< one node, every GPU at gpu_peak, at the wall
    double pue = 1.0;
    Watts facility_average;              ///< deployment_average × pue
    double energy_per_token_j = 0.0;     ///< wall energy × pue per output token at the steady load
    double gpu_energy_per_token_j = 0.0; ///< accelerator energy only
    /// More nodes the same budget powers when each node is provisioned for its capped peak
    /// rather than its uncapped peak: node_peak_uncapped ÷ node_peak − 1.
    double oversubscription = 0.0;
    /// Racks for the deployment's nodes provisioned at their uncapped peak (node_peak_uncapped)
    /// and at their capped peak (node_peak): the one rack model (rack.hpp) with every limit,
    /// the rack budget, the PDUs, cooling and rack units, and the one that binds.
    RackPlan racks_uncapped;
    RackPlan racks_capped;
    std::vector<std::string> notes;
};

/// Power figures and the effect of the scenario's limits: per-GPU levels, the limit, per-phase
/// clocks (solved on the lone prefill step and on the steady cycle: its decode-only step plus
/// the riding prefill work at the prefill step's activity), the capped serving estimate, node
/// and facility power, energy per token, oversubscription and the racks the nodes need.
/// `rack.nodes_per_rack`, when set, turns the rack budget into a per-GPU cap. Throws
/// InvalidArgument as estimate_serving, power_levels and plan_racks do.
[[nodiscard]] PowerEstimate estimate_power(const Deployment& d, const Workload& w,
                                           const EfficiencyProfile& profile, const PowerModel& m,
                                           const PowerBudget& budget, const NodePower& node,
                                           const Slo& slo = {}, const RackConfig& rack = {},
                                           int cached_prefix = 0);

} // namespace gpuplan::model
