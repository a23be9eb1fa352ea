#include "plan/routing.hpp"

#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/prefix_routing.hpp"
#include "model/unit_parser.hpp"
#include "plan/choice_run.hpp"
#include "plan/thread_pool.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::plan {
namespace {

using Run = ChoiceRun;

std::string pct(double v) {
    return choice_pct(v);
}

std::string ms(double s) {
    return choice_ms(s);
}

/// The ranking: meets the SLO with fewer replicas, then meets it at the configuration's, then
/// the higher SLO attainment, then the lower TTFT at the percentile, then the list order.
bool better(const RouterOption& a, const RouterOption& b) {
    const int fa = a.fewest_replicas > 0 ? a.fewest_replicas : 1 << 30;
    const int fb = b.fewest_replicas > 0 ? b.fewest_replicas : 1 << 30;
    if (fa != fb) {
        return fa < fb;
    }
    if (a.slo_attainment != b.slo_attainment) {
        return a.slo_attainment > b.slo_attainment;
    }
    return a.ttft_at_p_s < b.ttft_at_p_s;
}

} // namespace

RouterComparison compare_routers(const model::Scenario& configured, const sim::SimOptions& options,
                                 int threads, std::stop_token stop) {
    RouterComparison out;
    const model::Scenario& t = configured;
    out.replicas = t.cluster.replicas.value_or(t.deployment.par.dp);
    const model::MemoryEstimate mem = model::estimate_memory(t.deployment);
    out.cache_tokens = mem.kv_tokens;
    const std::int64_t requests =
        options.requests ? *options.requests : t.workload.requests.value_or(1000);
    const model::PrefixHitEstimate est =
        model::prefix_hit_estimate(t.workload, std::max<std::int64_t>(0, mem.kv_tokens),
                                   std::max(1, out.replicas), std::max<std::int64_t>(1, requests));
    out.closed_form = est.closed_form && est.shares_prefixes;
    out.prefix_tokens = est.prefix_tokens;
    const bool caching = t.deployment.engine.enable_prefix_caching.value_or(true);
    const std::string least = model::to_string(model::RouterPolicy::LeastOutstanding);
    if (out.replicas < 2) {
        out.chosen = model::to_string(t.cluster.router);
        out.verdict = "one replica: there is nothing to route";
        return out;
    }
    const bool adapters = t.deployment.engine.lora.has_value() &&
                          t.cluster.router == model::RouterPolicy::AdapterAffinity;
    if ((!caching || !est.shares_prefixes) && adapters) {
        out.chosen = model::to_string(t.cluster.router);
        out.verdict = out.chosen + ": no prompt prefix to route by, and with engine.lora this "
                                   "router keeps each adapter's requests on the replicas whose "
                                   "GPU holds it (fewer adapter loads than the least loaded)";
        return out;
    }
    if (!caching || !est.shares_prefixes) {
        out.chosen = least;
        RouterOption o;
        o.router = least;
        o.replicas = out.replicas;
        out.options.push_back(o);
        out.verdict =
            least + ": " +
            (caching ? std::string("no class shares a prefix, so every prompt is unique and no "
                                   "replica's cache can serve another's request (analytic hit "
                                   "rate 0 % under every router)")
                     : std::string("prefix caching is off, so no replica's cache serves a "
                                   "prompt")) +
            "; the prefix-aware routers reduce to the least loaded replica, which balances "
            "the load";
        if (least != model::to_string(t.cluster.router)) {
            out.verdict += "; set cluster.router: " + least;
        }
        return out;
    }
    out.choice = true;
    // The three prefix-aware choices, and the scenario's own router when it is another one
    // (adapter affinity with engine.lora, round robin, ...), so the answer never drops it unseen.
    std::vector<model::RouterPolicy> routers{model::RouterPolicy::LeastOutstanding,
                                             model::RouterPolicy::LongestPrefix,
                                             model::RouterPolicy::Weighted};
    if (std::find(routers.begin(), routers.end(), t.cluster.router) == routers.end()) {
        routers.push_back(t.cluster.router);
    }
    std::vector<RouterOption> opts(routers.size());
    std::vector<model::Scenario> scenarios;
    for (std::size_t i = 0; i < routers.size(); ++i) {
        opts[i].router = model::to_string(routers[i]);
        opts[i].weight = routers[i] == model::RouterPolicy::Weighted
                             ? t.cluster.prefix_routing.weight
                             : (routers[i] == model::RouterPolicy::LongestPrefix ? 1.0 : 0.0);
        opts[i].analytic_hit_rate = !est.closed_form ? 0.0
                                    : routers[i] == model::RouterPolicy::LeastOutstanding
                                        ? est.spread
                                        : est.by_prefix;
        opts[i].replicas = out.replicas;
        model::Scenario v = t;
        v.cluster.router = routers[i];
        v.cluster.replicas = out.replicas;
        scenarios.push_back(std::move(v));
    }
    std::vector<Run> runs(routers.size());
    parallel_for(routers.size(), threads,
                 [&](std::size_t i) { runs[i] = simulate_choice(scenarios[i], options, stop); });
    // Those meeting the SLO try one replica fewer: the router's effect on the sizing.
    std::vector<std::size_t> fewer;
    for (std::size_t i = 0; i < routers.size(); ++i) {
        RouterOption& o = opts[i];
        const Run& r = runs[i];
        o.simulated = r.ok;
        o.meets_slo = r.meets;
        o.slo_attainment = r.attainment;
        o.hit_rate = r.hit;
        o.ttft_mean_s = r.ttft_mean;
        o.ttft_at_p_s = r.ttft_p;
        o.tpot_at_p_s = r.tpot_p;
        o.request_imbalance = r.imbalance;
        o.fewest_replicas = r.meets ? out.replicas : 0;
        if (r.meets && out.replicas > 1) {
            fewer.push_back(i);
        }
    }
    std::vector<Run> less(fewer.size());
    parallel_for(fewer.size(), threads, [&](std::size_t j) {
        model::Scenario v = scenarios[fewer[j]];
        v.cluster.replicas = out.replicas - 1;
        less[j] = simulate_choice(v, options, stop);
    });
    for (std::size_t j = 0; j < fewer.size(); ++j) {
        if (less[j].meets) {
            opts[fewer[j]].fewest_replicas = out.replicas - 1;
        }
    }
    std::stable_sort(opts.begin(), opts.end(), better);
    out.options = opts;
    const RouterOption& win = out.options.front();
    out.chosen = win.router;
    // Against least outstanding, or against the runner-up when least outstanding wins.
    const auto other_it =
        std::find_if(out.options.begin() + 1, out.options.end(), [&](const RouterOption& o) {
            return win.router == least || o.router == least;
        });
    const RouterOption& other = other_it != out.options.end() ? *other_it : win;
    std::string why;
    if (win.fewest_replicas > 0 &&
        (other.fewest_replicas == 0 || win.fewest_replicas < other.fewest_replicas)) {
        why = other.fewest_replicas == 0
                  ? "it meets the SLO at " + std::to_string(out.replicas) + " replicas and " +
                        other.router + " does not"
                  : "it meets the SLO with " + std::to_string(win.fewest_replicas) + " replicas, " +
                        other.router + " needs " + std::to_string(other.fewest_replicas);
    } else if (win.slo_attainment != other.slo_attainment) {
        why = "higher SLO attainment (" + pct(win.slo_attainment) + " against " +
              pct(other.slo_attainment) + ")";
    } else {
        why = "lower p" + model::format_fixed(t.slo.percentile, 0) + " TTFT";
    }
    out.verdict = win.router + " wins at " + std::to_string(out.replicas) + " replicas over " +
                  other.router + ": " + why + "; prefix hit rate " + pct(win.hit_rate) +
                  " against " + pct(other.hit_rate);
    if (est.closed_form) {
        out.verdict += " (analytic " + pct(win.analytic_hit_rate) + " against " +
                       pct(other.analytic_hit_rate) + ": " +
                       model::format_fixed(est.prefix_tokens, 0) +
                       " shared-prefix tokens against a KV pool of " +
                       std::to_string(out.cache_tokens) + " tokens per replica, " +
                       (est.prefix_tokens > static_cast<double>(out.cache_tokens)
                            ? "so a router that sends every prefix everywhere evicts them"
                            : "which holds them all wherever they go") +
                       ")";
    }
    out.verdict += ", TTFT mean " + ms(win.ttft_mean_s) + " against " + ms(other.ttft_mean_s) +
                   ", p" + model::format_fixed(t.slo.percentile, 0) + " " + ms(win.ttft_at_p_s) +
                   " against " + ms(other.ttft_at_p_s);
    if (win.router != model::to_string(t.cluster.router)) {
        out.verdict += "; set cluster.router: " + win.router;
    }
    return out;
}

} // namespace gpuplan::plan
