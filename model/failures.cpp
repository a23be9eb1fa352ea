// Training with failures: Young/Daly checkpoint intervals, Daly's expected wall time, spares.
#include "model/failures.hpp"
#include "model/checked_format.hpp"

#include "model/availability.hpp"
#include "model/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace gpuplan::model {

namespace {

// The shortest readable form of a figure in a message (printf's %.6g).
std::string num(double v) {
    return gpuplan::checked_format("{:.6g}", v);
}

void require(bool ok, const std::string& what, double value, const std::string& expected) {
    if (!ok) {
        throw InvalidArgument(what + " " + num(value) + " " + expected);
    }
}

void check_interval_inputs(Seconds checkpoint, Seconds mtbf) {
    require(checkpoint.si() >= 0 && std::isfinite(checkpoint.si()), "checkpoint time",
            checkpoint.si(), "s must be zero or more");
    require(mtbf.si() > 0 && std::isfinite(mtbf.si()), "mtbf", mtbf.si(),
            "s must be a positive time; give e.g. '50000 h'");
}

/// Goodput and the split of the expected wall time into work, checkpoints, restarts and lost work.
void finish_split(TrainingFailures& f) {
    f.goodput = f.wall_time.si() > 0 ? f.solve_time / f.wall_time : 1.0;
    f.expected_failures = f.wall_time / f.job_mtbf;
    f.checkpoint_overhead = f.checkpoint_time * (f.solve_time / f.interval);
    f.restart_time_total = f.restart_time * f.expected_failures;
    f.lost_work = f.wall_time - f.solve_time - f.checkpoint_overhead - f.restart_time_total;
    if (f.lost_work.si() < 0) {
        f.lost_work = Seconds(0.0); // rounding, or restarts cut short by further failures
    }
}

} // namespace

Seconds young_interval(Seconds checkpoint, Seconds mtbf) {
    check_interval_inputs(checkpoint, mtbf);
    // Young 1974: minimising the lost time per unit of work to first order in δ/M.
    return Seconds(std::sqrt(2.0 * checkpoint.si() * mtbf.si()));
}

Seconds daly_interval(Seconds checkpoint, Seconds mtbf) {
    check_interval_inputs(checkpoint, mtbf);
    const double d = checkpoint.si();
    const double m = mtbf.si();
    if (d >= 2.0 * m) {
        return mtbf; // Daly 2006: beyond δ = 2M the optimum is M itself
    }
    const double x = d / (2.0 * m);
    return Seconds(std::sqrt(2.0 * d * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - d);
}

Seconds expected_wall_time(Seconds solve, Seconds interval, Seconds checkpoint, Seconds restart,
                           Seconds mtbf) {
    require(solve.si() >= 0 && std::isfinite(solve.si()), "solve time", solve.si(),
            "s must be zero or more");
    require(interval.si() > 0 && std::isfinite(interval.si()), "checkpoint interval", interval.si(),
            "s must be positive");
    require(restart.si() >= 0 && std::isfinite(restart.si()), "restart time", restart.si(),
            "s must be zero or more");
    check_interval_inputs(checkpoint, mtbf);
    // Daly 2006: each segment of τ work plus a δ checkpoint is retried until it runs failure-free,
    // with a restart R (itself interruptible) after every failure; T_s/τ segments.
    const double m = mtbf.si();
    const double segments = solve.si() / interval.si();
    return Seconds(m * std::exp(restart.si() / m) *
                   std::expm1((interval.si() + checkpoint.si()) / m) * segments);
}

TrainingFailures estimate_failures(const FailureInputs& in) {
    const FailureConfig& c = in.config;
    require(in.gpus >= 1, "gpu count", in.gpus, "must be at least 1");
    require(in.gpus_per_node >= 1, "gpus per node", in.gpus_per_node, "must be at least 1");
    TrainingFailures f;
    f.gpu_mtbf = c.gpu_mtbf.value_or(kDefaultGpuMtbf);
    require(f.gpu_mtbf.si() > 0 && std::isfinite(f.gpu_mtbf.si()), "gpu_mtbf", f.gpu_mtbf.si(),
            "s must be a positive time; give e.g. '50000 h'");
    const int per_node = std::min(in.gpus, in.gpus_per_node);
    f.nodes = (in.gpus + in.gpus_per_node - 1) / in.gpus_per_node;
    f.node_mtbf = f.gpu_mtbf / per_node;
    f.job_mtbf = f.gpu_mtbf / in.gpus;

    f.checkpoint_size = in.checkpoint_size;
    f.restart_read = in.restart_read;
    f.write_bandwidth = c.write_bandwidth.value_or(kDefaultStorageBandwidthPerGpu * in.gpus);
    f.read_bandwidth = c.read_bandwidth.value_or(kDefaultStorageBandwidthPerGpu * in.gpus);
    require(f.write_bandwidth.si() > 0, "checkpoint write bandwidth", f.write_bandwidth.si(),
            "B/s must be positive");
    require(f.read_bandwidth.si() > 0, "checkpoint read bandwidth", f.read_bandwidth.si(),
            "B/s must be positive");
    f.checkpoint_time = f.checkpoint_size / f.write_bandwidth;
    f.restart_overhead = c.restart_overhead.value_or(kDefaultRestartOverhead);
    require(f.restart_overhead.si() >= 0, "restart overhead", f.restart_overhead.si(),
            "s must be zero or more");
    // A cold start: read the checkpoint (and any frozen base) at the read bandwidth, plus the
    // fixed start-up.
    f.restart_time = f.restart_read / f.read_bandwidth + f.restart_overhead;

    f.young_interval = young_interval(f.checkpoint_time, f.job_mtbf);
    f.daly_interval = daly_interval(f.checkpoint_time, f.job_mtbf);
    f.interval_given = c.checkpoint_interval.has_value();
    f.interval = c.checkpoint_interval.value_or(f.young_interval);
    if (f.interval.si() <= 0) {
        // A free checkpoint (δ = 0) makes Young's optimum 0: checkpoint after every second of work
        // is the limit; one second keeps the formula finite.
        f.interval = f.interval_given ? f.interval : Seconds(1.0);
    }

    f.solve_time = in.solve_time;
    f.wall_time =
        expected_wall_time(f.solve_time, f.interval, f.checkpoint_time, f.restart_time, f.job_mtbf);
    if (!std::isfinite(f.wall_time.si())) {
        // e^(R/M) or e^((τ+δ)/M) overflows: the run practically never completes (a result, not
        // an error; the report says why).
        f.finishes = false;
        f.wall_time = Seconds(0.0);
        f.goodput = 0;
        f.checkpoint_overhead = f.checkpoint_time * (f.solve_time / f.interval);
    } else {
        finish_split(f);
        f.gpu_hours = f.wall_time.si() * in.gpus / 3600.0;
    }

    f.repair_time = c.repair_time.value_or(kDefaultRepairTime);
    f.spares_target = c.spares_target.value_or(kDefaultSparesTarget);
    const AvailabilityResult a =
        plan_availability({f.nodes, f.node_mtbf, f.repair_time, f.spares_target});
    f.node_up = a.unit_up;
    f.spare_nodes = a.spares;
    f.availability_with_spares = a.with_spares;
    f.availability_without_spares = a.without_spares;
    return f;
}

ServingAvailability serving_availability(const AvailabilityConfig& config, int replicas,
                                         int gpus_per_replica) {
    require(gpus_per_replica >= 1, "gpus per replica", gpus_per_replica, "must be at least 1");
    ServingAvailability a;
    a.inputs.needed = config.replicas.value_or(replicas);
    require(a.inputs.needed >= 1, "replicas needed", a.inputs.needed, "must be at least 1");
    // A replica stops when any of its GPUs does: the per-GPU rate times its GPUs.
    a.mtbf_default = !config.mtbf.has_value();
    a.inputs.mtbf = config.mtbf.value_or(kDefaultGpuMtbf / gpus_per_replica);
    a.mttr_default = !config.mttr.has_value();
    a.inputs.mttr = config.mttr.value_or(kDefaultRepairTime);
    a.inputs.target = config.target;
    a.result = plan_availability(a.inputs);
    return a;
}

} // namespace gpuplan::model
