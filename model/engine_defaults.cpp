#include "model/engine_defaults.hpp"

#include "model/hardware_spec.hpp"
#include "model/model_spec.hpp"
#include "model/scenario.hpp"
#include "model/workload_mix.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::model {

namespace {

// NVIDIA/TensorRT-LLM@a7e572fb20c694e7711f0c09f21eeaedeb45ccaa:tensorrt_llm/bench/build/tuning.py.
constexpr double kKvFraction = 0.95;    // calc_engine_setting's kv_cache_gpu_mem_fraction
constexpr double kMaxRequests = 4096;   // finetune_setting: decoder buffer cap
constexpr double kMaxRawTokens = 32768; // finetune_setting: activation buffer cap
constexpr double kGiBytes = 1024.0 * 1024.0 * 1024.0;

/// BYTES_PER_ELEM.get(quant_algo, 2): FP8 (and FP8 block scales) 1, NVFP4 0.5, else 2.
double bench_bytes(const Precision& p) {
    if (p.weight_only) {
        return 2.0;
    }
    if (p.compute == ComputeType::Fp8) {
        return 1.0;
    }
    if (p.name == "nvfp4") {
        return 0.5;
    }
    return 2.0;
}

int round_up(double raw, int step) {
    return step * static_cast<int>(std::ceil(raw / step));
}

} // namespace

std::optional<TrtllmBenchSettings> trtllm_bench_settings(const Deployment& d, double isl,
                                                         double osl) {
    if (!(isl > 0) || !(osl > 0)) {
        return std::nullopt;
    }
    const ModelSpec& m = d.model;
    const double gib_per_token = 2.0 * m.layers * std::max(d.par.tp, m.kv_heads) * m.head_dim *
                                 bench_bytes(d.prec.kv_cache) / kGiBytes;
    const int gpus = d.par.tp * d.par.pp;
    const double engine_gib = count_params(m).total * bench_bytes(d.prec.weights) / kGiBytes;
    const Bytes device = d.engine.usable_memory.value_or(cuda_visible_memory(d.gpu));
    const double total_gib = device.si() / kGiBytes * gpus;
    const double cache_gib = (total_gib - engine_gib) * kKvFraction;
    TrtllmBenchSettings s;
    s.kv_cache_max_requests = cache_gib / (gib_per_token * (isl + osl));
    if (total_gib < engine_gib || !(s.kv_cache_max_requests >= 1)) {
        return std::nullopt; // trtllm-bench raises RuntimeError
    }
    // finetune_setting (the optimistic branch; the other is for Nemotron-H hybrids).
    const double raw_bs = std::min(s.kv_cache_max_requests, kMaxRequests) / d.par.pp;
    const double raw_token = std::min(raw_bs * (1.0 + isl / osl), kMaxRawTokens);
    if (raw_bs < 256) {
        s.max_batch_size = std::max(64, round_up(raw_bs, 32));
    } else if (raw_bs < 1024) {
        s.max_batch_size = round_up(raw_bs, 128);
    } else {
        s.max_batch_size = round_up(raw_bs, 256);
    }
    if (raw_token < 4096) {
        s.max_num_tokens = std::max(2048, round_up(raw_token, 256));
    } else if (raw_token < 8192) {
        s.max_num_tokens = round_up(raw_token, 512);
    } else {
        s.max_num_tokens = round_up(raw_token, 1024);
    }
    return s;
}

Deployment with_load_engine_defaults(const Deployment& d, const Workload& w) {
    const EngineConfig& e = d.engine;
    if (e.kind != EngineKind::TensorRtLlm || (e.max_num_seqs && e.max_num_batched_tokens)) {
        return d;
    }
    const std::optional<MeanRequest> mean = mean_request(w);
    const double isl = mean ? mean->input_tokens : w.input_tokens;
    const double osl = mean ? mean->output_tokens : w.output_tokens;
    const std::optional<TrtllmBenchSettings> bench = trtllm_bench_settings(d, isl, osl);
    if (!bench) {
        return d;
    }
    Deployment out = d;
    out.engine.max_num_seqs = e.max_num_seqs.value_or(bench->max_batch_size);
    out.engine.max_num_batched_tokens = e.max_num_batched_tokens.value_or(bench->max_num_tokens);
    out.engine.enable_chunked_prefill = e.enable_chunked_prefill.value_or(true);
    return out;
}

} // namespace gpuplan::model
