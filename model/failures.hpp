#pragma once
/// Training with failures, in closed form: failure rates from a published interruption count,
/// checkpoint and restart costs from bytes ÷ storage bandwidth, the optimal checkpoint interval
/// (Young 1974; Daly 2006), the expected wall time of a run that restarts from its last
/// checkpoint after each failure (Daly 2006), goodput, lost work, and the spare nodes that keep
/// the run at full size (model/availability.hpp, the one availability rule). Pure functions; the
/// formulas and their sources are in failures.cpp and docs/failures.md.

#include "model/availability.hpp"
#include "model/units.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// Llama 3 (Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783, §3.3.4): 419 unexpected
/// interruptions in a 54-day snapshot of pre-training on 16,384 H100 GPUs.
inline constexpr double kLlama3UnexpectedInterruptions = 419.0;
inline constexpr double kLlama3SnapshotDays = 54.0;
inline constexpr double kLlama3Gpus = 16384.0;
/// The per-GPU mean time between job interruptions implied when not given: 54 d × 24 h × 16,384
/// GPUs / 419 = 50,676 GPU-hours. Assumption [U]: every interruption cause (GPU, HBM, network,
/// host, software) scales with the GPU count, and failures are independent and exponential.
inline constexpr Seconds kDefaultGpuMtbf{kLlama3SnapshotDays * 86400.0 * kLlama3Gpus /
                                         kLlama3UnexpectedInterruptions};
/// Checkpoint storage bandwidth per GPU of the job when not given: Llama 3 (§3.3.1) stores
/// checkpoints on Tectonic at 2 TB/s sustained for 16,384 GPUs, 122 MB/s per GPU. Assumption
/// [U]: the storage a job gets scales with its GPUs, and reads are as fast as writes.
inline constexpr BytesPerSecond kDefaultStorageBandwidthPerGpu{2e12 / kLlama3Gpus};
/// Fixed start-up of a restart when not given (rescheduling, container and process start,
/// NCCL initialisation, data-loader warm-up), on top of reading the checkpoint: a stated guess
/// of 10 minutes [U].
inline constexpr Seconds kDefaultRestartOverhead{600.0};
/// Time to repair or replace a failed node when not given: a stated guess of 24 h [U].
inline constexpr Seconds kDefaultRepairTime{24.0 * 3600.0};
/// Probability that a restart finds enough healthy nodes, which sizes the spares when not
/// given: a stated target of 0.99 [U].
inline constexpr double kDefaultSparesTarget = 0.99;

/// The `failures:` block of a training job. Unset fields take the documented defaults above.
struct FailureConfig {
    std::optional<Seconds> gpu_mtbf;               ///< mean time between interruptions per GPU
    std::optional<BytesPerSecond> write_bandwidth; ///< checkpoint writes, the whole job
    std::optional<BytesPerSecond> read_bandwidth;  ///< checkpoint reads at restart, whole job
    std::optional<Seconds> restart_overhead;       ///< fixed start-up of a restart
    std::optional<Seconds> repair_time;            ///< a failed node's repair or replacement
    std::optional<Seconds> checkpoint_interval;    ///< compute between checkpoints; nullopt:
                                                   ///< Young's optimum
    std::optional<double> spares_target;           ///< in (0, 1)
    friend bool operator==(const FailureConfig&, const FailureConfig&) = default;
};

/// Young's first-order optimal compute time between checkpoints, sqrt(2 · δ · M), for a
/// checkpoint that takes δ and a mean time between failures M (Young 1974, CACM 17(9):530).
/// Throws InvalidArgument unless δ ≥ 0 and M > 0.
[[nodiscard]] Seconds young_interval(Seconds checkpoint, Seconds mtbf);

/// Daly's higher-order optimum (Daly 2006, FGCS 22(3):303): sqrt(2δM)·[1 + (1/3)·sqrt(δ/(2M)) +
/// (δ/(2M))/9] − δ while δ < 2M, else M. Throws as young_interval.
[[nodiscard]] Seconds daly_interval(Seconds checkpoint, Seconds mtbf);

/// Daly's (2006) expected wall time of a job of `solve` seconds of work that checkpoints after
/// every `interval` of work (each checkpoint takes `checkpoint`), fails after exponential times
/// of mean `mtbf`, and after each failure spends `restart` before resuming from the last
/// checkpoint: M · e^(R/M) · (e^((τ+δ)/M) − 1) · T_s/τ; +inf when that overflows (the job
/// practically never finishes). Throws InvalidArgument unless
/// solve ≥ 0, interval > 0, checkpoint ≥ 0, restart ≥ 0 and mtbf > 0.
[[nodiscard]] Seconds expected_wall_time(Seconds solve, Seconds interval, Seconds checkpoint,
                                         Seconds restart, Seconds mtbf);

/// What a training job brings to the failure model.
struct FailureInputs {
    Seconds solve_time; ///< the failure-free time to train
    int gpus = 1;
    int gpus_per_node = 8;
    Bytes checkpoint_size; ///< bytes written per checkpoint
    Bytes restart_read;    ///< bytes read at a restart (the checkpoint, plus a frozen base)
    FailureConfig config;
    friend bool operator==(const FailureInputs&, const FailureInputs&) = default;
};

/// The training-with-failures answer. solve_time + checkpoint_overhead + restart_time_total +
/// lost_work = wall_time.
struct TrainingFailures {
    Seconds gpu_mtbf;  ///< per GPU
    Seconds node_mtbf; ///< gpu_mtbf / GPUs per node
    Seconds job_mtbf;  ///< gpu_mtbf / GPUs: the job stops when any of its GPUs does
    int nodes = 0;     ///< ceil(GPUs / GPUs per node)
    Bytes checkpoint_size;
    Bytes restart_read;
    BytesPerSecond write_bandwidth;
    BytesPerSecond read_bandwidth;
    Seconds checkpoint_time;  ///< δ = checkpoint_size / write_bandwidth
    Seconds restart_overhead; ///< the fixed start-up
    Seconds restart_time;     ///< R = restart_read / read_bandwidth + restart_overhead
    Seconds young_interval;   ///< sqrt(2 δ M)
    Seconds daly_interval;    ///< Daly's higher-order optimum
    Seconds interval;         ///< the interval used: given, else Young's
    bool interval_given = false;
    Seconds solve_time; ///< without failures
    /// false when failures come so often against the restart and checkpoint times that the
    /// expected time overflows (e^(R/M) beyond a double): the run practically never finishes,
    /// and wall_time, expected_failures, restart_time_total and lost_work are 0, goodput 0.
    bool finishes = true;
    Seconds wall_time;            ///< expected, with failures (Daly 2006)
    double goodput = 0;           ///< solve_time / wall_time
    double expected_failures = 0; ///< wall_time / job_mtbf
    Seconds checkpoint_overhead;  ///< (solve_time / interval) · δ
    Seconds restart_time_total;   ///< expected_failures · R
    Seconds lost_work;            ///< the rest: work redone after failures
    double gpu_hours = 0; ///< wall_time × GPUs (spares not counted); 0 when it never finishes
    Seconds repair_time;
    double spares_target = 0;
    double node_up = 0;             ///< node MTBF / (node MTBF + repair time)
    std::optional<int> spare_nodes; ///< smallest k with P(≥ nodes of nodes + k up) ≥ target
    double availability_with_spares = 0;
    double availability_without_spares = 0;
    friend bool operator==(const TrainingFailures&, const TrainingFailures&) = default;
};

/// The failure model of one training job. Throws InvalidArgument for a non-positive MTBF,
/// bandwidth or interval, a negative overhead or repair time, or a target outside (0, 1).
[[nodiscard]] TrainingFailures estimate_failures(const FailureInputs& in);

/// A serving fleet's availability: the block's inputs resolved and the answer.
struct ServingAvailability {
    AvailabilityInputs inputs; ///< needed replicas, MTBF and MTTR per replica, target
    bool mtbf_default = false; ///< the MTBF is the per-GPU default ÷ GPUs per replica
    bool mttr_default = false; ///< the MTTR is kDefaultRepairTime
    AvailabilityResult result;
    friend bool operator==(const ServingAvailability&, const ServingAvailability&) = default;
};

/// Resolves `config` for `replicas` replicas (when the block names none) of `gpus_per_replica`
/// GPUs each and answers it with plan_availability. Throws InvalidArgument for a bad input.
[[nodiscard]] ServingAvailability serving_availability(const AvailabilityConfig& config,
                                                       int replicas, int gpus_per_replica);

} // namespace gpuplan::model
