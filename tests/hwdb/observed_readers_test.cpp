/// Readers of vLLM /metrics scrapes, `vllm bench serve` results and nvidia-smi CSV samples:
/// values as written, and errors that name the file, line and field.

#include "hwdb/observed_readers.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

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

} // namespace
} // namespace gpuplan::hwdb
