// Measured vLLM serving runs replayed through the simulator (calib/serving_runs.hpp): the file
// reading and statistics on tiny fixtures in tests/fixtures/calib/serving_runs, and the RTX 4090
// Llama-3.1-8B run of ../shared/data/llmservingsim (skipped when absent) against the figures
// scripts/validate_llmservingsim.py prints for the same replay through `gpuplan simulate`.
#include "calib/serving_runs.hpp"

#include "hwdb/profile_loader.hpp"
#include "model/diagnose.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <tuple>
#include <unistd.h>

using namespace gpuplan;
namespace fs = std::filesystem;

namespace {

fs::path fixtures() {
    return fs::path(GPUPLAN_SOURCE_DIR) / "tests/fixtures/calib/serving_runs";
}

const hwdb::Database& db() {
    static const auto d = hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

std::optional<model::EfficiencyProfile> no_profile(const model::AcceleratorSpec&) {
    return std::nullopt;
}

} // namespace

// Measured percentiles interpolate linearly between order statistics as numpy.percentile does
// by default (the simulator's rule): of {1, 2, 3, 4}, p50 = 2.5 and p99 = 3 + 0.97 = 3.97.
TEST(ServingRuns, MeasuredPercentilesAsNumpy) {
    calib::ServingRun run;
    for (const double ttft : {4.0, 1.0, 3.0, 2.0}) {
        calib::ServingRequest r;
        r.output_tokens = 1;
        r.queued_s = 10.0;
        r.first_token_s = 10.0 + ttft;
        r.last_token_s = 10.0 + ttft;
        run.requests.push_back(r);
    }
    const calib::ServingLatencies l = calib::measured_latencies(run);
    EXPECT_EQ(l.ttft.count, 4);
    EXPECT_DOUBLE_EQ(l.ttft.mean, 2.5);
    EXPECT_DOUBLE_EQ(l.ttft.p50, 2.5);
    EXPECT_NEAR(l.ttft.p99, 3.97, 1e-12);
    EXPECT_EQ(l.tpot.count, 0); // one output token: no TPOT
    EXPECT_DOUBLE_EQ(l.tpot.p99, 0.0);
    run.requests.resize(1);
    EXPECT_DOUBLE_EQ(calib::measured_latencies(run).e2e.p99, 4.0);
}

TEST(ServingRuns, FindsTheRunFolders) {
    const auto runs = calib::find_serving_runs(fixtures());
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].parent_path().parent_path().filename(), "FOO9000");
    EXPECT_EQ(runs[1].parent_path().parent_path().filename(), "RTX4090");
    // A run folder itself, and a folder without runs.
    EXPECT_EQ(calib::find_serving_runs(runs[1]), std::vector<fs::path>{runs[1]});
    EXPECT_TRUE(calib::find_serving_runs(fixtures() / "bench").empty());
}

TEST(ServingRuns, ReadsMetaAndRequests) {
    const auto run =
        calib::read_serving_run(fixtures() / "bench/examples/RTX4090/Llama-3.1-8B/vllm");
    EXPECT_EQ(run.label, "RTX4090/Llama-3.1-8B");
    EXPECT_EQ(run.gpu, "NVIDIA GeForce RTX 4090");
    EXPECT_EQ(run.model, "meta-llama/Llama-3.1-8B");
    EXPECT_EQ(run.vllm_version, "0.0.test");
    EXPECT_EQ(run.tensor_parallel, 1);
    EXPECT_EQ(run.max_num_seqs, 8);
    EXPECT_EQ(run.max_num_batched_tokens, 512);
    EXPECT_EQ(run.max_model_len, 1024);
    EXPECT_EQ(run.block_size, 16);
    EXPECT_FALSE(run.prefix_caching);
    EXPECT_EQ(run.num_gpu_blocks, 100);
    ASSERT_EQ(run.requests.size(), 4u); // the blank line is skipped
    EXPECT_EQ(run.requests[2].input_tokens, 50);
    EXPECT_EQ(run.requests[2].output_tokens, 5);
    EXPECT_DOUBLE_EQ(run.requests[2].queued_s, 10.1);

    // TTFT .5 .4 .8 .6; TPOT .1 (r1 has one output token) .1 .2; E2E 1.5 .4 1.2 1.0.
    const auto m = calib::measured_latencies(run);
    EXPECT_EQ(m.ttft.count, 4);
    EXPECT_NEAR(m.ttft.mean, 0.575, 1e-9);
    EXPECT_NEAR(m.ttft.p50, 0.55, 1e-9);
    EXPECT_NEAR(m.ttft.p99, 0.794, 1e-9);
    EXPECT_EQ(m.tpot.count, 3);
    EXPECT_NEAR(m.tpot.mean, 0.4 / 3, 1e-9);
    EXPECT_NEAR(m.tpot.p50, 0.1, 1e-9);
    EXPECT_NEAR(m.tpot.p99, 0.198, 1e-9);
    EXPECT_NEAR(m.e2e.mean, 1.025, 1e-9);
    EXPECT_NEAR(m.e2e.p50, 1.1, 1e-9);
    EXPECT_NEAR(m.e2e.p99, 1.491, 1e-9);

    // Defaults of a sparse meta.json: GPU from the folder name, no KV pool, no max_model_len.
    const auto sparse =
        calib::read_serving_run(fixtures() / "bench/examples/FOO9000/Llama-3.1-8B/vllm");
    EXPECT_EQ(sparse.gpu, "FOO9000");
    EXPECT_EQ(sparse.vllm_version, "?");
    EXPECT_FALSE(sparse.num_gpu_blocks.has_value());
    EXPECT_FALSE(sparse.max_model_len.has_value());
}

TEST(ServingRuns, ReplaysTheFixtureAndSkipsUnknownHardware) {
    const auto run =
        calib::read_serving_run(fixtures() / "bench/examples/RTX4090/Llama-3.1-8B/vllm");
    const auto c = calib::replay_serving_run(run, db(), no_profile);
    ASSERT_TRUE(c.replayed) << c.skip_reason;
    EXPECT_EQ(c.gpu, "rtx-4090");
    EXPECT_EQ(c.model, "llama-3.1-8b");
    EXPECT_TRUE(c.default_profile);
    EXPECT_EQ(c.simulated.e2e.count, 4);
    EXPECT_GT(c.simulated.ttft.mean, 0.0);
    EXPECT_GT(c.simulated.tpot.mean, 0.0);
    // Deterministic.
    const auto again = calib::replay_serving_run(run, db(), no_profile);
    EXPECT_EQ(again.simulated.e2e.mean, c.simulated.e2e.mean);

    // A KV pool (100 blocks of 16 tokens) too small for max_model_len: skipped with the reason.
    auto too_long = run;
    too_long.max_model_len = 4096;
    const auto unfit = calib::replay_serving_run(too_long, db(), no_profile);
    EXPECT_FALSE(unfit.replayed);
    EXPECT_NE(unfit.skip_reason.find("does not fit"), std::string::npos) << unfit.skip_reason;

    const auto skipped = calib::replay_serving_run(
        calib::read_serving_run(fixtures() / "bench/examples/FOO9000/Llama-3.1-8B/vllm"), db(),
        no_profile);
    EXPECT_FALSE(skipped.replayed);
    EXPECT_NE(skipped.skip_reason.find("FOO9000"), std::string::npos) << skipped.skip_reason;
    EXPECT_NE(skipped.skip_reason.find("not in the hwdb"), std::string::npos)
        << skipped.skip_reason;
}

TEST(ServingRuns, BadFilesNameTheLine) {
    const fs::path dir =
        fs::temp_directory_path() / ("gpuplan_serving_runs_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::copy_file(fixtures() / "bench/examples/RTX4090/Llama-3.1-8B/vllm/meta.json",
                  dir / "meta.json", fs::copy_options::overwrite_existing);
    {
        std::ofstream(dir / "requests.jsonl")
            << R"({"input_toks": 1, "output_toks": 2, "queued_ts": 0, "first_token_ts": 1, "last_token_ts": 2})"
            << "\n{\"input_toks\": 1, \"output_toks\": 2, \"queued_ts\": 0}\n";
    }
    try {
        (void)calib::read_serving_run(dir);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("requests.jsonl:2"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("first_token_ts"), std::string::npos) << e.what();
    }
    { std::ofstream(dir / "requests.jsonl") << "{not json\n"; }
    EXPECT_THROW((void)calib::read_serving_run(dir), InputError);
    fs::remove(dir / "requests.jsonl");
    EXPECT_THROW((void)calib::read_serving_run(dir), InputError);
    fs::remove_all(dir);
}

// The replay of ../shared/data's RTX 4090 run must give what scripts/validate_llmservingsim.py
// prints for it through `gpuplan simulate` (the default profile: hwdb/profiles has none for
// Ada): measured TTFT mean 65.457 s, P50 60.111, P99 137.356; TPOT 32.447/30.759/56.004 ms;
// E2E 86.578/83.413/153.628 s; simulated TTFT 75.104/68.358/156.660 s, TPOT
// 35.597/33.993/61.023 ms, E2E 98.284/97.685/174.373 s (errors +14.7 %, +9.7 %, +13.5 % on the
// means).
TEST(ServingRuns, Rtx4090Llama8bMatchesThePythonReplay) {
    const fs::path dir = fs::path(GPUPLAN_SHARED_DATA_DIR) /
                         "llmservingsim/bench/examples/RTX4090/Llama-3.1-8B/vllm";
    if (!fs::exists(dir / "requests.jsonl")) {
        GTEST_SKIP() << "no " << dir << " (../shared/data is not part of a clone)";
    }
    const auto run = calib::read_serving_run(dir);
    ASSERT_EQ(run.requests.size(), 300u);
    const auto c = calib::replay_serving_run(run, db(), [](const model::AcceleratorSpec& gpu) {
        return hwdb::find_profile_for_gpu({hwdb::builtin_profile_folder()}, gpu);
    });
    ASSERT_TRUE(c.replayed) << c.skip_reason;
    EXPECT_TRUE(c.default_profile) << c.profile;
    const auto near = [](double got, double want, double tol) {
        EXPECT_NEAR(got, want, tol * want);
    };
    near(c.measured.ttft.mean, 65.457, 1e-4);
    near(c.measured.ttft.p50, 60.111, 1e-4);
    near(c.measured.ttft.p99, 137.356, 1e-4);
    near(c.measured.tpot.mean, 32.447e-3, 1e-4);
    near(c.measured.tpot.p50, 30.759e-3, 1e-4);
    near(c.measured.tpot.p99, 56.004e-3, 1e-4);
    near(c.measured.e2e.mean, 86.578, 1e-4);
    near(c.measured.e2e.p50, 83.413, 1e-4);
    near(c.measured.e2e.p99, 153.628, 1e-4);
    near(c.simulated.ttft.mean, 75.104, 1e-3);
    near(c.simulated.ttft.p50, 68.358, 1e-3);
    near(c.simulated.ttft.p99, 156.660, 1e-3);
    near(c.simulated.tpot.mean, 35.597e-3, 1e-3);
    near(c.simulated.tpot.p50, 33.993e-3, 1e-3);
    near(c.simulated.tpot.p99, 61.023e-3, 1e-3);
    near(c.simulated.e2e.mean, 98.284, 1e-3);
    near(c.simulated.e2e.p50, 97.685, 1e-3);
    near(c.simulated.e2e.p99, 174.373, 1e-3);
    // Bounds: every error within ±20 %, the model slow rather than fast (as measured here).
    for (const auto& [name, m, s] : {std::tuple{"TTFT", c.measured.ttft, c.simulated.ttft},
                                     std::tuple{"TPOT", c.measured.tpot, c.simulated.tpot},
                                     std::tuple{"E2E", c.measured.e2e, c.simulated.e2e}}) {
        for (const auto& [what, mv, sv] :
             {std::tuple{"mean", m.mean, s.mean}, std::tuple{"p50", m.p50, s.p50},
              std::tuple{"p99", m.p99, s.p99}}) {
            const double err = (sv - mv) / mv;
            std::cout << name << ' ' << what << ": measured " << mv << ", simulated " << sv
                      << ", error " << err * 100 << " %\n";
            EXPECT_GT(err, 0.0) << name << ' ' << what;
            EXPECT_LT(err, 0.20) << name << ' ' << what;
        }
    }
}

// The real vLLM 0.19 runs diagnosed (issue 13): the gauges as a scrape at the moment the most
// requests waited would show them (timeseries.csv: running, waiting, KV use each second), the
// latencies and tokens over the whole run. What the series shows must be the verdict: a KV cache
// at >= 95 % with requests waiting is `kv-cache-full`; waiting with room in the cache is
// `queueing`; and on real hardware with CUDA graphs the decode is never called far slower than
// the model (no `decode-slow`). Skipped without ../shared/data.
TEST(ServingRuns, DiagnosingTheMeasuredRunsNamesWhatTheirSeriesShow) {
    const fs::path root = fs::path(GPUPLAN_SHARED_DATA_DIR) / "llmservingsim";
    const auto dirs = calib::find_serving_runs(root);
    if (dirs.empty()) {
        GTEST_SKIP() << "no runs under " << root << " (../shared/data is not part of a clone)";
    }
    int diagnosed = 0;
    for (const auto& dir : dirs) {
        const auto run = calib::read_serving_run(dir);
        std::string skip;
        const auto scenario = calib::serving_run_scenario(run, db(), skip);
        std::ifstream series(dir / "timeseries.csv");
        if (!scenario || !series) {
            std::printf("  %-40s skipped: %s\n", run.label.c_str(),
                        scenario ? "no timeseries.csv" : skip.c_str());
            continue;
        }
        // t,prompt_throughput,gen_throughput,running,waiting,kv_cache_pct
        std::string line;
        std::getline(series, line);
        double gen = 0, ticks = 0, peak_waiting = -1, peak_running = 0, peak_kv = 0;
        while (std::getline(series, line)) {
            double t = 0, prompt = 0, g = 0, running = 0, waiting = 0, kv = 0;
            if (std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf", &t, &prompt, &g, &running,
                            &waiting, &kv) != 6) {
                continue;
            }
            gen += g;
            ticks += 1;
            if (waiting > peak_waiting) {
                peak_waiting = waiting;
                peak_running = running;
                peak_kv = kv / 100;
            }
        }
        ASSERT_GT(ticks, 0) << dir;
        const auto lat = calib::measured_latencies(run);
        model::EngineMetrics m;
        m.running = peak_running;
        m.waiting = peak_waiting;
        m.kv_usage = peak_kv;
        m.ttft_mean_s = lat.ttft.mean;
        m.itl_mean_s = lat.tpot.mean;
        m.window_s = ticks;
        m.delta = true;
        double in = 0, out = 0;
        for (const auto& r : run.requests) {
            in += r.input_tokens;
            out += r.output_tokens;
        }
        m.requests = static_cast<double>(run.requests.size());
        m.prompt_tokens = in;
        m.generation_tokens = out; // tokens of the finished requests: lengths and tokens/s
        (void)gen;
        model::Observations obs;
        obs.metrics = m;
        const auto profile =
            hwdb::find_profile_for_gpu({hwdb::builtin_profile_folder()}, scenario->deployment.gpu);
        const auto g = model::diagnose(scenario->deployment, scenario->workload,
                                       profile ? *profile : model::default_profile(), obs);
        std::string ids;
        for (const auto& r : g.rows) {
            ids += (ids.empty() ? "" : ", ") + r.id;
        }
        std::printf(
            "  %-40s peak: %g running, %g waiting, KV %.0f %%; TPOT %.1f ms observed vs %.1f "
            "predicted; rows: %s\n",
            run.label.c_str(), peak_running, peak_waiting, peak_kv * 100, lat.tpot.mean * 1e3,
            g.predicted.estimate.tpot.si() * 1e3, ids.empty() ? "none" : ids.c_str());
        const auto has = [&](const char* id) {
            return std::any_of(g.rows.begin(), g.rows.end(),
                               [&](const model::DiagnosisRow& r) { return r.id == id; });
        };
        EXPECT_FALSE(has("decode-slow")) << run.label;
        if (peak_kv >= 0.95 && peak_waiting > 0) {
            ASSERT_FALSE(g.rows.empty()) << run.label;
            EXPECT_EQ(g.rows.front().id, "kv-cache-full") << run.label;
        } else if (peak_waiting > 0) {
            EXPECT_TRUE(has("queueing") || has("kv-cache-full")) << run.label << ": " << ids;
        }
        ++diagnosed;
    }
    EXPECT_GT(diagnosed, 0);
}
