// `gpuplan calib import|fit|validate` end to end through the real binary: output, exit codes,
// messages, and a fit that recovers the coefficients synthetic torch_profile.py data were made
// with.
#include "calib/predict.hpp"
#include "hwdb/database.hpp"
#include "hwdb/profile_loader.hpp"
#include "tests/support/run_cli.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace gpuplan;

namespace {

namespace fs = std::filesystem;

using gpuplan::test::RunResult;

RunResult run(const std::string& args) {
    return gpuplan::test::run_cli(args);
}

std::string fx(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/calib/" + rel;
}

bool has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
}

model::EfficiencyProfile truth() {
    model::EfficiencyProfile p = model::default_profile();
    p.gemm.e_max = 0.78;
    p.gemm.m_half = 80;
    p.gemm.nk_half = 1e6;
    p.gemm.dtype_scale[static_cast<std::size_t>(model::ComputeType::Fp8)] = 0.8;
    p.memory = {0.88, 2.0 * 1024 * 1024};
    p.attention_prefill = {0.72, 700};
    p.attention_decode = {0.93, 5.0 * 1024 * 1024};
    return p;
}

// A torch_profile.py CSV for an H100 whose times are the model's with truth().
void write_synthetic_torch_csv(const fs::path& file) {
    const auto db = hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    const calib::Hardware hw{db.accelerator("h100-sxm"), db.interconnects()};
    std::ofstream out(file);
    out << "# gpu: NVIDIA H100 80GB HBM3\nop,m,n,k,dtype,batch,seq,time_us\n";
    auto time_us = [&](model::Measurement m) {
        m.gpu = "h100-sxm";
        m.time_s = 1;
        return calib::predict(*calib::prepare(m, hw), truth(), 0.0) * 1e6;
    };
    char line[256];
    for (const char* dtype : {"bf16", "fp8"}) {
        for (double m : {1.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0}) {
            for (auto [k, n] : {std::pair{1024.0, 1024.0},
                                {4096.0, 6144.0},
                                {4096.0, 28672.0},
                                {8192.0, 10240.0}}) {
                model::Measurement g;
                g.op_class = model::OpClass::Gemm;
                g.m = m;
                g.k = k;
                g.n = n;
                g.dtype = dtype;
                std::snprintf(line, sizeof line, "matmul,%g,%g,%g,%s,1,0,%.12g\n", m, n, k, dtype,
                              time_us(g));
                out << line;
            }
        }
    }
    for (int batch : {1, 2, 4}) {
        for (double seq : {256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0}) {
            model::Measurement a;
            a.op_class = model::OpClass::AttentionPrefill;
            a.batch = batch;
            a.tokens = seq;
            a.heads = 32;
            a.kv_heads = 32;
            a.head_dim = 128;
            std::snprintf(line, sizeof line, "sdpa_prefill,0,32,128,bf16,%d,%g,%.12g\n", batch, seq,
                          time_us(a));
            out << line;
            a.op_class = model::OpClass::AttentionDecode;
            a.tokens = 1;
            a.context = seq;
            a.batch = batch * 16;
            std::snprintf(line, sizeof line, "sdpa_decode,0,32,128,bf16,%d,%g,%.12g\n", batch * 16,
                          seq, time_us(a));
            out << line;
        }
    }
    for (int e = 12; e <= 30; ++e) {
        model::Measurement c;
        c.op_class = model::OpClass::MemoryBound;
        c.bytes = 2.0 * 2 * std::ldexp(1.0, e);
        std::snprintf(line, sizeof line, "copy,%g,0,0,bf16,1,0,%.12g\n", std::ldexp(1.0, e),
                      time_us(c));
        out << line;
    }
}

} // namespace

TEST(CalibCli, HelpForEachCommand) {
    for (const char* cmd : {"calib import", "calib fit", "calib validate"}) {
        const auto r = run(std::string(cmd) + " --help");
        EXPECT_EQ(r.exit_code, 0) << cmd;
        EXPECT_TRUE(has(r.out, "usage: gpuplan " + std::string(cmd))) << r.out;
    }
    EXPECT_TRUE(has(run("--help").out, "calib validate"));
}

TEST(CalibCli, ImportSummarisesAndWritesPoints) {
    const auto r = run("calib import " + fx("vidur") + " " + fx("blis"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "a100-sxm-80gb")) << r.out;
    EXPECT_TRUE(has(r.out, "h100-sxm"));
    EXPECT_TRUE(has(r.out, "51 points from 6 files; 1 files in no known format skipped")) << r.out;
    const auto y = run("calib import " + fx("torch/torch_profile.csv") + " -o -");
    ASSERT_EQ(y.exit_code, 0) << y.out;
    EXPECT_TRUE(has(y.out, "schema: 1"));
    EXPECT_TRUE(has(y.out, "gpu: h100-sxm")) << y.out; // the CUDA name resolved through the hwdb
    EXPECT_TRUE(has(y.out, "op_class: attention_decode"));
}

TEST(CalibCli, BadInputExitsWithTwoAndALocatedMessage) {
    auto r = run("calib import " + fx("bad/bad_number.csv") + " --format torch --gpu h100-sxm");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r.out, "bad_number.csv:2:32: time_us: expected a number, found '12x'"))
        << r.out;
    r = run("calib import " + fx("bad/bad_number.csv") + " --format nope");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r.out, "unknown --format 'nope'")) << r.out;
    r = run("calib fit " + fx("blis") + " --gpu no-such-gpu");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r.out, "unknown accelerator 'no-such-gpu'")) << r.out;
    r = run("calib fit " + fx("blis") + " --gpu a100-sxm-80gb");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(
        has(r.out, "no point was measured on 'a100-sxm-80gb'; the points are from: h100-sxm"))
        << r.out;
    r = run("calib validate " + fx("no-such-dir"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r.out, "no such file or folder")) << r.out;
    r = run("calib fit");
    EXPECT_EQ(r.exit_code, 2);
    // Issue 12: no held-out shape means no measured error; it used to write "0 %".
    r = run("calib fit " + fx("blis") + " --gpu h100-sxm --holdout-every 0");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_TRUE(has(r.out, "error: holdout-every 0 holds out no shapes, so the profile's error "
                           "could not be measured; give 2 or more (default 5)"))
        << r.out;
    r = run("calib validate " + fx("blis") + " --gpu h100-sxm --holdout-every 0");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_TRUE(has(r.out, "error: holdout-every 0 holds out no shapes, so there is no held-out "
                           "error to report; give 2 or more"))
        << r.out;
}

TEST(CalibCli, FitRecoversSyntheticCoefficientsAndValidateReportsThem) {
    const fs::path dir =
        fs::temp_directory_path() / ("gpuplan-calib-cli-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "data");
    write_synthetic_torch_csv(dir / "data" / "torch_profile.csv");
    const fs::path out = dir / "h100-test.yaml";
    const auto r = run("calib fit " + (dir / "data").string() +
                       " --gpu h100-sxm --with-points -o " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "wrote " + out.string())) << r.out;
    const auto f = hwdb::read_profile_file(out);
    const auto t = truth();
    EXPECT_NEAR(f.profile.gemm.e_max / t.gemm.e_max, 1.0, 1e-3);
    EXPECT_NEAR(f.profile.gemm.m_half / t.gemm.m_half, 1.0, 1e-3);
    EXPECT_NEAR(f.profile.gemm.nk_half / t.gemm.nk_half, 1.0, 1e-2);
    EXPECT_NEAR(f.profile.gemm.dtype_scale[static_cast<std::size_t>(model::ComputeType::Fp8)], 0.8,
                1e-3);
    EXPECT_NEAR(f.profile.memory.max, t.memory.max, 1e-3);
    EXPECT_NEAR(f.profile.memory.half / t.memory.half, 1.0, 1e-2);
    EXPECT_NEAR(f.profile.attention_prefill.max, t.attention_prefill.max, 1e-3);
    EXPECT_NEAR(f.profile.attention_decode.max, t.attention_decode.max, 1e-3);
    EXPECT_EQ(f.gpu, "h100-sxm");
    EXPECT_TRUE(has(f.command, "calib fit"));
    EXPECT_FALSE(f.points.empty());
    EXPECT_LT(f.profile.error_band.mape, 1e-3);

    const auto v = run("calib validate " + (dir / "data").string() + " --profile " + out.string() +
                       " --all --by-op");
    ASSERT_EQ(v.exit_code, 0) << v.out;
    EXPECT_TRUE(has(v.out, "h100-sxm: " + out.string())) << v.out;
    EXPECT_TRUE(has(v.out, "attention_decode")) << v.out;
    EXPECT_TRUE(has(v.out, "sdpa_prefill")) << v.out;
    const auto j = run("calib validate " + (dir / "data").string() + " --profile " + out.string() +
                       " --all --json");
    ASSERT_EQ(j.exit_code, 0) << j.out;
    EXPECT_TRUE(has(j.out, "\"gpu\": \"h100-sxm\"")) << j.out;
    // Without --profile, the committed profile of the GPU is found in hwdb/profiles.
    const auto d = run("calib validate " + (dir / "data").string());
    ASSERT_EQ(d.exit_code, 0) << d.out;
    EXPECT_TRUE(has(d.out, "hwdb/profiles/h100-sxm.yaml")) << d.out;
    fs::remove_all(dir);
}

// Measured vLLM serving runs under the folder are replayed (calib/serving_runs.hpp): a table per
// replayed run, a line per skipped one, and one {"serving_run": ...} element each with --json.
TEST(CalibCli, ValidateReplaysServingRuns) {
    const auto t = run("calib validate " + fx("serving_runs"));
    ASSERT_EQ(t.exit_code, 0) << t.out;
    EXPECT_TRUE(has(t.out, "serving run RTX4090/Llama-3.1-8B (4 requests, vLLM 0.0.test)"))
        << t.out;
    EXPECT_TRUE(has(t.out, "default spec-sheet profile")) << t.out;
    EXPECT_TRUE(has(t.out, "TPOT ms p99")) << t.out;
    EXPECT_TRUE(
        has(t.out, "serving run FOO9000/Llama-3.1-8B: skipped, GPU 'FOO9000' is not in the hwdb"))
        << t.out;
    const auto j = run("calib validate " + fx("serving_runs") + " --json");
    ASSERT_EQ(j.exit_code, 0) << j.out;
    const auto doc = nlohmann::json::parse(j.out);
    int replayed = 0, skipped = 0;
    for (const auto& e : doc) {
        if (e.contains("error_bands")) {
            continue; // the per-class bands of the runs (error_bands_test.cpp)
        }
        ASSERT_TRUE(e.contains("serving_run")) << e.dump();
        if (e["replayed"].get<bool>()) {
            ++replayed;
            EXPECT_EQ(e["gpu"], "rtx-4090");
            EXPECT_NEAR(e["ttft_s"]["measured"]["mean"].get<double>(), 0.575, 1e-9);
            EXPECT_TRUE(e["e2e_s"]["error"]["p99"].is_number());
        } else {
            ++skipped;
            EXPECT_TRUE(has(e["skipped"].get<std::string>(), "FOO9000"));
        }
    }
    EXPECT_EQ(replayed, 1);
    EXPECT_EQ(skipped, 1);
}

// The calib writers wrote FILE.tmp and renamed it over -o FILE: a device became a regular file
// (as root), a full disk left FILE.tmp behind, and -o DIR gave an internal error. Now they go
// through hwdb's one writer (tests/hwdb/file_io_test.cpp has the library cases).
TEST(CalibCli, OutputFilesAreCompleteOrAbsent) {
    const fs::path dir =
        fs::temp_directory_path() / ("gpuplan-calib-cli-out-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string points = "calib import " + fx("torch/torch_profile.csv");
    const std::string fit = "calib fit " + fx("blis") + " --gpu h100-sxm";
    const std::string power = "calib fit-power " + fx("power/samples.csv") + " --gpu h100-sxm";
    for (const std::string& cmd : {points, fit, power}) {
        SCOPED_TRACE(cmd);
        const auto full = run(cmd + " -o /dev/full");
        EXPECT_EQ(full.exit_code, 2) << full.out;
        EXPECT_TRUE(has(full.out, "/dev/full: cannot write the file (No space left on device)"))
            << full.out;
        EXPECT_FALSE(has(full.out, "wrote")) << full.out;
        EXPECT_EQ(fs::status("/dev/full").type(), fs::file_type::character);
        const auto folder = run(cmd + " -o " + dir.string());
        EXPECT_EQ(folder.exit_code, 2) << folder.out;
        EXPECT_TRUE(has(folder.out, dir.string() + ": is a folder; give a file name"))
            << folder.out;
        const auto missing = run(cmd + " -o " + (dir / "no" / "out.yaml").string());
        EXPECT_EQ(missing.exit_code, 2) << missing.out;
        EXPECT_TRUE(has(missing.out, "out.yaml: cannot write the file (No such file or directory)"))
            << missing.out;
        ASSERT_EQ(run(cmd + " -o " + (dir / "out.yaml").string()).exit_code, 0);
        EXPECT_TRUE(fs::is_regular_file(dir / "out.yaml"));
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) {
            ++n;
        }
        EXPECT_EQ(n, 1u); // out.yaml only: no temporary file
        fs::remove(dir / "out.yaml");
    }
    fs::remove_all(dir);
}

// The kernel-level sets' fixtures through the CLI: GPU names resolved through hwdb aliases
// ("NVIDIA B200" -> b200), the batched aiter table skipped in a folder.
TEST(CalibCli, ImportsTheKernelLevelSets) {
    const auto r = run("calib import " + fx("kernel_sets"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* want : {"b200", "gb200", "h200-sxm", "mi300x", "mi355x", "gfx942-80cu"}) {
        EXPECT_TRUE(has(r.out, std::string("\n") + want + " ")) << want << "\n" << r.out;
    }
    EXPECT_FALSE(has(r.out, "NVIDIA B200")) << r.out;
    EXPECT_TRUE(has(r.out, "1 files in no known format skipped")) << r.out;
}

// --keep holds a parameter at the --base profile's value; unknown names are usage errors.
TEST(CalibCli, FitKeepsParametersOfTheBaseProfile) {
    auto bad = run("calib fit " + fx("blis") + " --gpu h100-sxm --keep gemm.bogus");
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_TRUE(has(bad.out, "unknown --keep parameter 'gemm.bogus'; use gemm.m_half or "
                             "gemm.nk_half"))
        << bad.out;
    bad = run("calib fit " + fx("blis") + " --gpu h100-sxm --base " + fx("no-such.yaml"));
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    const fs::path dir =
        fs::temp_directory_path() / ("gpuplan-calib-keep-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "data");
    write_synthetic_torch_csv(dir / "data" / "torch_profile.csv");
    const fs::path base = fs::path(GPUPLAN_SOURCE_DIR) / "hwdb/profiles/h100-sxm.yaml";
    const fs::path out = dir / "kept.yaml";
    const auto r = run("calib fit " + (dir / "data").string() + " --gpu h100-sxm --base " +
                       base.string() + " --keep gemm.m_half -o " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "note: gemm: gemm.m_half kept at the base profile's value (--keep)"))
        << r.out;
    EXPECT_EQ(hwdb::read_profile_file(out).profile.gemm.m_half,
              hwdb::read_profile_file(base).profile.gemm.m_half);
    fs::remove_all(dir);
}

TEST(CalibCli, FitStepOverheadFromBenchmarksWritesAProfileThatLowersTheError) {
    const std::string d = std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/diagnose/";
    const std::string scenario = std::string(GPUPLAN_SOURCE_DIR) + "/examples/quickstart.yaml";
    const std::string benches =
        d + "healthy-8b-h100-guidellm-sweep.json " + d + "healthy-8b-h100-bench.json";
    const fs::path dir =
        fs::temp_directory_path() / ("gpuplan-bench-fit-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string out = (dir / "fitted.yaml").string();
    const auto r =
        run("calib fit " + benches + " --scenario " + scenario + " -o " + out + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out.substr(0, r.out.rfind('}') + 1));
    EXPECT_EQ(j["benchmarks"].size(), 3u);
    EXPECT_LT(j["mape_after"].get<double>(), j["mape_before"].get<double>());
    // The written profile carries the fitted overhead and says where it came from.
    const auto file = hwdb::read_profile_file(out);
    EXPECT_NEAR(file.profile.step_overhead.si(), j["step_overhead_s"].get<double>(), 1e-8);
    EXPECT_NE(file.description.find("step_overhead fitted to 3 benchmark results of quickstart"),
              std::string::npos)
        << file.description;
    // The shipped profile's sources stay (its other coefficients come from them); the
    // benchmark files are added.
    ASSERT_GE(file.sources.size(), 2u);
    EXPECT_TRUE(has(file.sources[file.sources.size() - 2], "healthy-8b-h100-guidellm-sweep.json"));
    EXPECT_TRUE(has(file.sources.back(), "healthy-8b-h100-bench.json"));
    // calib validate with the fitted profile: a lower mean error than with the shipped one.
    const auto before = run("calib validate " + benches + " --scenario " + scenario + " --json");
    const auto after = run("calib validate " + benches + " --scenario " + scenario + " --profile " +
                           out + " --json");
    ASSERT_EQ(before.exit_code, 0) << before.out;
    ASSERT_EQ(after.exit_code, 0) << after.out;
    EXPECT_LT(nlohmann::json::parse(after.out)["mape"].get<double>(),
              nlohmann::json::parse(before.out)["mape"].get<double>());
    // One benchmark cannot separate the overhead from the kernels: exit 2.
    const auto one = run("calib fit " + d + "healthy-8b-h100-bench.json --scenario " + scenario);
    EXPECT_EQ(one.exit_code, 2) << one.out;
    EXPECT_TRUE(has(one.out, "two loads or more")) << one.out;
    fs::remove_all(dir);
}

// H100's shipped gemm_grouped is what `calib fit` gives on the shipped vLLM fused_moe set
// (validation/kernels) from the profile without that curve, as its YAML comment says; and
// `calib validate` predicts every one of the set's 15 points.
TEST(CalibCli, H100GroupedCurveIsTheFitOfTheFusedMoeSet) {
    const fs::path root(GPUPLAN_SOURCE_DIR);
    const fs::path dir =
        fs::temp_directory_path() / ("gpuplan_grouped_fit_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    {
        std::ifstream in(root / "hwdb/profiles/h100-sxm.yaml");
        std::ofstream out(dir / "base.yaml");
        std::string line;
        while (std::getline(in, line)) {
            if (line.find("gemm_grouped:") == std::string::npos) {
                out << line << '\n';
            }
        }
    }
    const std::string set = (root / "validation/kernels/vllm-fused-moe-mixtral-h100.csv").string();
    const auto r = run("calib fit " + set + " --gpu h100-sxm --base " +
                       (dir / "base.yaml").string() + " -o " + (dir / "fit.yaml").string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const model::EfficiencyProfile fitted = hwdb::load_profile(dir / "fit.yaml");
    const model::EfficiencyProfile shipped =
        hwdb::load_profile(root / "hwdb/profiles/h100-sxm.yaml");
    EXPECT_NEAR(fitted.gemm_grouped.max, shipped.gemm_grouped.max, 1e-5);
    EXPECT_NEAR(fitted.gemm_grouped.half, shipped.gemm_grouped.half, 1e-3);
    EXPECT_NE(shipped.gemm_grouped, model::default_profile().gemm_grouped);
    const auto v = run("calib validate " + set + " --all --json");
    ASSERT_EQ(v.exit_code, 0) << v.out;
    const auto j = nlohmann::json::parse(v.out);
    ASSERT_FALSE(j.empty()); // the per-GPU rows, then the error-band table
    EXPECT_EQ(j[0]["gpu"], "h100-sxm");
    EXPECT_EQ(j[0]["points"], 15);
    fs::remove_all(dir);
}
