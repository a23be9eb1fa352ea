// The diagnosis chain `gpuplan diagnose` and the app's Diagnose tab share (plan/diagnosis.hpp):
// model::diagnose, then the histogram percentiles set beside the simulator's.
#include "plan/diagnosis.hpp"

#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stop_token>

namespace gpuplan::plan {
namespace {

model::Observations observed(bool with_percentiles) {
    model::EngineMetrics m;
    m.running = 8;
    m.waiting = 0;
    m.ttft_mean_s = 0.08;
    m.itl_mean_s = 0.012;
    if (with_percentiles) {
        m.ttft_p50_s = 0.07;
        m.ttft_p99_s = 0.2;
        m.itl_p50_s = 0.011;
    }
    model::Observations o;
    o.metrics = m;
    return o;
}

int count_source(const model::Diagnosis& g, const char* source) {
    return static_cast<int>(std::count_if(g.comparisons.begin(), g.comparisons.end(),
                                          [&](const auto& c) { return c.source == source; }));
}

TEST(DiagnoseScenario, WithoutHistogramPercentilesItIsTheModelsDiagnosis) {
    const model::Scenario s = sim::test::llama8b_scenario(1024, 128, 2.0, 200);
    const auto profile = model::default_profile();
    const model::Observations obs = observed(false);
    EXPECT_EQ(diagnose_scenario(s, profile, obs),
              model::diagnose(s.deployment, s.workload, profile, obs));
}

TEST(DiagnoseScenario, HistogramPercentilesAreSetBesideTheSimulators) {
    const model::Scenario s = sim::test::llama8b_scenario(1024, 128, 2.0, 200);
    const auto profile = model::default_profile();
    const model::Observations obs = observed(true);
    const model::Diagnosis analytic = model::diagnose(s.deployment, s.workload, profile, obs);
    ASSERT_EQ(count_source(analytic, "metrics buckets"), 3);
    const model::Diagnosis g = diagnose_scenario(s, profile, obs);
    EXPECT_EQ(count_source(g, "metrics buckets"), 0);
    EXPECT_EQ(count_source(g, "buckets vs simulator"), 3);
    ASSERT_EQ(g.comparisons.size(), analytic.comparisons.size());
    for (std::size_t i = 0; i < g.comparisons.size(); ++i) {
        // The observed side never changes; the latencies' predicted side becomes the
        // simulator's, each saying so, so no figure is predicted two ways in one table.
        const model::Comparison& c = g.comparisons[i];
        const model::Comparison& a = analytic.comparisons[i];
        EXPECT_EQ(c.observed, a.observed);
        const bool latency =
            a.source == "metrics buckets" || a.figure == "TTFT" || a.figure == "TPOT";
        if (latency) {
            EXPECT_EQ(c.basis, "simulated: a closed loop of 8 (running + waiting)") << c.figure;
            EXPECT_EQ(a.basis.rfind("analytic: ", 0), 0U) << a.basis;
        } else {
            EXPECT_EQ(c, a);
        }
    }
    EXPECT_EQ(g.rows, analytic.rows);
    EXPECT_EQ(g.notes.size(), analytic.notes.size() + 1);
    // A closed loop of the observed 8 running + 0 waiting.
    EXPECT_NE(g.notes.back().find("a closed loop of 8"), std::string::npos) << g.notes.back();
}

TEST(DiagnoseScenario, AStopBeforeTheSimulationKeepsTheAnalyticValues) {
    const model::Scenario s = sim::test::llama8b_scenario(1024, 128, 2.0, 200);
    const auto profile = model::default_profile();
    const model::Observations obs = observed(true);
    std::stop_source stop;
    stop.request_stop();
    EXPECT_EQ(diagnose_scenario(s, profile, obs, stop.get_token()),
              model::diagnose(s.deployment, s.workload, profile, obs));
}

} // namespace
} // namespace gpuplan::plan
