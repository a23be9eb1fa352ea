// `gpuplan diagnose` end to end on the fixtures under tests/fixtures/diagnose: the row each
// fixture shows, its evidence, the re-estimated first fix, --emit vllm and the exit codes.
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using gpuplan::test::run_cli;

std::string fx(const std::string& name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/diagnose/" + name;
}

std::string seed() {
    return "diagnose " + fx("seed-7b-rtx4090.yaml") + " --bench " + fx("seed-7b-bench.json") +
           " --smi " + fx("seed-7b-smi.csv");
}

std::string kv_full() {
    return "diagnose " + fx("kv-full-8b-h100.yaml") + " --metrics " + fx("kv-full-scrape-1.prom") +
           " --metrics " + fx("kv-full-scrape-2.prom") + " --interval 60";
}

TEST(DiagnoseCli, SeedCaseIsDecodeSlowWithTheGpuBusy) {
    const auto r = run_cli(seed() + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_FALSE(j["rows"].empty());
    const auto& row = j["rows"][0];
    EXPECT_EQ(row["id"], "decode-slow");
    EXPECT_EQ(row["symptom"], "GPU busy but few tokens/s");
    // 196.8 ms observed at one sequence; the fixture's six samples average 99 % busy.
    EXPECT_NE(row["evidence"][0].get<std::string>().find("TPOT 197 ms observed"),
              std::string::npos);
    bool busy = false;
    for (const auto& e : row["evidence"])
        busy = busy || e.get<std::string>().find("GPU utilization 99 %") != std::string::npos;
    EXPECT_TRUE(busy);
    EXPECT_EQ(j["running"], 1); // the benchmark's max_concurrency
    // Lengths from the benchmark: 10240 / 20 and 5120 / 20.
    EXPECT_EQ(j["input_tokens"], 512);
    EXPECT_EQ(j["output_tokens"], 256);
    const auto& fix = row["fixes"][0];
    EXPECT_EQ(fix["layer"], "framework");
    ASSERT_TRUE(fix["estimated"].get<bool>());
    // Fixed, one stream reads 13.5 GB of fp16 weights per token over 1,008 GB/s: at most 75 tok/s.
    EXPECT_GT(fix["throughput_tokens_per_s"].get<double>(), 3 * 4.979);
    EXPECT_LT(fix["throughput_tokens_per_s"].get<double>(), 1008e9 / (6.74e9 * 2));
}

TEST(DiagnoseCli, KvFullScrapePair) {
    const auto r = run_cli(kv_full() + " --json --emit vllm");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_FALSE(j["rows"].empty());
    const auto& row = j["rows"][0];
    EXPECT_EQ(row["id"], "kv-cache-full");
    EXPECT_EQ(j["running"], 26);
    EXPECT_EQ(j["demand"], 57); // 26 running + 31 waiting in the later scrape
    // 714238 prompt and 118800 generated tokens over 119 requests in the window.
    EXPECT_EQ(j["input_tokens"], 6002);
    EXPECT_EQ(j["output_tokens"], 998);
    const std::string ev = row["evidence"].dump();
    EXPECT_NE(ev.find("KV cache 99 % used"), std::string::npos) << ev;
    EXPECT_NE(ev.find("37 preemptions in the window (0.62/s)"), std::string::npos) << ev;
    EXPECT_NE(ev.find("queue time 9800 ms is 90 % of TTFT 10900 ms"), std::string::npos) << ev;
    const auto& fix = row["fixes"][0];
    EXPECT_EQ(fix["change"], "gpu_memory_utilization 0.50 → 0.95");
    EXPECT_GT(fix["capacity"].get<int>(), 2 * j["capacity"].get<int>());
    // Observed throughput: 118800 tokens in 60 s.
    bool thr = false;
    for (const auto& c : j["comparisons"]) {
        if (c["figure"] == "output throughput") {
            thr = true;
            EXPECT_DOUBLE_EQ(c["observed"].get<double>(), 118800.0 / 60);
        }
    }
    EXPECT_TRUE(thr);
    // The benchmark runs the observed lengths at the demand the fix was estimated at (26 + 31).
    EXPECT_EQ(
        j["emit"]["benchmark"],
        "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-8B --dataset-name random "
        "--random-input-len 6002 --random-output-len 998 --max-concurrency 57 --num-prompts 570 "
        "--ignore-eos --save-result");
    const std::string cmd = j["emit"]["command"];
    EXPECT_EQ(cmd.rfind("vllm serve meta-llama/Llama-3.1-8B ", 0), 0u) << cmd;
    for (const char* flag :
         {"--tensor-parallel-size 1", "--max-model-len 8192", "--gpu-memory-utilization 0.95",
          "--max-num-seqs ", "--max-num-batched-tokens ", "--enable-chunked-prefill",
          "--enable-prefix-caching"}) {
        EXPECT_NE(cmd.find(flag), std::string::npos) << flag << " in " << cmd;
    }
}

TEST(DiagnoseCli, ThrottledClocksAddThePowerCapRow) {
    const auto r =
        run_cli("diagnose " + fx("seed-7b-rtx4090.yaml") + " --bench " + fx("seed-7b-bench.json") +
                " --smi " + fx("throttled-7b-smi.csv") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    std::vector<std::string> ids;
    for (const auto& row : j["rows"])
        ids.push_back(row["id"]);
    EXPECT_NE(std::find(ids.begin(), ids.end(), "decode-slow"), ids.end());
    EXPECT_NE(std::find(ids.begin(), ids.end(), "power-capped"), ids.end());
}

TEST(DiagnoseCli, TableOutputAndEmit) {
    const auto r = run_cli(kv_full() + " --emit vllm");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("1. kv-cache-full"), std::string::npos);
    EXPECT_NE(r.out.find("vllm serve meta-llama/Llama-3.1-8B"), std::string::npos);
}

TEST(DiagnoseCli, ExitCodes) {
    // Nothing observed, an unknown --emit, three scrapes, --interval with one: usage errors.
    EXPECT_EQ(run_cli("diagnose " + fx("seed-7b-rtx4090.yaml")).exit_code, 2);
    EXPECT_EQ(run_cli(seed() + " --emit tgi").exit_code, 2);
    EXPECT_EQ(run_cli(kv_full() + " --metrics " + fx("kv-full-scrape-2.prom")).exit_code, 2);
    EXPECT_EQ(run_cli("diagnose " + fx("kv-full-8b-h100.yaml") + " --metrics " +
                      fx("kv-full-scrape-1.prom") + " --interval 60")
                  .exit_code,
              2);
    // Scrapes in the wrong order: a counter goes backwards.
    const auto back =
        run_cli("diagnose " + fx("kv-full-8b-h100.yaml") + " --metrics " +
                fx("kv-full-scrape-2.prom") + " --metrics " + fx("kv-full-scrape-1.prom"));
    EXPECT_EQ(back.exit_code, 2);
    EXPECT_NE(back.out.find("give the earlier scrape first"), std::string::npos) << back.out;
    // A malformed file: the file, line and field in the message.
    const auto dir = std::filesystem::temp_directory_path() / "gpuplan-diagnose-cli-test";
    std::filesystem::create_directories(dir);
    const auto bad = (dir / "bad.csv").string();
    std::ofstream(bad) << "utilization.gpu [%], clocks.sm [MHz]\n99 %, fast\n";
    const auto r = run_cli(seed().substr(0, seed().find(" --smi")) + " --smi " + bad);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find(bad + ":2:1: clocks.sm [MHz]: 'fast' is not a number"), std::string::npos)
        << r.out;
    EXPECT_EQ(
        run_cli("diagnose " + fx("seed-7b-rtx4090.yaml") + " --bench /nonexistent.json").exit_code,
        2);
    std::filesystem::remove_all(dir);
    EXPECT_EQ(run_cli("diagnose --help").exit_code, 0);
}

} // namespace

namespace {

TEST(DiagnoseCli, CalibValidateReportsTheErrorOnABenchResult) {
    const auto r = run_cli("calib validate " + fx("healthy-8b-h100-bench.json") + " --scenario " +
                           std::string(GPUPLAN_SOURCE_DIR) + "/examples/quickstart.yaml --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const auto& res = j["results"][0];
    EXPECT_EQ(res["running"], 32);        // the benchmark's max_concurrency
    EXPECT_EQ(res["input_tokens"], 1024); // 655360 / 640
    EXPECT_EQ(res["output_tokens"], 256); // 163840 / 640
    double sum = 0;
    int n = 0;
    for (const auto& f : res["figures"]) {
        const double m = f["measured"], p = f["predicted"];
        EXPECT_NEAR(f["error"].get<double>(), (p - m) / m, 1e-12);
        sum += std::abs((p - m) / m);
        ++n;
        if (f["figure"] == "TPOT") {
            EXPECT_DOUBLE_EQ(m, 13.2);
            // A healthy run: within a factor of two of the model.
            EXPECT_LT(std::abs(f["error"].get<double>()), 0.5);
        }
    }
    EXPECT_EQ(n, 3);
    EXPECT_NEAR(j["mape"].get<double>(), sum / n, 1e-12);
    // The same healthy run gives no diagnosis row: the model's floor is not crossed.
    const auto d = run_cli("diagnose " + std::string(GPUPLAN_SOURCE_DIR) +
                           "/examples/quickstart.yaml --bench " + fx("healthy-8b-h100-bench.json") +
                           " --json");
    ASSERT_EQ(d.exit_code, 0) << d.out;
    EXPECT_TRUE(nlohmann::json::parse(d.out)["rows"].empty()) << d.out;
    // A malformed bench result: exit 2 with the field.
    EXPECT_EQ(run_cli("calib validate " + fx("seed-7b-smi.csv") + " --scenario " +
                      fx("seed-7b-rtx4090.yaml"))
                  .exit_code,
              2);
}

} // namespace

namespace {

// Two causes at once: the KV cache is full and a 400 W cap holds the H100's clock at 61 %.
TEST(DiagnoseCli, KvFullAndPowerCapTogether) {
    const auto r = run_cli(kv_full() + " --smi " + fx("powercap-h100-smi.csv") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    std::vector<std::string> ids;
    for (const auto& row : j["rows"])
        ids.push_back(row["id"]);
    ASSERT_EQ(ids.size(), 2u) << r.out;
    EXPECT_EQ(ids[0], "kv-cache-full");
    EXPECT_EQ(ids[1], "power-capped");
    const std::string ev = j["rows"][1]["evidence"].dump();
    // Mean SM clock (1215 + 1200 + 1230 + 1215) / 4 = 1215 MHz of 1980: 61 %; 3 of 4 samples
    // capped.
    EXPECT_NE(ev.find("SM clock 1215 of 1980 MHz (61 %"), std::string::npos) << ev;
    EXPECT_NE(ev.find("power-cap throttling in 75 % of samples"), std::string::npos) << ev;
    EXPECT_EQ(j["rows"][1]["fixes"][0]["layer"], "hardware");
}

} // namespace

namespace {

// A single scrape: requests queue behind max_num_seqs while the KV cache has room.
TEST(DiagnoseCli, QueueingScrape) {
    const auto r = run_cli("diagnose " + fx("queueing-8b-h100.yaml") + " --metrics " +
                           fx("queueing-8b-h100.prom") + " --json --emit vllm");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["rows"].size(), 1u) << r.out;
    const auto& row = j["rows"][0];
    EXPECT_EQ(row["id"], "queueing");
    const std::string ev = row["evidence"].dump();
    EXPECT_NE(ev.find("40 waiting beside 64 running"), std::string::npos) << ev;
    EXPECT_NE(ev.find("queue time 3600 ms is 92 % of TTFT 3900 ms"), std::string::npos)
        << ev; // 3.6 / 3.9
    EXPECT_EQ(row["fixes"][0]["change"], "max_num_seqs 64 → 128");
    EXPECT_EQ(row["fixes"][0]["capacity"], 128);
    EXPECT_NE(j["emit"]["command"].get<std::string>().find("--max-num-seqs 128"),
              std::string::npos);
}

// V0 metric names (gpu_cache_usage_perc, time_per_output_token_seconds): three clients only.
TEST(DiagnoseCli, LowBatchScrapeWithV0Names) {
    const auto r = run_cli("diagnose " + std::string(GPUPLAN_SOURCE_DIR) +
                           "/examples/quickstart.yaml --metrics " +
                           fx("low-batch-8b-h100-v0.prom") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["rows"].size(), 1u) << r.out;
    EXPECT_EQ(j["rows"][0]["id"], "low-batch");
    EXPECT_EQ(j["running"], 3);
    // TPOT from the V0 histogram: 7.4 ms per token.
    EXPECT_NEAR(j["comparisons"][0]["observed"].get<double>(), 7.4, 1e-9);
    const auto& fix = j["rows"][0]["fixes"][0];
    EXPECT_EQ(fix["layer"], "framework");
    // Batching shares each weight read: many times the throughput of 3 / 7.4 ms = 405 tok/s.
    EXPECT_GT(fix["throughput_tokens_per_s"].get<double>(), 5 * 3 / 0.0074);
}

} // namespace

namespace {

// The seed case read from GuideLLM and AIPerf: the same verdict as from `vllm bench serve`,
// with TPOT from inter_token_latency (196.8 ms), not GuideLLM's time_per_output_token (which
// includes the first token: 200.76 ms).
TEST(DiagnoseCli, SeedFromGuideLlmAndAiperf) {
    for (const std::string flag :
         {"--guidellm seed-7b-guidellm.json", "--aiperf seed-7b-aiperf.json"}) {
        const auto sp = flag.find(' ');
        const auto r = run_cli("diagnose " + fx("seed-7b-rtx4090.yaml") + " " + flag.substr(0, sp) +
                               " " + fx(flag.substr(sp + 1)) + " --json");
        ASSERT_EQ(r.exit_code, 0) << r.out;
        const auto j = nlohmann::json::parse(r.out);
        ASSERT_FALSE(j["rows"].empty()) << r.out;
        EXPECT_EQ(j["rows"][0]["id"], "decode-slow");
        EXPECT_EQ(j["comparisons"][0]["figure"], "TPOT");
        EXPECT_DOUBLE_EQ(j["comparisons"][0]["observed"].get<double>(), 196.8);
        EXPECT_EQ(j["comparisons"][0]["source"], flag.substr(2, sp - 2));
        EXPECT_EQ(j["running"], 1);
        EXPECT_EQ(j["input_tokens"], 512);
        EXPECT_EQ(j["output_tokens"], 256);
    }
}

// DCGM says what nvidia-smi's 99 % hides: the memory interface is busy 6 % of the time.
TEST(DiagnoseCli, SeedWithDcgmAndDmon) {
    const auto r = run_cli("diagnose " + fx("seed-7b-rtx4090.yaml") + " --bench " +
                           fx("seed-7b-bench.json") + " --dcgm " + fx("seed-7b-dcgm.prom") +
                           " --dmon " + fx("seed-7b-dmon.txt") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const auto& row = j["rows"][0];
    EXPECT_EQ(row["id"], "decode-slow");
    EXPECT_EQ(row["symptom"], "GPU busy but few tokens/s"); // DCGM_FI_DEV_GPU_UTIL 99
    const std::string ev = row["evidence"].dump();
    EXPECT_NE(ev.find("DCGM DRAM active 6 %, SM active 31 %: the memory interface idles 94 %"),
              std::string::npos)
        << ev;
    EXPECT_NE(row["cause"].get<std::string>().find("host memory"), std::string::npos);
}

TEST(DiagnoseCli, StartupLogKvSize) {
    const auto r = run_cli("diagnose " + fx("kv-full-8b-h100.yaml") + " --startup-log " +
                           fx("kv-size-h100-startup.log") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["rows"].size(), 1u) << r.out;
    const auto& row = j["rows"][0];
    EXPECT_EQ(row["id"], "kv-size-mismatch");
    const std::string ev = row["evidence"].dump();
    // 120,000 logged; the model: 11,005 blocks × 16 = 176,080 tokens of 128 KiB (32 layers ×
    // 8 KV heads × 128 × 2 bytes × K and V); 56,080 tokens × 128 KiB = 6.85 GiB.
    EXPECT_NE(ev.find("start-up log line 5: 120000 KV tokens; the model predicts 176080 (-32 %"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("6.85 GiB less KV memory per GPU"), std::string::npos) << ev;
    EXPECT_EQ(row["fixes"][0]["layer"], "framework");
    EXPECT_TRUE(row["fixes"][0]["estimated"].get<bool>());
    EXPECT_EQ(j["comparisons"][0]["figure"], "KV cache");
    EXPECT_DOUBLE_EQ(j["comparisons"][1]["observed"].get<double>(), 14.65);
    EXPECT_NEAR(j["comparisons"][1]["predicted"].get<double>(), 11005.0 / 512, 1e-9);
    // Within the band (172,000: −2.3 %) and V0's 11,005 blocks × 16: no row.
    for (const char* log : {"kv-size-h100-match.log", "kv-size-h100-v0.log"}) {
        const auto ok = run_cli("diagnose " + fx("kv-full-8b-h100.yaml") + " --startup-log " +
                                fx(log) + " --json");
        ASSERT_EQ(ok.exit_code, 0) << ok.out;
        EXPECT_TRUE(nlohmann::json::parse(ok.out)["rows"].empty()) << ok.out;
    }
}

TEST(DiagnoseCli, NewReadersExitTwoOnBadInput) {
    // Two benchmark results, --bench-index without --guidellm: usage errors.
    EXPECT_EQ(run_cli(seed() + " --aiperf " + fx("seed-7b-aiperf.json")).exit_code, 2);
    EXPECT_EQ(run_cli("diagnose " + fx("seed-7b-rtx4090.yaml") + " --aiperf " +
                      fx("seed-7b-aiperf.json") + " --bench-index 1")
                  .exit_code,
              2);
    // A file of the wrong kind: the reader names what it expected.
    const auto wrong = run_cli("diagnose " + fx("seed-7b-rtx4090.yaml") + " --guidellm " +
                               fx("seed-7b-aiperf.json"));
    EXPECT_EQ(wrong.exit_code, 2);
    EXPECT_NE(wrong.out.find("benchmarks: missing"), std::string::npos) << wrong.out;
    const auto dcgm =
        run_cli("diagnose " + fx("seed-7b-rtx4090.yaml") + " --dcgm " + fx("seed-7b-dmon.txt"));
    EXPECT_EQ(dcgm.exit_code, 2);
    const auto log = run_cli("diagnose " + fx("seed-7b-rtx4090.yaml") + " --startup-log " +
                             fx("seed-7b-smi.csv"));
    EXPECT_EQ(log.exit_code, 2);
    EXPECT_NE(log.out.find("no KV cache line"), std::string::npos) << log.out;
}

} // namespace

namespace {

// calib validate reads GuideLLM and AIPerf results as it reads vllm bench JSON; a GuideLLM sweep
// gives one result per benchmark.
TEST(DiagnoseCli, CalibValidateReadsGuideLlmAndAiperf) {
    const auto r = run_cli("calib validate " + fx("seed-7b-guidellm.json") + " " +
                           fx("seed-7b-aiperf.json") + " " + fx("seed-7b-bench.json") +
                           " --scenario " + fx("seed-7b-rtx4090.yaml") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["results"].size(), 3u);
    const std::vector<std::string> tools{"guidellm", "aiperf", "vllm bench"};
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& res = j["results"][i];
        EXPECT_EQ(res["tool"], tools[i]);
        // The same run in three formats: the same measured TPOT (GuideLLM's
        // inter_token_latency_ms, AIPerf's inter_token_latency, vLLM's mean_tpot_ms) and the
        // same prediction.
        EXPECT_EQ(res["figures"][0]["figure"], "TPOT");
        EXPECT_DOUBLE_EQ(res["figures"][0]["measured"].get<double>(), 196.8);
        EXPECT_DOUBLE_EQ(res["figures"][0]["predicted"].get<double>(),
                         j["results"][2]["figures"][0]["predicted"].get<double>());
        EXPECT_EQ(res["running"], 1);
    }
    const auto sweep =
        run_cli("calib validate " + fx("healthy-8b-h100-guidellm-sweep.json") + " --scenario " +
                std::string(GPUPLAN_SOURCE_DIR) + "/examples/quickstart.yaml --json");
    ASSERT_EQ(sweep.exit_code, 0) << sweep.out;
    const auto s = nlohmann::json::parse(sweep.out);
    ASSERT_EQ(s["results"].size(), 2u);
    EXPECT_EQ(s["results"][0]["running"], 8);
    EXPECT_EQ(s["results"][1]["running"], 32);
    EXPECT_NE(s["results"][1]["file"].get<std::string>().find("sweep.json#1"), std::string::npos);
    EXPECT_DOUBLE_EQ(s["results"][1]["figures"][0]["measured"].get<double>(), 13.4);
    EXPECT_EQ(s["results"][0]["input_tokens"], 1024); // 204800 / 200
    // A malformed GuideLLM file: exit 2 with the file and key.
    const auto bad = run_cli("calib validate " + fx("seed-7b-dcgm.prom") + " --scenario " +
                             fx("seed-7b-rtx4090.yaml"));
    EXPECT_EQ(bad.exit_code, 2);
}

} // namespace

namespace {

// The window's buckets of the two kv-full scrapes: TTFT 0, 2, 12, 48, 107, 119 at 0.1, 1, 5,
// 10, 20 s, +Inf; ITL 0, 115236, 117612, 118800 at 0.01, 0.025, 0.05 s, +Inf.
TEST(DiagnoseCli, KvFullPercentilesFromTheBuckets) {
    const auto r = run_cli(kv_full() + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    std::map<std::string, double> observed, simulated;
    for (const auto& c : j["comparisons"]) {
        if (c["source"] == "buckets vs simulator") {
            observed[c["figure"]] = c["observed"];
            simulated[c["figure"]] = c["predicted"];
        }
    }
    ASSERT_EQ(observed.size(), 6u) << r.out;
    // The simulator's percentiles at the demand (57 = 26 running + 31 waiting, more than the 27
    // the cache holds): ordered, and queueing puts the first token's far above the analytic
    // model's lone steady-state value.
    EXPECT_LE(simulated["TTFT P50"], simulated["TTFT P90"]);
    EXPECT_LE(simulated["TTFT P90"], simulated["TTFT P99"]);
    EXPECT_GT(simulated["TTFT P50"], 10 * j["predicted"]["ttft_s"].get<double>() * 1e3);
    EXPECT_NE(j["notes"].dump().find("a closed loop of 57 (running + waiting)"), std::string::npos)
        << r.out;
    // TTFT P50: rank 59.5 in (10, 20] holding 48..107: 10 + 10 × 11.5 / 59 s.
    EXPECT_NEAR(observed["TTFT P50"], (10 + 10 * 11.5 / 59) * 1e3, 1e-9);
    // P90 (rank 107.1) and P99 fall in the +Inf bucket: the largest finite bound, 20 s.
    EXPECT_DOUBLE_EQ(observed["TTFT P90"], 20000.0);
    EXPECT_DOUBLE_EQ(observed["TTFT P99"], 20000.0);
    // ITL P50: rank 59400 in (0.01, 0.025] holding 0..115236.
    EXPECT_NEAR(observed["ITL P50"], (0.01 + 0.015 * 59400.0 / 115236.0) * 1e3, 1e-9);
}

} // namespace

namespace {

// An SGLang log on a vLLM scenario: compared, with a note that the engines differ.
// 171,904 tokens against the model's 176,080 (−2.4 %): within the band, no row.
TEST(DiagnoseCli, SglangStartupLogOnAVllmScenario) {
    const auto r = run_cli("diagnose " + fx("kv-full-8b-h100.yaml") + " --startup-log " +
                           fx("kv-size-h100-sglang.log") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["rows"].empty()) << r.out;
    EXPECT_DOUBLE_EQ(j["comparisons"][0]["observed"].get<double>(), 171904.0);
    EXPECT_NE(j["notes"].dump().find("the start-up log is sglang's but the scenario models vllm"),
              std::string::npos)
        << r.out;
}

TEST(DiagnoseCli, RejectedDraftsAreLowAcceptanceAndFewerDraftsAreReestimated) {
    const auto r = run_cli("diagnose " + fx("spec-70b-h100.yaml") + " --metrics " +
                           fx("spec-low-acceptance.prom") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["rows"].size(), 1u) << r.out;
    const auto& row = j["rows"][0];
    EXPECT_EQ(row["id"], "spec-low-acceptance");
    // 176000 of 800000 draft tokens accepted: 22 %; the scenario's α = 0.7 at k = 4 expects
    // (0.7 + 0.7² + 0.7³ + 0.7⁴) / 4 = 44.3 % per draft token and 2.77 tokens per verify step.
    const double assumed = (0.7 + 0.49 + 0.343 + 0.2401) / 4;
    EXPECT_EQ(row["evidence"][0].get<std::string>().rfind(
                  "22 % of draft tokens accepted (176000 of 800000) vs 44 % assumed", 0),
              0u)
        << row["evidence"][0];
    EXPECT_EQ(row["evidence"][1], "1.88 tokens per verify step vs 2.77 assumed (k = 4)");
    // Per position: 100000 / 200000, 48000 / 100000, 20000 / 48000, 8000 / 20000.
    EXPECT_EQ(row["evidence"][2],
              "acceptance by position, given the previous ones accepted: 50 %, 48 %, 42 %, 40 %");
    bool compared = false;
    for (const auto& c : j["comparisons"]) {
        if (c["figure"] == "draft acceptance") {
            compared = true;
            EXPECT_NEAR(c["observed"].get<double>(), 22.0, 1e-9);
            EXPECT_NEAR(c["predicted"].get<double>(), assumed * 100, 1e-9);
        }
    }
    EXPECT_TRUE(compared);
    const auto& fix = row["fixes"][0];
    EXPECT_EQ(fix["layer"], "framework");
    ASSERT_TRUE(fix["estimated"].get<bool>());
    const std::string change = fix["change"];
    ASSERT_EQ(change.rfind("num_speculative_tokens 4 → ", 0), 0u) << change;
    EXPECT_LT(std::stoi(change.substr(std::string("num_speculative_tokens 4 → ").size())), 4);
    // Re-estimated at the measured acceptance, the smaller k gives more tokens/s than k = 4.
    const std::string effect = fix["effect"];
    const auto colon = effect.find(": ");
    const auto arrow = effect.find(" → ", colon);
    ASSERT_NE(arrow, std::string::npos) << effect;
    EXPECT_GT(std::stod(effect.substr(arrow + std::string(" → ").size())),
              std::stod(effect.substr(colon + 2)));
    EXPECT_EQ(row["fixes"][1]["change"], "speculative decoding off");
}

TEST(DiagnoseCli, StepsFarBelowTheTokenBudgetWhileRequestsWaitAreStepUnderfilled) {
    const auto r = run_cli("diagnose " + fx("queueing-8b-h100.yaml") + " --metrics " +
                           fx("step-underfilled-8b-h100.prom") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["rows"].size(), 1u) << r.out;
    const auto& row = j["rows"][0];
    EXPECT_EQ(row["id"], "step-underfilled");
    // 6400 requests of 1024 + 256 tokens over 31900 steps: 256.8 tokens per step of 8192.
    const double mean = 6400.0 * 1280 / 31900;
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "%.0f tokens per engine step on average (vllm:iteration_tokens_total) of a "
                  "budget of 8192 (max_num_batched_tokens): %.0f %%",
                  mean, 100 * mean / 8192);
    EXPECT_EQ(row["evidence"][0].get<std::string>().rfind(buf, 0), 0u) << row["evidence"][0];
    EXPECT_EQ(row["evidence"][1], "40 waiting beside 64 running");
    const auto& fix = row["fixes"][0];
    EXPECT_EQ(fix["change"], "max_num_seqs 64 → 128");
    ASSERT_TRUE(fix["estimated"].get<bool>());
    EXPECT_EQ(fix["capacity"], 128);
}

} // namespace
