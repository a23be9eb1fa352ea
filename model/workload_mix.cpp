#include "model/workload_mix.hpp"

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

std::optional<MeanRequest> mean_request(const Workload& w) {
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
    r.duration = w.duration;
    return r;
}

} // namespace gpuplan::model
