#include "model/diagnose.hpp"

#include "model/error.hpp"
#include "model/operating_point.hpp"
#include "model/precision.hpp"
#include "model/serving.hpp"
#include "model/unit_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpuplan::model {

const char* to_string(FixLayer l) {
    switch (l) {
    case FixLayer::Framework: return "framework";
    case FixLayer::Model: return "model";
    case FixLayer::Hardware: return "hardware";
    }
    return "framework";
}

std::optional<double> histogram_quantile(double q, std::vector<HistogramBucket> buckets) {
    if (!(q >= 0.0 && q <= 1.0)) {
        throw InvalidArgument(
            fmt::format("histogram_quantile: q is {:g}; give a quantile from 0 to 1", q));
    }
    for (const auto& b : buckets) {
        if (std::isnan(b.le) || !std::isfinite(b.count) || b.count < 0) {
            throw InvalidArgument(fmt::format("histogram_quantile: bucket le={:g} count={:g}; "
                                              "bounds must be numbers and counts finite and >= 0",
                                              b.le, b.count));
        }
    }
    std::sort(buckets.begin(), buckets.end(),
              [](const HistogramBucket& a, const HistogramBucket& b) { return a.le < b.le; });
    if (buckets.empty() || !std::isinf(buckets.back().le) || buckets.back().le < 0) {
        throw InvalidArgument("histogram_quantile: no le=\"+Inf\" bucket; a Prometheus histogram "
                              "always has one (check that the _bucket series are complete)");
    }
    for (std::size_t i = 1; i < buckets.size(); ++i) {
        if (buckets[i].count < buckets[i - 1].count) {
            throw InvalidArgument(fmt::format(
                "histogram_quantile: the cumulative count falls from {:g} (le={:g}) to {:g} "
                "(le={:g}); the buckets of one histogram must not decrease",
                buckets[i - 1].count, buckets[i - 1].le, buckets[i].count, buckets[i].le));
        }
    }
    const double total = buckets.back().count;
    if (total <= 0)
        return std::nullopt;
    if (buckets.size() < 2)
        return std::nullopt; // only +Inf: no finite bound to interpolate in (Prometheus: NaN)
    const double rank = q * total;
    std::size_t i = 0;
    while (i < buckets.size() && buckets[i].count < rank)
        ++i;
    if (i >= buckets.size() - 1) {
        return buckets[buckets.size() - 2].le; // the +Inf bucket: its lower bound
    }
    double lower = 0.0, below = 0.0;
    if (i == 0) {
        if (buckets[0].le <= 0)
            return buckets[0].le;
    } else {
        lower = buckets[i - 1].le;
        below = buckets[i - 1].count;
    }
    const double in_bucket = buckets[i].count - below;
    if (in_bucket <= 0)
        return buckets[i].le;
    return lower + (buckets[i].le - lower) * (rank - below) / in_bucket;
}

GpuTelemetry merge(const GpuTelemetry& a, const GpuTelemetry& b) {
    GpuTelemetry t = a;
    t.samples = a.samples + b.samples;
    const auto fill = [](std::optional<double>& x, const std::optional<double>& y) {
        if (!x)
            x = y;
    };
    fill(t.utilization_gpu, b.utilization_gpu);
    fill(t.utilization_memory, b.utilization_memory);
    fill(t.memory_used_bytes, b.memory_used_bytes);
    fill(t.memory_total_bytes, b.memory_total_bytes);
    fill(t.power_draw_w, b.power_draw_w);
    fill(t.power_limit_w, b.power_limit_w);
    fill(t.sm_clock_mhz, b.sm_clock_mhz);
    fill(t.max_sm_clock_mhz, b.max_sm_clock_mhz);
    fill(t.sm_active, b.sm_active);
    fill(t.dram_active, b.dram_active);
    fill(t.tensor_active, b.tensor_active);
    if (!a.has_throttle_reasons && b.has_throttle_reasons) {
        t.has_throttle_reasons = true;
        t.power_cap_share = b.power_cap_share;
        t.thermal_share = b.thermal_share;
    }
    t.source = a.source + "+" + b.source;
    return t;
}

namespace {

std::string ms(double s) {
    return s * 1e3 >= 100 ? fmt::format("{:.0f} ms", s * 1e3) : fmt::format("{:.3g} ms", s * 1e3);
}
// A PCIe 4.0 x16 link moves about 25 GB/s in practice (32 GB/s on paper, PCI-SIG), the rate
// weights offloaded to host memory (vLLM --cpu-offload-gb) are streamed back at every step.
constexpr double kPcieBytesPerS = 25e9;

/// The figures the rows read, merged from every source (metrics first, then the benchmark).
struct Figures {
    std::optional<double> tpot_s, ttft_s, queue_s, prefill_s, throughput, running, waiting;
    std::optional<double> kv_usage, preemptions, preemptions_per_s, prefix_hit_rate;
    std::optional<double> input_tokens, output_tokens;
    std::string tpot_source, ttft_source, throughput_source;
};

Figures merge(const Observations& obs) {
    Figures f;
    if (const auto& m = obs.metrics) {
        if (m->itl_mean_s) {
            f.tpot_s = m->itl_mean_s;
            f.tpot_source = "metrics";
        }
        if (m->ttft_mean_s) {
            f.ttft_s = m->ttft_mean_s;
            f.ttft_source = "metrics";
        }
        f.queue_s = m->queue_mean_s;
        f.prefill_s = m->prefill_mean_s;
        f.running = m->running;
        f.waiting = m->waiting;
        f.kv_usage = m->kv_usage;
        f.preemptions = m->preemptions;
        if (m->preemptions && m->window_s && *m->window_s > 0 && m->delta) {
            f.preemptions_per_s = *m->preemptions / *m->window_s;
        }
        if (m->generation_tokens && m->window_s && *m->window_s > 0 && m->delta) {
            f.throughput = *m->generation_tokens / *m->window_s;
            f.throughput_source = "metrics";
        }
        if (m->prefix_queries && m->prefix_hits && *m->prefix_queries > 0) {
            f.prefix_hit_rate = *m->prefix_hits / *m->prefix_queries;
        }
        if (m->requests && *m->requests > 0) {
            if (m->prompt_tokens)
                f.input_tokens = *m->prompt_tokens / *m->requests;
            if (m->generation_tokens)
                f.output_tokens = *m->generation_tokens / *m->requests;
        }
    }
    if (const auto& b = obs.bench) {
        if (!f.tpot_s && b->mean_tpot_ms) {
            f.tpot_s = *b->mean_tpot_ms / 1e3;
            f.tpot_source = b->tool == "vllm bench" ? "bench" : b->tool;
        }
        if (!f.ttft_s && b->mean_ttft_ms) {
            f.ttft_s = *b->mean_ttft_ms / 1e3;
            f.ttft_source = b->tool == "vllm bench" ? "bench" : b->tool;
        }
        if (!f.throughput && b->output_throughput) {
            f.throughput = b->output_throughput;
            f.throughput_source = b->tool == "vllm bench" ? "bench" : b->tool;
        }
        if (b->completed > 0) {
            if (!f.input_tokens && b->total_input_tokens)
                f.input_tokens = *b->total_input_tokens / b->completed;
            if (!f.output_tokens && b->total_output_tokens)
                f.output_tokens = *b->total_output_tokens / b->completed;
        }
        if (!f.running) {
            if (b->max_concurrency) {
                f.running = *b->max_concurrency;
            } else if (b->output_throughput && b->mean_tpot_ms) {
                // Little's law on tokens: tokens/s × seconds per token = tokens in flight.
                f.running = *b->output_throughput * *b->mean_tpot_ms / 1e3;
            }
        }
    }
    // Without a rate from counters: each running sequence makes one token per TPOT.
    if (!f.throughput && f.running && f.tpot_s && *f.tpot_s > 0) {
        f.throughput = *f.running / *f.tpot_s;
        f.throughput_source = "running / TPOT";
    }
    return f;
}

// Sequence counts become ints and closed-loop loads: ten million is far beyond any deployment.
constexpr double kMaxSequences = 1e7;

void check_non_negative(const std::optional<double>& v, const char* what, double max = HUGE_VAL) {
    if (v && (!std::isfinite(*v) || *v < 0 || *v > max)) {
        throw InvalidArgument(fmt::format("observed {} is {:g}; it must be a finite number from 0 "
                                          "to {:g} (check the metrics or benchmark file)",
                                          what, *v, max));
    }
}

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
        f.effect = fmt::format("predicted at {} in flight: {:.0f} → {:.0f} tok/s, room for {} → {} "
                               "sequences, TPOT {} → {}, TTFT {} → {}",
                               ww.concurrency.value_or(0), before.throughput, e.throughput,
                               deployment_capacity(before.memory, ww, before_dp), f.capacity,
                               ms(before.tpot.si()), ms(e.tpot.si()), ms(before.ttft_loaded.si()),
                               ms(e.ttft_loaded.si()));
        f.deployment = std::move(dd);
        f.workload = std::move(ww);
    } catch (const InputError& err) {
        f.estimated = false;
        f.effect = std::string("not estimated: ") + err.what();
    }
    return f;
}

Deployment with_tp_x2(const Deployment& d) {
    Deployment x = d;
    x.par.tp = d.par.tp * 2;
    if (x.par.ep > 1) {
        x.par.ep = x.par.tp * x.par.dp;
    }
    return x;
}

Deployment with_replicas_x2(const Deployment& d) {
    Deployment x = d;
    x.par.dp = d.par.dp * 2;
    if (x.par.ep > 1) {
        x.par.ep = x.par.tp * x.par.dp;
    }
    return x;
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

} // namespace

/// A fix the model cannot express (no re-estimate).
DiagnosisFix advice(FixLayer layer, std::string change, std::string effect) {
    DiagnosisFix f;
    f.layer = layer;
    f.change = std::move(change);
    f.effect = std::move(effect);
    return f;
}

std::string throttle_row_id(const GpuTelemetry& g) {
    const bool thermal = g.thermal_share >= 0.5;
    const bool power = g.power_cap_share >= 0.5 || (g.power_draw_w && g.power_limit_w &&
                                                    *g.power_draw_w >= 0.95 * *g.power_limit_w);
    return thermal ? "thermal-throttled" : power ? "power-capped" : "clock-throttled";
}

Diagnosis diagnose(const Deployment& d, const Workload& w, const EfficiencyProfile& profile,
                   const Observations& obs, const DiagnosisThresholds& th) {
    if (obs.metrics) {
        const auto& m = *obs.metrics;
        check_non_negative(m.running, "vllm:num_requests_running", kMaxSequences);
        check_non_negative(m.waiting, "vllm:num_requests_waiting", kMaxSequences);
        check_non_negative(m.kv_usage, "vllm:kv_cache_usage_perc");
        check_non_negative(m.preemptions, "preemptions");
        check_non_negative(m.generation_tokens, "generation tokens");
    }
    const Figures f = merge(obs);
    check_non_negative(f.running,
                       "running sequences (the benchmark's concurrency, or tokens/s × TPOT)",
                       kMaxSequences);
    Diagnosis out;
    const EngineSettings eng = resolve_engine(d);

    // The observed lengths, within what the engine accepts.
    Workload wp = w;
    if (f.input_tokens && *f.input_tokens >= 1) {
        wp.input_tokens = static_cast<int>(std::lround(*f.input_tokens));
    }
    if (f.output_tokens && *f.output_tokens >= 1) {
        wp.output_tokens = static_cast<int>(std::lround(*f.output_tokens));
    }
    if (wp.input_tokens + wp.output_tokens > eng.max_model_len) {
        out.notes.push_back(fmt::format(
            "observed requests average {} + {} tokens, more than max_model_len {}; the "
            "scenario's lengths {} + {} are used",
            wp.input_tokens, wp.output_tokens, eng.max_model_len, w.input_tokens, w.output_tokens));
        wp.input_tokens = w.input_tokens;
        wp.output_tokens = w.output_tokens;
    }
    out.input_tokens = wp.input_tokens;
    out.output_tokens = wp.output_tokens;

    // The load: the observed running sequences as a closed loop; without them, the scenario's
    // own operating point (a closed loop, or an offered rate by Little's law).
    const int waiting = f.waiting ? static_cast<int>(std::lround(*f.waiting)) : 0;
    if (f.running) {
        set_closed_loop(wp, std::max(1, static_cast<int>(std::lround(*f.running))));
    }
    out.predicted = find_bottleneck(d, wp, profile);
    const int running = std::max(1, out.predicted.estimate.operating_point.concurrency);
    if (!f.running) {
        out.notes.push_back(
            fmt::format("no observed running count (vllm:num_requests_running or the benchmark's "
                        "max_concurrency); the scenario's load is used: {}",
                        out.predicted.estimate.operating_point.why));
        set_closed_loop(wp, running);
    }
    out.running = running;
    out.demand = running + waiting;
    const ServingEstimate& e = out.predicted.estimate;
    Workload wdemand = wp;
    set_closed_loop(wdemand, std::max(1, out.demand));
    ServingEstimate at_demand = e;
    if (out.demand != running) {
        at_demand = estimate_serving(d, wdemand, profile);
    }
    const int capacity = deployment_capacity(e.memory, wp, d.par.dp);
    out.capacity = capacity;

    // Observed beside predicted.
    if (f.tpot_s)
        out.comparisons.push_back(
            {"TPOT", "ms", *f.tpot_s * 1e3, e.tpot.si() * 1e3, f.tpot_source});
    if (f.ttft_s)
        out.comparisons.push_back(
            {"TTFT", "ms", *f.ttft_s * 1e3, e.ttft_loaded.si() * 1e3, f.ttft_source});
    if (f.throughput)
        out.comparisons.push_back(
            {"output throughput", "tok/s", *f.throughput, e.throughput, f.throughput_source});
    // Percentiles from the histograms: the analytic model has one value per figure (the steady
    // state of equal requests), so each is set beside it; the spread is what the model leaves out.
    if (const auto& m = obs.metrics) {
        const auto add = [&](const char* figure, const std::optional<double>& v, double pred) {
            if (v)
                out.comparisons.push_back({figure, "ms", *v * 1e3, pred * 1e3, "metrics buckets"});
        };
        add("TTFT P50", m->ttft_p50_s, e.ttft_loaded.si());
        add("TTFT P90", m->ttft_p90_s, e.ttft_loaded.si());
        add("TTFT P99", m->ttft_p99_s, e.ttft_loaded.si());
        add("ITL P50", m->itl_p50_s, e.tpot.si());
        add("ITL P90", m->itl_p90_s, e.tpot.si());
        add("ITL P99", m->itl_p99_s, e.tpot.si());
    }
    std::optional<double> observed_kv_tokens;
    if (const auto& st = obs.startup) {
        if (st->kv_tokens) {
            observed_kv_tokens = static_cast<double>(*st->kv_tokens);
        } else if (st->gpu_blocks) {
            observed_kv_tokens = static_cast<double>(*st->gpu_blocks) * eng.block_size;
        }
        if (!st->engine.empty() && st->engine != to_string(eng.kind)) {
            out.notes.push_back(fmt::format("the start-up log is {}'s but the scenario models {}: "
                                            "the KV cache is compared with {}'s arithmetic",
                                            st->engine, to_string(eng.kind), to_string(eng.kind)));
        }
        if (observed_kv_tokens) {
            out.comparisons.push_back({"KV cache", "tokens", *observed_kv_tokens,
                                       static_cast<double>(e.memory.kv_tokens), "start-up log"});
        }
        if (st->max_concurrency) {
            out.comparisons.push_back({"max concurrency at max_model_len", "x",
                                       *st->max_concurrency, e.memory.max_concurrency,
                                       "start-up log"});
        }
    }

    const bool busy =
        obs.gpu && obs.gpu->utilization_gpu && *obs.gpu->utilization_gpu >= th.busy_gpu;
    std::optional<double> clock_ratio;
    if (obs.gpu && obs.gpu->sm_clock_mhz && obs.gpu->max_sm_clock_mhz &&
        *obs.gpu->max_sm_clock_mhz > 0) {
        clock_ratio = std::min(1.0, *obs.gpu->sm_clock_mhz / *obs.gpu->max_sm_clock_mhz);
    }
    const bool throttled = clock_ratio && *clock_ratio < th.clock_ratio;
    const bool kv_full = f.kv_usage && *f.kv_usage >= th.kv_full &&
                         ((f.waiting && *f.waiting > 0) || (f.preemptions && *f.preemptions > 0));

    // 1. KV cache full: sequences wait for blocks or are preempted.
    if (kv_full) {
        DiagnosisRow r;
        r.id = "kv-cache-full";
        r.symptom = "requests wait or are preempted while the GPU has KV cache for no more";
        r.cause = "the KV cache holds fewer sequences than the load asks for";
        r.evidence.push_back(fmt::format("KV cache {} used (threshold {})",
                                         format_percent(*f.kv_usage), format_percent(th.kv_full)));
        if (f.waiting)
            r.evidence.push_back(fmt::format("{} waiting beside {} running", waiting, running));
        if (f.preemptions && *f.preemptions > 0) {
            r.evidence.push_back(f.preemptions_per_s
                                     ? fmt::format("{:.0f} preemptions in the window ({:.2g}/s)",
                                                   *f.preemptions, *f.preemptions_per_s)
                                     : fmt::format("{:.0f} preemptions {}", *f.preemptions,
                                                   obs.metrics && obs.metrics->delta
                                                       ? "in the window"
                                                       : "since the server started"));
        }
        if (f.queue_s && f.ttft_s && *f.ttft_s > 0) {
            r.evidence.push_back(
                fmt::format("queue time {} is {} of TTFT {}: requests wait for KV blocks",
                            ms(*f.queue_s), format_percent(*f.queue_s / *f.ttft_s), ms(*f.ttft_s)));
        }
        r.evidence.push_back(fmt::format(
            "predicted KV pool {} tokens: {} sequences of {} + {} tokens at once (max_num_seqs {})",
            e.memory.kv_tokens, capacity, wp.input_tokens, wp.output_tokens, eng.max_num_seqs));
        if (capacity > running * 1.25) {
            r.evidence.push_back(fmt::format(
                "the model expects room for {} sequences but the cache is full at {}: requests "
                "are probably longer than {} + {} tokens, or the engine reserved less memory",
                capacity, running, wp.input_tokens, wp.output_tokens));
        }
        r.check = "vLLM's start-up log lines 'GPU KV cache size: N tokens' and 'Maximum "
                  "concurrency for L tokens per request'; vllm:num_preemptions_total rising";
        if (eng.memory_fraction < 0.95) {
            Deployment x = d;
            x.engine.gpu_memory_utilization = 0.95;
            r.fixes.push_back(
                reestimate(FixLayer::Framework,
                           fmt::format("gpu_memory_utilization {:.2f} → 0.95", eng.memory_fraction),
                           x, wdemand, profile, at_demand, d.par.dp));
        }
        if (d.prec.kv_cache.bits_per_element > 8.0) {
            if (const auto fp8 = find_precision("fp8")) {
                Deployment x = d;
                x.prec.kv_cache = *fp8;
                r.fixes.push_back(reestimate(FixLayer::Model,
                                             "kv cache " + d.prec.kv_cache.name + " → fp8", x,
                                             wdemand, profile, at_demand, d.par.dp));
            }
        }
        r.fixes.push_back(reestimate(
            FixLayer::Hardware,
            fmt::format("tp {} → {} (twice the GPUs: the weights take half as much of each)",
                        d.par.tp, d.par.tp * 2),
            with_tp_x2(d), wdemand, profile, at_demand, d.par.dp));
        r.severity = 3.0 + (f.preemptions && *f.preemptions > 0 ? 1.0 : 0.0);
        out.rows.push_back(std::move(r));
    }

    // 2. Queueing: requests wait and the wait dominates the first token.
    const bool queue_dominates =
        f.queue_s && f.ttft_s && *f.ttft_s > 0 && *f.queue_s > th.queue_share * *f.ttft_s;
    if (!kv_full && waiting > 0 && (queue_dominates || !f.queue_s)) {
        DiagnosisRow r;
        r.id = "queueing";
        r.symptom = "time to first token grows with load; requests wait";
        r.cause = "more requests arrive than the running batch takes";
        r.evidence.push_back(fmt::format("{} waiting beside {} running", waiting, running));
        if (queue_dominates) {
            r.evidence.push_back(fmt::format("queue time {} is {} of TTFT {} (threshold {})",
                                             ms(*f.queue_s), format_percent(*f.queue_s / *f.ttft_s),
                                             ms(*f.ttft_s), format_percent(th.queue_share)));
        }
        r.check = "vllm:request_queue_time_seconds against vllm:time_to_first_token_seconds; "
                  "vllm:num_requests_waiting over time";
        const int seq_cap = eng.max_num_seqs * d.par.dp;
        if (running >= seq_cap) {
            r.evidence.push_back(fmt::format("running {} equals max_num_seqs {} × {} replicas",
                                             running, eng.max_num_seqs, d.par.dp));
            r.fixes.push_back(reestimate(
                FixLayer::Framework,
                fmt::format("max_num_seqs {} → {}", eng.max_num_seqs, eng.max_num_seqs * 2),
                with_double_max_num_seqs(d, eng), wdemand, profile, at_demand, d.par.dp));
        } else {
            r.fixes.push_back(advice(FixLayer::Framework, "cap client concurrency and fail fast",
                                     "keeps latency bounded; does not add capacity"));
        }
        r.fixes.push_back(reestimate(FixLayer::Hardware,
                                     fmt::format("replicas {} → {}", d.par.dp, d.par.dp * 2),
                                     with_replicas_x2(d), wdemand, profile, at_demand, d.par.dp));
        r.severity = 2.0 + (queue_dominates ? *f.queue_s / *f.ttft_s : 0.0);
        out.rows.push_back(std::move(r));
    }

    // 3. Low batch: nothing waits and few sequences run.
    if (f.running && f.waiting && waiting == 0 && capacity > 0 &&
        running < th.low_batch_share * capacity) {
        DiagnosisRow r;
        r.id = "low-batch";
        r.symptom = "throughput far below what the GPUs serve, nothing waiting";
        r.cause = "the clients send too few requests at once: the batch is small";
        r.evidence.push_back(fmt::format("{} running, 0 waiting; the deployment runs {} at once "
                                         "(threshold {} of it)",
                                         running, capacity, format_percent(th.low_batch_share)));
        if (busy) {
            r.evidence.push_back(fmt::format("GPU utilization {} counts time a kernel runs, not "
                                             "work done: small batches keep it high",
                                             format_percent(*obs.gpu->utilization_gpu)));
        }
        if (obs.gpu && obs.gpu->tensor_active) {
            r.evidence.push_back(fmt::format("DCGM tensor pipes active {}: the batch gives the "
                                             "tensor cores little to do",
                                             format_percent(*obs.gpu->tensor_active)));
        }
        r.check =
            "the benchmark's --max-concurrency or --request-rate; the client's connection pool";
        Workload more = wp;
        const int target = std::max(running + 1, capacity);
        set_closed_loop(more, target);
        r.fixes.push_back(reestimate(FixLayer::Framework,
                                     fmt::format("client concurrency {} → {}", running, target), d,
                                     more, profile, e, d.par.dp));
        r.severity = 1.0 + (1.0 - static_cast<double>(running) / capacity);
        out.rows.push_back(std::move(r));
    }

    // 4. Decode far slower than the model's floor at this batch.
    const double pred_tpot = e.tpot.si();
    if (f.tpot_s && pred_tpot > 0 && *f.tpot_s > th.slow_factor * pred_tpot) {
        const double factor = *f.tpot_s / pred_tpot;
        DiagnosisRow r;
        r.id = "decode-slow";
        r.symptom = busy ? "GPU busy but few tokens/s" : "tokens/s far below the hardware's floor";
        r.cause = "the GPU is not doing the work the model expects: each token costs more than "
                  "reading the weights and KV cache once";
        r.evidence.push_back(fmt::format(
            "TPOT {} observed vs {} predicted at {} running: {:.1f}× slower than the {} floor "
            "(threshold {:.0f}×, beyond the model's error band ±{:.0f} %)",
            ms(*f.tpot_s), ms(pred_tpot), running, factor,
            out.predicted.decode.binding == Resource::MemoryBandwidth
                ? "memory-bandwidth"
                : to_string(out.predicted.decode.binding),
            th.slow_factor, e.error_band.p90 * 100));
        if (f.throughput) {
            r.evidence.push_back(fmt::format("{:.3g} output tok/s observed vs {:.3g} predicted",
                                             *f.throughput, e.throughput));
        }
        if (f.ttft_s && e.ttft_loaded.si() > 0 && *f.ttft_s > th.slow_factor * e.ttft_loaded.si()) {
            r.evidence.push_back(fmt::format(
                "TTFT is {:.1f}× the prediction too: prefill and decode are both slow, which "
                "points at the whole GPU path (offloaded weights, clocks, dtype) rather than "
                "decode-only costs such as eager mode",
                *f.ttft_s / e.ttft_loaded.si()));
        }
        if (busy) {
            r.evidence.push_back(fmt::format(
                "GPU utilization {} (≥ {}): the GPU is not starved, so "
                "the client and scheduler are ruled out",
                format_percent(*obs.gpu->utilization_gpu), format_percent(th.busy_gpu)));
        }
        if (obs.gpu && obs.gpu->dram_active) {
            r.evidence.push_back(fmt::format(
                "DCGM DRAM active {}{}: the memory interface idles {} of the time, so this TPOT "
                "is not the memory-bandwidth limit (which would keep it near 100 %)",
                format_percent(*obs.gpu->dram_active),
                obs.gpu->sm_active
                    ? fmt::format(", SM active {}", format_percent(*obs.gpu->sm_active))
                    : std::string(),
                format_percent(1.0 - std::min(1.0, *obs.gpu->dram_active))));
        }
        // Hypotheses the model can price, each re-estimated: which one comes closest?
        struct Hypothesis {
            std::string what;
            double tpot;
        };
        std::vector<Hypothesis> hyps;
        const auto price = [&](std::string what, const Deployment& x) {
            try {
                const ServingEstimate h = estimate_serving(x, wp, profile);
                if (!h.memory.fits) {
                    what += fmt::format(" (does not fit in {:.0f} GiB: it would need offload)",
                                        d.gpu.memory.si() / 1073741824.0);
                }
                hyps.push_back({std::move(what), h.tpot.si()});
            } catch (const InputError&) {
            }
        };
        if (eng.cuda_graphs) {
            Deployment x = d;
            x.engine.cuda_graphs = false;
            price("eager mode (--enforce-eager: no CUDA graphs)", x);
        }
        if (const auto fp32 = find_precision("fp32");
            fp32 && d.prec.weights.bits_per_element < 32) {
            Deployment x = d;
            x.prec.weights = *fp32;
            x.prec.activations = *fp32;
            price("fp32 weights (--dtype float32)", x);
        }
        if (clock_ratio) {
            Deployment x = d;
            x.clocks.compute = *clock_ratio;
            price(
                fmt::format("the observed SM clock ({} of maximum)", format_percent(*clock_ratio)),
                x);
        }
        for (const auto& h : hyps) {
            r.evidence.push_back(fmt::format("{} alone would give TPOT {}: {} of the observed",
                                             h.what, ms(h.tpot),
                                             format_percent(h.tpot / *f.tpot_s)));
        }
        const auto best = std::max_element(
            hyps.begin(), hyps.end(),
            [](const Hypothesis& a, const Hypothesis& b) { return a.tpot < b.tpot; });
        const double best_share = best == hyps.end() ? 0.0 : best->tpot / *f.tpot_s;
        if (best != hyps.end() && best_share >= 0.7) {
            r.cause += "; most likely " + best->what;
        } else {
            r.cause += fmt::format("; most likely weights read from host memory (CPU offload or "
                                   "swap): none of eager mode, fp32 weights or the clock explains "
                                   "more than {} of the observed TPOT",
                                   format_percent(best_share));
        }
        const double gap = *f.tpot_s - pred_tpot;
        r.evidence.push_back(fmt::format(
            "the gap of {} per step is what streaming {:.3g} GB over a {:.0f} GB/s PCIe link "
            "takes (CPU offload or swapped weights)",
            ms(gap), gap * kPcieBytesPerS / 1e9, kPcieBytesPerS / 1e9));
        if (d.par.tp > 1 && d.intra_node_link.name.rfind("pcie", 0) == 0) {
            r.evidence.push_back(
                fmt::format("tensor parallel {} over {} (no NVLink): every layer's "
                            "all-reduce crosses PCIe",
                            d.par.tp, d.intra_node_link.name));
        }
        if (throttled) {
            r.evidence.push_back(fmt::format("SM clock {:.0f} of {:.0f} MHz ({}, threshold {})",
                                             *obs.gpu->sm_clock_mhz, *obs.gpu->max_sm_clock_mhz,
                                             format_percent(*clock_ratio),
                                             format_percent(th.clock_ratio)));
        }
        r.check = "vLLM start-up log: 'enforce_eager=True' or no 'Graph capturing finished', "
                  "dtype=torch.float32, cpu_offload_gb > 0; `nvidia-smi -q -d PERFORMANCE` for "
                  "throttle reasons; `nvidia-smi topo -m` for the links between TP GPUs";
        // The fix restores what the model assumes: CUDA graphs, 16-bit weights, no offload.
        Deployment restored = d;
        restored.engine.cuda_graphs = true;
        restored.clocks = d.clocks;
        r.fixes.push_back(reestimate(FixLayer::Framework,
                                     "serve with CUDA graphs (drop --enforce-eager), --dtype auto "
                                     "(bf16/fp16) and no --cpu-offload-gb",
                                     restored, wp, profile, e, d.par.dp));
        if (r.fixes.front().estimated)
            r.fixes.front().effect =
                fmt::format("predicted TPOT {} at {} running: {:.1f}× faster than observed; {:.3g} "
                            "→ {:.3g} tok/s",
                            ms(r.fixes.front().tpot.si()), running,
                            *f.tpot_s / std::max(1e-12, r.fixes.front().tpot.si()),
                            f.throughput.value_or(0.0), r.fixes.front().throughput);
        if (d.prec.weights.bits_per_element > 8.5) {
            if (const auto awq = find_precision("awq-int4")) {
                Deployment x = d;
                x.prec.weights = *awq;
                r.fixes.push_back(reestimate(
                    FixLayer::Model,
                    "weights " + d.prec.weights.name +
                        " → awq-int4 (an AWQ checkpoint): a quarter of the bytes per token",
                    x, wp, profile, e, d.par.dp));
            }
        }
        if (throttled) {
            Deployment slow = d;
            slow.clocks.compute = *clock_ratio;
            ServingEstimate at_clock = e;
            try {
                at_clock = estimate_serving(slow, wp, profile);
            } catch (const InputError&) {
            }
            r.fixes.push_back(
                reestimate(FixLayer::Hardware,
                           "restore full clocks: raise the power limit (nvidia-smi -pl), "
                           "fix cooling",
                           d, wp, profile, at_clock, d.par.dp));
        }
        if (d.par.tp > 1 && d.intra_node_link.name.rfind("pcie", 0) == 0) {
            r.fixes.push_back(
                advice(FixLayer::Hardware,
                       "GPUs joined by NVLink, or replicas instead of tensor parallelism",
                       "removes the PCIe all-reduce from every layer"));
        }
        r.severity = factor;
        out.rows.push_back(std::move(r));
    }

    // 5. Clocks held down by a power cap or heat.
    if (throttled) {
        const auto& g = *obs.gpu;
        DiagnosisRow r;
        r.id = throttle_row_id(g);
        const bool thermal = r.id == "thermal-throttled";
        const bool power = r.id == "power-capped";
        r.symptom = "the GPU runs below its maximum clock";
        r.cause = thermal ? "thermal slowdown: the GPU is too hot"
                  : power ? "the power limit holds the clock down"
                          : "the clock is held down (no throttle reason reported)";
        r.evidence.push_back(fmt::format(
            "SM clock {:.0f} of {:.0f} MHz ({}, threshold {})", *g.sm_clock_mhz,
            *g.max_sm_clock_mhz, format_percent(*clock_ratio), format_percent(th.clock_ratio)));
        if (g.has_throttle_reasons) {
            r.evidence.push_back(fmt::format("power-cap throttling in {} of samples, thermal in {}",
                                             format_percent(g.power_cap_share),
                                             format_percent(g.thermal_share)));
        }
        if (g.power_draw_w && g.power_limit_w) {
            r.evidence.push_back(fmt::format("power draw {:.0f} W of a {:.0f} W limit",
                                             *g.power_draw_w, *g.power_limit_w));
        }
        r.check = "`nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE`: clock event reasons, power "
                  "limit, temperatures";
        Deployment slow = d;
        slow.clocks.compute = *clock_ratio;
        ServingEstimate at_clock = e;
        try {
            at_clock = estimate_serving(slow, wp, profile);
        } catch (const InputError&) {
        }
        r.evidence.push_back(
            fmt::format("the model at this clock: TPOT {} (vs {} at full clock), TTFT {} (vs {})",
                        ms(at_clock.tpot.si()), ms(pred_tpot), ms(at_clock.ttft_loaded.si()),
                        ms(e.ttft_loaded.si())));
        r.fixes.push_back(reestimate(
            FixLayer::Hardware,
            thermal ? "improve cooling (airflow, inlet temperature)"
                    : "raise the power limit (nvidia-smi -pl) or the rack's power budget",
            d, wp, profile, at_clock, d.par.dp));
        r.severity = 1.0 / *clock_ratio;
        out.rows.push_back(std::move(r));
    }

    // 6. Prefill-bound first token: TTFT far above the prediction, not from queueing.
    const double pred_ttft = e.ttft_loaded.si();
    const double decode_factor = f.tpot_s && pred_tpot > 0 ? *f.tpot_s / pred_tpot : 1.0;
    const bool decode_slow = decode_factor > th.slow_factor;
    // When decode is slow too, a slow first token is the same cause unless it is much worse.
    const bool prefill_own =
        !decode_slow || (f.ttft_s && *f.ttft_s / pred_ttft > 2 * decode_factor);
    if (f.ttft_s && pred_ttft > 0 && *f.ttft_s > th.prefill_factor * pred_ttft &&
        *f.ttft_s - pred_ttft > th.prefill_min_gap_s && !queue_dominates && waiting == 0 &&
        prefill_own) {
        DiagnosisRow r;
        r.id = "prefill-slow";
        r.symptom = "first token slow although nothing waits";
        r.cause = "prefill takes longer than the model expects: long prompts, prefill stalled "
                  "behind decodes, or no chunked prefill";
        r.evidence.push_back(
            fmt::format("TTFT {} observed vs {} predicted under load ({:.1f}×; thresholds {:.0f}× "
                        "and {} more)",
                        ms(*f.ttft_s), ms(pred_ttft), *f.ttft_s / pred_ttft, th.prefill_factor,
                        ms(th.prefill_min_gap_s)));
        if (f.prefill_s)
            r.evidence.push_back(fmt::format("prefill time {} per request", ms(*f.prefill_s)));
        r.check = "vllm:request_prefill_time_seconds and the prompt length "
                  "(vllm:prompt_tokens_total per request)";
        if (!eng.chunked_prefill) {
            Deployment x = d;
            x.engine.enable_chunked_prefill = true;
            r.fixes.push_back(reestimate(FixLayer::Framework, "enable chunked prefill", x, wp,
                                         profile, e, d.par.dp));
        }
        if (!eng.prefix_caching) {
            Deployment x = d;
            x.engine.enable_prefix_caching = true;
            r.fixes.push_back(reestimate(FixLayer::Framework,
                                         "enable prefix caching (shared prompt prefixes)", x, wp,
                                         profile, e, d.par.dp));
        }
        r.fixes.push_back(reestimate(FixLayer::Hardware,
                                     fmt::format("tp {} → {}", d.par.tp, d.par.tp * 2),
                                     with_tp_x2(d), wp, profile, e, d.par.dp));
        r.severity = *f.ttft_s / pred_ttft / th.prefill_factor;
        out.rows.push_back(std::move(r));
    }

    // 7. The engine's KV cache differs from the model's prediction beyond the error band.
    if (observed_kv_tokens && e.memory.kv_tokens > 0) {
        const double predicted = static_cast<double>(e.memory.kv_tokens);
        const double rel = *observed_kv_tokens / predicted - 1.0;
        const double band = std::max(th.kv_size_band, e.error_band.p90);
        if (std::abs(rel) > band) {
            const auto& st = *obs.startup;
            const bool less = rel < 0;
            DiagnosisRow r;
            r.id = "kv-size-mismatch";
            r.symptom = less ? "the engine holds fewer KV tokens than the model predicts"
                             : "the engine holds more KV tokens than the model predicts";
            r.cause =
                less ? "the engine had less memory for the KV cache than the scenario says: "
                       "another process on the GPU, a lower --gpu-memory-utilization, a larger "
                       "activation peak (--max-num-batched-tokens) or a wider KV dtype"
                     : "the engine had more memory for the KV cache than the scenario says: an "
                       "fp8 KV cache, a higher --gpu-memory-utilization or smaller (quantized) "
                       "weights than the scenario's";
            r.evidence.push_back(fmt::format(
                "start-up log{}: {:.0f} KV tokens; the model predicts {} ({:+.0f} %, band ±{:.0f} "
                "%: the larger of {:.0f} % and the profile's P90 error)",
                st.line > 0 ? fmt::format(" line {}", st.line) : std::string(), *observed_kv_tokens,
                e.memory.kv_tokens, rel * 100, band * 100, th.kv_size_band * 100,
                e.error_band.p90 * 100));
            if (st.gpu_blocks && !st.kv_tokens) {
                r.evidence.push_back(
                    fmt::format("{} GPU blocks × block size {}", *st.gpu_blocks, eng.block_size));
            }
            const double gib =
                (*observed_kv_tokens - predicted) * e.memory.kv_per_token.si() / 1073741824.0;
            r.evidence.push_back(
                fmt::format("{:.2f} GiB {} KV memory per GPU than predicted ({} per token)",
                            std::abs(gib), less ? "less" : "more",
                            fmt::format("{:.0f} KiB", e.memory.kv_per_token.si() / 1024.0)));
            if (st.concurrency_len && *st.concurrency_len != eng.max_model_len) {
                r.evidence.push_back(fmt::format(
                    "the log's max_model_len {} is not the scenario's {}: the scenario does not "
                    "describe the deployment as launched",
                    *st.concurrency_len, eng.max_model_len));
            }
            r.check = "vLLM's start-up lines 'Available KV cache memory: X GiB' and 'Model loading "
                      "took X GiB'; `nvidia-smi` for other processes on the GPU; the launch "
                      "flags --gpu-memory-utilization, --kv-cache-dtype, --max-num-batched-tokens";
            if (less && eng.memory_fraction < 0.95) {
                Deployment x = d;
                x.engine.gpu_memory_utilization = 0.95;
                r.fixes.push_back(reestimate(
                    FixLayer::Framework,
                    fmt::format("free the GPU of other processes and raise gpu_memory_utilization "
                                "{:.2f} → 0.95",
                                eng.memory_fraction),
                    x, wp, profile, e, d.par.dp));
            }
            r.fixes.push_back(advice(
                FixLayer::Framework,
                "describe the deployment as launched: the scenario's gpu_memory_utilization, "
                "kv_cache precision and max_model_len as on the engine's command line",
                "the predictions (capacity, queueing) then start from the engine's real KV pool"));
            if (less && d.prec.kv_cache.bits_per_element > 8.0) {
                if (const auto fp8 = find_precision("fp8")) {
                    Deployment x = d;
                    x.prec.kv_cache = *fp8;
                    r.fixes.push_back(reestimate(FixLayer::Model,
                                                 "kv cache " + d.prec.kv_cache.name + " → fp8", x,
                                                 wp, profile, e, d.par.dp));
                }
            }
            r.severity = 1.0 + std::abs(rel);
            out.rows.push_back(std::move(r));
        }
    }

    // 8. Speculative decoding accepting fewer drafts than the scenario assumes.
    if (const auto& m = obs.metrics;
        m && m->spec_draft_tokens && *m->spec_draft_tokens > 0 && m->spec_accepted_tokens) {
        const double obs_rate = *m->spec_accepted_tokens / *m->spec_draft_tokens;
        const std::optional<double> obs_len =
            m->spec_drafts && *m->spec_drafts > 0
                ? std::optional<double>(1 + *m->spec_accepted_tokens / *m->spec_drafts)
                : std::nullopt;
        if (!d.engine.speculative) {
            out.notes.push_back(fmt::format(
                "the metrics show speculative decoding ({} of draft tokens accepted) but the "
                "scenario has no engine.speculative block: the prediction is without it",
                format_percent(obs_rate)));
        } else {
            const SpeculativeConfig& sc = *d.engine.speculative;
            const int k = speculative_tokens(sc);
            const std::vector<double> a = acceptance_by_position(sc);
            // Expected accepted tokens per draft: Σ_i Π_{j<=i} a_j; per draft token: ÷ k.
            const double pred_len = expected_tokens_per_step(a);
            const double pred_rate = (pred_len - 1) / k;
            out.comparisons.push_back(
                {"draft acceptance", "%", obs_rate * 100, pred_rate * 100, "metrics"});
            if (obs_len) {
                out.comparisons.push_back(
                    {"tokens per verify step", "x", *obs_len, pred_len, "metrics"});
            }
            if (obs_rate < th.spec_acceptance_share * pred_rate) {
                DiagnosisRow r;
                r.id = "spec-low-acceptance";
                r.symptom = "speculative decoding gains less than expected";
                r.cause = "the draft's tokens are accepted less often than the scenario assumes: "
                          "each verify pass pays for k draft tokens and keeps few";
                r.evidence.push_back(fmt::format(
                    "{} of draft tokens accepted ({:.0f} of {:.0f}) vs {} assumed (threshold {} "
                    "of it)",
                    format_percent(obs_rate), *m->spec_accepted_tokens, *m->spec_draft_tokens,
                    format_percent(pred_rate), format_percent(th.spec_acceptance_share)));
                if (obs_len) {
                    r.evidence.push_back(
                        fmt::format("{:.2f} tokens per verify step vs {:.2f} assumed (k = {})",
                                    *obs_len, pred_len, k));
                }
                // The observed conditional acceptance per position: accepted at position i
                // given i - 1 accepted (vllm:spec_decode_num_accepted_tokens_per_pos / drafts).
                std::vector<double> seen;
                if (m->spec_drafts && *m->spec_drafts > 0 && !m->spec_accepted_per_pos.empty()) {
                    double prev = *m->spec_drafts;
                    std::string by_pos;
                    for (double c : m->spec_accepted_per_pos) {
                        const double cond = prev > 0 ? std::clamp(c / prev, 0.0, 1.0) : 0.0;
                        seen.push_back(cond);
                        by_pos +=
                            fmt::format("{}{}", by_pos.empty() ? "" : ", ", format_percent(cond));
                        prev = c;
                    }
                    r.evidence.push_back(
                        fmt::format("acceptance by position, given the previous ones accepted: "
                                    "{}",
                                    by_pos));
                }
                if (static_cast<int>(seen.size()) != k) {
                    // Without per-position counters: the observed rate at every position.
                    seen.assign(static_cast<std::size_t>(k), std::min(obs_rate, 0.999));
                }
                r.check = "vLLM's log line 'SpecDecoding metrics: Mean acceptance length ..., "
                          "Per-position acceptance rate ...'; whether the draft shares the "
                          "target's tokenizer and chat template";
                // The deployment as observed: its k with the measured acceptance.
                const auto with = [&](int kk, std::vector<double> acc) {
                    Deployment x = d;
                    acc.resize(static_cast<std::size_t>(kk));
                    x.engine.speculative->num_speculative_tokens = kk;
                    x.engine.speculative->acceptance_rate.reset();
                    x.engine.speculative->acceptance = std::move(acc);
                    return x;
                };
                ServingEstimate observed_spec = at_demand;
                try {
                    observed_spec = estimate_serving(with(k, seen), wdemand, profile);
                } catch (const InputError&) {
                }
                // The best smaller k at the measured acceptance, re-estimated.
                int best_k = 0;
                double best = observed_spec.throughput;
                for (int kk = 1; kk < k; ++kk) {
                    try {
                        const ServingEstimate e2 =
                            estimate_serving(with(kk, seen), wdemand, profile);
                        if (e2.throughput > best) {
                            best = e2.throughput;
                            best_k = kk;
                        }
                    } catch (const InputError&) {
                    }
                }
                if (best_k > 0) {
                    r.fixes.push_back(reestimate(
                        FixLayer::Framework,
                        fmt::format("num_speculative_tokens {} → {} (at the measured acceptance)",
                                    k, best_k),
                        with(best_k, seen), wdemand, profile, observed_spec, d.par.dp));
                }
                Deployment off = d;
                off.engine.speculative.reset();
                r.fixes.push_back(reestimate(FixLayer::Framework, "speculative decoding off", off,
                                             wdemand, profile, observed_spec, d.par.dp));
                if (sc.method != SpeculativeMethod::Eagle) {
                    Deployment x = d;
                    SpeculativeConfig e3;
                    e3.method = SpeculativeMethod::Eagle;
                    x.engine.speculative = e3;
                    r.fixes.push_back(reestimate(
                        FixLayer::Model,
                        fmt::format(
                            "an EAGLE head trained for the target instead of the {} "
                            "(acceptance assumed {}, the default for EAGLE)",
                            to_string(sc.method),
                            format_percent(default_acceptance_rate(SpeculativeMethod::Eagle))),
                        x, wdemand, profile, observed_spec, d.par.dp));
                }
                r.severity = 1.0 + pred_rate / std::max(obs_rate, 1e-3) / 10;
                out.rows.push_back(std::move(r));
            }
        }
    }

    // 9. Engine steps far below the token budget while requests wait.
    if (const auto& m = obs.metrics; m && m->iteration_tokens_mean) {
        const double budget = eng.max_num_batched_tokens;
        out.comparisons.push_back({"tokens per engine step", "tokens", *m->iteration_tokens_mean,
                                   budget, "metrics vs max_num_batched_tokens"});
        if (budget > 0 && *m->iteration_tokens_mean < th.step_fill * budget && waiting > 0 &&
            !kv_full) {
            DiagnosisRow r;
            r.id = "step-underfilled";
            r.symptom = "requests wait while the engine's steps are far below their token budget";
            r.cause = "the scheduler admits fewer sequences than the token budget and the KV cache "
                      "would take";
            r.evidence.push_back(fmt::format(
                "{:.0f} tokens per engine step on average (vllm:iteration_tokens_total) of a "
                "budget of {:.0f} (max_num_batched_tokens): {} (threshold {})",
                *m->iteration_tokens_mean, budget,
                format_percent(*m->iteration_tokens_mean / budget), format_percent(th.step_fill)));
            r.evidence.push_back(fmt::format("{} waiting beside {} running", waiting, running));
            if (f.kv_usage) {
                r.evidence.push_back(fmt::format("KV cache {} used: not what holds them back",
                                                 format_percent(*f.kv_usage)));
            }
            r.check = "vllm:num_requests_running against --max-num-seqs; vLLM's scheduler log "
                      "lines; the API server's CPU use";
            const int seq_cap = eng.max_num_seqs * d.par.dp;
            if (running >= seq_cap) {
                r.evidence.push_back(fmt::format("running {} equals max_num_seqs {} × {} "
                                                 "replicas: the batch is at its cap",
                                                 running, eng.max_num_seqs, d.par.dp));
                r.fixes.push_back(reestimate(
                    FixLayer::Framework,
                    fmt::format("max_num_seqs {} → {}", eng.max_num_seqs, eng.max_num_seqs * 2),
                    with_double_max_num_seqs(d, eng), wdemand, profile, at_demand, d.par.dp));
            } else if (!eng.chunked_prefill) {
                Deployment x = d;
                x.engine.enable_chunked_prefill = true;
                r.fixes.push_back(reestimate(FixLayer::Framework,
                                             "enable chunked prefill: long prompts no longer "
                                             "hold a step to themselves",
                                             x, wdemand, profile, at_demand, d.par.dp));
            } else {
                r.fixes.push_back(advice(FixLayer::Framework,
                                         "the engine's CPU side: async scheduling, more API "
                                         "server processes, a faster tokenizer",
                                         "not estimated: the step model has no CPU cost"));
            }
            r.fixes.push_back(reestimate(
                FixLayer::Hardware, fmt::format("replicas {} → {}", d.par.dp, d.par.dp * 2),
                with_replicas_x2(d), wdemand, profile, at_demand, d.par.dp));
            r.severity = 1.5;
            out.rows.push_back(std::move(r));
        }
    }

    for (auto& r : out.rows) {
        std::stable_sort(
            r.fixes.begin(), r.fixes.end(),
            [](const DiagnosisFix& a, const DiagnosisFix& b) { return a.layer < b.layer; });
    }
    std::stable_sort(
        out.rows.begin(), out.rows.end(),
        [](const DiagnosisRow& a, const DiagnosisRow& b) { return a.severity > b.severity; });
    if (!obs.metrics && !obs.bench && !obs.gpu && !obs.startup) {
        out.notes.push_back("nothing observed: give --metrics, --bench or --smi");
    }
    if (!obs.gpu) {
        out.notes.push_back(
            "no GPU telemetry (--smi, --dmon or --dcgm): clocks, power and utilization rows "
            "cannot be judged");
    }
    return out;
}

std::vector<TroubleshootingRow> troubleshooting_table(const DiagnosisThresholds& th) {
    return {
        {{"kv-cache-full"},
         fmt::format("KV cache use at or above {} and requests waiting or preempted",
                     format_percent(th.kv_full))},
        {{"queueing"},
         fmt::format("requests waiting, the KV cache not full, and queue time above {} of TTFT",
                     format_percent(th.queue_share))},
        {{"low-batch"},
         fmt::format("nothing waiting and fewer running than {} of what the deployment runs at "
                     "once",
                     format_percent(th.low_batch_share))},
        {{"decode-slow"},
         fmt::format("TPOT above {:g}× the prediction at the observed batch", th.slow_factor)},
        {{"power-capped", "thermal-throttled", "clock-throttled"},
         fmt::format("SM clock below {} of its maximum (the reason from the throttle reasons or "
                     "the power draw)",
                     format_percent(th.clock_ratio))},
        {{"kv-size-mismatch"},
         fmt::format("the start-up log's KV cache size differs from the model's by more than the "
                     "larger of {} and the profile's P90 error band",
                     format_percent(th.kv_size_band))},
        {{"prefill-slow"},
         fmt::format("TTFT above {:g}× the prediction and more than {:g} ms above it, nothing "
                     "waiting, not explained by a slow decode",
                     th.prefill_factor, th.prefill_min_gap_s * 1e3)},
        {{"spec-low-acceptance"},
         fmt::format("speculative decoding: draft acceptance below {} of the scenario's",
                     format_percent(th.spec_acceptance_share))},
        {{"step-underfilled"},
         fmt::format("mean tokens per engine step below {} of max_num_batched_tokens while "
                     "requests wait and the KV cache is not full",
                     format_percent(th.step_fill))},
        {{"comm-bound"},
         fmt::format("training: step time above {:g}× the compute floor, MFU below {}, and "
                     "communication plus pipeline bubble at least {} of the predicted step",
                     th.train_floor_factor, format_percent(th.train_low_mfu),
                     format_percent(th.train_comm_share))},
        {{"input-stall"},
         fmt::format("training: step time more than {} above the GPUs' own prediction, with the "
                     "GPUs idle or the data loader short",
                     format_percent(th.train_input_gap))},
        {{"training-memory"},
         fmt::format("training: an out-of-memory line, max reserved at or above {} of the GPU's "
                     "memory, or a layout the model says does not fit",
                     format_percent(th.train_memory_share))},
        {{"stragglers"},
         fmt::format("training: step times vary by more than {} (coefficient of variation) or "
                     "the slowest step is above {:g}× the mean",
                     format_percent(th.train_step_cv), th.train_straggler_max)},
        {{"rack-budget-exceeded"},
         "observed GPU power of the nodes sharing a rack, at the wall, above the rack budget"},
    };
}

} // namespace gpuplan::model
