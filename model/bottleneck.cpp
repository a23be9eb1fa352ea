#include "model/bottleneck.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/unit_parser.hpp"
#include "model/validity.hpp"
#include "model/workload_mix.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuplan::model {

namespace {

std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return mark_non_finite(v, buf);
}

std::string ms(Seconds t) {
    return fmt("%.3g ms", t.si() * 1e3);
}

std::string gb(Bytes b) {
    return fmt("%.3g GB", b.si() / 1e9);
}

std::string tflop(double flops) {
    return fmt("%.3g TFLOP", flops / 1e12);
}

/// Splits a step's time by what bounds each operator.
PhaseBottleneck split(const StepCost& c, Seconds phase_time) {
    PhaseBottleneck p;
    p.time = phase_time;
    for (const OpCost& o : c.ops) {
        switch (o.bound) {
        case Bound::Compute:
            p.compute += o.time - o.overhead;
            p.overhead += o.overhead;
            break;
        case Bound::Memory:
            p.bandwidth += o.time - o.overhead;
            p.overhead += o.overhead;
            break;
        case Bound::Communication: p.interconnect += o.time; break;
        case Bound::Overhead: p.overhead += o.time; break;
        case Bound::None: break;
        }
    }
    p.overhead += c.step_overhead;
    const Seconds total = p.compute + p.bandwidth + p.interconnect + p.overhead;
    struct Part {
        Resource r;
        Seconds t;
    };
    const Part parts[] = {{Resource::Compute, p.compute},
                          {Resource::MemoryBandwidth, p.bandwidth},
                          {Resource::Interconnect, p.interconnect},
                          {Resource::StepOverhead, p.overhead}};
    const Part* best = &parts[0];
    for (const Part& part : parts) {
        if (part.t > best->t) {
            best = &part;
        }
    }
    p.binding = best->r;
    p.share = total.si() > 0 ? best->t / total : 0.0;
    return p;
}

std::string others(const PhaseBottleneck& p) {
    const Seconds total = p.compute + p.bandwidth + p.interconnect + p.overhead;
    if (total.si() <= 0) {
        return "";
    }
    return "compute " + format_percent(p.compute / total) + ", memory bandwidth " +
           format_percent(p.bandwidth / total) + ", interconnect " +
           format_percent(p.interconnect / total) + ", overhead " +
           format_percent(p.overhead / total);
}

std::string resource_phrase(Resource r) {
    switch (r) {
    case Resource::MemoryCapacity: return "memory capacity";
    case Resource::MemoryBandwidth: return "memory-bandwidth-bound";
    case Resource::Compute: return "compute-bound";
    case Resource::Interconnect: return "interconnect-bound";
    case Resource::StepOverhead: return "launch and per-step overhead";
    }
    return "";
}

std::string precision_change(const char* what, const Precision& from, const Precision& to) {
    return std::string(what) + " " + from.name + " (" + fmt("%.3g", from.bits_per_element) +
           " bit) → " + to.name + " (" + fmt("%.3g", to.bits_per_element) + " bit)";
}

} // namespace

const char* to_string(Resource r) {
    switch (r) {
    case Resource::MemoryCapacity: return "memory-capacity";
    case Resource::MemoryBandwidth: return "memory-bandwidth";
    case Resource::Compute: return "compute";
    case Resource::Interconnect: return "interconnect";
    case Resource::StepOverhead: return "step-overhead";
    }
    return "compute";
}

BottleneckReport find_bottleneck(const Deployment& d, const Workload& given,
                                 const EfficiencyProfile& profile, int cached_prefix) {
    BottleneckReport r;
    r.estimate = estimate_serving(d, given, profile, cached_prefix);
    const Workload w = analytic_request(given); // the request the figures are for
    const ServingEstimate& e = r.estimate;
    const MemoryEstimate& mem = e.memory;
    const int want = (e.operating_point.concurrency + d.par.dp - 1) / d.par.dp;

    // Capacity.
    if (!mem.fits) {
        r.capacity_binds = true;
        for (const std::string& reason : mem.reasons) {
            r.capacity_detail += (r.capacity_detail.empty() ? "" : "; ") + reason;
        }
        if (const auto advice = capacity_advice(d, mem)) {
            r.capacity_detail += "; " + *advice;
        }
    } else if (e.running < want) {
        r.capacity_binds = true;
        const bool seqs = e.running >= mem.engine.max_num_seqs;
        r.capacity_detail =
            "each replica runs " + std::to_string(e.running) + " of the " + std::to_string(want) +
            " requested sequences: " +
            (seqs ? "max_num_seqs " + std::to_string(mem.engine.max_num_seqs) + " caps it"
                  : "the KV cache (" + std::to_string(mem.kv_tokens) + " tokens, " +
                        fmt("%.3g GiB", mem.kv_budget.si() / kGiB) + ") holds no more at " +
                        std::to_string(w.input_tokens + w.output_tokens / 2) +
                        " tokens of average context");
    }

    // Prefill: the lone request's prefill steps, split as its largest step.
    r.prefill = split(e.prefill_step, e.ttft);
    r.prefill.detail = "prefill of " + std::to_string(w.input_tokens) + " tokens takes " +
                       ms(e.ttft) + ": " + format_percent(r.prefill.share) + " " +
                       resource_phrase(r.prefill.binding) + " (" +
                       tflop(e.prefill.model_flops.si()) + " of model work at MFU " +
                       format_percent(e.prefill.mfu) + ", MBU " + format_percent(e.prefill.mbu) +
                       "); " + others(r.prefill);

    r.decode = split(e.decode_step, e.tpot_decode_only);
    r.decode.detail = "decode step of " + std::to_string(e.decode_step.sequences) +
                      " sequences at " + std::to_string(w.input_tokens + w.output_tokens / 2) +
                      " tokens takes " + ms(e.tpot_decode_only) + ": " +
                      format_percent(r.decode.share) + " " + resource_phrase(r.decode.binding) +
                      " (" + gb(e.decode_step.weight_bytes) + " of weights and " +
                      gb(e.decode_step.kv_bytes) + " of KV per GPU at " +
                      fmt("%.3g TB/s", d.gpu.memory_bandwidth.si() / 1e12) + " peak, MBU " +
                      format_percent(e.decode.mbu) + ", MFU " + format_percent(e.decode.mfu) +
                      "); " + others(r.decode);

    if (r.capacity_binds) {
        if (!mem.fits) {
            r.prefill.binding = Resource::MemoryCapacity;
            r.prefill.share = 1.0;
            r.prefill.detail = "does not fit: " + r.capacity_detail;
        }
        r.decode.binding = Resource::MemoryCapacity;
        r.decode.share = 1.0;
        r.decode.detail = r.capacity_detail + "; per step: " + r.decode.detail;
    }
    return r;
}

std::vector<WhatIf> what_ifs(const Deployment& d, const Workload& given,
                             const EfficiencyProfile& profile,
                             std::span<const GpuCandidate> candidates, int cached_prefix) {
    const ServingEstimate base = estimate_serving(d, given, profile, cached_prefix);
    const Workload w = analytic_request(given); // the request the figures are for
    std::vector<WhatIf> out;

    const auto evaluate = [&](std::string name, std::string change, const Deployment& changed,
                              std::string note, const EfficiencyProfile* other = nullptr) {
        WhatIf x;
        x.name = std::move(name);
        x.change = std::move(change);
        x.note = std::move(note);
        try {
            x.gpus = changed.gpus(); // throws only for more than kMaxGpus GPUs
            const ServingEstimate e = estimate_serving(
                changed, given, other != nullptr ? *other : profile, cached_prefix);
            x.fits = e.memory.fits;
            x.max_concurrency = e.memory.max_concurrency;
            x.ttft = e.ttft;
            x.tpot = e.tpot;
            x.throughput = e.throughput;
            x.throughput_per_gpu = x.gpus > 0 ? e.throughput / x.gpus : 0.0;
            x.throughput_gain = base.throughput > 0 ? e.throughput / base.throughput : 0.0;
            x.ttft_ratio = base.ttft.si() > 0 ? e.ttft / base.ttft : 0.0;
            x.tpot_ratio = base.tpot.si() > 0 ? e.tpot / base.tpot : 0.0;
        } catch (const InputError& err) {
            x.applicable = false;
            x.note = err.what();
        }
        out.push_back(std::move(x));
    };
    const auto not_applicable = [&](std::string name, std::string change, std::string why) {
        WhatIf x;
        x.name = std::move(name);
        x.change = std::move(change);
        x.applicable = false;
        x.note = std::move(why);
        x.gpus = d.gpus();
        out.push_back(std::move(x));
    };

    // Quantize the weights.
    const Precision& weights = d.prec.weights;
    const auto quantize = [&](const char* key, const char* precision, double above_bits) {
        const auto p = find_precision(precision);
        if (!p) {
            return;
        }
        if (weights.bits_per_element <= above_bits) {
            not_applicable(key, precision_change("weights", weights, *p),
                           "weights are already at " + fmt("%.3g", weights.bits_per_element) +
                               " bits per element");
            return;
        }
        Deployment x = d;
        x.prec.weights = *p;
        // Never propose a format the engine or the GPU cannot run (the same rule validate uses).
        const FormatSupport support = format_support(x.engine.kind, x.prec, x.gpu);
        if (!support.runs) {
            return;
        }
        evaluate(key, precision_change("weights", weights, *p), x, support.note);
    };
    if (d.engine.kind == EngineKind::LlamaCpp) {
        // llama.cpp quantizes to GGUF formats only.
        quantize("weights-int8", "q8_0", 8.5);
        quantize("weights-int4", "q4_k_m", 5.0);
    } else {
        if (d.gpu.dense.fp8) {
            quantize("weights-fp8", "fp8", 8.5);
        }
        quantize("weights-int8", d.gpu.dense.int8 ? "int8" : "int8-weight-only", 8.5);
        quantize("weights-int4", "awq-int4", 5.0);
    }

    // FP8 KV cache.
    if (const auto fp8 = find_precision("fp8")) {
        const Precision& kv = d.prec.kv_cache;
        if (kv.bits_per_element <= 8.0) {
            not_applicable("kv-fp8", precision_change("kv cache", kv, *fp8),
                           "the KV cache is already at " + fmt("%.3g", kv.bits_per_element) +
                               " bits");
        } else {
            Deployment x = d;
            x.prec.kv_cache = *fp8;
            evaluate("kv-fp8", precision_change("kv cache", kv, *fp8), x, "");
        }
    }

    // Halve max_model_len.
    {
        const int len = base.memory.engine.max_model_len;
        const int half = len / 2;
        const std::string change =
            "max_model_len " + std::to_string(len) + " → " + std::to_string(half);
        if (half < w.input_tokens + w.output_tokens) {
            not_applicable("max-model-len-half", change,
                           "the workload's requests need " +
                               std::to_string(w.input_tokens + w.output_tokens) + " tokens");
        } else {
            Deployment x = d;
            x.engine.max_model_len = half;
            evaluate("max-model-len-half", change, x, "");
        }
    }

    // Raise max_num_seqs when it binds before the KV cache.
    if (base.memory.fits && base.memory.concurrency_limit == ConcurrencyLimit::MaxNumSeqs) {
        const int old = base.memory.engine.max_num_seqs;
        const double per_request =
            std::ceil((w.input_tokens + w.output_tokens / 2.0) / base.memory.engine.block_size) *
            base.memory.engine.block_size;
        const int by_kv =
            static_cast<int>(static_cast<double>(base.memory.kv_tokens) / per_request);
        if (by_kv > old) {
            Deployment x = d;
            x.engine.max_num_seqs = by_kv;
            if (x.engine.max_num_batched_tokens.value_or(
                    base.memory.engine.max_num_batched_tokens) < by_kv) {
                x.engine.max_num_batched_tokens = by_kv;
            }
            evaluate("max-num-seqs",
                     "max_num_seqs " + std::to_string(old) + " → " + std::to_string(by_kv) +
                         " (what the KV cache holds)",
                     x, "");
        }
    }

    // Speculative decoding off: whether it pays at this load (model/speculative.hpp).
    if (d.engine.speculative) {
        Deployment x = d;
        x.engine.speculative.reset();
        evaluate("speculative-off",
                 std::string("speculative decoding (") + to_string(d.engine.speculative->method) +
                     ") → off",
                 x, "");
    }

    // More or less tensor parallelism.
    {
        Deployment x = d;
        x.par.tp = d.par.tp * 2;
        if (x.par.ep > 1) {
            x.par.ep = x.par.tp;
        }
        evaluate("tp-x2", "tp " + std::to_string(d.par.tp) + " → " + std::to_string(x.par.tp), x,
                 "uses " + std::to_string(d.par.tp * 2 * d.par.pp * d.par.dp) +
                     " GPUs instead of " + std::to_string(d.gpus()));
    }
    if (d.par.tp >= 2) {
        Deployment x = d;
        x.par.tp = d.par.tp / 2;
        if (x.par.ep > 1) {
            x.par.ep = std::max(1, x.par.tp);
        }
        const int fewer = x.gpus(); // below d.gpus(), so within kMaxGpus
        evaluate("tp-half", "tp " + std::to_string(d.par.tp) + " → " + std::to_string(x.par.tp), x,
                 "uses " + std::to_string(fewer) + " GPUs instead of " + std::to_string(d.gpus()));
    }

    // Another GPU, same layout.
    for (const GpuCandidate& c : candidates) {
        const AcceleratorSpec& g = c.gpu;
        if (g.name == d.gpu.name) {
            continue;
        }
        Deployment x = d;
        x.gpu = g;
        if (!format_support(x.engine.kind, x.prec, x.gpu).runs) {
            continue; // the engine cannot run these formats on that GPU
        }
        evaluate("gpu:" + g.name, "gpu " + d.gpu.name + " → " + g.name, x, "", &c.profile);
    }

    // One more replica.
    {
        Deployment x = d;
        x.par.dp = d.par.dp + 1;
        // d.gpus() + tp × pp: both at most kMaxGpus, so the sum cannot wrap an int.
        const int more = d.gpus() + replica_gpus(d.par);
        evaluate("replicas+1",
                 "replicas " + std::to_string(d.par.dp) + " → " + std::to_string(x.par.dp), x,
                 "uses " + std::to_string(more) + " GPUs instead of " + std::to_string(d.gpus()));
    }

    const bool base_fits = base.memory.fits;
    std::stable_sort(out.begin(), out.end(), [&](const WhatIf& a, const WhatIf& b) {
        if (a.applicable != b.applicable) {
            return a.applicable;
        }
        if (!base_fits && a.fits != b.fits) {
            return a.fits;
        }
        if (a.throughput != b.throughput) {
            return a.throughput > b.throughput;
        }
        return a.tpot < b.tpot;
    });
    return out;
}

} // namespace gpuplan::model
