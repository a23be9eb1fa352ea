#include "model/slo_capacity.hpp"

#include "model/lora.hpp"
#include "model/operating_point.hpp"
#include "model/speculative.hpp"
#include "model/step_cost.hpp"
#include "model/workload_mix.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuplan::model {

const char* to_string(SloBound b) {
    switch (b) {
    case SloBound::Throughput: return "throughput";
    case SloBound::TpotBatch: return "tpot_batch";
    case SloBound::TpotPrefill: return "tpot_prefill";
    case SloBound::TtftPrefill: return "ttft_prefill";
    case SloBound::TtftQueueing: return "ttft_queueing";
    case SloBound::E2e: return "e2e";
    }
    return "throughput";
}

double normal_quantile(double p) {
    p = std::clamp(p, 1e-12, 1.0 - 1e-12);
    // Φ(z) = erfc(−z / √2) / 2 is increasing: bisect.
    double lo = -10.0;
    double hi = 10.0;
    for (int i = 0; i < 100; ++i) {
        const double mid = 0.5 * (lo + hi);
        (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

Seconds tpot_percentile(const ChunkInterference& c, int output_tokens, double percentile,
                        Seconds per_sequence) {
    const int n = output_tokens - 1;
    const double f = std::clamp(c.share, 0.0, 1.0);
    const Seconds mean = c.decode_step + c.extra * f;
    if (n < 1 || c.every_step || f <= 0.0 || f >= 1.0 || !(mean.si() > 0)) {
        return mean;
    }
    // The prompts arriving during the request's decode life (P = n f ÷ s of them, s chunk steps
    // each) and the sequences it shares the steps with are both counts of one Poisson arrival
    // stream: X = a A + β B̄, with a = s × extra ÷ n per prompt and β per running sequence, has
    // Var(A) = P, Var(B̄) = 2P/3, Cov = P/2 (before feedback). Every chunk lengthens the life, in
    // which more prompts arrive (a branching process of mean m = f × extra ÷ mean TPOT per
    // prompt), so the spread grows by 1 / (1 − m).
    const double s = std::max(1, c.chunk_steps);
    const double prompts = n * f / s;
    const double a = s * c.extra.si() / n;
    const double b = std::max(0.0, per_sequence.si());
    const double m = (c.extra * f).si() / mean.si();
    const double sd = std::sqrt(prompts * (a * a + 2.0 / 3.0 * b * b + a * b)) / (1.0 - m);
    const double z = normal_quantile(percentile / 100.0);
    const double value = mean.si() + z * sd;
    return Seconds(std::clamp(value, c.decode_step.si(), (c.decode_step + c.extra).si()));
}

Seconds queue_wait_percentile(double rate, double capacity_rate, int servers, double percentile,
                              double variability) {
    if (!(rate > 0)) {
        return Seconds(0);
    }
    if (!(rate < capacity_rate)) {
        return Seconds(std::numeric_limits<double>::infinity());
    }
    const int c = std::max(1, servers);
    const double rho = rate / capacity_rate;
    const double a = rho * c; // offered load in servers
    // Erlang B by its recursion B(k) = a B(k−1) / (k + a B(k−1)), then Erlang C = B / (1 − ρ (1 −
    // B)).
    double b = 1.0;
    for (int k = 1; k <= c; ++k) {
        b = a * b / (k + a * b);
    }
    const double wait_probability = b / (1.0 - rho * (1.0 - b));
    const double tail = 1.0 - percentile / 100.0;
    if (wait_probability <= tail || tail <= 0) {
        return Seconds(0);
    }
    return Seconds(variability / (capacity_rate - rate) * std::log(wait_probability / tail));
}

namespace {

int average_context(const Workload& w) {
    return w.input_tokens + w.output_tokens / 2;
}

/// The request the analytic model serves, as an open loop (a trace or closed loop becomes
/// Poisson; set_offered_rate keeps a trace's times, which this question replaces).
Workload open_request(const Workload& w, double rate) {
    Workload a = analytic_request(w);
    if (a.arrival.kind == ArrivalKind::Trace || a.arrival.kind == ArrivalKind::ClosedLoop) {
        a.arrival = ArrivalProcess{};
    }
    set_offered_rate(a, rate);
    return a;
}

int cached_of(const Workload& w, int cached_prefix) {
    const auto mix = mean_request(w);
    return std::max(cached_prefix, mix ? mix->cached_prefix : 0);
}

/// Allen–Cunneen's (c_a² + c_s²) / 2: the arrival process's squared coefficient of variation
/// (Poisson 1, gamma cv², evenly spaced 0), service of one length (c_s² = 0).
double variability(const ArrivalProcess& a) {
    switch (a.kind) {
    case ArrivalKind::Gamma: return a.cv * a.cv / 2.0;
    case ArrivalKind::Constant: return 0.0;
    default: return 0.5;
    }
}

/// How much the decode-only step at the running batch grows per running sequence of the replica
/// (one more sequence in the micro-batch, spread over its pp micro-batches).
Seconds step_growth_per_sequence(const StepCostModel& m, const Workload& w, int running) {
    const int ctx = average_context(w);
    const int mb = (std::max(1, running) + m.pp() - 1) / m.pp();
    return (tpot(m, mb + 1, ctx) - tpot(m, mb, ctx)) / m.pp();
}

bool over(const std::optional<Seconds>& target, Seconds value) {
    return target && !(value <= *target);
}

} // namespace

int tpot_batch_limit(const StepCostModel& m, const Workload& w, Seconds limit, int most) {
    const int ctx = average_context(w);
    const auto meets = [&](int b) { return tpot(m, (b + m.pp() - 1) / m.pp(), ctx) <= limit; };
    if (most < 1 || !meets(1)) {
        return 0;
    }
    int lo = 1;
    int hi = most + 1; // lo meets, hi misses or lies beyond `most`
    if (meets(most)) {
        return most;
    }
    hi = most;
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        (meets(mid) ? lo : hi) = mid;
    }
    return lo;
}

SloFigures slo_figures_at(const Deployment& d, const Workload& w, const Slo& slo,
                          const EfficiencyProfile& profile, double rate, int cached_prefix) {
    const Workload a = open_request(w, rate);
    const int cached = cached_of(w, cached_prefix);
    const ServingEstimate e = estimate_serving(d, a, profile, cached);
    SloFigures f;
    f.rate = rate;
    f.utilisation = e.operating_point.utilisation;
    f.running = e.running;
    f.prefill = e.ttft_loaded;
    const int dp = d.par.dp;
    const int out = a.output_tokens;
    const StepCostModel m(d, profile);
    std::optional<SpeculativeModel> spec;
    if (d.engine.speculative) {
        spec.emplace(d, *d.engine.speculative, profile);
    }
    f.chunks = chunk_interference(m, a, std::max(1, e.running), cached, spec ? &*spec : nullptr);
    f.tpot = tpot_percentile(f.chunks, out, slo.percentile,
                             spec ? Seconds(0) : step_growth_per_sequence(m, a, e.running));
    double capacity_rate = e.peak_throughput / dp / out;
    int slots = e.peak_concurrency / dp;
    if (d.engine.lora && e.lora) {
        // Multi-LoRA: the batch holds at most max_loras distinct adapters, so fewer sequences
        // run than the KV cache holds (lora_running_limit), each a lifetime of TTFT and decode
        // steps at that batch; and a request waits for its adapter's load at the percentile.
        const int limit = lora_running_limit(*d.engine.lora, slo.percentile, std::max(1, slots));
        const Seconds life =
            e.ttft_loaded + tpot(m, limit, a.input_tokens + out / 2) * std::max(0, out - 1);
        if (limit < slots && life.si() > 0) {
            capacity_rate = std::min(capacity_rate, limit / life.si());
            slots = limit;
        }
        f.prefill =
            f.prefill - e.lora->mean_load_delay + lora_load_delay_at(*e.lora, slo.percentile);
    }
    // Two queues in turn: a slot in the running batch (c sequences), then the prompt's turn for
    // the chunk steps (one prompt at a time, each for its prefill under load: M/D/1). The
    // percentiles are added, an upper bound on the percentile of the sum.
    const double k = variability(a.arrival);
    f.queue_wait = queue_wait_percentile(rate / dp, capacity_rate, slots, slo.percentile, k);
    if (e.ttft_loaded.si() > 0) {
        f.queue_wait +=
            queue_wait_percentile(rate / dp, 1.0 / e.ttft_loaded.si(), 1, slo.percentile, k);
    }
    f.ttft = f.prefill + f.queue_wait;
    f.e2e = f.ttft + f.tpot * std::max(0, out - 1);
    const bool fits = e.memory.fits && e.peak_throughput > 0 && f.utilisation &&
                      *f.utilisation < 1.0 && rate / dp < capacity_rate;
    if (over(slo.ttft, f.ttft)) {
        f.missed = over(slo.ttft, f.prefill) ? SloBound::TtftPrefill : SloBound::TtftQueueing;
    } else if (over(slo.tpot, f.tpot)) {
        f.missed = over(slo.tpot, e.tpot_decode_only) ? SloBound::TpotBatch : SloBound::TpotPrefill;
    } else if (over(slo.e2e, f.e2e)) {
        f.missed = SloBound::E2e;
    }
    f.served = fits && !f.missed;
    return f;
}

SloCapacity slo_capacity(const Deployment& d, const Workload& w, const Slo& slo,
                         const EfficiencyProfile& profile, int cached_prefix) {
    SloCapacity r;
    r.percentile = slo.percentile;
    r.has_targets = slo.ttft || slo.tpot || slo.e2e;
    const Workload a = open_request(w, 1.0);
    const ServingEstimate e = estimate_serving(d, a, profile, cached_of(w, cached_prefix));
    if (!e.memory.fits || !(e.peak_throughput > 0)) {
        return r;
    }
    r.throughput_rate = e.peak_throughput / a.output_tokens;
    if (slo.tpot) {
        const StepCostModel m(d, profile);
        r.tpot_batch = tpot_batch_limit(m, a, *slo.tpot, replica_capacity(e.memory, a));
    }
    const auto at = [&](double rate) {
        return slo_figures_at(d, w, slo, profile, rate, cached_prefix);
    };
    double lo = r.throughput_rate * 1e-6;
    r.at = at(lo);
    if (!r.at.served) {
        r.bound = r.at.missed.value_or(SloBound::Throughput);
        r.at.rate = lo;
        return r;
    }
    double hi = r.throughput_rate; // utilisation 1: never served
    SloFigures miss = at(hi);
    for (int i = 0; i < 80 && hi - lo > 1e-4 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        SloFigures f = at(mid);
        if (f.served) {
            lo = mid;
            r.at = f;
        } else {
            hi = mid;
            miss = f;
        }
    }
    r.rate = lo;
    r.ratio = lo / r.throughput_rate;
    r.output_tok_s = lo * a.output_tokens;
    r.bound = miss.missed.value_or(SloBound::Throughput);
    return r;
}

} // namespace gpuplan::model
