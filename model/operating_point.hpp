#pragma once
/// The operating point: the one load every figure of a scenario is computed at. A scenario
/// either holds a number of sequences in flight (a closed loop) or offers requests at a rate;
/// when it says neither, every command uses the same documented default, a closed loop at the
/// most sequences the engine runs at once for the requested lengths. Resolved here, once; the
/// serving estimate, power, cost, the sizing search, the simulator and the desktop app read it
/// from here and report `why` with their figures (docs/operating-point.md).

#include "model/memory.hpp"

#include <optional>
#include <string>

namespace gpuplan::model {

struct Workload;

/// How the load is given.
enum class LoadKind {
    ClosedLoop,   ///< a fixed number of sequences in flight, each replaced as it finishes
    OfferedRate,  ///< requests arrive at a rate (Poisson, gamma, constant, a curve or a trace)
    OfflineBatch, ///< a fixed number of requests all arrive at once (offline throughput)
};

/// "closed_loop", "offered_rate", "offline_batch".
[[nodiscard]] const char* to_string(LoadKind k);

/// The load a scenario's figures are computed at.
struct OperatingPoint {
    LoadKind kind = LoadKind::ClosedLoop;
    /// Sequences in flight over the whole deployment. Closed loop: the given (or default)
    /// concurrency. Offered rate: the mean number in flight by Little's law (rate × latency),
    /// filled in by the serving estimate; capped by what the deployment runs at once.
    int concurrency = 1;
    std::optional<double> requests_per_s; ///< offered rate: the mean request rate
    /// Offline batch: the requests queued at time 0 (concurrency is then how many of them the
    /// deployment runs at once).
    std::optional<int> batch_requests;
    bool defaulted = false; ///< the scenario gave no load: the default applies
    /// Offered rate: offered output tokens/s over the most the deployment serves (> 1: the
    /// queue grows without bound). Closed loop: nullopt.
    std::optional<double> utilisation;
    std::string why; ///< where the load comes from, in words
    friend bool operator==(const OperatingPoint&, const OperatingPoint&) = default;
};

/// The most sequences the whole deployment runs at once for the workload's lengths: dp ×
/// min(max_num_seqs, what the KV cache holds at the average context). 0 when it does not fit.
[[nodiscard]] int deployment_capacity(const MemoryEstimate& mem, const Workload& w, int dp);

/// The mean arrival rate of the workload, or nullopt for a closed loop: the arrival process's
/// own rate, else Workload::requests_per_s; for a trace, its request count over its span
/// (divided by the speed-up). Curves count at their base rate.
[[nodiscard]] std::optional<double> arrival_rate(const Workload& w);

/// The size of the workload's offline batch: Workload::batch_requests, else the rows of a
/// replayed trace whose arrival times are all equal (every row at one instant, as offline
/// benchmarks write them); nullopt for any other load.
[[nodiscard]] std::optional<int> offline_batch_size(const Workload& w);

/// The offered mean request rate: arrival_rate, times the requests each arrival brings (an
/// agent session its steps; model/workload_mix.hpp).
[[nodiscard]] std::optional<double> offered_rate(const Workload& w);

/// Resolves the load: an offline batch when the workload is one (concurrency: as many of its
/// requests as the deployment runs at once); an offered rate when the workload has one
/// (concurrency then left at the deployment's capacity, for the serving estimate to refine by
/// Little's law); else a closed loop at Workload::concurrency, else at the closed-loop clients
/// of the arrival process, else the default: the deployment's capacity for the requested
/// lengths. Throws InvalidArgument when the workload gives two loads (a concurrency and a rate,
/// a batch and either, or two different closed loops).
[[nodiscard]] OperatingPoint resolve_operating_point(const MemoryEstimate& mem, const Workload& w,
                                                     int dp);

/// Makes the workload a closed loop of `concurrency` sequences (a command-line override): any
/// offered rate is cleared, and a closed-loop arrival gets that many clients.
void set_closed_loop(Workload& w, int concurrency);

/// Makes the workload an open loop at `rate` requests/s (a command-line override): the
/// concurrency is cleared, and a closed-loop arrival becomes Poisson; a trace keeps its times.
void set_offered_rate(Workload& w, double rate);

/// Makes the workload an offline batch of `requests` requests at time 0 (a command-line
/// override): concurrency and rates are cleared, a closed-loop arrival becomes Poisson (unused).
/// Throws InvalidArgument when the workload replays a trace (its rows are the requests).
void set_offline_batch(Workload& w, int requests);

} // namespace gpuplan::model
