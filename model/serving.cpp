#include "model/serving.hpp"
#include "model/checked_format.hpp"

#include "model/lora.hpp"
#include "model/validity.hpp"

#include "model/error.hpp"
#include "model/kv_offload.hpp"
#include "model/workload_mix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuplan::model {

namespace {

BatchStats& operator+=(BatchStats& a, const BatchStats& b) {
    a.prefill_tokens += b.prefill_tokens;
    a.prefills += b.prefills;
    a.decodes += b.decodes;
    a.prefill_pairs += b.prefill_pairs;
    a.prefill_pairs_windowed += b.prefill_pairs_windowed;
    a.prefill_kv_read += b.prefill_kv_read;
    a.prefill_kv_read_windowed += b.prefill_kv_read_windowed;
    a.decode_context += b.decode_context;
    a.decode_context_windowed += b.decode_context_windowed;
    a.extra_logit_rows += b.extra_logit_rows;
    return a;
}

BatchStats scaled(BatchStats s, double k) {
    s.prefill_tokens *= k;
    s.prefills *= k;
    s.decodes *= k;
    s.prefill_pairs *= k;
    s.prefill_pairs_windowed *= k;
    s.prefill_kv_read *= k;
    s.prefill_kv_read_windowed *= k;
    s.decode_context *= k;
    s.decode_context_windowed *= k;
    s.extra_logit_rows *= k;
    return s;
}

/// `tokens` prefill tokens that stand for parts of prompts of `computed` new tokens after
/// `cached` cached ones, in the steady state: whole-prompt-sized pieces at the prompt's average
/// position, so that attention work per token matches a full prefill.
BatchStats prompt_share(const StepCostModel& m, double tokens, int computed, int cached) {
    BatchStats s;
    if (tokens <= 0 || computed <= 0) {
        return s;
    }
    const double pieces = std::ceil(tokens / computed);
    const int size = std::max(1, static_cast<int>(std::lround(tokens / pieces)));
    const int position = cached + std::max(0, (computed - size) / 2);
    m.add(s, PrefillChunk{size, position});
    return scaled(s, tokens / size);
}

struct PrefillRun {
    Seconds time;
    int steps = 0;
    Flops model_flops;
    Bytes bytes;
    StepCost largest;
};

/// The steps that prefill one prompt, each also carrying `decodes` decode sequences at
/// `decode_context`.
PrefillRun run_prefill(const StepCostModel& m, int input_len, int cached, int decodes,
                       int decode_context, const SpeculativeModel* spec = nullptr) {
    const EngineSettings& e = m.engine();
    cached = std::clamp(cached, 0, std::max(0, input_len - 1));
    PrefillRun r;
    int pos = cached;
    int chunk = input_len - cached;
    if (e.chunked_prefill) {
        chunk = std::max(1, std::min(chunk, e.max_num_batched_tokens - decodes));
    }
    while (pos < input_len) {
        const int n = std::min(chunk, input_len - pos);
        BatchStats s;
        m.add(s, PrefillChunk{n, pos});
        m.add_decodes(s, decodes, decode_context);
        const StepCost c = m.cost(s);
        r.time += c.time;
        ++r.steps;
        if (spec != nullptr && spec->draft() != nullptr) {
            // The proposer sees the prompt too (a draft model prefills it; an EAGLE head or an
            // MTP module runs its one layer over the prompt's hidden states).
            BatchStats ds;
            spec->draft()->add(ds, PrefillChunk{n, pos});
            r.time += spec->draft_time(ds);
        }
        r.model_flops += c.model_flops;
        r.bytes += c.weight_bytes + c.kv_bytes;
        if (c.time > r.largest.time) {
            r.largest = c;
        }
        pos += n;
    }
    return r;
}

int average_context(const Workload& w) {
    return w.input_tokens + w.output_tokens / 2;
}

int computed_prompt(const StepCostModel& m, const Workload& w, int cached_prefix) {
    const int cached =
        m.engine().prefix_caching ? std::clamp(cached_prefix, 0, w.input_tokens - 1) : 0;
    return w.input_tokens - cached;
}

/// One steady-state cycle (every running sequence emits one token) of a replica with `running`
/// sequences: its time and the decode-only step inside it.
struct Cycle {
    Seconds time;
    StepCost decode_only;         ///< the decode-only step (speculative: the verify pass)
    Seconds draft;                ///< speculative: the proposer's time in the decode-only step
    double tokens_per_step = 1.0; ///< tokens each sequence advances per step
};

/// The steady-state cycle with speculative decoding: each step verifies k + 1 tokens per
/// sequence, runs the proposer, and advances every sequence by the expected accepted length E,
/// so the time per output token is (verify + draft) / E. The verify step is costed by the
/// step-cost model like any other, so whether it costs about one decode step (bandwidth-bound,
/// small batches) or k + 1 of them (compute-bound, large batches) is the model's answer.
Cycle speculative_cycle(const StepCostModel& m, const SpeculativeModel& spec, const Workload& w,
                        int running, int cached_prefix) {
    const EngineSettings& e = m.engine();
    const int mb = (running + m.pp() - 1) / m.pp();
    const int ctx = average_context(w);
    const int computed = computed_prompt(m, w, cached_prefix);
    const int cached = w.input_tokens - computed;
    const double tokens = spec.tokens_per_step();
    BatchStats ver;
    spec.add_verifies(m, ver, mb, ctx - 1);
    BatchStats drafts;
    const StepCostModel* dm = spec.draft();
    if (dm != nullptr) {
        dm->add_decodes(drafts, mb, ctx);
    }
    Cycle c;
    c.tokens_per_step = tokens;
    c.decode_only = m.cost(ver);
    c.draft = spec.draft_time(drafts);
    // As steady_cycle: a prompt runs as its own chunk when prompts arrive at under one chunk per
    // step. Every step advances each sequence by E tokens, so a step sees E × mb / output_len
    // prompts; each prompt's steps (with the proposer's prefill) replace verify steps, except in
    // SGLang, whose prompt batches add to them.
    const bool sglang = e.kind == EngineKind::Sglang;
    const double out = std::max(1, w.output_tokens);
    const double prompts_per_step = tokens * mb / out;
    const PrefillRun alone = sglang ? run_prefill(m, w.input_tokens, cached, 0, 0, &spec)
                                    : run_prefill(m, w.input_tokens, cached, mb - 1, ctx, &spec);
    const Seconds verify_step = c.decode_only.time + c.draft;
    if (prompts_per_step * alone.steps <= 1.0) {
        const Seconds displaced = sglang ? Seconds(0) : verify_step * alone.steps;
        const Seconds extra = std::max(Seconds(0), alone.time - displaced);
        c.time = (verify_step + extra * prompts_per_step) / tokens;
        return c;
    }
    // More than one chunk per step: E × mb × computed / output_len prompt tokens per step fill
    // the token budget together.
    const double prefill = tokens * static_cast<double>(mb) * computed / out;
    const double budget = e.max_num_batched_tokens;
    const StepCost full_chunk = m.cost(prompt_share(m, budget, computed, cached));
    const Seconds draft_chunk =
        dm != nullptr ? spec.draft_time(prompt_share(*dm, budget, computed, cached)) : Seconds(0);
    Seconds step;
    if (sglang) {
        step = verify_step + (full_chunk.time + draft_chunk) * (prefill / budget);
    } else {
        const double verify_tokens = static_cast<double>(mb) * (spec.k() + 1);
        const double riding = std::min(prefill, std::max(0.0, budget - verify_tokens));
        BatchStats mixed = ver;
        mixed += prompt_share(m, riding, computed, cached);
        if (dm != nullptr) {
            drafts += prompt_share(*dm, riding, computed, cached);
        }
        step = m.cost(mixed).time + spec.draft_time(drafts);
        if (prefill > riding) {
            step += (full_chunk.time + draft_chunk) * ((prefill - riding) / budget);
        }
    }
    c.time = step / tokens;
    return c;
}

Cycle steady_cycle(const StepCostModel& m, const Workload& w, int running, int cached_prefix,
                   const SpeculativeModel* spec = nullptr) {
    if (spec != nullptr) {
        return speculative_cycle(m, *spec, w, running, cached_prefix);
    }
    const EngineSettings& e = m.engine();
    const int mb = (running + m.pp() - 1) / m.pp(); // micro-batch per pipeline stage
    const int ctx = average_context(w);
    const int computed = computed_prompt(m, w, cached_prefix);
    const int cached = w.input_tokens - computed;
    const double out = std::max(1, w.output_tokens);
    BatchStats dec;
    m.add_decodes(dec, mb, ctx);
    Cycle c;
    c.decode_only = m.cost(dec);
    // Engines schedule a waiting prompt at once, as large a chunk as the token budget allows
    // (vLLM V1 §2.2), so a prompt is not spread thinly over the decode steps: its chunks are
    // steps of their own, compute-bound for long prompts. Each request brings one prompt per
    // `out` tokens, so a step sees mb / out prompts. While that is under one chunk per step,
    // the prompts run alone: each replaces its steps' decode-only time with its own.
    const bool sglang = e.kind == EngineKind::Sglang;
    const PrefillRun alone = sglang ? run_prefill(m, w.input_tokens, cached, 0, 0)
                                    : run_prefill(m, w.input_tokens, cached, mb - 1, ctx);
    const double prompts_per_step = mb / out;
    if (prompts_per_step * alone.steps <= 1.0) {
        // SGLang runs a prefill batch or a decode batch per iteration, not both
        // (python/sglang/srt/managers/schedule_policy.py with enable_mixed_chunk off;
        // docs/engines.md §4.2), so its prompt steps add to the decode steps.
        const Seconds displaced = sglang ? Seconds(0) : c.decode_only.time * alone.steps;
        const Seconds extra = std::max(Seconds(0), alone.time - displaced);
        c.time = c.decode_only.time + extra * prompts_per_step;
        return c;
    }
    // More than one chunk per step: prompts fill the token budget together.
    // Each request needs `computed` prefill tokens per `output_len` decode tokens, so a step
    // with mb decodes carries mb × computed / output_len prefill tokens on average.
    const double prefill = static_cast<double>(mb) * computed / out;
    const double budget = e.max_num_batched_tokens;
    const StepCost full_chunk = m.cost(prompt_share(m, budget, computed, cached));
    if (sglang) {
        c.time = c.decode_only.time + full_chunk.time * (prefill / budget);
        return c;
    }
    // Decodes are scheduled first, prompts take the rest of the token budget (vLLM V1 §2.2);
    // prompt tokens beyond it need extra prefill steps.
    const double riding = std::min(prefill, std::max(0.0, budget - mb));
    BatchStats mixed = dec;
    mixed += prompt_share(m, riding, computed, cached);
    c.time = m.cost(mixed).time;
    if (prefill > riding) {
        c.time += full_chunk.time * ((prefill - riding) / budget);
    }
    return c;
}

PhaseFigures figures(Seconds time, Flops model_flops, Bytes bytes, const StepCostModel& m) {
    PhaseFigures f;
    f.time = time;
    f.model_flops = model_flops;
    f.bytes = bytes;
    if (time.si() > 0) {
        f.mfu = model_flops / (m.mfu_peak() * time) / m.replica_gpus();
        // Per GPU of a stage: the bytes of one rank summed over stages, over pp GPUs' time.
        f.mbu = bytes / (m.bandwidth() * time) / m.pp();
    }
    return f;
}

void check_workload(const Workload& w, const EngineSettings& e, int cached_prefix) {
    const int concurrency = w.concurrency.value_or(1);
    if (w.input_tokens < 1 || w.output_tokens < 1 || concurrency < 1 || cached_prefix < 0) {
        throw InvalidArgument("workload: input_tokens " + std::to_string(w.input_tokens) +
                              ", output_tokens " + std::to_string(w.output_tokens) +
                              ", concurrency " + std::to_string(concurrency) + ", cached prefix " +
                              std::to_string(cached_prefix) +
                              ": lengths and concurrency must be at least 1 and the cached "
                              "prefix not negative");
    }
    if (!e.chunked_prefill && e.kind != EngineKind::LlamaCpp &&
        w.input_tokens > e.max_num_batched_tokens) {
        throw InvalidArgument("workload: a prompt of " + std::to_string(w.input_tokens) +
                              " tokens exceeds max_num_batched_tokens " +
                              std::to_string(e.max_num_batched_tokens) +
                              " with chunked prefill off, so the engine cannot schedule it; "
                              "enable chunked prefill or raise max_num_batched_tokens");
    }
    check_request_length(w.input_tokens, w.output_tokens, e.max_model_len);
}

} // namespace

Seconds ttft(const StepCostModel& m, int input_len, int cached) {
    if (input_len < 1) {
        return Seconds(0);
    }
    return run_prefill(m, input_len, cached, 0, 0).time;
}

Seconds tpot(const StepCostModel& m, int batch, int context, const SpeculativeModel* spec) {
    BatchStats s;
    if (spec == nullptr) {
        m.add_decodes(s, batch, context);
        return m.cost(s).time;
    }
    spec->add_verifies(m, s, batch, context - 1);
    BatchStats drafts;
    if (spec->draft() != nullptr) {
        spec->draft()->add_decodes(drafts, batch, context);
    }
    return (m.cost(s).time + spec->draft_time(drafts)) / spec->tokens_per_step();
}

double replica_throughput(const StepCostModel& m, const Workload& w, int running, int cached_prefix,
                          const SpeculativeModel* spec) {
    if (running < 1) {
        return 0.0;
    }
    const Cycle c = steady_cycle(m, w, running, cached_prefix, spec);
    return c.time.si() > 0 ? running / c.time.si() : 0.0;
}

ChunkInterference chunk_interference(const StepCostModel& m, const Workload& w, int running,
                                     int cached_prefix, const SpeculativeModel* spec) {
    ChunkInterference r;
    running = std::max(1, running);
    if (spec != nullptr) {
        r.decode_step = steady_cycle(m, w, running, cached_prefix, spec).time;
        return r;
    }
    // The same split as steady_cycle's first branch: a step sees mb / out prompts of
    // alone.steps chunk steps each.
    const EngineSettings& e = m.engine();
    const int mb = (running + m.pp() - 1) / m.pp();
    const int ctx = average_context(w);
    const int cached = w.input_tokens - computed_prompt(m, w, cached_prefix);
    const bool sglang = e.kind == EngineKind::Sglang;
    BatchStats dec;
    m.add_decodes(dec, mb, ctx);
    const Seconds decode_only = m.cost(dec).time;
    const PrefillRun alone = sglang ? run_prefill(m, w.input_tokens, cached, 0, 0)
                                    : run_prefill(m, w.input_tokens, cached, mb - 1, ctx);
    const double prompts_per_step = mb / static_cast<double>(std::max(1, w.output_tokens));
    const double share = prompts_per_step * alone.steps;
    if (share > 1.0 || alone.steps < 1) {
        r.decode_step = steady_cycle(m, w, running, cached_prefix).time;
        r.share = 1.0;
        r.every_step = true;
        return r;
    }
    const Seconds displaced = sglang ? Seconds(0) : decode_only * alone.steps;
    r.decode_step = decode_only;
    r.extra = std::max(Seconds(0), alone.time - displaced) / alone.steps;
    r.share = share;
    r.chunk_steps = alone.steps;
    return r;
}

int replica_capacity(const MemoryEstimate& mem, const Workload& w) {
    if (!mem.fits) {
        return 0;
    }
    const EngineSettings& e = mem.engine;
    if (e.kind == EngineKind::LlamaCpp) {
        return static_cast<long long>(w.input_tokens) + w.output_tokens <= e.max_model_len
                   ? e.max_num_seqs
                   : 0;
    }
    const double bs = e.block_size;
    if (mem.state_groups > 0) {
        // vLLM with recurrent layers: blocks per request, the null block left out (§9.1).
        const double blocks =
            mem.attention_groups * std::ceil(average_context(w) / bs) + mem.state_groups;
        const double by_pages =
            std::floor(std::max(0.0, static_cast<double>(mem.kv_blocks) - 1.0) / blocks);
        return static_cast<int>(std::min<double>(e.max_num_seqs, by_pages));
    }
    if (mem.state_per_sequence.si() > 0) {
        // SGLang and TensorRT-LLM: each running sequence holds its KV and its state (§9.2-9.3).
        const double per_sequence =
            average_context(w) * mem.kv_per_token.si() + mem.state_per_sequence.si();
        const double by_bytes = std::floor(std::max(0.0, mem.kv_budget.si()) / per_sequence);
        return static_cast<int>(std::min<double>(e.max_num_seqs, by_bytes));
    }
    const double per_request = std::ceil(average_context(w) / bs) * bs;
    // vLLM reserves block 0 as the null block (vllm/v1/core/block_pool.py; docs/engines.md §1.3).
    const double usable =
        static_cast<double>(mem.kv_tokens) - (e.kind == EngineKind::Vllm ? bs : 0.0);
    const double by_kv = std::floor(std::max(0.0, usable) / per_request);
    return static_cast<int>(std::min<double>(e.max_num_seqs, by_kv));
}

LoadFit load_fit(const Deployment& d, const MemoryEstimate& mem, const Workload& w,
                 int concurrency) {
    LoadFit r;
    r.requested = concurrency;
    r.holds = static_cast<long long>(replica_capacity(mem, w)) * d.par.dp;
    r.fits = mem.fits && r.holds >= concurrency;
    if (!mem.fits) {
        r.reason = "the engine does not start (see the reasons above)";
    } else if (!r.fits) {
        r.reason = std::to_string(concurrency) + " sequences of " + std::to_string(w.input_tokens) +
                   " + " + std::to_string(w.output_tokens) +
                   " tokens do not run at once: " + std::to_string(d.par.dp) + " replica" +
                   (d.par.dp == 1 ? " holds " : "s hold ") + std::to_string(r.holds) +
                   " (KV cache and max_num_seqs); lower the concurrency, use an fp8 KV cache or "
                   "add replicas";
    }
    return r;
}

double single_stream_decode_bound(const StepCostModel& m, int context) {
    BatchStats s;
    m.add_decodes(s, 1, std::max(1, context));
    const StepCost c = m.cost(s);
    // Per GPU: each stage's rank reads its share; stages run one after another.
    const Bytes per_token = c.weight_bytes + c.kv_bytes;
    return per_token.si() > 0 ? m.bandwidth().si() / per_token.si() : 0.0;
}

namespace {

/// Output tokens/s of the deployment with `concurrency` sequences spread evenly over its
/// replicas, each running at most `capacity`.
double deployment_throughput(const StepCostModel& m, const Workload& w, int concurrency,
                             int capacity, int dp, int cached_prefix,
                             const SpeculativeModel* spec) {
    const int base = concurrency / dp;
    const int extra = concurrency % dp;
    return extra * replica_throughput(m, w, std::min(base + 1, capacity), cached_prefix, spec) +
           (dp - extra) * replica_throughput(m, w, std::min(base, capacity), cached_prefix, spec);
}

/// Request latency with `running` sequences per replica: the prefill sharing steps with the
/// others' decodes, then one steady-state step per further output token.
Seconds request_latency(const StepCostModel& m, const Workload& w, int running, int cached,
                        int cached_prefix, const SpeculativeModel* spec) {
    const int mb = (std::max(1, running) + m.pp() - 1) / m.pp();
    const Seconds prefill =
        run_prefill(m, w.input_tokens, cached, mb - 1, average_context(w), spec).time;
    const Seconds step = steady_cycle(m, w, std::max(1, running), cached_prefix, spec).time;
    return prefill + step * (w.output_tokens - 1);
}

/// Settles an offered rate λ: the mean number in flight N solves N = λ × latency(N) (Little's
/// law), found by the monotone iteration N ← ⌈λ × latency(N)⌉ from 1 (latency grows with N).
/// Past the deployment's capacity the queue grows without bound: N is the capacity.
void settle_offered_load(const StepCostModel& m, const Workload& w, int capacity, int dp,
                         int cached, int cached_prefix, const SpeculativeModel* spec,
                         ServingEstimate& r) {
    OperatingPoint& op = r.operating_point;
    const double rate = *op.requests_per_s;
    const int most = capacity * dp;
    const double offered_tok_s = rate * w.output_tokens;
    op.utilisation = r.peak_throughput > 0 ? offered_tok_s / r.peak_throughput : 0.0;
    int n = 1;
    for (int i = 0; i < 200; ++i) {
        const int per_replica = std::min(capacity, (n + dp - 1) / dp);
        const double in_flight =
            rate * request_latency(m, w, per_replica, cached, cached_prefix, spec).si();
        const int next =
            static_cast<int>(std::min<double>(std::ceil(in_flight - 1e-9), most + 1.0));
        if (next > most) {
            n = most;
            break;
        }
        if (next <= n) {
            break;
        }
        n = next;
    }
    op.concurrency = std::max(1, n);
    op.why += gpuplan::checked_format(
        ": {} in flight by Little's law, {:.0f} % of the most the deployment "
        "serves{}",
        op.concurrency, *op.utilisation * 100,
        *op.utilisation > 1 ? "; the queue grows without bound" : "");
}

} // namespace

namespace {

// estimate_serving at exactly `cached_prefix` cached prompt tokens per request.
ServingEstimate serving_at(const Deployment& d, const Workload& given,
                           const EfficiencyProfile& profile, int cached_prefix) {
    ServingEstimate r;
    r.memory = estimate_memory(d);
    const StepCostModel m(d, profile);
    std::optional<SpeculativeModel> spec_model;
    if (d.engine.speculative) {
        spec_model.emplace(d, *d.engine.speculative, profile);
    }
    const SpeculativeModel* spec = spec_model ? &*spec_model : nullptr;
    // A class mix is served as its mean request, its shared prefix as prefix-cache hits
    // (model/workload_mix.hpp): the same request the sizing search prunes with.
    const Workload w =
        given.classes.empty() && given.trace.empty() ? given : analytic_request(given);
    check_workload(w, m.engine(), cached_prefix);
    r.provenance = profile.provenance;
    if (const auto note = gemm_scale_fallback_note(profile.gemm, m.gemm_class())) {
        r.provenance.description += "; " + *note;
    }
    r.error_band = profile.error_band;

    const int dp = d.par.dp;
    const int capacity = replica_capacity(r.memory, w);
    const int cached = w.input_tokens - computed_prompt(m, w, cached_prefix);
    r.operating_point = resolve_operating_point(r.memory, given, dp);
    if (capacity >= 1) {
        double best = 0.0;
        int best_n = 0;
        for (int n = 1;; n = std::min(n * 2, capacity)) {
            const double t = replica_throughput(m, w, n, cached_prefix, spec);
            if (t > best) {
                best = t;
                best_n = n;
            }
            if (n == capacity) {
                break;
            }
        }
        r.peak_throughput = best * dp;
        r.peak_concurrency = best_n * dp;
        if (r.operating_point.kind == LoadKind::OfferedRate) {
            settle_offered_load(m, w, capacity, dp, cached, cached_prefix, spec, r);
        }
    }
    const int concurrency = r.operating_point.concurrency;
    const int want = (concurrency + dp - 1) / dp;
    r.running = std::min(want, capacity);
    const int batch = std::max(1, r.running);
    const int ctx = average_context(w);

    const PrefillRun lone = run_prefill(m, w.input_tokens, cached, 0, 0, spec);
    r.ttft = lone.time;
    r.prefill_step = lone.largest;
    r.prefill = figures(lone.time, lone.model_flops, lone.bytes, m);
    const int mb = (batch + m.pp() - 1) / m.pp();
    r.ttft_loaded = run_prefill(m, w.input_tokens, cached, mb - 1, ctx, spec).time;

    const Cycle cycle = steady_cycle(m, w, batch, cached_prefix, spec);
    r.tpot = cycle.time;
    r.tpot_decode_only = (cycle.decode_only.time + cycle.draft) / cycle.tokens_per_step;
    if (spec != nullptr) {
        SpeculativeFigures& f = r.speculative.emplace();
        f.method = spec->method();
        f.k = spec->k();
        f.acceptance = spec->acceptance();
        f.tokens_per_step = spec->tokens_per_step();
        f.verify_time = cycle.decode_only.time;
        f.draft_time = cycle.draft;
        f.tpot_off = steady_cycle(m, w, batch, cached_prefix).time;
        f.speedup = r.tpot.si() > 0 ? f.tpot_off / r.tpot : 1.0;
        f.draft_weights = r.memory.draft_weights;
        f.draft_kv_per_token = r.memory.draft_kv_per_token;
    }
    r.decode_step = cycle.decode_only;
    r.decode = figures(cycle.decode_only.time, cycle.decode_only.model_flops,
                       cycle.decode_only.weight_bytes + cycle.decode_only.kv_bytes, m);
    r.single_stream_bound = single_stream_decode_bound(m, ctx);

    if (capacity >= 1) {
        r.throughput = deployment_throughput(m, w, concurrency, capacity, dp, cached_prefix, spec);
        const auto& op = r.operating_point;
        if (op.kind == LoadKind::OfferedRate && op.utilisation && *op.utilisation <= 1.0) {
            // A stable open loop serves exactly what is offered, on average.
            r.throughput = *op.requests_per_s * w.output_tokens;
        }
    }
    if (d.engine.lora) {
        // Requests per second per replica at the operating point (the step costs above already
        // include the batched LoRA kernels).
        const double rate = w.output_tokens > 0 ? r.throughput / w.output_tokens / dp : 0.0;
        r.lora = lora_figures(d, rate);
        // A request whose adapter is in no GPU slot waits for its load before its prefill (the
        // simulator's LoRA cache): on average mean_load_delay.
        r.ttft_loaded = r.ttft_loaded + r.lora->mean_load_delay;
    }
    return r;
}

// engine.kv_offload (model/kv_offload.hpp): the shared prefix is split over the GPU's cache
// and the tiers by lru_tier_hits at the running batch; what no tier holds is recomputed, what
// the host and NVMe hold is loaded before the prefill (added to TTFT), and each load stalls
// the replica's step it rides in (added to every running sequence's time per output token).
ServingEstimate with_kv_offload(const Deployment& d, const Workload& given,
                                const EfficiencyProfile& profile, int shared) {
    Deployment base = d;
    base.engine.kv_offload.reset();
    const ServingEstimate full = serving_at(base, given, profile, shared);
    const MemoryEstimate& mem = full.memory;
    const Workload w =
        given.classes.empty() && given.trace.empty() ? given : analytic_request(given);
    KvOffloadFigures f;
    f.tiers =
        resolve_kv_offload(*d.engine.kv_offload, mem.kv_budget, d.engine.kv_offload->host_link);
    const double per_token = mem.kv_per_token.si();
    f.working_set = kv_working_set_tokens(given);
    f.shared_tokens = std::clamp(shared, 0, std::max(0, w.input_tokens - 1));
    if (f.working_set <= 0 && f.shared_tokens > 0) {
        f.working_set = f.shared_tokens; // one prefix (no classes): the request's own
    }
    const double priv = w.input_tokens - f.shared_tokens + w.output_tokens / 2.0;
    f.gpu_cache_tokens = std::max(0.0, static_cast<double>(mem.kv_tokens) - full.running * priv);
    f.host_tokens = per_token > 0 ? f.tiers.host.capacity.si() / per_token : 0;
    f.nvme_tokens = per_token > 0 ? f.tiers.nvme.capacity.si() / per_token : 0;
    f.split = lru_tier_hits(f.working_set, f.gpu_cache_tokens, f.host_tokens, f.nvme_tokens);
    const auto tokens = [&](double share) {
        return static_cast<int>(std::lround(f.shared_tokens * share));
    };
    const int gpu_cached = tokens(f.split.gpu);
    const int all_cached = tokens(1.0 - f.split.miss);
    const double host_bytes = f.shared_tokens * f.split.host * per_token;
    const double nvme_bytes = f.shared_tokens * f.split.nvme * per_token;
    f.bytes_per_request = Bytes(host_bytes + nvme_bytes);
    f.load_time =
        (host_bytes > 0 ? kv_load_time(Bytes(host_bytes), f.tiers.host.bandwidth) : Seconds(0)) +
        (nvme_bytes > 0 ? kv_load_time(Bytes(nvme_bytes), f.tiers.nvme.bandwidth) : Seconds(0));
    const ServingEstimate without = serving_at(base, given, profile, gpu_cached);
    f.ttft_without = without.ttft;
    f.throughput_without = without.throughput;
    const double input = std::max(1, w.input_tokens);
    f.hit_rate_without = gpu_cached / input;
    f.hit_rate = all_cached / input;
    ServingEstimate r = serving_at(base, given, profile, all_cached);
    r.ttft = r.ttft + f.load_time;
    r.ttft_loaded = r.ttft_loaded + f.load_time;
    if (f.load_time.si() > 0 && w.output_tokens > 0) {
        // Each request's load stalls one step of its replica: every running sequence waits.
        const Seconds before = r.tpot;
        r.tpot =
            r.tpot + f.load_time * (static_cast<double>(std::max(1, r.running)) / w.output_tokens);
        const auto& op = r.operating_point;
        const bool served =
            op.kind == LoadKind::OfferedRate && op.utilisation && *op.utilisation <= 1.0;
        if (!served && r.tpot.si() > 0) {
            r.throughput *= before / r.tpot;
        }
    }
    r.kv_offload = f;
    return r;
}

} // namespace

ServingEstimate estimate_serving(const Deployment& d, const Workload& given,
                                 const EfficiencyProfile& profile, int cached_prefix) {
    if (const auto mix = mean_request(given)) {
        cached_prefix = std::max(cached_prefix, mix->cached_prefix);
    }
    if (d.engine.kv_offload) {
        return with_kv_offload(d, given, profile, cached_prefix);
    }
    return serving_at(d, given, profile, cached_prefix);
}

} // namespace gpuplan::model
