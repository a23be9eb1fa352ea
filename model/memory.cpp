#include "model/memory.hpp"

#include "model/lora.hpp"
#include "model/speculative.hpp"

#include "model/detail/shapes.hpp"
#include "model/error.hpp"
#include "model/unit_parser.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::model {

namespace {

// A block or token count as an integer. Counts beyond 2^53 (where doubles stop being exact,
// about 9e15) come only from absurd inputs (1e30 GiB of memory) and would wrap on conversion,
// so they are refused with a message instead.
std::int64_t count_of(double v, const char* what) {
    constexpr double kMaxCount = 9007199254740992.0; // 2^53
    if (!(v >= 0)) {
        return 0;
    }
    if (v > kMaxCount) {
        throw InvalidArgument(std::string("the KV cache would hold more than 2^53 ") + what +
                              "; check the accelerator's memory and the model's size (a unit "
                              "off by orders of magnitude?)");
    }
    return static_cast<std::int64_t>(v);
}

using detail::Shapes;
using detail::Stage;

// CUDA context and framework start-up per GPU (PyTorch + NCCL communicator init) sits in
// "used" before vLLM's first snapshot, so it is paid from the (1 − utilization) headroom
// (vllm/v1/worker/gpu_worker.py; docs/engines.md §1.1 step 1). 0.5 GiB is typical on Hopper with
// PyTorch 2.x [U]; llama.cpp's bare CUDA context is smaller (~0.3 GiB) [U].
constexpr double kCudaContext = 0.5 * kGiB;
constexpr double kCudaContextLlamaCpp = 0.3 * kGiB;

// Non-torch memory (docs/engines.md §1.6): 0.20-0.33 GiB in recent single-GPU vLLM logs
// (issues 14452, PR 14447), 1.79 GiB in an older H100 log; it doubled from TP1 to TP2 in that
// log (+1.79 GiB of NCCL and custom all-reduce buffers). Defaults: 0.4 GiB, plus 1.8 GiB with
// tensor parallelism (growth beyond TP2 unmeasured, assumed flat [U]) and 0.25 GiB of NCCL p2p
// buffers with pipeline parallelism [U].
constexpr double kNonTorchBase = 0.4 * kGiB;
constexpr double kNonTorchTp = 1.8 * kGiB;
constexpr double kNonTorchPp = 0.25 * kGiB;

// CUDA graphs: vLLM V1 piecewise capture takes 6-28 MiB per captured size (PR 22897; 0.21 GiB
// for 35 sizes of Llama-3.2-1B in PR 11349, 0.36 GiB for 16 sizes in the v0.27 estimate):
// 10 MiB per size [U].
constexpr double kGraphPerSize = 10.0 * kMiB;

// The profiling step's sampler holds fp32 logits for every dummy request plus softmax and
// sorted copies (top-p/top-k): about three vocab-wide fp32 tensors per request [U]. With the
// layer workspace below this reproduces 1.15 GiB for Llama-3-8B at 8192 tokens and 256
// sequences against 1.26 GiB logged (PR 10511).
constexpr double kSamplerCopies = 3.0;
constexpr double kLogitBytes = 4.0;

double cdiv(double a, double b) {
    return std::ceil(a / b);
}

std::string num(double v, int decimals = 2) {
    return format_fixed(v, decimals);
}

/// Bytes per element of the small 16-bit tensors (biases, norms, router): the model dtype.
double small_bytes(const Precisions& p) {
    return p.weights.bits_per_element >= 16.0 ? p.weights.bytes_per_element() : 2.0;
}

/// Weight bytes of one stage on one rank.
Bytes stage_weights(const Shapes& s, const Stage& st, const Precisions& p) {
    const double wb = p.weights.bytes_per_element();
    const double sb = small_bytes(p);
    const double eb = embedding_precision(p).bytes_per_element();
    const double dense_layers = st.layers - st.moe_layers;
    // Recurrent layers (st.state_layers) have their own mixer instead of attention.
    const double attention_layers = st.layers - st.state_layers;
    double bytes = attention_layers * ((s.attn_linear + s.indexer_linear) * wb +
                                       (s.attn_small + s.indexer_small + s.sinks + s.norms) * sb);
    if (st.state_layers > 0) {
        bytes += st.state_layers * (s.state_linear * wb + (s.state_small + s.norms) * sb);
    }
    bytes += dense_layers * (s.dense_linear * wb + s.dense_small * sb);
    if (st.moe_layers > 0) {
        const double experts = s.experts_rank * s.expert_shard;
        bytes += st.moe_layers * ((experts * s.expert_linear + s.shared_linear_rank) * wb +
                                  (s.router + experts * s.expert_small + s.shared_small_rank) * sb);
    }
    if (st.first) {
        bytes += s.embedding / s.tp * eb; // VocabParallelEmbedding
    }
    if (st.last) {
        bytes += s.final_norm * sb;
        // A tied LM head shares the embedding on one stage; with PP the last stage holds a copy.
        const double head = s.lm_head > 0 ? s.lm_head : (s.pp > 1 ? s.vocab * s.h : 0.0);
        bytes += head / s.tp * eb;
    }
    return Bytes(bytes);
}

/// Activation peak per rank of a forward step of `tokens` tokens over `requests` requests.
Bytes activation_peak(const Shapes& s, const Precisions& p, double tokens, double requests) {
    const double ab =
        p.activations.bytes_per_element() < 2.0 ? 2.0 : p.activations.bytes_per_element();
    // Live tensors at the peak of one layer: the hidden state and residual (2h) plus the larger
    // of the attention block's outputs (QKV, attention output) and the MLP's (gate/up output
    // and the activated product; fused_moe's per-top-k caches for MoE). Layers run one at a
    // time, so the peak is one layer's, not the sum.
    double attn = s.q_width_rank + s.kv_width_rank + s.o_in_rank;
    if (s.mla) {
        attn += s.kv_lora + s.rope + s.heads_rank * (s.nope + s.v_dim);
    }
    const double mats = s.gated ? 3.0 : 2.0;
    double mlp = s.dense_layers > 0 ? mats * s.ffn_rank : 0.0;
    if (s.moe) {
        // Each token is routed to top_k experts; with EP a rank receives on average as many
        // routed rows as it sends, so the per-token count is top_k either way.
        const double moe = s.top_k * (mats * s.expert_ffn_rank + s.h) +
                           s.shared_experts * mats * s.expert_ffn_rank +
                           s.experts * kLogitBytes / ab;
        mlp = std::max(mlp, moe);
    }
    const double per_token = ab * (2.0 * s.h + std::max(attn, mlp));
    const double logits = requests * s.vocab * kLogitBytes * kSamplerCopies;
    return Bytes(tokens * per_token + logits);
}

Bytes visible_capacity(const Deployment& d) {
    return d.engine.usable_memory.value_or(cuda_visible_memory(d.gpu));
}

Bytes non_torch_for(const Deployment& d) {
    if (d.engine.non_torch_memory) {
        return *d.engine.non_torch_memory;
    }
    return default_non_torch_memory(d);
}

Bytes graphs_for(const Deployment& d) {
    if (d.engine.cuda_graph_memory) {
        return *d.engine.cuda_graph_memory;
    }
    return default_cuda_graph_memory(d);
}

Bytes context_for(const Deployment& d) {
    if (d.engine.cuda_context_memory) {
        return *d.engine.cuda_context_memory;
    }
    return Bytes(d.engine.kind == EngineKind::LlamaCpp ? kCudaContextLlamaCpp : kCudaContext);
}

Bytes activations_for(const Deployment& d, const Shapes& s, const EngineSettings& e) {
    if (d.engine.activation_memory) {
        return *d.engine.activation_memory;
    }
    const double tokens = e.max_num_batched_tokens;
    // vLLM's profile run splits the tokens over min(tokens, max_num_seqs) dummy requests, each
    // computing logits (gpu_model_runner `_dummy_run`, docs/engines.md §1.1 step 3). llama.cpp
    // sizes its compute buffer for a worst-case ubatch that outputs every token.
    const double requests =
        e.kind == EngineKind::LlamaCpp ? tokens : std::min<double>(tokens, e.max_num_seqs);
    return activation_peak(s, d.prec, tokens, requests) * d.engine.activation_workspace_factor;
}

/// vLLM's hybrid allocator for attention plus recurrent (Mamba-2, Gated DeltaNet) layers on
/// one stage (docs/engines.md, "Recurrent layers"). HybridAttentionMambaModelConfig
/// (vllm/model_executor/models/config.py) raises the attention block size to the smallest
/// multiple of 16 tokens whose page (one layer) holds one layer's recurrent state, and pads the
/// state page to it; then layers are grouped as for sliding windows and every recurrent group
/// takes one block per request (no prefix caching of states), every attention group
/// cdiv(max_model_len, block size) blocks.
void vllm_state_blocks(MemoryEstimate& r, const Shapes& s, const Stage& st, const EngineSettings& e,
                       double kv_layer_bytes) {
    const double align = 16.0;
    const double state_page = s.state_bytes;
    double bs = e.block_size;
    if (kv_layer_bytes > 0) {
        bs = std::max(bs, align * cdiv(state_page, align * kv_layer_bytes));
    }
    const double page = std::max(bs * kv_layer_bytes, state_page);
    const double pages =
        r.kv_budget.si() > 0 && page > 0 ? std::floor(r.kv_budget.si() / page) : 0.0;
    const double n_attn = st.layers - st.state_layers;
    const double n_state = st.state_layers;
    // Group size as for sliding windows: the smaller layer count, or the larger when it is
    // under 1.5 times the smaller (kv_cache_utils.py, docs/engines.md §1.3).
    const double mn = n_attn > 0 ? std::min(n_attn, n_state) : n_state;
    const double mx = std::max(n_attn, n_state);
    const double group = mx < 1.5 * mn ? mx : mn;
    const double attn_groups = n_attn > 0 ? cdiv(n_attn, group) : 0.0;
    const double state_groups = cdiv(n_state, group);
    const double blocks = std::floor(pages / group);
    const double per_request = attn_groups * cdiv(e.max_model_len, bs) + state_groups;
    r.kv_blocks = count_of(blocks, "blocks");
    r.engine.block_size = static_cast<int>(bs); // the block vLLM runs with, as it logs
    r.attention_groups = attn_groups;
    r.state_groups = state_groups;
    // The log line's tokens: the pool's blocks shared by every group, times the block size.
    r.kv_tokens = count_of(std::floor(blocks / (attn_groups + state_groups)) * bs, "tokens");
    r.max_concurrency = per_request > 0 ? blocks / per_request : 0.0;
}

/// vLLM's block arithmetic on one stage (vllm/v1/kv_cache_interface.py and
/// vllm/v1/core/kv_cache_utils.py; docs/engines.md §1.2-1.4), filling kv_blocks,
/// kv_tokens and max_concurrency from the budget.
void vllm_blocks(MemoryEstimate& r, const Shapes& s, const Stage& st, const EngineSettings& e,
                 double kv_layer_bytes) {
    const double bs = e.block_size;
    const double len = e.max_model_len;
    const double page = bs * kv_layer_bytes; // one layer, one block
    const double pages = r.kv_budget.si() > 0 ? std::floor(r.kv_budget.si() / page) : 0.0;
    const int n_win = st.windowed_layers;
    const int n_full = st.layers - n_win;
    // Sliding-window layers keep min(window − 1 + max_num_batched_tokens, L) tokens plus one
    // block (kv_cache_interface.py max_memory_usage_bytes).
    const double win_blocks =
        s.window > 0
            ? cdiv(std::min<double>(s.window - 1.0 + e.max_num_batched_tokens, len), bs) + 1
            : 0.0;
    double blocks = 0;
    double tokens = 0;
    double per_request = 0;
    if (st.state_layers > 0) {
        vllm_state_blocks(r, s, st, e, kv_layer_bytes);
        return;
    }
    if (n_win == 0 || n_full == 0) {
        blocks = std::floor(pages / st.layers);
        tokens = blocks * bs;
        per_request = n_win == 0 ? cdiv(len, bs) : win_blocks;
    } else {
        // Hybrid allocator: group_size = min(#layers per type), or the max when max < 1.5 × min;
        // every group draws blocks from one pool (kv_cache_utils.py, §1.3).
        const double mn = std::min(n_full, n_win);
        const double mx = std::max(n_full, n_win);
        const double group = mx < 1.5 * mn ? mx : mn;
        const double full_groups = cdiv(n_full, group);
        const double win_groups = cdiv(n_win, group);
        blocks = std::floor(pages / group);
        tokens = std::floor(blocks / (full_groups + win_groups)) * bs;
        per_request = full_groups * cdiv(len, bs) + win_groups * win_blocks;
    }
    r.kv_blocks = count_of(blocks, "blocks");
    r.kv_tokens = count_of(tokens, "tokens");
    r.max_concurrency = per_request > 0 ? blocks / per_request : 0.0;
}

MemoryEstimate stage_estimate(const Deployment& d, const Shapes& s, const Stage& st,
                              const EngineSettings& e, int stage_index, const DraftMemory& draft) {
    MemoryEstimate r;
    r.engine = e;
    r.binding_stage = stage_index;
    r.capacity = visible_capacity(d);
    r.weights = stage_weights(s, st, d.prec);
    r.activations = activations_for(d, s, e);
    r.non_torch = non_torch_for(d);
    r.cuda_graphs = graphs_for(d);
    r.cuda_context = context_for(d);
    r.overhead = r.non_torch + r.cuda_graphs + r.cuda_context;

    const double kvb = d.prec.kv_cache.bytes_per_element();
    // One token, one attention layer, this rank; the DSA indexer's keys are in the same pages
    // (vLLM allocates them as a KV-cache spec of the layer).
    const double kv_layer = s.kv_elems_rank * kvb + s.indexer_bytes;
    const int attention_layers = st.layers - st.state_layers;
    r.kv_per_token = Bytes(attention_layers * kv_layer);
    r.kv_per_token_model =
        Bytes((s.layers - s.state_layers) * (s.kv_elems_model * kvb + s.indexer_bytes));
    const double len = e.max_model_len;
    const double windowed_len = s.window > 0 ? std::min<double>(len, s.window) : len;
    r.kv_per_sequence =
        Bytes(((attention_layers - st.windowed_layers) * len + st.windowed_layers * windowed_len) *
              kv_layer);
    r.state_per_sequence = Bytes(st.state_layers * s.state_bytes);
    r.kv_per_sequence += r.state_per_sequence;

    // A speculative proposer's weights sit next to the target's, and every token's KV page also
    // holds the draft's KV (vLLM allocates the draft's layers from the same block pool); every
    // pipeline stage is charged, an upper bound when the draft runs on one stage only.
    r.draft_weights = draft.weights;
    r.draft_kv_per_token = draft.kv_per_token;
    const double kv_token_all = r.kv_per_token.si() + draft.kv_per_token.si();
    // Multi-LoRA: the adapter slots are allocated before the profiling run (model/lora.hpp).
    r.lora_slots = lora_reserved_bytes(d);
    const Bytes fixed =
        r.weights + r.draft_weights + r.lora_slots + r.activations + r.non_torch + r.cuda_graphs;
    switch (e.kind) {
    case EngineKind::Vllm: {
        r.requested = r.capacity * e.memory_fraction;
        r.kv_budget = d.engine.kv_cache_memory.value_or(r.requested - fixed);
        vllm_blocks(r, s, st, e,
                    draft.kv_per_token.si() > 0 ? kv_layer * (kv_token_all / r.kv_per_token.si())
                                                : kv_layer);
        r.total_used = r.cuda_context + fixed + std::max(r.kv_budget, Bytes(0));
        break;
    }
    case EngineKind::TensorRtLlm: {
        // available_kv = (total − peak) × free_gpu_memory_fraction, peak including non-torch
        // memory and the context (tensorrt_llm/_torch/pyexecutor/_util.py; docs/engines.md §3.2).
        const Bytes free_after = r.capacity - r.cuda_context - fixed;
        r.kv_budget = d.engine.kv_cache_memory.value_or(free_after * e.memory_fraction);
        const double tokens =
            r.kv_budget.si() > 0 ? std::floor(r.kv_budget.si() / kv_token_all) : 0.0;
        r.kv_blocks = count_of(std::floor(tokens / e.block_size), "blocks");
        r.kv_tokens = r.kv_blocks * e.block_size;
        r.max_concurrency = static_cast<double>(r.kv_blocks) / cdiv(len, e.block_size);
        r.total_used = r.cuda_context + fixed + std::max(r.kv_budget, Bytes(0));
        r.requested = r.total_used;
        break;
    }
    case EngineKind::Sglang: {
        // rest = available_after_load − total × (1 − mem_fraction_static)
        //      = total × mem_fraction_static − weights − context − NCCL (model_runner.py
        // profile_max_num_token, §4.1); activations and graphs live in the rest.
        r.requested = r.capacity * e.memory_fraction;
        r.kv_budget = d.engine.kv_cache_memory.value_or(r.requested - r.weights - r.cuda_context -
                                                        r.non_torch);
        const double tokens =
            r.kv_budget.si() > 0 ? std::floor(r.kv_budget.si() / kv_token_all) : 0.0;
        const double pages = std::floor(tokens / e.block_size);
        r.kv_blocks = count_of(pages, "blocks");
        r.kv_tokens = count_of(pages * e.block_size, "tokens");
        r.max_concurrency = static_cast<double>(r.kv_tokens) / len;
        r.total_used = r.cuda_context + fixed + std::max(r.kv_budget, Bytes(0));
        break;
    }
    case EngineKind::LlamaCpp: {
        // The KV cache is allocated up front for n_ctx = max_model_len × n_parallel tokens,
        // padded to 256 (llama-kv-cache.cpp, §5); nothing is derived from free memory.
        const double ctx = cdiv(len * e.max_num_seqs, e.block_size) * e.block_size;
        r.kv_budget = d.engine.kv_cache_memory.value_or(Bytes(ctx * kv_token_all));
        r.kv_tokens = count_of(ctx, "tokens");
        r.kv_blocks = count_of(ctx / e.block_size, "blocks");
        r.total_used = r.cuda_context + fixed + r.kv_budget;
        r.requested = r.total_used;
        r.max_concurrency = r.total_used <= r.capacity ? e.max_num_seqs : 0.0;
        break;
    }
    }
    if (st.state_layers > 0 &&
        (e.kind == EngineKind::Sglang || e.kind == EngineKind::TensorRtLlm)) {
        // SGLang's mamba pool (HybridReqToTokenPool) and TensorRT-LLM's MambaHybridCacheManager
        // hold one recurrent state per running request next to the attention KV: a sequence
        // costs its full-length KV and its state (docs/engines.md, "Recurrent layers").
        const double per_sequence = len * kv_token_all + r.state_per_sequence.si();
        r.max_concurrency = r.kv_budget.si() > 0 ? r.kv_budget.si() / per_sequence : 0.0;
        r.kv_tokens = count_of(std::floor(r.max_concurrency) * len, "tokens");
    }
    r.free = r.capacity - r.total_used;
    r.effective_concurrency = std::min<double>(e.max_num_seqs, std::floor(r.max_concurrency));
    r.concurrency_limit = e.max_num_seqs <= r.max_concurrency ? ConcurrencyLimit::MaxNumSeqs
                                                              : ConcurrencyLimit::KvCache;

    const std::string where = s.pp > 1 ? "stage " + std::to_string(stage_index) + ": " : "";
    bool fits = true;
    if (r.kv_budget.si() <= 0) {
        fits = false;
        r.reasons.push_back(
            where + "no memory is left for the KV cache: weights " + format_in_gib(r.weights) +
            " + activations " + format_in_gib(r.activations) + " + non-torch " +
            format_in_gib(r.non_torch) + " + CUDA graphs " + format_in_gib(r.cuda_graphs) +
            " exceed the " + format_in_gib(r.requested) + " the engine may use by " +
            format_in_gib(-r.kv_budget));
    } else if (r.max_concurrency < 1.0) {
        fits = false;
        r.reasons.push_back(where + "the KV cache (" + format_in_gib(r.kv_budget) + ", " +
                            std::to_string(r.kv_tokens) + " tokens) cannot hold one sequence of " +
                            std::to_string(e.max_model_len) + " tokens (" +
                            format_in_gib(r.kv_per_sequence) +
                            "); lower max_model_len or free memory");
    }
    if (r.free.si() < 0) {
        fits = false;
        r.reasons.push_back(
            where + "the process needs " + format_in_gib(r.total_used) + " but the GPU has " +
            format_in_gib(r.capacity) + " (" + format_in_gib(-r.free) + " short" +
            // Lowering the fraction helps only when the engine's budget,
            // not the weights, overruns the GPU.
            ((e.kind == EngineKind::Vllm || e.kind == EngineKind::Sglang) && r.kv_budget.si() > 0
                 ? "; lower gpu_memory_utilization " + num(e.memory_fraction)
                 : std::string()) +
            ")");
    }
    if (fits && r.concurrency_limit == ConcurrencyLimit::MaxNumSeqs &&
        e.kind != EngineKind::LlamaCpp) {
        r.reasons.push_back(where + "max_num_seqs " + std::to_string(e.max_num_seqs) +
                            " binds before the KV cache: " + num(r.max_concurrency) +
                            " sequences of " + std::to_string(e.max_model_len) +
                            " tokens would fit, so " +
                            num(100.0 * (1.0 - e.max_num_seqs / r.max_concurrency), 0) +
                            " % of the KV cache stays idle at full length");
    }
    r.fits = fits;
    return r;
}

} // namespace

const char* to_string(ConcurrencyLimit limit) {
    switch (limit) {
    case ConcurrencyLimit::KvCache: return "kv-cache";
    case ConcurrencyLimit::MaxNumSeqs: return "max-num-seqs";
    }
    return "kv-cache";
}

Bytes default_non_torch_memory(const Deployment& d) {
    if (d.engine.kind == EngineKind::LlamaCpp) {
        return Bytes(0); // no NCCL; cuBLAS workspaces live in its compute buffer
    }
    double b = kNonTorchBase;
    if (d.par.tp > 1) {
        b += kNonTorchTp;
    }
    if (d.par.pp > 1) {
        b += kNonTorchPp;
    }
    return Bytes(b);
}

Bytes default_cuda_graph_memory(const Deployment& d) {
    return Bytes(kGraphPerSize * resolve_engine(d).cuda_graph_sizes);
}

Bytes default_activation_memory(const Deployment& d) {
    const Shapes s = detail::make_shapes(d.model, d.par);
    const EngineSettings e = resolve_engine(d);
    const double tokens = e.max_num_batched_tokens;
    const double requests =
        e.kind == EngineKind::LlamaCpp ? tokens : std::min<double>(tokens, e.max_num_seqs);
    return activation_peak(s, d.prec, tokens, requests);
}

MemoryEstimate estimate_memory(const Deployment& d) {
    validate(d);
    const Shapes s = detail::make_shapes(d.model, d.par);
    const EngineSettings e = resolve_engine(d);
    const DraftMemory draft = draft_memory(d);
    MemoryEstimate best;
    bool all_fit = true;
    std::vector<std::string> reasons;
    for (int i = 0; i < d.par.pp; ++i) {
        const Stage st = detail::pipeline_stage(d.model, d.par.pp, i);
        MemoryEstimate r = stage_estimate(d, s, st, e, i, draft);
        all_fit = all_fit && r.fits;
        for (auto& reason : r.reasons) {
            reasons.push_back(std::move(reason));
        }
        const bool worse =
            i == 0 || r.max_concurrency < best.max_concurrency ||
            (r.max_concurrency == best.max_concurrency && r.kv_budget < best.kv_budget);
        if (worse) {
            best = std::move(r);
        }
    }
    best.fits = all_fit;
    best.reasons = std::move(reasons);
    return best;
}

Bytes model_weight_bytes(const ModelSpec& m, const Precisions& p) {
    Parallelism one;
    const Shapes s = detail::make_shapes(m, one);
    Stage all;
    all.layers = m.layers;
    all.moe_layers = s.moe_layers;
    all.windowed_layers = s.windowed_layers;
    all.state_layers = s.state_layers;
    return stage_weights(s, all, p);
}

std::optional<int> max_context_at_concurrency(const Deployment& d, int n) {
    if (n < 1) {
        throw InvalidArgument("max_context_at_concurrency: concurrency " + std::to_string(n) +
                              " is below 1; ask for at least one sequence");
    }
    const auto holds = [&](int ctx) {
        Deployment probe = d;
        probe.engine.max_model_len = ctx;
        const MemoryEstimate m = estimate_memory(probe);
        return m.kv_budget.si() > 0 && m.free.si() >= 0 && m.max_concurrency >= n;
    };
    // The longest context is at most max_model_len: the engine accepts nothing longer.
    int lo = 1;
    int hi = resolve_engine(d).max_model_len;
    if (!holds(lo)) {
        return std::nullopt;
    }
    if (holds(hi)) {
        return hi;
    }
    while (hi - lo > 1) { // holds(lo) && !holds(hi)
        const int mid = lo + (hi - lo) / 2;
        (holds(mid) ? lo : hi) = mid;
    }
    return lo;
}

double max_concurrency_at_context(const Deployment& d, int context) {
    Deployment probe = d;
    probe.engine.max_model_len = context;
    return estimate_memory(probe).max_concurrency;
}

std::optional<GpuPlan> fewest_gpus(const Deployment& d, int min_concurrency, int max_gpus) {
    const int tp_cap = std::min(8, d.gpus_per_node);
    for (int total = 1; total <= max_gpus; ++total) {
        for (int tp = tp_cap; tp >= 1; tp /= 2) {
            if ((tp & (tp - 1)) != 0 || total % tp != 0) {
                continue;
            }
            const int pp = total / tp;
            Deployment probe = d;
            probe.par = Parallelism{tp, pp, 1, d.par.ep > 1 ? tp : 1};
            try {
                validate(probe);
            } catch (const InvalidArgument&) {
                continue; // heads or layers do not split this way
            }
            MemoryEstimate m = estimate_memory(probe);
            if (m.fits && m.effective_concurrency >= min_concurrency) {
                return GpuPlan{probe.par, total, std::move(m)};
            }
        }
    }
    return std::nullopt;
}

std::optional<std::string> capacity_advice(const Deployment& d, const MemoryEstimate& m,
                                           int max_gpus) {
    if (m.fits || m.kv_budget.si() > 0) {
        return std::nullopt; // fits, or the KV cache (not the weights) is what runs short
    }
    const std::string now =
        std::to_string(replica_gpus(d.par)) + " GPU" + (replica_gpus(d.par) == 1 ? "" : "s");
    const std::optional<GpuPlan> fewest = fewest_gpus(d, 1, max_gpus);
    if (!fewest) {
        return "the weights and the engine's memory do not fit on " + now +
               " per replica, nor on up to " + std::to_string(max_gpus) + " x " + d.gpu.name +
               "; quantize the weights or choose a GPU with more memory";
    }
    return "the weights and the engine's memory do not fit on " + now +
           " per replica; the fewest that hold them and one sequence of max_model_len are " +
           std::to_string(fewest->gpus) + " x " + d.gpu.name + " (tp " +
           std::to_string(fewest->par.tp) + ", pp " + std::to_string(fewest->par.pp) +
           "), as `gpuplan fit` finds; set tp and pp so";
}

HostRamAdvice host_ram_advice(const Deployment& d) {
    HostRamAdvice a;
    a.gpus_per_node = std::min(d.gpus(), d.gpus_per_node);
    a.gpu_memory = d.gpu.memory * a.gpus_per_node;
    a.rule_of_thumb = a.gpu_memory * 2.0;
    a.weight_file = model_weight_bytes(d.model, d.prec);
    if (a.weight_file > a.rule_of_thumb) {
        a.recommended = a.weight_file;
        a.reason = "the weight file (" + format_in_gib(a.weight_file) +
                   ") is larger than twice the node's GPU memory; loading maps it through the "
                   "page cache";
    } else {
        a.recommended = a.rule_of_thumb;
        a.reason = "rule of thumb: system RAM at least twice the node's GPU memory (" +
                   std::to_string(a.gpus_per_node) + " × " + format_in_gib(d.gpu.memory) + ")";
    }
    return a;
}

} // namespace gpuplan::model
