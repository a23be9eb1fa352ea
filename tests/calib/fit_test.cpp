// Fitting: the linear building blocks and the joint fit recover known coefficients exactly
// from synthetic data made by the model itself; statistics and the hold-out rule.
#include "calib/fit.hpp"

#include "calib/predict.hpp"
#include "calib/stats.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

using namespace gpuplan;
using calib::Measurement;
using model::OpClass;

namespace {

model::AcceleratorSpec test_gpu() {
    model::AcceleratorSpec g;
    g.name = "test-gpu";
    g.architecture = "hopper";
    g.memory = Bytes(80e9);
    g.memory_bandwidth = BytesPerSecond(3.35e12);
    g.dense.bf16 = FlopsPerSecond(989e12);
    g.dense.fp16 = FlopsPerSecond(989e12);
    g.dense.fp8 = FlopsPerSecond(1979e12);
    return g;
}

calib::Hardware test_hw() {
    model::InterconnectSpec nvs;
    nvs.name = "test-nvswitch";
    nvs.kind = model::LinkKind::NvSwitch;
    nvs.bandwidth_per_direction = BytesPerSecond(450e9);
    nvs.latency = Seconds(2e-6);
    return calib::Hardware{test_gpu(), {nvs}};
}

// The coefficients the synthetic data are made with.
model::EfficiencyProfile truth() {
    model::EfficiencyProfile p = model::default_profile();
    p.gemm.e_max = 0.8;
    p.gemm.m_half = 64;
    p.gemm.nk_half = 2e6;
    p.gemm.dtype_scale[static_cast<std::size_t>(model::ComputeType::Fp8)] = 0.85;
    p.gemm_weight_only = {0.9, 12.0};
    p.gemm_grouped = {0.85, 150.0};
    p.memory = {0.9, 1024.0 * 1024};
    p.attention_prefill = {0.75, 600};
    p.attention_decode = {0.92, 3.0 * 1024 * 1024};
    p.comm.bandwidth = {0.7, 256.0 * 1024};
    p.comm.collective_overhead = Seconds(5e-6);
    return p;
}

constexpr double kHarnessOffset = 20e-6;

// Points on a grid of each class, timed by the truth profile (host-timed ones plus the offset).
std::vector<Measurement> synthetic(const calib::Hardware& hw) {
    std::vector<Measurement> pts;
    auto add = [&](Measurement m) {
        m.gpu = "test-gpu";
        m.source = m.timing == model::Timing::Host ? "harness" : "synthetic";
        m.time_s = 1.0; // replaced below
        const auto p = calib::prepare(m, hw);
        EXPECT_TRUE(p.has_value());
        m.time_s = calib::predict(*p, truth(), kHarnessOffset);
        pts.push_back(m);
    };
    for (const char* dtype : {"bf16", "fp8", "awq-int4"}) {
        for (double m : {1.0, 8.0, 32.0, 128.0, 512.0, 2048.0, 8192.0}) {
            for (auto [k, n] : {std::pair{512.0, 512.0},
                                {1024.0, 2048.0},
                                {4096.0, 4096.0},
                                {4096.0, 14336.0},
                                {8192.0, 28672.0}}) {
                Measurement g;
                g.op_class = OpClass::Gemm;
                g.op = "gemm";
                g.m = m;
                g.k = k;
                g.n = n;
                g.dtype = dtype;
                add(g);
            }
        }
    }
    // Grouped MoE GEMMs: Mixtral-like (8 experts, top-2) and fine-grained (64, top-8) layers.
    for (const char* dtype : {"bf16", "fp8"}) {
        for (double tokens : {1.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0}) {
            for (auto [experts, top_k, ffn] : {std::tuple{8, 2, 14336.0}, {64, 8, 1536.0}}) {
                Measurement g;
                g.op_class = OpClass::GroupedGemm;
                g.op = "fused_moe";
                g.m = tokens;
                g.k = 4096;
                g.n = ffn;
                g.experts = experts;
                g.top_k = top_k;
                g.dtype = dtype;
                add(g);
            }
        }
    }
    for (int e = 10; e <= 30; ++e) {
        for (auto timing : {model::Timing::Kernel, model::Timing::Host}) {
            Measurement s;
            s.op_class = OpClass::MemoryBound;
            s.op = timing == model::Timing::Host ? "copy" : "stream";
            s.bytes = std::ldexp(1.0, e) * 1.5;
            s.timing = timing;
            add(s);
        }
    }
    for (double seq : {128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0}) {
        for (int batch : {1, 2, 4}) {
            Measurement a;
            a.op_class = OpClass::AttentionPrefill;
            a.batch = batch;
            a.tokens = seq;
            a.heads = 32;
            a.kv_heads = 8;
            a.head_dim = 128;
            add(a);
        }
    }
    for (int batch : {1, 8, 64, 256}) {
        for (double ctx : {256.0, 2048.0, 16384.0}) {
            Measurement a;
            a.op_class = OpClass::AttentionDecode;
            a.batch = batch;
            a.tokens = 1;
            a.context = ctx;
            a.heads = 32;
            a.kv_heads = 8;
            a.head_dim = 128;
            add(a);
        }
    }
    for (int e = 11; e <= 26; ++e) {
        for (int n : {2, 4, 8}) {
            Measurement c;
            c.op_class = OpClass::AllReduce;
            c.bytes = std::ldexp(1.0, e);
            c.tp = n;
            c.link = "test-nvswitch";
            add(c);
        }
        Measurement s;
        s.op_class = OpClass::SendRecv;
        s.bytes = std::ldexp(1.0, e) * 3;
        s.tp = 2;
        s.link = "test-nvswitch";
        add(s);
    }
    return pts;
}

void expect_rel(double got, double want, double tol, const char* what) {
    EXPECT_NEAR(got / want, 1.0, tol) << what << ": got " << got << ", want " << want;
}

} // namespace

TEST(FitSaturating, RecoversMaxAndHalfExactly) {
    const model::SaturatingCurve c{0.83, 5000};
    std::vector<calib::CurvePoint> pts;
    for (double x : {100.0, 1000.0, 1e4, 1e5, 1e6}) {
        const double ideal = x / 1e12;
        pts.push_back({x, ideal, ideal / c.at(x)});
    }
    const auto fit = calib::fit_saturating(pts);
    ASSERT_TRUE(fit.has_value());
    EXPECT_NEAR(fit->max, 0.83, 1e-12);
    EXPECT_NEAR(fit->half, 5000, 1e-6);
}

TEST(FitSaturating, ConstantEfficiencyGivesZeroHalfAndTooFewPointsNothing) {
    std::vector<calib::CurvePoint> pts;
    for (double x : {1.0, 10.0, 100.0}) {
        pts.push_back({x, 1.0, 1.0 / 0.5});
    }
    const auto fit = calib::fit_saturating(pts);
    ASSERT_TRUE(fit.has_value());
    EXPECT_NEAR(fit->max, 0.5, 1e-12);
    EXPECT_NEAR(fit->half, 0.0, 1e-9);
    EXPECT_FALSE(calib::fit_saturating({pts[0]}).has_value());
}

TEST(FitAlphaBeta, RecoversLatencyAndBandwidthExactly) {
    std::vector<double> bytes, times;
    for (double b : {1e3, 1e5, 1e7, 1e9}) {
        bytes.push_back(b);
        times.push_back(12e-6 + b / 150e9);
    }
    const auto ab = calib::fit_alpha_beta(bytes, times);
    ASSERT_TRUE(ab.has_value());
    EXPECT_NEAR(ab->alpha_s, 12e-6, 1e-15);
    EXPECT_NEAR(ab->bandwidth / 150e9, 1.0, 1e-9);
    EXPECT_NEAR(ab->mape, 0.0, 1e-9);
}

TEST(ErrorStats, MeanMedianNearestRankP90AndWorst) {
    const auto s = calib::error_stats({0.1, 0.4, 0.2, 0.3, 0.0, 0.5, 0.6, 0.7, 0.8, 0.9});
    EXPECT_EQ(s.n, 10);
    EXPECT_NEAR(s.mape, 0.45, 1e-12);
    EXPECT_NEAR(s.median, 0.4, 1e-12); // the 5th of 10 sorted values (nearest rank)
    EXPECT_NEAR(s.p90, 0.8, 1e-12);    // the 9th of 10 sorted values
    EXPECT_NEAR(s.max, 0.9, 1e-12);
    EXPECT_EQ(s.worst, 9);
    EXPECT_EQ(calib::error_stats({}).n, 0);
    const auto w = calib::weighted_error_stats({0.1, 0.5}, {3.0, 1.0});
    EXPECT_NEAR(w.mape, (0.3 + 0.5) / 4.0, 1e-12);
    EXPECT_NEAR(w.median, 0.1, 1e-12);
    EXPECT_NEAR(w.p90, 0.5, 1e-12);
}

// calib's one percentile rule, nearest rank (the inverted empirical CDF): the smallest value
// whose cumulative weight reaches q of the total; with unit weights the ceil(q n)-th smallest.
TEST(ErrorStats, NearestRankPercentile) {
    EXPECT_DOUBLE_EQ(calib::nearest_rank({}, 0.9), 0.0);
    EXPECT_DOUBLE_EQ(calib::nearest_rank({7.0}, 0.9), 7.0);
    // n = 3: q = 0.5 -> rank ceil(1.5) = 2; q = 0.9 -> rank ceil(2.7) = 3.
    EXPECT_DOUBLE_EQ(calib::nearest_rank({5.0, 1.0, 3.0}, 0.5), 3.0);
    EXPECT_DOUBLE_EQ(calib::nearest_rank({5.0, 1.0, 3.0}, 0.9), 5.0);
    // n = 4: q = 0.5 -> rank 2 (the lower middle value, not the mean of the two).
    EXPECT_DOUBLE_EQ(calib::nearest_rank({4.0, 1.0, 3.0, 2.0}, 0.5), 2.0);
    // Weights 3 and 1: cumulative 3/4 of the total at 0.1 reaches 0.5 but not 0.9.
    EXPECT_DOUBLE_EQ(calib::weighted_nearest_rank({0.5, 0.1}, {1.0, 3.0}, 0.5), 0.1);
    EXPECT_DOUBLE_EQ(calib::weighted_nearest_rank({0.5, 0.1}, {1.0, 3.0}, 0.9), 0.5);
    // Equal weights of any size give the unweighted figure.
    EXPECT_DOUBLE_EQ(calib::weighted_nearest_rank({5.0, 1.0, 3.0}, {2.5, 2.5, 2.5}, 0.5), 3.0);
}

TEST(HoldOut, IsStableAndHoldsOutAboutOneInFive) {
    Measurement m;
    m.gpu = "h100-sxm";
    m.op = "mlp_up_proj";
    m.m = 4096;
    m.k = 4096;
    m.n = 22016;
    m.dtype = "fp16";
    // A fixed value: the split must not change between runs, compilers or machines.
    EXPECT_EQ(calib::shape_hash(m), calib::shape_hash(m));
    EXPECT_EQ(calib::shape_hash(m) % 5, 0u);
    Measurement timed = m;
    timed.time_s = 123;
    timed.source_file = "elsewhere.csv";
    timed.row = 7;
    EXPECT_EQ(calib::is_held_out(timed, 5), calib::is_held_out(m, 5)); // shape only
    int held = 0;
    for (int i = 1; i <= 5000; ++i) {
        m.m = i;
        held += calib::is_held_out(m, 5) ? 1 : 0;
    }
    EXPECT_NEAR(held / 5000.0, 0.2, 0.02);
    EXPECT_FALSE(calib::is_held_out(m, 1));
}

TEST(FitProfile, RecoversKnownCoefficientsFromSyntheticData) {
    const calib::Hardware hw = test_hw();
    const auto pts = synthetic(hw);
    calib::FitOptions opt;
    opt.prior_weight = 0.0;
    opt.max_iterations = 500;
    const calib::FitReport rep = calib::fit_profile(pts, hw, model::default_profile(), opt);
    const auto& p = rep.profile;
    const auto t = truth();
    const double tol = 1e-4;
    expect_rel(p.gemm.e_max, t.gemm.e_max, tol, "gemm.e_max");
    expect_rel(p.gemm.m_half, t.gemm.m_half, tol, "gemm.m_half");
    expect_rel(p.gemm.nk_half, t.gemm.nk_half, tol, "gemm.nk_half");
    expect_rel(p.gemm.dtype_scale[static_cast<std::size_t>(model::ComputeType::Fp8)], 0.85, tol,
               "fp8 scale");
    expect_rel(p.gemm_weight_only.max, t.gemm_weight_only.max, tol, "gemm_weight_only.max");
    expect_rel(p.gemm_weight_only.half, t.gemm_weight_only.half, tol, "gemm_weight_only.half");
    expect_rel(p.gemm_grouped.max, t.gemm_grouped.max, tol, "gemm_grouped.max");
    expect_rel(p.gemm_grouped.half, t.gemm_grouped.half, tol, "gemm_grouped.half");
    expect_rel(p.memory.max, t.memory.max, tol, "memory.max");
    expect_rel(p.memory.half, t.memory.half, tol, "memory.half");
    expect_rel(p.attention_prefill.max, t.attention_prefill.max, tol, "prefill.max");
    expect_rel(p.attention_prefill.half, t.attention_prefill.half, tol, "prefill.half");
    expect_rel(p.attention_decode.max, t.attention_decode.max, tol, "decode.max");
    expect_rel(p.attention_decode.half, t.attention_decode.half, tol, "decode.half");
    expect_rel(p.comm.bandwidth.max, t.comm.bandwidth.max, tol, "comm.max");
    expect_rel(p.comm.bandwidth.half, t.comm.bandwidth.half, tol, "comm.half");
    expect_rel(p.comm.collective_overhead.si(), t.comm.collective_overhead.si(), tol,
               "comm.overhead");
    ASSERT_EQ(rep.offsets.size(), 1u);
    EXPECT_EQ(rep.offsets[0].source, "harness");
    expect_rel(rep.offsets[0].offset.si(), kHarnessOffset, tol, "harness offset");
    EXPECT_LT(rep.held_out.mape, 1e-4);
    EXPECT_GT(rep.held_out.n, 0);
    EXPECT_EQ(rep.skipped, 0);
    for (const auto& c : rep.classes) {
        EXPECT_TRUE(c.fitted) << model::to_string(c.op_class);
    }
}

TEST(FitProfile, KeepsTheBaseCurveOfAClassWithTooFewPoints) {
    const calib::Hardware hw = test_hw();
    std::vector<Measurement> pts;
    for (const auto& m : synthetic(hw)) {
        if (m.op_class != OpClass::AttentionPrefill) {
            pts.push_back(m);
        }
    }
    const auto base = model::default_profile();
    const auto rep = calib::fit_profile(pts, hw, base, {});
    EXPECT_EQ(rep.profile.attention_prefill, base.attention_prefill);
    bool noted = false;
    for (const auto& c : rep.classes) {
        EXPECT_NE(c.op_class, OpClass::AttentionPrefill);
    }
    for (const auto& n : rep.notes) {
        noted = noted || n.find("attention_prefill") != std::string::npos;
    }
    EXPECT_FALSE(noted); // no prefill points at all: nothing to note, nothing reported
}

TEST(FitProfile, ThrowsWhenNoPointOfTheGpuCanBePredicted) {
    Measurement m;
    m.gpu = "other-gpu";
    m.op_class = OpClass::MemoryBound;
    m.bytes = 1e6;
    m.time_s = 1e-5;
    EXPECT_THROW((void)calib::fit_profile({m}, test_hw(), model::default_profile(), {}),
                 InputError);
}

// A fused-MoE point is the step cost's routed-expert kernel: 4 tokens to top-2 of 8 experts are
// 8 rows over 8 × (1 − 0.75^4) = 5.46875 touched experts (model::expected_experts_touched).
TEST(Predict, GroupedPointIsTheStepCostsRoutedExpertKernel) {
    const calib::Hardware hw = test_hw();
    Measurement g;
    g.op_class = OpClass::GroupedGemm;
    g.gpu = "test-gpu";
    g.m = 4;
    g.k = 4096;
    g.n = 14336;
    g.experts = 8;
    g.top_k = 2;
    g.time_s = 1e-4;
    const auto p = calib::prepare(g, hw);
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->path, model::GemmPath::Grouped);
    EXPECT_DOUBLE_EQ(p->m, 8.0);
    EXPECT_DOUBLE_EQ(p->groups, 5.46875);
    const auto prof = model::default_profile();
    // Memory-bound: 5.46875 experts × 3 × 4096 × 14336 × 2 bytes plus 8 × (2 × 4096 + 6 × 14336)
    // × 2 of activations at 3.35 TB/s × memory.at(bytes).
    const double bytes = 5.46875 * 3 * 4096 * 14336 * 2.0 + 8 * (2 * 4096 + 6 * 14336) * 2.0;
    EXPECT_NEAR(calib::predict_kernel(*p, prof), bytes / (3.35e12 * prof.memory.at(bytes)), 1e-12);
    g.top_k = 9; // more than the experts
    EXPECT_FALSE(calib::prepare(g, hw).has_value());
}

TEST(Evaluate, ReportsPerClassAndSkipsUnpredictablePoints) {
    const calib::Hardware hw = test_hw();
    auto pts = synthetic(hw);
    Measurement unknown_link;
    unknown_link.gpu = "test-gpu";
    unknown_link.op_class = OpClass::AllReduce;
    unknown_link.bytes = 1e6;
    unknown_link.tp = 16;
    unknown_link.time_s = 1e-4;
    pts.push_back(unknown_link);
    const auto ev = calib::evaluate(pts, hw, truth(), {{"harness", Seconds(kHarnessOffset), 1}},
                                    calib::Subset::All);
    EXPECT_EQ(ev.skipped, 1);
    EXPECT_LT(ev.all.max, 1e-9);
    EXPECT_EQ(ev.classes.size(), 7u); // every class, grouped GEMMs included
    const auto biased =
        calib::evaluate(pts, hw, model::default_profile(), {}, calib::Subset::HeldOut);
    EXPECT_GT(biased.all.mape, 0.01);
    EXPECT_LT(biased.all.n, ev.all.n);
}

// GEMMs at one row count (8192 x 8192 x K sweeps, as in triton-cublas-bench) say nothing about
// m_half: the fit keeps the base's and says why; the rest of the curve is still fitted exactly.
TEST(FitProfile, KeepsTheBaseMHalfWhenTheGemmsHaveOneRowCount) {
    const calib::Hardware hw = test_hw();
    const auto t = truth();
    std::vector<Measurement> pts;
    for (double k : {64.0, 96.0, 128.0, 192.0, 256.0, 384.0, 512.0, 768.0, 1024.0, 2048.0, 4096.0,
                     8192.0, 16384.0, 32768.0, 65536.0, 131072.0}) {
        for (const char* dtype : {"bf16", "fp8"}) {
            Measurement g;
            g.op_class = OpClass::Gemm;
            g.op = "gemm";
            g.m = 8192;
            g.n = 8192;
            g.k = k;
            g.dtype = dtype;
            g.gpu = "test-gpu";
            g.time_s = 1.0;
            auto base_truth = t;
            base_truth.gemm.m_half = model::default_profile().gemm.m_half;
            g.time_s = calib::predict(*calib::prepare(g, hw), base_truth, 0.0);
            pts.push_back(g);
        }
    }
    calib::FitOptions opt;
    opt.prior_weight = 0.0;
    opt.max_iterations = 500;
    const auto base = model::default_profile();
    const auto rep = calib::fit_profile(pts, hw, base, opt);
    EXPECT_EQ(rep.profile.gemm.m_half, base.gemm.m_half);
    expect_rel(rep.profile.gemm.e_max, t.gemm.e_max, 1e-4, "gemm.e_max");
    expect_rel(rep.profile.gemm.nk_half, t.gemm.nk_half, 1e-4, "gemm.nk_half");
    bool noted = false;
    for (const auto& n : rep.notes) {
        noted = noted || n == "gemm: gemm.m_half kept at the base profile's value (fewer than 3 "
                              "row counts M in the training points)";
    }
    EXPECT_TRUE(noted);
}

// FitOptions::keep holds a parameter at the base profile's value even when the data vary in it.
TEST(FitProfile, KeepsTheParametersItIsToldToKeep) {
    const calib::Hardware hw = test_hw();
    calib::FitOptions opt;
    opt.keep = {"gemm.m_half"};
    auto base = model::default_profile();
    base.gemm.m_half = 33.0;
    const auto rep = calib::fit_profile(synthetic(hw), hw, base, opt);
    EXPECT_EQ(rep.profile.gemm.m_half, 33.0);
    EXPECT_NE(rep.profile.gemm.nk_half, base.gemm.nk_half); // still fitted
    bool noted = false;
    for (const auto& n : rep.notes) {
        noted = noted || n == "gemm: gemm.m_half kept at the base profile's value (--keep)";
    }
    EXPECT_TRUE(noted);
    EXPECT_EQ(calib::keepable_parameters(),
              (std::vector<std::string>{"gemm.m_half", "gemm.nk_half"}));
}

// AMD Infinity Fabric is a scale-up fabric: all-reduces over it are fitted, like NVLink's.
TEST(FitProfile, FitsAllReducesOverInfinityFabric) {
    model::InterconnectSpec xgmi;
    xgmi.name = "test-xgmi";
    xgmi.kind = model::LinkKind::InfinityFabric;
    xgmi.bandwidth_per_direction = BytesPerSecond(448e9);
    xgmi.latency = Seconds(2e-6);
    const calib::Hardware hw{test_gpu(), {xgmi}};
    std::vector<Measurement> pts;
    for (int e = 10; e <= 33; ++e) {
        Measurement m;
        m.op_class = OpClass::AllReduce;
        m.op = "all_reduce";
        m.bytes = std::exp2(e);
        m.tp = 8;
        m.link = "test-xgmi";
        m.gpu = "test-gpu";
        m.time_s = 1.0;
        m.time_s = calib::predict(*calib::prepare(m, hw), truth(), 0.0);
        pts.push_back(m);
    }
    const auto rep = calib::fit_profile(pts, hw, model::default_profile(), {});
    ASSERT_EQ(rep.classes.size(), 1u);
    EXPECT_TRUE(rep.classes[0].fitted);
    EXPECT_LT(rep.held_out.mape, 0.01);
}

// Block-scaled kernel classes (model/gemm_class.hpp): synthetic GEMMs of bf16, fp8 and each of
// mxfp8, nvfp4 and mxfp4, timed with a scale per class; the fit recovers every class's scale
// from its own points, and a class without points keeps following its compute path.
TEST(FitProfile, RecoversEachKernelClassScaleFromItsOwnPoints) {
    calib::Hardware hw = test_hw();
    hw.gpu.dense.fp4 = FlopsPerSecond(3958e12);
    model::EfficiencyProfile t = model::default_profile();
    t.gemm.e_max = 0.8;
    t.gemm.m_half = 64;
    t.gemm.nk_half = 2e6;
    t.gemm.dtype_scale[static_cast<std::size_t>(model::ComputeType::Fp8)] = 0.85;
    t.gemm.class_scale = {0.7, 0.45, 0.55}; // mxfp8, nvfp4, mxfp4
    std::vector<Measurement> pts;
    for (const char* dtype : {"bf16", "fp8", "mxfp8", "nvfp4", "mxfp4"}) {
        for (double m : {16.0, 128.0, 512.0, 2048.0, 8192.0}) {
            for (auto [k, n] : {std::pair{1024.0, 2048.0},
                                {4096.0, 4096.0},
                                {4096.0, 14336.0},
                                {8192.0, 28672.0}}) {
                Measurement g;
                g.op_class = OpClass::Gemm;
                g.op = std::string("gemm_") + dtype;
                g.m = m;
                g.k = k;
                g.n = n;
                g.dtype = dtype;
                g.gpu = "test-gpu";
                g.source = "synthetic";
                g.time_s = 1.0;
                const auto p = calib::prepare(g, hw);
                ASSERT_TRUE(p.has_value()) << dtype;
                g.time_s = calib::predict(*p, t, 0.0);
                pts.push_back(g);
            }
        }
    }
    calib::FitOptions opt;
    opt.prior_weight = 0.0;
    opt.max_iterations = 500;
    const calib::FitReport rep = calib::fit_profile(pts, hw, model::default_profile(), opt);
    const auto& g = rep.profile.gemm;
    const double tol = 1e-4;
    expect_rel(g.e_max, 0.8, tol, "gemm.e_max");
    expect_rel(g.scale(model::GemmClass::Fp8), 0.85, tol, "fp8 scale");
    ASSERT_TRUE(g.has_own_scale(model::GemmClass::Mxfp8));
    ASSERT_TRUE(g.has_own_scale(model::GemmClass::Nvfp4));
    ASSERT_TRUE(g.has_own_scale(model::GemmClass::Mxfp4));
    expect_rel(g.scale(model::GemmClass::Mxfp8), 0.7, tol, "mxfp8 scale");
    expect_rel(g.scale(model::GemmClass::Nvfp4), 0.45, tol, "nvfp4 scale");
    expect_rel(g.scale(model::GemmClass::Mxfp4), 0.55, tol, "mxfp4 scale");
    // The FP4 path has no points of its own: its scale stays the base's, and the fit says so.
    EXPECT_DOUBLE_EQ(g.dtype_scale[static_cast<std::size_t>(model::ComputeType::Fp4)],
                     model::default_profile().gemm.dtype_scale[6]);
    bool noted = false;
    for (const auto& n : rep.notes) {
        noted = noted || n.find("no fp4 points of its own") != std::string::npos;
    }
    EXPECT_TRUE(noted);
    // One error row per kernel class, each fitted on its own points.
    ASSERT_EQ(rep.kernel_classes.size(), 5u);
    for (const auto& c : rep.kernel_classes) {
        ASSERT_TRUE(c.kernel_class.has_value());
        EXPECT_TRUE(c.fitted) << model::to_string(*c.kernel_class);
        EXPECT_LT(c.held_out.mape + c.train.mape, 1e-4) << model::to_string(*c.kernel_class);
        EXPECT_EQ(c.train.n + c.held_out.n, 20);
    }

    // Without nvfp4 points the class keeps no scale of its own: it runs on the fp4 path's.
    std::vector<Measurement> no_nvfp4;
    for (const auto& m : pts) {
        if (m.dtype != "nvfp4") {
            no_nvfp4.push_back(m);
        }
    }
    const auto rep2 = calib::fit_profile(no_nvfp4, hw, model::default_profile(), opt);
    EXPECT_FALSE(rep2.profile.gemm.has_own_scale(model::GemmClass::Nvfp4));
    expect_rel(rep2.profile.gemm.scale(model::GemmClass::Mxfp4), 0.55, tol, "mxfp4 scale");
}
