// Speculative decoding in the simulator: verify steps costed like the analytic model, accepted
// lengths drawn per position from the seed, and nothing changed when the block is absent.
#include "model/serving.hpp"
#include "model/speculative.hpp"
#include "model/step_cost.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;

SimResult run(const model::Scenario& s, bool keep = false) {
    SimOptions o;
    o.keep_requests = keep;
    SimResult r = simulate(s, o);
    EXPECT_TRUE(r.ok);
    return r;
}

model::SpeculativeConfig spec(model::SpeculativeMethod method, int k, double alpha) {
    model::SpeculativeConfig c;
    c.method = method;
    c.num_speculative_tokens = k;
    c.acceptance_rate = alpha;
    return c;
}

// With nothing accepted every step advances one token and costs a verify pass of k + 1 tokens:
// the lone request's decode time is the analytic model's, step for step (the last step has no
// draft left to verify, so it is a plain decode).
TEST(SimSpeculative, LoneRequestWithNothingAcceptedTakesTheAnalyticVerifyTime) {
    model::Scenario s = llama8b_scenario(6000, 40, 1.0, 1);
    s.deployment.engine.speculative = spec(model::SpeculativeMethod::Ngram, 1, 0.0);
    const SimResult r = run(s, true);
    ASSERT_EQ(r.requests.size(), 1u);
    const RequestRecord& q = r.requests[0];
    const model::StepCostModel m(s.deployment, model::default_profile());
    const model::SpeculativeModel sp(s.deployment, *s.deployment.engine.speculative,
                                     model::default_profile());
    double decode = 0;
    for (int j = 1; j < 39; ++j) {
        decode += model::tpot(m, 1, 6000 + j, &sp).si();
    }
    decode += model::tpot(m, 1, 6039).si();
    EXPECT_NEAR(q.e2e->si() - q.ttft->si(), decode, 40 * 1e-9);
    EXPECT_EQ(q.output_tokens, 40);
    ASSERT_TRUE(r.speculative.has_value());
    EXPECT_EQ(r.speculative->accepted, 0);
    EXPECT_EQ(r.speculative->verifies, 38);
}

// The accepted length drawn position by position averages to the closed form
// (1 − α^(k+1)) / (1 − α) = 2.7731 for α = 0.7, k = 4; every request still ends with exactly its
// output length.
TEST(SimSpeculative, MeasuredTokensPerStepMatchTheClosedForm) {
    model::Scenario s = llama8b_scenario(256, 512, 2.0, 60);
    s.deployment.engine.speculative = spec(model::SpeculativeMethod::Eagle, 4, 0.7);
    const SimResult r = run(s, true);
    ASSERT_TRUE(r.speculative.has_value());
    const double expected = (1 - std::pow(0.7, 5)) / (1 - 0.7);
    EXPECT_NEAR(r.speculative->expected_tokens_per_step, expected, 1e-12);
    // About 60 × 512 / 2.77 = 11000 verifies: the standard error of the mean is under 1 %; the
    // drafts capped at the end of each request pull it down by about 0.5 %.
    EXPECT_NEAR(r.speculative->tokens_per_step, expected, 0.03 * expected);
    EXPECT_GT(r.speculative->draft_time.si(), 0.0);
    for (const RequestRecord& q : r.requests) {
        EXPECT_EQ(q.output_tokens, 512);
    }
    EXPECT_EQ(r.overall.output_tokens, 60 * 512);
}

TEST(SimSpeculative, SameSeedSameRunAndNoBlockNoFigures) {
    model::Scenario s = llama8b_scenario(512, 128, 4.0, 100);
    const SimResult off = run(s);
    EXPECT_FALSE(off.speculative.has_value());
    s.deployment.engine.speculative = spec(model::SpeculativeMethod::Eagle, 3, 0.75);
    const SimResult a = run(s);
    const SimResult b = run(s);
    EXPECT_TRUE(a == b);
    s.seed += 1;
    const SimResult c = run(s);
    EXPECT_NE(a.speculative->accepted, c.speculative->accepted);
}

// At low load the decode step is bandwidth-bound and speculation shortens TPOT.
TEST(SimSpeculative, ShortensTpotAtLowLoad) {
    model::Scenario s = llama8b_scenario(512, 256, 0.2, 20);
    const SimResult off = run(s);
    s.deployment.engine.speculative = spec(model::SpeculativeMethod::Eagle, 3, 0.75);
    const SimResult on = run(s);
    EXPECT_LT(on.overall.tpot.mean.si() * 1.3, off.overall.tpot.mean.si());
}

} // namespace
} // namespace gpuplan::sim
