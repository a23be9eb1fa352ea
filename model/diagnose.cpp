#include "model/diagnose.hpp"
#include "model/checked_format.hpp"

#include "model/detail/diagnose_rules.hpp"

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
        throw InvalidArgument(gpuplan::checked_format(
            "histogram_quantile: q is {:g}; give a quantile from 0 to 1", q));
    }
    for (const auto& b : buckets) {
        if (std::isnan(b.le) || !std::isfinite(b.count) || b.count < 0) {
            throw InvalidArgument(
                gpuplan::checked_format("histogram_quantile: bucket le={:g} count={:g}; "
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
            throw InvalidArgument(gpuplan::checked_format(
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

using detail::Figures;

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
        throw InvalidArgument(
            gpuplan::checked_format("observed {} is {:g}; it must be a finite number from 0 "
                                    "to {:g} (check the metrics or benchmark file)",
                                    what, *v, max));
    }
}

/// The figures merged from every source, each checked to be in range.
Figures checked_figures(const Observations& obs) {
    if (obs.metrics) {
        const auto& m = *obs.metrics;
        check_non_negative(m.running, "vllm:num_requests_running", kMaxSequences);
        check_non_negative(m.waiting, "vllm:num_requests_waiting", kMaxSequences);
        check_non_negative(m.kv_usage, "vllm:kv_cache_usage_perc");
        check_non_negative(m.preemptions, "preemptions");
        check_non_negative(m.generation_tokens, "generation tokens");
    }
    Figures f = merge(obs);
    check_non_negative(f.running,
                       "running sequences (the benchmark's concurrency, or tokens/s × TPOT)",
                       kMaxSequences);
    return f;
}

// The observed lengths, within what the engine accepts; the scenario's when longer.
Workload observed_lengths(const Workload& w, const Figures& f, const EngineSettings& eng,
                          Diagnosis& out) {
    Workload wp = w;
    if (f.input_tokens && *f.input_tokens >= 1) {
        wp.input_tokens = static_cast<int>(std::lround(*f.input_tokens));
    }
    if (f.output_tokens && *f.output_tokens >= 1) {
        wp.output_tokens = static_cast<int>(std::lround(*f.output_tokens));
    }
    if (wp.input_tokens + wp.output_tokens > eng.max_model_len) {
        out.notes.push_back(gpuplan::checked_format(
            "observed requests average {} + {} tokens, more than max_model_len {}; the "
            "scenario's lengths {} + {} are used",
            wp.input_tokens, wp.output_tokens, eng.max_model_len, w.input_tokens, w.output_tokens));
        wp.input_tokens = w.input_tokens;
        wp.output_tokens = w.output_tokens;
    }
    out.input_tokens = wp.input_tokens;
    out.output_tokens = wp.output_tokens;
    return wp;
}

// The load: the observed running sequences as a closed loop; without them, the scenario's
// own operating point (a closed loop, or an offered rate by Little's law). Sets the prediction,
// the running count and the demand of `out`, and leaves `wp` at the running load.
void predict_at_observed_load(const Deployment& d, const EfficiencyProfile& profile,
                              const Figures& f, int waiting, Workload& wp, Diagnosis& out) {
    if (f.running) {
        set_closed_loop(wp, std::max(1, static_cast<int>(std::lround(*f.running))));
    }
    out.predicted = find_bottleneck(d, wp, profile);
    const int running = std::max(1, out.predicted.estimate.operating_point.concurrency);
    if (!f.running) {
        out.notes.push_back(gpuplan::checked_format(
            "no observed running count (vllm:num_requests_running or the benchmark's "
            "max_concurrency); the scenario's load is used: {}",
            out.predicted.estimate.operating_point.why));
        set_closed_loop(wp, running);
    }
    out.running = running;
    out.demand = running + waiting;
}

// Observed beside predicted.
void add_observed_comparisons(const Observations& obs, const Figures& f, const ServingEstimate& e,
                              Diagnosis& out) {
    const std::string steady =
        gpuplan::checked_format("analytic: the steady state at {} running", out.running);
    const std::string prefill = gpuplan::checked_format(
        "analytic: one prefill beside {} running, without queueing", out.running);
    if (f.tpot_s)
        out.comparisons.push_back(
            {"TPOT", "ms", *f.tpot_s * 1e3, e.tpot.si() * 1e3, f.tpot_source, steady});
    if (f.ttft_s)
        out.comparisons.push_back(
            {"TTFT", "ms", *f.ttft_s * 1e3, e.ttft_loaded.si() * 1e3, f.ttft_source, prefill});
    if (f.throughput)
        out.comparisons.push_back({"output throughput", "tok/s", *f.throughput, e.throughput,
                                   f.throughput_source, steady});
    // Percentiles from the histograms: the analytic model has one value per figure (the steady
    // state of equal requests), so each is set beside it; the spread is what the model leaves out.
    if (const auto& m = obs.metrics) {
        const auto add = [&](const char* figure, const std::optional<double>& v, double pred,
                             const std::string& basis) {
            if (v)
                out.comparisons.push_back(
                    {figure, "ms", *v * 1e3, pred * 1e3, "metrics buckets", basis});
        };
        add("TTFT P50", m->ttft_p50_s, e.ttft_loaded.si(), prefill);
        add("TTFT P90", m->ttft_p90_s, e.ttft_loaded.si(), prefill);
        add("TTFT P99", m->ttft_p99_s, e.ttft_loaded.si(), prefill);
        add("ITL P50", m->itl_p50_s, e.tpot.si(), steady);
        add("ITL P90", m->itl_p90_s, e.tpot.si(), steady);
        add("ITL P99", m->itl_p99_s, e.tpot.si(), steady);
    }
}

// The start-up log beside the model's KV pool; returns the log's KV pool in tokens.
std::optional<double> add_startup_comparisons(const Observations& obs, const EngineSettings& eng,
                                              const ServingEstimate& e, Diagnosis& out) {
    std::optional<double> observed_kv_tokens;
    if (const auto& st = obs.startup) {
        if (st->kv_tokens) {
            observed_kv_tokens = static_cast<double>(*st->kv_tokens);
        } else if (st->gpu_blocks) {
            observed_kv_tokens = static_cast<double>(*st->gpu_blocks) * eng.block_size;
        }
        if (!st->engine.empty() && st->engine != to_string(eng.kind)) {
            out.notes.push_back(
                gpuplan::checked_format("the start-up log is {}'s but the scenario models {}: "
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
    return observed_kv_tokens;
}

// The SM clock as a share of its maximum, at most 1, when the telemetry has both.
std::optional<double> observed_clock_ratio(const Observations& obs) {
    std::optional<double> clock_ratio;
    if (obs.gpu && obs.gpu->sm_clock_mhz && obs.gpu->max_sm_clock_mhz &&
        *obs.gpu->max_sm_clock_mhz > 0) {
        clock_ratio = std::min(1.0, *obs.gpu->sm_clock_mhz / *obs.gpu->max_sm_clock_mhz);
    }
    return clock_ratio;
}

// Rows by severity, each row's fixes by layer, and notes on what was not observed.
void finish(const Observations& obs, Diagnosis& out) {
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
    const Figures f = checked_figures(obs);
    Diagnosis out;
    const EngineSettings eng = resolve_engine(d);
    Workload wp = observed_lengths(w, f, eng, out);
    const int waiting = f.waiting ? static_cast<int>(std::lround(*f.waiting)) : 0;
    predict_at_observed_load(d, profile, f, waiting, wp, out);
    const ServingEstimate& e = out.predicted.estimate;
    Workload wdemand = wp;
    set_closed_loop(wdemand, std::max(1, out.demand));
    ServingEstimate at_demand = e;
    if (out.demand != out.running) {
        at_demand = estimate_serving(d, wdemand, profile);
    }
    out.capacity = deployment_capacity(e.memory, wp, d.par.dp);
    add_observed_comparisons(obs, f, e, out);
    const std::optional<double> observed_kv_tokens = add_startup_comparisons(obs, eng, e, out);
    for (Comparison& c : out.comparisons) {
        if (c.basis.empty()) {
            c.basis = c.source == "start-up log"
                          ? "analytic: the engine's start-up memory arithmetic"
                          : gpuplan::checked_format("analytic: the steady state at {} running",
                                                    out.running);
        }
    }
    const std::optional<double> clock_ratio = observed_clock_ratio(obs);
    const detail::ServingFacts facts{
        .d = d,
        .eng = eng,
        .profile = profile,
        .obs = obs,
        .th = th,
        .f = f,
        .wp = wp,
        .wdemand = wdemand,
        .e = e,
        .at_demand = at_demand,
        .running = out.running,
        .waiting = waiting,
        .capacity = out.capacity,
        .clock_ratio = clock_ratio,
        .observed_kv_tokens = observed_kv_tokens,
        .busy = obs.gpu && obs.gpu->utilization_gpu && *obs.gpu->utilization_gpu >= th.busy_gpu,
        .throttled = clock_ratio && *clock_ratio < th.clock_ratio,
        .kv_full = f.kv_usage && *f.kv_usage >= th.kv_full &&
                   ((f.waiting && *f.waiting > 0) || (f.preemptions && *f.preemptions > 0)),
        .queue_dominates =
            f.queue_s && f.ttft_s && *f.ttft_s > 0 && *f.queue_s > th.queue_share * *f.ttft_s,
    };
    detail::add_serving_rows(facts, out);
    finish(obs, out);
    return out;
}

std::vector<TroubleshootingRow> troubleshooting_table(const DiagnosisThresholds& th) {
    return {
        {{"kv-cache-full"},
         gpuplan::checked_format("KV cache use at or above {} and requests waiting or preempted",
                                 format_percent(th.kv_full))},
        {{"queueing"},
         gpuplan::checked_format(
             "requests waiting, the KV cache not full, and queue time above {} of TTFT",
             format_percent(th.queue_share))},
        {{"low-batch"},
         gpuplan::checked_format(
             "nothing waiting and fewer running than {} of what the deployment runs at "
             "once",
             format_percent(th.low_batch_share))},
        {{"decode-slow"},
         gpuplan::checked_format("TPOT above {:g}× the prediction at the observed batch",
                                 th.slow_factor)},
        {{"power-capped", "thermal-throttled", "clock-throttled"},
         gpuplan::checked_format(
             "SM clock below {} of its maximum (the reason from the throttle reasons or "
             "the power draw)",
             format_percent(th.clock_ratio))},
        {{"kv-size-mismatch"},
         gpuplan::checked_format(
             "the start-up log's KV cache size differs from the model's by more than the "
             "larger of {} and the profile's P90 error band",
             format_percent(th.kv_size_band))},
        {{"prefill-slow"},
         gpuplan::checked_format(
             "TTFT above {:g}× the prediction and more than {:g} ms above it, nothing "
             "waiting, not explained by a slow decode",
             th.prefill_factor, th.prefill_min_gap_s * 1e3)},
        {{"spec-low-acceptance"},
         gpuplan::checked_format(
             "speculative decoding: draft acceptance below {} of the scenario's",
             format_percent(th.spec_acceptance_share))},
        {{"step-underfilled"},
         gpuplan::checked_format(
             "mean tokens per engine step below {} of max_num_batched_tokens while "
             "requests wait and the KV cache is not full",
             format_percent(th.step_fill))},
        {{"comm-bound"},
         gpuplan::checked_format(
             "training: step time above {:g}× the compute floor, MFU below {}, and "
             "communication plus pipeline bubble at least {} of the predicted step",
             th.train_floor_factor, format_percent(th.train_low_mfu),
             format_percent(th.train_comm_share))},
        {{"input-stall"},
         gpuplan::checked_format(
             "training: step time more than {} above the GPUs' own prediction, with the "
             "GPUs idle or the data loader short",
             format_percent(th.train_input_gap))},
        {{"training-memory"},
         gpuplan::checked_format(
             "training: an out-of-memory line, max reserved at or above {} of the GPU's "
             "memory, or a layout the model says does not fit",
             format_percent(th.train_memory_share))},
        {{"stragglers"},
         gpuplan::checked_format(
             "training: step times vary by more than {} (coefficient of variation) or "
             "the slowest step is above {:g}× the mean",
             format_percent(th.train_step_cv), th.train_straggler_max)},
        {{"rack-budget-exceeded"},
         "observed GPU power of the nodes sharing a rack, at the wall, above the rack budget"},
    };
}

} // namespace gpuplan::model
