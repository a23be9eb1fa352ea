#include "model/prefix_routing.hpp"

#include "model/error.hpp"
#include "model/workload_mix.hpp"

#include <algorithm>

namespace gpuplan::model {

PrefixHitEstimate prefix_hit_estimate(const Workload& w, std::int64_t cache_tokens, int replicas,
                                      std::int64_t requests) {
    if (replicas < 1 || cache_tokens < 0 || requests < 1) {
        throw InvalidArgument("prefix_hit_estimate: replicas and requests must be at least 1 and "
                              "the cache at least 0 tokens");
    }
    PrefixHitEstimate e;
    double share = 0;
    for (const auto& c : w.classes) {
        if (c.share > 0 && c.route != RouteTarget::Cloud) {
            share += c.share;
            e.prefix_tokens += static_cast<double>(c.prefix_groups) * c.shared_prefix;
            e.shares_prefixes = e.shares_prefixes || c.shared_prefix > 0 || c.agent.has_value();
            e.closed_form = e.closed_form && !c.agent.has_value();
        }
    }
    if (!(share > 0) || !e.closed_form) {
        return e;
    }
    const double cache = static_cast<double>(cache_tokens);
    const double r = replicas;
    const auto held = [&](double footprint) {
        return footprint > 0 ? std::min(1.0, cache / footprint) : 1.0;
    };
    const double held_spread = held(e.prefix_tokens);
    const double held_by_prefix = held(e.prefix_tokens / r);
    double looked_up = 0, hit_spread = 0, hit_by_prefix = 0;
    for (const auto& c : w.classes) {
        if (!(c.share > 0) || c.route == RouteTarget::Cloud) {
            continue;
        }
        const double s = c.share / share;
        const double n = s * static_cast<double>(requests);
        const double p = c.shared_prefix;
        const double g = c.prefix_groups;
        looked_up += s * (p + mean_length(c.input));
        const auto first = [&](double misses) { return std::max(0.0, 1.0 - misses / n); };
        hit_spread += s * p * held_spread * first(r * g);
        hit_by_prefix += s * p * held_by_prefix * first(g);
    }
    if (looked_up > 0) {
        e.spread = hit_spread / looked_up;
        e.by_prefix = hit_by_prefix / looked_up;
    }
    return e;
}

} // namespace gpuplan::model
