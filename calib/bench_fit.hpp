#pragma once
/// The per-step overhead of an efficiency profile fitted to benchmark results of one deployment
/// (`gpuplan calib fit --scenario`, docs/diagnose.md): `vllm bench serve`, GuideLLM or AIPerf
/// runs at several loads, each predicted at its own concurrency and request lengths (as
/// `calib validate --scenario` and `gpuplan diagnose` predict them), and the overhead chosen
/// that minimises the squared relative error of the mean TPOT.

#include "hwdb/observed_readers.hpp"
#include "model/efficiency.hpp"
#include "model/scenario.hpp"
#include "model/units.hpp"

#include <string>
#include <vector>

namespace gpuplan::calib {

/// One benchmark's TPOT, measured and predicted before and after the fit.
struct BenchTpot {
    std::string label;
    int running = 0;
    double measured_s = 0, before_s = 0, after_s = 0;
    friend bool operator==(const BenchTpot&, const BenchTpot&) = default;
};

/// The fitted overhead and what it does to the errors.
struct StepOverheadFit {
    Seconds base;   ///< the profile's step_overhead before
    Seconds fitted; ///< the overhead minimising Σ ((predicted − measured) / measured)²
    double mape_before = 0, mape_after = 0; ///< mean absolute relative TPOT error
    std::vector<BenchTpot> benches;
    model::EfficiencyProfile profile; ///< `base` with step_overhead = fitted and its provenance
    friend bool operator==(const StepOverheadFit&, const StepOverheadFit&) = default;
};

/// Fits `base.step_overhead` to the mean TPOT of `benches` (those without one are skipped) on
/// the scenario's deployment, within [0, max_overhead]; golden-section search on the model's own
/// predictions (the overhead enters every decode step, so the error is convex in it). Throws
/// InvalidArgument when fewer than two benchmarks have a TPOT, or no load differs (one load
/// cannot tell the overhead from the kernels).
[[nodiscard]] StepOverheadFit fit_step_overhead(const model::Scenario& s,
                                                const model::EfficiencyProfile& base,
                                                const std::vector<hwdb::LabelledBench>& benches,
                                                Seconds max_overhead = Seconds(0.05));

} // namespace gpuplan::calib
