// The CSV reader and the importers, on small hand-written fixtures in tests/fixtures/calib that
// follow each data set's layout (the real files live in ../shared/data and are not copied).
#include "calib/csv.hpp"
#include "calib/importers.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

using namespace gpuplan;
using calib::Format;
using calib::Measurement;
using model::OpClass;

namespace {

std::string fx(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/calib/" + rel;
}

const Measurement& find(const std::vector<Measurement>& v, const std::string& op, int row = -1) {
    auto it = std::find_if(v.begin(), v.end(), [&](const Measurement& m) {
        return m.op == op && (row < 0 || m.row == row);
    });
    if (it == v.end()) {
        throw std::runtime_error("no point for " + op);
    }
    return *it;
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST(Csv, ParsesQuotesCommentsSpacesAndCrlf) {
    const auto t = calib::parse_csv(
        "# gpu: x\r\na, b ,c\r\n1,\"two, 2\", 3\r\n\r\n4,\"say \"\"hi\"\"\",6", "t.csv", true);
    EXPECT_EQ(t.comments, std::vector<std::string>{"gpu: x"});
    EXPECT_EQ(t.header, (std::vector<std::string>{"a", "b", "c"}));
    ASSERT_EQ(t.rows.size(), 2u);
    EXPECT_EQ(t.text(t.rows[0], 1), "two, 2");
    EXPECT_EQ(t.text(t.rows[1], 1), "say \"hi\"");
    EXPECT_EQ(t.number(t.rows[1], t.column("c")), 6.0);
    EXPECT_EQ(t.rows[1].line, 5);
    EXPECT_EQ(t.number_with_suffix(calib::parse_csv("0.19ms", "u.csv", false).rows[0], 0, "ms"),
              0.19);
}

TEST(Csv, ErrorsNameFileLineColumnAndColumnName) {
    const auto t = calib::parse_csv("a,time_us\n1,2\n3,12x\n", "t.csv", true);
    EXPECT_EQ(message_of([&] { (void)t.number(t.rows[1], 1); }),
              "t.csv:3:3: time_us: expected a number, found '12x'");
    EXPECT_NE(message_of([&] {
                  (void)t.column("latency_us");
              }).find("no column 'latency_us' (it has: a, time_us)"),
              std::string::npos);
    EXPECT_EQ(message_of([] { (void)calib::parse_csv("a,b\n1\n", "r.csv", true); }),
              "r.csv:2:1: expected 2 fields (as in the header), found 1");
    EXPECT_NE(message_of([] { (void)calib::parse_csv("", "e.csv", true); }).find("no data"),
              std::string::npos);
    EXPECT_NE(message_of([] {
                  (void)calib::read_csv("/nonexistent/x.csv", true);
              }).find("/nonexistent/x.csv: cannot open the CSV file (No such file or directory)"),
              std::string::npos);
}

TEST(Importers, DetectFormatFromPathAndHeader) {
    EXPECT_EQ(calib::detect_format("x/mlp.csv", "time_stats.emb.min,time_stats.attn_pre_proj.min"),
              Format::VidurMlp);
    EXPECT_EQ(calib::detect_format("x/all_reduce.csv", ",time_stats.all_reduce.min"),
              Format::VidurNetwork);
    EXPECT_EQ(calib::detect_format("x/data.csv", "m,k,n,latency_us,mfu"), Format::BlisGemm);
    EXPECT_EQ(calib::detect_format("x/32-8-128.csv", "dtype,seq_len,latency_us,mfu"),
              Format::BlisMha);
    EXPECT_EQ(calib::detect_format("a/real_hardware/gelu_A100.csv", "1024, 0.02"),
              Format::LlmCompass);
    EXPECT_EQ(calib::detect_format("t.csv", "op,m,n,k,dtype,batch,seq,time_us"), Format::Torch);
    EXPECT_EQ(calib::detect_format("layers.csv", "layer_name,input,kv_cache,tp_size,latency(ns)"),
              Format::LlmServingSim);
    EXPECT_FALSE(calib::detect_format("x.csv", "a,b,c").has_value());
    EXPECT_FALSE(calib::detect_format("x.json", "op,m,n,k,dtype,batch,seq,time_us").has_value());
    EXPECT_EQ(calib::find_format("blis-mha"), Format::BlisMha);
    EXPECT_FALSE(calib::find_format("vidur").has_value());
}

TEST(Importers, VidurMlpMapsColumnsToModelShapes) {
    const auto pts = calib::import_file(
        fx("vidur/data/profiling/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv"), Format::Auto);
    EXPECT_EQ(pts.size(), 4u * 10u); // 4 rows x 10 operators
    // Row 4: 4096 tokens at TP 2 (Llama-2-7B: 32 heads of 128, no GQA, ffn 11008).
    const auto& qkv = find(pts, "attn_pre_proj", 4);
    EXPECT_EQ(qkv.op_class, OpClass::Gemm);
    EXPECT_EQ(qkv.gpu, "a100-sxm-80gb");
    EXPECT_EQ(qkv.m, 4096);
    EXPECT_EQ(qkv.k, 4096);
    EXPECT_EQ(qkv.n, (16 + 2 * 16) * 128);
    EXPECT_EQ(qkv.tp, 2);
    EXPECT_EQ(qkv.dtype, "fp16");
    EXPECT_EQ(qkv.timing, model::Timing::Kernel);
    EXPECT_DOUBLE_EQ(qkv.time_s, 0.5e-3); // 1.0 x (0.1 + 0.2 x 2) ms
    const auto& up = find(pts, "mlp_up_proj", 4);
    EXPECT_EQ(up.n, 11008); // gate and up fused: 2 x 11008 / 2
    const auto& down = find(pts, "mlp_down_proj", 4);
    EXPECT_EQ(down.k, 5504);
    EXPECT_EQ(down.n, 4096);
    const auto& o = find(pts, "attn_post_proj", 4);
    EXPECT_EQ(o.k, 2048);
    const auto& norm = find(pts, "input_layernorm", 4);
    EXPECT_EQ(norm.op_class, OpClass::MemoryBound);
    EXPECT_DOUBLE_EQ(norm.bytes, 2.0 * 4096 * 4096 * 2 + 4096 * 2);
    EXPECT_DOUBLE_EQ(find(pts, "add", 4).bytes, 3.0 * 4096 * 4096 * 2);
    EXPECT_DOUBLE_EQ(find(pts, "mlp_act", 4).bytes, 4096.0 * 3 * 5504 * 2);
    EXPECT_DOUBLE_EQ(find(pts, "attn_rope", 4).bytes, 2.0 * 4096 * (16 + 16) * 128 * 2);
    EXPECT_EQ(qkv.source, "vidur");
    EXPECT_EQ(qkv.row, 4);
}

TEST(Importers, VidurNetworkSetsGroupNodesAndLink) {
    const auto ar = calib::import_file(fx("vidur/data/profiling/network/a100_dgx/all_reduce.csv"),
                                       Format::Auto);
    ASSERT_EQ(ar.size(), 3u);
    EXPECT_EQ(ar[0].op_class, OpClass::AllReduce);
    EXPECT_EQ(ar[0].tp, 8);
    EXPECT_EQ(ar[0].nodes, 1);
    EXPECT_EQ(ar[0].link, "nvswitch-nvlink3");
    EXPECT_DOUBLE_EQ(ar[1].bytes, 67108864);
    EXPECT_DOUBLE_EQ(ar[1].time_s, 0.35e-3);
    EXPECT_EQ(ar[2].nodes, 2);
    EXPECT_EQ(ar[2].link, ""); // the inter-node fabric is not documented
    const auto sr =
        calib::import_file(fx("vidur/data/profiling/network/a100_pairwise_nvlink/send_recv.csv"),
                           Format::VidurNetwork);
    ASSERT_EQ(sr.size(), 2u);
    EXPECT_EQ(sr[0].op_class, OpClass::SendRecv);
    EXPECT_EQ(sr[0].gpu, "a100-pcie-80gb");
    EXPECT_EQ(sr[0].link, "nvlink-bridge-a100");
}

TEST(Importers, BlisGemmIsFp8AndAttentionIsHostTimedPerShard) {
    const auto g = calib::import_file(fx("blis/bench_data/gemm/h100/data.csv"), Format::Auto);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[1].dtype, "fp8");
    EXPECT_EQ(g[1].gpu, "h100-sxm");
    EXPECT_EQ(g[1].m, 4096);
    EXPECT_EQ(g[1].k, 4096);
    EXPECT_EQ(g[1].n, 6144);
    EXPECT_DOUBLE_EQ(g[1].time_s, 150e-6);
    const auto pre =
        calib::import_file(fx("blis/bench_data/mha/prefill/h100/32-8-128.csv"), Format::Auto);
    ASSERT_EQ(pre.size(), 2u);
    EXPECT_EQ(pre[1].op_class, OpClass::AttentionPrefill);
    EXPECT_EQ(pre[1].timing, model::Timing::Host);
    EXPECT_EQ(pre[1].tokens, 8192);
    EXPECT_EQ(pre[1].batch, 1);
    EXPECT_EQ(pre[1].heads, 32);
    EXPECT_EQ(pre[1].kv_heads, 8);
    const auto dec =
        calib::import_file(fx("blis/bench_data/mha/decode/h100/32-8-128-tp2.csv"), Format::Auto);
    ASSERT_EQ(dec.size(), 2u);
    EXPECT_EQ(dec[1].op_class, OpClass::AttentionDecode);
    EXPECT_EQ(dec[1].heads, 16);
    EXPECT_EQ(dec[1].kv_heads, 4);
    EXPECT_EQ(dec[1].batch, 64);
    EXPECT_EQ(dec[1].context, 8192);
    EXPECT_EQ(dec[1].tp, 2);
}

TEST(Importers, LlmCompassFilesWithoutHeader) {
    const auto mm = calib::import_file(fx("llmcompass/ae/figure5/ab/real_hardware/matmul_A100.csv"),
                                       Format::Auto);
    ASSERT_EQ(mm.size(), 2u);
    EXPECT_EQ(mm[0].m, 64);
    EXPECT_EQ(mm[0].n, 8192);
    EXPECT_DOUBLE_EQ(mm[0].time_s, 0.1e-3);
    EXPECT_EQ(mm[0].timing, model::Timing::Host);
    EXPECT_EQ(mm[0].gpu, "a100-sxm-80gb");
    const auto sm = calib::import_file(
        fx("llmcompass/ae/figure5/cf/real_hardware/softmax_A100.csv"), Format::Auto);
    EXPECT_DOUBLE_EQ(sm[0].bytes, 4.0 * 4096 * 1024);
    EXPECT_DOUBLE_EQ(sm[0].time_s, 4096.0 * 1024 / 150e9);
    const auto ge =
        calib::import_file(fx("llmcompass/ae/figure5/g/real_hardware/gelu_A100.csv"), Format::Auto);
    EXPECT_DOUBLE_EQ(ge[1].time_s, 1048576.0 / 20e9);
    const auto tr = calib::import_file(
        fx("llmcompass/ae/figure5/ijkl/real_hardware/transformer_A100.csv"), Format::Auto);
    ASSERT_EQ(tr.size(), 8u); // Q, Wo, W1, W2, softmax, two layer norms, GeLU
    const auto& q = find(tr, "Q_proj");
    EXPECT_EQ(q.m, 8 * 2048);
    EXPECT_EQ(q.n, 3072);
    EXPECT_DOUBLE_EQ(q.time_s, 0.0135 / 3);
    EXPECT_EQ(find(tr, "LayerNorm_MHA").timing, model::Timing::Kernel);
    EXPECT_EQ(find(tr, "W2_proj").k, 12288);
}

TEST(Importers, LlmServingSimGemmsAndAttention) {
    const auto ly = calib::import_file(
        fx("llmservingsim/profiler/v0/perf_models/H100/meta-llama/Llama-3.1-8B/tp1/layers.csv"),
        Format::Auto);
    ASSERT_EQ(ly.size(), 3u); // q_proj, k_proj, lm_head; the norm is not imported
    EXPECT_EQ(find(ly, "k_proj").n, 1024);
    EXPECT_EQ(find(ly, "lm_head").n, 128256);
    EXPECT_DOUBLE_EQ(find(ly, "q_proj").time_s, 20e-6);
    const auto at = calib::import_file(
        fx("llmservingsim/profiler/v0/perf_models/H100/meta-llama/Llama-3.1-8B/tp1/attention.csv"),
        Format::Auto);
    ASSERT_EQ(at.size(), 2u);
    EXPECT_EQ(at[0].op_class, OpClass::AttentionPrefill);
    EXPECT_EQ(at[0].tokens, 256);
    EXPECT_EQ(at[0].context, 256); // 512 cached tokens include the chunk
    EXPECT_EQ(at[1].op_class, OpClass::AttentionDecode);
    EXPECT_EQ(at[1].context, 2048); // 8192 tokens shared by 4 sequences
}

TEST(Importers, TorchProfileReadsTheGpuCommentAndOps) {
    const auto t = calib::import_file(fx("torch/torch_profile.csv"), Format::Auto);
    ASSERT_EQ(t.size(), 5u);
    EXPECT_EQ(t[0].gpu, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(t[1].dtype, "fp8");
    EXPECT_EQ(t[2].op_class, OpClass::AttentionPrefill);
    EXPECT_EQ(t[2].heads, 32);
    EXPECT_EQ(t[2].head_dim, 128);
    EXPECT_EQ(t[2].tokens, 2048);
    EXPECT_EQ(t[3].context, 4096);
    EXPECT_EQ(t[4].op_class, OpClass::MemoryBound);
    EXPECT_DOUBLE_EQ(t[4].bytes, 2.0 * 2 * 1073741824);
    const auto o = calib::import_file(fx("torch/torch_profile.csv"), Format::Torch, {"h200-sxm"});
    EXPECT_EQ(o[0].gpu, "h200-sxm");
}

TEST(Importers, BadFilesGiveLocatedErrors) {
    EXPECT_EQ(message_of([] {
                  (void)calib::import_file(fx("bad/bad_number.csv"), Format::Torch, {"h100-sxm"});
              }),
              fx("bad/bad_number.csv") + ":2:32: time_us: expected a number, found '12x'");
    EXPECT_NE(message_of([] {
                  (void)calib::import_file(fx("bad/ragged.csv"), Format::Torch, {"h100-sxm"});
              }).find("ragged.csv:3:1: expected 8 fields"),
              std::string::npos);
    EXPECT_NE(message_of([] {
                  (void)calib::import_file(fx("bad/missing_column.csv"), Format::BlisGemm,
                                           {"h100-sxm"});
              }).find("no column 'latency_us'"),
              std::string::npos);
    EXPECT_NE(message_of([] {
                  (void)calib::import_file(fx("bad/unterminated_quote.csv"), Format::Torch,
                                           {"h100-sxm"});
              }).find("quoted field is not closed"),
              std::string::npos);
    EXPECT_NE(message_of([] {
                  (void)calib::import_file(fx("bad/unknown.csv"), Format::Auto);
              }).find("cannot tell the file's format"),
              std::string::npos);
    EXPECT_NE(message_of([] {
                  (void)calib::import_file(fx("bad/bad_number.csv"), Format::Torch);
              }).find("cannot tell which GPU"),
              std::string::npos);
}

TEST(Importers, ImportPathsWalksFoldersAndCitesSources) {
    const auto r = calib::import_paths({fx("vidur")}, Format::Auto);
    EXPECT_EQ(r.files.size(), 3u);
    EXPECT_EQ(r.skipped.size(), 1u); // SOURCE.md
    EXPECT_EQ(r.points.size(), 40u + 3u + 2u);
    ASSERT_FALSE(r.sources.empty());
    EXPECT_EQ(
        r.sources[0],
        "example/vidur-fixture@0123456789abcdef0123456789abcdef01234567:data/profiling/compute/"
        "a100/meta-llama/Llama-2-7b-hf/mlp.csv");
    EXPECT_EQ(calib::source_citation(fx("torch/torch_profile.csv")), fx("torch/torch_profile.csv"));
    EXPECT_THROW((void)calib::import_paths({fx("no-such-folder")}, Format::Auto), InputError);
}
