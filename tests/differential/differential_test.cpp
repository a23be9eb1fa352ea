// The differential suite: generated scenarios (tests/differential/scenario_generator.hpp) run
// through the analytic model (what `estimate` prints) and the simulator (what `simulate` prints),
// checking the invariants listed in docs/operating-point.md, "Differential suite". A tolerance is
// a documented difference of definition between the two, with its size; a case outside it is a
// disagreement to fix.
#include "hwdb/database.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/operating_point.hpp"
#include "model/serving.hpp"
#include "model/slo_capacity.hpp"
#include "model/step_cost.hpp"
#include "model/workload_mix.hpp"
#include "plan/disaggregation.hpp"
#include "sim/simulate.hpp"
#include "tests/differential/scenario_generator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

namespace gpuplan::test {
namespace {

constexpr int kCases = 330;
constexpr std::uint64_t kSeed = 20261208;

const hwdb::Database& db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

/// A case the analytic model accepts: its scenario and the estimate at its own load.
struct Runnable {
    const Case* c = nullptr;
    model::Scenario s;
    model::ServingEstimate e;
    int cached = 0; ///< the mean request's shared prefix (the estimate's prefix-cache hits)
};

model::Scenario scenario_of(const Case& c) {
    model::Scenario s = hwdb::parse_scenario(c.yaml, "generated/" + c.label, db());
    if (c.load == Load::Trace) {
        // All rows at one instant, as offline benchmarks write them: an offline batch.
        for (int i = 0; i < c.batch; ++i) {
            s.workload.trace.push_back({Seconds(0), c.input + (i % 3) - 1, c.output});
        }
        s.workload.arrival.kind = model::ArrivalKind::Trace;
    }
    return s;
}

/// The generated cases the model accepts (a layout or length it refuses is skipped, with the
/// refusal counted); computed once.
const std::vector<Runnable>& runnable() {
    static const std::vector<Runnable> out = [] {
        static const std::vector<Case> cases = generate_cases(kCases, kSeed);
        std::vector<Runnable> r;
        std::map<std::string, int> refused;
        for (const Case& c : cases) {
            try {
                Runnable x;
                x.c = &c;
                x.s = scenario_of(c);
                const auto mean = model::mean_request(x.s.workload);
                x.cached = mean ? mean->cached_prefix : 0;
                x.e = model::estimate_serving(x.s.deployment, x.s.workload,
                                              model::default_profile(), x.cached);
                if (!x.e.memory.fits || x.e.memory.kv_blocks < 1) {
                    ++refused["does not fit"];
                    continue;
                }
                r.push_back(std::move(x));
            } catch (const InputError& e) {
                ++refused[std::string(e.what()).substr(0, 60)];
            }
        }
        for (const auto& [why, n] : refused) {
            std::printf("refused %d: %s\n", n, why.c_str());
        }
        return r;
    }();
    return out;
}

sim::SimResult run(const model::Scenario& s, int requests) {
    sim::SimOptions o;
    o.requests = requests;
    o.profile = model::default_profile();
    return sim::simulate(s, o);
}

/// The case's scenario with one request of its own lengths, alone.
model::Scenario alone(const Runnable& x) {
    model::Scenario s = x.s;
    s.workload = model::Workload{};
    s.workload.input_tokens = x.c->input;
    s.workload.output_tokens = x.c->output;
    model::set_closed_loop(s.workload, 1);
    s.workload.requests = 1;
    return s;
}

/// |a / b − 1|.
double rel(double a, double b) {
    return b > 0 ? std::abs(a / b - 1.0) : (a == 0 ? 0.0 : 1.0);
}

TEST(Differential, TheGeneratorCoversAtLeast300RunnableScenariosOfEveryKind) {
    const auto& r = runnable();
    EXPECT_GE(r.size(), 300U);
    std::map<std::string, int> features, loads;
    int moe = 0;
    for (const Runnable& x : r) {
        ++features[to_string(x.c->feature)];
        ++loads[to_string(x.c->load)];
        moe += x.c->moe ? 1 : 0;
    }
    EXPECT_EQ(features.size(), 6U);
    EXPECT_EQ(loads.size(), 4U);
    for (const auto& [name, n] : features) {
        EXPECT_GE(n, 25) << name;
    }
    EXPECT_GE(moe, 20);
}

// Invariant 1: a request alone takes exactly the analytic step times: its TTFT is the
// estimate's TTFT and its decode the sum of the analytic step times at batch 1 (each step is
// rounded to the nanosecond). Features with random or time-dependent costs (LoRA adapter loads,
// speculative acceptance, disaggregated KV transfers) are left to the closed-loop invariant.
TEST(Differential, ARequestAloneTakesTheAnalyticStepTimes) {
    int checked = 0;
    for (const Runnable& x : runnable()) {
        const Feature f = x.c->feature;
        if (f == Feature::Lora || f == Feature::Speculative || f == Feature::Disaggregation) {
            continue;
        }
        const model::Scenario s = alone(x);
        const sim::SimResult r = run(s, 1);
        ASSERT_TRUE(r.ok) << x.c->label;
        ASSERT_EQ(r.overall.completed, 1) << x.c->label;
        const model::StepCostModel m(s.deployment, model::default_profile());
        const model::ServingEstimate e =
            model::estimate_serving(s.deployment, s.workload, model::default_profile());
        const int chunks = 1 + x.c->input / std::max(1, m.engine().max_num_batched_tokens);
        EXPECT_NEAR(r.overall.ttft.mean.si(), e.ttft.si(), chunks * 1e-9 + 1e-12) << x.c->label;
        double decode = 0;
        for (int k = 1; k < x.c->output; ++k) {
            decode += model::tpot(m, 1, x.c->input + k).si();
        }
        EXPECT_NEAR(r.overall.e2e.mean.si() - r.overall.ttft.mean.si(), decode, x.c->output * 1e-9)
            << x.c->label;
        ++checked;
    }
    std::printf("checked %d cases\n", checked);
    EXPECT_GE(checked, 100);
}

/// Tolerances of the closed-loop invariant (docs/operating-point.md, "Differential suite").
struct Tolerance {
    double throughput = 0.20;
    double tpot = 0.25;
};

/// By engine and feature, each the measured worst difference of its class with a margin.
std::optional<Tolerance> closed_loop_tolerance(const Case& c, model::EngineKind engine) {
    switch (c.feature) {
    case Feature::Disaggregation: return std::nullopt; // the pools' figures: invariant 5
    case Feature::Lora: return Tolerance{0.40, 0.45};  // max_loras blocking (see docs)
    default: break;
    }
    if (engine != model::EngineKind::Vllm) {
        return Tolerance{0.80, 0.80}; // SGLang's and TensorRT-LLM's admission (see docs)
    }
    return Tolerance{};
}

// Invariant 2: in a closed loop below the engine's limits, the simulator's served output
// throughput and mean TPOT agree with the estimate's steady state within the feature's
// tolerance.
TEST(Differential, ClosedLoopThroughputAndTpotAgreeWithinTheirTolerance) {
    int checked = 0;
    std::map<std::string, double> worst;
    for (const Runnable& x : runnable()) {
        if (x.c->load != Load::Closed) {
            continue;
        }
        const auto tol = closed_loop_tolerance(*x.c, x.e.memory.engine.kind);
        if (!tol) {
            continue;
        }
        const int c = x.c->concurrency;
        const sim::SimResult r = run(x.s, std::clamp(12 * c, 100, 1500));
        ASSERT_TRUE(r.ok) << x.c->label;
        const double dt = rel(r.served_output_tok_s, x.e.throughput);
        const double dp = rel(r.overall.tpot.mean.si(), x.e.tpot.si());
        double& w = worst[to_string(x.c->feature)];
        w = std::max({w, dt, dp});
        std::printf("closed %-70s throughput sim/est %.3f, TPOT sim/est %.3f\n", x.c->label.c_str(),
                    r.served_output_tok_s / x.e.throughput,
                    r.overall.tpot.mean.si() / x.e.tpot.si());
        EXPECT_LE(dt, tol->throughput) << x.c->label << ": simulated " << r.served_output_tok_s
                                       << " tok/s, estimated " << x.e.throughput;
        EXPECT_LE(dp, tol->tpot) << x.c->label << ": simulated TPOT " << r.overall.tpot.mean.si()
                                 << " s, estimated " << x.e.tpot.si();
        ++checked;
    }
    for (const auto& [f, w] : worst) {
        std::printf("closed loop, %s: worst difference %.1f %%\n", f.c_str(), w * 100);
    }
    std::printf("checked %d cases\n", checked);
    EXPECT_GE(checked, 50);
}

// Invariant 3: the estimate's capacity at the SLO is met by the simulator at 90 % of it and
// missed at 120 % (Poisson arrivals, enough requests for the queue to show: 40 s of arrivals,
// 1,000 to 20,000 requests).
TEST(Differential, CapacityAtTheSloIsMetAt90PercentAndMissedAt120) {
    int checked = 0;
    for (const Runnable& x : runnable()) {
        if (x.c->load != Load::Open ||
            (x.c->feature != Feature::None && x.c->feature != Feature::Lora)) {
            continue;
        }
        const model::SloCapacity cap = model::slo_capacity(x.s.deployment, x.s.workload, x.s.slo,
                                                           model::default_profile(), x.cached);
        if (!(cap.rate > 0)) {
            continue;
        }
        const auto at = [&](double factor) {
            model::Scenario s = x.s;
            model::set_offered_rate(s.workload, cap.rate * factor);
            const int n = static_cast<int>(std::clamp(cap.rate * factor * 40.0, 1000.0, 20000.0));
            return run(s, n);
        };
        const sim::SimResult lo = at(0.9);
        const sim::SimResult hi = at(1.2);
        ASSERT_TRUE(lo.ok && hi.ok) << x.c->label;
        std::printf("slo %-60s %s %.2f req/s (%.0f %% of throughput): 0.9x TTFT %.3f TPOT %.4f, "
                    "1.2x TTFT %.3f TPOT %.4f served %.2f\n",
                    x.c->label.c_str(), model::to_string(cap.bound), cap.rate, cap.ratio * 100,
                    lo.overall.ttft.p99.si(), lo.overall.tpot.p99.si(), hi.overall.ttft.p99.si(),
                    hi.overall.tpot.p99.si(), hi.served_rps);
        // Met: every target at P99, everything served, at the offered rate (a run serving less
        // than it is offered has a queue that grows without bound: the SLO is lost in time; 5 %
        // is the Poisson count's spread over the run).
        const auto met = [&](const sim::SimResult& r, double offered) {
            return r.overall.ttft.p99 <= *x.s.slo.ttft && r.overall.tpot.p99 <= *x.s.slo.tpot &&
                   r.overall.completed == r.overall.arrived && r.served_rps >= 0.95 * offered;
        };
        EXPECT_TRUE(met(lo, 0.9 * cap.rate))
            << x.c->label << " at " << cap.rate * 0.9 << " req/s: TTFT p99 "
            << lo.overall.ttft.p99.si() << " s, TPOT p99 " << lo.overall.tpot.p99.si() << " s";
        // Where queueing binds below 70 % of the throughput capacity (short prompts), the
        // analytic prompt queue is conservative by more than 20 %, and SGLang's and
        // TensorRT-LLM's simulated capacity is up to 10 % above the analytic one (docs): the
        // miss is checked on vLLM above 70 %.
        if (cap.ratio >= 0.70 && x.e.memory.engine.kind == model::EngineKind::Vllm) {
            EXPECT_FALSE(met(hi, 1.2 * cap.rate))
                << x.c->label << " at " << cap.rate * 1.2 << " req/s: TTFT p99 "
                << hi.overall.ttft.p99.si() << " s, TPOT p99 " << hi.overall.tpot.p99.si() << " s";
        }
        ++checked;
    }
    std::printf("checked %d cases\n", checked);
    EXPECT_GE(checked, 8);
}

// Invariant 4: an offline batch (batch_requests, or a trace whose rows share one instant)
// completes every request that fits, with its own lengths, and says so in its load.
TEST(Differential, AnOfflineBatchCompletesEveryRequestThatFits) {
    int checked = 0;
    for (const Runnable& x : runnable()) {
        if (x.c->load != Load::Batch && x.c->load != Load::Trace) {
            continue;
        }
        EXPECT_EQ(x.e.operating_point.kind, model::LoadKind::OfflineBatch) << x.c->label;
        const sim::SimResult r = run(x.s, x.c->batch);
        ASSERT_TRUE(r.ok) << x.c->label;
        EXPECT_EQ(r.operating_point.kind, model::LoadKind::OfflineBatch) << x.c->label;
        EXPECT_EQ(r.overall.arrived, x.c->batch) << x.c->label;
        EXPECT_EQ(r.overall.completed, x.c->batch) << x.c->label;
        EXPECT_EQ(r.overall.rejected, 0) << x.c->label;
        ++checked;
    }
    std::printf("checked %d cases\n", checked);
    EXPECT_GE(checked, 100);
}

// Invariant 5: with prefill/decode disaggregation, a request alone takes the pools' analytic
// TTFT: its prefill on the prefill pool plus the KV transfer's exposed part
// (model::estimate_disaggregated, what `estimate` prints for the pools).
TEST(Differential, ADisaggregatedRequestAloneTakesThePoolsAnalyticTtft) {
    int checked = 0;
    for (const Runnable& x : runnable()) {
        if (x.c->feature != Feature::Disaggregation) {
            continue;
        }
        const model::Scenario s = alone(x);
        const auto pools = plan::scenario_disaggregation(
            s, [](const model::AcceleratorSpec&) { return model::default_profile(); });
        ASSERT_TRUE(pools.has_value()) << x.c->label;
        const sim::SimResult r = run(s, 1);
        ASSERT_TRUE(r.ok) << x.c->label;
        ASSERT_EQ(r.overall.completed, 1) << x.c->label;
        EXPECT_NEAR(r.overall.ttft.mean.si(), pools->ttft.si(), 0.01 * pools->ttft.si())
            << x.c->label;
        ++checked;
    }
    std::printf("checked %d cases\n", checked);
    EXPECT_GE(checked, 25);
}

} // namespace
} // namespace gpuplan::test
