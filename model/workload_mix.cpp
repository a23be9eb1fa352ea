#include "model/workload_mix.hpp"

#include "model/operating_point.hpp"
#include "model/scenario.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::model {

double mean_length(const LengthDistribution& d) {
    double v = d.mean;
    switch (d.kind) {
    case LengthKind::Fixed:
    case LengthKind::Normal:
    case LengthKind::LogNormal: v = d.mean; break;
    case LengthKind::Uniform: v = 0.5 * (d.min + d.max); break;
    case LengthKind::Empirical: {
        double sum = 0;
        double weight = 0;
        for (std::size_t i = 0; i < d.values.size(); ++i) {
            const double w = i < d.weights.size() ? d.weights[i] : 1.0;
            sum += w * d.values[i];
            weight += w;
        }
        v = weight > 0 ? sum / weight : d.mean;
        break;
    }
    }
    return std::clamp(v, static_cast<double>(d.min), static_cast<double>(d.max));
}

namespace {

// A replayed trace's mean request: its rows' own lengths (the trace gives the whole prompt, the
// classes' shared prefix being its first tokens), one request per arrival.
MeanRequest trace_mean(const Workload& w) {
    double in = 0, out = 0;
    for (const TraceRecord& r : w.trace) {
        in += std::max(1, r.input_tokens);
        out += std::max(1, r.output_tokens);
    }
    const double n = static_cast<double>(w.trace.size());
    MeanRequest m;
    m.input_tokens = std::max(1, static_cast<int>(std::lround(in / n)));
    m.output_tokens = std::max(1, static_cast<int>(std::lround(out / n)));
    double share = 0, prefix = 0;
    for (const RequestClass& c : w.classes) {
        if (c.share > 0) {
            share += c.share;
            prefix += c.share * c.shared_prefix;
        }
    }
    if (share > 0) {
        m.cached_prefix =
            std::clamp(static_cast<int>(std::lround(prefix / share)), 0, m.input_tokens - 1);
    }
    return m;
}

} // namespace

std::optional<MeanRequest> mean_request(const Workload& w) {
    if (w.arrival.kind == ArrivalKind::Trace && !w.trace.empty()) {
        return trace_mean(w);
    }
    if (w.classes.empty()) {
        return std::nullopt;
    }
    double share = 0, in = 0, out = 0, prefix = 0;
    double arrivals = 0, requests = 0;
    for (const RequestClass& c : w.classes) {
        if (!(c.share > 0)) {
            continue;
        }
        const double steps = c.agent ? c.agent->steps : 1;
        arrivals += c.share;
        requests += c.share * steps;
        if (c.route == RouteTarget::Cloud) {
            continue;
        }
        const double output = mean_length(c.output);
        double input = c.shared_prefix + mean_length(c.input);
        if (c.agent) {
            // A session of n steps re-sends its growing context: on average half of it.
            input = c.shared_prefix + mean_length(c.agent->step_input) * (steps + 1) / 2 +
                    output * (steps - 1) / 2;
        }
        const double s = c.share * steps;
        share += s;
        in += s * input;
        out += s * output;
        prefix += s * c.shared_prefix;
    }
    MeanRequest m;
    if (share > 0) {
        m.input_tokens = std::max(1, static_cast<int>(std::lround(in / share)));
        m.output_tokens = std::max(1, static_cast<int>(std::lround(out / share)));
        m.cached_prefix =
            std::clamp(static_cast<int>(std::lround(prefix / share)), 0, m.input_tokens - 1);
    }
    m.requests_per_arrival = arrivals > 0 ? requests / arrivals : 1.0;
    return m;
}

Workload without_trace(const Workload& w) {
    if (w.arrival.kind != ArrivalKind::Trace || w.trace.empty()) {
        Workload r = w;
        r.trace.clear();
        return r;
    }
    const MeanRequest mean = trace_mean(w);
    Workload r = w;
    r.batch_requests = offline_batch_size(w);
    const std::optional<double> rate = arrival_rate(w);
    r.trace.clear();
    r.arrival.kind = ArrivalKind::Poisson;
    r.arrival.requests_per_s = rate;
    r.input_tokens = mean.input_tokens;
    r.output_tokens = mean.output_tokens;
    for (RequestClass& c : r.classes) {
        const int shared = std::clamp(c.shared_prefix, 0, mean.input_tokens - 1);
        c.input = LengthDistribution::fixed(mean.input_tokens - shared);
        c.output = LengthDistribution::fixed(mean.output_tokens);
        c.agent.reset();
    }
    return r;
}

Workload analytic_request(const Workload& w) {
    Workload r;
    r.input_tokens = w.input_tokens;
    r.output_tokens = w.output_tokens;
    if (const auto m = mean_request(w)) {
        r.input_tokens = m->input_tokens;
        r.output_tokens = m->output_tokens;
    }
    r.concurrency = w.concurrency;
    r.requests_per_s = w.requests_per_s;
    r.arrival = w.arrival;
    r.requests = w.requests;
    r.batch_requests = w.batch_requests;
    if (w.arrival.kind == ArrivalKind::Trace && !w.trace.empty()) {
        // The trace itself stays behind: its load as a batch or a mean rate.
        r.batch_requests = offline_batch_size(w);
        r.arrival.kind = ArrivalKind::Poisson;
        r.arrival.requests_per_s = arrival_rate(w);
    }
    r.duration = w.duration;
    return r;
}

} // namespace gpuplan::model
