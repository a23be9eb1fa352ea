// ROCm/aiter tuned GEMM tables, aiter/configs/**/*tuned_gemm*.csv (aiter/utility/base_tuner.py,
// gradlib/gradlib/GemmTuner.py): for each shape the tuner times every candidate kernel on the GPU
// and keeps the fastest; `us` is that kernel's measured time in microseconds (torch profiler
// device time, about 100 iterations, outliers dropped). C[M,N] = A[M,K] B[N,K]^T with M the
// token rows and N x K the weight: a GEMM [M, K] x [K, N].
// Data type: the `q_dtype_w` column (torch.float8_e4m3fn / e4m3fnuz -> fp8, torch.int8 -> int8),
// else the `dtype` column (torch.bfloat16 -> bf16, torch.float16 -> fp16), else the file name
// (a4w4_blockscale: MXFP4 weights and activations with 1x32 scales; a8w8_blockscale: FP8 with
// 1x128 / 128x128 block scales).
// GPU: the `gfx` and `cu_num` columns; gfx942 with 304 CUs is the MI300X (the MI325X has the same
// die and CU count and cannot be told apart: its profile is borrowed), gfx950 with 256 CUs an
// MI350-series part, taken as the MI355X (the MI350X is the same die at a lower clock and power;
// the rows do not say which). Other parts (MI308X, gfx1250) keep their gfx name and CU count as
// the GPU, which no hwdb accelerator has, so fits and validation skip them.
#include "calib/importers_detail.hpp"

#include "model/error.hpp"

#include <string>

namespace gpuplan::calib::detail {
namespace {

std::string gpu_of(const std::string& gfx, double cu) {
    if (gfx == "gfx942" && cu == 304) {
        return "mi300x";
    }
    if (gfx == "gfx950" && cu == 256) {
        return "mi355x";
    }
    return gfx + "-" + std::to_string(static_cast<int>(cu)) + "cu";
}

} // namespace

std::vector<Measurement> import_aiter_gemm(const CsvTable& t, const std::filesystem::path& path,
                                           const ImportOptions& o) {
    const std::string name = path.filename().string();
    if (t.has_column("B")) {
        throw InputError(path.string() +
                         ": a batched GEMM table (column B) is B independent GEMMs, not one GEMM "
                         "of a weight matrix; leave it out of the import");
    }
    const int c_gfx = t.column("gfx");
    const int c_cu = t.column("cu_num");
    const int c_m = t.column("M");
    const int c_n = t.column("N");
    const int c_k = t.column("K");
    const int c_us = t.column("us");
    const int c_qw = t.has_column("q_dtype_w") ? t.column("q_dtype_w") : -1;
    const int c_dt = t.has_column("dtype") ? t.column("dtype") : -1;
    std::string file_type;
    if (name.rfind("a4w4", 0) == 0) {
        file_type = "mxfp4";
    } else if (name.rfind("a8w8", 0) == 0) {
        file_type = "fp8";
    }
    std::vector<Measurement> out;
    for (const auto& r : t.rows) {
        std::string dtype = file_type;
        int c_type = c_us;
        if (c_qw >= 0 || c_dt >= 0) {
            c_type = c_qw >= 0 ? c_qw : c_dt;
            const std::string& v = t.text(r, c_type);
            dtype = v.rfind("torch.float8_e4m3", 0) == 0 ? "fp8"
                    : v == "torch.int8"                  ? "int8"
                    : v == "torch.bfloat16"              ? "bf16"
                    : v == "torch.float16"               ? "fp16"
                                                         : "";
        }
        if (dtype.empty()) {
            t.fail(r, c_type,
                   "unknown data type '" + (c_type == c_us ? name : t.text(r, c_type)) +
                       "'; expected torch.float8_e4m3fn(uz), torch.int8, torch.bfloat16 or "
                       "torch.float16 (or an a4w4/a8w8 file)");
        }
        const std::string gpu = gpu_or(o, gpu_of(t.text(r, c_gfx), t.number(r, c_cu)), path);
        Measurement m = gemm_point(base(t, r, "aiter", gpu), "aiter_" + dtype, t.number(r, c_m),
                                   t.number(r, c_k), t.number(r, c_n), dtype);
        m.time_s = t.number(r, c_us) * 1e-6;
        if (m.m <= 0 || m.n <= 0 || m.k <= 0 || m.time_s <= 0) {
            t.fail(r, c_us, "M, N, K and us must be positive");
        }
        out.push_back(std::move(m));
    }
    return out;
}

// ROCm/aiter tuned fused-MoE tables, aiter/configs/**/*tuned_fmoe*.csv
// (csrc/ck_gemm_moe_2stages_codegen/gemm_moe_tune.py, aiter/test_common.py run_perftest): for
// each shape the tuner times the candidate fused-MoE kernels and keeps the fastest; `us` is its
// measured time in microseconds, the two expert stages (gate/up GEMM with the activation, then
// the down GEMM: us1 + us2) or the one fused kernel (run_1stage = 1). `token` tokens enter the
// layer, each routed to `topk` of the `expert` experts held on the GPU (the tuner's random
// inputs: uniform routing), with hidden size `model_dim` and per-expert intermediate width
// `inter_dim` as sharded on this GPU; use_g1u1 = 1 is a gated MLP (gate and up fused: 3
// matrices per expert), 0 an ungated one (2). A grouped-GEMM point of the routed experts
// (model::routed_experts_kernel_time). Routing, sorting and activation quantization are not in
// the times, nor is a shared expert run on its own. Data type: `q_dtype_w` (torch.float8_* ->
// fp8, torch.float4_e2m1fn_x2 -> mxfp4 (1x32 e8m0 scales), torch.bfloat16 -> bf16); the
// quantization granularity (`q_type`: per_Tensor, per_Token, per_1x128 blocks) is kept in the
// operator name (aiter_fmoe_<dtype>_<q_type>). Rows with us = 0 are placeholder entries of
// one-stage kernels with no time (aiter's SOURCE notes them) and are skipped. GPU: `gfx` and
// `cu_num` as in the GEMM tables; a file without `gfx` maps `cu_num` 304 and 80 to gfx942 and 256
// to gfx950 (aiter's tuners write those three).
std::vector<Measurement> import_aiter_moe(const CsvTable& t, const std::filesystem::path& path,
                                          const ImportOptions& o) {
    const int c_gfx = t.has_column("gfx") ? t.column("gfx") : -1;
    const int c_cu = t.column("cu_num");
    const int c_tok = t.column("token");
    const int c_h = t.column("model_dim");
    const int c_i = t.column("inter_dim");
    const int c_e = t.column("expert");
    const int c_k = t.column("topk");
    const int c_qw = t.column("q_dtype_w");
    const int c_qt = t.column("q_type");
    const int c_g1u1 = t.column("use_g1u1");
    const int c_us = t.column("us");
    std::vector<Measurement> out;
    for (const auto& r : t.rows) {
        const double us = t.number(r, c_us);
        if (us == 0.0) {
            continue; // a one-stage placeholder without a time
        }
        const std::string& w = t.text(r, c_qw);
        const std::string dtype = w.rfind("torch.float8_e4m3", 0) == 0 ? "fp8"
                                  : w == "torch.float4_e2m1fn_x2"      ? "mxfp4"
                                  : w == "torch.bfloat16"              ? "bf16"
                                                                       : "";
        if (dtype.empty()) {
            t.fail(r, c_qw,
                   "unknown weight type '" + w +
                       "'; expected torch.float8_e4m3fn(uz), torch.float4_e2m1fn_x2 or "
                       "torch.bfloat16");
        }
        const double cu = t.number(r, c_cu);
        const std::string gfx = c_gfx >= 0              ? t.text(r, c_gfx)
                                : cu == 304 || cu == 80 ? "gfx942"
                                : cu == 256             ? "gfx950"
                                                        : "gfx";
        std::string qtype = t.text(r, c_qt);
        if (const auto dot = qtype.find('.'); dot != std::string::npos) {
            qtype = qtype.substr(dot + 1); // QuantType.per_1x128 -> per_1x128
        }
        Measurement m = base(t, r, "aiter", gpu_or(o, gpu_of(gfx, cu), path));
        m.op_class = OpClass::GroupedGemm;
        m.op = "aiter_fmoe_" + dtype + (qtype == "No" ? "" : "_" + qtype);
        m.dtype = dtype;
        m.m = t.number(r, c_tok);
        m.k = t.number(r, c_h);
        m.n = t.number(r, c_i);
        m.experts = static_cast<int>(t.number(r, c_e));
        m.top_k = static_cast<int>(t.number(r, c_k));
        m.matrices = t.number(r, c_g1u1) != 0 ? 3 : 2;
        m.time_s = us * 1e-6;
        if (m.m <= 0 || m.k <= 0 || m.n <= 0 || m.experts <= 0 || m.top_k <= 0 ||
            m.top_k > m.experts || m.time_s <= 0) {
            t.fail(r, c_us,
                   "token, model_dim, inter_dim, expert, topk (at most expert) and us must be "
                   "positive");
        }
        out.push_back(std::move(m));
    }
    return out;
}

} // namespace gpuplan::calib::detail
