// gpuplan-calib's writers and command line, without a GPU: the points YAML must read back
// through hwdb's parser (the format `gpuplan calib fit` takes) with every field intact.
#include "calib/cuda/options.hpp"
#include "calib/cuda/report.hpp"
#include "hwdb/profile_loader.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace gpuplan::calib::bench {
namespace {

Environment example_environment() {
    Environment env;
    env.tool_version = "0.1.0";
    env.gpu_name = "NVIDIA H200";
    env.cuda_device_name = "NVIDIA H200";
    env.cc_major = 9;
    env.cc_minor = 0;
    env.sm_count = 132;
    env.memory_bytes = 150.0e9;
    env.l2_bytes = 50.0 * 1024 * 1024;
    env.driver_version = "570.86.15";
    env.cuda_driver_version = 12080;
    env.cuda_runtime_version = 13000;
    env.cublaslt_version = 130000;
    env.gpu_count = 1;
    env.power_source = "instant";
    env.date_utc = "2025-01-02T03:04:05Z";
    env.command = "gpuplan-calib --quick --out 'my \"file\".yaml' --gpu-name back\\slash";
    env.mode = "quick";
    env.notes = {"nccl: skipped, only one GPU is visible"};
    return env;
}

std::vector<Record> example_records() {
    std::vector<Record> out;
    Record g;
    g.op_class = "gemm";
    g.op = "qkv_proj";
    g.model = "llama-3.1-70b";
    g.m = 4096;
    g.n = 1280;
    g.k = 8192;
    g.dtype = "fp8";
    g.tp = 8;
    g.time_s = 123.456789e-6;
    g.rate = 700;
    g.rate_unit = "TFLOPS";
    g.power = {3, 650, 690, 1980, 2619, 61};
    out.push_back(g);
    Record mem;
    mem.op_class = "memory_bound";
    mem.op = "hbm_copy";
    mem.bytes = 2.0 * 4 * 1024 * 1024;
    mem.time_s = 2.5e-6;
    out.push_back(mem);
    Record att;
    att.op_class = "attention_decode";
    att.op = "paged_decode_proxy";
    att.batch = 64;
    att.tokens = 1;
    att.context = 8192;
    att.heads = 32;
    att.kv_heads = 8;
    att.head_dim = 128;
    att.time_s = 1.75e-3;
    out.push_back(att);
    Record ar;
    ar.op_class = "all_reduce";
    ar.op = "nccl_all_reduce";
    ar.bytes = 1 << 20;
    ar.tp = 8;
    ar.link = "nvswitch-nvlink4";
    ar.time_s = 30e-6;
    out.push_back(ar);
    Record sr;
    sr.op_class = "send_recv";
    sr.op = "nccl_send_recv";
    sr.bytes = 65536;
    sr.tp = 2;
    sr.time_s = 9e-6;
    out.push_back(sr);
    Record launch;
    launch.point = false;
    launch.op_class = "launch";
    launch.op = "eager_empty_kernel";
    launch.time_s = 2.2e-6;
    out.push_back(launch);
    Record a2a;
    a2a.point = false;
    a2a.op_class = "all_to_all";
    a2a.op = "nccl_all_to_all";
    a2a.bytes = 1 << 20;
    a2a.tp = 8;
    a2a.time_s = 40e-6;
    out.push_back(a2a);
    for (auto& r : out) {
        r.gpu = "NVIDIA H200";
    }
    return out;
}

model::Measurement as_measurement(const Record& r, const std::string& file = "", int row = 0) {
    model::Measurement m;
    m.op_class = *model::find_op_class(r.op_class);
    m.op = r.op;
    m.m = r.m;
    m.n = r.n;
    m.k = r.k;
    m.batch = r.batch;
    m.tokens = r.tokens;
    m.context = r.context;
    m.heads = r.heads;
    m.kv_heads = r.kv_heads;
    m.head_dim = r.head_dim;
    m.bytes = r.bytes;
    m.dtype = r.dtype;
    m.gpu = r.gpu;
    m.tp = r.tp;
    m.link = r.link;
    m.timing = model::Timing::Kernel;
    m.time_s = r.time_s;
    m.source = "gpuplan-calib";
    m.source_file = file;
    m.row = row;
    return m;
}

TEST(CalibPointsYaml, PointLinesMatchHwdbPointFormat) {
    for (const auto& r : example_records()) {
        if (r.point) {
            EXPECT_EQ(point_flow_yaml(r), hwdb::point_to_yaml(as_measurement(r)));
            EXPECT_EQ(point_flow_yaml(r, "h200-sxm-measured.yaml", 42),
                      hwdb::point_to_yaml(as_measurement(r, "h200-sxm-measured.yaml", 42)));
        }
    }
}

TEST(CalibPointsYaml, ReadsBackThroughHwdbPointSetParser) {
    Environment env = example_environment();
    env.output_file = "nvidia-h200-measured.yaml";
    const auto records = example_records();
    const std::string text = to_points_yaml(env, records);
    const hwdb::PointSet set = hwdb::parse_point_set(text, "measured.yaml");
    ASSERT_EQ(set.sources.size(), 1U);
    EXPECT_EQ(set.sources[0], provenance_line(env));
    std::vector<Record> points;
    std::copy_if(records.begin(), records.end(), std::back_inserter(points),
                 [](const Record& r) { return r.point; });
    ASSERT_EQ(set.points.size(), points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        const model::Measurement& got = set.points[i];
        // row is the point's own line in the text.
        ASSERT_GT(got.row, 0);
        std::size_t at = 0;
        for (int line = 1; line < got.row; ++line) {
            at = text.find('\n', at) + 1;
        }
        EXPECT_EQ(text.compare(at, 4, "  - "), 0) << "row " << got.row;
        EXPECT_EQ(text.substr(at + 4, text.find("  #", at) - at - 4),
                  point_flow_yaml(points[i], env.output_file, got.row));
        model::Measurement want = as_measurement(points[i], env.output_file, got.row);
        EXPECT_NEAR(got.time_s, want.time_s, want.time_s * 1e-9) << i;
        want.time_s = got.time_s;
        EXPECT_EQ(got, want) << "point " << i << ": " << point_flow_yaml(points[i]);
    }
}

TEST(CalibPointsYaml, ExtrasPowerAndNotesAreComments) {
    const std::string text = to_points_yaml(example_environment(), example_records());
    EXPECT_NE(text.find("#   launch eager_empty_kernel"), std::string::npos);
    EXPECT_NE(text.find("#   all_to_all nccl_all_to_all"), std::string::npos);
    EXPECT_NE(text.find("power mean 650 W, max 690 W, SM 1980 MHz, mem 2619 MHz, 3 samples"),
              std::string::npos);
    EXPECT_NE(text.find("#   nccl: skipped, only one GPU is visible"), std::string::npos);
}

TEST(CalibPointsYaml, NoPointsIsAnEmptyList) {
    const hwdb::PointSet set =
        hwdb::parse_point_set(to_points_yaml(example_environment(), {}), "empty.yaml");
    EXPECT_TRUE(set.points.empty());
}

TEST(CalibCsv, HasAHeaderAndOneRowPerRecord) {
    const auto records = example_records();
    const std::string csv = to_csv(records);
    EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')),
              records.size() + 1);
    EXPECT_EQ(csv.rfind("kind,op_class,op,model,m,n,k,", 0), 0U);
    EXPECT_NE(csv.find("point,gemm,qkv_proj,llama-3.1-70b,4096,1280,8192,"), std::string::npos);
    EXPECT_NE(csv.find("extra,launch,eager_empty_kernel,"), std::string::npos);
}

TEST(CalibSlug, LowercasesAndJoinsWithDashes) {
    EXPECT_EQ(slug("NVIDIA H200"), "nvidia-h200");
    EXPECT_EQ(slug("NVIDIA A100-SXM4-80GB"), "nvidia-a100-sxm4-80gb");
    EXPECT_EQ(slug("h200-sxm"), "h200-sxm");
    EXPECT_EQ(slug("  (x)  "), "x");
    EXPECT_EQ(slug("***"), "gpu");
}

std::vector<const char*> argv_of(std::initializer_list<const char*> args) {
    std::vector<const char*> v{"gpuplan-calib"};
    v.insert(v.end(), args.begin(), args.end());
    return v;
}

CalibOptions parse(std::initializer_list<const char*> args) {
    const auto v = argv_of(args);
    return parse_options(static_cast<int>(v.size()), v.data());
}

TEST(CalibOptionsTest, ParsesEveryFlag) {
    const CalibOptions o =
        parse({"--quick", "--out", "x.yaml", "--gpu-name=h200-sxm", "--device", "1", "--link",
               "nvlink4", "--only", "memory,gemm", "--max-seconds", "30"});
    EXPECT_TRUE(o.quick);
    EXPECT_EQ(o.out, "x.yaml");
    EXPECT_EQ(o.gpu_name, "h200-sxm");
    EXPECT_EQ(o.device, 1);
    EXPECT_EQ(o.link, "nvlink4");
    EXPECT_EQ(o.only, (std::vector<std::string>{"memory", "gemm"}));
    EXPECT_DOUBLE_EQ(o.max_seconds, 30.0);
    EXPECT_TRUE(wants(o, "gemm"));
    EXPECT_FALSE(wants(o, "nccl"));
    EXPECT_EQ(
        o.command,
        "gpuplan-calib --quick --out x.yaml --gpu-name=h200-sxm --device 1 --link nvlink4 --only "
        "memory,gemm --max-seconds 30");
}

TEST(CalibOptionsTest, DefaultsGiveTheIssueTimeLimits) {
    EXPECT_DOUBLE_EQ(time_limit_s(parse({})), 450.0);
    EXPECT_DOUBLE_EQ(time_limit_s(parse({"--quick"})), 110.0);
    EXPECT_TRUE(wants(parse({}), "nccl"));
}

TEST(CalibOptionsTest, RejectsBadFlagsWithAMessage) {
    auto message = [](std::initializer_list<const char*> args) {
        try {
            (void)parse(args);
        } catch (const UsageError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message({"--bogus"}), "unknown option '--bogus'; see gpuplan-calib --help");
    EXPECT_EQ(message({"--out"}), "option '--out' needs a value; see gpuplan-calib --help");
    EXPECT_EQ(message({"--device", "-1"}), "--device '-1': expected a whole number of at least 0");
    EXPECT_EQ(message({"--only", "gemm,warp"}), "--only: unknown section 'warp'; use a comma list "
                                                "of launch, memory, gemm, attention, host, nccl");
    EXPECT_EQ(message({"--max-seconds", "0"}),
              "--max-seconds '0': expected seconds, a number above 0 (e.g. 300)");
    EXPECT_EQ(message({"--quick=yes"}), "option '--quick' takes no value; write it alone");
}

} // namespace
} // namespace gpuplan::calib::bench
