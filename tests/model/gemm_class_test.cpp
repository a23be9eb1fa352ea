/// GEMM kernel classes (model/gemm_class.hpp): NVFP4, MXFP4 and MXFP8 take efficiency scales of
/// their own on the peak of the path they run on, and fall back to that path's scale (saying
/// so) in a profile without one. Expected values are the roofline arithmetic by hand.

#include "model/gemm_class.hpp"
#include "model/kernel_time.hpp"
#include "model/serving.hpp"
#include "model/step_cost.hpp"

#include "fixtures.hpp"

#include <gtest/gtest.h>

namespace {

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

// A Blackwell-like part: 2.25 PFLOPS bf16, 4.5 FP8, 9 FP4 (dense), 8 TB/s.
AcceleratorSpec blackwell() {
    AcceleratorSpec g = h100();
    g.name = "test-blackwell";
    g.dense.bf16 = FlopsPerSecond(2.25e15);
    g.dense.fp16 = FlopsPerSecond(2.25e15);
    g.dense.fp8 = FlopsPerSecond(4.5e15);
    g.dense.fp4 = FlopsPerSecond(9e15);
    g.memory_bandwidth = BytesPerSecond(8e12);
    return g;
}

// A flat GEMM curve (no row or size term) with distinct scales per class.
EfficiencyProfile classed() {
    EfficiencyProfile p = default_profile();
    p.gemm.e_max = 0.8;
    p.gemm.m_half = 0;
    p.gemm.nk_half = 0;
    p.gemm.dtype_scale[static_cast<std::size_t>(ComputeType::Fp8)] = 0.8;
    p.gemm.dtype_scale[static_cast<std::size_t>(ComputeType::Fp4)] = 0.5;
    p.gemm.class_scale = {0.7, 0.45, 0.6}; // mxfp8, nvfp4, mxfp4
    return p;
}

TEST(GemmClass, BlockScaledFormatsAreClassesOnTheirComputePath) {
    EXPECT_EQ(gemm_class_of(precision("nvfp4")), GemmClass::Nvfp4);
    EXPECT_EQ(gemm_class_of(precision("fp4")), GemmClass::Nvfp4); // "fp4" is NVFP4's alias
    EXPECT_EQ(gemm_class_of(precision("mxfp4")), GemmClass::Mxfp4);
    EXPECT_EQ(gemm_class_of(precision("mxfp8")), GemmClass::Mxfp8);
    EXPECT_EQ(gemm_class_of(precision("fp8")), GemmClass::Fp8);
    EXPECT_EQ(gemm_class_of(precision("bf16")), GemmClass::Bf16);
    EXPECT_EQ(gemm_class_of(precision("awq-int4")), GemmClass::Bf16); // weight-only: its path
    EXPECT_EQ(compute_path(GemmClass::Mxfp8), ComputeType::Fp8);
    EXPECT_EQ(compute_path(GemmClass::Nvfp4), ComputeType::Fp4);
    EXPECT_EQ(compute_path(GemmClass::Mxfp4), ComputeType::Fp4);
    EXPECT_EQ(compute_path(GemmClass::Int8), ComputeType::Int8);
    for (std::size_t i = 0; i < kGemmClassCount; ++i) {
        const auto c = static_cast<GemmClass>(i);
        EXPECT_EQ(find_gemm_class(to_string(c)), c);
    }
    EXPECT_FALSE(find_gemm_class("mxfp6").has_value());
    // MXFP8: 32 E4M3 elements and one E8M0 scale (OCP MX v1.0): 8 + 8/32 bits.
    const Precision mx8 = precision("mxfp8");
    EXPECT_DOUBLE_EQ(mx8.bits_per_element, 8.25);
    EXPECT_EQ(mx8.compute, ComputeType::Fp8);
    EXPECT_FALSE(mx8.weight_only);
}

TEST(GemmClass, Nvfp4AndMxfp4GemmsTakeTheirOwnScalesOnTheFp4Peak) {
    const EfficiencyProfile p = classed();
    const AcceleratorSpec g = blackwell();
    const double m = 8192, k = 8192, n = 8192;
    const double flops = 2 * m * k * n;
    for (auto [cls, scale, bits] :
         {std::tuple{GemmClass::Nvfp4, 0.45, 4.5}, std::tuple{GemmClass::Mxfp4, 0.6, 4.25},
          std::tuple{GemmClass::Mxfp8, 0.7, 8.25}}) {
        const auto peak = kernel_peak(g, cls);
        ASSERT_TRUE(peak.has_value());
        const double peak_si = cls == GemmClass::Mxfp8 ? 4.5e15 : 9e15;
        EXPECT_DOUBLE_EQ(peak->si(), peak_si);
        EXPECT_DOUBLE_EQ(p.gemm.at(m, k * n, cls), 0.8 * scale);
        const KernelTime t =
            gemm_kernel_time(m, k, n, bits / 8, 2.0, cls, *peak, g.memory_bandwidth, p);
        // Compute-bound: 1.1e12 FLOP at ~3-4 PFLOP/s is ~0.3 ms; the ~0.3 GB moved take ~45 µs.
        EXPECT_NEAR(t.compute.si(), flops / (peak_si * 0.8 * scale), 1e-15);
        EXPECT_DOUBLE_EQ(t.time.si(), t.compute.si());
    }
    // The two FP4 formats differ by their scales alone at this shape: 0.6 / 0.45.
    const auto peak = *kernel_peak(g, GemmClass::Fp4);
    const double nv =
        gemm_kernel_time(m, k, n, 4.5 / 8, 2, GemmClass::Nvfp4, peak, g.memory_bandwidth, p)
            .time.si();
    const double mx =
        gemm_kernel_time(m, k, n, 4.25 / 8, 2, GemmClass::Mxfp4, peak, g.memory_bandwidth, p)
            .time.si();
    EXPECT_NEAR(nv / mx, 0.6 / 0.45, 1e-12);
}

TEST(GemmClass, ProfileWithoutAClassScaleFallsBackToItsPathAndSaysSo) {
    EfficiencyProfile p = classed();
    p.gemm.class_scale = {};
    EXPECT_DOUBLE_EQ(p.gemm.scale(GemmClass::Nvfp4), 0.5);
    EXPECT_DOUBLE_EQ(p.gemm.scale(GemmClass::Mxfp4), 0.5);
    EXPECT_DOUBLE_EQ(p.gemm.scale(GemmClass::Mxfp8), 0.8);
    EXPECT_DOUBLE_EQ(p.gemm.at(8192, 1e8, GemmClass::Mxfp8), 0.8 * 0.8);
    EXPECT_FALSE(p.gemm.has_own_scale(GemmClass::Nvfp4));
    EXPECT_TRUE(p.gemm.has_own_scale(GemmClass::Fp4));
    EXPECT_EQ(gemm_scale_fallback_note(p.gemm, GemmClass::Nvfp4),
              "nvfp4 GEMMs take the fp4 scale (the profile has no nvfp4 scale of its own)");
    EXPECT_EQ(gemm_scale_fallback_note(p.gemm, GemmClass::Mxfp8),
              "mxfp8 GEMMs take the fp8 scale (the profile has no mxfp8 scale of its own)");
    EXPECT_FALSE(gemm_scale_fallback_note(p.gemm, GemmClass::Fp8).has_value());
    EXPECT_FALSE(gemm_scale_fallback_note(classed().gemm, GemmClass::Nvfp4).has_value());
    // Only one class set: the others still fall back.
    p.gemm.class_scale[1] = 0.45;
    EXPECT_DOUBLE_EQ(p.gemm.scale(GemmClass::Nvfp4), 0.45);
    EXPECT_DOUBLE_EQ(p.gemm.scale(GemmClass::Mxfp4), 0.5);
}

TEST(GemmClass, StepCostAndServingUseTheWeightFormatsClass) {
    Deployment d = deploy(llama3_8b(), blackwell());
    d.prec.weights = precision("nvfp4");
    const StepCostModel nv(d, classed());
    EXPECT_EQ(nv.gemm_class(), GemmClass::Nvfp4);
    EXPECT_EQ(nv.gemm_path(), GemmPath::Dense);
    EXPECT_DOUBLE_EQ(nv.peak_flops().si(), 9e15); // the FP4 path's peak
    d.prec.weights = precision("mxfp8");
    EXPECT_EQ(StepCostModel(d, classed()).gemm_class(), GemmClass::Mxfp8);
    EXPECT_DOUBLE_EQ(StepCostModel(d, classed()).peak_flops().si(), 4.5e15);
    // FP4 weights on a GPU without FP4 tensor cores run weight-only on the 16-bit path.
    Deployment h = deploy(llama3_8b(), h100());
    h.prec.weights = precision("nvfp4");
    EXPECT_EQ(StepCostModel(h, classed()).gemm_class(), GemmClass::Bf16);

    // The estimate's provenance says when the class runs on its path's scale.
    Workload w;
    w.input_tokens = 1024;
    w.output_tokens = 128;
    w.concurrency = 8;
    EfficiencyProfile fallback = classed();
    fallback.gemm.class_scale = {};
    d.prec.weights = precision("nvfp4");
    const std::string with = estimate_serving(d, w, fallback).provenance.description;
    EXPECT_NE(with.find("; nvfp4 GEMMs take the fp4 scale (the profile has no nvfp4 scale of its "
                        "own)"),
              std::string::npos)
        << with;
    EXPECT_EQ(estimate_serving(d, w, classed()).provenance.description,
              classed().provenance.description);
}

} // namespace
