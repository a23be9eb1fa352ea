#include "plan/disaggregation.hpp"
#include "model/checked_format.hpp"

#include "model/disaggregation.hpp"
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/operating_point.hpp"
#include "model/price_list.hpp"
#include "model/serving.hpp"
#include "model/workload_mix.hpp"
#include "plan/choice_run.hpp"
#include "plan/thread_pool.hpp"
#include "sim/simulate.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace gpuplan::plan {
namespace {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return mark_non_finite(v, buf);
}

/// Whether `d` is a valid layout that holds its model with room for KV blocks.
bool fits(const model::Deployment& d) {
    try {
        model::validate(d);
        const model::MemoryEstimate m = model::estimate_memory(d);
        return m.fits && m.kv_blocks >= 1;
    } catch (const InputError&) {
        return false;
    }
}

std::vector<int> pool_tps(const model::Deployment& base, const model::ReplicaPool& p, int gpus) {
    std::vector<int> out;
    for (const int tp : {1, 2, 4, 8}) {
        model::ReplicaPool q = p;
        q.tp = tp;
        if (tp < gpus && fits(model::pool_deployment(base, q))) {
            out.push_back(tp);
        }
    }
    return out;
}

/// Ranking: meets every SLO, then cheaper rent per hour (when both have one), then higher SLO
/// attainment, then lower P99 TPOT, then fewer pools' names (stable by name).
bool better(const DisaggLayout& a, const DisaggLayout& b) {
    if (a.meets_slo != b.meets_slo) {
        return a.meets_slo;
    }
    if (a.rent_per_hour && b.rent_per_hour && *a.rent_per_hour != *b.rent_per_hour) {
        return *a.rent_per_hour < *b.rent_per_hour;
    }
    if (a.slo_attainment != b.slo_attainment) {
        return a.slo_attainment > b.slo_attainment;
    }
    if (a.tpot_p99_s != b.tpot_p99_s) {
        return a.tpot_p99_s < b.tpot_p99_s;
    }
    return a.name < b.name;
}

std::string why(const DisaggLayout& w, const DisaggLayout& o) {
    if (w.meets_slo != o.meets_slo) {
        return "it meets every SLO and " + o.name + " does not";
    }
    if (w.rent_per_hour && o.rent_per_hour && *w.rent_per_hour != *o.rent_per_hour) {
        return "both " + std::string(w.meets_slo ? "meet" : "miss") +
               " the SLO and it rents for less (" + fixed(*w.rent_per_hour, 2) + " against " +
               fixed(*o.rent_per_hour, 2) + " " + w.currency + "/h)";
    }
    if (w.slo_attainment != o.slo_attainment) {
        return "more of its requests meet their SLO (" + fixed(100 * w.slo_attainment, 1) +
               " % against " + fixed(100 * o.slo_attainment, 1) + " %)";
    }
    return "its P99 TPOT is lower";
}

} // namespace

DisaggComparison compare_disaggregation(
    const model::Scenario& s,
    const std::function<model::EfficiencyProfile(const model::AcceleratorSpec&)>& profile_for,
    int threads, int max_simulations, std::stop_token stop) {
    if (!s.cluster.disaggregation) {
        throw InvalidArgument("the P:D comparison needs cluster.disaggregation in the scenario");
    }
    const model::Disaggregation& g = *s.cluster.disaggregation;
    const model::Deployment& base = s.deployment;
    DisaggComparison out;
    out.gpus = g.prefill.replicas * g.prefill.tp + g.decode.replicas * g.decode.tp;
    const int gpus = out.gpus;
    const model::Workload w = model::analytic_request(s.workload);
    const double rate = model::offered_rate(s.workload).value_or(0.0);

    std::vector<DisaggLayout> all;
    std::vector<model::Scenario> scenarios;
    // Disaggregated splits.
    for (const int tp_p : pool_tps(base, g.prefill, gpus)) {
        for (const int tp_d : pool_tps(base, g.decode, gpus)) {
            for (int p = 1; p * tp_p < gpus; ++p) {
                const int rest = gpus - p * tp_p;
                if (rest % tp_d != 0) {
                    continue;
                }
                model::Scenario k = s;
                model::Disaggregation& kg = *k.cluster.disaggregation;
                kg.prefill.tp = tp_p;
                kg.prefill.replicas = p;
                kg.decode.tp = tp_d;
                kg.decode.replicas = rest / tp_d;
                DisaggLayout l;
                l.disaggregated = true;
                l.prefill_replicas = p;
                l.prefill_tp = tp_p;
                l.decode_replicas = kg.decode.replicas;
                l.decode_tp = tp_d;
                l.gpus = gpus;
                l.name = std::to_string(p) + "P x tp" + std::to_string(tp_p) + " : " +
                         std::to_string(l.decode_replicas) + "D x tp" + std::to_string(tp_d);
                try {
                    const model::DisaggregatedEstimate e = model::estimate_disaggregated(
                        base, w, profile_for(kg.prefill.hardware.gpu), kg, rate);
                    l.capacity_rps = e.capacity_rps;
                    l.bottleneck = e.bottleneck;
                } catch (const InputError&) {
                    continue;
                }
                if (kg.prefill.hardware.gpu_hour && kg.decode.hardware.gpu_hour) {
                    l.rent_per_hour =
                        p * tp_p * kg.prefill.hardware.gpu_hour->money.amount +
                        l.decode_replicas * tp_d * kg.decode.hardware.gpu_hour->money.amount;
                    l.currency = kg.prefill.hardware.gpu_hour->money.currency;
                }
                all.push_back(l);
                scenarios.push_back(std::move(k));
            }
        }
    }
    // Co-located layouts of the scenario's own accelerator.
    for (const int tp : {1, 2, 4, 8}) {
        if (gpus % tp != 0) {
            continue;
        }
        model::Scenario k = s;
        k.cluster.disaggregation.reset();
        k.deployment.par = model::Parallelism{};
        k.deployment.par.tp = tp;
        k.deployment.par.dp = gpus / tp;
        if (!fits(k.deployment)) {
            continue;
        }
        DisaggLayout l;
        l.replicas = gpus / tp;
        l.tp = tp;
        l.gpus = gpus;
        l.name = std::to_string(l.replicas) + " x tp" + std::to_string(tp) + " co-located";
        l.bottleneck = "replicas";
        try {
            const model::ServingEstimate e =
                model::estimate_serving(k.deployment, w, profile_for(k.deployment.gpu));
            l.capacity_rps = e.peak_throughput / std::max(1, w.output_tokens);
        } catch (const InputError&) {
            continue;
        }
        if (const auto quote = model::gpu_hour_price(k)) {
            l.rent_per_hour = gpus * quote->price.money.amount;
            l.currency = quote->price.money.currency;
        }
        all.push_back(l);
        scenarios.push_back(std::move(k));
    }

    // The most capacity of each kind, half the simulations each (the rest to the other kind
    // when one has fewer).
    std::vector<std::size_t> dis, co;
    for (std::size_t i = 0; i < all.size(); ++i) {
        (all[i].disaggregated ? dis : co).push_back(i);
    }
    const auto by_capacity = [&](std::size_t a, std::size_t b) {
        return all[a].capacity_rps != all[b].capacity_rps
                   ? all[a].capacity_rps > all[b].capacity_rps
                   : all[a].name < all[b].name;
    };
    std::sort(dis.begin(), dis.end(), by_capacity);
    std::sort(co.begin(), co.end(), by_capacity);
    const auto half = static_cast<std::size_t>(std::max(1, max_simulations / 2));
    const std::size_t take_co =
        std::min(co.size(), std::max(half, static_cast<std::size_t>(max_simulations) -
                                               std::min(dis.size(), half)));
    const std::size_t take_dis =
        std::min(dis.size(), static_cast<std::size_t>(max_simulations) - take_co);
    std::vector<std::size_t> chosen(dis.begin(),
                                    dis.begin() + static_cast<std::ptrdiff_t>(take_dis));
    chosen.insert(chosen.end(), co.begin(), co.begin() + static_cast<std::ptrdiff_t>(take_co));
    std::vector<bool> picked(all.size(), false);
    for (const std::size_t i : chosen) {
        picked[i] = true;
    }

    // One profile per run (pools too): the scenario's accelerator's, as `simulate` takes it.
    sim::SimOptions options;
    options.profile = profile_for(base.gpu);
    parallel_for(chosen.size(), threads, [&](std::size_t j) {
        DisaggLayout& l = all[chosen[j]];
        sim::SimResult r;
        try {
            r = sim::simulate(scenarios[chosen[j]], options, stop);
        } catch (const InputError&) {
            return; // a layout the simulator refuses stays unsimulated
        }
        if (!r.ok || r.stopped) {
            return;
        }
        l.simulated = true;
        l.meets_slo = meets_every_slo(r);
        l.slo_attainment = r.overall.slo_attainment;
        l.ttft_p99_s = r.overall.ttft.p99.si();
        l.tpot_p99_s = r.overall.tpot.p99.si();
        l.e2e_p99_s = r.overall.e2e.p99.si();
        l.output_tok_s = r.output_tok_s;
        if (r.disaggregation) {
            l.link_utilisation = r.disaggregation->link_utilisation;
            l.transfer_mean_s = r.disaggregation->transfer_time.mean.si();
        }
    });
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (picked[i] && all[i].simulated) {
            out.ranked.push_back(all[i]);
        } else {
            out.not_simulated.push_back(all[i]);
        }
    }
    std::sort(out.ranked.begin(), out.ranked.end(), better);
    std::sort(out.not_simulated.begin(), out.not_simulated.end(),
              [](const DisaggLayout& a, const DisaggLayout& b) {
                  return a.capacity_rps > b.capacity_rps;
              });
    if (out.ranked.empty()) {
        out.verdict = "no layout of the " + std::to_string(gpus) + " GPUs could be simulated";
        return out;
    }
    const DisaggLayout& win = out.ranked.front();
    const auto other =
        std::find_if(out.ranked.begin(), out.ranked.end(),
                     [&](const DisaggLayout& l) { return l.disaggregated != win.disaggregated; });
    out.verdict = std::string(win.disaggregated ? "disaggregated " : "") + win.name + " wins at " +
                  std::to_string(gpus) + " GPUs";
    if (other != out.ranked.end()) {
        out.verdict +=
            " over the best " + std::string(other->disaggregated ? "disaggregated" : "co-located") +
            " layout, " + other->name + ": " + why(win, *other) + ". P99 TTFT " +
            fixed(win.ttft_p99_s * 1e3, 0) + " against " + fixed(other->ttft_p99_s * 1e3, 0) +
            " ms, P99 TPOT " + fixed(win.tpot_p99_s * 1e3, 1) + " against " +
            fixed(other->tpot_p99_s * 1e3, 1) + " ms, SLO attainment " +
            fixed(100 * win.slo_attainment, 1) + " against " +
            fixed(100 * other->slo_attainment, 1) + " %";
        const DisaggLayout& d = win.disaggregated ? win : *other;
        out.verdict += "; the disaggregated layout is bound by its " + d.bottleneck + " (link " +
                       fixed(100 * d.link_utilisation, 1) + " % busy, " +
                       fixed(d.transfer_mean_s * 1e3, 1) + " ms per transfer)";
    }
    return out;
}

std::optional<model::DisaggregatedEstimate> scenario_disaggregation(
    const model::Scenario& s,
    const std::function<model::EfficiencyProfile(const model::AcceleratorSpec&)>& profile_for) {
    if (!s.cluster.disaggregation) {
        return std::nullopt;
    }
    const model::Disaggregation& g = *s.cluster.disaggregation;
    return model::estimate_disaggregated(s.deployment, model::analytic_request(s.workload),
                                         profile_for(g.prefill.hardware.gpu), g,
                                         model::offered_rate(s.workload).value_or(0.0));
}

} // namespace gpuplan::plan
