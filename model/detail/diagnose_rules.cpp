// The serving rows of model::diagnose, one function per row of the troubleshooting table
// (docs/diagnose.md): each reads the shared ServingFacts and appends its row when it applies.
#include "model/detail/diagnose_rules.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"
#include "model/operating_point.hpp"
#include "model/precision.hpp"
#include "model/unit_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace gpuplan::model::detail {

namespace {

std::string ms(double s) {
    return s * 1e3 >= 100 ? gpuplan::checked_format("{:.0f} ms", s * 1e3)
                          : gpuplan::checked_format("{:.3g} ms", s * 1e3);
}
// A PCIe 4.0 x16 link moves about 25 GB/s in practice (32 GB/s on paper, PCI-SIG), the rate
// weights offloaded to host memory (vLLM --cpu-offload-gb) are streamed back at every step.
constexpr double kPcieBytesPerS = 25e9;

/// Re-estimates one fix at the demand.
DiagnosisFix reestimate(FixLayer layer, std::string change, Deployment dd, Workload ww,
                        const EfficiencyProfile& profile, const ServingEstimate& before,
                        int before_dp) {
    DiagnosisFix f;
    f.layer = layer;
    f.change = std::move(change);
    try {
        f.gpus = dd.gpus(); // throws only for more than kMaxGpus GPUs
        validate(dd);
        const ServingEstimate e = estimate_serving(dd, ww, profile);
        f.estimated = true;
        f.fits = e.memory.fits;
        f.capacity = deployment_capacity(e.memory, ww, dd.par.dp);
        f.ttft = e.ttft_loaded;
        f.tpot = e.tpot;
        f.throughput = e.throughput;
        f.effect = gpuplan::checked_format(
            "predicted at {} in flight: {:.0f} → {:.0f} tok/s, room for {} → {} "
            "sequences, TPOT {} → {}, TTFT {} → {}",
            ww.concurrency.value_or(0), before.throughput, e.throughput,
            deployment_capacity(before.memory, ww, before_dp), f.capacity, ms(before.tpot.si()),
            ms(e.tpot.si()), ms(before.ttft_loaded.si()), ms(e.ttft_loaded.si()));
        f.deployment = std::move(dd);
        f.workload = std::move(ww);
    } catch (const InputError& err) {
        f.estimated = false;
        f.effect = std::string("not estimated: ") + err.what();
    }
    return f;
}

// Expert parallelism, when on, spans every tp × dp rank; it follows a change of either.
Deployment with_ep_spanning(Deployment x) {
    if (x.par.ep > 1) {
        x.par.ep = x.par.tp * x.par.dp;
    }
    return x;
}

Deployment with_tp_x2(const Deployment& d) {
    Deployment x = d;
    x.par.tp = d.par.tp * 2;
    return with_ep_spanning(x);
}

Deployment with_replicas_x2(const Deployment& d) {
    Deployment x = d;
    x.par.dp = d.par.dp * 2;
    return with_ep_spanning(x);
}

// The deployment with twice the engine's max_num_seqs (`eng`: the resolved engine), its token
// budget raised to at least that many sequences so that they can all be scheduled.
Deployment with_double_max_num_seqs(const Deployment& d, const EngineSettings& eng) {
    Deployment x = d;
    x.engine.max_num_seqs = eng.max_num_seqs * 2;
    if (x.engine.max_num_batched_tokens.value_or(eng.max_num_batched_tokens) <
        *x.engine.max_num_seqs) {
        x.engine.max_num_batched_tokens = *x.engine.max_num_seqs;
    }
    return x;
}

// 1. KV cache full: sequences wait for blocks or are preempted.
void add_kv_full_evidence(const ServingFacts& s, DiagnosisRow& r) {
    r.evidence.push_back(gpuplan::checked_format("KV cache {} used (threshold {})",
                                                 format_percent(*s.f.kv_usage),
                                                 format_percent(s.th.kv_full)));
    if (s.f.waiting)
        r.evidence.push_back(
            gpuplan::checked_format("{} waiting beside {} running", s.waiting, s.running));
    if (s.f.preemptions && *s.f.preemptions > 0) {
        r.evidence.push_back(
            s.f.preemptions_per_s
                ? gpuplan::checked_format("{:.0f} preemptions in the window ({:.2g}/s)",
                                          *s.f.preemptions, *s.f.preemptions_per_s)
                : gpuplan::checked_format("{:.0f} preemptions {}", *s.f.preemptions,
                                          s.obs.metrics && s.obs.metrics->delta
                                              ? "in the window"
                                              : "since the server started"));
    }
    if (s.f.queue_s && s.f.ttft_s && *s.f.ttft_s > 0) {
        r.evidence.push_back(gpuplan::checked_format(
            "queue time {} is {} of TTFT {}: requests wait for KV blocks", ms(*s.f.queue_s),
            format_percent(*s.f.queue_s / *s.f.ttft_s), ms(*s.f.ttft_s)));
    }
    r.evidence.push_back(gpuplan::checked_format(
        "predicted KV pool {} tokens: {} sequences of {} + {} tokens at once (max_num_seqs {})",
        s.e.memory.kv_tokens, s.capacity, s.wp.input_tokens, s.wp.output_tokens,
        s.eng.max_num_seqs));
    if (s.capacity > s.running * 1.25) {
        r.evidence.push_back(gpuplan::checked_format(
            "the model expects room for {} sequences but the cache is full at {}: requests "
            "are probably longer than {} + {} tokens, or the engine reserved less memory",
            s.capacity, s.running, s.wp.input_tokens, s.wp.output_tokens));
    }
}

void add_kv_cache_full(const ServingFacts& s, Diagnosis& out) {
    if (!s.kv_full) {
        return;
    }
    DiagnosisRow r;
    r.id = "kv-cache-full";
    r.symptom = "requests wait or are preempted while the GPU has KV cache for no more";
    r.cause = "the KV cache holds fewer sequences than the load asks for";
    add_kv_full_evidence(s, r);
    r.check = "vLLM's start-up log lines 'GPU KV cache size: N tokens' and 'Maximum "
              "concurrency for L tokens per request'; vllm:num_preemptions_total rising";
    if (s.eng.memory_fraction < 0.95) {
        Deployment x = s.d;
        x.engine.gpu_memory_utilization = 0.95;
        r.fixes.push_back(reestimate(
            FixLayer::Framework,
            gpuplan::checked_format("gpu_memory_utilization {:.2f} → 0.95", s.eng.memory_fraction),
            x, s.wdemand, s.profile, s.at_demand, s.d.par.dp));
    }
    if (s.d.prec.kv_cache.bits_per_element > 8.0) {
        if (const auto fp8 = find_precision("fp8")) {
            Deployment x = s.d;
            x.prec.kv_cache = *fp8;
            r.fixes.push_back(reestimate(FixLayer::Model,
                                         "kv cache " + s.d.prec.kv_cache.name + " → fp8", x,
                                         s.wdemand, s.profile, s.at_demand, s.d.par.dp));
        }
    }
    r.fixes.push_back(
        reestimate(FixLayer::Hardware,
                   gpuplan::checked_format(
                       "tp {} → {} (twice the GPUs: the weights take half as much of each)",
                       s.d.par.tp, s.d.par.tp * 2),
                   with_tp_x2(s.d), s.wdemand, s.profile, s.at_demand, s.d.par.dp));
    r.severity = 3.0 + (s.f.preemptions && *s.f.preemptions > 0 ? 1.0 : 0.0);
    out.rows.push_back(std::move(r));
}

// 2. Queueing: requests wait and the wait dominates the first token.
void add_queueing(const ServingFacts& s, Diagnosis& out) {
    const bool applies = !s.kv_full && s.waiting > 0 && (s.queue_dominates || !s.f.queue_s);
    if (!applies) {
        return;
    }
    DiagnosisRow r;
    r.id = "queueing";
    r.symptom = "time to first token grows with load; requests wait";
    r.cause = "more requests arrive than the running batch takes";
    r.evidence.push_back(
        gpuplan::checked_format("{} waiting beside {} running", s.waiting, s.running));
    if (s.queue_dominates) {
        r.evidence.push_back(
            gpuplan::checked_format("queue time {} is {} of TTFT {} (threshold {})",
                                    ms(*s.f.queue_s), format_percent(*s.f.queue_s / *s.f.ttft_s),
                                    ms(*s.f.ttft_s), format_percent(s.th.queue_share)));
    }
    r.check = "vllm:request_queue_time_seconds against vllm:time_to_first_token_seconds; "
              "vllm:num_requests_waiting over time";
    const int seq_cap = s.eng.max_num_seqs * s.d.par.dp;
    if (s.running >= seq_cap) {
        r.evidence.push_back(
            gpuplan::checked_format("running {} equals max_num_seqs {} × {} replicas", s.running,
                                    s.eng.max_num_seqs, s.d.par.dp));
        r.fixes.push_back(reestimate(
            FixLayer::Framework,
            gpuplan::checked_format("max_num_seqs {} → {}", s.eng.max_num_seqs,
                                    s.eng.max_num_seqs * 2),
            with_double_max_num_seqs(s.d, s.eng), s.wdemand, s.profile, s.at_demand, s.d.par.dp));
    } else {
        r.fixes.push_back(advice(FixLayer::Framework, "cap client concurrency and fail fast",
                                 "keeps latency bounded; does not add capacity"));
    }
    r.fixes.push_back(reestimate(
        FixLayer::Hardware, gpuplan::checked_format("replicas {} → {}", s.d.par.dp, s.d.par.dp * 2),
        with_replicas_x2(s.d), s.wdemand, s.profile, s.at_demand, s.d.par.dp));
    r.severity = 2.0 + (s.queue_dominates ? *s.f.queue_s / *s.f.ttft_s : 0.0);
    out.rows.push_back(std::move(r));
}

// 3. Low batch: nothing waits and few sequences run.
void add_low_batch(const ServingFacts& s, Diagnosis& out) {
    const bool applies = s.f.running && s.f.waiting && s.waiting == 0 && s.capacity > 0 &&
                         s.running < s.th.low_batch_share * s.capacity;
    if (!applies) {
        return;
    }
    DiagnosisRow r;
    r.id = "low-batch";
    r.symptom = "throughput far below what the GPUs serve, nothing waiting";
    r.cause = "the clients send too few requests at once: the batch is small";
    r.evidence.push_back(
        gpuplan::checked_format("{} running, 0 waiting; the deployment runs {} at once "
                                "(threshold {} of it)",
                                s.running, s.capacity, format_percent(s.th.low_batch_share)));
    if (s.busy) {
        r.evidence.push_back(
            gpuplan::checked_format("GPU utilization {} counts time a kernel runs, not "
                                    "work done: small batches keep it high",
                                    format_percent(*s.obs.gpu->utilization_gpu)));
    }
    if (s.obs.gpu && s.obs.gpu->tensor_active) {
        r.evidence.push_back(
            gpuplan::checked_format("DCGM tensor pipes active {}: the batch gives the "
                                    "tensor cores little to do",
                                    format_percent(*s.obs.gpu->tensor_active)));
    }
    r.check = "the benchmark's --max-concurrency or --request-rate; the client's connection pool";
    Workload more = s.wp;
    const int target = std::max(s.running + 1, s.capacity);
    set_closed_loop(more, target);
    r.fixes.push_back(
        reestimate(FixLayer::Framework,
                   gpuplan::checked_format("client concurrency {} → {}", s.running, target), s.d,
                   more, s.profile, s.e, s.d.par.dp));
    r.severity = 1.0 + (1.0 - static_cast<double>(s.running) / s.capacity);
    out.rows.push_back(std::move(r));
}

// 4. Decode far slower than the model's floor at this batch.
void add_decode_slow_evidence(const ServingFacts& s, const Diagnosis& out, DiagnosisRow& r) {
    const double pred_tpot = s.e.tpot.si();
    const double factor = *s.f.tpot_s / pred_tpot;
    r.evidence.push_back(gpuplan::checked_format(
        "TPOT {} observed vs {} predicted at {} running: {:.1f}× slower than the {} floor "
        "(threshold {:.0f}×, beyond the model's error band ±{:.0f} %)",
        ms(*s.f.tpot_s), ms(pred_tpot), s.running, factor,
        out.predicted.decode.binding == Resource::MemoryBandwidth
            ? "memory-bandwidth"
            : to_string(out.predicted.decode.binding),
        s.th.slow_factor, s.e.error_band.p90 * 100));
    if (s.f.throughput) {
        r.evidence.push_back(gpuplan::checked_format(
            "{:.3g} output tok/s observed vs {:.3g} predicted", *s.f.throughput, s.e.throughput));
    }
    if (s.f.ttft_s && s.e.ttft_loaded.si() > 0 &&
        *s.f.ttft_s > s.th.slow_factor * s.e.ttft_loaded.si()) {
        r.evidence.push_back(gpuplan::checked_format(
            "TTFT is {:.1f}× the prediction too: prefill and decode are both slow, which "
            "points at the whole GPU path (offloaded weights, clocks, dtype) rather than "
            "decode-only costs such as eager mode",
            *s.f.ttft_s / s.e.ttft_loaded.si()));
    }
    if (s.busy) {
        r.evidence.push_back(gpuplan::checked_format(
            "GPU utilization {} (≥ {}): the GPU is not starved, so "
            "the client and scheduler are ruled out",
            format_percent(*s.obs.gpu->utilization_gpu), format_percent(s.th.busy_gpu)));
    }
    if (s.obs.gpu && s.obs.gpu->dram_active) {
        r.evidence.push_back(gpuplan::checked_format(
            "DCGM DRAM active {}{}: the memory interface idles {} of the time, so this TPOT "
            "is not the memory-bandwidth limit (which would keep it near 100 %)",
            format_percent(*s.obs.gpu->dram_active),
            s.obs.gpu->sm_active
                ? gpuplan::checked_format(", SM active {}", format_percent(*s.obs.gpu->sm_active))
                : std::string(),
            format_percent(1.0 - std::min(1.0, *s.obs.gpu->dram_active))));
    }
}

/// A cause of a slow decode that the model can price: the TPOT it alone would give.
struct Hypothesis {
    std::string what;
    double tpot;
};

// Hypotheses the model can price, each re-estimated: which one comes closest?
std::vector<Hypothesis> price_decode_hypotheses(const ServingFacts& s) {
    std::vector<Hypothesis> hyps;
    const auto price = [&](std::string what, const Deployment& x) {
        try {
            const ServingEstimate h = estimate_serving(x, s.wp, s.profile);
            if (!h.memory.fits) {
                what +=
                    gpuplan::checked_format(" (does not fit in {:.0f} GiB: it would need offload)",
                                            s.d.gpu.memory.si() / 1073741824.0);
            }
            hyps.push_back({std::move(what), h.tpot.si()});
        } catch (const InputError&) {
        }
    };
    if (s.eng.cuda_graphs) {
        Deployment x = s.d;
        x.engine.cuda_graphs = false;
        price("eager mode (--enforce-eager: no CUDA graphs)", x);
    }
    if (const auto fp32 = find_precision("fp32"); fp32 && s.d.prec.weights.bits_per_element < 32) {
        Deployment x = s.d;
        x.prec.weights = *fp32;
        x.prec.activations = *fp32;
        price("fp32 weights (--dtype float32)", x);
    }
    if (s.clock_ratio) {
        Deployment x = s.d;
        x.clocks.compute = *s.clock_ratio;
        price(gpuplan::checked_format("the observed SM clock ({} of maximum)",
                                      format_percent(*s.clock_ratio)),
              x);
    }
    return hyps;
}

void explain_decode_slow(const ServingFacts& s, DiagnosisRow& r) {
    const std::vector<Hypothesis> hyps = price_decode_hypotheses(s);
    for (const auto& h : hyps) {
        r.evidence.push_back(
            gpuplan::checked_format("{} alone would give TPOT {}: {} of the observed", h.what,
                                    ms(h.tpot), format_percent(h.tpot / *s.f.tpot_s)));
    }
    const auto best =
        std::max_element(hyps.begin(), hyps.end(),
                         [](const Hypothesis& a, const Hypothesis& b) { return a.tpot < b.tpot; });
    const double best_share = best == hyps.end() ? 0.0 : best->tpot / *s.f.tpot_s;
    if (best != hyps.end() && best_share >= 0.7) {
        r.cause += "; most likely " + best->what;
    } else {
        r.cause +=
            gpuplan::checked_format("; most likely weights read from host memory (CPU offload or "
                                    "swap): none of eager mode, fp32 weights or the clock explains "
                                    "more than {} of the observed TPOT",
                                    format_percent(best_share));
    }
}

void add_decode_gap_evidence(const ServingFacts& s, DiagnosisRow& r) {
    const double pred_tpot = s.e.tpot.si();
    const double gap = *s.f.tpot_s - pred_tpot;
    r.evidence.push_back(gpuplan::checked_format(
        "the gap of {} per step is what streaming {:.3g} GB over a {:.0f} GB/s PCIe link "
        "takes (CPU offload or swapped weights)",
        ms(gap), gap * kPcieBytesPerS / 1e9, kPcieBytesPerS / 1e9));
    if (s.d.par.tp > 1 && s.d.intra_node_link.name.rfind("pcie", 0) == 0) {
        r.evidence.push_back(
            gpuplan::checked_format("tensor parallel {} over {} (no NVLink): every layer's "
                                    "all-reduce crosses PCIe",
                                    s.d.par.tp, s.d.intra_node_link.name));
    }
    if (s.throttled) {
        r.evidence.push_back(gpuplan::checked_format(
            "SM clock {:.0f} of {:.0f} MHz ({}, threshold {})", *s.obs.gpu->sm_clock_mhz,
            *s.obs.gpu->max_sm_clock_mhz, format_percent(*s.clock_ratio),
            format_percent(s.th.clock_ratio)));
    }
}

void add_decode_slow_fixes(const ServingFacts& s, DiagnosisRow& r) {
    // The fix restores what the model assumes: CUDA graphs, 16-bit weights, no offload.
    Deployment restored = s.d;
    restored.engine.cuda_graphs = true;
    restored.clocks = s.d.clocks;
    r.fixes.push_back(reestimate(FixLayer::Framework,
                                 "serve with CUDA graphs (drop --enforce-eager), --dtype auto "
                                 "(bf16/fp16) and no --cpu-offload-gb",
                                 restored, s.wp, s.profile, s.e, s.d.par.dp));
    if (r.fixes.front().estimated)
        r.fixes.front().effect = gpuplan::checked_format(
            "predicted TPOT {} at {} running: {:.1f}× faster than observed; {:.3g} "
            "→ {:.3g} tok/s",
            ms(r.fixes.front().tpot.si()), s.running,
            *s.f.tpot_s / std::max(1e-12, r.fixes.front().tpot.si()), s.f.throughput.value_or(0.0),
            r.fixes.front().throughput);
    if (s.d.prec.weights.bits_per_element > 8.5) {
        if (const auto awq = find_precision("awq-int4")) {
            Deployment x = s.d;
            x.prec.weights = *awq;
            r.fixes.push_back(
                reestimate(FixLayer::Model,
                           "weights " + s.d.prec.weights.name +
                               " → awq-int4 (an AWQ checkpoint): a quarter of the bytes per token",
                           x, s.wp, s.profile, s.e, s.d.par.dp));
        }
    }
    if (s.throttled) {
        Deployment slow = s.d;
        slow.clocks.compute = *s.clock_ratio;
        ServingEstimate at_clock = s.e;
        try {
            at_clock = estimate_serving(slow, s.wp, s.profile);
        } catch (const InputError&) {
        }
        r.fixes.push_back(reestimate(FixLayer::Hardware,
                                     "restore full clocks: raise the power limit (nvidia-smi -pl), "
                                     "fix cooling",
                                     s.d, s.wp, s.profile, at_clock, s.d.par.dp));
    }
    if (s.d.par.tp > 1 && s.d.intra_node_link.name.rfind("pcie", 0) == 0) {
        r.fixes.push_back(advice(FixLayer::Hardware,
                                 "GPUs joined by NVLink, or replicas instead of tensor parallelism",
                                 "removes the PCIe all-reduce from every layer"));
    }
}

void add_decode_slow(const ServingFacts& s, Diagnosis& out) {
    const double pred_tpot = s.e.tpot.si();
    const bool applies = s.f.tpot_s && pred_tpot > 0 && *s.f.tpot_s > s.th.slow_factor * pred_tpot;
    if (!applies) {
        return;
    }
    const double factor = *s.f.tpot_s / pred_tpot;
    DiagnosisRow r;
    r.id = "decode-slow";
    r.symptom = s.busy ? "GPU busy but few tokens/s" : "tokens/s far below the hardware's floor";
    r.cause = "the GPU is not doing the work the model expects: each token costs more than "
              "reading the weights and KV cache once";
    add_decode_slow_evidence(s, out, r);
    explain_decode_slow(s, r);
    add_decode_gap_evidence(s, r);
    r.check = "vLLM start-up log: 'enforce_eager=True' or no 'Graph capturing finished', "
              "dtype=torch.float32, cpu_offload_gb > 0; `nvidia-smi -q -d PERFORMANCE` for "
              "throttle reasons; `nvidia-smi topo -m` for the links between TP GPUs";
    add_decode_slow_fixes(s, r);
    r.severity = factor;
    out.rows.push_back(std::move(r));
}

// 5. Clocks held down by a power cap or heat.
void add_throttled(const ServingFacts& s, Diagnosis& out) {
    if (!s.throttled) {
        return;
    }
    const double pred_tpot = s.e.tpot.si();
    const auto& g = *s.obs.gpu;
    DiagnosisRow r;
    r.id = throttle_row_id(g);
    const bool thermal = r.id == "thermal-throttled";
    const bool power = r.id == "power-capped";
    r.symptom = "the GPU runs below its maximum clock";
    r.cause = thermal ? "thermal slowdown: the GPU is too hot"
              : power ? "the power limit holds the clock down"
                      : "the clock is held down (no throttle reason reported)";
    r.evidence.push_back(gpuplan::checked_format(
        "SM clock {:.0f} of {:.0f} MHz ({}, threshold {})", *g.sm_clock_mhz, *g.max_sm_clock_mhz,
        format_percent(*s.clock_ratio), format_percent(s.th.clock_ratio)));
    if (g.has_throttle_reasons) {
        r.evidence.push_back(gpuplan::checked_format(
            "power-cap throttling in {} of samples, thermal in {}",
            format_percent(g.power_cap_share), format_percent(g.thermal_share)));
    }
    if (g.power_draw_w && g.power_limit_w) {
        r.evidence.push_back(gpuplan::checked_format("power draw {:.0f} W of a {:.0f} W limit",
                                                     *g.power_draw_w, *g.power_limit_w));
    }
    r.check = "`nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE`: clock event reasons, power "
              "limit, temperatures";
    Deployment slow = s.d;
    slow.clocks.compute = *s.clock_ratio;
    ServingEstimate at_clock = s.e;
    try {
        at_clock = estimate_serving(slow, s.wp, s.profile);
    } catch (const InputError&) {
    }
    r.evidence.push_back(gpuplan::checked_format(
        "the model at this clock: TPOT {} (vs {} at full clock), TTFT {} (vs {})",
        ms(at_clock.tpot.si()), ms(pred_tpot), ms(at_clock.ttft_loaded.si()),
        ms(s.e.ttft_loaded.si())));
    r.fixes.push_back(
        reestimate(FixLayer::Hardware,
                   thermal ? "improve cooling (airflow, inlet temperature)"
                           : "raise the power limit (nvidia-smi -pl) or the rack's power budget",
                   s.d, s.wp, s.profile, at_clock, s.d.par.dp));
    r.severity = 1.0 / *s.clock_ratio;
    out.rows.push_back(std::move(r));
}

// 6. Prefill-bound first token: TTFT far above the prediction, not from queueing.
void add_prefill_slow(const ServingFacts& s, Diagnosis& out) {
    const double pred_tpot = s.e.tpot.si();
    const double pred_ttft = s.e.ttft_loaded.si();
    const double decode_factor = s.f.tpot_s && pred_tpot > 0 ? *s.f.tpot_s / pred_tpot : 1.0;
    const bool decode_slow = decode_factor > s.th.slow_factor;
    // When decode is slow too, a slow first token is the same cause unless it is much worse.
    const bool prefill_own =
        !decode_slow || (s.f.ttft_s && *s.f.ttft_s / pred_ttft > 2 * decode_factor);
    const bool applies = s.f.ttft_s && pred_ttft > 0 &&
                         *s.f.ttft_s > s.th.prefill_factor * pred_ttft &&
                         *s.f.ttft_s - pred_ttft > s.th.prefill_min_gap_s && !s.queue_dominates &&
                         s.waiting == 0 && prefill_own;
    if (!applies) {
        return;
    }
    DiagnosisRow r;
    r.id = "prefill-slow";
    r.symptom = "first token slow although nothing waits";
    r.cause = "prefill takes longer than the model expects: long prompts, prefill stalled "
              "behind decodes, or no chunked prefill";
    r.evidence.push_back(gpuplan::checked_format(
        "TTFT {} observed vs {} predicted under load ({:.1f}×; thresholds {:.0f}× "
        "and {} more)",
        ms(*s.f.ttft_s), ms(pred_ttft), *s.f.ttft_s / pred_ttft, s.th.prefill_factor,
        ms(s.th.prefill_min_gap_s)));
    if (s.f.prefill_s)
        r.evidence.push_back(
            gpuplan::checked_format("prefill time {} per request", ms(*s.f.prefill_s)));
    r.check = "vllm:request_prefill_time_seconds and the prompt length "
              "(vllm:prompt_tokens_total per request)";
    if (!s.eng.chunked_prefill) {
        Deployment x = s.d;
        x.engine.enable_chunked_prefill = true;
        r.fixes.push_back(reestimate(FixLayer::Framework, "enable chunked prefill", x, s.wp,
                                     s.profile, s.e, s.d.par.dp));
    }
    if (!s.eng.prefix_caching) {
        Deployment x = s.d;
        x.engine.enable_prefix_caching = true;
        r.fixes.push_back(reestimate(FixLayer::Framework,
                                     "enable prefix caching (shared prompt prefixes)", x, s.wp,
                                     s.profile, s.e, s.d.par.dp));
    }
    r.fixes.push_back(reestimate(FixLayer::Hardware,
                                 gpuplan::checked_format("tp {} → {}", s.d.par.tp, s.d.par.tp * 2),
                                 with_tp_x2(s.d), s.wp, s.profile, s.e, s.d.par.dp));
    r.severity = *s.f.ttft_s / pred_ttft / s.th.prefill_factor;
    out.rows.push_back(std::move(r));
}

// 7. The engine's KV cache differs from the model's prediction beyond the error band.
void add_kv_size_evidence(const ServingFacts& s, double rel, double band, DiagnosisRow& r) {
    const auto& st = *s.obs.startup;
    const double predicted = static_cast<double>(s.e.memory.kv_tokens);
    const bool less = rel < 0;
    r.evidence.push_back(gpuplan::checked_format(
        "start-up log{}: {:.0f} KV tokens; the model predicts {} ({:+.0f} %, band ±{:.0f} "
        "%: the larger of {:.0f} % and the profile's P90 error)",
        st.line > 0 ? gpuplan::checked_format(" line {}", st.line) : std::string(),
        *s.observed_kv_tokens, s.e.memory.kv_tokens, rel * 100, band * 100, s.th.kv_size_band * 100,
        s.e.error_band.p90 * 100));
    if (st.gpu_blocks && !st.kv_tokens) {
        r.evidence.push_back(gpuplan::checked_format("{} GPU blocks × block size {}",
                                                     *st.gpu_blocks, s.eng.block_size));
    }
    const double gib =
        (*s.observed_kv_tokens - predicted) * s.e.memory.kv_per_token.si() / 1073741824.0;
    r.evidence.push_back(gpuplan::checked_format(
        "{:.2f} GiB {} KV memory per GPU than predicted ({} per token)", std::abs(gib),
        less ? "less" : "more",
        gpuplan::checked_format("{:.0f} KiB", s.e.memory.kv_per_token.si() / 1024.0)));
    if (st.concurrency_len && *st.concurrency_len != s.eng.max_model_len) {
        r.evidence.push_back(gpuplan::checked_format(
            "the log's max_model_len {} is not the scenario's {}: the scenario does not "
            "describe the deployment as launched",
            *st.concurrency_len, s.eng.max_model_len));
    }
}

void add_kv_size_fixes(const ServingFacts& s, bool less, DiagnosisRow& r) {
    if (less && s.eng.memory_fraction < 0.95) {
        Deployment x = s.d;
        x.engine.gpu_memory_utilization = 0.95;
        r.fixes.push_back(
            reestimate(FixLayer::Framework,
                       gpuplan::checked_format(
                           "free the GPU of other processes and raise gpu_memory_utilization "
                           "{:.2f} → 0.95",
                           s.eng.memory_fraction),
                       x, s.wp, s.profile, s.e, s.d.par.dp));
    }
    r.fixes.push_back(
        advice(FixLayer::Framework,
               "describe the deployment as launched: the scenario's gpu_memory_utilization, "
               "kv_cache precision and max_model_len as on the engine's command line",
               "the predictions (capacity, queueing) then start from the engine's real KV pool"));
    if (less && s.d.prec.kv_cache.bits_per_element > 8.0) {
        if (const auto fp8 = find_precision("fp8")) {
            Deployment x = s.d;
            x.prec.kv_cache = *fp8;
            r.fixes.push_back(reestimate(FixLayer::Model,
                                         "kv cache " + s.d.prec.kv_cache.name + " → fp8", x, s.wp,
                                         s.profile, s.e, s.d.par.dp));
        }
    }
}

void add_kv_size_mismatch(const ServingFacts& s, Diagnosis& out) {
    if (!(s.observed_kv_tokens && s.e.memory.kv_tokens > 0)) {
        return;
    }
    const double predicted = static_cast<double>(s.e.memory.kv_tokens);
    const double rel = *s.observed_kv_tokens / predicted - 1.0;
    const double band = std::max(s.th.kv_size_band, s.e.error_band.p90);
    if (!(std::abs(rel) > band)) {
        return;
    }
    const bool less = rel < 0;
    DiagnosisRow r;
    r.id = "kv-size-mismatch";
    r.symptom = less ? "the engine holds fewer KV tokens than the model predicts"
                     : "the engine holds more KV tokens than the model predicts";
    r.cause = less ? "the engine had less memory for the KV cache than the scenario says: "
                     "another process on the GPU, a lower --gpu-memory-utilization, a larger "
                     "activation peak (--max-num-batched-tokens) or a wider KV dtype"
                   : "the engine had more memory for the KV cache than the scenario says: an "
                     "fp8 KV cache, a higher --gpu-memory-utilization or smaller (quantized) "
                     "weights than the scenario's";
    add_kv_size_evidence(s, rel, band, r);
    r.check = "vLLM's start-up lines 'Available KV cache memory: X GiB' and 'Model loading "
              "took X GiB'; `nvidia-smi` for other processes on the GPU; the launch "
              "flags --gpu-memory-utilization, --kv-cache-dtype, --max-num-batched-tokens";
    add_kv_size_fixes(s, less, r);
    r.severity = 1.0 + std::abs(rel);
    out.rows.push_back(std::move(r));
}

// 8. Speculative decoding accepting fewer drafts than the scenario assumes.

/// The draft acceptance observed beside the scenario's.
struct SpecRates {
    double obs_rate = 0;           ///< accepted / draft tokens, observed
    std::optional<double> obs_len; ///< tokens per verify step, observed
    int k = 0;                     ///< the scenario's draft tokens per step
    double pred_len = 0;           ///< tokens per verify step the scenario assumes
    double pred_rate = 0;          ///< acceptance per draft token the scenario assumes
};

// The acceptance per position to re-estimate with: observed per position when the metrics
// have it (and then shown as evidence), else the observed mean rate at every position.
std::vector<double> observed_acceptance(const EngineMetrics& m, const SpecRates& sr,
                                        DiagnosisRow& r) {
    const double obs_rate = sr.obs_rate;
    const int k = sr.k;
    // The observed conditional acceptance per position: accepted at position i
    // given i - 1 accepted (vllm:spec_decode_num_accepted_tokens_per_pos / drafts).
    std::vector<double> seen;
    if (m.spec_drafts && *m.spec_drafts > 0 && !m.spec_accepted_per_pos.empty()) {
        double prev = *m.spec_drafts;
        std::string by_pos;
        for (double c : m.spec_accepted_per_pos) {
            const double cond = prev > 0 ? std::clamp(c / prev, 0.0, 1.0) : 0.0;
            seen.push_back(cond);
            by_pos +=
                gpuplan::checked_format("{}{}", by_pos.empty() ? "" : ", ", format_percent(cond));
            prev = c;
        }
        r.evidence.push_back(
            gpuplan::checked_format("acceptance by position, given the previous ones accepted: "
                                    "{}",
                                    by_pos));
    }
    if (static_cast<int>(seen.size()) != k) {
        // Without per-position counters: the observed rate at every position.
        seen.assign(static_cast<std::size_t>(k), std::min(obs_rate, 0.999));
    }
    return seen;
}

/// The deployment with `kk` draft tokens at the acceptance `acc` per position.
Deployment with_spec_tokens(const Deployment& d, int kk, std::vector<double> acc) {
    Deployment x = d;
    acc.resize(static_cast<std::size_t>(kk));
    x.engine.speculative->num_speculative_tokens = kk;
    x.engine.speculative->acceptance_rate.reset();
    x.engine.speculative->acceptance = std::move(acc);
    return x;
}

// The best smaller k at the measured acceptance, re-estimated: 0 when none gives more
// throughput than `observed_throughput`.
int best_smaller_k(const ServingFacts& s, int k, const std::vector<double>& seen,
                   double observed_throughput) {
    int best_k = 0;
    double best = observed_throughput;
    for (int kk = 1; kk < k; ++kk) {
        try {
            const ServingEstimate e2 =
                estimate_serving(with_spec_tokens(s.d, kk, seen), s.wdemand, s.profile);
            if (e2.throughput > best) {
                best = e2.throughput;
                best_k = kk;
            }
        } catch (const InputError&) {
        }
    }
    return best_k;
}

void add_spec_fixes(const ServingFacts& s, int k, const std::vector<double>& seen,
                    DiagnosisRow& r) {
    const SpeculativeConfig& sc = *s.d.engine.speculative;
    // The deployment as observed: its k with the measured acceptance.
    ServingEstimate observed_spec = s.at_demand;
    try {
        observed_spec = estimate_serving(with_spec_tokens(s.d, k, seen), s.wdemand, s.profile);
    } catch (const InputError&) {
    }
    const int best_k = best_smaller_k(s, k, seen, observed_spec.throughput);
    if (best_k > 0) {
        r.fixes.push_back(reestimate(
            FixLayer::Framework,
            gpuplan::checked_format("num_speculative_tokens {} → {} (at the measured acceptance)",
                                    k, best_k),
            with_spec_tokens(s.d, best_k, seen), s.wdemand, s.profile, observed_spec, s.d.par.dp));
    }
    Deployment off = s.d;
    off.engine.speculative.reset();
    r.fixes.push_back(reestimate(FixLayer::Framework, "speculative decoding off", off, s.wdemand,
                                 s.profile, observed_spec, s.d.par.dp));
    if (sc.method != SpeculativeMethod::Eagle) {
        Deployment x = s.d;
        SpeculativeConfig e3;
        e3.method = SpeculativeMethod::Eagle;
        x.engine.speculative = e3;
        r.fixes.push_back(
            reestimate(FixLayer::Model,
                       gpuplan::checked_format(
                           "an EAGLE head trained for the target instead of the {} "
                           "(acceptance assumed {}, the default for EAGLE)",
                           to_string(sc.method),
                           format_percent(default_acceptance_rate(SpeculativeMethod::Eagle))),
                       x, s.wdemand, s.profile, observed_spec, s.d.par.dp));
    }
}

DiagnosisRow spec_low_acceptance_row(const ServingFacts& s, const EngineMetrics& m,
                                     const SpecRates& sr) {
    const double obs_rate = sr.obs_rate;
    const double pred_rate = sr.pred_rate;
    const std::optional<double>& obs_len = sr.obs_len;
    const double pred_len = sr.pred_len;
    const int k = sr.k;
    DiagnosisRow r;
    r.id = "spec-low-acceptance";
    r.symptom = "speculative decoding gains less than expected";
    r.cause = "the draft's tokens are accepted less often than the scenario assumes: "
              "each verify pass pays for k draft tokens and keeps few";
    r.evidence.push_back(gpuplan::checked_format(
        "{} of draft tokens accepted ({:.0f} of {:.0f}) vs {} assumed (threshold {} "
        "of it)",
        format_percent(obs_rate), *m.spec_accepted_tokens, *m.spec_draft_tokens,
        format_percent(pred_rate), format_percent(s.th.spec_acceptance_share)));
    if (obs_len) {
        r.evidence.push_back(gpuplan::checked_format(
            "{:.2f} tokens per verify step vs {:.2f} assumed (k = {})", *obs_len, pred_len, k));
    }
    const std::vector<double> seen = observed_acceptance(m, sr, r);
    r.check = "vLLM's log line 'SpecDecoding metrics: Mean acceptance length ..., "
              "Per-position acceptance rate ...'; whether the draft shares the "
              "target's tokenizer and chat template";
    add_spec_fixes(s, k, seen, r);
    r.severity = 1.0 + pred_rate / std::max(obs_rate, 1e-3) / 10;
    return r;
}

void add_speculative(const ServingFacts& s, Diagnosis& out) {
    const auto& metrics = s.obs.metrics;
    if (!(metrics && metrics->spec_draft_tokens && *metrics->spec_draft_tokens > 0 &&
          metrics->spec_accepted_tokens)) {
        return;
    }
    const EngineMetrics& m = *metrics;
    const double obs_rate = *m.spec_accepted_tokens / *m.spec_draft_tokens;
    const std::optional<double> obs_len =
        m.spec_drafts && *m.spec_drafts > 0
            ? std::optional<double>(1 + *m.spec_accepted_tokens / *m.spec_drafts)
            : std::nullopt;
    if (!s.d.engine.speculative) {
        out.notes.push_back(gpuplan::checked_format(
            "the metrics show speculative decoding ({} of draft tokens accepted) but the "
            "scenario has no engine.speculative block: the prediction is without it",
            format_percent(obs_rate)));
        return;
    }
    const SpeculativeConfig& sc = *s.d.engine.speculative;
    const int k = speculative_tokens(sc);
    const std::vector<double> a = acceptance_by_position(sc);
    // Expected accepted tokens per draft: Σ_i Π_{j<=i} a_j; per draft token: ÷ k.
    const double pred_len = expected_tokens_per_step(a);
    const double pred_rate = (pred_len - 1) / k;
    out.comparisons.push_back(
        {"draft acceptance", "%", obs_rate * 100, pred_rate * 100, "metrics"});
    if (obs_len) {
        out.comparisons.push_back({"tokens per verify step", "x", *obs_len, pred_len, "metrics"});
    }
    if (obs_rate < s.th.spec_acceptance_share * pred_rate) {
        out.rows.push_back(
            spec_low_acceptance_row(s, m, {obs_rate, obs_len, k, pred_len, pred_rate}));
    }
}

// 9. Engine steps far below the token budget while requests wait.
// The batch cap's evidence when it binds, and the fixes.
void add_step_fixes(const ServingFacts& s, DiagnosisRow& r) {
    const int seq_cap = s.eng.max_num_seqs * s.d.par.dp;
    if (s.running >= seq_cap) {
        r.evidence.push_back(gpuplan::checked_format("running {} equals max_num_seqs {} × {} "
                                                     "replicas: the batch is at its cap",
                                                     s.running, s.eng.max_num_seqs, s.d.par.dp));
        r.fixes.push_back(reestimate(
            FixLayer::Framework,
            gpuplan::checked_format("max_num_seqs {} → {}", s.eng.max_num_seqs,
                                    s.eng.max_num_seqs * 2),
            with_double_max_num_seqs(s.d, s.eng), s.wdemand, s.profile, s.at_demand, s.d.par.dp));
    } else if (!s.eng.chunked_prefill) {
        Deployment x = s.d;
        x.engine.enable_chunked_prefill = true;
        r.fixes.push_back(reestimate(FixLayer::Framework,
                                     "enable chunked prefill: long prompts no longer "
                                     "hold a step to themselves",
                                     x, s.wdemand, s.profile, s.at_demand, s.d.par.dp));
    } else {
        r.fixes.push_back(advice(FixLayer::Framework,
                                 "the engine's CPU side: async scheduling, more API "
                                 "server processes, a faster tokenizer",
                                 "not estimated: the step model has no CPU cost"));
    }
    r.fixes.push_back(reestimate(
        FixLayer::Hardware, gpuplan::checked_format("replicas {} → {}", s.d.par.dp, s.d.par.dp * 2),
        with_replicas_x2(s.d), s.wdemand, s.profile, s.at_demand, s.d.par.dp));
}

void add_step_underfilled(const ServingFacts& s, Diagnosis& out) {
    const auto& m = s.obs.metrics;
    if (!(m && m->iteration_tokens_mean)) {
        return;
    }
    const double budget = s.eng.max_num_batched_tokens;
    out.comparisons.push_back({"tokens per engine step", "tokens", *m->iteration_tokens_mean,
                               budget, "metrics vs max_num_batched_tokens"});
    const bool applies = budget > 0 && *m->iteration_tokens_mean < s.th.step_fill * budget &&
                         s.waiting > 0 && !s.kv_full;
    if (!applies) {
        return;
    }
    DiagnosisRow r;
    r.id = "step-underfilled";
    r.symptom = "requests wait while the engine's steps are far below their token budget";
    r.cause = "the scheduler admits fewer sequences than the token budget and the KV cache "
              "would take";
    r.evidence.push_back(gpuplan::checked_format(
        "{:.0f} tokens per engine step on average (vllm:iteration_tokens_total) of a "
        "budget of {:.0f} (max_num_batched_tokens): {} (threshold {})",
        *m->iteration_tokens_mean, budget, format_percent(*m->iteration_tokens_mean / budget),
        format_percent(s.th.step_fill)));
    r.evidence.push_back(
        gpuplan::checked_format("{} waiting beside {} running", s.waiting, s.running));
    if (s.f.kv_usage) {
        r.evidence.push_back(gpuplan::checked_format("KV cache {} used: not what holds them back",
                                                     format_percent(*s.f.kv_usage)));
    }
    r.check = "vllm:num_requests_running against --max-num-seqs; vLLM's scheduler log "
              "lines; the API server's CPU use";
    add_step_fixes(s, r);
    r.severity = 1.5;
    out.rows.push_back(std::move(r));
}

} // namespace

void add_serving_rows(const ServingFacts& s, Diagnosis& out) {
    add_kv_cache_full(s, out);
    add_queueing(s, out);
    add_low_batch(s, out);
    add_decode_slow(s, out);
    add_throttled(s, out);
    add_prefill_slow(s, out);
    add_kv_size_mismatch(s, out);
    add_speculative(s, out);
    add_step_underfilled(s, out);
}

} // namespace gpuplan::model::detail
