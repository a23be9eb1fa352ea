// Fused-MoE kernel times transcribed from public benchmark posts into a small CSV (format
// "fused-moe"; validation/kernels/ holds the sets, each line's source in its comments).
// Header op,tokens,hidden,ffn,experts,top_k,matrices,dtype,time_us; a '# gpu: <hwdb name>'
// comment names the GPU. `tokens` tokens enter one MoE layer, each routed to `top_k` of the
// `experts` held on the GPU (the benchmarks' random gating: uniform routing), with hidden size
// `hidden` and per-expert intermediate width `ffn` as sharded on this GPU (vLLM's config name
// N); `matrices` per expert: 3 for a gated MLP (gate and up fused, then down), 2 for up/down.
// `time_us` is the time of one call. The op names the kernel:
//   vllm_fused_moe: vLLM's benchmarks/kernels/benchmark_moe.py, which times
//     fused_topk + fused_experts (vllm/model_executor/layers/fused_moe/fused_moe.py: topk
//     softmax, moe_align_block_size, the two Triton grouped GEMMs, the activation and moe_sum)
//     as CUDA-graph replays of 10 calls, divided by 10 (calib/predict.cpp prices all of them);
//   sglang_fused_moe: SGLang's copy of the same kernels
//     (benchmark/kernels/fused_moe_triton/tuning_fused_moe_triton.py), timed alike;
//   any other name: one grouped GEMM of the routed experts alone.
#include "calib/importers_detail.hpp"

#include "model/error.hpp"

#include <string>

namespace gpuplan::calib::detail {

std::vector<Measurement> import_fused_moe(const CsvTable& t, const std::filesystem::path& path,
                                          const ImportOptions& o) {
    const std::string gpu = gpu_or(o, comment_gpu(t), path);
    const int c_op = t.column("op");
    const int c_tok = t.column("tokens");
    const int c_h = t.column("hidden");
    const int c_f = t.column("ffn");
    const int c_e = t.column("experts");
    const int c_k = t.column("top_k");
    const int c_mats = t.column("matrices");
    const int c_dt = t.column("dtype");
    const int c_us = t.column("time_us");
    std::vector<Measurement> out;
    for (const auto& r : t.rows) {
        Measurement m = base(t, r, "fused-moe", gpu);
        m.op_class = OpClass::GroupedGemm;
        m.op = t.text(r, c_op);
        m.dtype = t.text(r, c_dt);
        m.m = t.number(r, c_tok);
        m.k = t.number(r, c_h);
        m.n = t.number(r, c_f);
        m.experts = static_cast<int>(t.number(r, c_e));
        m.top_k = static_cast<int>(t.number(r, c_k));
        m.matrices = static_cast<int>(t.number(r, c_mats));
        m.time_s = t.number(r, c_us) * 1e-6;
        if (m.m <= 0 || m.k <= 0 || m.n <= 0 || m.experts <= 0 || m.top_k <= 0 ||
            m.top_k > m.experts || m.matrices < 1 || m.matrices > 3 || m.time_s <= 0) {
            t.fail(r, c_us,
                   "tokens, hidden, ffn, experts, top_k (at most experts), matrices (1-3) and "
                   "time_us must be positive");
        }
        out.push_back(std::move(m));
    }
    return out;
}

} // namespace gpuplan::calib::detail
