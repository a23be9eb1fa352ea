#pragma once
/// How much memory a simulation run from the desktop app will hold, estimated before it starts,
/// and the budget above which the app asks before running (issue 12: "warns before a run that
/// would exceed a memory budget").
///
/// The app keeps every request (sim::SimOptions::keep_requests: the latency CDFs need them),
/// so its runs grow with the request count where `gpuplan simulate` does not. What a run holds:
///  - per kept request: one sim::RequestRecord, counted twice (std::vector grows by doubling,
///    so its capacity reaches up to twice its size), and 24 B for the latency CDF being
///    prepared (the sorted latency and its point before thinning, sim_charts.hpp);
///  - per request up to 2^20 per class: the simulator's exact-percentile samples, 4 latencies ×
///    8 B and 16 B of inter-token runs per class and the same again for the overall summary
///    (docs/simulator.md, "Memory for these statistics is bounded"), 96 B in all; past 2^20
///    they move into a histogram of kilobytes;
///  - per simulated second (bins of 1 s, at most 65,536 bins whatever the span): one
///    sim::TimeBin and one double per power series (one per replica, node and rack and the
///    deployment's total, docs/simulator.md "Time series").

#include "model/scenario.hpp"
#include "model/units.hpp"
#include "sim/simulate.hpp"

#include <QString>

#include <cstdint>

class QWidget;

namespace gpuplan::gui {

/// Bytes a latency CDF takes per request while it is prepared (8 B sorted value, 16 B point).
inline constexpr double kCdfBytesPerRequest = 24.0;
/// Bytes the simulator's exact-percentile statistics keep per request (see above).
inline constexpr double kStatisticsBytesPerRequest = 96.0;
/// Requests per class (and overall) whose samples are kept exactly.
inline constexpr std::int64_t kExactSamplesPerClass = std::int64_t{1} << 20;
/// The most bins a time series has (SimResult::series_bin_s doubles past it).
inline constexpr std::int64_t kMaxSeriesBins = 65'536;
/// The default budget above which the app asks before a run: 2 GiB, a quarter of an 8 GiB
/// laptop. Changed in the Simulation tab (kept in the app's settings).
inline constexpr double kDefaultMemoryBudgetBytes = 2.0 * kGiB;

struct RunMemoryEstimate {
    std::int64_t requests = 0;    ///< requests the run is expected to send
    double span_s = 0;            ///< simulated seconds it is expected to cover (0: unknown)
    double per_request_bytes = 0; ///< kept record, CDF copy and statistics per request
    double request_bytes = 0;     ///< all requests
    double series_bytes = 0;      ///< the time series (per-second cost × bins)
    double total_bytes = 0;
};

/// The memory a run of `s` with `o` holds in the app (the terms above). The request count is
/// the simulator's: `o.requests`, else workload.requests, else the trace's length, else
/// duration × rate for an open-loop process, else 1000; agent sessions count `steps` requests
/// each. The span is duration, else requests ÷ rate (open loop), else the trace's span, else
/// the bin cap.
[[nodiscard]] RunMemoryEstimate estimate_run_memory(const model::Scenario& s,
                                                    const sim::SimOptions& o);

/// The budget in bytes from the app's settings (default kDefaultMemoryBudgetBytes).
[[nodiscard]] double memoryBudgetBytes();
void setMemoryBudgetBytes(double bytes);

/// "1.2 GiB", "350 MiB".
[[nodiscard]] QString formatBytes(double bytes);

/// True when the run may start: its estimate is within the budget, or the user chose to run it
/// anyway in the dialog that says how much it needs (Continue / Cancel, Cancel the default).
[[nodiscard]] bool confirmRunMemory(QWidget* parent, const RunMemoryEstimate& e, double budget);

} // namespace gpuplan::gui
