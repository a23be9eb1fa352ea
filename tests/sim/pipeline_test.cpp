// Pipeline-parallel replicas: up to pp micro-batches in flight, each taking the full step time
// and entering stage 0 as soon as it is free (docs/simulator.md, "Pipeline parallelism").
#include "model/serving.hpp"
#include "model/step_cost.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;

// Llama-3-8B split into `pp` stages over pp H100s (one replica).
model::Scenario pipelined(int pp, int input, int output, double rate, int requests) {
    model::Scenario s = llama8b_scenario(input, output, rate, requests);
    s.deployment = model::test::deploy(model::test::llama3_8b(), model::test::h100(), 1, pp);
    s.deployment.engine.max_model_len = 8192;
    return s;
}

// A saturated closed loop: `users` clients, each sending its next request when one returns.
model::Scenario saturated(int pp, int input, int output, int users, int requests) {
    model::Scenario s = pipelined(pp, input, output, 1.0, requests);
    s.workload.arrival.kind = model::ArrivalKind::ClosedLoop;
    s.workload.arrival.users = users;
    return s;
}

SimResult run(const model::Scenario& s, bool micro_batches = true, bool keep = false) {
    SimOptions o;
    o.pipeline_micro_batches = micro_batches;
    o.keep_requests = keep;
    o.keep_steps = keep;
    SimResult r = simulate(s, o);
    EXPECT_TRUE(r.ok);
    return r;
}

TEST(SimPipeline, OneRequestAloneTakesExactlyTheAnalyticTtftAndTpot) {
    for (const int pp : {2, 4}) {
        for (const int budget : {8192, 2048}) {
            SCOPED_TRACE(testing::Message() << "pp " << pp << " budget " << budget);
            model::Scenario s = pipelined(pp, 6000, 40, 1.0, 1);
            s.deployment.engine.max_num_batched_tokens = budget;
            const SimResult r = run(s, true, true);
            ASSERT_EQ(r.requests.size(), 1u);
            const RequestRecord& q = r.requests[0];
            ASSERT_EQ(q.outcome, Outcome::Completed);
            const model::StepCostModel m(s.deployment, model::default_profile());
            ASSERT_EQ(m.pp(), pp);
            // Each step is rounded to the nanosecond, nothing else differs: a micro-batch
            // alone in the pipeline takes the whole step time.
            const int chunks = (6000 + budget - 1) / budget;
            EXPECT_NEAR(q.ttft->si(), model::ttft(m, 6000).si(), chunks * 1e-9);
            double decode = 0;
            for (int k = 1; k < 40; ++k) {
                decode += model::tpot(m, 1, 6000 + k).si();
            }
            EXPECT_NEAR(q.e2e->si() - q.ttft->si(), decode, 40 * 1e-9);
            EXPECT_NEAR(q.tpot->si(), decode / 39, 1e-9);
            // The same as without micro-batching, and each step is one stage-0 slice of T/pp:
            // busy time is per GPU, each stage works 1/pp of the time.
            const SimResult one = run(s, false, true);
            EXPECT_EQ(one.requests[0].e2e, q.e2e);
            ASSERT_EQ(r.step_log.size(), static_cast<std::size_t>(chunks + 39));
            double busy = 0;
            for (const StepRecord& st : r.step_log) {
                busy += st.duration.si();
            }
            EXPECT_NEAR(busy, q.e2e->si() / pp, (chunks + 39) * 1e-9);
            // The running series covers the whole request, not only the stage-0 slices.
            EXPECT_NEAR(r.mean_running * r.duration.si(), q.e2e->si() - q.queue->si(), 1e-6);
        }
    }
}

struct Point {
    double tok_s = 0;    // total (input + output) tokens per second
    double tpot_p50 = 0; // seconds
    double busy = 0;
};

Point measure(const model::Scenario& s, bool micro_batches) {
    const SimResult r = run(s, micro_batches);
    EXPECT_EQ(r.overall.completed, s.workload.requests);
    return Point{r.total_tok_s, r.overall.tpot.p50.si(), r.replicas.at(0).busy_fraction};
}

// Prompt-heavy and saturated: every micro-batch fills the token budget, so a micro-batch
// costs what a whole batch costs without pipelining and pp of them overlap.
TEST(SimPipeline, SaturatedThroughputNearlyDoublesWithTwoStages) {
    const model::Scenario s = saturated(2, 3000, 16, 64, 600);
    const Point one = measure(s, false);
    const Point two = measure(s, true);
    const double ratio = two.tok_s / one.tok_s;
    std::printf("pp=2 prompt-heavy: %.0f -> %.0f tok/s (x%.3f), TPOT p50 %.1f -> %.1f ms, busy "
                "%.3f -> %.3f\n",
                one.tok_s, two.tok_s, ratio, one.tpot_p50 * 1e3, two.tpot_p50 * 1e3, one.busy,
                two.busy);
    EXPECT_GE(ratio, 1.6);
    EXPECT_LE(ratio, 2.0);
    // A sequence's token gap is its own micro-batch's step time plus at most one stage slot
    // waiting for stage 0: TPOT rises by at most 1/pp.
    EXPECT_LE(two.tpot_p50, one.tpot_p50 * 1.5);
    // One batch at a time keeps each stage busy 1/pp of the time; a full pipeline nearly all.
    EXPECT_NEAR(one.busy, 0.5, 0.02);
    EXPECT_GT(two.busy, 0.8); // micro-batches of unequal time leave gaps
}

TEST(SimPipeline, DecodeHeavyThroughputRisesAndTpotFalls) {
    // max_num_seqs is shared by the micro-batches (vLLM v1), so each carries half the decodes:
    // the gain is T(n) / T(n / 2), well under 2 for bandwidth-bound decode.
    model::Scenario s = saturated(2, 512, 256, 512, 1500);
    const Point one = measure(s, false);
    const Point two = measure(s, true);
    const double ratio = two.tok_s / one.tok_s;
    std::printf("pp=2 decode-heavy: %.0f -> %.0f tok/s (x%.3f), TPOT p50 %.1f -> %.1f ms\n",
                one.tok_s, two.tok_s, ratio, one.tpot_p50 * 1e3, two.tpot_p50 * 1e3);
    EXPECT_GT(ratio, 1.0);
    EXPECT_LE(ratio, 2.0);
    EXPECT_LT(two.tpot_p50, one.tpot_p50);
}

TEST(SimPipeline, FourStagesThroughputAtLeastTwoStages) {
    const Point two = measure(saturated(2, 3000, 16, 64, 600), true);
    const Point four = measure(saturated(4, 3000, 16, 64, 600), true);
    std::printf("prompt-heavy: pp=2 %.0f tok/s, pp=4 %.0f tok/s (x%.3f)\n", two.tok_s, four.tok_s,
                four.tok_s / two.tok_s);
    EXPECT_GE(four.tok_s, two.tok_s);
}

TEST(SimPipeline, SameSeedGivesIdenticalResults) {
    model::Scenario s = pipelined(2, 0, 0, 40.0, 400);
    test::set_kv_pool(s, 0.5); // tight: preemption while micro-batches are in flight
    model::RequestClass chat;
    chat.name = "chat";
    chat.input.kind = model::LengthKind::LogNormal;
    chat.input.mean = 600;
    chat.input.stddev = 400;
    chat.input.max = 3000;
    chat.output.kind = model::LengthKind::Uniform;
    chat.output.min = 20;
    chat.output.max = 300;
    chat.shared_prefix = 200;
    s.workload.classes = {chat};
    SimOptions o;
    o.keep_requests = true;
    o.keep_steps = true;
    const SimResult a = simulate(s, o);
    const SimResult b = simulate(s, o);
    EXPECT_TRUE(a == b);
    EXPECT_EQ(a.overall.completed, 400);
    EXPECT_GT(a.preemptions, 0);
    // Stage-0 slices of a replica never overlap.
    for (std::size_t i = 1; i < a.step_log.size(); ++i) {
        EXPECT_LE(a.step_log[i - 1].start.si() + a.step_log[i - 1].duration.si(),
                  a.step_log[i].start.si() + 1e-9);
    }
    o.seed = 8;
    EXPECT_FALSE(a == simulate(s, o));
}

} // namespace
} // namespace gpuplan::sim
