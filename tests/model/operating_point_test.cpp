/// The operating point: one load per scenario, resolved once (model/operating_point.hpp), and the
/// one price list (model/price_list.hpp).

#include "model/operating_point.hpp"

#include "fixtures.hpp"
#include "model/error.hpp"
#include "model/price_list.hpp"
#include "model/scenario.hpp"
#include "model/serving.hpp"
#include "model/workload_mix.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

Workload lengths(int in, int out) {
    Workload w;
    w.input_tokens = in;
    w.output_tokens = out;
    return w;
}

/// Llama-3.1-8B on one H100 with a small max_num_seqs: both limits are easy to compute by hand.
Deployment small(int max_num_seqs) {
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.max_model_len = 8192;
    d.engine.max_num_seqs = max_num_seqs;
    return d;
}

TEST(OperatingPoint, AGivenConcurrencyIsAClosedLoopAtIt) {
    Workload w = lengths(1024, 256);
    w.concurrency = 12;
    const OperatingPoint op = resolve_operating_point(estimate_memory(small(256)), w, 1);
    EXPECT_EQ(op.kind, LoadKind::ClosedLoop);
    EXPECT_EQ(op.concurrency, 12);
    EXPECT_FALSE(op.defaulted);
}

TEST(OperatingPoint, WithoutALoadTheDefaultIsWhatTheKvCacheHoldsAtTheRequestedLengths) {
    const Deployment d = small(8192);
    const MemoryEstimate mem = estimate_memory(d);
    const Workload w = lengths(1024, 256);
    // A sequence averages 1024 + 256/2 = 1152 tokens = 72 blocks of 16; vLLM keeps block 0
    // as the null block.
    const std::int64_t by_kv = (mem.kv_tokens - 16) / (72 * 16);
    const OperatingPoint op = resolve_operating_point(mem, w, 1);
    EXPECT_TRUE(op.defaulted);
    EXPECT_EQ(op.kind, LoadKind::ClosedLoop);
    EXPECT_EQ(op.concurrency, by_kv);
    EXPECT_NE(op.why.find("kv-cache"), std::string::npos) << op.why;
    // Two replicas run twice as many.
    EXPECT_EQ(resolve_operating_point(mem, w, 2).concurrency, 2 * by_kv);
}

TEST(OperatingPoint, TheDefaultStopsAtMaxNumSeqs) {
    const OperatingPoint op =
        resolve_operating_point(estimate_memory(small(8)), lengths(1024, 256), 1);
    EXPECT_EQ(op.concurrency, 8);
    EXPECT_NE(op.why.find("max_num_seqs"), std::string::npos) << op.why;
}

TEST(OperatingPoint, AConcurrencyAndARateTogetherAreAnError) {
    Workload w = lengths(1024, 256);
    w.concurrency = 4;
    w.requests_per_s = 2.0;
    EXPECT_THROW((void)resolve_operating_point(estimate_memory(small(256)), w, 1), InvalidArgument);
}

TEST(OperatingPoint, ACommandLineLoadReplacesTheFilesLoad) {
    Workload w = lengths(1024, 256);
    w.requests_per_s = 2.0;
    set_closed_loop(w, 16);
    EXPECT_FALSE(offered_rate(w));
    EXPECT_EQ(*w.concurrency, 16);
    set_offered_rate(w, 3.0);
    EXPECT_FALSE(w.concurrency);
    EXPECT_DOUBLE_EQ(*offered_rate(w), 3.0);
}

TEST(OperatingPoint, ATraceOffersItsCountOverItsSpan) {
    Workload w = lengths(100, 10);
    w.arrival.kind = ArrivalKind::Trace;
    for (int i = 0; i < 5; ++i) {
        w.trace.push_back({Seconds(2.0 * i), 100, 10});
    }
    EXPECT_DOUBLE_EQ(*offered_rate(w), 4.0 / 8.0); // 4 gaps over 8 s
    w.arrival.trace_speedup = 2.0;
    EXPECT_DOUBLE_EQ(*offered_rate(w), 1.0);
}

TEST(OperatingPoint, AStableOfferedRateIsServedExactlyAndFollowsLittlesLaw) {
    const Deployment d = small(256);
    Workload w = lengths(1024, 256);
    w.requests_per_s = 1.5;
    const ServingEstimate e = estimate_serving(d, w, default_profile());
    const OperatingPoint& op = e.operating_point;
    ASSERT_EQ(op.kind, LoadKind::OfferedRate);
    EXPECT_DOUBLE_EQ(e.throughput, 1.5 * 256); // what is offered, in output tokens/s
    ASSERT_TRUE(op.utilisation);
    EXPECT_DOUBLE_EQ(*op.utilisation, 1.5 * 256 / e.peak_throughput);
    // Little: N = λ × latency at N, latency = loaded prefill + 255 steady steps.
    const double latency = e.ttft_loaded.si() + 255 * e.tpot.si();
    EXPECT_NEAR(op.concurrency, 1.5 * latency, 1.0);
}

TEST(OperatingPoint, AnOfferedRateAboveCapacitySaysTheQueueGrows) {
    const Deployment d = small(8);
    Workload w = lengths(1024, 256);
    w.requests_per_s = 1000.0;
    const ServingEstimate e = estimate_serving(d, w, default_profile());
    EXPECT_GT(*e.operating_point.utilisation, 1.0);
    EXPECT_EQ(e.operating_point.concurrency, 8);
    EXPECT_DOUBLE_EQ(e.throughput, e.peak_throughput); // at 8 running, the most it serves
    EXPECT_NE(e.operating_point.why.find("without bound"), std::string::npos);
}

Scenario priced_on(const AcceleratorSpec& gpu) {
    Scenario s;
    s.deployment = deploy(llama31_70b(), gpu, 4);
    s.prices.gpu_hour = Price{{2.99, "USD"}, PriceBasis::Hour};
    s.prices.accelerator = gpu.name;
    return s;
}

TEST(PriceList, AScenariosRentIsForItsOwnAcceleratorOnly) {
    Scenario s = priced_on(h100());
    const auto own = gpu_hour_price(s);
    ASSERT_TRUE(own);
    EXPECT_DOUBLE_EQ(own->price.money.amount, 2.99);
    EXPECT_EQ(own->source, "prices.gpu_hour");
    // The same scenario on an H200: the hwdb's newest dated hourly price, with its source.
    AcceleratorSpec other = h200();
    other.prices = {{Price{{3.50, "USD"}, PriceBasis::Hour}, "2025-01", "S1", ""},
                    {Price{{4.00, "USD"}, PriceBasis::Hour}, "2026-02", "S2", ""}};
    s.deployment.gpu = other;
    const auto hwdb = gpu_hour_price(s);
    ASSERT_TRUE(hwdb);
    EXPECT_DOUBLE_EQ(hwdb->price.money.amount, 4.00);
    EXPECT_NE(hwdb->source.find("2026-02"), std::string::npos) << hwdb->source;
    // No hwdb price either: no price, never the H100's.
    other.prices.clear();
    s.deployment.gpu = other;
    EXPECT_FALSE(gpu_hour_price(s));
}

TEST(PriceList, BindingToNewHardwareDropsPricesForOtherHardware) {
    Scenario s = priced_on(h100());
    s.prices.electricity = Price{{0.12, "USD"}, PriceBasis::KilowattHour};
    s.deployment.gpu = h200();
    bind_prices_to_hardware(s);
    EXPECT_FALSE(s.prices.gpu_hour);
    EXPECT_TRUE(s.prices.electricity); // the site's price holds for any hardware
    EXPECT_EQ(s.prices.accelerator, h200().name);
}

} // namespace

namespace {

using namespace gpuplan;
using namespace gpuplan::model;

RequestClass cls(const char* name, double share, LengthDistribution in, LengthDistribution out,
                 int prefix) {
    RequestClass c;
    c.name = name;
    c.share = share;
    c.input = in;
    c.output = out;
    c.shared_prefix = prefix;
    return c;
}

TEST(WorkloadMix, TheMeanRequestIsTheShareWeightedMeanOfTheClasses) {
    Workload w;
    LengthDistribution chat_in;
    chat_in.kind = LengthKind::LogNormal;
    chat_in.mean = 600;
    chat_in.stddev = 500;
    LengthDistribution rag_in;
    rag_in.kind = LengthKind::Uniform;
    rag_in.min = 50;
    rag_in.max = 300;
    w.classes = {cls("chat", 0.7, chat_in, LengthDistribution::fixed(250), 400),
                 cls("rag", 0.3, rag_in, LengthDistribution::fixed(200), 2000)};
    const auto m = mean_request(w);
    ASSERT_TRUE(m);
    // input: 0.7 × (400 + 600) + 0.3 × (2000 + 175) = 1352.5; output 0.7 × 250 + 0.3 × 200.
    EXPECT_EQ(m->input_tokens, 1353);
    EXPECT_EQ(m->output_tokens, 235);
    EXPECT_EQ(m->cached_prefix, 880); // 0.7 × 400 + 0.3 × 2000
    EXPECT_DOUBLE_EQ(m->requests_per_arrival, 1.0);
    // The analytic model serves that request.
    EXPECT_EQ(analytic_request(w).input_tokens, 1353);
}

TEST(WorkloadMix, AnAgentSessionCountsItsStepsAndHalfItsGrowingContext) {
    Workload w;
    RequestClass agent =
        cls("agent", 1.0, LengthDistribution::fixed(1), LengthDistribution::fixed(100), 0);
    agent.agent = AgentSession{4, LengthDistribution::fixed(200), Seconds(0)};
    w.classes = {agent};
    w.requests_per_s = 2.0;
    const auto m = mean_request(w);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->input_tokens, 650); // 200 × (4 + 1) / 2 + 100 × (4 − 1) / 2
    EXPECT_DOUBLE_EQ(m->requests_per_arrival, 4.0);
    EXPECT_DOUBLE_EQ(*offered_rate(w), 8.0); // 2 sessions/s of 4 requests
}

TEST(WorkloadMix, MeansAreClampedLikeEveryDraw) {
    LengthDistribution d;
    d.kind = LengthKind::Normal;
    d.mean = 5000;
    d.max = 4096;
    EXPECT_DOUBLE_EQ(mean_length(d), 4096);
}

} // namespace

namespace gpuplan::model {
namespace {

using namespace gpuplan::model::test;

Workload trace_of(std::vector<double> at, int in, int out) {
    Workload w;
    w.arrival.kind = ArrivalKind::Trace;
    for (const double t : at) {
        w.trace.push_back({Seconds(t), in, out});
    }
    return w;
}

Deployment one_h100() {
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.max_model_len = 8192;
    d.engine.max_num_seqs = 256;
    return d;
}

TEST(OfflineBatch, ATraceWhoseRowsShareOneInstantIsABatchOfItsRowsWithTheirLengths) {
    const Workload w = trace_of({0, 0, 0, 0}, 128, 128);
    ASSERT_EQ(offline_batch_size(w), 4);
    const MemoryEstimate mem = estimate_memory(one_h100());
    const OperatingPoint op = resolve_operating_point(mem, w, 1);
    EXPECT_EQ(op.kind, LoadKind::OfflineBatch);
    EXPECT_EQ(op.batch_requests, 4);
    EXPECT_EQ(op.concurrency, 4); // all four fit at once
    EXPECT_FALSE(op.defaulted);
    // The analytic request is the trace's, not the default 1024 + 256.
    const Workload r = analytic_request(w);
    EXPECT_EQ(r.input_tokens, 128);
    EXPECT_EQ(r.output_tokens, 128);
    EXPECT_EQ(r.batch_requests, 4);
}

TEST(OfflineBatch, ASpreadTraceIsAnOpenLoopAtItsRateWithItsMeanLengths) {
    Workload w = trace_of({0, 1, 2, 3}, 100, 50);
    w.trace[1].input_tokens = 300; // mean input (100 + 300 + 100 + 100) / 4 = 150
    EXPECT_FALSE(offline_batch_size(w));
    EXPECT_DOUBLE_EQ(*arrival_rate(w), 1.0); // 3 gaps over 3 s
    const auto m = mean_request(w);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->input_tokens, 150);
    EXPECT_EQ(m->output_tokens, 50);
    const Workload stand_in = without_trace(w);
    EXPECT_TRUE(stand_in.trace.empty());
    EXPECT_DOUBLE_EQ(*arrival_rate(stand_in), 1.0);
    EXPECT_EQ(analytic_request(stand_in).input_tokens, 150);
}

TEST(OfflineBatch, BatchRequestsQueuesAllAndRunsWhatTheEngineHolds) {
    Deployment d = one_h100();
    d.engine.max_num_seqs = 64;
    Workload w;
    w.input_tokens = 512;
    w.output_tokens = 128;
    set_offline_batch(w, 1000);
    const OperatingPoint op = resolve_operating_point(estimate_memory(d), w, 1);
    EXPECT_EQ(op.kind, LoadKind::OfflineBatch);
    EXPECT_EQ(op.batch_requests, 1000);
    EXPECT_EQ(op.concurrency, 64); // max_num_seqs binds (the KV cache holds far more)
    EXPECT_NE(op.why.find("the most the deployment holds"), std::string::npos) << op.why;
    // The other loads clear it.
    set_closed_loop(w, 8);
    EXPECT_FALSE(w.batch_requests);
}

TEST(OfflineBatch, TwoLoadsAreAnErrorNamingBoth) {
    const MemoryEstimate mem = estimate_memory(one_h100());
    Workload w;
    w.batch_requests = 10;
    w.concurrency = 4;
    EXPECT_THROW((void)resolve_operating_point(mem, w, 1), InvalidArgument);
    w.concurrency.reset();
    w.requests = 20;
    EXPECT_THROW((void)resolve_operating_point(mem, w, 1), InvalidArgument);
    Workload t = trace_of({0, 0}, 10, 10);
    t.requests_per_s = 3;
    EXPECT_THROW((void)resolve_operating_point(mem, t, 1), InvalidArgument);
    EXPECT_THROW(set_offline_batch(t, 5), InvalidArgument); // a trace's rows are the requests
}

} // namespace
} // namespace gpuplan::model
