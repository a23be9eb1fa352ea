/// Kernel times of model/kernel_time.hpp for weight-only (mixed-input) GEMMs against hand
/// arithmetic: memory-bound skinny products, the published Marlin speedups over fp16, and the
/// large-M limit where the kernel costs what dequantize-then-GEMM costs.

#include "model/kernel_time.hpp"

#include <gtest/gtest.h>

#include <tuple>

namespace {

using namespace gpuplan;
using namespace gpuplan::model;

// AWQ int4 with group 128: 4 bits plus a 16-bit scale and a 4-bit zero per 128 weights.
constexpr double kAwqBytes = (4.0 + 20.0 / 128.0) / 8.0;

// The gemm and memory curves of hwdb/profiles/a100-sxm-80gb.yaml (fitted on cuBLAS fp16 GEMMs).
EfficiencyProfile a100_fit() {
    EfficiencyProfile p = default_profile();
    p.gemm.e_max = 0.7594;
    p.gemm.m_half = 110.232;
    p.gemm.nk_half = 526443;
    p.memory = {0.653423, 2.90222 * 1024 * 1024};
    return p;
}

TEST(KernelTime, WeightOnlyEfficiencyReplacesOnlyTheRowFactor) {
    const EfficiencyProfile p = a100_fit();
    const double nk = 4096.0 * 14336.0;
    const double nk_term = nk / (nk + 526443.0);
    // rows.at(m) = 0.9 × m / (m + 8): half of 0.9 at 8 rows.
    EXPECT_NEAR(weight_only_gemm_efficiency(p.gemm, p.gemm_weight_only, 8, nk, ComputeType::Bf16),
                0.7594 * 0.9 * 0.5 * nk_term, 1e-12);
    EXPECT_NEAR(gemm_efficiency(1, nk, ComputeType::Bf16, GemmPath::WeightOnly, p),
                0.7594 * 0.9 / 9.0 * nk_term, 1e-12);
    EXPECT_NEAR(gemm_efficiency(1, nk, ComputeType::Bf16, GemmPath::Dense, p),
                0.7594 / 111.232 * nk_term, 1e-12);
    EXPECT_EQ(weight_only_gemm_efficiency(p.gemm, p.gemm_weight_only, 0, nk, ComputeType::Bf16),
              0.0);
}

TEST(KernelTime, Int4DecodeGemmIsMemoryBoundOnTheWeightOnlyCurve) {
    // Llama-3-8B gate/up projection at batch 1 on an A100 (312 TFLOPS bf16, 2.039 TB/s).
    const EfficiencyProfile p = a100_fit();
    const FlopsPerSecond peak(312e12);
    const BytesPerSecond bw(2.039e12);
    const double m = 1, k = 4096, n = 2 * 14336;
    const double bytes = k * n * kAwqBytes + (m * k + m * n) * 2.0;
    const double memory = bytes / (2.039e12 * p.memory.at(bytes));
    const double nk_term = k * n / (k * n + 526443.0);
    const double wo_compute = 2 * m * k * n / (312e12 * 0.7594 * (0.9 / 9.0) * nk_term);
    const double dense_compute = 2 * m * k * n / (312e12 * 0.7594 * (1.0 / 111.232) * nk_term);
    // The bf16 curve applied to the int4 kernel is the false compute floor of issue 19:
    ASSERT_GT(dense_compute, memory);
    ASSERT_LT(wo_compute, memory);

    const KernelTime wo = gemm_kernel_time(m, k, n, kAwqBytes, 2.0, ComputeType::Bf16, peak, bw, p,
                                           GemmPath::WeightOnly);
    EXPECT_NEAR(wo.compute.si(), wo_compute, 1e-15);
    EXPECT_NEAR(wo.memory.si(), memory, 1e-15);
    EXPECT_NEAR(wo.time.si(), memory, 1e-15);
    // Never faster than streaming the packed weights at the full datasheet bandwidth.
    EXPECT_GE(wo.time.si(), k * n * kAwqBytes / 2.039e12);
}

TEST(KernelTime, WeightOnlyKeepsMarlinsPublishedSpeedupsOnTheDefaultProfile) {
    // Frantar et al. 2024 (arXiv:2408.11743; IST-DASLab/marlin README): a 72k x 18k layer at
    // groupsize 128 on an A10 (125 TFLOPS fp16 dense, 600 GB/s) runs at the ideal 3.87x of fp16
    // (4.125 bits per weight) up to batch 16-32, with gradually smaller speedups at 64-128.
    const EfficiencyProfile p = default_profile();
    const FlopsPerSecond peak(125e12);
    const BytesPerSecond bw(600e9);
    const double k = 18432, n = 73728;
    const double marlin_bytes = 4.125 / 8.0;
    auto speedup = [&](double m) {
        const KernelTime fp16 = gemm_kernel_time(m, k, n, 2.0, 2.0, ComputeType::Fp16, peak, bw, p);
        const KernelTime int4 = gemm_kernel_time(m, k, n, marlin_bytes, 2.0, ComputeType::Fp16,
                                                 peak, bw, p, GemmPath::WeightOnly);
        return fp16.time / int4.time;
    };
    // Ideal: the ratio of the bytes moved (weights plus the same activations).
    auto ideal = [&](double m) {
        return (k * n * 2.0 + m * (k + n) * 2.0) / (k * n * marlin_bytes + m * (k + n) * 2.0);
    };
    for (double m : {1.0, 8.0, 16.0, 32.0}) {
        EXPECT_NEAR(speedup(m), ideal(m), 0.05 * ideal(m)) << "batch " << m;
        EXPECT_GT(ideal(m), 3.8) << "batch " << m;
    }
    EXPECT_LT(speedup(64), 0.95 * ideal(64));
    EXPECT_LT(speedup(128), speedup(64));
    EXPECT_GT(speedup(128), 1.0);
}

TEST(KernelTime, LargeWeightOnlyGemmApproachesDequantizeThenGemm) {
    // At prefill sizes the fused kernel runs the 16-bit MMA at 0.9 of the dense plateau; once
    // that costs more than dequantizing the weights (read int4, write bf16) and running the
    // bf16 GEMM, the weight-only GEMM costs exactly the latter.
    const EfficiencyProfile p = a100_fit();
    const FlopsPerSecond peak(312e12);
    const BytesPerSecond bw(2.039e12);
    const double k = 4096, n = 14336;
    auto at = [&](double m) {
        const KernelTime wo = gemm_kernel_time(m, k, n, kAwqBytes, 2.0, ComputeType::Bf16, peak, bw,
                                               p, GemmPath::WeightOnly);
        const KernelTime dense =
            gemm_kernel_time(m, k, n, 2.0, 2.0, ComputeType::Bf16, peak, bw, p);
        const double dq = k * n * (kAwqBytes + 2.0);
        const double dequant = dq / (2.039e12 * p.memory.at(dq));
        return std::tuple{wo, dense, dequant};
    };
    // M = 1024: fused, compute-bound at (m + 8) / (0.9 (m + m_half)) of the dense compute,
    // which is below dense + dequantization.
    {
        const auto [wo, dense, dequant] = at(1024);
        EXPECT_EQ(wo.time, wo.compute);
        EXPECT_NEAR(wo.compute / dense.compute, (1024.0 + 8.0) / (0.9 * (1024.0 + 110.232)), 1e-9);
        EXPECT_LT(wo.time.si(), dense.time.si() + dequant);
    }
    // M >= 16384: dequantize-then-GEMM, and its share of dequantization vanishes with M.
    double previous = 1.1;
    for (double m : {16384.0, 65536.0}) {
        const auto [wo, dense, dequant] = at(m);
        EXPECT_NEAR(wo.time.si(), dense.time.si() + dequant, 1e-12 * wo.time.si());
        EXPECT_LT(wo.time / dense.time, previous);
        previous = wo.time / dense.time;
    }
    EXPECT_LT(previous, 1.01);
}

} // namespace

namespace grouped {

using namespace gpuplan;
using namespace gpuplan::model;

TEST(KernelTime, GroupedEfficiencyReplacesOnlyTheRowFactor) {
    // Default profile: plateau 0.70 (bf16 scale 1, fp8 0.9), no matrix-size term, dense rows
    // M / (M + 16), grouped rows 1.0 × M / (M + 100) (efficiency.cpp).
    const EfficiencyProfile p = default_profile();
    const double nk = 4096.0 * 14336.0;
    EXPECT_NEAR(gemm_efficiency(100, nk, ComputeType::Bf16, GemmPath::Grouped, p), 0.70 * 0.5,
                1e-12);
    EXPECT_NEAR(gemm_efficiency(1, nk, ComputeType::Bf16, GemmPath::Grouped, p), 0.70 / 101.0,
                1e-12);
    EXPECT_NEAR(gemm_efficiency(1, nk, ComputeType::Bf16, GemmPath::Dense, p), 0.70 / 17.0, 1e-12);
    EXPECT_NEAR(grouped_gemm_efficiency(p.gemm, p.gemm_grouped, 256, nk, ComputeType::Fp8),
                0.70 * 0.9 * 256.0 / 356.0, 1e-12);
    EXPECT_EQ(grouped_gemm_efficiency(p.gemm, p.gemm_grouped, 0, nk, ComputeType::Bf16), 0.0);
    // At few tokens per expert the grouped kernel runs far below a dense GEMM of the same M:
    // (1/101) / (1/17) at one row.
    EXPECT_NEAR(gemm_efficiency(1, nk, ComputeType::Bf16, GemmPath::Grouped, p) /
                    gemm_efficiency(1, nk, ComputeType::Bf16, GemmPath::Dense, p),
                17.0 / 101.0, 1e-12);
}

TEST(KernelTime, RoutedExpertsKernelIsOneGroupedRoofline) {
    // 64 rows over 4 experts of 3 matrices 1024 x 2048, bf16, on 100 TFLOPS and 1 TB/s with a
    // flat 0.8 memory curve: m = 16 rows per expert, eff = 0.7 × 16 / 116.
    EfficiencyProfile p = default_profile();
    p.memory = {0.8, 0.0};
    const double rows = 64, groups = 4, h = 1024, f = 2048;
    const KernelTime kt = routed_experts_kernel_time(
        rows, groups, h, f, 3, 2.0, 2.0, ComputeType::Bf16, GemmPath::Grouped,
        FlopsPerSecond(100e12), BytesPerSecond(1e12), p);
    const double flops = 2.0 * rows * 3 * h * f;
    const double bytes = groups * 3 * h * f * 2.0 + rows * (2 * h + 6 * f) * 2.0;
    EXPECT_NEAR(kt.compute.si(), flops / (100e12 * 0.7 * 16.0 / 116.0), 1e-15);
    EXPECT_NEAR(kt.memory.si(), bytes / (1e12 * 0.8), 1e-15);
    EXPECT_EQ(kt.time, std::max(kt.compute, kt.memory));
    // One grouped GEMM (mats = 1): activations are its input and output, rows × (h + f).
    const KernelTime one = routed_experts_kernel_time(
        rows, groups, h, f, 1, 2.0, 2.0, ComputeType::Bf16, GemmPath::Grouped,
        FlopsPerSecond(100e12), BytesPerSecond(1e12), p);
    EXPECT_NEAR(one.memory.si(), (groups * h * f * 2.0 + rows * (h + f) * 2.0) / 0.8e12, 1e-15);
    EXPECT_EQ(routed_experts_kernel_time(0, groups, h, f, 3, 2.0, 2.0, ComputeType::Bf16,
                                         GemmPath::Grouped, FlopsPerSecond(100e12),
                                         BytesPerSecond(1e12), p)
                  .time,
              Seconds(0));
}

TEST(KernelTime, PaddedRoutedExpertsComputeTheirTiles) {
    // 10 rows over 6.1015625 experts (5 tokens, top-2 of 8) padded to 16-row tiles: 97.625 rows
    // computed, the row curve read at 16 rows per expert (0.7 × 16 / 116); weights and
    // activations those of the 10 real rows. 1024 x 2048 experts of 3 matrices, bf16, on 100
    // TFLOPS and 1 TB/s with a flat 0.8 memory curve.
    EfficiencyProfile p = default_profile();
    p.memory = {0.8, 0.0};
    const double rows = 10, groups = 6.1015625, h = 1024, f = 2048;
    const KernelTime kt = routed_experts_kernel_time(
        rows, groups, h, f, 3, 2.0, 2.0, ComputeType::Bf16, GemmPath::Grouped,
        FlopsPerSecond(100e12), BytesPerSecond(1e12), p, 16.0);
    const double padded_flops = 2.0 * 97.625 * 3 * h * f;
    const double bytes = groups * 3 * h * f * 2.0 + rows * (2 * h + 6 * f) * 2.0;
    EXPECT_NEAR(kt.compute.si(), padded_flops / (100e12 * 0.7 * 16.0 / 116.0), 1e-15);
    EXPECT_NEAR(kt.memory.si(), bytes / (1e12 * 0.8), 1e-15);
    // The alignment reads 10 int32 expert ids and writes 97.625 sorted indices and 6.1015625
    // tile ids; the combine reads 10 rows and writes 5 of 1024 bf16 elements. Two streams at
    // 0.8 TB/s, added.
    const KernelTime aux =
        fused_moe_aux_kernel_time(rows, 2.0, 97.625, 16.0, h, 2.0, BytesPerSecond(1e12), p);
    const double align = (10.0 + 97.625 + 6.1015625) * 4.0 / 0.8e12;
    const double sum = (10.0 + 5.0) * 1024.0 * 2.0 / 0.8e12;
    EXPECT_NEAR(aux.time.si(), align + sum, 1e-18);
    EXPECT_EQ(aux.compute, Seconds(0));
    EXPECT_EQ(fused_moe_aux_kernel_time(0, 2.0, 0, 16.0, h, 2.0, BytesPerSecond(1e12), p).time,
              Seconds(0));
}

} // namespace grouped
