// Long simulated spans: the time series (metrics and power) coarsen to at most 65,536 bins
// instead of growing with the span (issue 12: two requests 30 days apart took 414 MB), and
// they still add up to the run's counts and energy.
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace gpuplan::sim {
namespace {

TEST(SimLongSpan, TwoRequestsThirtyDaysApartUseCoarserBins) {
    model::Scenario s = test::llama8b_scenario(512, 16);
    s.workload.requests.reset();
    s.workload.arrival.kind = model::ArrivalKind::Trace;
    const double month_s = 30.0 * 86400.0;
    s.workload.trace = {model::TraceRecord{Seconds(0), 512, 16},
                        model::TraceRecord{Seconds(month_s), 512, 16}};
    const SimResult r = simulate(s);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.overall.completed, 2);
    // 2,592,000 s at 1 s needs 2.6 million bins; 2^16 bins cover it at 2^6 = 64 s
    // (2^5 = 32 s would need 81,000).
    EXPECT_DOUBLE_EQ(r.series_bin.si(), 64.0);
    EXPECT_LE(r.series.size(), std::size_t{1} << 16);
    EXPECT_EQ(r.series.size(), static_cast<std::size_t>(month_s / 64.0) + 1);
    std::int64_t arrivals = 0, completions = 0;
    double out_tokens = 0;
    for (std::size_t i = 0; i < r.series.size(); ++i) {
        EXPECT_DOUBLE_EQ(r.series[i].t.si(), 64.0 * static_cast<double>(i));
        arrivals += r.series[i].arrivals;
        completions += r.series[i].completions;
        out_tokens += r.series[i].output_tok_s * 64.0; // a rate over a 64-s bin
    }
    EXPECT_EQ(arrivals, 2);
    EXPECT_EQ(completions, 2);
    EXPECT_NEAR(out_tokens, 32.0, 1e-9);
    EXPECT_EQ(r.series.front().arrivals, 1);
    EXPECT_EQ(r.series.back().arrivals, 1);
    // The power series share the bins and integrate to the energy.
    if (r.power.modelled) {
        const PowerResult& p = r.power;
        ASSERT_EQ(p.total_power.size(), r.series.size());
        double joules = 0;
        for (std::size_t i = 0; i < p.total_power.size(); ++i) {
            const double lo = 64.0 * static_cast<double>(i);
            joules += p.total_power[i].si() * (std::min(p.span.si(), lo + 64.0) - lo);
        }
        EXPECT_NEAR(joules, p.energy.si(), 1e-9 * p.energy.si());
        // Idle for a month at the resident power, two short bursts of work.
        EXPECT_NEAR(p.gpu_avg_power.si(), p.resident.si(), 1e-3 * p.resident.si());
    }
}

TEST(SimLongSpan, ShortRunsKeepOneSecondBins) {
    const SimResult r = simulate(test::llama8b_scenario(512, 128, 4.0, 50));
    ASSERT_TRUE(r.ok);
    EXPECT_DOUBLE_EQ(r.series_bin.si(), 1.0);
    std::int64_t arrivals = 0;
    for (const auto& b : r.series) {
        arrivals += b.arrivals;
    }
    EXPECT_EQ(arrivals, 50);
}

} // namespace
} // namespace gpuplan::sim
