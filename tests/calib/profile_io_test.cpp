// Profile YAML: the writer's output reads back, the reader's errors are located, profiles are
// found by GPU (or borrowed from the same architecture), and the committed profiles load.
#include "calib/profile_writer.hpp"
#include "hwdb/database.hpp"
#include "hwdb/profile_loader.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace gpuplan;

namespace {

namespace fs = std::filesystem;

hwdb::ProfileFile sample_file() {
    hwdb::ProfileFile f;
    f.profile = model::default_profile();
    f.profile.name = "test-profile";
    f.profile.provenance.kind = model::ProvenanceKind::Microbenchmark;
    f.profile.gemm = {0.81, 97.5, 1.5e6, {1, 1, 1, 1, 0.83, 0.9, 0.9}};
    f.profile.gemm_weight_only = {0.85, 11.5};
    f.profile.memory = {0.72, 3.5 * 1024 * 1024};
    f.profile.attention_prefill = {0.76, 590};
    f.profile.attention_decode = {0.95, 4.25 * 1024 * 1024};
    f.profile.comm.bandwidth = {0.74, 1024};
    f.profile.comm.collective_overhead = Seconds(8.05e-6);
    f.profile.error_band = {0.09, 0.16, 11631, "held-out shapes"};
    f.gpu = "h100-sxm";
    f.architecture = "hopper";
    f.description = "a test \"profile\"";
    f.command = "gpuplan calib fit x --gpu h100-sxm";
    f.date = "2026-11-30";
    f.sources = {"owner/repo@abc:path/file.csv"};
    f.residuals.push_back(
        {"gemm", true, 100, 25, 0.1, 0.12, 0.09, 0.3, 0.6, "f.csv:3 q", 0.2, 0.4, ""});
    f.comm_links.push_back(
        {"all_reduce", "nvswitch-nvlink4", 8, 1, Seconds(25e-6), BytesPerSecond(180e9), 994, 0.1});
    f.timing_offsets.push_back({"blis-mha", Seconds(17.6e-6), 635});
    model::Measurement m;
    m.op_class = model::OpClass::AttentionDecode;
    m.op = "flashinfer_decode";
    m.batch = 64;
    m.tokens = 1;
    m.context = 8192;
    m.heads = 16;
    m.kv_heads = 4;
    m.head_dim = 128;
    m.dtype = "bf16";
    m.gpu = "h100-sxm";
    m.tp = 2;
    m.timing = model::Timing::Host;
    m.time_s = 400.5e-6;
    m.source = "blis-mha";
    m.source_file = "dir with space/32-8-128-tp2.csv";
    m.row = 3;
    f.points.push_back(m);
    return f;
}

void expect_close(double a, double b) {
    EXPECT_NEAR(a, b, 1e-5 * std::max(std::abs(a), std::abs(b)) + 1e-12);
}

std::string message_of(const std::string& yaml) {
    try {
        (void)hwdb::parse_profile_file(yaml, "p.yaml");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

const char* kMinimal = R"(schema: 1
profile:
  name: x
  gpu: h100-sxm
  architecture: hopper
  provenance: {kind: spec-sheet, description: d}
  gemm: {e_max: 0.7}
  memory: {max: 0.8, half: 2 MiB}
  attention_prefill: {max: 0.7, half: 1024}
  attention_decode: {max: 0.9, half: 4 MiB}
  comm: {bandwidth: {max: 0.8}, collective_overhead: 10 us}
  launch_overhead: 4 us
  step_overhead: 0.5 ms
  error_band: {mape: 0.3, p90: 0.5, points: 0}
)";

fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("gpuplan-calib-test-" + name);
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

} // namespace

TEST(ProfileYaml, WriterOutputReadsBack) {
    const hwdb::ProfileFile f = sample_file();
    const std::string yaml = calib::profile_to_yaml(f);
    const hwdb::ProfileFile r = hwdb::parse_profile_file(yaml, "round.yaml");
    const auto& a = f.profile;
    const auto& b = r.profile;
    EXPECT_EQ(b.name, "test-profile");
    EXPECT_EQ(b.provenance.kind, model::ProvenanceKind::Microbenchmark);
    EXPECT_EQ(b.provenance.file, "round.yaml");
    EXPECT_EQ(b.provenance.description, "a test \"profile\" (measured on h100-sxm, 2026-11-30)");
    expect_close(b.gemm.e_max, a.gemm.e_max);
    expect_close(b.gemm.m_half, a.gemm.m_half);
    expect_close(b.gemm.nk_half, a.gemm.nk_half);
    for (std::size_t i = 0; i < a.gemm.dtype_scale.size(); ++i) {
        expect_close(b.gemm.dtype_scale[i], a.gemm.dtype_scale[i]);
    }
    expect_close(b.gemm_weight_only.max, 0.85);
    expect_close(b.gemm_weight_only.half, 11.5);
    expect_close(b.memory.max, a.memory.max);
    expect_close(b.memory.half, a.memory.half);
    expect_close(b.attention_prefill.half, a.attention_prefill.half);
    expect_close(b.attention_decode.half, a.attention_decode.half);
    expect_close(b.comm.bandwidth.half, a.comm.bandwidth.half);
    expect_close(b.comm.collective_overhead.si(), a.comm.collective_overhead.si());
    expect_close(b.launch_overhead.si(), a.launch_overhead.si());
    expect_close(b.step_overhead.si(), a.step_overhead.si());
    expect_close(b.error_band.mape, 0.09);
    EXPECT_EQ(b.error_band.points, 11631);
    EXPECT_EQ(r.gpu, "h100-sxm");
    EXPECT_EQ(r.architecture, "hopper");
    EXPECT_EQ(r.command, f.command);
    EXPECT_EQ(r.date, f.date);
    EXPECT_EQ(r.sources, f.sources);
    ASSERT_EQ(r.residuals.size(), 1u);
    EXPECT_EQ(r.residuals[0].worst_point, "f.csv:3 q");
    expect_close(r.residuals[0].default_p90, 0.4);
    ASSERT_EQ(r.comm_links.size(), 1u);
    expect_close(r.comm_links[0].bandwidth.si(), 180e9);
    expect_close(r.comm_links[0].alpha.si(), 25e-6);
    ASSERT_EQ(r.timing_offsets.size(), 1u);
    expect_close(r.timing_offsets[0].offset.si(), 17.6e-6);
    ASSERT_EQ(r.points.size(), 1u);
    model::Measurement p = r.points[0];
    expect_close(p.time_s, f.points[0].time_s);
    p.time_s = f.points[0].time_s;
    EXPECT_EQ(p, f.points[0]);
}

TEST(ProfileYaml, PointsFileReadsBackWithSources) {
    const auto f = sample_file();
    const std::string yaml = calib::points_to_yaml(f.points, {"owner/repo@abc:x.csv"});
    const hwdb::PointSet s = hwdb::parse_point_set(yaml, "points.yaml");
    EXPECT_EQ(s.sources, std::vector<std::string>{"owner/repo@abc:x.csv"});
    ASSERT_EQ(s.points.size(), 1u);
    EXPECT_EQ(s.points[0].source_file, "dir with space/32-8-128-tp2.csv");
    EXPECT_EQ(hwdb::parse_points(calib::profile_to_yaml(f), "p.yaml").size(), 1u);
    EXPECT_NE(message_of("schema: 1\n").find("missing required key 'profile'"), std::string::npos);
    try {
        (void)hwdb::parse_points("schema: 1\nsources: []\n", "empty.yaml");
        FAIL() << "expected an error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("no 'points:' list"), std::string::npos);
    }
}

TEST(ProfileYaml, MinimalProfileUsesDefaultsForOptionalKeys) {
    const auto p = hwdb::parse_profile(kMinimal, "min.yaml");
    EXPECT_DOUBLE_EQ(p.gemm.e_max, 0.7);
    EXPECT_DOUBLE_EQ(p.gemm.m_half, 0.0);
    EXPECT_DOUBLE_EQ(p.memory.half, 2.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(p.comm.bandwidth.half, 0.0);
    EXPECT_DOUBLE_EQ(p.graph_launch_overhead.si(),
                     model::default_profile().graph_launch_overhead.si());
    // Profiles without a weight-only curve follow the built-in default.
    EXPECT_EQ(p.gemm_weight_only, model::default_profile().gemm_weight_only);
}

TEST(ProfileYaml, WeightOnlyCurveIsWrittenOnlyWhenFitted) {
    hwdb::ProfileFile f = sample_file();
    f.profile.gemm_weight_only = model::default_profile().gemm_weight_only;
    EXPECT_EQ(calib::profile_to_yaml(f).find("gemm_weight_only"), std::string::npos);
    f.profile.gemm_weight_only = {0.8, 6};
    const std::string yaml = calib::profile_to_yaml(f);
    EXPECT_NE(yaml.find("gemm_weight_only: {max: 0.8, half: 6}"), std::string::npos) << yaml;
    std::string bad = kMinimal;
    bad += "  gemm_weight_only: {max: 0.9, half: 8, tile: 16}\n";
    EXPECT_NE(message_of(bad).find("tile"), std::string::npos) << message_of(bad);
}

// Block-scaled kernel classes (model/gemm_class.hpp): own scales and per-class residual rows
// are written and read back; a class without a scale is not written, so it keeps falling back.
TEST(ProfileYaml, KernelClassScalesAndResidualsReadBack) {
    hwdb::ProfileFile f = sample_file();
    f.profile.gemm.class_scale = {std::nullopt, 0.415, 0.52}; // mxfp8 absent; nvfp4, mxfp4
    hwdb::ResidualSummary r{"gemm", true, 10, 3,   0.05, 0.06,   0.05,
                            0.1,    0.12, "", 0.2, 0.3,  "nvfp4"};
    f.residuals.push_back(r);
    const std::string yaml = calib::profile_to_yaml(f);
    EXPECT_NE(yaml.find("fp4: 0.9, nvfp4: 0.415, mxfp4: 0.52}"), std::string::npos) << yaml;
    EXPECT_EQ(yaml.find("mxfp8"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("- {op_class: gemm, kernel_class: nvfp4, fitted: true"), std::string::npos)
        << yaml;
    const hwdb::ProfileFile back = hwdb::parse_profile_file(yaml, "round.yaml");
    EXPECT_FALSE(back.profile.gemm.class_scale[0].has_value());
    ASSERT_TRUE(back.profile.gemm.class_scale[1].has_value());
    expect_close(*back.profile.gemm.class_scale[1], 0.415);
    expect_close(*back.profile.gemm.class_scale[2], 0.52);
    expect_close(back.profile.gemm.scale(model::GemmClass::Mxfp8), 0.83); // fp8's
    ASSERT_EQ(back.residuals.size(), 2u);
    EXPECT_EQ(back.residuals[0].kernel_class, "");
    EXPECT_EQ(back.residuals[1].kernel_class, "nvfp4");
}

TEST(ProfileYaml, UnknownKernelClassKeysAreRefusedWithTheirPlace) {
    std::string bad = kMinimal;
    bad.replace(bad.find("gemm: {e_max: 0.7}"), 18,
                "gemm: {e_max: 0.7, dtype_scale: {fp8: 0.8, mxfp6: 0.5}}");
    EXPECT_EQ(message_of(bad).rfind("p.yaml:7:", 0), 0u) << message_of(bad);
    EXPECT_NE(message_of(bad).find("profile.gemm.dtype_scale.mxfp6: unknown key"),
              std::string::npos)
        << message_of(bad);
    std::string good = kMinimal;
    good.replace(good.find("gemm: {e_max: 0.7}"), 18,
                 "gemm: {e_max: 0.7, dtype_scale: {fp4: 0.5, mxfp4: 0.6}}");
    const auto p = hwdb::parse_profile(good, "p.yaml");
    EXPECT_DOUBLE_EQ(p.gemm.scale(model::GemmClass::Mxfp4), 0.6);
    EXPECT_DOUBLE_EQ(p.gemm.scale(model::GemmClass::Nvfp4), 0.5);
    std::string residual = kMinimal;
    residual += "  residuals:\n    - {op_class: gemm, kernel_class: fp6}\n";
    // Line 16 of the file (the residual row), the key's value at column 38.
    EXPECT_EQ(message_of(residual),
              "p.yaml:16:38: profile.residuals[0].kernel_class: unknown GEMM kernel class 'fp6'; "
              "use fp32, tf32, bf16, fp16, fp8, int8, fp4, mxfp8, nvfp4, mxfp4");
}

TEST(ProfileYaml, ErrorsAreLocatedAndSayHowToFix) {
    std::string bad = kMinimal;
    bad.replace(bad.find("memory: {max: 0.8, half: 2 MiB}"), 31,
                "memory: {max: 0.8, half: 2097152}");
    EXPECT_EQ(message_of(bad), "p.yaml:8:28: profile.memory.half: '2097152' has no unit; write '80 "
                               "GiB' (binary) or '80 GB' (decimal)");
    bad = std::string(kMinimal) + "  graph_lanch_overhead: 1 us\n";
    EXPECT_EQ(message_of(bad), "p.yaml:15:3: profile.graph_lanch_overhead: unknown key; did you "
                               "mean 'graph_launch_overhead'?");
    bad = kMinimal;
    bad.replace(bad.find("launch_overhead"), 15, "lunch_overhead");
    EXPECT_NE(message_of(bad).find("missing required key 'launch_overhead'"), std::string::npos);
    bad = kMinimal;
    bad.replace(bad.find("kind: spec-sheet"), 16, "kind: measured");
    EXPECT_NE(
        message_of(bad).find("p.yaml:6:22: profile.provenance.kind: unknown value 'measured'"),
        std::string::npos);
    bad = kMinimal;
    bad.replace(bad.find("e_max: 0.7"), 10, "e_max: 7");
    EXPECT_NE(message_of(bad).find("profile.gemm.e_max: '7' is out of range"), std::string::npos);
    bad = kMinimal;
    bad.replace(0, 9, "schema: 2");
    EXPECT_NE(message_of(bad).find("unsupported schema version 2"), std::string::npos);
}

TEST(ProfileSearch, ExactGpuThenSameArchitectureThenNothing) {
    const fs::path dir = temp_dir("search");
    { std::ofstream(dir / "h100.yaml") << kMinimal; }
    model::AcceleratorSpec h100;
    h100.name = "h100-sxm";
    h100.architecture = "hopper";
    const auto exact = hwdb::find_profile_for_gpu({dir}, h100);
    ASSERT_TRUE(exact.has_value());
    EXPECT_EQ(exact->provenance.description, "d (measured on h100-sxm)");
    model::AcceleratorSpec h200 = h100;
    h200.name = "h200-sxm";
    const auto borrowed = hwdb::find_profile_for_gpu({dir}, h200);
    ASSERT_TRUE(borrowed.has_value());
    EXPECT_EQ(borrowed->provenance.description.rfind(
                  "extrapolated from h100-sxm (same architecture 'hopper') to h200-sxm", 0),
              0u);
    EXPECT_NE(borrowed->error_band.validated_on.find("extrapolated"), std::string::npos);
    model::AcceleratorSpec a100;
    a100.name = "a100-sxm-80gb";
    a100.architecture = "ampere";
    EXPECT_FALSE(hwdb::find_profile_for_gpu({dir}, a100).has_value());
    model::AcceleratorSpec alias = a100;
    alias.architecture = "hopper";
    alias.aliases = {"H100 SXM"};
    // A GPU whose alias names the profile's GPU is an exact match.
    EXPECT_EQ(hwdb::find_profile_for_gpu({dir, dir / "missing"}, alias)->provenance.description,
              "d (measured on h100-sxm)");
    fs::remove_all(dir);
}

TEST(CommittedProfiles, LoadMatchTheHwdbAndBeatTheDefaultOnHeldOutGemms) {
    const auto db = hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    for (const char* name : {"a100-sxm-80gb", "h100-sxm"}) {
        const auto f =
            hwdb::read_profile_file(hwdb::builtin_profile_folder() / (std::string(name) + ".yaml"));
        SCOPED_TRACE(name);
        EXPECT_EQ(f.gpu, name);
        EXPECT_EQ(f.architecture, db.accelerator(name).architecture);
        EXPECT_EQ(f.profile.provenance.kind, model::ProvenanceKind::EngineProfile);
        EXPECT_FALSE(f.sources.empty());
        EXPECT_GT(f.profile.error_band.points, 1000);
        EXPECT_GT(f.profile.error_band.mape, 0.0);
        EXPECT_LT(f.profile.error_band.mape, model::default_profile().error_band.mape);
        bool gemm = false;
        for (const auto& r : f.residuals) {
            if (r.op_class == "gemm") {
                gemm = true;
                EXPECT_LT(r.mape, r.default_mape);
            }
        }
        EXPECT_TRUE(gemm);
        const auto found =
            hwdb::find_profile_for_gpu({hwdb::builtin_profile_folder()}, db.accelerator(name));
        ASSERT_TRUE(found.has_value());
        EXPECT_EQ(found->provenance.description.find("extrapolated"), std::string::npos);
    }
    // GPUs without a profile borrow the one of their architecture with the most points, flagged.
    for (auto [gpu, from] : {std::pair{"h800", "h100-sxm"},
                             {"h100-nvl", "h100-sxm"},
                             {"gb200", "b200"},
                             {"mi325x", "mi300x"},
                             {"mi350x", "mi355x"}}) {
        const auto b =
            hwdb::find_profile_for_gpu({hwdb::builtin_profile_folder()}, db.accelerator(gpu));
        ASSERT_TRUE(b.has_value()) << gpu;
        EXPECT_EQ(b->provenance.description.rfind(std::string("extrapolated from ") + from, 0), 0u)
            << gpu;
    }
}

// The profiles fitted on public kernel-level sets (issue 19): their own GPU, sources cited as
// repository@commit, a held-out error band, and only classes with data marked fitted.
TEST(CommittedProfiles, KernelLevelProfilesCitePublicCommits) {
    const auto db = hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    for (const char* name : {"h200-sxm", "b200", "mi300x", "mi355x"}) {
        SCOPED_TRACE(name);
        const auto f =
            hwdb::read_profile_file(hwdb::builtin_profile_folder() / (std::string(name) + ".yaml"));
        EXPECT_EQ(f.gpu, name);
        EXPECT_EQ(f.architecture, db.accelerator(name).architecture);
        ASSERT_FALSE(f.sources.empty());
        for (const auto& s : f.sources) {
            EXPECT_NE(s.find('@'), std::string::npos) << s; // owner/repo@commit:path
            EXPECT_EQ(s.find("shared"), std::string::npos) << s;
        }
        EXPECT_GT(f.profile.error_band.points, 0);
        EXPECT_GT(f.profile.error_band.mape, 0.0);
        bool gemm = false;
        for (const auto& r : f.residuals) {
            gemm = gemm || r.op_class == "gemm";
        }
        EXPECT_TRUE(gemm);
        const auto found =
            hwdb::find_profile_for_gpu({hwdb::builtin_profile_folder()}, db.accelerator(name));
        ASSERT_TRUE(found.has_value());
        EXPECT_EQ(found->provenance.description.find("extrapolated"), std::string::npos);
    }
}
