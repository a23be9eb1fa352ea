// The capacity at the SLO (model::slo_capacity) confirmed by the simulator: at the predicted
// rate, Poisson arrivals, the simulated P99 TTFT and TPOT are near the limits and within them
// up to a stated tolerance, and the capacity is a share below 1 of the throughput capacity.
#include "model/slo_capacity.hpp"

#include "model/operating_point.hpp"
#include "plan/load_curve.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace gpuplan::plan {
namespace {

struct Measured {
    model::SloCapacity capacity;
    SimulatedPoint sim;
};

Measured measure(const model::Scenario& s, int requests) {
    Measured m;
    m.capacity = model::slo_capacity(s.deployment, s.workload, s.slo, model::default_profile());
    const auto points = simulate_curve(s, model::default_profile(), std::nullopt,
                                       LoadAxis::RequestRate, {m.capacity.rate}, requests, 1);
    m.sim = points.at(0);
    std::printf("bound %s: capacity %.3f of %.3f req/s (%.1f %%); predicted P99 TTFT %.1f ms TPOT "
                "%.2f ms; simulated P99 TTFT %.1f ms TPOT %.2f ms, %.1f tok/s\n",
                model::to_string(m.capacity.bound), m.capacity.rate, m.capacity.throughput_rate,
                m.capacity.ratio * 100, m.capacity.at.ttft.si() * 1e3,
                m.capacity.at.tpot.si() * 1e3, m.sim.ttft_p99_s * 1e3, m.sim.tpot_p99_s * 1e3,
                m.sim.throughput);
    return m;
}

model::Scenario scenario() {
    // Llama-3-8B on one H100, 1024 + 128 tokens (the plan tests' fixture).
    return sim::test::llama8b_scenario(1024, 128, 1.0, 4000);
}

// A TTFT target of 200 ms at P99: the capacity is set by the prompts' queue. At the predicted
// rate the simulated P99 TTFT is within 25 % of the target (measured: see docs/operating-point.md,
// "Capacity at the SLO"; the M/D/1 prompt queue is accurate to about 10 % up to 70 % of the
// throughput capacity here and conservative above).
TEST(SloCapacitySim, TtftBoundByQueueing) {
    model::Scenario s = scenario();
    s.slo.ttft = Seconds(0.200);
    const Measured m = measure(s, 4000);
    ASSERT_TRUE(m.sim.ok) << m.sim.reason;
    EXPECT_EQ(m.capacity.bound, model::SloBound::TtftQueueing);
    EXPECT_LT(m.capacity.ratio, 1.0);
    EXPECT_GT(m.capacity.ratio, 0.5);
    EXPECT_NEAR(m.sim.ttft_p99_s, 0.200, 0.25 * 0.200);
    EXPECT_EQ(m.sim.failed, 0);
}

// A TPOT target of 20 ms at P99 (TTFT 2 s): the capacity is set by the prompt chunks in the
// decode steps. At the predicted rate the simulated P99 TPOT is within 15 % above the target.
// Before the TPOT tail counted the branching of chunk steps (each chunk lengthens the lives in
// which more prompts arrive) and the running batch's fluctuation, the capacity was 75.9 % of the
// throughput capacity and the simulator measured 26.4 ms there; now 69.5 % and 21.9 ms. What is
// left: the analytic mean TPOT is about 5 % under the simulated mean at this load and the
// simulated tail is skewed beyond the normal approximation (docs/operating-point.md).
TEST(SloCapacitySim, TpotBoundByPrefillInterference) {
    model::Scenario s = scenario();
    s.slo.ttft = Seconds(2.0);
    s.slo.tpot = Seconds(0.020);
    const Measured m = measure(s, 4000);
    ASSERT_TRUE(m.sim.ok) << m.sim.reason;
    EXPECT_EQ(m.capacity.bound, model::SloBound::TpotPrefill);
    EXPECT_LT(m.capacity.ratio, 1.0);
    EXPECT_GT(m.capacity.ratio, 0.5);
    EXPECT_GE(m.sim.tpot_p99_s, 0.020 * 0.9);
    EXPECT_LE(m.sim.tpot_p99_s, 0.020 * 1.15);
    EXPECT_LE(m.sim.ttft_p99_s, 2.0);
}

} // namespace
} // namespace gpuplan::plan
