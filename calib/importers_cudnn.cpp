// NVIDIA/cudnn-frontend benchmarks: scaled-dot-product attention (SDPA) and normalisation kernels.
//
// SDPA, two layouts (benchmark/sdpa_benchmark_training, README and benchmark scripts):
// - artifacts/sdpa_{bf16,fp8}_benchmark_results_NVIDIA_<GPU>.csv: batch_size, q_seqlen,
//   kv_seqlen, num_q_heads, num_kv_heads, head_dim, is_causal, backend (bf16 file) or precision
//   (fp8 file, both cuDNN through cudnn-frontend), forward_time in milliseconds (median of 10
//   runs, CUDA events around the one attention call).
// - results/<model>/<gpu>/*.csv: data_type, attn_mask, batch_size, q_seqlen, kv_seqlen,
//   num_q_heads, num_kv_heads, head_dim_qk, head_dim_vo, profile_pass, time_ms (one row per pass)
//   or fwd_time_ms (one row for both passes), sliding_window_size, success, gpu_name; the time is
//   the attention kernels' device time from the PyTorch profiler (L2 flushed before each call).
// Imported: the forward pass of cuDNN (the library the set measures; FlashAttention-2 and the
// unfused PyTorch reference rows are not serving kernels on Blackwell), BF16, causal, without a
// sliding window, q_seqlen = kv_seqlen, successful runs: one prefill of `batch` sequences of
// q_seqlen tokens each. FP8/MXFP8 rows are left out: the model prices attention at the 16-bit
// peak (step_cost.cpp). Where head_dim_qk != head_dim_vo (DeepSeek-V3's MLA run as MHA) the
// point's head_dim is their mean: the model's 2 heads (d + d) FLOPs per query-key pair and its
// Q+O and K+V bytes are then exactly those of d_qk + d_vo.
//
// Norms (benchmark/norms/results/<gpu>/*.csv): N (tokens) x C (hidden) RMSNorm and LayerNorm,
// fwd_time_ms (profiler kernel time, median of 20). Imported: cuDNN, BF16, forward, successful,
// as memory-bound kernels with the step-cost model's byte count of a norm (as for Vidur's
// norms, docs/calibration.md §3): the N x C input read and output written, plus the weight (and
// the bias when there is one), 2 bytes per element.
#include "calib/importers_detail.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <string>

namespace gpuplan::calib::detail {
namespace {

constexpr double kMs = 1e-3;

bool truthy(const std::string& s) {
    return s == "True" || s == "true" || s == "1";
}

std::string gpu_from_artifact_name(const std::filesystem::path& path) {
    // sdpa_bf16_benchmark_results_NVIDIA_B200.csv -> "NVIDIA B200" (an hwdb alias)
    const std::string stem = path.stem().string();
    const auto at = stem.find("_results_");
    if (at == std::string::npos) {
        return "";
    }
    std::string g = stem.substr(at + 9);
    std::replace(g.begin(), g.end(), '_', ' ');
    return g;
}

} // namespace

std::vector<Measurement> import_cudnn_sdpa(const CsvTable& t, const std::filesystem::path& path,
                                           const ImportOptions& o) {
    std::vector<Measurement> out;
    const bool artifact = t.has_column("forward_time");
    if (artifact) {
        const std::string gpu = gpu_or(o, gpu_from_artifact_name(path), path);
        const bool by_backend = t.has_column("backend");
        const int c_kind = t.column(by_backend ? "backend" : "precision");
        const int c_time = t.column("forward_time");
        for (const auto& r : t.rows) {
            const std::string kind = t.text(r, c_kind);
            // bf16 file: backend pyt_cudnn; fp8 file: precision bf16 (cuDNN)
            if (kind != (by_backend ? "pyt_cudnn" : "bf16") ||
                !truthy(t.text(r, t.column("is_causal")))) {
                continue;
            }
            const double q = t.number(r, t.column("q_seqlen"));
            if (q != t.number(r, t.column("kv_seqlen"))) {
                continue;
            }
            // The bf16 file times torch's SDPA with the cuDNN backend: CUDA events around a
            // PyTorch call also hold its dispatch while the GPU waits (0.102 ms against 0.035 ms
            // for the direct cuDNN call of the fp8 file at 512 tokens), so those rows are
            // host-timed with their own harness offset.
            Measurement m = base(t, r, by_backend ? "cudnn-sdpa-pytorch" : "cudnn-sdpa", gpu);
            m.timing = by_backend ? Timing::Host : Timing::Kernel;
            m.op_class = OpClass::AttentionPrefill;
            m.op = by_backend ? "pyt_cudnn_sdpa_fwd" : "cudnn_sdpa_fwd";
            m.dtype = "bf16";
            m.batch = static_cast<int>(t.number(r, t.column("batch_size")));
            m.tokens = q;
            m.heads = static_cast<int>(t.number(r, t.column("num_q_heads")));
            m.kv_heads = static_cast<int>(t.number(r, t.column("num_kv_heads")));
            m.head_dim = static_cast<int>(t.number(r, t.column("head_dim")));
            m.time_s = t.number(r, c_time) * kMs;
            if (m.batch <= 0 || m.tokens <= 0 || m.heads <= 0 || m.head_dim <= 0 || m.time_s <= 0) {
                t.fail(r, c_time,
                       "batch, lengths, heads, head_dim and forward_time must be positive");
            }
            out.push_back(std::move(m));
        }
        return out;
    }
    const int c_backend = t.column("backend");
    const int c_type = t.column("data_type");
    const int c_mask = t.column("attn_mask");
    const int c_pass = t.column("profile_pass");
    const int c_ok = t.column("success");
    const int c_window = t.column("sliding_window_size");
    const int c_gpu = t.column("gpu_name");
    const bool per_pass = t.has_column("time_ms");
    const int c_time = t.column(per_pass ? "time_ms" : "fwd_time_ms");
    for (const auto& r : t.rows) {
        const std::string pass = t.text(r, c_pass);
        if (t.text(r, c_backend) != "cudnn" || t.text(r, c_type) != "bfloat16" ||
            t.text(r, c_mask) != "top_left" || !truthy(t.text(r, c_ok)) ||
            !t.text(r, c_window).empty() || (per_pass ? pass != "fwd" : pass != "both")) {
            continue;
        }
        const double q = t.number(r, t.column("q_seqlen"));
        if (q != t.number(r, t.column("kv_seqlen"))) {
            continue;
        }
        const std::string gpu = gpu_or(o, t.text(r, c_gpu), path);
        Measurement m = base(t, r, "cudnn-sdpa", gpu);
        m.op_class = OpClass::AttentionPrefill;
        m.op = "cudnn_sdpa_fwd";
        m.dtype = "bf16";
        m.batch = static_cast<int>(t.number(r, t.column("batch_size")));
        m.tokens = q;
        m.heads = static_cast<int>(t.number(r, t.column("num_q_heads")));
        m.kv_heads = static_cast<int>(t.number(r, t.column("num_kv_heads")));
        const double d_qk = t.number(r, t.column("head_dim_qk"));
        const double d_vo = t.number(r, t.column("head_dim_vo"));
        m.head_dim = static_cast<int>((d_qk + d_vo) / 2.0);
        if (2.0 * m.head_dim != d_qk + d_vo) {
            t.fail(r, t.column("head_dim_vo"),
                   "head_dim_qk + head_dim_vo must be even (the point's head_dim is their mean)");
        }
        m.time_s = t.number(r, c_time) * kMs;
        if (m.batch <= 0 || m.tokens <= 0 || m.heads <= 0 || m.head_dim <= 0 || m.time_s <= 0) {
            t.fail(r, c_time, "batch, lengths, heads, head dims and the time must be positive");
        }
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<Measurement> import_cudnn_norms(const CsvTable& t, const std::filesystem::path& path,
                                            const ImportOptions& o) {
    constexpr double kElem = 2.0; // BF16
    const int c_backend = t.column("backend");
    const int c_type = t.column("data_type");
    const int c_ok = t.column("success");
    const int c_norm = t.column("norm_type");
    const int c_time = t.column("fwd_time_ms");
    const int c_gpu = t.column("gpu_name");
    const int c_bias = t.column("has_bias");
    std::vector<Measurement> out;
    for (const auto& r : t.rows) {
        if (t.text(r, c_backend) != "cudnn" || t.text(r, c_type) != "bfloat16" ||
            !truthy(t.text(r, c_ok)) || t.text(r, c_time).empty()) {
            continue;
        }
        const std::string norm = t.text(r, c_norm);
        if (norm != "rms_norm" && norm != "layer_norm") {
            continue;
        }
        const double n = t.number(r, t.column("N"));
        const double c = t.number(r, t.column("C"));
        const double params = truthy(t.text(r, c_bias)) ? 2.0 : 1.0;
        Measurement m = stream_point(base(t, r, "cudnn-norms", gpu_or(o, t.text(r, c_gpu), path)),
                                     "cudnn_" + norm, (2.0 * n * c + params * c) * kElem, "bf16");
        m.time_s = t.number(r, c_time) * kMs;
        if (n <= 0 || c <= 0 || m.time_s <= 0) {
            t.fail(r, c_time, "N, C and fwd_time_ms must be positive");
        }
        out.push_back(std::move(m));
    }
    return out;
}

} // namespace gpuplan::calib::detail
