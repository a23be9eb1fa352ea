#include "calib/importers.hpp"

#include "calib/csv.hpp"
#include "calib/importers_detail.hpp"
#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace gpuplan::calib {
namespace {

namespace fs = std::filesystem;

constexpr double kMs = 1e-3;
constexpr double kUs = 1e-6;
constexpr double kHalf = 2.0; // bytes per FP16/BF16 element

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// Path components, for recognising the data sets' folder layouts.
std::vector<std::string> parts_of(const fs::path& p) {
    std::vector<std::string> out;
    for (const auto& part : p) {
        out.push_back(part.string());
    }
    return out;
}

bool has_part(const fs::path& p, std::string_view name) {
    const auto parts = parts_of(p);
    return std::find(parts.begin(), parts.end(), name) != parts.end();
}

// The folder right after `anchor` in the path ("compute/<this>/..."), or "".
std::string part_after(const fs::path& p, std::string_view anchor) {
    const auto parts = parts_of(p);
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        if (parts[i] == anchor) {
            return parts[i + 1];
        }
    }
    return "";
}

using detail::base;
using detail::comment_gpu;
using detail::gemm_point;
using detail::gpu_or;
using detail::stream_point;

// ---------------------------------------------------------------- Vidur mlp.csv
//
// microsoft/vidur data/profiling/compute/<gpu>/<model>/mlp.csv (SOURCE.md there): per-op CUDA
// kernel time (ms, Kineto) of one transformer layer except attention, FP16, shard of TP degree
// `num_tensor_parallel_workers`, `num_tokens` rows. Shapes follow sarathi-serve's layers:
// QKV column-parallel (q heads/tp + 2 × kv heads/tp outputs, KV heads replicated to 1 when
// fewer than tp), output projection row-parallel, gated MLP up projection fused (2 × ffn/tp
// outputs). Streaming ops move bytes as the step-cost model counts them (step_cost.cpp):
// RMSNorm reads and writes T×h plus the weight; RoPE reads and writes Q and K; SiLU-and-mul
// reads 2 × ffn/tp and writes ffn/tp per token; the residual add reads two and writes one
// T×h tensor; the embedding gathers T rows and writes them.
std::vector<Measurement> import_vidur_mlp(const CsvTable& t, const std::string& gpu) {
    const int c_heads = t.column("n_head");
    const int c_kv = t.column("n_kv_head");
    const int c_h = t.column("n_embd");
    const int c_ffn = t.column("n_expanded_embd");
    const int c_gated = t.column("use_gated_mlp");
    const int c_tokens = t.column("num_tokens");
    const int c_tp = t.column("num_tensor_parallel_workers");
    struct OpCol {
        const char* name;
        int col;
    };
    std::vector<OpCol> ops;
    for (const char* op :
         {"emb", "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
          "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"}) {
        const std::string col = std::string("time_stats.") + op + ".median";
        if (t.has_column(col)) {
            ops.push_back({op, t.column(col)});
        }
    }
    if (ops.empty()) {
        (void)t.column("time_stats.attn_pre_proj.median"); // throws, naming the expected column
    }
    std::vector<Measurement> out;
    for (const auto& r : t.rows) {
        const double heads = t.number(r, c_heads);
        const double kv = t.number(r, c_kv);
        const double h = t.number(r, c_h);
        const double ffn = t.number(r, c_ffn);
        const double tokens = t.number(r, c_tokens);
        const double tp = t.number(r, c_tp);
        const std::string gated_text = lower(t.text(r, c_gated));
        if (gated_text != "true" && gated_text != "false") {
            t.fail(r, c_gated, "expected True or False, found '" + t.text(r, c_gated) + "'");
        }
        const bool gated = gated_text == "true";
        if (heads <= 0 || kv <= 0 || h <= 0 || ffn <= 0 || tokens <= 0 || tp <= 0) {
            t.fail(r, c_tokens, "shape columns must be positive");
        }
        const double hd = h / heads;
        const double q_rank = heads / tp;
        const double kv_rank = std::max(1.0, kv / tp);
        const double ffn_rank = ffn / tp;
        Measurement b = base(t, r, "vidur", gpu);
        b.tp = static_cast<int>(tp);
        for (const auto& [name, col] : ops) {
            if (t.text(r, col).empty()) {
                continue;
            }
            const double ms = t.number(r, col);
            if (ms <= 0) {
                continue;
            }
            b.time_s = ms * kMs;
            const std::string op = name;
            if (op == "attn_pre_proj") {
                out.push_back(gemm_point(b, op, tokens, h, (q_rank + 2 * kv_rank) * hd, "fp16"));
            } else if (op == "attn_post_proj") {
                out.push_back(gemm_point(b, op, tokens, q_rank * hd, h, "fp16"));
            } else if (op == "mlp_up_proj") {
                out.push_back(gemm_point(b, op, tokens, h, (gated ? 2.0 : 1.0) * ffn_rank, "fp16"));
            } else if (op == "mlp_down_proj") {
                out.push_back(gemm_point(b, op, tokens, ffn_rank, h, "fp16"));
            } else if (op == "input_layernorm" || op == "post_attention_layernorm") {
                out.push_back(stream_point(b, op, 2 * tokens * h * kHalf + h * kHalf, "fp16"));
            } else if (op == "attn_rope") {
                out.push_back(
                    stream_point(b, op, 2 * tokens * (q_rank + kv_rank) * hd * kHalf, "fp16"));
            } else if (op == "mlp_act") {
                out.push_back(
                    stream_point(b, op, tokens * (gated ? 3.0 : 2.0) * ffn_rank * kHalf, "fp16"));
            } else if (op == "add") {
                out.push_back(stream_point(b, op, 3 * tokens * h * kHalf, "fp16"));
            } else if (op == "emb") {
                out.push_back(stream_point(b, op, tokens * h * 2 * kHalf, "fp16"));
            }
        }
    }
    return out;
}

// ---------------------------------------------------------------- Vidur network
//
// microsoft/vidur data/profiling/network/<node>/{all_reduce,send_recv}.csv: NCCL kernel time
// (ms, median of 11 launches) of one collective over `num_workers` ranks, `devices_per_node`
// of them per node, message `size` bytes (FP16). The node types and their links come from
// Vidur's docs/profiling.md (SOURCE.md): DGX nodes all-to-all over NVSwitch; the pairwise
// nodes have NVLink bridges between GPUs 0-1 and 2-3 only, so 4-GPU groups cross PCIe. The
// inter-node fabric of the 2-node rows is not documented, and the data rule out one InfiniBand
// port per GPU (a cross-node send/recv peaks at 7.8 GB/s on the A100 DGX, not ~25 GB/s), so
// their link is left empty: they are imported, fitted per link as alpha-beta, but not
// predicted.
struct NodeType {
    const char* folder;
    const char* gpu;
    const char* scale_up; // intra-node link of a 2-GPU group
    const char* four_gpu; // intra-node link of a group of 4 or more
    const char* network;  // across nodes
};
constexpr std::array kNodeTypes = {
    NodeType{"a100_dgx", "a100-sxm-80gb", "nvswitch-nvlink3", "nvswitch-nvlink3", ""},
    NodeType{"h100_dgx", "h100-sxm", "nvswitch-nvlink4", "nvswitch-nvlink4", ""},
    NodeType{"a100_pairwise_nvlink", "a100-pcie-80gb", "nvlink-bridge-a100", "pcie4-x16", ""},
    NodeType{"h100_pairwise_nvlink", "h100-nvl", "nvlink-bridge-h100", "pcie5-x16", ""},
    NodeType{"a40_pairwise_nvlink", "a40", "", "pcie4-x16", ""},
};

std::vector<Measurement> import_vidur_network(const CsvTable& t, const fs::path& path,
                                              const ImportOptions& o) {
    const std::string folder = part_after(path, "network");
    const NodeType* node = nullptr;
    for (const auto& n : kNodeTypes) {
        if (folder == n.folder) {
            node = &n;
        }
    }
    const std::string gpu = gpu_or(o, node ? node->gpu : "", path);
    const int c_workers = t.column("num_workers");
    const int c_size = t.column("size");
    const int c_coll = t.column("collective");
    const int c_dpn = t.column("devices_per_node");
    std::vector<Measurement> out;
    for (const auto& r : t.rows) {
        const std::string coll = t.text(r, c_coll);
        OpClass cls;
        if (coll == "all_reduce") {
            cls = OpClass::AllReduce;
        } else if (coll == "send_recv") {
            cls = OpClass::SendRecv;
        } else {
            t.fail(r, c_coll, "expected all_reduce or send_recv, found '" + coll + "'");
        }
        const int time_col = t.column("time_stats." + coll + ".median");
        const double workers = t.number(r, c_workers);
        const double dpn = t.number(r, c_dpn);
        const double size = t.number(r, c_size);
        const double ms = t.number(r, time_col);
        if (workers < 1 || dpn < 1 || size <= 0) {
            t.fail(r, c_workers, "num_workers, devices_per_node and size must be positive");
        }
        if (ms <= 0) {
            continue;
        }
        Measurement m = base(t, r, "vidur", gpu);
        m.op_class = cls;
        m.op = coll;
        m.bytes = size;
        m.dtype = "fp16";
        m.tp = static_cast<int>(workers);
        m.nodes = static_cast<int>(std::ceil(workers / dpn));
        if (node) {
            m.link = m.nodes > 1 ? node->network : (dpn >= 4 ? node->four_gpu : node->scale_up);
        }
        m.time_s = ms * kMs;
        out.push_back(std::move(m));
    }
    return out;
}

// ---------------------------------------------------------------- BLIS (inference-sim)
//
// bench_data/gemm/h100/data.csv: m,k,n,latency_us (Kineto kernel time) of DeepGEMM fp8_gemm_nt,
// i.e. FP8 E4M3 inputs (SOURCE.md: the mfu column is normalised to the 1979 TFLOPS FP8 peak).
std::vector<Measurement> import_blis_gemm(const CsvTable& t, const fs::path& path,
                                          const ImportOptions& o) {
    const std::string gpu = gpu_or(o, has_part(path, "h100") ? "h100-sxm" : "", path);
    const int cm = t.column("m");
    const int ck = t.column("k");
    const int cn = t.column("n");
    const int cl = t.column("latency_us");
    std::vector<Measurement> out;
    for (const auto& r : t.rows) {
        Measurement m = gemm_point(base(t, r, "blis", gpu), "deepgemm_fp8_gemm_nt", t.number(r, cm),
                                   t.number(r, ck), t.number(r, cn), "fp8");
        m.time_s = t.number(r, cl) * kUs;
        if (m.m <= 0 || m.k <= 0 || m.n <= 0 || m.time_s <= 0) {
            t.fail(r, cl, "m, k, n and latency_us must be positive");
        }
        out.push_back(std::move(m));
    }
    return out;
}

// bench_data/mha/prefill/h100/<q>-<kv>-<d>.csv (dtype,seq_len,latency_us): one causal
// FlashAttention-3 prefill of a single sequence, all heads; decode/h100/<q>-<kv>-<d>-tpN.csv
// (dtype,kv_dtype,batch_size,kv_len,latency_us): one FlashInfer paged decode step with the heads
// divided by N. Both host-timed means (torch.utils.benchmark), so they include launch overhead.
std::vector<Measurement> import_blis_mha(const CsvTable& t, const fs::path& path,
                                         const ImportOptions& o) {
    const std::string gpu = gpu_or(o, has_part(path, "h100") ? "h100-sxm" : "", path);
    const std::string stem = path.stem().string();
    int q = 0, kv = 0, d = 0, tp = 1;
    {
        std::string s = stem;
        std::replace(s.begin(), s.end(), '-', ' ');
        std::istringstream in(s);
        std::string tp_part;
        in >> q >> kv >> d >> tp_part;
        if (!tp_part.empty()) {
            if (tp_part.rfind("tp", 0) != 0 || std::sscanf(tp_part.c_str() + 2, "%d", &tp) != 1) {
                tp = 0;
            }
        }
        if (q <= 0 || kv <= 0 || d <= 0 || tp <= 0) {
            throw InputError(path.string() +
                             ": the file name must give the attention shape as "
                             "<q_heads>-<kv_heads>-<head_dim>[-tpN].csv, found '" +
                             stem + "'");
        }
    }
    const bool decode = t.has_column("kv_len");
    const int c_dtype = t.column("dtype");
    const int c_lat = t.column("latency_us");
    std::vector<Measurement> out;
    for (const auto& r : t.rows) {
        Measurement m = base(t, r, "blis-mha", gpu);
        m.timing = Timing::Host;
        m.dtype = t.text(r, c_dtype);
        m.heads = q / tp;
        m.kv_heads = std::max(1, kv / tp);
        m.head_dim = d;
        m.tp = tp;
        m.time_s = t.number(r, c_lat) * kUs;
        if (decode) {
            m.op_class = OpClass::AttentionDecode;
            m.op = "flashinfer_decode";
            m.batch = static_cast<int>(t.number(r, t.column("batch_size")));
            m.tokens = 1;
            m.context = t.number(r, t.column("kv_len"));
        } else {
            m.op_class = OpClass::AttentionPrefill;
            m.op = "fa3_prefill";
            m.batch = 1;
            m.tokens = t.number(r, t.column("seq_len"));
            m.context = 0;
        }
        if (m.time_s <= 0 || m.batch <= 0 || (decode ? m.context : m.tokens) <= 0) {
            t.fail(r, c_lat, "batch, lengths and latency_us must be positive");
        }
        out.push_back(std::move(m));
    }
    return out;
}

// ---------------------------------------------------------------- LLMCompass
//
// ae/figure5/**/real_hardware/<op>_<GPU>.csv, no header (columns as the plot scripts name them,
// SOURCE.md). PyTorch ops timed on the host (median, with synchronize), FP16. "A100" is taken as
// the 80 GB SXM part that LLMCompass's simulator models (A100_80GB_fp16).
// - matmul: M, N, K, "<ms>ms", "<T>Tflops" for [M,K] x [K,N].
// - softmax, layernorm: M, N, G elements/s over an M×N FP16 tensor: read and write, 4 bytes
//   per element.
// - gelu: M elements, G elements/s: read and write, 4 bytes per element.
// - transformer(AR): one GPT-3 175B layer on TP4, batch 8 (test_transformer.py): prefill of
//   2048 tokens per sequence; decode of one token at 3072 context. Rows: Q_K_V (3 x the measured
//   Q projection), Q_mul_K, A_mul_V, Wo_proj, W1_proj, W2_proj, Softmax, LayerNorm_MHA,
//   LayerNorm_FFN, GeLU, AllReduce_MHA, AllReduce_FFN. The unfused attention matmuls (not
//   FlashAttention, full rather than causal scores) and the hand-added all-reduce rows of
//   undocumented provenance are not imported. LayerNorm has launch overhead subtracted.
std::vector<Measurement> import_llmcompass(const CsvTable& t, const fs::path& path,
                                           const ImportOptions& o) {
    const std::string name = path.stem().string();
    const auto us = name.rfind('_');
    const std::string op = lower(name.substr(0, us));
    const std::string chip = us == std::string::npos ? "" : lower(name.substr(us + 1));
    const std::string gpu = gpu_or(o,
                                   chip == "a100"    ? "a100-sxm-80gb"
                                   : chip == "mi210" ? "mi210"
                                                     : "",
                                   path);
    std::vector<Measurement> out;
    auto point = [&](const CsvRow& r) {
        Measurement m = base(t, r, "llmcompass", gpu);
        m.timing = Timing::Host;
        m.dtype = "fp16";
        return m;
    };
    if (op == "matmul") {
        for (const auto& r : t.rows) {
            if (r.cells.size() < 4) {
                t.fail(r, 0, "expected M, N, K, latency (e.g. '0.19ms'), throughput");
            }
            Measurement m = gemm_point(point(r), "torch.matmul", t.number(r, 0), t.number(r, 2),
                                       t.number(r, 1), "fp16");
            m.time_s = t.number_with_suffix(r, 3, "ms") * kMs;
            out.push_back(std::move(m));
        }
    } else if (op == "softmax" || op == "layernorm") {
        for (const auto& r : t.rows) {
            if (r.cells.size() != 3) {
                t.fail(r, 0, "expected M, N, throughput (G elements/s)");
            }
            const double elems = t.number(r, 0) * t.number(r, 1);
            const double rate = t.number(r, 2) * 1e9;
            if (elems <= 0 || rate <= 0) {
                t.fail(r, 2, "M, N and throughput must be positive");
            }
            Measurement m = stream_point(point(r), op, 2 * kHalf * elems, "fp16");
            m.time_s = elems / rate;
            out.push_back(std::move(m));
        }
    } else if (op == "gelu") {
        for (const auto& r : t.rows) {
            if (r.cells.size() != 2) {
                t.fail(r, 0, "expected M (elements), throughput (G elements/s)");
            }
            const double elems = t.number(r, 0);
            const double rate = t.number(r, 1) * 1e9;
            if (elems <= 0 || rate <= 0) {
                t.fail(r, 1, "M and throughput must be positive");
            }
            Measurement m = stream_point(point(r), op, 2 * kHalf * elems, "fp16");
            m.time_s = elems / rate;
            out.push_back(std::move(m));
        }
    } else if (op == "transformer" || op == "transformerar") {
        if (t.rows.size() != 12) {
            throw InputError(t.file +
                             ": expected the 12 rows of LLMCompass's layer breakdown "
                             "(Q_K_V ... AllReduce_FFN), found " +
                             std::to_string(t.rows.size()));
        }
        // test_transformer.py: d_model 12288, 96 heads, batch 8, TP 4.
        constexpr double d = 12288, tp = 4, batch = 8, heads = 96, seq = 2048, ctx = 3072;
        const bool decode = op == "transformerar";
        const double tokens = decode ? batch : batch * seq;
        auto at = [&](int i) {
            const auto& r = t.rows[static_cast<std::size_t>(i)];
            const double v = t.number(r, 0);
            if (v <= 0) {
                t.fail(r, 0, "expected a positive time in seconds");
            }
            Measurement m = point(r);
            m.tp = static_cast<int>(tp);
            m.time_s = v;
            return m;
        };
        Measurement qkv = gemm_point(at(0), "Q_proj", tokens, d, d / tp, "fp16");
        qkv.time_s /= 3.0; // the file holds 3 x one measured Q projection
        out.push_back(qkv);
        out.push_back(gemm_point(at(3), "Wo_proj", tokens, d / tp, d, "fp16"));
        out.push_back(gemm_point(at(4), "W1_proj", tokens, d, 4 * d / tp, "fp16"));
        out.push_back(gemm_point(at(5), "W2_proj", tokens, 4 * d / tp, d, "fp16"));
        const double scores = batch * heads / tp * (decode ? ctx : seq * seq);
        out.push_back(stream_point(at(6), "Softmax", 2 * kHalf * scores, "fp16"));
        for (int i : {7, 8}) {
            Measurement ln = stream_point(at(i), i == 7 ? "LayerNorm_MHA" : "LayerNorm_FFN",
                                          2 * kHalf * tokens * d + kHalf * d, "fp16");
            ln.timing = Timing::Kernel; // launch overhead already subtracted (SOURCE.md)
            out.push_back(ln);
        }
        out.push_back(stream_point(at(9), "GeLU", 2 * kHalf * tokens * 4 * d / tp, "fp16"));
    } else {
        throw InputError(path.string() +
                         ": not an LLMCompass measurement file; expected "
                         "matmul_, softmax_, layernorm_, gelu_ or transformer[AR]_<GPU>.csv");
    }
    return out;
}

// ---------------------------------------------------------------- LLMServingSim
//
// profiler/v0/perf_models/<GPU>/<org>/<model>/tp<N>/attention.csv: FlashAttention kernel time
// (ms, median) of one layer's TP shard (SOURCE.md). Prefill rows: one sequence,
// `prefill_chunk_size` new tokens, `kv_cache_size` tokens in the cache including the chunk
// (the rows start at kv_cache_size = chunk). Decode rows: `batch_size` sequences sharing
// `kv_cache_size` cached tokens in total, so each is at kv_cache_size / batch_size context. The
// total reading is forced by the data: at 16384 cached tokens per sequence, 32 sequences would
// read 537 MB in 51.6 us (10 TB/s, three times H100's HBM), and at a fixed kv_cache_size the
// time halves from batch 1 to batch 2. layers.csv: per-op kernel time (ns) of HF-transformers Llama
// ops for `input` tokens; only the GEMMs are imported (the norms, RoPE and activation are unfused
// eager PyTorch, far slower than serving engines' kernels, per SOURCE.md). Model shapes come
// from the model folder (the catalog entries hwdb/models/llama-3.1-{8b,70b}.yaml).
struct LlamaShape {
    const char* folder;
    double h, heads, kv, ffn, vocab;
};
constexpr std::array kLlamaShapes = {
    LlamaShape{"Llama-3.1-8B", 4096, 32, 8, 14336, 128256},
    LlamaShape{"Llama-3.1-70B", 8192, 64, 8, 28672, 128256},
};

std::vector<Measurement> import_llmservingsim(const CsvTable& t, const fs::path& path,
                                              const ImportOptions& o) {
    const std::string chip = part_after(path, "perf_models");
    const std::string gpu = gpu_or(o, chip == "H100" ? "h100-sxm" : "", path);
    std::vector<Measurement> out;
    if (t.has_column("is_prefill")) {
        const int c_h = t.column("n_embd");
        const int c_q = t.column("n_q_head");
        const int c_kv = t.column("n_kv_head");
        const int c_tp = t.column("num_tensor_parallel_workers");
        const int c_b = t.column("batch_size");
        const int c_chunk = t.column("prefill_chunk_size");
        const int c_cache = t.column("kv_cache_size");
        const int c_pf = t.column("is_prefill");
        const int c_tpre = t.column("time_stats.attn_prefill.median");
        const int c_tdec = t.column("time_stats.attn_decode.median");
        for (const auto& r : t.rows) {
            const double h = t.number(r, c_h);
            const double q = t.number(r, c_q);
            const double kv = t.number(r, c_kv);
            const double tp = t.number(r, c_tp);
            if (h <= 0 || q <= 0 || kv <= 0 || tp <= 0) {
                t.fail(r, c_h, "shape columns must be positive");
            }
            const bool prefill = lower(t.text(r, c_pf)) == "true";
            Measurement m = base(t, r, "llmservingsim", gpu);
            m.heads = static_cast<int>(q / tp);
            m.kv_heads = static_cast<int>(std::max(1.0, kv / tp));
            m.head_dim = static_cast<int>(h / q);
            m.tp = static_cast<int>(tp);
            m.dtype = "fp16";
            m.batch = static_cast<int>(t.number(r, c_b));
            const double cache = t.number(r, c_cache);
            if (prefill) {
                m.op_class = OpClass::AttentionPrefill;
                m.op = "flash_attn_prefill";
                m.tokens = t.number(r, c_chunk);
                m.context = std::max(0.0, cache - m.tokens);
                m.time_s = t.number(r, c_tpre) * kMs;
            } else {
                m.op_class = OpClass::AttentionDecode;
                m.op = "flash_attn_decode";
                m.tokens = 1;
                m.context = m.batch > 0 ? std::floor(cache / m.batch) : 0.0;
                m.time_s = t.number(r, c_tdec) * kMs;
            }
            if (m.batch <= 0 || m.time_s <= 0 || (prefill ? m.tokens : m.context) <= 0) {
                continue;
            }
            out.push_back(std::move(m));
        }
        return out;
    }
    const std::string model_folder = path.parent_path().parent_path().filename().string();
    const LlamaShape* shape = nullptr;
    for (const auto& s : kLlamaShapes) {
        if (model_folder == s.folder) {
            shape = &s;
        }
    }
    if (!shape) {
        throw InputError(path.string() + ": no known model shape for folder '" + model_folder +
                         "'; this importer knows Llama-3.1-8B and Llama-3.1-70B");
    }
    const int c_name = t.column("layer_name");
    const int c_in = t.column("input");
    const int c_tp = t.column("tp_size");
    const int c_lat = t.column("latency(ns)");
    for (const auto& r : t.rows) {
        const std::string name = t.text(r, c_name);
        const double tokens = t.number(r, c_in);
        const double tp = t.number(r, c_tp);
        const double ns = t.number(r, c_lat);
        if (tokens <= 0 || tp <= 0 || ns <= 0) {
            continue;
        }
        const double hd = shape->h / shape->heads;
        const double q = shape->heads / tp * hd;
        const double kv = std::max(1.0, shape->kv / tp) * hd;
        const double ffn = shape->ffn / tp;
        double k = 0, n = 0;
        if (name == "q_proj") {
            k = shape->h, n = q;
        } else if (name == "k_proj" || name == "v_proj") {
            k = shape->h, n = kv;
        } else if (name == "o_proj") {
            k = q, n = shape->h;
        } else if (name == "gate_proj" || name == "up_proj") {
            k = shape->h, n = ffn;
        } else if (name == "down_proj") {
            k = ffn, n = shape->h;
        } else if (name == "lm_head") {
            k = shape->h, n = shape->vocab / tp;
        } else {
            continue;
        }
        Measurement m = gemm_point(base(t, r, "llmservingsim", gpu), name, tokens, k, n, "fp16");
        m.tp = static_cast<int>(tp);
        m.time_s = ns * 1e-9;
        out.push_back(std::move(m));
    }
    return out;
}

// ---------------------------------------------------------------- torch_profile.py
//
// Header op,m,n,k,dtype,batch,seq,time_us; '# gpu: <torch device name>' comment. Ops:
// matmul ([m,k] x [k,n]), sdpa_prefill (batch sequences of seq tokens, causal, n heads of
// dimension k), sdpa_decode (batch sequences, one query token over seq cached tokens, n heads
// of dimension k), copy (m elements of dtype read and written). Times are CUDA-event means over
// back-to-back calls.
std::vector<Measurement> import_torch(const CsvTable& t, const fs::path& path,
                                      const ImportOptions& o) {
    const std::string gpu = gpu_or(o, comment_gpu(t), path);
    const int c_op = t.column("op");
    const int cm = t.column("m");
    const int cn = t.column("n");
    const int ck = t.column("k");
    const int c_dtype = t.column("dtype");
    const int c_batch = t.column("batch");
    const int c_seq = t.column("seq");
    const int c_time = t.column("time_us");
    std::vector<Measurement> out;
    for (const auto& r : t.rows) {
        const std::string op = t.text(r, c_op);
        Measurement m = base(t, r, "torch", gpu);
        m.dtype = lower(t.text(r, c_dtype));
        m.time_s = t.number(r, c_time) * kUs;
        if (m.time_s <= 0) {
            t.fail(r, c_time, "expected a positive time in microseconds");
        }
        m.op = op;
        if (op == "matmul") {
            m = gemm_point(m, op, t.number(r, cm), t.number(r, ck), t.number(r, cn), m.dtype);
        } else if (op == "sdpa_prefill" || op == "sdpa_decode") {
            const bool prefill = op == "sdpa_prefill";
            m.op_class = prefill ? OpClass::AttentionPrefill : OpClass::AttentionDecode;
            m.batch = static_cast<int>(t.number(r, c_batch));
            m.heads = static_cast<int>(t.number(r, cn));
            m.kv_heads = m.heads;
            m.head_dim = static_cast<int>(t.number(r, ck));
            m.tokens = prefill ? t.number(r, c_seq) : 1.0;
            m.context = prefill ? 0.0 : t.number(r, c_seq);
        } else if (op == "copy") {
            const double bytes_per = m.dtype == "fp32"                       ? 4.0
                                     : m.dtype == "fp8" || m.dtype == "int8" ? 1.0
                                                                             : 2.0;
            m = stream_point(m, op, 2.0 * bytes_per * t.number(r, cm), m.dtype);
        } else {
            t.fail(r, c_op,
                   "unknown op '" + op + "'; expected matmul, sdpa_prefill, sdpa_decode or copy");
        }
        out.push_back(std::move(m));
    }
    return out;
}

std::string first_line_of(const fs::path& path) {
    // Only the first data line matters: look at 1 MiB at most, so that a device or a pipe
    // without line breaks cannot fill memory (read_csv bounds the whole file later).
    constexpr std::size_t kMaxPeek = std::size_t{1} << 20;
    std::ifstream in(path, std::ios::binary);
    std::string line;
    char c = 0;
    for (std::size_t n = 0; n < kMaxPeek && in.get(c); ++n) {
        if (c != '\n') {
            line += c;
        } else if (!line.empty() && line.front() != '#') {
            return line;
        } else {
            line.clear();
        }
    }
    return line;
}

} // namespace

const char* to_string(Format f) {
    switch (f) {
    case Format::Auto: return "auto";
    case Format::VidurMlp: return "vidur-mlp";
    case Format::VidurNetwork: return "vidur-network";
    case Format::BlisGemm: return "blis-gemm";
    case Format::BlisMha: return "blis-mha";
    case Format::LlmCompass: return "llmcompass";
    case Format::LlmServingSim: return "llmservingsim";
    case Format::Torch: return "torch";
    case Format::TritonCublas: return "triton-cublas";
    case Format::CudnnSdpa: return "cudnn-sdpa";
    case Format::CudnnNorms: return "cudnn-norms";
    case Format::AzureBench: return "azure-bench";
    case Format::AiterGemm: return "aiter-gemm";
    case Format::AiterMoe: return "aiter-moe";
    case Format::TorchaoMoe: return "torchao-moe";
    case Format::FusedMoe: return "fused-moe";
    }
    return "auto";
}

std::optional<Format> find_format(std::string_view name) {
    for (auto f : {Format::Auto, Format::VidurMlp, Format::VidurNetwork, Format::BlisGemm,
                   Format::BlisMha, Format::LlmCompass, Format::LlmServingSim, Format::Torch,
                   Format::TritonCublas, Format::CudnnSdpa, Format::CudnnNorms, Format::AzureBench,
                   Format::AiterGemm, Format::AiterMoe, Format::TorchaoMoe, Format::FusedMoe}) {
        if (name == to_string(f)) {
            return f;
        }
    }
    return std::nullopt;
}

std::optional<Format> detect_format(const fs::path& path, std::string_view first_line) {
    if (const auto f = detail::detect_kernel_set_format(path, first_line)) {
        return f;
    }
    if (path.extension() != ".csv") {
        return std::nullopt;
    }
    const std::string name = path.filename().string();
    const std::string line(first_line);
    if (line.find("time_stats.attn_pre_proj") != std::string::npos ||
        line.find("time_stats.mlp_up_proj") != std::string::npos) {
        return Format::VidurMlp;
    }
    if (line.find("time_stats.all_reduce") != std::string::npos ||
        line.find("time_stats.send_recv") != std::string::npos) {
        return Format::VidurNetwork;
    }
    if (line.rfind("m,k,n,latency_us", 0) == 0) {
        return Format::BlisGemm;
    }
    if (line.rfind("dtype,", 0) == 0 && line.find("latency_us") != std::string::npos) {
        return Format::BlisMha;
    }
    if (line.rfind("op,m,n,k,dtype,batch,seq,time_us", 0) == 0) {
        return Format::Torch;
    }
    if (line.rfind("op,tokens,hidden,ffn,experts,top_k,matrices,dtype,time_us", 0) == 0) {
        return Format::FusedMoe;
    }
    if (line.find("time_stats.attn_prefill") != std::string::npos ||
        line.rfind("layer_name,input,kv_cache,tp_size", 0) == 0) {
        return Format::LlmServingSim;
    }
    if (has_part(path, "real_hardware")) {
        for (const char* p :
             {"matmul_", "softmax_", "layernorm_", "gelu_", "transformer_", "transformerAR_"}) {
            if (name.rfind(p, 0) == 0) {
                return Format::LlmCompass;
            }
        }
    }
    return std::nullopt;
}

std::vector<Measurement> import_file(const fs::path& path, Format format,
                                     const ImportOptions& options) {
    if (format == Format::Auto) {
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) {
            throw InputError(path.string() + ": not a readable file; check the path");
        }
        const auto f = detect_format(path, first_line_of(path));
        if (!f) {
            throw InputError(path.string() +
                             ": cannot tell the file's format from its name and "
                             "header; pass --format (vidur-mlp, vidur-network, "
                             "blis-gemm, blis-mha, llmcompass, llmservingsim, torch, "
                             "triton-cublas, cudnn-sdpa, cudnn-norms, azure-bench, aiter-gemm, "
                             "aiter-moe, torchao-moe, fused-moe)");
        }
        format = *f;
    }
    if (format == Format::AzureBench) {
        return detail::import_azure_results(path, options); // Markdown, not CSV
    }
    if (format == Format::TorchaoMoe) {
        return detail::import_torchao_moe(path, options); // Markdown, not CSV
    }
    const bool header = format != Format::LlmCompass;
    const CsvTable t = read_csv(path, header);
    switch (format) {
    case Format::VidurMlp: {
        std::string inferred;
        const std::string chip = part_after(path, "compute");
        if (chip == "a100") {
            inferred = "a100-sxm-80gb"; // Vidur: A100 80GB (DGX and pairwise nodes alike)
        } else if (chip == "h100") {
            inferred = "h100-sxm"; // Vidur: from an H100 DGX
        }
        return import_vidur_mlp(t, gpu_or(options, inferred, path));
    }
    case Format::VidurNetwork: return import_vidur_network(t, path, options);
    case Format::BlisGemm: return import_blis_gemm(t, path, options);
    case Format::BlisMha: return import_blis_mha(t, path, options);
    case Format::LlmCompass: return import_llmcompass(t, path, options);
    case Format::LlmServingSim: return import_llmservingsim(t, path, options);
    case Format::Torch: return import_torch(t, path, options);
    case Format::TritonCublas: return detail::import_triton_cublas(t, path, options);
    case Format::CudnnSdpa: return detail::import_cudnn_sdpa(t, path, options);
    case Format::CudnnNorms: return detail::import_cudnn_norms(t, path, options);
    case Format::AiterGemm: return detail::import_aiter_gemm(t, path, options);
    case Format::AiterMoe: return detail::import_aiter_moe(t, path, options);
    case Format::FusedMoe: return detail::import_fused_moe(t, path, options);
    case Format::AzureBench:
    case Format::TorchaoMoe:
    case Format::Auto: break;
    }
    throw InternalError("import_file: unhandled format");
}

ImportResult import_paths(const std::vector<fs::path>& paths, Format format,
                          const ImportOptions& options) {
    ImportResult result;
    std::vector<std::string> citations;
    auto read_one = [&](const fs::path& f, Format fmt) {
        auto pts = import_file(f, fmt, options);
        result.points.insert(result.points.end(), std::make_move_iterator(pts.begin()),
                             std::make_move_iterator(pts.end()));
        result.files.push_back(f.string());
        citations.push_back(source_citation(f));
    };
    for (const auto& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            std::vector<fs::path> files;
            for (const auto& e : fs::recursive_directory_iterator(p)) {
                if (e.is_regular_file()) {
                    files.push_back(e.path());
                }
            }
            std::sort(files.begin(), files.end());
            for (const auto& f : files) {
                const auto detected = detect_format(f, first_line_of(f));
                if (!detected || (format != Format::Auto && *detected != format)) {
                    result.skipped.push_back(f.string());
                    continue;
                }
                read_one(f, *detected);
            }
        } else if (fs::exists(p, ec)) {
            read_one(p, format);
        } else {
            throw InputError(p.string() + ": no such file or folder; check the path");
        }
    }
    result.sources = std::move(citations);
    return result;
}

std::string source_citation(const fs::path& path) {
    std::error_code ec;
    const fs::path abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
    for (fs::path dir = abs.parent_path(); !dir.empty(); dir = dir.parent_path()) {
        const fs::path src = dir / "SOURCE.md";
        if (fs::is_regular_file(src, ec)) {
            const std::string c =
                detail::citation_from_source_md(hwdb::read_text_file(src, "SOURCE.md"),
                                                fs::relative(abs, dir, ec).generic_string());
            if (!c.empty()) {
                return c;
            }
            break;
        }
        if (dir == dir.root_path()) {
            break;
        }
    }
    return path.generic_string();
}

namespace detail {

std::string comment_gpu(const CsvTable& t) {
    std::string named;
    for (const auto& c : t.comments) {
        if (c.rfind("gpu:", 0) == 0) {
            named = c.substr(4);
            while (!named.empty() && named.front() == ' ') {
                named.erase(0, 1);
            }
        }
    }
    return named;
}

std::string gpu_or(const ImportOptions& o, const std::string& inferred, const fs::path& file) {
    if (!o.gpu.empty()) {
        return o.gpu;
    }
    if (inferred.empty()) {
        throw InputError(file.string() + ": cannot tell which GPU the data was measured on; pass "
                                         "--gpu NAME (an hwdb accelerator, e.g. h100-sxm)");
    }
    return inferred;
}

Measurement base(const CsvTable& t, const CsvRow& r, const std::string& source,
                 const std::string& gpu) {
    Measurement m;
    m.source = source;
    m.source_file = t.file;
    m.row = r.line;
    m.gpu = gpu;
    return m;
}

Measurement gemm_point(Measurement m, std::string op, double rows, double k, double n,
                       std::string dtype) {
    m.op_class = OpClass::Gemm;
    m.op = std::move(op);
    m.m = rows;
    m.k = k;
    m.n = n;
    m.dtype = std::move(dtype);
    return m;
}

Measurement stream_point(Measurement m, std::string op, double bytes, std::string dtype) {
    m.op_class = OpClass::MemoryBound;
    m.op = std::move(op);
    m.bytes = bytes;
    m.dtype = std::move(dtype);
    return m;
}

} // namespace detail

} // namespace gpuplan::calib
