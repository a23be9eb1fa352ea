#pragma once
/// Sizing curves: throughput, TTFT, TPOT and E2E against offered load (sequences in flight or
/// requests/s) for each candidate GPU, with the highest load that meets the scenario's SLOs.
/// Analytic points are model::estimate_serving at each load (the figures `gpuplan estimate
/// --concurrency N` / `--rate R` prints, no second serving model); the simulator confirms a few
/// loads on demand with percentiles (simulate_curve). `gpuplan curve` and the desktop app's
/// Curves tab both call these functions (docs/plan.md).
///
/// The analytic figures are mean values of a steady state. The two axes ask two questions:
/// - concurrency (a closed loop, no queue): a load counts as served when every sequence runs at
///   once and the mean TTFT (loaded), TPOT and E2E are within the SLO targets; the highest such
///   load is the most sequences in flight within the SLO (plan --fleet's replica batch);
/// - requests/s (an open loop): a load counts as served when the utilisation is below 1 and the
///   SLO's percentiles under Poisson arrivals (model::slo_figures_at: queueing, prompt chunks in
///   the decode steps) are within the targets; the highest such rate is the capacity at the SLO
///   (model::slo_capacity), the figure `estimate` and `plan` print.
/// The simulator confirms either with measured percentiles (simulate_curve).

#include "model/efficiency.hpp"
#include "model/plan_config.hpp"
#include "model/power.hpp"
#include "model/scenario.hpp"
#include "model/units.hpp"
#include "sim/simulate.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace gpuplan::plan {

/// What the load axis counts.
enum class LoadAxis {
    Concurrency, ///< sequences in flight over the deployment (a closed loop)
    RequestRate, ///< offered requests/s (an open loop)
};

/// "concurrency", "requests_per_s".
[[nodiscard]] const char* to_string(LoadAxis a);

/// One hardware candidate of the curves: the scenario with that candidate's accelerator (its
/// layout, precisions and engine kept) and the efficiency profile to estimate it with.
struct CurveCandidate {
    std::string name; ///< the accelerator's hwdb name
    model::Scenario scenario;
    model::EfficiencyProfile profile;
};

/// The analytic figures at one load.
struct CurvePoint {
    double load = 0; ///< sequences in flight or requests/s (the curve's axis)
    /// The deployment serves the load: it fits in memory and, closed loop, runs every sequence
    /// at once (model::load_fit); offered rate, its utilisation is at most 1.
    bool fits = false;
    double throughput = 0; ///< output tokens/s of the deployment (ServingEstimate::throughput)
    Seconds ttft;          ///< ServingEstimate::ttft_loaded: the prefill sharing steps
    Seconds tpot;          ///< ServingEstimate::tpot
    Seconds e2e;           ///< ttft + (output tokens − 1) × tpot, as the sizing search prunes
    int running = 0;       ///< sequences running per replica
    std::optional<double> utilisation; ///< offered rate: the operating point's
    bool meets_slo = false;            ///< fits and every SLO target of the scenario is met
    std::string miss;                  ///< what it misses ("" when it meets the SLO)
    friend bool operator==(const CurvePoint&, const CurvePoint&) = default;
};

/// One candidate's curve.
struct CandidateCurve {
    std::string name;
    std::vector<CurvePoint> points;
    /// The highest load that meets the SLO: concurrency, the exact integer (bisection on
    /// curve_point); requests/s, the capacity at the SLO (model::slo_capacity, to a relative
    /// 1e-4); nullopt when even the lightest load misses.
    std::optional<double> max_load;
    std::string error; ///< why the candidate could not be estimated ("" when it could)
    friend bool operator==(const CandidateCurve&, const CandidateCurve&) = default;
};

/// The curves of every candidate on one axis.
struct LoadCurve {
    LoadAxis axis = LoadAxis::Concurrency;
    model::Slo slo; ///< the targets the curves are judged by (the scenario's `slo:`)
    std::vector<CandidateCurve> curves;
    friend bool operator==(const LoadCurve&, const LoadCurve&) = default;
};

/// The axis a scenario's curves default to: requests/s when its workload offers a rate
/// (model::offered_rate) other than a trace's, else sequences in flight.
[[nodiscard]] LoadAxis default_axis(const model::Scenario& s);

/// The scenario with its workload at `load` on `axis`: model::set_closed_loop or
/// model::set_offered_rate, as `--concurrency` and `--rate` do on the command line. Throws
/// InvalidArgument for a load that is not positive (or, for concurrency, not whole) and for a
/// rate on a trace replay (its arrival times fix its rate).
[[nodiscard]] model::Scenario at_load(const model::Scenario& s, LoadAxis axis, double load);

/// The analytic figures of `s` at `load`. Throws InvalidArgument as model::estimate_serving
/// does, and for a load that is not positive (or, for concurrency, not a whole number).
[[nodiscard]] CurvePoint curve_point(const model::Scenario& s,
                                     const model::EfficiencyProfile& profile, LoadAxis axis,
                                     double load);

/// The highest load of `s` that meets its SLO (see CandidateCurve::max_load).
[[nodiscard]] std::optional<double> max_load_meeting_slo(const model::Scenario& s,
                                                         const model::EfficiencyProfile& profile,
                                                         LoadAxis axis);

/// `n` loads from light to the deployment's capacity: concurrencies 1 … the sequences it runs
/// at once (geometric, whole and distinct), or rates up to the one at utilisation 1 (even
/// steps). Empty when the deployment does not fit.
[[nodiscard]] std::vector<double> default_loads(const model::Scenario& s,
                                                const model::EfficiencyProfile& profile,
                                                LoadAxis axis, int n = 12);

/// The candidates of the curves: the scenario's own hardware first, then each candidate of its
/// `plan:` block (plan::effective_plan) with another accelerator, configured with the scenario's
/// layout, precisions and engine (plan::configured_scenario). `choose` picks each profile, as
/// for the sizing search; `own` is the profile of the scenario's own accelerator.
[[nodiscard]] std::vector<CurveCandidate> curve_candidates(
    const model::Scenario& s, const model::EfficiencyProfile& own,
    const std::vector<model::PlanCandidate>& others,
    const std::function<model::EfficiencyProfile(const model::AcceleratorSpec&)>& choose);

/// The curves of every candidate at `loads` (empty: default_loads of the first candidate, so
/// every curve shares one axis), each with its max_load. A candidate that cannot be estimated
/// keeps its error and no points.
[[nodiscard]] LoadCurve load_curve(const std::vector<CurveCandidate>& candidates, LoadAxis axis,
                                   std::vector<double> loads = {}, int points = 12);

/// What the simulator measured at one load.
struct SimulatedPoint {
    double load = 0;
    bool ok = false;       ///< the simulation ran (the deployment fits) and was not stopped
    std::string reason;    ///< why not
    double throughput = 0; ///< output tokens/s
    double ttft_p50_s = 0, ttft_p99_s = 0, tpot_p50_s = 0, tpot_p99_s = 0;
    double ttft_at_slo_s = 0, tpot_at_slo_s = 0, e2e_at_slo_s = 0; ///< at the SLO's percentile
    std::int64_t completed = 0;
    std::int64_t failed = 0; ///< rejected + timed out
    bool meets_slo = false;  ///< every target met at the SLO's percentile and nothing failed
    friend bool operator==(const SimulatedPoint&, const SimulatedPoint&) = default;
};

/// Simulates `s` at each load (its workload set by at_load, `requests` requests each, and for
/// a concurrency at least four times that many, so the loop reaches its steady state) on
/// `threads` worker threads (plan::parallel_for). Stops early when `stop` is requested (the
/// points not run have ok = false); `progress` gets the fraction of loads finished, called from
/// the worker threads.
[[nodiscard]] std::vector<SimulatedPoint>
simulate_curve(const model::Scenario& s, const model::EfficiencyProfile& profile,
               const std::optional<model::NodePower>& node, LoadAxis axis,
               const std::vector<double>& loads, int requests = 500, int threads = 0,
               std::stop_token stop = {}, const std::function<void(double)>& progress = {});

} // namespace gpuplan::plan
