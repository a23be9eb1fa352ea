// GEMM throughput through cuBLASLt over the linear-layer shapes of Llama-3.1 8B and 70B.
#include "calib/cuda/kernels.hpp"
#include "calib/cuda/sections.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>

namespace gpuplan::calib::bench {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
// cuBLAS recommends a 32 MiB workspace on Hopper (cuBLAS documentation, cublasSetWorkspace).
constexpr std::size_t kWorkspaceBytes = 32 * kMiB;

struct GemmType {
    const char* name; // Measurement::dtype
    FillType fill;
    cudaDataType_t ab; // A and B (weights and activations)
    cudaDataType_t cd; // C and D (output)
    cublasComputeType_t compute;
    cudaDataType_t scale; // alpha and beta
    std::size_t ab_bytes;
    std::size_t cd_bytes;
    const char* unit;
};

// FP8: e4m3 inputs, bf16 output, fp32 accumulation with per-tensor scale pointers, as FP8
// serving does (vLLM, TensorRT-LLM). INT8: int32 accumulation and output (IMMA).
constexpr GemmType kBf16{
    "bf16", FillType::Bf16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2,
    2,      "TFLOPS"};
constexpr GemmType kFp16{
    "fp16", FillType::Fp16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2, "TFLOPS"};
constexpr GemmType kFp8{
    "fp8", FillType::Fp8E4m3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1,
    2,     "TFLOPS"};
constexpr GemmType kInt8{
    "int8", FillType::Int8, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, 1, 4, "TOPS"};

bool is_fp8(const GemmType& t) {
    return t.ab == CUDA_R_8F_E4M3;
}
bool is_int(const GemmType& t) {
    return t.compute == CUBLAS_COMPUTE_32I;
}

std::string status_text(cublasStatus_t st) {
    return std::string(cublasLtGetStatusString(st)) + " (" + std::to_string(static_cast<int>(st)) +
           ")";
}

void check_lt(cublasStatus_t st, const std::string& what) {
    if (st != CUBLAS_STATUS_SUCCESS) {
        throw CudaError(what + ": " + status_text(st));
    }
}

// The linear layers of one catalog model (hwdb/models/llama-3.1-*.yaml), sharded for TP:
// QKV and gate+up are column-parallel (N / tp; KV heads never below one per GPU), O and down
// row-parallel (K / tp), as in Megatron-LM (Shoeybi et al. 2019) and vLLM.
struct ModelDims {
    const char* name;
    long hidden, heads, kv_heads, head_dim, ffn;
};
constexpr ModelDims kLlama8b{"llama-3.1-8b", 4096, 32, 8, 128, 14336};
constexpr ModelDims kLlama70b{"llama-3.1-70b", 8192, 64, 8, 128, 28672};

struct LayerShape {
    std::string model;
    std::string op;
    int tp = 1;
    long n = 0;
    long k = 0;
};

std::vector<LayerShape> layer_shapes(bool quick) {
    std::vector<std::pair<ModelDims, int>> cuts;
    if (quick) {
        cuts = {{kLlama8b, 1}, {kLlama70b, 1}, {kLlama70b, 8}};
    } else {
        for (const auto& m : {kLlama8b, kLlama70b}) {
            for (int tp : {1, 2, 4, 8}) {
                cuts.emplace_back(m, tp);
            }
        }
    }
    std::vector<LayerShape> out;
    for (const auto& [m, tp] : cuts) {
        const long q_heads = m.heads / tp;
        const long kv_heads = std::max(1L, m.kv_heads / tp);
        const LayerShape layers[] = {
            {m.name, "qkv_proj", tp, (q_heads + 2 * kv_heads) * m.head_dim, m.hidden},
            {m.name, "o_proj", tp, m.hidden, q_heads * m.head_dim},
            {m.name, "gate_up_proj", tp, 2 * m.ffn / tp, m.hidden},
            {m.name, "down_proj", tp, m.hidden, m.ffn / tp},
        };
        for (const auto& l : layers) {
            const bool seen = std::any_of(out.begin(), out.end(), [&](const LayerShape& o) {
                return o.n == l.n && o.k == l.k;
            });
            if (!seen) {
                out.push_back(l);
            }
        }
    }
    return out;
}

std::size_t round_up(std::size_t v, std::size_t to) {
    return (v + to - 1) / to * to;
}

class LtHandle {
  public:
    LtHandle() { check_lt(cublasLtCreate(&handle_), "cublasLtCreate"); }
    LtHandle(const LtHandle&) = delete;
    LtHandle& operator=(const LtHandle&) = delete;
    ~LtHandle() { cublasLtDestroy(handle_); }
    [[nodiscard]] cublasLtHandle_t get() const { return handle_; }

  private:
    cublasLtHandle_t handle_ = nullptr;
};

// The descriptors of one problem.
struct LtPlan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr;
    cublasLtMatrixLayout_t b = nullptr;
    cublasLtMatrixLayout_t d = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    LtPlan() = default;
    LtPlan(const LtPlan&) = delete;
    LtPlan& operator=(const LtPlan&) = delete;
    ~LtPlan() {
        if (pref != nullptr) {
            cublasLtMatmulPreferenceDestroy(pref);
        }
        for (auto* l : {d, b, a}) {
            if (l != nullptr) {
                cublasLtMatrixLayoutDestroy(l);
            }
        }
        if (op != nullptr) {
            cublasLtMatmulDescDestroy(op);
        }
    }
};

template <class T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value,
              const char* name) {
    check_lt(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof value),
             std::string("set ") + name);
}

// Y[M, N] = X[M, K] · W[N, K]ᵀ, as a linear layer computes it with row-major tensors. In
// cuBLAS's column-major terms that is Yᵀ (N × M) = op(A) · B with A = W stored K × N and
// transposed, B = Xᵀ stored K × M: the "TN" layout FP8 and INT8 kernels require.
class GemmRunner {
  public:
    GemmRunner(Session& s, std::size_t arena_bytes, std::size_t x_bytes, std::size_t d_bytes)
        : s_(s), arena_(arena_bytes), x_(x_bytes), d_(d_bytes), workspace_(kWorkspaceBytes),
          scale_(sizeof(float)) {
        const float one = 1.0F;
        check_cuda(cudaMemcpy(scale_.get(), &one, sizeof one, cudaMemcpyHostToDevice),
                   "copy the FP8 scale");
    }

    // Fills weights and activations with data of `t`.
    void prepare(const GemmType& t) {
        const cudaStream_t stream = s_.stream();
        check_cuda(launch_fill(arena_.get(), arena_.size() / t.ab_bytes, t.fill, 11, 1.0F, stream),
                   "fill");
        check_cuda(launch_fill(x_.get(), x_.size() / t.ab_bytes, t.fill, 12, 1.0F, stream), "fill");
        check_cuda(cudaStreamSynchronize(stream), "fill");
    }

    // Times one GEMM; nullopt with the reason in `why` when cuBLASLt has no algorithm for it or
    // rejects it. Throws CudaError when the GPU fails.
    std::optional<TimedRun> run(const GemmType& t, long m, long n, long k, std::string& why) {
        LtPlan p;
        check_lt(cublasLtMatmulDescCreate(&p.op, t.compute, t.scale), "cublasLtMatmulDescCreate");
        set_desc(p.op, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, "TRANSA");
        set_desc(p.op, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, "TRANSB");
        if (is_fp8(t)) {
            const void* scale = scale_.get();
            set_desc(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scale, "A_SCALE_POINTER");
            set_desc(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, scale, "B_SCALE_POINTER");
            // Fast accumulation, as serving engines run FP8 GEMMs (torch._scaled_mm's
            // use_fast_accum, TensorRT-LLM).
            const std::int8_t fast = 1;
            set_desc(p.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast, "FAST_ACCUM");
        }
        const auto rows = [](long v) { return static_cast<std::uint64_t>(v); };
        check_lt(cublasLtMatrixLayoutCreate(&p.a, t.ab, rows(k), rows(n), k), "layout A");
        check_lt(cublasLtMatrixLayoutCreate(&p.b, t.ab, rows(k), rows(m), k), "layout B");
        check_lt(cublasLtMatrixLayoutCreate(&p.d, t.cd, rows(n), rows(m), n), "layout D");
        check_lt(cublasLtMatmulPreferenceCreate(&p.pref), "cublasLtMatmulPreferenceCreate");
        const std::uint64_t ws = kWorkspaceBytes;
        check_lt(cublasLtMatmulPreferenceSetAttribute(
                     p.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                 "set MAX_WORKSPACE_BYTES");
        cublasLtMatmulHeuristicResult_t best{};
        int found = 0;
        const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt_.get(), p.op, p.a, p.b, p.d,
                                                                 p.d, p.pref, 1, &best, &found);
        if (hs != CUBLAS_STATUS_SUCCESS || found == 0 || best.state != CUBLAS_STATUS_SUCCESS) {
            why = "no cuBLASLt algorithm (" +
                  status_text(hs != CUBLAS_STATUS_SUCCESS ? hs : best.state) + ")";
            return std::nullopt;
        }
        const void* alpha =
            is_int(t) ? static_cast<const void*>(&alpha_i_) : static_cast<const void*>(&alpha_f_);
        const void* beta =
            is_int(t) ? static_cast<const void*>(&beta_i_) : static_cast<const void*>(&beta_f_);
        const std::size_t a_bytes =
            static_cast<std::size_t>(n) * static_cast<std::size_t>(k) * t.ab_bytes;
        const std::size_t stride = round_up(a_bytes, 256);
        const long copies =
            static_cast<long>(std::clamp<std::size_t>(arena_.size() / stride, 1, 64));
        const cudaStream_t stream = s_.stream();
        auto call = [&](long i) {
            const char* a = arena_.as<const char>() + static_cast<std::size_t>(i % copies) * stride;
            return cublasLtMatmul(lt_.get(), p.op, alpha, a, p.a, x_.get(), p.b, beta, d_.get(),
                                  p.d, d_.get(), p.d, &best.algo, workspace_.get(),
                                  best.workspaceSize, stream);
        };
        if (const cublasStatus_t st = call(0); st != CUBLAS_STATUS_SUCCESS) {
            why = "cublasLtMatmul rejected it: " + status_text(st);
            return std::nullopt;
        }
        check_cuda(cudaStreamSynchronize(stream), "first GEMM");
        return s_.measure([&](long i) { check_lt(call(i), "cublasLtMatmul"); });
    }

  private:
    Session& s_;
    LtHandle lt_;
    DeviceBuffer arena_; // weight copies, rotated so weights come from HBM as in a model
    DeviceBuffer x_;     // activations
    DeviceBuffer d_;     // output
    DeviceBuffer workspace_;
    DeviceBuffer scale_; // FP8 per-tensor scale, 1.0
    float alpha_f_ = 1.0F;
    float beta_f_ = 0.0F;
    std::int32_t alpha_i_ = 1;
    std::int32_t beta_i_ = 0;
};

} // namespace

void measure_gemm(Session& s) {
    const auto& dev = s.device();
    std::vector<long> ms;
    if (s.quick()) {
        ms = {1, 8, 64, 256, 1024, 4096, 16384};
    } else {
        for (long m = 1; m <= 16384; m *= 2) {
            ms.push_back(m);
        }
    }
    const std::vector<LayerShape> shapes = layer_shapes(s.quick());
    std::vector<GemmType> types{kBf16};
    if (dev.cc_major * 10 + dev.cc_minor >= 89) {
        types.push_back(kFp8);
    } else {
        s.note("gemm: fp8 skipped, compute capability " + std::to_string(dev.cc_major) + "." +
               std::to_string(dev.cc_minor) + " has no FP8 tensor cores (needs 8.9)");
    }
    types.push_back(kFp16);
    types.push_back(kInt8);

    long max_n = 0;
    long max_k = 0;
    std::size_t max_nk = 0;
    for (const auto& sh : shapes) {
        max_n = std::max(max_n, sh.n);
        max_k = std::max(max_k, sh.k);
        max_nk = std::max(max_nk, static_cast<std::size_t>(sh.n) * static_cast<std::size_t>(sh.k));
    }
    // Buffers sized for the largest data types (2-byte inputs, 4-byte int32 output), within half
    // of free memory; M is capped when they would not fit.
    const std::size_t arena = round_up(std::max(max_nk * 2, 16 * dev.l2_bytes), kMiB);
    const std::size_t budget = s.free_memory() / 2;
    long m_cap = ms.back();
    auto need = [&](long m) {
        return arena + static_cast<std::size_t>(m) * static_cast<std::size_t>(max_k) * 2 +
               static_cast<std::size_t>(m) * static_cast<std::size_t>(max_n) * 4 + kWorkspaceBytes;
    };
    while (m_cap > 1 && need(m_cap) > budget) {
        m_cap /= 2;
    }
    if (need(m_cap) > budget) {
        s.note("gemm: skipped, needs " + format_bytes(static_cast<double>(need(1))) +
               " of device memory");
        return;
    }
    if (m_cap < ms.back()) {
        s.note("gemm: M capped at " + std::to_string(m_cap) + " by free device memory");
        ms.erase(std::remove_if(ms.begin(), ms.end(), [&](long m) { return m > m_cap; }), ms.end());
    }
    GemmRunner runner(
        s, arena,
        round_up(static_cast<std::size_t>(m_cap) * static_cast<std::size_t>(max_k) * 2, kMiB),
        round_up(static_cast<std::size_t>(m_cap) * static_cast<std::size_t>(max_n) * 4, kMiB));
    s.progress("gemm: " + std::to_string(types.size()) + " data types x " +
               std::to_string(shapes.size()) + " shapes x " + std::to_string(ms.size()) +
               " token counts");

    std::map<std::string, int> skipped;
    auto note_skipped = [&] {
        for (const auto& [why, count] : skipped) {
            s.note("gemm: " + std::to_string(count) + " points skipped, " + why);
        }
    };
    for (const auto& t : types) {
        runner.prepare(t);
        for (const auto& sh : shapes) {
            double best = 0;
            long best_m = 0;
            for (const long m : ms) {
                if (s.out_of_time()) {
                    s.note(std::string("gemm: stopped at ") + t.name + " " + sh.model + " " +
                           sh.op + " m=" + std::to_string(m) + ", time limit reached");
                    note_skipped();
                    return;
                }
                std::string why;
                const auto run = runner.run(t, m, sh.n, sh.k, why);
                if (!run) {
                    ++skipped[std::string(t.name) + ": " + why];
                    continue;
                }
                Record r;
                r.op_class = "gemm";
                r.op = sh.op;
                r.model = sh.model;
                r.m = static_cast<double>(m);
                r.n = static_cast<double>(sh.n);
                r.k = static_cast<double>(sh.k);
                r.dtype = t.name;
                r.tp = sh.tp;
                r.rate = 2.0 * r.m * r.n * r.k / run->median_s / 1e12;
                r.rate_unit = t.unit;
                if (r.rate > best) {
                    best = r.rate;
                    best_m = m;
                }
                s.add(r, *run);
            }
            char buf[160];
            std::snprintf(buf, sizeof buf,
                          "gemm %s %s %s tp%d (n=%ld k=%ld): best %.1f %s at m=%ld", t.name,
                          sh.model.c_str(), sh.op.c_str(), sh.tp, sh.n, sh.k, best, t.unit, best_m);
            s.progress(buf);
        }
    }
    note_skipped();
}

} // namespace gpuplan::calib::bench
