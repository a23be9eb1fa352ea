/// Readers of vLLM /metrics scrapes, `vllm bench serve` results and nvidia-smi CSV samples:
/// values as written, and errors that name the file, line and field.

#include "hwdb/observed_readers.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace gpuplan::hwdb {
namespace {

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

const char* kScrapeA =
    R"(# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 10
vllm:num_requests_running{engine="1",model_name="m"} 6
vllm:num_requests_waiting{engine="0",model_name="m"} 0
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.7
vllm:generation_tokens_total{engine="0",model_name="a \"quoted} name"} 1000
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf"} 10
vllm:time_to_first_token_seconds_count{engine="0"} 10
vllm:time_to_first_token_seconds_sum{engine="0"} 2.5
vllm:num_preemptions_total{engine="0"} 3
)";

const char* kScrapeB = R"(vllm:num_requests_running{engine="0"} 12
vllm:num_requests_waiting{engine="0"} 4
vllm:kv_cache_usage_perc{engine="0"} 0.9
vllm:generation_tokens_total{engine="0"} 4000
vllm:time_to_first_token_seconds_count{engine="0"} 30
vllm:time_to_first_token_seconds_sum{engine="0"} 12.5
vllm:num_preemptions_total{engine="0"} 8
)";

TEST(MetricsReader, OneScrapeSumsEnginesAndAveragesFractions) {
    const auto m = engine_metrics(parse_metrics_scrape(kScrapeA, "a.prom"), "a.prom");
    EXPECT_EQ(m.running, 16.0);
    EXPECT_EQ(m.waiting, 0.0);
    EXPECT_DOUBLE_EQ(*m.kv_usage, 0.6);
    EXPECT_EQ(m.generation_tokens, 1000.0);
    EXPECT_DOUBLE_EQ(*m.ttft_mean_s, 0.25);
    EXPECT_EQ(m.preemptions, 3.0);
    EXPECT_FALSE(m.delta);
}

TEST(MetricsReader, TwoScrapesGiveTheWindow) {
    const auto m = engine_metrics(parse_metrics_scrape(kScrapeA, "a"),
                                  parse_metrics_scrape(kScrapeB, "b"), "b", 30.0);
    EXPECT_TRUE(m.delta);
    EXPECT_EQ(m.generation_tokens, 3000.0);
    EXPECT_DOUBLE_EQ(*m.ttft_mean_s, (12.5 - 2.5) / (30 - 10));
    EXPECT_EQ(m.preemptions, 5.0);
    EXPECT_EQ(m.window_s, 30.0);
    EXPECT_EQ(m.running, 12.0); // gauges from the later scrape
}

TEST(MetricsReader, V0NamesAndTimestamps) {
    const auto a = parse_metrics_scrape("vllm:gpu_cache_usage_perc 0.97 1000\n"
                                        "vllm:time_per_output_token_seconds_sum 1.0 1000\n"
                                        "vllm:time_per_output_token_seconds_count 50 1000\n",
                                        "a");
    const auto b = parse_metrics_scrape("vllm:gpu_cache_usage_perc 0.98 31000\n"
                                        "vllm:time_per_output_token_seconds_sum 3.0 31000\n"
                                        "vllm:time_per_output_token_seconds_count 100 31000\n",
                                        "b");
    const auto m = engine_metrics(a, b, "b", std::nullopt);
    EXPECT_DOUBLE_EQ(*m.kv_usage, 0.98);
    EXPECT_DOUBLE_EQ(*m.itl_mean_s, 2.0 / 50);
    EXPECT_DOUBLE_EQ(*m.window_s, 30.0);
}

TEST(MetricsReader, ErrorsNameFileLineAndField) {
    EXPECT_EQ(error_of([] {
                  (void)parse_metrics_scrape("# ok\nvllm:num_requests_running 12x\n", "s.prom");
              }),
              "s.prom:2:27: vllm:num_requests_running: the value '12x' is not a number; write a "
              "decimal number, NaN or +Inf");
    EXPECT_NE(error_of([] {
                  (void)parse_metrics_scrape("vllm:x{a=\"1\" 3\n", "s.prom");
              }).find("s.prom:1:"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  (void)engine_metrics(parse_metrics_scrape("up 1\n", "s.prom"), "s.prom");
              }).find("no vllm: metric found"),
              std::string::npos);
    const std::string back = error_of([] {
        (void)engine_metrics(parse_metrics_scrape(kScrapeB, "b"),
                             parse_metrics_scrape(kScrapeA, "a"), "a", 30.0);
    });
    EXPECT_NE(back.find("went down from"), std::string::npos) << back;
    EXPECT_NE(back.find("give the earlier scrape first"), std::string::npos) << back;
}

TEST(BenchReader, ReadsTheSummary) {
    const auto b = parse_vllm_bench(R"({"completed": 20, "duration": 100.0, "mean_tpot_ms": 196.8,
        "output_throughput": 4.98, "max_concurrency": 1, "request_goodput": null, "total_input_tokens": 10240})",
                                    "r.json");
    EXPECT_EQ(b.completed, 20);
    EXPECT_EQ(b.mean_tpot_ms, 196.8);
    EXPECT_EQ(b.max_concurrency, 1);
    EXPECT_EQ(b.total_input_tokens, 10240.0);
    EXPECT_FALSE(b.mean_ttft_ms);
}

TEST(BenchReader, ErrorsNameTheField) {
    EXPECT_EQ(error_of([] {
                  (void)parse_vllm_bench("{\"completed\": 3,\n \"duration\": \"long\"}", "r.json");
              }),
              "r.json:2:2: duration: is string, expected a number");
    EXPECT_NE(error_of([] {
                  (void)parse_vllm_bench("{\"duration\": 1}", "r.json");
              }).find("completed: missing"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  (void)parse_vllm_bench("{\"completed\": 1,", "r.json");
              }).find("not valid JSON"),
              std::string::npos);
}

TEST(SmiReader, UnitsThrottleReasonsAndNotAvailable) {
    const auto t = parse_nvidia_smi_csv(
        "name, utilization.gpu [%], memory.used [MiB], power.draw [W], clocks.sm [MHz], "
        "clocks.max.sm [MHz], clocks_throttle_reasons.active\n"
        "NVIDIA H100, 100 %, 1024 MiB, [N/A], 1000 MHz, 2000 MHz, 0x0000000000000004\n"
        "NVIDIA H100, 90 %, 1024 MiB, 300.0 W, 1500 MHz, 2000 MHz, 0x0000000000000040\n",
        "g.csv");
    EXPECT_EQ(t.samples, 2);
    EXPECT_DOUBLE_EQ(*t.utilization_gpu, 0.95);
    EXPECT_DOUBLE_EQ(*t.memory_used_bytes, 1024.0 * 1048576);
    EXPECT_DOUBLE_EQ(*t.power_draw_w, 300.0);
    EXPECT_DOUBLE_EQ(*t.sm_clock_mhz, 1250.0);
    EXPECT_DOUBLE_EQ(t.power_cap_share, 0.5);
    EXPECT_DOUBLE_EQ(t.thermal_share, 0.5);
    // nounits
    const auto n = parse_nvidia_smi_csv("utilization.gpu [%], clocks.sm [MHz]\n50, 900\n", "g.csv");
    EXPECT_DOUBLE_EQ(*n.utilization_gpu, 0.5);
}

TEST(SmiReader, ErrorsNameLineAndField) {
    EXPECT_EQ(
        error_of([] {
            (void)parse_nvidia_smi_csv("utilization.gpu [%], clocks.sm [MHz]\n50 %\n", "g.csv");
        }),
        "g.csv:2:1: 1 fields where the header has 2; every line needs one value per query field");
    EXPECT_EQ(error_of([] { (void)parse_nvidia_smi_csv("utilization.gpu [%]\nbusy\n", "g.csv"); }),
              "g.csv:2:1: utilization.gpu [%]: 'busy' is not a number >= 0; write it as nvidia-smi "
              "does (e.g. 99 %, 20480 MiB, 250.5 W)");
    EXPECT_NE(error_of([] {
                  (void)parse_nvidia_smi_csv("a, b\n1, 2\n", "g.csv");
              }).find("names no known field"),
              std::string::npos);
}

} // namespace
} // namespace gpuplan::hwdb

namespace gpuplan::hwdb {
namespace {

TEST(BenchReader, HugeCountsAreRefusedBeforeConversion) {
    EXPECT_EQ(error_of([] {
                  (void)parse_vllm_bench("{\"completed\": 1e30, \"duration\": 1}", "r.json");
              }),
              "r.json:1:2: completed: is 1e+30, more than 1e9; check the file");
    EXPECT_NE(error_of([] {
                  (void)parse_vllm_bench(
                      "{\"completed\": 3, \"duration\": 1, \"max_concurrency\": 1e20}", "r.json");
              }).find("max_concurrency: is 1e+20"),
              std::string::npos);
}

} // namespace
} // namespace gpuplan::hwdb

namespace gpuplan::hwdb {
namespace {

TEST(MetricsReader, AbsurdCountsNameTheFile) {
    EXPECT_EQ(error_of([] {
                  (void)engine_metrics(
                      parse_metrics_scrape("vllm:num_requests_running 1e300\n", "s.prom"),
                      "s.prom");
              }),
              "s.prom: vllm:num_requests_running: is 1e+300, more than ten million sequences; "
              "check the scrape");
}

TEST(SmiReader, EmptyFileSaysSo) {
    EXPECT_NE(
        error_of([] { (void)parse_nvidia_smi_csv("", "g.csv"); }).find("g.csv: the file is empty"),
        std::string::npos);
}

std::string fixture(const std::string& name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/diagnose/" + name;
}

// Buckets of two engines are summed bucket by bucket: 10, 40, 80, 95, 100 at 0.1 .. 2.5 s.
const char* kBuckets =
    R"(vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1"} 4
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.25"} 20
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.5"} 50
vllm:time_to_first_token_seconds_bucket{engine="0",le="1.0"} 60
vllm:time_to_first_token_seconds_bucket{engine="0",le="2.5"} 62
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf"} 62
vllm:time_to_first_token_seconds_bucket{engine="1",le="0.1"} 6
vllm:time_to_first_token_seconds_bucket{engine="1",le="0.25"} 20
vllm:time_to_first_token_seconds_bucket{engine="1",le="0.5"} 30
vllm:time_to_first_token_seconds_bucket{engine="1",le="1.0"} 35
vllm:time_to_first_token_seconds_bucket{engine="1",le="2.5"} 38
vllm:time_to_first_token_seconds_bucket{engine="1",le="+Inf"} 38
vllm:time_to_first_token_seconds_count{engine="0"} 62
vllm:time_to_first_token_seconds_count{engine="1"} 38
vllm:time_to_first_token_seconds_sum{engine="0"} 40
vllm:time_to_first_token_seconds_sum{engine="1"} 20
)";

TEST(MetricsReader, PercentilesFromTheBuckets) {
    const auto m = engine_metrics(parse_metrics_scrape(kBuckets, "b.prom"), "b.prom");
    // By hand (Prometheus' linear interpolation): 0.25 + 0.25 × 10/40, 0.5 + 0.5 × 10/15,
    // 1 + 1.5 × 4/5.
    EXPECT_DOUBLE_EQ(*m.ttft_p50_s, 0.3125);
    EXPECT_DOUBLE_EQ(*m.ttft_p90_s, 0.5 + 0.5 * 10.0 / 15.0);
    EXPECT_DOUBLE_EQ(*m.ttft_p99_s, 2.2);
    EXPECT_DOUBLE_EQ(*m.ttft_mean_s, 0.6);
    EXPECT_FALSE(m.itl_p50_s.has_value());
}

TEST(MetricsReader, PercentilesOverTheWindowFromTwoScrapes) {
    const char* earlier = R"(vllm:inter_token_latency_seconds_bucket{le="0.01"} 10
vllm:inter_token_latency_seconds_bucket{le="0.02"} 20
vllm:inter_token_latency_seconds_bucket{le="+Inf"} 20
vllm:generation_tokens_total 100
)";
    const char* later = R"(vllm:inter_token_latency_seconds_bucket{le="0.01"} 10
vllm:inter_token_latency_seconds_bucket{le="0.02"} 60
vllm:inter_token_latency_seconds_bucket{le="+Inf"} 70
vllm:generation_tokens_total 200
)";
    const auto m = engine_metrics(parse_metrics_scrape(earlier, "a"),
                                  parse_metrics_scrape(later, "b"), "b", 10.0);
    // The window's buckets: 0, 40, 50. P50: rank 25 in (0.01, 0.02]: 0.01 + 0.01 × 25/40.
    EXPECT_DOUBLE_EQ(*m.itl_p50_s, 0.01625);
    // P90: rank 45 lies in the +Inf bucket: the largest finite bound.
    EXPECT_DOUBLE_EQ(*m.itl_p90_s, 0.02);
}

TEST(MetricsReader, BucketErrorsNameTheLine) {
    const std::string no_le =
        error_of([] { (void)parse_metrics_scrape("vllm:x_bucket{engine=\"0\"} 3\n", "m.prom"); });
    EXPECT_NE(no_le.find("m.prom:1:"), std::string::npos) << no_le;
    EXPECT_NE(no_le.find("without an le label"), std::string::npos) << no_le;
    const std::string no_inf = error_of([] {
        const auto s = parse_metrics_scrape(
            "vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} 3\n", "m.prom");
        (void)engine_metrics(s, "m.prom");
    });
    EXPECT_NE(no_inf.find("le=\"+Inf\""), std::string::npos) << no_inf;
}

TEST(GuideLlmReader, InterTokenLatencyIsTpotAndTimePerOutputTokenIncludesTheFirst) {
    const auto b = read_guidellm(fixture("seed-7b-guidellm.json"));
    EXPECT_EQ(b.tool, "guidellm");
    EXPECT_EQ(b.completed, 20);
    EXPECT_DOUBLE_EQ(b.duration_s, 1028.4);
    EXPECT_EQ(b.mean_tpot_ms, 196.8); // inter_token_latency_ms
    EXPECT_EQ(b.p99_tpot_ms, 204.9);
    // time_per_output_token_ms = latency / tokens = (1210.5 + 255 × 196.8) / 256 ≈ 200.76 ms.
    EXPECT_EQ(b.mean_ms_per_token_incl_first, 200.76);
    EXPECT_NEAR((1210.5 + 255 * 196.8) / 256, *b.mean_ms_per_token_incl_first, 0.01);
    EXPECT_EQ(b.mean_ttft_ms, 1210.5);
    EXPECT_EQ(b.p99_ttft_ms, 1302.7);
    EXPECT_EQ(b.output_throughput, 4.979);
    EXPECT_EQ(b.total_input_tokens, 10240.0);
    EXPECT_EQ(b.total_output_tokens, 5120.0);
    EXPECT_EQ(b.max_concurrency, 1);
}

TEST(GuideLlmReader, SweepsNeedAnIndexAndFieldsAreChecked) {
    const std::string two = R"({"benchmarks": [
  {"duration": 10, "metrics": {"request_totals": {"successful": 5},
   "inter_token_latency_ms": {"successful": {"mean": 20}}}},
  {"duration": 10, "metrics": {"request_totals": {"successful": 7},
   "inter_token_latency_ms": {"successful": {"mean": "fast"}}}}
]})";
    const std::string e = error_of([&] { (void)parse_guidellm(two, "g.json"); });
    EXPECT_NE(e.find("holds 2 benchmarks"), std::string::npos) << e;
    EXPECT_NE(e.find("--bench-index 0..1"), std::string::npos) << e;
    EXPECT_EQ(parse_guidellm(two, "g.json", 0).completed, 5);
    const std::string bad = error_of([&] { (void)parse_guidellm(two, "g.json", 1); });
    // The second benchmark's mean, on line 5, column 40.
    EXPECT_NE(bad.find("g.json:5:"), std::string::npos) << bad;
    EXPECT_NE(bad.find("benchmarks[1].metrics.inter_token_latency_ms.successful.mean"),
              std::string::npos)
        << bad;
    EXPECT_NE(bad.find("expected a number"), std::string::npos) << bad;
    const std::string none = error_of([] { (void)parse_guidellm(R"({"x": 1})", "g.json"); });
    EXPECT_NE(none.find("benchmarks"), std::string::npos) << none;
}

TEST(AiperfReader, ReadsTheAggregateExport) {
    const auto b = read_aiperf(fixture("seed-7b-aiperf.json"));
    EXPECT_EQ(b.tool, "aiperf");
    EXPECT_EQ(b.completed, 20);
    EXPECT_DOUBLE_EQ(b.duration_s, 1028.4);
    EXPECT_EQ(b.mean_tpot_ms, 196.8);
    EXPECT_EQ(b.p99_tpot_ms, 204.9);
    EXPECT_EQ(b.mean_ttft_ms, 1210.5);
    EXPECT_EQ(b.median_ttft_ms, 1198.2);
    EXPECT_EQ(b.output_throughput, 4.979);
    EXPECT_EQ(b.total_input_tokens, 10240.0);
    EXPECT_EQ(b.max_concurrency, 1);
}

TEST(AiperfReader, ConvertsTimeUnitsAndRefusesOthers) {
    const auto b = parse_aiperf(
        R"({"request_count": {"avg": 4}, "benchmark_duration": {"unit": "sec", "avg": 2},
 "inter_token_latency": {"unit": "s", "avg": 0.02}, "time_to_first_token": {"unit": "ns", "avg": 150000000}})",
        "a.json");
    EXPECT_DOUBLE_EQ(*b.mean_tpot_ms, 20.0);
    EXPECT_DOUBLE_EQ(*b.mean_ttft_ms, 150.0);
    const auto older =
        parse_aiperf(R"({"request_count": {"avg": 4}, "benchmark_duration": {"avg": 2},
 "total_output_tokens": {"avg": 512}, "inter_token_latency": {"avg": 9}})",
                     "a.json");
    EXPECT_EQ(older.total_output_tokens, 512.0);
    EXPECT_DOUBLE_EQ(older.duration_s, 2.0); // no unit: seconds
    const std::string e = error_of([] {
        (void)parse_aiperf(R"({"request_count": {"avg": 4}, "benchmark_duration": {"avg": 2},
 "inter_token_latency": {"unit": "tokens", "avg": 3}})",
                           "a.json");
    });
    EXPECT_NE(e.find("a.json:2:"), std::string::npos) << e;
    EXPECT_NE(e.find("inter_token_latency.unit"), std::string::npos) << e;
    const std::string missing =
        error_of([] { (void)parse_aiperf(R"({"benchmark_duration": {"avg": 2}})", "a.json"); });
    EXPECT_NE(missing.find("request_count.avg"), std::string::npos) << missing;
}

TEST(DmonReader, AveragesTheSelectedColumns) {
    const auto t = read_nvidia_smi_dmon(fixture("seed-7b-dmon.txt"));
    EXPECT_EQ(t.samples, 4);
    EXPECT_DOUBLE_EQ(*t.utilization_gpu, (99 + 99 + 100 + 98) / 400.0);
    EXPECT_DOUBLE_EQ(*t.utilization_memory, (7 + 6 + 7 + 6) / 400.0);
    EXPECT_DOUBLE_EQ(*t.power_draw_w, (118 + 117 + 119 + 118) / 4.0);
    EXPECT_DOUBLE_EQ(*t.sm_clock_mhz, 2745.0);
    EXPECT_TRUE(t.has_throttle_reasons);
    EXPECT_EQ(t.power_cap_share, 0.0);
    EXPECT_FALSE(t.max_sm_clock_mhz.has_value()); // dmon does not show it
}

TEST(DmonReader, ErrorsNameLineColumnAndField) {
    const std::string text = "# gpu    pwr     sm    mem   pclk\n"
                             "# Idx      W      %      %    MHz\n"
                             "    0    300    fast    40   1980\n";
    const std::string e = error_of([&] { (void)parse_nvidia_smi_dmon(text, "d.txt"); });
    EXPECT_NE(e.find("d.txt:3:17"), std::string::npos) << e;
    EXPECT_NE(e.find("sm"), std::string::npos) << e;
    const std::string short_line =
        error_of([] { (void)parse_nvidia_smi_dmon("# gpu pwr sm\n    0 300\n", "d.txt"); });
    EXPECT_NE(short_line.find("d.txt:2:1"), std::string::npos) << short_line;
    const std::string none = error_of([] { (void)parse_nvidia_smi_dmon("0 1 2\n", "d.txt"); });
    EXPECT_NE(none.find("before the '# gpu pwr ...' header"), std::string::npos) << none;
}

TEST(DcgmReader, ProfilingFieldsClocksAndThrottleReasons) {
    const auto t = read_dcgm_metrics(fixture("seed-7b-dcgm.prom"));
    EXPECT_EQ(t.sm_active, 0.31);
    EXPECT_EQ(t.dram_active, 0.06);
    EXPECT_EQ(t.tensor_active, 0.02);
    EXPECT_EQ(t.power_draw_w, 118.2);
    EXPECT_EQ(t.sm_clock_mhz, 2745.0);
    EXPECT_DOUBLE_EQ(*t.utilization_gpu, 0.99);
    EXPECT_TRUE(t.has_throttle_reasons);
    EXPECT_EQ(t.power_cap_share, 0.0);
    // Two GPUs, one power-capped (0x4), one in hardware thermal slowdown (0x40).
    const auto two = parse_dcgm_metrics(
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu=\"0\"} 4\n"
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu=\"1\"} 64\n"
        "DCGM_FI_PROF_SM_ACTIVE{gpu=\"0\"} 0.5\nDCGM_FI_PROF_SM_ACTIVE{gpu=\"1\"} 0.7\n",
        "d.prom");
    EXPECT_DOUBLE_EQ(two.power_cap_share, 0.5);
    EXPECT_DOUBLE_EQ(two.thermal_share, 0.5);
    EXPECT_DOUBLE_EQ(*two.sm_active, 0.6);
    const std::string pct = error_of(
        [] { (void)parse_dcgm_metrics("DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\"} 87\n", "d.prom"); });
    EXPECT_NE(pct.find("DCGM_FI_PROF_DRAM_ACTIVE"), std::string::npos) << pct;
    EXPECT_NE(pct.find("ratios from 0 to 1"), std::string::npos) << pct;
    const std::string none =
        error_of([] { (void)parse_dcgm_metrics("vllm:num_requests_running 3\n", "d.prom"); });
    EXPECT_NE(none.find("no DCGM_FI_ metric"), std::string::npos) << none;
}

TEST(StartupLogReader, V1AndV0Lines) {
    const auto v1 = read_startup_log(fixture("kv-size-h100-startup.log"));
    EXPECT_EQ(v1.kv_tokens, 120000);
    EXPECT_EQ(v1.line, 5);
    EXPECT_EQ(v1.concurrency_len, 8192);
    EXPECT_EQ(v1.max_concurrency, 14.65);
    EXPECT_FALSE(v1.gpu_blocks.has_value());
    const auto v0 = read_startup_log(fixture("kv-size-h100-v0.log"));
    EXPECT_EQ(v0.gpu_blocks, 11005);
    EXPECT_FALSE(v0.kv_tokens.has_value());
    EXPECT_EQ(v0.line, 2);
    const std::string bad = error_of(
        [] { (void)parse_startup_log("INFO x GPU KV cache size: many tokens\n", "s.log"); });
    EXPECT_NE(bad.find("s.log:1:26"), std::string::npos) << bad;
    EXPECT_NE(bad.find("GPU KV cache size"), std::string::npos) << bad;
    const std::string none = error_of([] { (void)parse_startup_log("INFO starting\n", "s.log"); });
    EXPECT_NE(none.find("no KV cache line"), std::string::npos) << none;
}

TEST(BenchResults, TheToolIsFoundFromTheKeys) {
    const auto g = read_bench_results(fixture("healthy-8b-h100-guidellm-sweep.json"));
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[1].bench.tool, "guidellm");
    EXPECT_EQ(g[1].bench.completed, 640);
    EXPECT_NE(g[1].label.find("#1"), std::string::npos);
    const auto a = read_bench_results(fixture("seed-7b-aiperf.json"));
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].bench.tool, "aiperf");
    const auto v = read_bench_results(fixture("seed-7b-bench.json"));
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].bench.tool, "vllm bench");
    // Neither: the vLLM reader names what is missing.
    const std::string e = error_of([] { (void)parse_bench_results(R"({"x": 1})", "r.json"); });
    EXPECT_NE(e.find("completed"), std::string::npos) << e;
}

TEST(StartupLogReader, SglangAndTensorRtLlmLines) {
    const auto sg = read_startup_log(fixture("kv-size-h100-sglang.log"));
    EXPECT_EQ(sg.engine, "sglang");
    EXPECT_EQ(sg.kv_tokens, 171904);
    EXPECT_EQ(sg.line, 2); // the first line with the smallest pool
    EXPECT_EQ(sg.concurrency_len, 8192);
    // Two TP ranks with different pools: the engine runs with the smaller.
    const auto two =
        parse_startup_log("[TP0] KV Cache is allocated. #tokens: 46611, K size: 1 GB\n"
                          "[TP1] KV Cache is allocated. #tokens: 46500, K size: 1 GB\n",
                          "s.log");
    EXPECT_EQ(two.kv_tokens, 46500);
    EXPECT_EQ(two.line, 2);
    const auto trt = parse_startup_log(
        "[TensorRT-LLM][INFO] Number of tokens per block: 64.\n"
        "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 26.91 GiB for max tokens in paged KV "
        "cache (220480).\n",
        "t.log");
    EXPECT_EQ(trt.engine, "tensorrt-llm");
    EXPECT_EQ(trt.kv_tokens, 220480);
    EXPECT_EQ(trt.line, 2);
    const std::string bad = error_of(
        [] { (void)parse_startup_log("KV Cache is allocated. #tokens: lots\n", "s.log"); });
    EXPECT_NE(bad.find("s.log:1:33: #tokens"), std::string::npos) << bad;
}

// read_observations is the one chain `gpuplan diagnose` and the app's Diagnose tab read files
// through: each file goes to its reader, telemetry is merged nvidia-smi CSV first.
TEST(ReadObservations, EachFileGoesToItsReaderAndTelemetryMerges) {
    ObservationFiles f;
    EXPECT_TRUE(f.empty());
    f.bench = fixture("seed-7b-bench.json");
    f.smi = fixture("seed-7b-smi.csv");
    f.dcgm = fixture("seed-7b-dcgm.prom");
    EXPECT_FALSE(f.empty());
    const model::Observations obs = read_observations(f);
    EXPECT_EQ(obs.bench, read_vllm_bench(f.bench));
    EXPECT_EQ(obs.gpu, model::merge(read_nvidia_smi_csv(f.smi), read_dcgm_metrics(f.dcgm)));
    EXPECT_FALSE(obs.metrics);
    EXPECT_FALSE(obs.startup);
    ObservationFiles two;
    two.metrics = {fixture("kv-full-scrape-1.prom"), fixture("kv-full-scrape-2.prom")};
    two.interval_s = 60;
    ASSERT_TRUE(read_observations(two).metrics);
    EXPECT_DOUBLE_EQ(read_observations(two).metrics->window_s.value_or(0), 60.0);
}

TEST(ReadObservations, ContradictoryFileSetsAreInvalidArguments) {
    const auto invalid = [](const ObservationFiles& f) {
        EXPECT_THROW((void)read_observations(f), InvalidArgument);
    };
    ObservationFiles three;
    three.metrics = {"a.prom", "b.prom", "c.prom"};
    invalid(three);
    ObservationFiles lone_interval;
    lone_interval.metrics = {"a.prom"};
    lone_interval.interval_s = 10;
    invalid(lone_interval);
    ObservationFiles bad_interval;
    bad_interval.metrics = {"a.prom", "b.prom"};
    bad_interval.interval_s = -1;
    invalid(bad_interval);
    ObservationFiles two_benches;
    two_benches.bench = "a.json";
    two_benches.aiperf = "b.json";
    invalid(two_benches);
    ObservationFiles index_alone;
    index_alone.bench = "a.json";
    index_alone.bench_index = 0;
    invalid(index_alone);
}

TEST(TrainingLogReader, MegatronLinesLeaveTheFirstStepOut) {
    const auto log = parse_training_log(
        "training ...\n"
        " [2026-11-30 09:00:00] iteration        1/     100 | consumed samples:  32 | elapsed "
        "time per iteration (ms): 9000.0 | throughput per GPU (TFLOP/s/GPU): 10.0 | lm loss: "
        "1.0E+01 |\n"
        "[Rank 0] (after 1 iterations) memory (MB) | allocated: 10.0 | max allocated: 20.0 | "
        "reserved: 30.0 | max reserved: 70000.0\n"
        " iteration        2/     100 | elapsed time per iteration (ms): 1000.0 | throughput "
        "per GPU (TFLOP/s/GPU): 90.0 |\n"
        " iteration        3/     100 | elapsed time per iteration (ms): 3000.0 | throughput "
        "per GPU (TFLOP/s/GPU): 30.0 (avg 31.0) |\n"
        " iteration        4/     100 | elapsed time per iteration (ms): 2000.0 |\n",
        "train.log");
    EXPECT_EQ(log.format, "megatron");
    EXPECT_EQ(log.steps, 3); // 1000, 3000 and 2000 ms; the 9000 ms warm-up left out
    EXPECT_DOUBLE_EQ(log.step_mean_s, 2.0);
    EXPECT_DOUBLE_EQ(log.step_stddev_s, std::sqrt(2.0 / 3.0)); // (1 + 1 + 0) / 3
    EXPECT_DOUBLE_EQ(log.step_max_s, 3.0);
    EXPECT_EQ(log.step_max_line, 5);
    ASSERT_TRUE(log.tflops_per_gpu);
    EXPECT_DOUBLE_EQ(*log.tflops_per_gpu, 60.0); // (90 + 30) / 2, the warm-up's 10 left out
    ASSERT_TRUE(log.max_reserved_mib);
    EXPECT_DOUBLE_EQ(*log.max_reserved_mib, 70000.0);
    EXPECT_EQ(log.oom_line, 0);
}

TEST(TrainingLogReader, CsvAndOutOfMemory) {
    // Two steps: too few to leave a warm-up out.
    const auto csv = parse_training_log("step,seconds,tokens\n1,2.5,4096\n2,3.5,4096\n", "s.csv");
    EXPECT_EQ(csv.format, "csv");
    EXPECT_EQ(csv.steps, 2);
    EXPECT_DOUBLE_EQ(csv.step_mean_s, 3.0);
    ASSERT_TRUE(csv.tokens_per_step);
    EXPECT_DOUBLE_EQ(*csv.tokens_per_step, 4096);
    const auto oom = parse_training_log(
        "training ...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n",
        "oom.log");
    EXPECT_EQ(oom.steps, 0);
    EXPECT_EQ(oom.oom_line, 2);
}

TEST(TrainingLogReader, ErrorsNameFileLineAndField) {
    EXPECT_EQ(error_of([] { (void)parse_training_log("step,time\n1,2\n", "s.csv"); }),
              "s.csv:1:1: seconds: the CSV header has no 'seconds' column; write "
              "'step,seconds[,tokens]'");
    EXPECT_NE(error_of([] {
                  (void)parse_training_log("step,seconds\n1,2\n2,-1\n", "s.csv");
              }).find("s.csv:3:1: seconds:"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  (void)parse_training_log(" iteration 1/ 9 | elapsed time per iteration (ms): "
                                           "fast |\n",
                                           "t.log");
              }).find("t.log:1:"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  (void)parse_training_log("nothing here\n", "t.log");
              }).find("no step times found"),
              std::string::npos);
}

TEST(MetricsReader, SpeculativeCountersByPositionAndStepTokens) {
    const char* a = R"(vllm:num_requests_running{engine="0"} 4
vllm:spec_decode_num_drafts_total{engine="0"} 100
vllm:spec_decode_num_draft_tokens_total{engine="0"} 300
vllm:spec_decode_num_accepted_tokens_total{engine="0"} 150
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="0"} 80
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="1"} 50
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="2"} 20
vllm:iteration_tokens_total_count{engine="0"} 10
vllm:iteration_tokens_total_sum{engine="0"} 640
)";
    const char* b = R"(vllm:num_requests_running{engine="0"} 4
vllm:spec_decode_num_drafts_total{engine="0"} 300
vllm:spec_decode_num_draft_tokens_total{engine="0"} 900
vllm:spec_decode_num_accepted_tokens_total{engine="0"} 450
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="0"} 240
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="1"} 150
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="2"} 60
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",position="2"} 1
vllm:iteration_tokens_total_count{engine="0"} 30
vllm:iteration_tokens_total_sum{engine="0"} 1440
)";
    const auto m =
        engine_metrics(parse_metrics_scrape(a, "a"), parse_metrics_scrape(b, "b"), "b", 60.0);
    EXPECT_EQ(m.spec_drafts, 200.0);
    EXPECT_EQ(m.spec_draft_tokens, 600.0);
    EXPECT_EQ(m.spec_accepted_tokens, 300.0);
    // Per position over the window, summed over engines: 160, 100, 40 + 1.
    EXPECT_EQ(m.spec_accepted_per_pos, (std::vector<double>{160, 100, 41}));
    // (1440 - 640) tokens over (30 - 10) steps.
    EXPECT_EQ(m.iteration_tokens_mean, 40.0);
    EXPECT_EQ(m.iteration_steps, 20.0);
    EXPECT_NE(error_of([] {
                  (void)parse_metrics_scrape(
                      "vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\"} 3\n", "s");
              }).find("position label"),
              std::string::npos);
}

// Issue 33: an observation outside physics or its own consistency is refused with file:line
// and the field, never diagnosed. Each case is a reproduction from the issue.
TEST(ObservationBounds, MetricsOutsideTheirRangeAreRefusedWithLineAndName) {
    // A negative sum of TTFTs (a mean of -1000 ms).
    EXPECT_EQ(error_of([] {
                  (void)parse_metrics_scrape("vllm:time_to_first_token_seconds_count 1\n"
                                             "vllm:time_to_first_token_seconds_sum -1\n",
                                             "s.prom");
              }),
              "s.prom:2:38: vllm:time_to_first_token_seconds_sum: is -1; vLLM's counters, sums "
              "and gauges are never negative");
    // KV cache usage 99 (9,900 %): vLLM writes a fraction.
    EXPECT_NE(error_of([] {
                  (void)parse_metrics_scrape("vllm:kv_cache_usage_perc{engine=\"0\"} 99\n", "s");
              }).find("s:1:"),
              std::string::npos);
    // A mean over a day per request: a 300-digit TPOT.
    EXPECT_NE(error_of([] {
                  (void)engine_metrics(
                      parse_metrics_scrape("vllm:inter_token_latency_seconds_count 2\n"
                                           "vllm:inter_token_latency_seconds_sum 1e300\n",
                                           "s"),
                      "s");
              }).find("s:2:1: vllm:inter_token_latency_seconds_sum: gives a mean of 5e+299 s"),
              std::string::npos);
}

TEST(ObservationBounds, AcceptedDraftTokensCannotExceedTheDrafted) {
    // 450 accepted of 40 drafted would be 1,125 % acceptance.
    const std::string e = error_of([] {
        (void)engine_metrics(
            parse_metrics_scrape("vllm:spec_decode_num_drafts_total 20\n"
                                 "vllm:spec_decode_num_draft_tokens_total 40\n"
                                 "vllm:spec_decode_num_accepted_tokens_total 450\n",
                                 "s"),
            "s");
    });
    EXPECT_NE(e.find("s:3:1: vllm:spec_decode_num_accepted_tokens: counts 450, more than the 40"),
              std::string::npos)
        << e;
    // A prefix-cache hit is a query too.
    EXPECT_NE(error_of([] {
                  (void)engine_metrics(parse_metrics_scrape("vllm:prefix_cache_queries_total 10\n"
                                                            "vllm:prefix_cache_hits_total 11\n",
                                                            "s"),
                                       "s");
              }).find("s:2:1: vllm:prefix_cache_hits:"),
              std::string::npos);
}

TEST(ObservationBounds, TimestampsInSecondsAreRefusedNotReadAsMilliseconds) {
    // 1,700,000,000 is a date in 2023 in seconds and 20 days after 1970 in milliseconds: a 60 s
    // window would read as 60 ms and the throughput 1000 times too high.
    const std::string e = error_of([] {
        (void)parse_metrics_scrape("vllm:generation_tokens_total 100 1700000000\n", "s.prom");
    });
    EXPECT_NE(e.find("s.prom:1:34: vllm:generation_tokens_total: the timestamp 1.7e+09 reads as "
                     "seconds"),
              std::string::npos)
        << e;
    // Milliseconds since the epoch, and the small timestamps of a hand-written file, pass.
    EXPECT_EQ(
        *parse_metrics_scrape("vllm:generation_tokens_total 1 1700000000000\n", "s").timestamp_ms,
        1.7e12);
    EXPECT_EQ(*parse_metrics_scrape("vllm:generation_tokens_total 1 31000\n", "s").timestamp_ms,
              31000.0);
}

TEST(ObservationBounds, ADuplicatedSeriesIsRefusedNotCountedTwice) {
    EXPECT_EQ(error_of([] {
                  (void)parse_metrics_scrape("vllm:num_requests_running{engine=\"0\"} 8\n"
                                             "vllm:num_requests_running{engine=\"1\"} 8\n"
                                             "vllm:num_requests_running{engine=\"0\"} 8\n",
                                             "s.prom");
              }),
              "s.prom:3:1: vllm:num_requests_running: the same series (name and labels) as line "
              "1; a scrape has each series once, so the file joins two scrapes: give them as two "
              "files");
    // Label order does not make another series.
    EXPECT_NE(error_of([] {
                  (void)parse_metrics_scrape(
                      "vllm:x{a=\"1\",b=\"2\"} 1\nvllm:x{b=\"2\",a=\"1\"} 1\n", "s");
              }).find("as line 1"),
              std::string::npos);
}

TEST(ObservationBounds, LabelsAreMatchedByExactName) {
    // role="..." holds le=" as text, draft_position holds position=": neither is the label.
    const auto s = parse_metrics_scrape(
        "vllm:time_to_first_token_seconds_bucket{role=\"decode\",le=\"0.5\"} 3\n"
        "vllm:time_to_first_token_seconds_bucket{role=\"decode\",le=\"+Inf\"} 4\n"
        "vllm:spec_decode_num_accepted_tokens_per_pos_total{draft_position=\"7\",position=\"1\"} "
        "5\n",
        "s");
    ASSERT_EQ(s.buckets.at("vllm:time_to_first_token_seconds").size(), 2u);
    EXPECT_EQ(s.buckets.at("vllm:time_to_first_token_seconds").at(0.5), 3.0);
    EXPECT_EQ(s.sums.at("vllm:spec_decode_num_accepted_tokens_per_pos_total|position=1"), 5.0);
    EXPECT_EQ(s.sums.count("vllm:spec_decode_num_accepted_tokens_per_pos_total|position=7"), 0u);
    // A bucket whose only "le" is inside another label's name has no le label.
    EXPECT_NE(error_of([] {
                  (void)parse_metrics_scrape("vllm:x_bucket{role=\"0.5\"} 3\n", "s");
              }).find("without an le label"),
              std::string::npos);
}

TEST(ObservationBounds, BenchLatenciesOverADayAreRefused) {
    const std::string e = error_of([] {
        (void)parse_vllm_bench("{\"completed\": 3, \"duration\": 10,\n \"mean_tpot_ms\": 1e300}",
                               "r.json");
    });
    EXPECT_NE(e.find("r.json:2:2: mean_tpot_ms: is 1e+300 ms, more than a day"), std::string::npos)
        << e;
}

TEST(ObservationBounds, AiperfRatesAreReadInTheirUnit) {
    // 5 tokens per millisecond are 5,000 per second.
    const auto b = parse_aiperf(R"({"request_count": {"avg": 4}, "benchmark_duration": {"avg": 2},
 "output_token_throughput": {"unit": "tokens/ms", "avg": 5},
 "request_throughput": {"unit": "requests/sec", "avg": 2}})",
                                "a.json");
    EXPECT_DOUBLE_EQ(*b.output_throughput, 5000.0);
    EXPECT_DOUBLE_EQ(*b.request_throughput, 2.0);
    const std::string e = error_of([] {
        (void)parse_aiperf(R"({"request_count": {"avg": 4}, "benchmark_duration": {"avg": 2},
 "output_token_throughput": {"unit": "tokens/fortnight", "avg": 5}})",
                           "a.json");
    });
    EXPECT_NE(e.find("a.json:2:"), std::string::npos) << e;
    EXPECT_NE(e.find("output_token_throughput.unit"), std::string::npos) << e;
}

TEST(ObservationBounds, KvCacheAndTrainingThroughputBeyondAnyGpuAreRefused) {
    // 10^14 tokens of KV cache, and 10^15 as blocks of 16 tokens.
    EXPECT_NE(error_of([] {
                  (void)parse_startup_log("INFO GPU KV cache size: 100,000,000,000,000 tokens\n",
                                          "v.log");
              }).find("v.log:1:1: kv cache tokens: 100000000000000 tokens is more than 1e10"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  (void)parse_startup_log(
                      "INFO # GPU blocks: 62,500,000,000,000, # CPU blocks: 0\n", "v.log");
              }).find("v.log:1:"),
              std::string::npos);
    // 10^302 TFLOP/s per GPU (an MFU of 10^302 %).
    EXPECT_NE(error_of([] {
                  (void)parse_training_log(" iteration 1/ 9 | elapsed time per iteration (ms): "
                                           "1500.0 | throughput per GPU (TFLOP/s/GPU): 1e302 |\n",
                                           "t.log");
              }).find("t.log:1:1: throughput per GPU (TFLOP/s/GPU): 1e+302 TFLOP/s"),
              std::string::npos);
}

TEST(ObservationBounds, AGuidellmSweepIsReadInLinearTime) {
    // 2,000 benchmarks: each was parsed from the whole text again (58 s); now one parse.
    std::string text = "{\"benchmarks\": [";
    for (int i = 0; i < 2000; ++i) {
        text += std::string(i ? "," : "") +
                "{\"duration\": 10, \"metrics\": {\"request_totals\": {\"successful\": 5}, "
                "\"inter_token_latency_ms\": {\"successful\": {\"mean\": 12.5}}}}";
    }
    text += "]}";
    const auto started = std::chrono::steady_clock::now();
    const auto all = parse_bench_results(text, "g.json");
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ASSERT_EQ(all.size(), 2000u);
    EXPECT_EQ(all[1999].label, "g.json#1999");
    EXPECT_DOUBLE_EQ(*all[1999].bench.mean_tpot_ms, 12.5);
    EXPECT_LT(secs, 5.0); // about 0.05 s; quadratic took about a minute
}

} // namespace
} // namespace gpuplan::hwdb
