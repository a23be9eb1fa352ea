#include "sim/detail/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::sim::detail {
namespace {

enum Field {
    kArrivals,
    kCompletions,
    kRunning,
    kWaiting,
    kKv,
    kInTok,
    kOutTok,
    kFinished,
    kSloMet,
    kAvailable
};

std::size_t batch_bucket(int n) {
    std::size_t b = 0;
    while (n > 1) {
        n >>= 1;
        ++b;
    }
    return b;
}

} // namespace

Metrics::Metrics(std::vector<ClassSlo> slos, int replicas, bool keep_requests, bool keep_steps,
                 std::size_t max_steps)
    : slos_(std::move(slos)), classes_(slos_.size()), replicas_(static_cast<std::size_t>(replicas)),
      keep_requests_(keep_requests), keep_steps_(keep_steps), max_steps_(max_steps) {}

void Metrics::cover(Tick t) {
    // Adaptive resolution: the bins hold sums (counts, level × seconds, joules), so two
    // neighbours merge into one bin of twice the width without losing anything but resolution.
    while (t / bin_ >= static_cast<Tick>(kMaxBins)) {
        for (auto& v : bins_) {
            for (std::size_t i = 0; 2 * i < v.size(); ++i) {
                v[i] = v[2 * i] + (2 * i + 1 < v.size() ? v[2 * i + 1] : 0.0);
            }
            v.resize((v.size() + 1) / 2);
        }
        bin_ *= 2;
        if (power_) {
            power_->coarsen();
        }
    }
}

void Metrics::add_span(Tick a, Tick b, double value, int field) {
    if (b <= a || value == 0) {
        return;
    }
    cover(b - 1);
    auto& v = bins_[field];
    const auto first = static_cast<std::size_t>(a / bin_);
    const auto last = static_cast<std::size_t>((b - 1) / bin_);
    if (v.size() <= last) {
        v.resize(last + 1, 0.0);
    }
    for (std::size_t i = first; i <= last; ++i) {
        const Tick lo = std::max<Tick>(a, static_cast<Tick>(i) * bin_);
        const Tick hi = std::min<Tick>(b, static_cast<Tick>(i + 1) * bin_);
        v[i] += value * tick_s(hi - lo);
    }
}

void Metrics::bin_count(Tick t, int field, double value) {
    cover(t);
    auto& v = bins_[field];
    const auto i = static_cast<std::size_t>(t / bin_);
    if (v.size() <= i) {
        v.resize(i + 1, 0.0);
    }
    v[i] += value;
}

void Metrics::integrate(Level& l, Tick now, double new_level, int field) {
    if (now > l.since) {
        l.integral += l.level * tick_s(now - l.since);
        if (field >= 0) {
            add_span(l.since, now, l.level, field);
        }
    }
    l.since = std::max(l.since, now);
    l.level = new_level;
}

void Metrics::in_system(Tick now, int delta) {
    integrate(in_system_, now, in_system_.level + delta, -1);
}

void Metrics::queued(Tick now, int delta) {
    integrate(queued_, now, queued_.level + delta, kWaiting);
}

void Metrics::arrival(Tick now) {
    in_system(now, 0); // the integral up to now
    const AtArrival here{in_system_.level, in_system_.integral};
    if (first_arrival_ < 0) {
        first_arrival_ = now;
        at_first_arrival_ = here;
    }
    last_arrival_ = now;
    at_last_arrival_ = here;
    ++arrivals_;
    bin_count(now, kArrivals, 1);
}

void Metrics::finished(Tick now, const Request& r, Outcome outcome) {
    last_finish_ = std::max(last_finish_, now);
    auto& c = classes_[static_cast<std::size_t>(r.cls)];
    const ClassSlo& slo = slos_[static_cast<std::size_t>(r.cls)];
    RequestSummary& s = c.s;
    ++s.arrived;
    RequestRecord rec; // filled for the latencies even when not kept
    rec.id = r.id;
    rec.request_class = r.cls;
    if (r.session != kNoSession) {
        rec.session = static_cast<std::int64_t>(r.session);
    }
    rec.step = r.step;
    if (outcome != Outcome::Cloud && r.replica >= 0) {
        rec.replica = r.replica;
    }
    rec.input_tokens = r.prompt;
    rec.output_tokens = r.generated;
    rec.cached_tokens = r.cached_tokens;
    rec.preemptions = r.preemptions;
    rec.retries = r.retries;
    rec.outcome = outcome;
    rec.arrival = to_seconds(r.arrival);
    if (r.first_scheduled >= 0) {
        rec.queue = to_seconds(r.first_scheduled - r.arrival);
    }
    if (r.started && outcome != Outcome::Cloud && r.replica >= 0 &&
        static_cast<std::size_t>(r.replica) < replicas_.size()) {
        // Its replica's share of the prefix lookups (first admission: the prompt, no output).
        auto& rep = replicas_[static_cast<std::size_t>(r.replica)];
        rep.prefix_queried += r.prompt;
        rep.prefix_hit += r.cached_tokens;
        if (features_.prefix) {
            features_.prefix(
                PrefixHitRecord{r.replica, to_seconds(now), rep.prefix_hit, rep.prefix_queried});
        }
    }
    switch (outcome) {
    case Outcome::Completed:
    case Outcome::Cloud: {
        ++s.completed;
        if (outcome == Outcome::Cloud) {
            ++s.cloud;
        }
        s.input_tokens += r.prompt;
        s.output_tokens += r.generated;

        s.cached_tokens += r.cached_tokens;
        const Tick ttft = r.first_token - r.arrival;
        const Tick e2e = now - r.arrival;
        rec.ttft = to_seconds(ttft);
        rec.e2e = to_seconds(e2e);
        c.ttft.add(rec.ttft->si());
        c.e2e.add(rec.e2e->si());
        bool met = (!slo.ttft || ttft <= *slo.ttft) && (!slo.e2e || e2e <= *slo.e2e);
        if (r.generated > 1) {
            // vLLM bench: TPOT = (E2E − TTFT) / (output − 1); outputs of one token count as 0.
            const double tpot_ticks = static_cast<double>(e2e - ttft) / (r.generated - 1);
            rec.tpot = Seconds(tpot_ticks / static_cast<double>(kTicksPerSecond));
            c.tpot.add(rec.tpot->si());
            met = met && (!slo.tpot || tpot_ticks <= static_cast<double>(*slo.tpot));
        }
        if (rec.queue) {
            c.queue.add(rec.queue->si());
        }
        rec.slo_met = met;
        s.slo_met += met ? 1 : 0;

        bin_count(now, kCompletions, 1);
        if (met) {
            bin_count(now, kSloMet, 1);
        }
        break;
    }
    case Outcome::Rejected:
        ++s.rejected;
        s.rejected_by_reason.add(r.rejected_because);
        break;
    case Outcome::TimedOut: ++s.timed_out; break;
    case Outcome::Cancelled: ++s.cancelled; break;
    }
    bin_count(now, kFinished, 1);
    if (on_request_) {
        on_request_(rec);
    }
    if (keep_requests_) {
        records_.push_back(rec);
    }
}

void Metrics::itl(int cls, Tick gap, std::int64_t count) {
    // Steps of a steady batch repeat one gap; the sketch merges runs of equal values.
    classes_[static_cast<std::size_t>(cls)].itl.add(tick_s(gap), count);
}

void Metrics::step(const StepSample& s) {
    const Tick d = s.end - s.start;
    auto& rep = replicas_[static_cast<std::size_t>(s.replica)];
    rep.busy += d;
    ++rep.steps;
    rep.blocks = s.total_blocks;
    const double kv = s.total_blocks > 0
                          ? static_cast<double>(s.used_blocks) / static_cast<double>(s.total_blocks)
                          : 0;
    rep.kv_integral += kv * tick_s(d);
    rep.kv_max = std::max(rep.kv_max, kv);
    add_span(s.start, s.end, kv, kKv);
    add_span(s.start, s.end, s.running, kRunning);
    running_integral_ += s.running * tick_s(d);
    ++steps_;
    batch_sum_ += s.sequences;
    const std::size_t b = batch_bucket(std::max(1, s.sequences));
    if (batch_hist_.size() <= b) {
        batch_hist_.resize(b + 1, 0);
    }
    ++batch_hist_[b];
    if (s.prefills > 0 && s.decodes > 0) {
        mixed_time_ += d;
    } else if (s.prefills > 0) {
        prefill_time_ += d;
    } else {
        decode_time_ += d;
    }
    double power = 0;
    if (power_) {
        power = power_->step(s.replica, s.start, s.compute_end, s.end, s.cost, s.clock);
    }
    if ((keep_steps_ && step_log_.size() < max_steps_) || on_step_) {
        const StepRecord rec{
            s.replica, to_seconds(s.start), to_seconds(d), s.prefills,   s.prefill_tokens,
            s.decodes, s.preempted,         s.clock,       Watts(power), s.running,
            kv,        Seconds(s.draft_s)};
        if (on_step_) {
            on_step_(rec);
        }
        if (keep_steps_ && step_log_.size() < max_steps_) {
            step_log_.push_back(rec);
        }
    }
}

void Metrics::hold(int replica, Tick from, Tick to, int running, std::int64_t used_blocks,
                   std::int64_t total_blocks) {
    const Tick d = to - from;
    auto& rep = replicas_[static_cast<std::size_t>(replica)];
    const double kv =
        total_blocks > 0 ? static_cast<double>(used_blocks) / static_cast<double>(total_blocks) : 0;
    rep.kv_integral += kv * tick_s(d);
    rep.kv_max = std::max(rep.kv_max, kv);
    add_span(from, to, kv, kKv);
    add_span(from, to, running, kRunning);
    running_integral_ += running * tick_s(d);
}

void Metrics::tokens(Tick now, std::int64_t prefill_tokens, std::int64_t output_tokens) {
    prefill_tokens_ += prefill_tokens;
    if (prefill_tokens > 0) {
        bin_count(now, kInTok, static_cast<double>(prefill_tokens));
    }
    if (output_tokens > 0) {
        bin_count(now, kOutTok, static_cast<double>(output_tokens));
    }
}

void Metrics::prefix_lookup(std::int64_t queried, std::int64_t hit) {
    lookup_queried_ += queried;
    lookup_hit_ += hit;
}

void Metrics::speculative_step(int replica, Tick now) {
    if (features_.speculative && step_verifies_ > 0) {
        features_.speculative(SpeculativeStepRecord{replica, to_seconds(now), step_verifies_,
                                                    step_drafted_, step_accepted_});
    }
    step_verifies_ = step_drafted_ = step_accepted_ = 0;
}

void Metrics::kv_transfer(std::uint64_t request, int replica, Tick ready, Tick link_start,
                          Tick arrival, Seconds transfer, double bytes) const {
    if (features_.kv_transfer) {
        features_.kv_transfer(KvTransferRecord{request, replica, to_seconds(ready),
                                               to_seconds(link_start), to_seconds(arrival),
                                               transfer, bytes});
    }
}

void Metrics::preemption(int replica) {
    ++preemptions_;
    ++replicas_[static_cast<std::size_t>(replica)].preemptions;
}

void Metrics::replica_up(int replica, Tick at) {
    if (static_cast<std::size_t>(replica) >= replicas_.size()) {
        replicas_.resize(static_cast<std::size_t>(replica) + 1);
    }
    replicas_[static_cast<std::size_t>(replica)].up = at;
    if (power_) {
        power_->replica_up(replica, at);
    }
}

void Metrics::enable_power(PowerSetup setup) {
    power_.emplace(std::move(setup));
}

void Metrics::routed(int replica) {
    ++replicas_[static_cast<std::size_t>(replica)].requests;
}

void Metrics::outstanding(int replica, Tick now, int delta) {
    auto& rep = replicas_[static_cast<std::size_t>(replica)];
    rep.outstanding_integral += rep.outstanding * tick_s(now - rep.outstanding_since);
    rep.outstanding_since = now;
    rep.outstanding += delta;
}

void Metrics::cloud_cost(double amount, const std::string& currency) {
    cloud_spend_ += amount;
    cloud_currency_ = currency;
}

void Metrics::available(Tick from, Tick to) {
    add_span(from, to, 1.0, kAvailable);
}

void Metrics::served_rates(const RequestSummary& all, SimResult& out) const {
    const Tick start = std::max<Tick>(first_arrival_, 0);
    const double window = first_arrival_ < 0 ? 0.0 : tick_s(last_arrival_ - start);
    out.arrival_window = Seconds(window);
    const double run = out.duration.si();
    out.drain_share = run > 0 ? std::clamp((run - window) / run, 0.0, 1.0) : 0.0;
    out.served_rps = all.throughput_rps;
    out.served_goodput_rps = all.goodput_rps;
    out.served_output_tok_s = out.output_tok_s;
    // A window no longer than a request's latency (an offline batch) has no steady state: the
    // run-long figures stand.
    if (!(window > all.e2e.mean.si()) || all.completed == 0) {
        return;
    }
    // Over the window, served = arrivals − growth of the requests in the system. The growth is
    // read from the count's rise above its mean over the window: twice it for a count growing
    // linearly (an overloaded run: the served rate is then the capacity), about nothing for a
    // stable one (served = offered), where the count at the last arrival merely fluctuates
    // around its mean. The window's start counts the one request in the system then.
    const double offered = static_cast<double>(arrivals_ - 1) / window;
    const double mean_in_system = (at_last_arrival_.integral - at_first_arrival_.integral) / window;
    const double rise = std::max(0.0, at_last_arrival_.in_system - mean_in_system);
    // Of the requests leaving, only the completed ones were served (rejected and timed-out
    // ones leave too).
    const double completed = static_cast<double>(all.completed);
    const double share = completed / static_cast<double>(std::max<std::int64_t>(1, all.arrived));
    const double run_long = all.throughput_rps;
    out.served_rps =
        std::clamp((offered - 2.0 * rise / window) * share, std::min(run_long, offered), offered);
    out.served_goodput_rps = out.served_rps * static_cast<double>(all.slo_met) / completed;
    out.served_output_tok_s = out.served_rps * static_cast<double>(all.output_tokens) / completed;
}

void Metrics::finish(Tick end, SimResult& out) {
    in_system(end, 0);
    queued(end, 0);
    const Tick start = std::max<Tick>(first_arrival_, 0);
    const Tick span = std::max<Tick>(last_finish_ - start, 1);
    const double duration = tick_s(span);
    out.duration = Seconds(first_arrival_ < 0 ? 0.0 : duration);
    const auto summarize = [&](Samples& c) {
        RequestSummary& s = c.s;
        s.slo_attainment =
            s.arrived > 0 ? static_cast<double>(s.slo_met) / static_cast<double>(s.arrived) : 0;
        s.goodput_rps = static_cast<double>(s.slo_met) / duration;
        s.throughput_rps = static_cast<double>(s.completed) / duration;
        s.ttft = c.ttft.stats();
        s.tpot = c.tpot.stats();
        s.e2e = c.e2e.stats();
        s.queue = c.queue.stats();
        s.itl = c.itl.stats();
    };
    // The overall samples first, merged in class order from the classes' samples as they came
    // (exact while they fit QuantileSketch's limit), then each class's; stats() sorts in place.
    Samples all;
    for (std::size_t i = 0; i < classes_.size(); ++i) {
        Samples& c = classes_[i];
        if (classes_.size() > 1) {
            all.ttft.merge(c.ttft);
            all.tpot.merge(c.tpot);
            all.e2e.merge(c.e2e);
            all.queue.merge(c.queue);
            all.itl.merge(c.itl);
        }
    }
    for (std::size_t i = 0; i < classes_.size(); ++i) {
        Samples& c = classes_[i];
        summarize(c);
        out.classes[i].summary = c.s;
        const RequestSummary& s = c.s;
        RequestSummary& a = all.s;
        a.arrived += s.arrived;
        a.completed += s.completed;
        a.cloud += s.cloud;
        a.rejected += s.rejected;
        a.rejected_by_reason += s.rejected_by_reason;
        a.timed_out += s.timed_out;
        a.cancelled += s.cancelled;
        a.slo_met += s.slo_met;
        a.input_tokens += s.input_tokens;
        a.output_tokens += s.output_tokens;
        a.cached_tokens += s.cached_tokens;
    }
    if (classes_.size() == 1) {
        // One class: the overall summary is the class's (no copy of the samples).
        all.s = classes_.front().s;
    } else {
        summarize(all);
    }
    out.overall = all.s;
    out.input_tok_s = static_cast<double>(all.s.input_tokens) / duration;
    out.output_tok_s = static_cast<double>(all.s.output_tokens) / duration;
    out.total_tok_s = out.input_tok_s + out.output_tok_s;
    out.preemptions = preemptions_;
    out.prefill_tokens_computed = prefill_tokens_;
    out.prefix_hit_rate = lookup_queried_ > 0 ? static_cast<double>(lookup_hit_) /
                                                    static_cast<double>(lookup_queried_)
                                              : 0;
    out.mean_in_system = in_system_.integral / duration;
    out.mean_running = running_integral_ / duration;
    out.steps = steps_;
    out.batch_size_mean = steps_ > 0 ? batch_sum_ / static_cast<double>(steps_) : 0;
    out.batch_size_histogram = batch_hist_;
    const double busy = tick_s(prefill_time_ + decode_time_ + mixed_time_);
    if (busy > 0) {
        out.prefill_time_share = tick_s(prefill_time_) / busy;
        out.decode_time_share = tick_s(decode_time_) / busy;
        out.mixed_time_share = tick_s(mixed_time_) / busy;
    }
    out.cloud_spend = model::Money{cloud_spend_, cloud_currency_};
    double kv_sum = 0;
    out.replicas.clear();
    for (const auto& r : replicas_) {
        ReplicaResult rr;
        rr.available = to_seconds(r.up);
        const double up_time = tick_s(std::max<Tick>(end - r.up, 1));
        rr.busy_fraction = tick_s(r.busy) / up_time;
        rr.steps = r.steps;
        rr.requests = r.requests;
        rr.preemptions = r.preemptions;
        rr.kv_blocks = r.blocks;
        rr.kv_use_mean = r.kv_integral / up_time;
        rr.kv_use_max = r.kv_max;
        kv_sum += rr.kv_use_mean;
        out.kv_use_max = std::max(out.kv_use_max, rr.kv_use_max);
        out.replicas.push_back(rr);
    }
    out.kv_use_mean = out.replicas.empty() ? 0 : kv_sum / static_cast<double>(out.replicas.size());
    // Load balance: the most loaded replica over the mean (1: even), by requests routed and by
    // time-averaged outstanding requests over [0, end].
    double req_sum = 0, req_max = 0, out_sum = 0, out_max = 0;
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
        auto& acc = replicas_[i];
        ReplicaResult& rr = out.replicas[i];
        acc.outstanding_integral += acc.outstanding * tick_s(end - acc.outstanding_since);
        acc.outstanding_since = end;
        rr.outstanding_mean = end > 0 ? acc.outstanding_integral / tick_s(end) : 0;
        rr.prefix_queried_tokens = acc.prefix_queried;
        rr.prefix_hit_tokens = acc.prefix_hit;
        rr.prefix_hit_rate = acc.prefix_queried > 0 ? static_cast<double>(acc.prefix_hit) /
                                                          static_cast<double>(acc.prefix_queried)
                                                    : 0;
        req_sum += static_cast<double>(rr.requests);
        req_max = std::max(req_max, static_cast<double>(rr.requests));
        out_sum += rr.outstanding_mean;
        out_max = std::max(out_max, rr.outstanding_mean);
    }
    const auto n_reps = static_cast<double>(replicas_.size());
    out.request_imbalance = req_sum > 0 ? req_max / (req_sum / n_reps) : 0;
    out.outstanding_imbalance = out_sum > 0 ? out_max / (out_sum / n_reps) : 0;
    // Bins of bin_ (1 s unless the span needed more than kMaxBins) from 0 to the end.
    if (end > 0) {
        cover(end - 1);
    }
    const double width = tick_s(bin_);
    out.series_bin = Seconds(width);
    const auto nbins = static_cast<std::size_t>((std::max<Tick>(end, 0) + bin_ - 1) / bin_);
    out.series.assign(nbins, TimeBin{});
    const auto get = [&](int f, std::size_t i) { return i < bins_[f].size() ? bins_[f][i] : 0.0; };
    const double reps = std::max<double>(1, static_cast<double>(replicas_.size()));
    for (std::size_t i = 0; i < nbins; ++i) {
        TimeBin& b = out.series[i];
        b.t = Seconds(static_cast<double>(i) * width);
        b.arrivals = static_cast<std::int64_t>(get(kArrivals, i));
        b.completions = static_cast<std::int64_t>(get(kCompletions, i));
        b.running = get(kRunning, i) / width;
        b.waiting = get(kWaiting, i) / width;
        b.kv_use = get(kKv, i) / width / reps;
        b.input_tok_s = get(kInTok, i) / width;
        b.output_tok_s = get(kOutTok, i) / width;
    }
    // SLO windows: k whole bins each, at least 60 s, at most kMaxSloWindows of them.
    {
        const Tick minute = 60 * kTicksPerSecond;
        std::size_t k = static_cast<std::size_t>((minute + bin_ - 1) / bin_);
        k = std::max(k, (nbins + SimResult::kMaxSloWindows - 1) / SimResult::kMaxSloWindows);
        k = std::max<std::size_t>(k, 1);
        out.slo_window = Seconds(width * static_cast<double>(k));
        const std::size_t nwin = (nbins + k - 1) / k;
        out.slo_windows.assign(nwin, SloWindow{});
        for (std::size_t w = 0; w < nwin; ++w) {
            SloWindow& sw = out.slo_windows[w];
            sw.t = Seconds(static_cast<double>(w * k) * width);
            double finished = 0, met = 0, up = 0;
            for (std::size_t i = w * k; i < std::min(nbins, (w + 1) * k); ++i) {
                finished += get(kFinished, i);
                met += get(kSloMet, i);
                up += get(kAvailable, i);
            }
            sw.finished = static_cast<std::int64_t>(finished);
            sw.slo_met = static_cast<std::int64_t>(met);
            if (sw.finished > 0) {
                sw.attainment = met / finished;
            }
            if (availability_) {
                const double lo = sw.t.si();
                const double hi = std::min(tick_s(end), lo + out.slo_window.si());
                sw.availability = hi > lo ? std::min(1.0, up / (hi - lo)) : 1.0;
            }
        }
    }
    served_rates(all.s, out);
    if (power_) {
        power_->finish(end, all.s.output_tokens, all.s.completed, out);
    }
    out.requests = std::move(records_);
    out.step_log = std::move(step_log_);
}

} // namespace gpuplan::sim::detail
