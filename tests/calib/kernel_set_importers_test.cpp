// The importers of the kernel-level Blackwell, Hopper and AMD sets (triton-cublas, cudnn-sdpa,
// cudnn-norms, azure-bench, aiter-gemm) on small fixtures in tests/fixtures/calib/kernel_sets
// that follow each set's layout; every expected time is worked out by hand from the unit the
// set documents. Also the multi-line quoted CSV fields and the SOURCE.md citation forms.
#include "calib/csv.hpp"
#include "calib/importers.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace gpuplan;
using calib::Format;
using calib::Measurement;
using model::OpClass;
using model::Timing;

namespace {

std::string fx(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/calib/kernel_sets/" + rel;
}

const Measurement& at_row(const std::vector<Measurement>& v, int row) {
    auto it = std::find_if(v.begin(), v.end(), [&](const Measurement& m) { return m.row == row; });
    if (it == v.end()) {
        throw std::runtime_error("no point at row " + std::to_string(row));
    }
    return *it;
}

void expect_time(const Measurement& m, double want) {
    EXPECT_NEAR(m.time_s, want, want * 1e-12) << m.op << " row " << m.row;
}

} // namespace

TEST(KernelSetImporters, DetectFormats) {
    EXPECT_EQ(calib::detect_format("x/fp8_results.csv", "K,triton_tflops,cublas_tflops"),
              Format::TritonCublas);
    EXPECT_EQ(calib::detect_format("x/s.csv", "batch_size,q_seqlen,kv_seqlen,num_q_heads,x"),
              Format::CudnnSdpa);
    EXPECT_EQ(calib::detect_format("x/r.csv", "config_name,model_name,backend,data_type,attn_mask"),
              Format::CudnnSdpa);
    EXPECT_EQ(calib::detect_format("x/n.csv", "config_name,norm_name,norm_type,backend"),
              Format::CudnnNorms);
    EXPECT_EQ(calib::detect_format("Azure_Results/ND_H200_v5_results.excerpt.md", "# Azure"),
              Format::AzureBench);
    EXPECT_EQ(calib::detect_format("x/a.csv", "gfx,cu_num,M,N,K,q_dtype_w,us"), Format::AiterGemm);
    // the batched table is not a GEMM of one weight matrix; the fused-MoE tables are grouped
    EXPECT_EQ(calib::detect_format("x/b.csv", "gfx,cu_num,B,M,N,K,us"), std::nullopt);
    EXPECT_EQ(calib::detect_format("x/m.csv", "cu_num,token,model_dim,inter_dim"), std::nullopt);
    EXPECT_EQ(calib::detect_format("x/m.csv", "cu_num,token,model_dim,inter_dim,expert,topk,x"),
              Format::AiterMoe);
    EXPECT_EQ(calib::detect_format("x/g.csv", "gfx,cu_num,token,model_dim,inter_dim,expert,topk,x"),
              Format::AiterMoe);
    EXPECT_EQ(calib::detect_format("x/README.md", "# x"), std::nullopt);
    EXPECT_EQ(calib::detect_format("torchao/prototype/moe_training/README.excerpt.md", "## B"),
              Format::TorchaoMoe);
    for (const char* n : {"triton-cublas", "cudnn-sdpa", "cudnn-norms", "azure-bench", "aiter-gemm",
                          "aiter-moe", "torchao-moe"}) {
        const auto f = calib::find_format(n);
        ASSERT_TRUE(f.has_value()) << n;
        EXPECT_STREQ(calib::to_string(*f), n);
    }
}

// M = N = 8192; time = 2 M N K / TFLOPS; cuBLAS's figure, Triton's where cuBLAS has 0.
TEST(KernelSetImporters, TritonCublasGemms) {
    const auto v = calib::import_file(fx("triton_cublas_bench/fp8_results.csv"), Format::Auto);
    ASSERT_EQ(v.size(), 2u);
    const auto& a = at_row(v, 2);
    EXPECT_EQ(a.op_class, OpClass::Gemm);
    EXPECT_EQ(a.op, "cublas_fp8");
    EXPECT_EQ(a.gpu, "b200"); // the data set's one GPU
    EXPECT_EQ(a.dtype, "fp8");
    EXPECT_EQ(a.m, 8192);
    EXPECT_EQ(a.n, 8192);
    EXPECT_EQ(a.k, 512);
    expect_time(a, 2.0 * 8192 * 8192 * 512 / 1000e12); // 68.72 us
    const auto& b = at_row(v, 3);
    EXPECT_EQ(b.op, "triton_fp8");
    expect_time(b, 2.0 * 8192 * 8192 * 1024 / 1500e12); // 91.63 us
}

TEST(KernelSetImporters, CudnnSdpaArtifactsKeepCausalCudnnBf16Forward) {
    const auto v =
        calib::import_file(fx("cudnn/sdpa_bf16_benchmark_results_NVIDIA_B200.csv"), Format::Auto);
    ASSERT_EQ(v.size(), 1u); // pyt_math, flash_attention and the non-causal row are left out
    const auto& a = v[0];
    EXPECT_EQ(a.row, 3);
    EXPECT_EQ(a.op_class, OpClass::AttentionPrefill);
    EXPECT_EQ(a.op, "pyt_cudnn_sdpa_fwd");
    EXPECT_EQ(a.timing, Timing::Host); // CUDA events around a PyTorch call
    EXPECT_EQ(a.source, "cudnn-sdpa-pytorch");
    EXPECT_EQ(a.gpu, "NVIDIA B200"); // an hwdb alias, resolved by the CLI
    EXPECT_EQ(a.batch, 1);
    EXPECT_EQ(a.tokens, 1024);
    EXPECT_EQ(a.context, 0);
    EXPECT_EQ(a.heads, 128);
    EXPECT_EQ(a.kv_heads, 8);
    EXPECT_EQ(a.head_dim, 128);
    expect_time(a, 0.5e-3);
    const auto f = calib::import_file(fx("cudnn/sdpa_fp8_benchmark_results_NVIDIA_B200.csv"),
                                      Format::CudnnSdpa);
    ASSERT_EQ(f.size(), 1u); // the fp8 row is left out
    EXPECT_EQ(f[0].op, "cudnn_sdpa_fwd");
    EXPECT_EQ(f[0].timing, Timing::Kernel);
    EXPECT_EQ(f[0].tokens, 2048);
    expect_time(f[0], 0.12e-3);
}

TEST(KernelSetImporters, CudnnSdpaResultsMeanHeadDimAndMultiLineErrors) {
    const auto v = calib::import_file(fx("cudnn/dsv3_gb200.csv"), Format::Auto);
    // kept: the causal BF16 forward row; left out: bwd, fp8, no_mask, the sliding window and
    // the failed run whose quoted traceback spans two lines
    ASSERT_EQ(v.size(), 1u);
    const auto& a = v[0];
    EXPECT_EQ(a.row, 2);
    EXPECT_EQ(a.gpu, "NVIDIA GB200");
    EXPECT_EQ(a.batch, 2);
    EXPECT_EQ(a.tokens, 4096);
    EXPECT_EQ(a.heads, 128);
    EXPECT_EQ(a.kv_heads, 128);
    EXPECT_EQ(a.head_dim, 160); // (192 + 128) / 2: 2 h (d + d) FLOPs per pair = 2 h (192 + 128)
    EXPECT_EQ(a.timing, Timing::Kernel);
    expect_time(a, 0.977e-3);
}

// bytes = (2 N C + C [+ C bias]) x 2 bytes: input read, output written, weight (and bias).
TEST(KernelSetImporters, CudnnNormsAreMemoryBound) {
    const auto v = calib::import_file(fx("cudnn/norms_h200.csv"), Format::Auto);
    ASSERT_EQ(v.size(), 2u); // the pytorch backend and the failed run are left out
    const auto& r = at_row(v, 2);
    EXPECT_EQ(r.op_class, OpClass::MemoryBound);
    EXPECT_EQ(r.op, "cudnn_rms_norm");
    EXPECT_EQ(r.gpu, "NVIDIA H200");
    EXPECT_EQ(r.bytes, (2.0 * 1024 * 4096 + 4096) * 2); // 16,785,408
    expect_time(r, 0.010e-3);
    const auto& l = at_row(v, 4);
    EXPECT_EQ(l.op, "cudnn_layer_norm");
    EXPECT_EQ(l.bytes, (2.0 * 2048 * 1024 + 2 * 1024) * 2); // 8,392,704
    expect_time(l, 0.008e-3);
}

TEST(KernelSetImporters, AzureResultsPage) {
    const auto v = calib::import_file(fx("Azure_Results/ND_H200_v5_results.md"), Format::Auto);
    ASSERT_EQ(v.size(), 6u); // 2 GEMMs, 2 BabelStream kernels, 2 all-reduces; not attention
    for (const auto& m : v) {
        EXPECT_EQ(m.gpu, "h200-sxm");
        EXPECT_EQ(m.timing, Timing::Kernel);
    }
    const auto& g = at_row(v, 10);
    EXPECT_EQ(g.op, "cublaslt_fp8");
    EXPECT_EQ(g.dtype, "fp8");
    expect_time(g, 2.0 * 1024 * 1024 * 1024 / 400e12); // 5.37 us
    const auto& g2 = at_row(v, 12);
    EXPECT_EQ(g2.m, 1024);
    EXPECT_EQ(g2.n, 2048);
    EXPECT_EQ(g2.k, 512);
    expect_time(g2, 2.0 * 1024 * 2048 * 512 / 500e12);
    // BabelStream: 2^25 doubles per array; Copy moves 2 arrays, Triad 3
    const auto& copy = at_row(v, 18);
    EXPECT_EQ(copy.op_class, OpClass::MemoryBound);
    EXPECT_EQ(copy.op, "babelstream_Copy");
    EXPECT_EQ(copy.bytes, 2.0 * 33554432 * 8);
    expect_time(copy, 2.0 * 33554432 * 8 / 4.0e12); // 134.2 us
    EXPECT_EQ(at_row(v, 19).bytes, 3.0 * 33554432 * 8);
    // all-reduce: "65K" = 2^16 B, 8 GPUs: time = size x 2 (n-1)/n / busbw
    const auto& ar = at_row(v, 31);
    EXPECT_EQ(ar.op_class, OpClass::AllReduce);
    EXPECT_EQ(ar.bytes, 65536);
    EXPECT_EQ(ar.tp, 8);
    EXPECT_EQ(ar.link, "nvswitch-nvlink4");
    expect_time(ar, 65536 * 2.0 * 7 / 8 / 4.0e9); // 28.67 us
    const auto& ar2 = at_row(v, 32);
    EXPECT_EQ(ar2.bytes, 131072); // "132K" is 2^17
    expect_time(ar2, 131072 * 2.0 * 7 / 8 / 7.0e9);
}

TEST(KernelSetImporters, AiterGemmTables) {
    const auto v = calib::import_file(fx("aiter/a8w8_bpreshuffle_tuned_gemm.csv"), Format::Auto);
    ASSERT_EQ(v.size(), 3u);
    const auto& i8 = at_row(v, 2);
    EXPECT_EQ(i8.gpu, "mi300x"); // gfx942, 304 CUs
    EXPECT_EQ(i8.dtype, "int8");
    EXPECT_EQ(i8.op, "aiter_int8");
    EXPECT_EQ(i8.m, 128);
    EXPECT_EQ(i8.n, 1536);
    EXPECT_EQ(i8.k, 5120);
    expect_time(i8, 10.0e-6);
    const auto& f8 = at_row(v, 3);
    EXPECT_EQ(f8.gpu, "mi355x"); // gfx950, 256 CUs
    EXPECT_EQ(f8.dtype, "fp8");
    expect_time(f8, 4.0e-6);
    EXPECT_EQ(at_row(v, 4).gpu, "gfx942-80cu"); // MI308X: no hwdb accelerator
    const auto f4 = calib::import_file(fx("aiter/a4w4_blockscale_tuned_gemm.csv"), Format::Auto);
    ASSERT_EQ(f4.size(), 1u);
    EXPECT_EQ(f4[0].dtype, "mxfp4");
    expect_time(f4[0], 5.4049e-6);
    const auto bf = calib::import_file(fx("aiter/llama70B_bf16_tuned_gemm.csv"), Format::Auto);
    ASSERT_EQ(bf.size(), 1u);
    EXPECT_EQ(bf[0].dtype, "bf16");
    EXPECT_EQ(bf[0].gpu, "mi355x");
    // the batched table is not read as one GEMM, by name or in a folder
    try {
        (void)calib::import_file(fx("aiter/bf16_tuned_batched_gemm.csv"), Format::AiterGemm);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("batched GEMM table"), std::string::npos);
    }
    const auto folder = calib::import_paths({fx("aiter")}, Format::Auto);
    EXPECT_EQ(folder.points.size(), 5u);
    EXPECT_EQ(folder.skipped.size(), 1u);
}

// Fused-MoE rows: tokens entering the layer, hidden, per-expert width, experts held, top-k; `us`
// the two stages' sum (or the one fused kernel); us = 0 placeholders dropped.
TEST(KernelSetImporters, AiterFusedMoeTablesAreGroupedGemms) {
    const auto v = calib::import_file(fx("aiter_moe/small_tuned_fmoe.csv"), Format::Auto);
    ASSERT_EQ(v.size(), 3u); // line 4 has us = 0
    const auto& bf = at_row(v, 2);
    EXPECT_EQ(bf.op_class, OpClass::GroupedGemm);
    EXPECT_EQ(bf.gpu, "mi300x"); // cu_num 304
    EXPECT_EQ(bf.dtype, "bf16");
    EXPECT_EQ(bf.op, "aiter_fmoe_bf16");
    EXPECT_EQ(bf.m, 16);
    EXPECT_EQ(bf.k, 4096);
    EXPECT_EQ(bf.n, 384);
    EXPECT_EQ(bf.experts, 128);
    EXPECT_EQ(bf.top_k, 8);
    EXPECT_EQ(bf.matrices, 3); // use_g1u1: gate and up fused
    expect_time(bf, 50.0e-6);  // us1 30 + us2 20
    const auto& f4 = at_row(v, 3);
    EXPECT_EQ(f4.gpu, "mi355x"); // cu_num 256
    EXPECT_EQ(f4.dtype, "mxfp4");
    EXPECT_EQ(f4.op, "aiter_fmoe_mxfp4_per_1x32");
    EXPECT_EQ(f4.experts, 257);
    EXPECT_EQ(f4.top_k, 9);
    expect_time(f4, 15.5e-6);
    const auto& ungated = at_row(v, 5);
    EXPECT_EQ(ungated.gpu, "gfx942-80cu"); // MI308X: no hwdb accelerator
    EXPECT_EQ(ungated.dtype, "fp8");
    EXPECT_EQ(ungated.matrices, 2);
    expect_time(ungated, 12.0e-6);
    const auto glm = calib::import_file(fx("aiter_moe/glm_tuned_fmoe.csv"), Format::Auto);
    ASSERT_EQ(glm.size(), 1u);
    EXPECT_EQ(glm[0].gpu, "mi300x"); // gfx942, 304 CUs
    EXPECT_EQ(glm[0].op, "aiter_fmoe_fp8_per_1x128");
    expect_time(glm[0], 71.1007e-6);
}

// The 2D-3D grouped GEMM rows only: "(M, K) @ (G, K, N)" is M tokens over G experts, top-1, one
// matrix of K x N each; the 2D-2D weight-gradient row and the quantization rows are left out.
TEST(KernelSetImporters, TorchaoGroupedGemmRows) {
    const auto v =
        calib::import_file(fx("torchao/prototype/moe_training/README.excerpt.md"), Format::Auto);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].op_class, OpClass::GroupedGemm);
    EXPECT_EQ(v[0].gpu, "b200");
    EXPECT_EQ(v[0].dtype, "mxfp8"); // the MXFP8 kernel class, on the FP8 path
    EXPECT_EQ(v[0].m, 1024);
    EXPECT_EQ(v[0].k, 512);
    EXPECT_EQ(v[0].n, 256);
    EXPECT_EQ(v[0].experts, 4);
    EXPECT_EQ(v[0].top_k, 1);
    EXPECT_EQ(v[0].matrices, 1);
    EXPECT_EQ(v[0].row, 10);
    expect_time(v[0], 12.5e-6);
    EXPECT_EQ(v[1].k, 256);
    EXPECT_EQ(v[1].n, 512);
    expect_time(v[1], 13.0e-6);
}

TEST(Csv, QuotedFieldsMaySpanLines) {
    const auto t = calib::parse_csv("a,b,c\n1,\"x\r\ny\",2\n3,\"\",4\n", "t.csv", true);
    ASSERT_EQ(t.rows.size(), 2u);
    EXPECT_EQ(t.rows[0].line, 2);
    EXPECT_EQ(t.text(t.rows[0], 1), "x\ny");
    EXPECT_EQ(t.rows[1].line, 4);
    EXPECT_EQ(t.number(t.rows[1], 2), 4.0);
    try {
        (void)calib::parse_csv("a,b\n1,2\n3,\"open\nstill open\n", "u.csv", true);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "u.csv:3:1: a quoted field is not closed; add the closing '\"'");
    }
}

// SOURCE.md forms: Repository + Commit; "Cite as" (a fork at a commit); per-path commits of a
// set copied from two commits; NAME.excerpt.md cites NAME.md.
TEST(Importers, SourceCitationForms) {
    namespace fs = std::filesystem;
    const fs::path root =
        fs::temp_directory_path() / ("gpuplan-cite-" + std::to_string(::getpid()));
    fs::remove_all(root);
    auto write = [](const fs::path& p, const std::string& text) {
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
    };
    write(root / "plain/SOURCE.md",
          "# x\n\n- Repository: o/plain (note)\n- Commit: abc123 (date)\n");
    write(root / "plain/d/f.csv", "a\n1\n");
    write(root / "fork/SOURCE.md",
          "- Repository: up/stream (Microsoft). Read from a fork\n"
          "- Cite as me/fork@3371c0c3a302efe87c3f8c960e896945a51a9a3c:Azure_Results/<file>.md.\n");
    write(root / "fork/Azure_Results/ND_X_results.excerpt.md", "# x\n");
    write(root / "two/SOURCE.md",
          "- Repository: o/two\n"
          "- Two commits, because files were deleted later:\n"
          "  - **3929da2ef4c1dba1bb8acb68727b9134f26f40c0** (2026-05-08): everything under\n"
          "    `bench/results/` and `norms/results/`.\n"
          "  - **0b1577c8c83401237d601d0d0db5210506705396** (2025-10-10):\n"
          "    `bench/artifacts/sdpa_{bf16,fp8}_results_B200.csv`.\n"
          "- License: MIT\n");
    write(root / "two/bench/results/g/r.csv", "a\n1\n");
    write(root / "two/bench/artifacts/sdpa_bf16_results_B200.csv", "a\n1\n");
    write(root / "two/other/x.csv", "a\n1\n");
    EXPECT_EQ(calib::source_citation(root / "plain/d/f.csv"), "o/plain@abc123:d/f.csv");
    EXPECT_EQ(calib::source_citation(root / "fork/Azure_Results/ND_X_results.excerpt.md"),
              "me/fork@3371c0c3a302efe87c3f8c960e896945a51a9a3c:Azure_Results/ND_X_results.md");
    EXPECT_EQ(calib::source_citation(root / "two/bench/results/g/r.csv"),
              "o/two@3929da2ef4c1dba1bb8acb68727b9134f26f40c0:bench/results/g/r.csv");
    EXPECT_EQ(calib::source_citation(root / "two/bench/artifacts/sdpa_bf16_results_B200.csv"),
              "o/two@0b1577c8c83401237d601d0d0db5210506705396:bench/artifacts/"
              "sdpa_bf16_results_B200.csv");
    // a file under none of the quoted paths has no commit: its path as given
    EXPECT_EQ(calib::source_citation(root / "two/other/x.csv"),
              (root / "two/other/x.csv").generic_string());
    fs::remove_all(root);
}

// fused-moe: tokens, hidden, ffn, experts, top_k and matrices as written; µs to seconds; the GPU
// from the '# gpu:' comment; top_k above the expert count is refused at its row.
TEST(KernelSetImporters, FusedMoeRowsAreGroupedGemms) {
    EXPECT_EQ(calib::detect_format("x/v.csv",
                                   "op,tokens,hidden,ffn,experts,top_k,matrices,dtype,time_us"),
              Format::FusedMoe);
    EXPECT_STREQ(calib::to_string(Format::FusedMoe), "fused-moe");
    EXPECT_EQ(calib::find_format("fused-moe"), Format::FusedMoe);
    const auto v = calib::import_file(fx("fused_moe/small.csv"), Format::Auto);
    ASSERT_EQ(v.size(), 2U);
    const Measurement& a = at_row(v, 4);
    EXPECT_EQ(a.op_class, OpClass::GroupedGemm);
    EXPECT_EQ(a.op, "vllm_fused_moe");
    EXPECT_EQ(a.gpu, "h100-sxm");
    EXPECT_EQ(a.dtype, "bf16");
    EXPECT_EQ(a.m, 5.0);
    EXPECT_EQ(a.k, 4096.0);
    EXPECT_EQ(a.n, 7168.0);
    EXPECT_EQ(a.experts, 8);
    EXPECT_EQ(a.top_k, 2);
    EXPECT_EQ(a.matrices, 3);
    expect_time(a, 250.5e-6);
    const Measurement& b = at_row(v, 5);
    EXPECT_EQ(b.matrices, 2);
    EXPECT_EQ(b.experts, 128);
    expect_time(b, 80e-6);
    const std::filesystem::path bad = std::filesystem::temp_directory_path() /
                                      ("gpuplan_bad_topk_" + std::to_string(::getpid()) + ".csv");
    {
        std::ofstream out(bad);
        out << "# gpu: h100-sxm\nop,tokens,hidden,ffn,experts,top_k,matrices,dtype,time_us\n"
               "vllm_fused_moe,5,4096,7168,2,4,3,bf16,250.5\n";
    }
    try {
        (void)calib::import_file(bad, Format::Auto);
        ADD_FAILURE() << "top_k above experts was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(".csv:3"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("top_k (at most experts)"), std::string::npos);
    }
    std::filesystem::remove(bad);
}
