/// Latency-bound capacity (model/slo_capacity.hpp): each of its three costs against values worked
/// out by hand, and the capacity against the definition (served at the rate, not just above).

#include "model/slo_capacity.hpp"

#include "fixtures.hpp"
#include "model/operating_point.hpp"
#include "model/serving.hpp"
#include "model/step_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

TEST(SloCapacity, NormalQuantile) {
    EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-9);
    EXPECT_NEAR(normal_quantile(0.99), 2.326348, 1e-5); // tables of the standard normal
    EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-5);
}

// (b) 20 ms decode steps, 80 ms longer with a chunk, 10 % of the steps carry one (one chunk per
// prompt): the mean TPOT is 20 + 0.1 × 80 = 28 ms and m = 8 / 28 of it is chunks. A request of
// 100 output tokens has n = 99 gaps and P = 9.9 prompts arrive while it decodes, each a = 80 / 99
// ms of its TPOT. Without batch growth (β = 0): sd = √(9.9 × a²) ÷ (1 − 8/28) = 3.559610 ms, so
// TPOT_99 = 28 + 2.326348 × 3.559610 = 36.28085 ms (before the branching factor 1 / (1 − m) =
// 1.4 it was 33.9149 ms). Prompts of two chunk steps: P = 4.95, a = 160 / 99, sd = 5.034050,
// TPOT_99 = 39.71089 ms. With β = 0.5 ms per sequence: √(9.9 × (a² + 2 × 0.25 / 3 + a × 0.5))
// ÷ (1 − 8/28) = 4.872871 ms, TPOT_99 = 39.33595 ms. The median is the mean.
TEST(SloCapacity, TpotPercentileCountsTheStepsCarryingChunks) {
    ChunkInterference c;
    c.decode_step = Seconds(0.020);
    c.extra = Seconds(0.080);
    c.share = 0.1;
    EXPECT_NEAR(tpot_percentile(c, 100, 99).si(), 0.03628085, 1e-7);
    EXPECT_NEAR(tpot_percentile(c, 100, 50).si(), 0.028, 1e-9);
    EXPECT_NEAR(tpot_percentile(c, 100, 99, Seconds(0.0005)).si(), 0.03933595, 1e-7);
    c.chunk_steps = 2;
    EXPECT_NEAR(tpot_percentile(c, 100, 99).si(), 0.03971089, 1e-7);
    c.chunk_steps = 1;
    // One output token has no gap; every step mixed has no spread: both the mean.
    EXPECT_NEAR(tpot_percentile(c, 1, 99).si(), 0.028, 1e-12);
    // At most every gap carries a chunk: 20 + 80 ms.
    EXPECT_NEAR(tpot_percentile(c, 3, 99.99).si(), 0.100, 1e-12);
    c.every_step = true;
    c.extra = Seconds(0);
    c.share = 1;
    EXPECT_NEAR(tpot_percentile(c, 100, 99).si(), 0.020, 1e-12);
}

// (c) M/D/1 (one server) at 9 of 10 requests/s: C = ρ = 0.9, W_99 = 0.5 / (10 − 9) × ln(0.9 /
// 0.01) = 2.249905 s. Two servers at ρ = 0.8 (a = 1.6): Erlang C = (a²/2)/(1 − ρ) / (1 + a +
// (a²/2)/(1 − ρ)) = 6.4 / 9 = 0.711111, W_99 = 0.5 / (10 − 8) × ln(71.1111) = 1.066061 s.
TEST(SloCapacity, QueueWaitPercentileIsErlangCWithAnExponentialTail) {
    EXPECT_NEAR(queue_wait_percentile(9, 10, 1, 99).si(), 2.249905, 1e-6);
    EXPECT_NEAR(queue_wait_percentile(8, 10, 2, 99).si(), 1.066061, 1e-6);
    // Poisson arrivals have k = (1 + 0) / 2; a gamma process of cv 2 has (4 + 0) / 2 = 2.
    EXPECT_NEAR(queue_wait_percentile(9, 10, 1, 99, 2.0).si(), 4 * 2.249905, 4e-6);
    // Below a 1 % chance of waiting the P99 wait is 0; at capacity it is unbounded.
    EXPECT_EQ(queue_wait_percentile(0.05, 10, 1, 99).si(), 0.0);
    EXPECT_TRUE(std::isinf(queue_wait_percentile(10, 10, 4, 99).si()));
    // Many servers wait less than one fast server at the same utilisation.
    EXPECT_LT(queue_wait_percentile(9, 10, 64, 99), queue_wait_percentile(9, 10, 1, 99));
}

Workload open(int input, int output, double rate) {
    Workload w;
    w.input_tokens = input;
    w.output_tokens = output;
    w.requests_per_s = rate;
    return w;
}

Deployment llama8b_h100() {
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.max_model_len = 8192;
    return d;
}

// (a) The batch the TPOT limit allows, against a scan of model::tpot (the decode-only step at
// the average context 1024 + 128 / 2).
TEST(SloCapacity, TheTpotBatchLimitIsTheLargestDecodeStepWithinTheLimit) {
    const Deployment d = llama8b_h100();
    const StepCostModel m(d, default_profile());
    const Workload w = open(1024, 128, 1);
    const Seconds limit = (tpot(m, 1, 1088) + tpot(m, 256, 1088)) / 2;
    int expected = 0;
    for (int b = 1; b <= 256; ++b) {
        if (tpot(m, b, 1088) <= limit) {
            expected = b;
        }
    }
    ASSERT_GT(expected, 1);
    ASSERT_LT(expected, 256);
    EXPECT_EQ(tpot_batch_limit(m, w, limit, 256), expected);
    EXPECT_EQ(tpot_batch_limit(m, w, Seconds(1e-6), 256), 0);
    EXPECT_EQ(tpot_batch_limit(m, w, Seconds(10), 200), 200);
}

// The mean of the split is the serving estimate's TPOT: one steady state.
TEST(SloCapacity, TheChunkSplitAveragesToTheEstimatesTpot) {
    const Deployment d = llama8b_h100();
    for (const int c : {4, 32, 128}) {
        Workload w = open(1024, 128, 1);
        set_closed_loop(w, c);
        const ServingEstimate e = estimate_serving(d, w, default_profile());
        const ChunkInterference k =
            chunk_interference(StepCostModel(d, default_profile()), w, e.running);
        EXPECT_NEAR((k.decode_step + k.extra * k.share).si(), e.tpot.si(), 1e-12) << c;
        EXPECT_GT(k.share, 0);
    }
}

TEST(SloCapacity, ARealisticSloCostsCapacityAndTheRateIsTheHighestServed) {
    const Deployment d = llama8b_h100();
    const Workload w = open(1024, 128, 1);
    Slo slo;
    slo.ttft = Seconds(0.5);
    slo.tpot = Seconds(0.025);
    const SloCapacity c = slo_capacity(d, w, slo, default_profile());
    ASSERT_TRUE(c.has_targets);
    ASSERT_GT(c.throughput_rate, 0);
    ASSERT_GT(c.rate, 0);
    EXPECT_LT(c.ratio, 1.0);
    EXPECT_DOUBLE_EQ(c.ratio, c.rate / c.throughput_rate);
    EXPECT_DOUBLE_EQ(c.output_tok_s, c.rate * 128);
    const SloFigures at = slo_figures_at(d, w, slo, default_profile(), c.rate);
    EXPECT_TRUE(at.served);
    EXPECT_LE(at.ttft, *slo.ttft);
    EXPECT_LE(at.tpot, *slo.tpot);
    const SloFigures above = slo_figures_at(d, w, slo, default_profile(), c.rate * 1.001);
    EXPECT_FALSE(above.served);
    ASSERT_TRUE(above.missed);
    EXPECT_EQ(*above.missed, c.bound);
    // The throughput capacity is the serving estimate's peak over the output.
    const ServingEstimate e = estimate_serving(d, w, default_profile());
    EXPECT_DOUBLE_EQ(c.throughput_rate, e.peak_throughput / 128);
}

TEST(SloCapacity, EachBindingReasonIsNamed) {
    const Deployment d = llama8b_h100();
    const Workload w = open(1024, 128, 1);
    const StepCostModel m(d, default_profile());
    Slo tight_tpot;
    tight_tpot.tpot = tpot(m, 8, 1088); // a decode step of 8 sequences
    const SloCapacity a = slo_capacity(d, w, tight_tpot, default_profile());
    EXPECT_TRUE(a.bound == SloBound::TpotBatch || a.bound == SloBound::TpotPrefill)
        << to_string(a.bound);
    EXPECT_LE(a.at.running, a.tpot_batch);
    Slo ttft_only;
    ttft_only.ttft = Seconds(1.0);
    const SloCapacity q = slo_capacity(d, w, ttft_only, default_profile());
    EXPECT_EQ(q.bound, SloBound::TtftQueueing);
    EXPECT_GT(q.at.queue_wait.si(), 0);
    EXPECT_LT(q.ratio, 1.0);
    Slo none;
    const SloCapacity t = slo_capacity(d, w, none, default_profile());
    EXPECT_FALSE(t.has_targets);
    EXPECT_EQ(t.bound, SloBound::Throughput);
    EXPECT_NEAR(t.ratio, 1.0, 2e-4);
    Slo impossible;
    impossible.ttft = Seconds(1e-6);
    const SloCapacity z = slo_capacity(d, w, impossible, default_profile());
    EXPECT_EQ(z.rate, 0);
    EXPECT_EQ(z.bound, SloBound::TtftPrefill);
}

} // namespace

namespace {

// (c) at one rate: the wait is the slot queue (Erlang C over the peak batch, at the throughput
// capacity) plus the prompt queue (M/D/1 with the prefill under load as service), and TTFT is
// the prefill under load plus that wait.
TEST(SloCapacity, TheWaitIsTheSlotQueuePlusThePromptQueue) {
    const Deployment d = llama8b_h100();
    Workload w = open(1024, 128, 20.0);
    const ServingEstimate e = estimate_serving(d, w, default_profile());
    Slo slo;
    const SloFigures f = slo_figures_at(d, w, slo, default_profile(), 20.0);
    const double mu = e.peak_throughput / 128;
    const Seconds slots = queue_wait_percentile(20.0, mu, e.peak_concurrency, 99);
    const Seconds prompts = queue_wait_percentile(20.0, 1 / e.ttft_loaded.si(), 1, 99);
    EXPECT_GT(prompts.si(), 0);
    EXPECT_NEAR(f.queue_wait.si(), (slots + prompts).si(), 1e-12);
    EXPECT_NEAR(f.ttft.si(), (e.ttft_loaded + slots + prompts).si(), 1e-12);
    EXPECT_EQ(f.running, e.running);
}

} // namespace
