// Issue 12: inputs that imply a run longer than the simulator's span limit, more requests than
// its request limit, or times beyond its clock are refused before the run with a message that
// names the key, instead of exhausting memory, running until killed or wrapping the clock.
#include "model/error.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;

std::string error_of(const model::Scenario& s) {
    try {
        (void)simulate(s, SimOptions{});
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "no error";
}

TEST(SimLimits, TraceSpanningTwelveTeraSecondsIsRefusedUpFront) {
    model::Scenario s = llama8b_scenario();
    s.workload.requests.reset();
    s.workload.arrival.kind = model::ArrivalKind::Trace;
    s.workload.trace = {{Seconds(0), 100, 10}, {Seconds(1e12), 100, 10}};
    EXPECT_EQ(error_of(s),
              "workload.trace (span of the arrival times / trace_speedup): 1e+12 s is beyond the "
              "simulator's limit of 3.1536e+08 s (10 years) of simulated time; simulate a shorter "
              "window (a representative day, or hours at the peak rate)");
}

TEST(SimLimits, TinyRateWithARequestCountIsRefusedUpFront) {
    // 1000 requests at 1e-9 requests/s take 1e12 s on average.
    model::Scenario s = llama8b_scenario(512, 128, 1e-9, 1000);
    EXPECT_EQ(error_of(s).rfind("workload.requests / workload.requests_per_s (the expected time to "
                                "send 1000 requests): 1e+12 s is beyond the simulator's limit",
                                0),
              0u)
        << error_of(s);
}

TEST(SimLimits, DurationBeyondTheSpanLimitIsRefused) {
    model::Scenario s = llama8b_scenario();
    s.workload.requests.reset();
    s.workload.duration = Seconds(1e12);
    EXPECT_EQ(error_of(s).rfind("workload.duration: 1e+12 s is beyond the simulator's limit of "
                                "3.1536e+08 s (10 years)",
                                0),
              0u)
        << error_of(s);
}

TEST(SimLimits, DurationTimesRateAboveTheRequestLimitIsRefused) {
    // 6 days at 4000 requests/s: 518400 × 4000 = 2.07e9 requests > 2^30 = 1073741824.
    model::Scenario s = llama8b_scenario(512, 128, 4000.0);
    s.workload.requests.reset();
    s.workload.duration = Seconds(518400);
    const std::string e = error_of(s);
    EXPECT_EQ(e.rfind("workload.duration x workload.requests_per_s: 518400 s at ", 0), 0u) << e;
    EXPECT_NE(e.find("is about 2073600000 requests, above the limit of 1073741824; shorten the "
                     "duration or set workload.requests"),
              std::string::npos)
        << e;
}

TEST(SimLimits, ColdStartOfAPetaSecondIsRefused) {
    model::Scenario s = llama8b_scenario();
    s.cluster.cold_start.startup = Seconds(1e15);
    s.cluster.cold_start.at_start = true;
    EXPECT_EQ(error_of(s).rfind("cluster.cold_start (startup + weights / load_bandwidth): 1e+15 s "
                                "is beyond the simulator's limit",
                                0),
              0u)
        << error_of(s);
}

TEST(SimLimits, SwapAtAVanishingBandwidthIsAnInputErrorNotAWrappedClock) {
    // The unit parser refuses such a bandwidth; built in code it reaches the one tick conversion,
    // which refuses a step time beyond the clock instead of wrapping to a negative tick.
    model::Scenario s = llama8b_scenario(200, 600, 1000.0, 64);
    test::set_kv_pool(s, 0.5);
    s.deployment.engine.max_model_len = 2048;
    s.scheduler.preemption_mode = model::PreemptionMode::Swap;
    s.scheduler.swap_bandwidth = BytesPerSecond(1e-300);
    const std::string e = error_of(s);
    EXPECT_NE(e.find("is beyond the simulator's clock (about 292 years)"), std::string::npos) << e;
}

TEST(SimLimits, AnArrivalAfterTheWindowIsNeverConvertedToTicks) {
    // At 1e-300 requests/s the first arrival lies ~1e300 s out, beyond the clock; within a 60 s
    // window it simply never comes.
    model::Scenario s = llama8b_scenario(512, 128, 1e-300);
    s.workload.requests.reset();
    s.workload.duration = Seconds(60);
    const SimResult r = simulate(s, SimOptions{});
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.overall.completed, 0);
}

TEST(SimLimits, AHugeKvPoolIsCappedForThePrefixCacheNotAnInternalError) {
    // 1e20 B of memory: about 4e13 blocks; the simulated pool is capped at 2^22 blocks.
    model::Scenario s = llama8b_scenario(512, 128, 4.0, 20);
    s.deployment.gpu.memory = Bytes(1e20);
    s.deployment.engine.enable_prefix_caching = true;
    const SimResult r = simulate(s, SimOptions{});
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.overall.completed, 20);
}

TEST(SimLimits, RequestCountAboveTheLimitIsRefused) {
    model::Scenario s = llama8b_scenario();
    SimOptions o;
    o.requests = (1 << 30) + 1;
    try {
        (void)simulate(s, o);
        ADD_FAILURE() << "no error";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "workload.requests: 1073741825 is out of range; give 1 to 1073741824");
    }
}

} // namespace
} // namespace gpuplan::sim
