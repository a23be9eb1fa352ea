/// The diagnosis: each row of the troubleshooting table from the numbers that show it, with its
/// evidence and a re-estimated first fix.

#include "model/diagnose.hpp"

#include "fixtures.hpp"
#include "model/error.hpp"
#include "model/serving.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace gpuplan::model {
namespace {

using test::deploy;

const DiagnosisRow* find_row(const Diagnosis& g, const std::string& id) {
    const auto it = std::find_if(g.rows.begin(), g.rows.end(),
                                 [&](const DiagnosisRow& r) { return r.id == id; });
    return it == g.rows.end() ? nullptr : &*it;
}

bool mentions(const DiagnosisRow& r, const std::string& text) {
    return std::any_of(r.evidence.begin(), r.evidence.end(),
                       [&](const std::string& e) { return e.find(text) != std::string::npos; });
}

Workload chat(int in, int out, int concurrency) {
    Workload w;
    w.input_tokens = in;
    w.output_tokens = out;
    w.concurrency = concurrency;
    return w;
}

// The seed: a 7B in fp16 on an RTX 4090 at 99 % utilization gives 5 tokens/s to one user.
TEST(Diagnose, SeedBusyGpuFewTokensIsNotABandwidthLimit) {
    Deployment d = deploy(test::llama2_7b(), test::rtx4090());
    d.prec.weights = test::precision("fp16");
    d.prec.kv_cache = test::precision("fp16");
    d.engine.max_model_len = 4096;
    Observations obs;
    BenchSummary b;
    b.completed = 20;
    b.duration_s = 1028.4;
    b.max_concurrency = 1;
    b.mean_tpot_ms = 200.0;
    b.output_throughput = 5.0;
    obs.bench = b;
    GpuTelemetry g;
    g.samples = 6;
    g.utilization_gpu = 0.99;
    g.sm_clock_mhz = 2745;
    g.max_sm_clock_mhz = 3105;
    obs.gpu = g;
    const Diagnosis dg = diagnose(d, chat(512, 256, 1), default_profile(), obs);
    ASSERT_FALSE(dg.rows.empty());
    EXPECT_EQ(dg.rows.front().id, "decode-slow");
    EXPECT_EQ(dg.running, 1);
    // The floor: 6.74e9 fp16 weights read once per token over 1,008 GB/s ≈ 13.4 ms; the model
    // may add overheads but stays far below 200 ms / 3.
    const double floor = 6.74e9 * 2 / 1008e9;
    const double predicted = dg.predicted.estimate.tpot.si();
    EXPECT_GE(predicted, floor * 0.95);
    EXPECT_LT(predicted, 0.200 / 3);
    const DiagnosisRow& r = dg.rows.front();
    EXPECT_TRUE(mentions(r, "TPOT 200 ms observed"));
    EXPECT_TRUE(mentions(r, "GPU utilization 99 %"));
    EXPECT_EQ(r.symptom, "GPU busy but few tokens/s");
    // Eager mode adds launch costs and fp32 doubles the bytes: neither reaches 200 ms, so the
    // verdict points at weights read from host memory.
    EXPECT_NE(r.cause.find("most likely weights read from host memory"), std::string::npos)
        << r.cause;
    // The clock is at 88 % of its maximum: not the cause, and no clock row.
    EXPECT_EQ(find_row(dg, "power-capped"), nullptr);
    // The first fix is the framework's, re-estimated: back at the model's TPOT.
    ASSERT_FALSE(r.fixes.empty());
    EXPECT_EQ(r.fixes.front().layer, FixLayer::Framework);
    ASSERT_TRUE(r.fixes.front().estimated);
    EXPECT_NEAR(r.fixes.front().tpot.si(), predicted, 1e-12);
    EXPECT_GT(r.fixes.front().throughput, 5.0 * 3);
}

TEST(Diagnose, KvCacheFullRaisesMemoryUtilizationFirst) {
    Deployment d = deploy(test::llama3_8b(), test::h100());
    d.engine.max_model_len = 8192;
    d.engine.gpu_memory_utilization = 0.5;
    Observations obs;
    EngineMetrics m;
    m.running = 26;
    m.waiting = 31;
    m.kv_usage = 0.987;
    m.preemptions = 37;
    m.window_s = 60;
    m.delta = true;
    obs.metrics = m;
    const Diagnosis dg = diagnose(d, chat(6000, 1000, 64), default_profile(), obs);
    ASSERT_FALSE(dg.rows.empty());
    const DiagnosisRow& r = dg.rows.front();
    EXPECT_EQ(r.id, "kv-cache-full");
    EXPECT_EQ(dg.demand, 57);
    EXPECT_TRUE(mentions(r, "KV cache 99 % used"));
    EXPECT_TRUE(mentions(r, "31 waiting beside 26 running"));
    EXPECT_TRUE(mentions(r, "37 preemptions in the window"));
    ASSERT_GE(r.fixes.size(), 3u);
    EXPECT_EQ(r.fixes[0].change, "gpu_memory_utilization 0.50 → 0.95");
    EXPECT_EQ(r.fixes[1].layer, FixLayer::Model);
    EXPECT_EQ(r.fixes[2].layer, FixLayer::Hardware);
    // Raising the budget from 0.5 to 0.95 of ~79 GiB adds ~35 GiB of KV cache to the ~20 GiB
    // left at 0.5 (after ~15 GiB of weights): more than twice the sequences.
    ASSERT_TRUE(r.fixes[0].estimated);
    ASSERT_TRUE(r.fixes[0].deployment);
    EXPECT_DOUBLE_EQ(*r.fixes[0].deployment->engine.gpu_memory_utilization, 0.95);
    const int before = dg.capacity;
    // ~20 GiB of KV at 128 KiB per token holds ~160k tokens: ~24 sequences of 6,500 tokens.
    EXPECT_GT(before, 15);
    EXPECT_LT(before, 35);
    EXPECT_GT(r.fixes[0].capacity, 2 * before);
    // fp8 KV halves the bytes per token: about twice the sequences.
    EXPECT_NEAR(static_cast<double>(r.fixes[1].capacity) / before, 2.0, 0.15);
}

TEST(Diagnose, QueueingWithoutAFullCacheAddsReplicas) {
    Deployment d = deploy(test::llama3_8b(), test::h100());
    d.engine.max_model_len = 8192;
    d.engine.max_num_seqs = 32;
    Observations obs;
    EngineMetrics m;
    m.running = 32;
    m.waiting = 40;
    m.kv_usage = 0.30;
    m.ttft_mean_s = 4.0;
    m.queue_mean_s = 3.6;
    obs.metrics = m;
    const Diagnosis dg = diagnose(d, chat(1024, 256, 32), default_profile(), obs);
    const DiagnosisRow* r = find_row(dg, "queueing");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(find_row(dg, "kv-cache-full"), nullptr);
    EXPECT_TRUE(mentions(*r, "queue time 3600 ms is 90 % of TTFT"));
    EXPECT_TRUE(mentions(*r, "running 32 equals max_num_seqs 32"));
    ASSERT_GE(r->fixes.size(), 2u);
    EXPECT_EQ(r->fixes[0].change, "max_num_seqs 32 → 64");
    ASSERT_TRUE(r->fixes[0].estimated);
    // 72 sequences want to run; 64 may: more throughput than at 32.
    EXPECT_GT(r->fixes[0].throughput, dg.predicted.estimate.throughput);
    EXPECT_EQ(r->fixes[1].change, "replicas 1 → 2");
}

TEST(Diagnose, LowBatchAsksForMoreClientConcurrency) {
    Deployment d = deploy(test::llama3_8b(), test::h100());
    d.engine.max_model_len = 8192;
    Observations obs;
    EngineMetrics m;
    m.running = 2;
    m.waiting = 0;
    m.kv_usage = 0.01;
    obs.metrics = m;
    GpuTelemetry g;
    g.samples = 1;
    g.utilization_gpu = 0.97;
    obs.gpu = g;
    const Diagnosis dg = diagnose(d, chat(1024, 256, 2), default_profile(), obs);
    const DiagnosisRow* r = find_row(dg, "low-batch");
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(mentions(*r, "2 running, 0 waiting"));
    EXPECT_TRUE(mentions(*r, "GPU utilization 97 %"));
    ASSERT_FALSE(r->fixes.empty());
    ASSERT_TRUE(r->fixes[0].estimated);
    // Decode is bandwidth-bound: many more sequences share each weight read.
    EXPECT_GT(r->fixes[0].throughput, 10 * dg.predicted.estimate.throughput);
}

TEST(Diagnose, PowerCapHoldsTheClockDown) {
    Deployment d = deploy(test::llama2_7b(), test::rtx4090());
    d.engine.max_model_len = 4096;
    Observations obs;
    GpuTelemetry g;
    g.samples = 4;
    g.utilization_gpu = 1.0;
    g.sm_clock_mhz = 1110;
    g.max_sm_clock_mhz = 3105;
    g.power_draw_w = 149.9;
    g.power_limit_w = 150;
    g.power_cap_share = 1.0;
    g.has_throttle_reasons = true;
    obs.gpu = g;
    const Diagnosis dg = diagnose(d, chat(512, 256, 8), default_profile(), obs);
    const DiagnosisRow* r = find_row(dg, "power-capped");
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(mentions(*r, "SM clock 1110 of 3105 MHz (36 %"));
    EXPECT_TRUE(mentions(*r, "power draw 150 W of a 150 W limit"));
    ASSERT_FALSE(r->fixes.empty());
    EXPECT_EQ(r->fixes[0].layer, FixLayer::Hardware);
}

TEST(Diagnose, SlowFirstTokenWithNothingWaiting) {
    Deployment d = deploy(test::llama3_8b(), test::h100());
    d.engine.max_model_len = 8192;
    d.engine.enable_chunked_prefill = false;
    Observations obs;
    EngineMetrics m;
    m.running = 4;
    m.waiting = 0;
    m.kv_usage = 0.1;
    m.ttft_mean_s = 5.0;
    m.queue_mean_s = 0.01;
    obs.metrics = m;
    const Diagnosis dg = diagnose(d, chat(4096, 256, 4), default_profile(), obs);
    const DiagnosisRow* r = find_row(dg, "prefill-slow");
    ASSERT_NE(r, nullptr);
    ASSERT_FALSE(r->fixes.empty());
    EXPECT_EQ(r->fixes[0].change, "enable chunked prefill");
}

TEST(Diagnose, AgreementGivesNoRow) {
    Deployment d = deploy(test::llama3_8b(), test::h100());
    d.engine.max_model_len = 8192;
    d.engine.max_num_seqs = 32; // the batch is as large as the engine allows: not a low batch
    const Workload w = chat(1024, 256, 32);
    Observations first;
    EngineMetrics m;
    m.running = 32;
    m.waiting = 0;
    m.kv_usage = 0.4;
    first.metrics = m;
    // Observed exactly what the model predicts.
    const Diagnosis pred = diagnose(d, w, default_profile(), first);
    Observations obs = first;
    obs.metrics->itl_mean_s = pred.predicted.estimate.tpot.si();
    obs.metrics->ttft_mean_s = pred.predicted.estimate.ttft_loaded.si();
    const Diagnosis dg = diagnose(d, w, default_profile(), obs);
    EXPECT_TRUE(dg.rows.empty());
}

TEST(Diagnose, NegativeObservationIsRefused) {
    Deployment d = deploy(test::llama3_8b(), test::h100());
    Observations obs;
    EngineMetrics m;
    m.running = -1;
    obs.metrics = m;
    EXPECT_THROW((void)diagnose(d, chat(1024, 256, 1), default_profile(), obs), InvalidArgument);
}

} // namespace
} // namespace gpuplan::model

namespace gpuplan::model {
namespace {

TEST(Diagnose, AbsurdRunningCountIsRefusedNotConverted) {
    Deployment d = test::deploy(test::llama3_8b(), test::h100());
    Observations obs;
    EngineMetrics m;
    m.running = 1e15;
    obs.metrics = m;
    try {
        (void)diagnose(d, chat(1024, 256, 1), default_profile(), obs);
        FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(
            std::string(e.what()),
            "observed vllm:num_requests_running is 1e+15; it must be a finite number from 0 to "
            "1e+07 (check the metrics or benchmark file)");
    }
    // A bench result whose tokens/s × TPOT gives an absurd concurrency.
    Observations b;
    BenchSummary s;
    s.completed = 1;
    s.output_throughput = 1e12;
    s.mean_tpot_ms = 1e6;
    b.bench = s;
    EXPECT_THROW((void)diagnose(d, chat(1024, 256, 1), default_profile(), b), InvalidArgument);
}

} // namespace
} // namespace gpuplan::model

namespace gpuplan::model {
namespace {

// Telemetry only: the scenario's own load applies, here an offered rate (Little's law).
TEST(Diagnose, WithoutARunningCountTheScenariosLoadApplies) {
    Deployment d = test::deploy(test::llama2_7b(), test::rtx4090());
    d.engine.max_model_len = 4096;
    Workload w;
    w.input_tokens = 512;
    w.output_tokens = 256;
    w.requests_per_s = 0.5;
    Observations obs;
    GpuTelemetry g;
    g.samples = 2;
    g.utilization_gpu = 0.6;
    g.sm_clock_mhz = 1000;
    g.max_sm_clock_mhz = 3000;
    obs.gpu = g;
    const Diagnosis dg = diagnose(d, w, default_profile(), obs);
    // Little's law: 0.5 requests/s × a few seconds per request: a handful in flight, not the
    // deployment's capacity.
    EXPECT_GE(dg.running, 1);
    EXPECT_LT(dg.running, dg.capacity);
    EXPECT_EQ(dg.running,
              std::max(1, estimate_serving(d, w, default_profile()).operating_point.concurrency));
    ASSERT_FALSE(dg.rows.empty());
    EXPECT_EQ(dg.rows.front().id, "clock-throttled"); // the clock at 33 %, no reason reported
    EXPECT_EQ(dg.rows.front().cause, "the clock is held down (no throttle reason reported)");
    ASSERT_FALSE(dg.notes.empty());
    EXPECT_NE(dg.notes.front().find("the scenario's load is used"), std::string::npos);
}

// histogram_quantile against values worked by hand with Prometheus' rule: rank = q × total,
// interpolated linearly inside the bucket that reaches the rank.
TEST(HistogramQuantile, InterpolatesInsideTheBucketThatHoldsTheRank) {
    const double inf = HUGE_VAL;
    // Cumulative counts 10, 40, 80, 95, 100 at 0.1, 0.25, 0.5, 1, 2.5 s; 100 in all.
    const std::vector<HistogramBucket> b{{0.1, 10}, {0.25, 40}, {0.5, 80},
                                         {1.0, 95}, {2.5, 100}, {inf, 100}};
    // P50: rank 50 lies in (0.25, 0.5] holding 40..80: 0.25 + 0.25 × (50 − 40) / 40 = 0.3125.
    EXPECT_DOUBLE_EQ(*histogram_quantile(0.5, b), 0.3125);
    // P90: rank 90 in (0.5, 1] holding 80..95: 0.5 + 0.5 × 10 / 15.
    EXPECT_DOUBLE_EQ(*histogram_quantile(0.9, b), 0.5 + 0.5 * 10.0 / 15.0);
    // P99: rank 99 in (1, 2.5] holding 95..100: 1 + 1.5 × 4 / 5 = 2.2.
    EXPECT_DOUBLE_EQ(*histogram_quantile(0.99, b), 2.2);
    // Rank 5 in the first bucket, whose lower bound is 0: 0.1 × 5 / 10.
    EXPECT_DOUBLE_EQ(*histogram_quantile(0.05, b), 0.05);
    // Order does not matter.
    std::vector<HistogramBucket> shuffled(b.rbegin(), b.rend());
    EXPECT_DOUBLE_EQ(*histogram_quantile(0.5, shuffled), 0.3125);
}

TEST(HistogramQuantile, RankInTheInfBucketGivesTheLargestFiniteBound) {
    const double inf = HUGE_VAL;
    // 50 of 100 observations above 0.2 s: P99 cannot be placed; Prometheus answers 0.2.
    const std::vector<HistogramBucket> b{{0.1, 0}, {0.2, 50}, {inf, 100}};
    EXPECT_DOUBLE_EQ(*histogram_quantile(0.99, b), 0.2);
    // P25: rank 25 in (0.1, 0.2] holding 0..50: 0.1 + 0.1 × 25 / 50.
    EXPECT_DOUBLE_EQ(*histogram_quantile(0.25, b), 0.15);
}

TEST(HistogramQuantile, EmptyOrMalformedHistograms) {
    const double inf = HUGE_VAL;
    EXPECT_FALSE(histogram_quantile(0.5, {{0.1, 0}, {inf, 0}}).has_value());
    EXPECT_THROW((void)histogram_quantile(1.5, {{0.1, 1}, {inf, 1}}), InvalidArgument);
    EXPECT_THROW((void)histogram_quantile(0.5, {{0.1, 1}, {0.2, 2}}), InvalidArgument); // no +Inf
    EXPECT_THROW((void)histogram_quantile(0.5, {{0.1, 5}, {0.2, 2}, {inf, 5}}), InvalidArgument);
}

// The start-up log's KV cache against the model's: 176,080 tokens predicted for this
// deployment (11,005 blocks of 16); 120,000 logged is 31.9 % short, past the band.
TEST(Diagnose, StartupLogKvSizeBeyondTheBandIsARow) {
    Deployment d = deploy(test::llama3_8b(), test::h100());
    d.engine.max_model_len = 8192;
    d.engine.gpu_memory_utilization = 0.5;
    const Workload w = chat(6000, 1000, 64);
    const auto profile = default_profile();
    const ServingEstimate e = estimate_serving(d, w, profile);
    ASSERT_GT(e.memory.kv_tokens, 0);
    const double band = std::max(0.10, e.error_band.p90);

    Observations obs;
    obs.startup = EngineStartup{};
    // 70 % fewer tokens than predicted: past the band (this profile's P90 error is 50 %).
    obs.startup->kv_tokens =
        static_cast<std::int64_t>(0.3 * static_cast<double>(e.memory.kv_tokens));
    obs.startup->line = 5;
    ASSERT_LT(band, 0.7);
    const Diagnosis g = diagnose(d, w, profile, obs);
    const DiagnosisRow* r = find_row(g, "kv-size-mismatch");
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(mentions(*r, "start-up log line 5"));
    EXPECT_TRUE(mentions(*r, "-70 %"));
    EXPECT_EQ(r->fixes.front().layer, FixLayer::Framework);
    EXPECT_TRUE(r->fixes.front().estimated);
    EXPECT_EQ(r->fixes.front().change,
              "free the GPU of other processes and raise gpu_memory_utilization 0.50 → 0.95");
    ASSERT_FALSE(g.comparisons.empty());
    EXPECT_EQ(g.comparisons.front().figure, "KV cache");
    EXPECT_DOUBLE_EQ(g.comparisons.front().predicted, static_cast<double>(e.memory.kv_tokens));

    // V0's block count × 16 equal to the prediction: no row.
    Observations same;
    same.startup = EngineStartup{};
    same.startup->gpu_blocks = e.memory.kv_blocks;
    ASSERT_EQ(e.memory.kv_blocks * 16, e.memory.kv_tokens);
    EXPECT_EQ(find_row(diagnose(d, w, profile, same), "kv-size-mismatch"), nullptr);
}

TEST(Diagnose, MergedTelemetryTakesEachFieldFromTheFirstSourceThatHasIt) {
    GpuTelemetry smi;
    smi.samples = 3;
    smi.utilization_gpu = 0.99;
    smi.sm_clock_mhz = 1980;
    GpuTelemetry dcgm;
    dcgm.source = "dcgm";
    dcgm.samples = 1;
    dcgm.utilization_gpu = 0.5;
    dcgm.dram_active = 0.06;
    dcgm.has_throttle_reasons = true;
    dcgm.power_cap_share = 1.0;
    const GpuTelemetry t = merge(smi, dcgm);
    EXPECT_EQ(t.utilization_gpu, 0.99);
    EXPECT_EQ(t.dram_active, 0.06);
    EXPECT_EQ(t.sm_clock_mhz, 1980.0);
    EXPECT_TRUE(t.has_throttle_reasons);
    EXPECT_EQ(t.power_cap_share, 1.0);
    EXPECT_EQ(t.samples, 4);
    EXPECT_EQ(t.source, "nvidia-smi+dcgm");
}

} // namespace

// The whole table (for front ends that mark the rows that apply): one entry per row of
// docs/diagnose.md, the ids unique, the conditions written with the thresholds given.
TEST(Diagnose, TroubleshootingTableListsEveryRowWithItsThresholds) {
    const auto table = troubleshooting_table();
    ASSERT_EQ(table.size(), 14u);
    std::vector<std::string> ids;
    for (const auto& t : table) {
        ids.insert(ids.end(), t.ids.begin(), t.ids.end());
    }
    EXPECT_EQ(ids, (std::vector<std::string>{
                       "kv-cache-full", "queueing", "low-batch", "decode-slow", "power-capped",
                       "thermal-throttled", "clock-throttled", "kv-size-mismatch", "prefill-slow",
                       "spec-low-acceptance", "step-underfilled", "comm-bound", "input-stall",
                       "training-memory", "stragglers", "rack-budget-exceeded"}));
    EXPECT_NE(table[0].fires_when.find("95 %"), std::string::npos) << table[0].fires_when;
    DiagnosisThresholds th;
    th.kv_full = 0.9;
    th.slow_factor = 4;
    const auto custom = troubleshooting_table(th);
    EXPECT_NE(custom[0].fires_when.find("90 %"), std::string::npos) << custom[0].fires_when;
    EXPECT_NE(custom[3].fires_when.find("4×"), std::string::npos) << custom[3].fires_when;
}

} // namespace gpuplan::model
