// Sizing curves (plan/load_curve.hpp): every point is the serving estimate at that load, and the
// highest load meeting the SLO is checked against a scan and a bisection of our own over
// model::estimate_serving, not against the function's own search.
#include "plan/load_curve.hpp"

#include "model/error.hpp"
#include "model/operating_point.hpp"
#include "model/serving.hpp"
#include "model/slo_capacity.hpp"
#include "tests/model/fixtures.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuplan::plan {
namespace {

model::Scenario closed(int concurrency) {
    model::Scenario s = sim::test::llama8b_scenario(1024, 128, 2.0, 200);
    model::set_closed_loop(s.workload, concurrency);
    return s;
}

model::ServingEstimate estimate_at(model::Scenario s, LoadAxis axis, double load) {
    if (axis == LoadAxis::Concurrency) {
        model::set_closed_loop(s.workload, static_cast<int>(load));
    } else {
        model::set_offered_rate(s.workload, load);
    }
    return model::estimate_serving(s.deployment, s.workload, model::default_profile());
}

/// The SLO check written out: TTFT (loaded), TPOT and E2E = TTFT + (out − 1) × TPOT.
bool meets(const model::Scenario& s, const model::ServingEstimate& e, int output) {
    const double ttft = e.ttft_loaded.si();
    const double tpot = e.tpot.si();
    const double e2e = ttft + (output - 1) * tpot;
    return (!s.slo.ttft || ttft <= s.slo.ttft->si()) && (!s.slo.tpot || tpot <= s.slo.tpot->si()) &&
           (!s.slo.e2e || e2e <= s.slo.e2e->si());
}

TEST(LoadCurve, APointIsTheServingEstimateAtThatLoad) {
    const model::Scenario s = closed(32);
    const auto profile = model::default_profile();
    for (int c : {1, 8, 40}) {
        SCOPED_TRACE(c);
        const CurvePoint p = curve_point(s, profile, LoadAxis::Concurrency, c);
        const model::ServingEstimate e = estimate_at(s, LoadAxis::Concurrency, c);
        EXPECT_EQ(p.load, c);
        EXPECT_EQ(p.ttft, e.ttft_loaded);
        EXPECT_EQ(p.tpot, e.tpot);
        EXPECT_EQ(p.throughput, e.throughput);
        EXPECT_EQ(p.running, e.running);
        EXPECT_DOUBLE_EQ(p.e2e.si(), e.ttft_loaded.si() + 127 * e.tpot.si());
        EXPECT_TRUE(p.fits); // 40 sequences of 1152 tokens fit an H100's KV cache easily
    }
    const CurvePoint r = curve_point(s, profile, LoadAxis::RequestRate, 3.0);
    const model::ServingEstimate er = estimate_at(s, LoadAxis::RequestRate, 3.0);
    EXPECT_EQ(r.ttft, er.ttft_loaded);
    EXPECT_EQ(r.throughput, er.throughput);
    EXPECT_DOUBLE_EQ(r.throughput, 3.0 * 128); // a stable open loop serves what is offered
    EXPECT_EQ(r.utilisation, er.operating_point.utilisation);
}

TEST(LoadCurve, TheHighestConcurrencyMeetingTheSloIsTheLastOneAScanFinds) {
    model::Scenario s = closed(8);
    const auto profile = model::default_profile();
    // A TPOT target between the lone sequence's and the full batch's.
    const double t1 = estimate_at(s, LoadAxis::Concurrency, 1).tpot.si();
    const double t64 = estimate_at(s, LoadAxis::Concurrency, 64).tpot.si();
    ASSERT_LT(t1, t64);
    s.slo.tpot = Seconds((t1 + t64) / 2);
    int last = 0;
    for (int c = 1; c <= 200; ++c) {
        if (meets(s, estimate_at(s, LoadAxis::Concurrency, c), 128)) {
            last = c;
        }
    }
    ASSERT_GT(last, 1);
    ASSERT_LT(last, 64);
    const auto max = max_load_meeting_slo(s, profile, LoadAxis::Concurrency);
    ASSERT_TRUE(max.has_value());
    EXPECT_EQ(*max, last);
}

TEST(LoadCurve, WithoutAnSloTheHighestConcurrencyIsWhatTheDeploymentRunsAtOnce) {
    model::Scenario s = closed(8);
    s.deployment.engine.max_num_seqs = 48;
    const auto max = max_load_meeting_slo(s, model::default_profile(), LoadAxis::Concurrency);
    ASSERT_TRUE(max.has_value());
    EXPECT_EQ(*max, 48); // max_num_seqs binds before the KV cache for 1152-token sequences
}

// On the rate axis a load is judged at the SLO's percentile under Poisson arrivals
// (model::slo_figures_at), and the highest one is the capacity at the SLO (model::slo_capacity):
// the figure estimate and plan print.
TEST(LoadCurve, TheHighestRateMeetingTheSloIsTheCapacityAtTheSlo) {
    model::Scenario s = closed(8);
    model::set_offered_rate(s.workload, 1.0);
    s.slo.ttft = Seconds(0.25);
    s.slo.tpot = Seconds(0.030);
    const auto profile = model::default_profile();
    const auto served = [&](double rate) {
        return model::slo_figures_at(s.deployment, s.workload, s.slo, profile, rate).served;
    };
    double lo = 0.01, hi = 1000;
    ASSERT_TRUE(served(lo));
    ASSERT_FALSE(served(hi));
    for (int i = 0; i < 100; ++i) {
        const double mid = std::sqrt(lo * hi);
        (served(mid) ? lo : hi) = mid;
    }
    const auto max = max_load_meeting_slo(s, profile, LoadAxis::RequestRate);
    ASSERT_TRUE(max.has_value());
    EXPECT_NEAR(*max, lo, 2e-4 * lo);
    EXPECT_TRUE(served(*max));
    EXPECT_FALSE(served(*max * 1.001));
    EXPECT_EQ(*max, model::slo_capacity(s.deployment, s.workload, s.slo, profile).rate);
    EXPECT_TRUE(curve_point(s, profile, LoadAxis::RequestRate, *max).meets_slo);
    EXPECT_FALSE(curve_point(s, profile, LoadAxis::RequestRate, *max * 1.001).meets_slo);
    // The percentiles cost capacity: the means alone would be served above it.
    const model::ServingEstimate e = estimate_at(s, LoadAxis::RequestRate, *max * 1.001);
    EXPECT_TRUE(meets(s, e, 128));
}

TEST(LoadCurve, NoLoadMeetsAnSloBelowTheLoneRequest) {
    model::Scenario s = closed(8);
    s.slo.ttft = Seconds(1e-6);
    EXPECT_FALSE(max_load_meeting_slo(s, model::default_profile(), LoadAxis::Concurrency));
    EXPECT_FALSE(max_load_meeting_slo(s, model::default_profile(), LoadAxis::RequestRate));
    const CurvePoint p = curve_point(s, model::default_profile(), LoadAxis::Concurrency, 1);
    EXPECT_FALSE(p.meets_slo);
    EXPECT_NE(p.miss.find("TTFT"), std::string::npos);
}

TEST(LoadCurve, DefaultLoadsRunFromOneToCapacityAndUpToSaturation) {
    model::Scenario s = closed(8);
    s.deployment.engine.max_num_seqs = 100;
    const auto profile = model::default_profile();
    const std::vector<double> c = default_loads(s, profile, LoadAxis::Concurrency, 8);
    ASSERT_GE(c.size(), 2u);
    EXPECT_EQ(c.front(), 1);
    EXPECT_EQ(c.back(), 100);
    for (std::size_t i = 1; i < c.size(); ++i) {
        EXPECT_GT(c[i], c[i - 1]);
    }
    const std::vector<double> r = default_loads(s, profile, LoadAxis::RequestRate, 5);
    ASSERT_EQ(r.size(), 5u);
    // The last rate is the one at utilisation 1: peak output tokens/s over 128 per request.
    const model::ServingEstimate e = estimate_at(s, LoadAxis::Concurrency, 8);
    EXPECT_DOUBLE_EQ(r.back(), e.peak_throughput / 128);
    EXPECT_DOUBLE_EQ(r.front(), r.back() / 5);
}

TEST(LoadCurve, LoadsMustBePositiveAndConcurrencyWhole) {
    const model::Scenario s = closed(8);
    const auto profile = model::default_profile();
    EXPECT_THROW((void)curve_point(s, profile, LoadAxis::Concurrency, 0), InvalidArgument);
    EXPECT_THROW((void)curve_point(s, profile, LoadAxis::Concurrency, 2.5), InvalidArgument);
    EXPECT_THROW((void)curve_point(s, profile, LoadAxis::RequestRate, -1), InvalidArgument);
}

TEST(LoadCurve, ATraceIsDrawnAgainstConcurrencyOnly) {
    model::Scenario s = closed(8);
    s.workload.arrival.kind = model::ArrivalKind::Trace;
    s.workload.trace = {{Seconds(0.0), 512, 64}, {Seconds(0.5), 512, 64}, {Seconds(1.0), 512, 64}};
    EXPECT_EQ(default_axis(s), LoadAxis::Concurrency);
    EXPECT_THROW((void)at_load(s, LoadAxis::RequestRate, 2.0), InvalidArgument);
    EXPECT_NO_THROW((void)at_load(s, LoadAxis::Concurrency, 4));
    model::Scenario r = closed(8);
    model::set_offered_rate(r.workload, 3.0);
    EXPECT_EQ(default_axis(r), LoadAxis::RequestRate);
}

TEST(LoadCurve, CandidatesKeepTheLayoutAndShareOneAxis) {
    const model::Scenario s = closed(8);
    const auto profile = model::default_profile();
    model::PlanCandidate same;
    same.gpu = s.deployment.gpu;
    model::PlanCandidate h200;
    h200.gpu = model::test::h200();
    h200.intra_node_link = s.deployment.intra_node_link;
    int chosen = 0;
    const auto cands = curve_candidates(s, profile, {same, h200}, [&](const auto&) {
        ++chosen;
        return model::default_profile();
    });
    ASSERT_EQ(cands.size(), 2u); // the scenario's own GPU is not drawn twice
    EXPECT_EQ(chosen, 1);
    EXPECT_EQ(cands[0].scenario, s);
    EXPECT_EQ(cands[1].name, h200.gpu.name);
    EXPECT_EQ(cands[1].scenario.deployment.par, s.deployment.par);
    EXPECT_EQ(cands[1].scenario.deployment.prec, s.deployment.prec);

    const LoadCurve c = load_curve(cands, LoadAxis::Concurrency, {}, 6);
    ASSERT_EQ(c.curves.size(), 2u);
    const std::vector<double> loads = default_loads(s, profile, LoadAxis::Concurrency, 6);
    for (const CandidateCurve& k : c.curves) {
        ASSERT_EQ(k.points.size(), loads.size());
        for (std::size_t i = 0; i < loads.size(); ++i) {
            EXPECT_EQ(k.points[i].load, loads[i]);
        }
        EXPECT_TRUE(k.error.empty());
    }
    // More memory bandwidth: the H200's decode is faster at every load.
    for (std::size_t i = 0; i < loads.size(); ++i) {
        EXPECT_LT(c.curves[1].points[i].tpot, c.curves[0].points[i].tpot);
    }
}

TEST(LoadCurve, TheSimulatorConfirmsLoadsAndStops) {
    model::Scenario s = closed(8);
    s.slo.ttft = Seconds(1.0);
    const auto profile = model::default_profile();
    const std::vector<SimulatedPoint> p =
        simulate_curve(s, profile, std::nullopt, LoadAxis::Concurrency, {2, 8}, 60, 2);
    ASSERT_EQ(p.size(), 2u);
    for (const SimulatedPoint& q : p) {
        EXPECT_TRUE(q.ok) << q.reason;
        EXPECT_EQ(q.completed, 60);
        EXPECT_GT(q.throughput, 0);
        EXPECT_LE(q.ttft_p50_s, q.ttft_p99_s);
        EXPECT_LE(q.tpot_p50_s, q.tpot_p99_s);
    }
    EXPECT_GT(p[1].throughput, p[0].throughput); // more sequences in flight, more tokens/s
    std::stop_source stop;
    stop.request_stop();
    const auto stopped = simulate_curve(s, profile, std::nullopt, LoadAxis::Concurrency, {2}, 60, 1,
                                        stop.get_token());
    EXPECT_FALSE(stopped[0].ok);
}

} // namespace
} // namespace gpuplan::plan
