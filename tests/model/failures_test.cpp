// Training with failures against hand calculations: Young/Daly intervals, Daly's expected wall
// time, goodput, the cost split, the default rate from Llama 3, and the spares.
#include "model/failures.hpp"

#include "model/availability.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuplan::model {
namespace {

TEST(Failures, YoungIntervalBySquareRoot) {
    // δ = 60 s, M = 3 h = 10,800 s: sqrt(2 · 60 · 10,800) = sqrt(1,296,000) = 1,138.4 s.
    EXPECT_NEAR(young_interval(Seconds(60.0), Seconds(10800.0)).si(), 1138.4200, 1e-3);
    // δ = 50 s, M = 10,000 s: sqrt(1e6) = 1,000 s exactly.
    EXPECT_DOUBLE_EQ(young_interval(Seconds(50.0), Seconds(10000.0)).si(), 1000.0);
}

TEST(Failures, DalyHigherOrderInterval) {
    // δ = 50, M = 10,000: x = δ/(2M) = 0.0025, sqrt(x) = 0.05;
    // 1000 · (1 + 0.05/3 + 0.0025/9) − 50 = 1000 + 16.6667 + 0.2778 − 50 = 966.944 s.
    EXPECT_NEAR(daly_interval(Seconds(50.0), Seconds(10000.0)).si(), 966.9444, 1e-3);
    // δ ≥ 2M: the optimum is M.
    EXPECT_DOUBLE_EQ(daly_interval(Seconds(300.0), Seconds(100.0)).si(), 100.0);
}

TEST(Failures, ExpectedWallTimeSimpleCases) {
    // Free checkpoints and restarts, τ = M ln 2: T_w = M (e^(ln 2) − 1) T_s / τ = T_s / ln 2,
    // so the goodput is ln 2 = 0.693.
    const double m = 3600.0;
    const Seconds w = expected_wall_time(Seconds(1e6), Seconds(m * std::log(2.0)), Seconds(0.0),
                                         Seconds(0.0), Seconds(m));
    EXPECT_NEAR(1e6 / w.si(), std::log(2.0), 1e-12);
    // M = 10,000 s, τ = 1,000, δ = 50, R = 100, T_s = 100,000 s (100 segments):
    // 10,000 · e^0.01 · (e^0.105 − 1) · 100 = 10,000 · 1.0100502 · 0.1107106 · 100 = 111,823.3 s.
    const Seconds w2 = expected_wall_time(Seconds(1e5), Seconds(1000.0), Seconds(50.0),
                                          Seconds(100.0), Seconds(10000.0));
    EXPECT_NEAR(w2.si(), 1e4 * std::exp(0.01) * (std::exp(0.105) - 1.0) * 100.0, 1e-6);
    EXPECT_NEAR(w2.si(), 111823.3, 0.1);
    // No failures (M → ∞): the work plus one checkpoint per interval.
    const Seconds w3 = expected_wall_time(Seconds(1e5), Seconds(1000.0), Seconds(50.0),
                                          Seconds(100.0), Seconds(1e15));
    EXPECT_NEAR(w3.si(), 1e5 + 100 * 50.0, 1e-2);
}

TEST(Failures, EstimateUsesTheDefaultsAndSplitsTheTime) {
    FailureInputs in;
    in.solve_time = Seconds(10 * 86400.0);
    in.gpus = 1024;
    in.gpus_per_node = 8;
    in.checkpoint_size = Bytes(1e12);
    in.restart_read = Bytes(1e12);
    const TrainingFailures f = estimate_failures(in);
    // Llama 3: 54 d · 24 h · 16,384 GPUs / 419 = 50,676.5 GPU-hours per interruption.
    EXPECT_NEAR(f.gpu_mtbf.si() / 3600.0, 54.0 * 24.0 * 16384.0 / 419.0, 1e-6);
    EXPECT_NEAR(f.job_mtbf.si(), f.gpu_mtbf.si() / 1024.0, 1e-6);
    EXPECT_NEAR(f.node_mtbf.si(), f.gpu_mtbf.si() / 8.0, 1e-6);
    EXPECT_EQ(f.nodes, 128);
    // Default storage: 2 TB/s / 16,384 GPUs × 1,024 GPUs = 125 GB/s; 1 TB takes 8 s each way.
    EXPECT_NEAR(f.checkpoint_time.si(), 8.0, 1e-9);
    EXPECT_NEAR(f.restart_time.si(), 8.0 + 600.0, 1e-9); // + the 10-minute start-up
    EXPECT_NEAR(f.interval.si(), std::sqrt(2.0 * 8.0 * f.job_mtbf.si()), 1e-9);
    EXPECT_FALSE(f.interval_given);
    EXPECT_NEAR(f.goodput, f.solve_time / f.wall_time, 1e-15);
    EXPECT_LT(f.goodput, 1.0);
    EXPECT_NEAR(f.expected_failures, f.wall_time / f.job_mtbf, 1e-12);
    EXPECT_NEAR(f.gpu_hours, f.wall_time.si() * 1024 / 3600.0, 1e-6);
    // The parts add up to the wall time.
    EXPECT_NEAR((f.solve_time + f.checkpoint_overhead + f.restart_time_total + f.lost_work).si(),
                f.wall_time.si(), 1e-6);
    // Spares: the one availability rule over the nodes, repair 24 h, target 0.99.
    const double p = unit_availability(f.node_mtbf, Seconds(24 * 3600.0));
    EXPECT_DOUBLE_EQ(f.node_up, p);
    EXPECT_EQ(f.spare_nodes, spares_for_availability(128, p, 0.99));
    EXPECT_GE(f.availability_with_spares, 0.99);
}

TEST(Failures, GoodputByHandForAGivenInterval) {
    // One GPU of MTBF 10,000 s, checkpoint 50 s (50 GB at 1 GB/s), restart 100 s (read 40 GB at
    // 1 GB/s + 60 s), interval 1,000 s, 100,000 s of work: T_w = 111,823.3 s, goodput 0.89427.
    FailureInputs in;
    in.solve_time = Seconds(1e5);
    in.gpus = 1;
    in.gpus_per_node = 1;
    in.checkpoint_size = Bytes(50e9);
    in.restart_read = Bytes(40e9);
    in.config.gpu_mtbf = Seconds(10000.0);
    in.config.write_bandwidth = BytesPerSecond(1e9);
    in.config.read_bandwidth = BytesPerSecond(1e9);
    in.config.restart_overhead = Seconds(60.0);
    in.config.checkpoint_interval = Seconds(1000.0);
    const TrainingFailures f = estimate_failures(in);
    EXPECT_TRUE(f.interval_given);
    EXPECT_DOUBLE_EQ(f.checkpoint_time.si(), 50.0);
    EXPECT_DOUBLE_EQ(f.restart_time.si(), 100.0);
    EXPECT_NEAR(f.goodput, 0.89427, 1e-5);
    EXPECT_NEAR(f.checkpoint_overhead.si(), 100 * 50.0, 1e-9);
}

TEST(Failures, BadInputIsAnInputError) {
    FailureInputs in;
    in.solve_time = Seconds(1e5);
    in.checkpoint_size = Bytes(1e9);
    in.restart_read = Bytes(1e9);
    in.config.gpu_mtbf = Seconds(-5.0);
    EXPECT_THROW((void)estimate_failures(in), InvalidArgument);
    in.config.gpu_mtbf.reset();
    in.config.spares_target = 1.0;
    EXPECT_THROW((void)estimate_failures(in), InvalidArgument);
    EXPECT_THROW((void)young_interval(Seconds(10.0), Seconds(0.0)), InvalidArgument);
    EXPECT_THROW((void)expected_wall_time(Seconds(1.0), Seconds(0.0), Seconds(1.0), Seconds(1.0),
                                          Seconds(1.0)),
                 InvalidArgument);
}

TEST(Failures, ARunThatFailsFarFasterThanItRestartsNeverFinishes) {
    // M = 1 s, R = 10 min: e^(R/M) = e^600 ... the formula overflows; a result, not an error.
    FailureInputs in;
    in.solve_time = Seconds(1e6);
    in.gpus = 1;
    in.gpus_per_node = 1;
    in.checkpoint_size = Bytes(1e9);
    in.restart_read = Bytes(1e9);
    in.config.gpu_mtbf = Seconds(0.5);
    in.config.write_bandwidth = BytesPerSecond(1e9);
    in.config.read_bandwidth = BytesPerSecond(1e9);
    const TrainingFailures f = estimate_failures(in);
    EXPECT_FALSE(f.finishes);
    EXPECT_EQ(f.goodput, 0.0);
    EXPECT_TRUE(std::isinf(
        expected_wall_time(Seconds(1.0), Seconds(1.0), Seconds(1.0), Seconds(1e4), Seconds(1.0))
            .si()));
}

TEST(Failures, ServingAvailabilityDefaultsToThePerGpuRate) {
    AvailabilityConfig c;
    c.target = 0.97;
    c.mtbf = Seconds(90.0);
    c.mttr = Seconds(10.0);
    const ServingAvailability a = serving_availability(c, 2, 4);
    EXPECT_EQ(a.inputs.needed, 2);
    EXPECT_EQ(a.result.spares, 1);
    EXPECT_NEAR(a.result.with_spares, 0.972, 1e-12);
    AvailabilityConfig d;
    d.target = 0.999;
    const ServingAvailability b = serving_availability(d, 3, 4);
    EXPECT_TRUE(b.mtbf_default);
    EXPECT_NEAR(b.inputs.mtbf.si(), kDefaultGpuMtbf.si() / 4.0, 1e-6);
    EXPECT_DOUBLE_EQ(b.inputs.mttr.si(), kDefaultRepairTime.si());
}

} // namespace
} // namespace gpuplan::model
