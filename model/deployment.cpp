#include "model/deployment.hpp"

#include "model/error.hpp"
#include "model/kv_offload.hpp"
#include "model/lora.hpp"
#include "model/validity.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace gpuplan::model {

namespace {

// vLLM engine defaults (vllm-project/vllm@99d7eb5d:vllm/engine/arg_utils.py;
// docs/engines.md §1.5). The OpenAI-compatible server ("vllm serve") defaults are used, not the
// offline `LLM` class ones: on a GPU with at least 70 GiB that is not an A100, 8192 batched tokens
// and 1024 sequences; otherwise 2048 and 256.
constexpr double kVllmLargeGpuMemory = 70.0 * kGiB;
constexpr int kVllmLargeGpuBatchedTokens = 8192;
constexpr int kVllmLargeGpuSeqs = 1024;
constexpr int kVllmBatchedTokens = 2048;
constexpr int kVllmSeqs = 256;
constexpr int kVllmBlockSize = 16;       // CUDA platform default (vllm/platforms/cuda.py)
constexpr double kVllmUtilization = 0.9; // @c1d86421:vllm/config/cache.py
// CUDA-graph capture sizes: max = min(max_num_seqs × 2, 512, max_num_batched_tokens) without
// speculative decoding (@09f030ea:vllm/config/vllm.py `_set_cudagraph_sizes`).
constexpr int kVllmGraphCap = 512;

// TensorRT-LLM LLM-API defaults (NVIDIA/TensorRT-LLM@fcd3f316:tensorrt_llm/llmapi/llm_args.py;
// docs/engines.md §3.1): max_batch_size 2048, max_num_tokens 8192, tokens_per_block 32 (PyTorch
// backend), free_gpu_memory_fraction 0.9, chunked prefill off, block reuse on, CUDA graphs up to
// batch 128.
constexpr int kTrtSeqs = 2048;
constexpr int kTrtTokens = 8192;
constexpr int kTrtBlock = 32;
constexpr double kTrtFraction = 0.9;
constexpr int kTrtGraphMax = 128;

// SGLang defaults (sgl-project/sglang PR #10975 server_args heuristics; docs/engines.md §4.1):
// chunked_prefill_size and cuda_graph_max_bs by GPU memory bucket; page_size 1. The default
// max_running_requests is derived from the token pool [U]; 2048 stands in for it.
constexpr int kSglangSeqs = 2048;

// llama.cpp common_params defaults (ggml-org/llama.cpp@de93b991:common/common.h, §5): n_ctx 4096,
// n_ubatch 512, n_parallel 1; KV size padded to 256 tokens [U].
constexpr int kLlamaCppContext = 4096;
constexpr int kLlamaCppUbatch = 512;
constexpr int kLlamaCppPad = 256;

bool is_a100(const AcceleratorSpec& g) {
    std::string n = g.name;
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return n.find("a100") != std::string::npos;
}

/// Number of vLLM capture sizes up to `max`: [1, 2, 4] ∪ {8, 16, …, 248} ∪ {256, 272, …}.
int vllm_graph_sizes(int max) {
    int n = 0;
    for (int s : {1, 2, 4}) {
        n += s <= max ? 1 : 0;
    }
    for (int s = 8; s <= 248 && s <= max; s += 8) {
        ++n;
    }
    for (int s = 256; s <= max; s += 16) {
        ++n;
    }
    return n;
}

/// SGLang's bucket values: {chunked_prefill_size, cuda_graph_max_bs}.
std::pair<int, int> sglang_bucket(Bytes memory, int tp) {
    const double gib = memory.si() / kGiB;
    if (gib < 35) {
        return {2048, tp < 4 ? 24 : 80};
    }
    if (gib < 60) {
        return {4096, tp < 4 ? 32 : 160};
    }
    if (gib < 160) {
        return {8192, tp < 4 ? 256 : 512};
    }
    return {16384, 512};
}

/// SGLang's default mem_fraction_static (PR #10975): reserved MiB =
/// 512 + 1.5 × max(chunked_prefill_size, 2048) + 2 × cuda_graph_max_bs + 1024 × tp × pp / 8,
/// at least 10240 on GPUs above 60 GiB; fraction = (total − reserved) / total, rounded to 0.001.
double sglang_fraction(Bytes memory, int chunk, int graph_bs, int tp, int pp) {
    const double total_mib = memory.si() / kMiB;
    double reserved = 512.0 + 1.5 * std::max(chunk, 2048) + 2.0 * graph_bs + 1024.0 * tp * pp / 8.0;
    if (memory.si() > 60.0 * kGiB) {
        reserved = std::max(reserved, 10240.0);
    }
    return std::round((total_mib - reserved) / total_mib * 1000.0) / 1000.0;
}

void require(bool ok, const std::string& what) {
    if (!ok) {
        throw InvalidArgument(what);
    }
}

} // namespace

Precision bf16_precision() {
    if (auto p = find_precision("bf16")) {
        return *p;
    }
    return Precision{"bf16", 16.0, ComputeType::Bf16, false, "bfloat16"};
}

Precision embedding_precision(const Precisions& p) {
    if (p.embeddings) {
        return *p.embeddings;
    }
    if (p.weights.bits_per_element > 16.0) {
        return p.weights;
    }
    if (p.weights.bits_per_element == 16.0) {
        return p.weights; // bf16 or fp16: the model dtype
    }
    return bf16_precision();
}

ComputeType gemm_compute_type(const Precisions& p) {
    return p.weights.weight_only ? p.activations.compute : p.weights.compute;
}

const char* to_string(EngineKind kind) {
    return name_of(kind);
}

std::optional<EngineKind> find_engine(std::string_view name) {
    std::string n(name);
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return value_of<EngineKind>(n);
}

EngineSettings resolve_engine(const Deployment& d) {
    const EngineConfig& e = d.engine;
    EngineSettings s;
    s.kind = e.kind;
    s.cuda_graphs = e.cuda_graphs;
    switch (e.kind) {
    case EngineKind::Vllm: {
        s.max_model_len = e.max_model_len.value_or(d.model.max_context);
        s.memory_fraction = e.gpu_memory_utilization.value_or(kVllmUtilization);
        s.block_size = e.block_size.value_or(kVllmBlockSize);
        s.prefix_caching = e.enable_prefix_caching.value_or(true);
        s.chunked_prefill = e.enable_chunked_prefill.value_or(true);
        const bool large = d.gpu.memory.si() >= kVllmLargeGpuMemory && !is_a100(d.gpu);
        int tokens = large ? kVllmLargeGpuBatchedTokens : kVllmBatchedTokens;
        const int seqs = large ? kVllmLargeGpuSeqs : kVllmSeqs;
        if (!s.chunked_prefill) {
            // Without chunked prefill a whole prompt must fit one step (arg_utils.py).
            tokens = std::max(s.max_model_len, tokens);
        }
        s.max_num_batched_tokens = e.max_num_batched_tokens.value_or(tokens);
        s.max_num_seqs = e.max_num_seqs.value_or(std::min(seqs, s.max_num_batched_tokens));
        s.cuda_graph_max_tokens =
            std::min({s.max_num_seqs * 2, kVllmGraphCap, s.max_num_batched_tokens});
        s.cuda_graph_sizes = vllm_graph_sizes(s.cuda_graph_max_tokens);
        break;
    }
    case EngineKind::TensorRtLlm:
        s.max_model_len = e.max_model_len.value_or(d.model.max_context);
        s.memory_fraction = e.gpu_memory_utilization.value_or(kTrtFraction);
        s.block_size = e.block_size.value_or(kTrtBlock);
        s.prefix_caching = e.enable_prefix_caching.value_or(true);
        s.chunked_prefill = e.enable_chunked_prefill.value_or(false);
        s.max_num_batched_tokens = e.max_num_batched_tokens.value_or(kTrtTokens);
        s.max_num_seqs = e.max_num_seqs.value_or(kTrtSeqs);
        s.cuda_graph_max_tokens = std::min(kTrtGraphMax, s.max_num_seqs);
        // [1,2,4] + [8,16,…,128]: 3 + 16 sizes at the default maximum.
        s.cuda_graph_sizes = vllm_graph_sizes(s.cuda_graph_max_tokens);
        break;
    case EngineKind::Sglang: {
        const auto [chunk, graph_bs] = sglang_bucket(d.gpu.memory, d.par.tp);
        s.max_model_len = e.max_model_len.value_or(d.model.max_context);
        s.memory_fraction = e.gpu_memory_utilization.value_or(
            sglang_fraction(d.gpu.memory, chunk, graph_bs, d.par.tp, d.par.pp));
        s.block_size = e.block_size.value_or(1);
        s.prefix_caching = e.enable_prefix_caching.value_or(true);
        s.chunked_prefill = e.enable_chunked_prefill.value_or(true);
        s.max_num_batched_tokens = e.max_num_batched_tokens.value_or(chunk);
        s.max_num_seqs = e.max_num_seqs.value_or(kSglangSeqs);
        s.cuda_graph_max_tokens = std::min(graph_bs, s.max_num_seqs);
        s.cuda_graph_sizes = vllm_graph_sizes(s.cuda_graph_max_tokens);
        break;
    }
    case EngineKind::LlamaCpp:
        s.max_model_len = e.max_model_len.value_or(kLlamaCppContext);
        s.memory_fraction = 1.0;
        s.block_size = e.block_size.value_or(kLlamaCppPad);
        s.prefix_caching = e.enable_prefix_caching.value_or(false);
        s.chunked_prefill = e.enable_chunked_prefill.value_or(true);
        s.max_num_batched_tokens = e.max_num_batched_tokens.value_or(kLlamaCppUbatch);
        s.max_num_seqs = e.max_num_seqs.value_or(1);
        // llama.cpp captures a graph for single-token decode steps only.
        s.cuda_graph_max_tokens = 1;
        s.cuda_graph_sizes = 1;
        break;
    }
    if (!s.cuda_graphs) {
        s.cuda_graph_max_tokens = 0;
        s.cuda_graph_sizes = 0;
    }
    return s;
}

int total_gpus(const Parallelism& p) {
    // |tp × pp| < 2^62 fits in 64 bits; once it is at most kMaxGpus, so does the product with dp.
    const long long replica = static_cast<long long>(p.tp) * p.pp;
    const auto too_many = [](long long n) { return n > kMaxGpus || n < -kMaxGpus; };
    if (too_many(replica) || too_many(replica * p.dp)) {
        throw InvalidArgument("parallelism tp=" + std::to_string(p.tp) +
                              " pp=" + std::to_string(p.pp) + " dp=" + std::to_string(p.dp) +
                              " is more than " + std::to_string(kMaxGpus) +
                              " GPUs; lower the parallel sizes");
    }
    return static_cast<int>(replica * p.dp);
}

int replicas_of(long long gpus, const Parallelism& p, const std::string& what,
                const std::string& fix) {
    // 64 bits: tp and pp are ints, so their product cannot wrap.
    const long long replica = static_cast<long long>(p.tp) * p.pp;
    if (replica < 1 || gpus % replica != 0) {
        throw InvalidArgument(what + " is not a multiple of tp × pp = " + std::to_string(replica) +
                              "; " + fix);
    }
    return static_cast<int>(gpus / replica);
}

int Deployment::gpus() const {
    return total_gpus(par);
}

void validate(const Deployment& d) {
    validate(d.model, "model '" + d.model.name + "'");
    if (d.engine.speculative) {
        validate(*d.engine.speculative);
    }
    if (d.engine.kv_offload) {
        validate(*d.engine.kv_offload);
    }
    if (d.engine.lora) {
        validate(*d.engine.lora);
        check_lora_model(d.model, *d.engine.lora);
    }
    const Parallelism& p = d.par;
    const std::string where = "deployment of '" + d.model.name + "' on '" + d.gpu.name + "': ";
    require(p.tp >= 1 && p.pp >= 1 && p.dp >= 1 && p.ep >= 1,
            where + "parallelism tp=" + std::to_string(p.tp) + " pp=" + std::to_string(p.pp) +
                " dp=" + std::to_string(p.dp) + " ep=" + std::to_string(p.ep) +
                " has a size below 1; every size must be at least 1");
    const long long product = static_cast<long long>(p.tp) * p.pp * p.dp; // cannot wrap
    require(product <= kMaxGpus && p.ep <= kMaxGpus,
            where + "tp × pp × dp is " + std::to_string(product) + " GPUs (ep " +
                std::to_string(p.ep) + "); at most " + std::to_string(kMaxGpus) +
                " are supported, lower the parallel sizes");
    require(d.gpus_per_node >= 1,
            where + "gpus_per_node is " + std::to_string(d.gpus_per_node) + "; use at least 1");
    require(d.model.heads % p.tp == 0, where + "tp " + std::to_string(p.tp) +
                                           " does not divide the " + std::to_string(d.model.heads) +
                                           " attention heads; use a divisor of heads");
    if (d.model.attention != AttentionKind::Mla) {
        const int k = d.model.kv_heads;
        require(k % p.tp == 0 || p.tp % k == 0,
                where + "tp " + std::to_string(p.tp) + " and the " + std::to_string(k) +
                    " kv heads do not divide one another; vLLM needs one to divide the other");
    }
    require(p.pp <= d.model.layers, where + "pp " + std::to_string(p.pp) + " exceeds the " +
                                        std::to_string(d.model.layers) +
                                        " layers; use at most one stage per layer");
    require(p.ep == 1 || (d.model.moe && (static_cast<long long>(p.tp) * p.dp) % p.ep == 0),
            where + "ep " + std::to_string(p.ep) +
                (d.model.moe ? " does not divide tp × dp; use a divisor of tp × dp"
                             : " is set but the model has no experts; use ep 1"));
    require(!d.engine.moe_load_imbalance || *d.engine.moe_load_imbalance >= 1.0,
            where + "moe_load_imbalance is below 1; it is the busiest rank's load over the mean, "
                    "use a value of at least 1");
    require(!d.engine.ep_overlap || (*d.engine.ep_overlap >= 0.0 && *d.engine.ep_overlap <= 1.0),
            where + "ep_overlap is outside [0, 1]; use a share such as 0 (off) or 1 (two-batch "
                    "overlap)");
    require(d.gpu.memory.si() > 0 && d.gpu.memory_bandwidth.si() > 0,
            where + "the accelerator has no memory or bandwidth; check its hwdb entry");
    require(d.prec.weights.bits_per_element > 0 && d.prec.kv_cache.bits_per_element > 0 &&
                d.prec.activations.bits_per_element > 0,
            where + "a precision has no bits per element; use find_precision()");
    const EngineSettings s = resolve_engine(d);
    require(s.memory_fraction > 0.0 && s.memory_fraction <= 1.0,
            where + "gpu_memory_utilization " + std::to_string(s.memory_fraction) +
                " is outside (0, 1]; use a fraction such as 0.9");
    require(s.max_model_len >= 1, where + "max_model_len " + std::to_string(s.max_model_len) +
                                      " is not positive; set it or the model's max_context");
    require(s.max_num_seqs >= 1 && s.max_num_batched_tokens >= 1 && s.block_size >= 1,
            where + "max_num_seqs, max_num_batched_tokens and block_size must be positive");
    if (s.kind == EngineKind::Vllm) {
        // vLLM's --block-size takes powers of two (CacheConfig.block_size, vllm/config/cache.py:
        // 1, 8, 16, 32, 64, 128 on CUDA); a block of 7 tokens is no engine's layout.
        require((s.block_size & (s.block_size - 1)) == 0,
                where + "block_size " + std::to_string(s.block_size) +
                    " is not a power of two; vLLM's block sizes are 8, 16, 32, 64 or 128 "
                    "(default 16)");
        // vLLM's SchedulerConfig refuses these (vllm/config/scheduler.py `_verify_args`).
        require(s.max_num_batched_tokens >= s.max_num_seqs,
                where + "max_num_batched_tokens " + std::to_string(s.max_num_batched_tokens) +
                    " is below max_num_seqs " + std::to_string(s.max_num_seqs) +
                    "; vLLM needs room for one token per sequence, raise it");
        require(s.chunked_prefill || s.max_num_batched_tokens >= s.max_model_len,
                where + "max_num_batched_tokens " + std::to_string(s.max_num_batched_tokens) +
                    " is below max_model_len " + std::to_string(s.max_model_len) +
                    " with chunked prefill off; enable chunked prefill or raise it");
    }
    check_context_length(d);
    check_format_support(d);
    require(d.engine.activation_workspace_factor >= 0.0,
            where + "activation_workspace_factor is negative; use 1 for the estimate as is");
    require(d.clocks.compute > 0.0 && d.clocks.compute <= 1.0 && d.clocks.memory > 0.0 &&
                d.clocks.memory <= 1.0,
            where + "clock factors " + std::to_string(d.clocks.compute) + " (compute) and " +
                std::to_string(d.clocks.memory) +
                " (memory) must be in (0, 1]; 1 means the datasheet clocks");
}

} // namespace gpuplan::model
