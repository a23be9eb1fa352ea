#include "plan/load_curve.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"
#include "model/operating_point.hpp"
#include "model/serving.hpp"
#include "model/slo_capacity.hpp"
#include "model/workload_mix.hpp"
#include "plan/sizing_search.hpp"
#include "plan/thread_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>

namespace gpuplan::plan {

const char* to_string(LoadAxis a) {
    return a == LoadAxis::Concurrency ? "concurrency" : "requests_per_s";
}

LoadAxis default_axis(const model::Scenario& s) {
    const bool trace = s.workload.arrival.kind == model::ArrivalKind::Trace;
    return !trace && model::offered_rate(s.workload) ? LoadAxis::RequestRate
                                                     : LoadAxis::Concurrency;
}

model::Scenario at_load(const model::Scenario& s, LoadAxis axis, double load) {
    if (!(load > 0) || !std::isfinite(load)) {
        throw InvalidArgument(gpuplan::checked_format(
            "a load of {} {} is not above 0; give loads above 0, e.g. 1", load, to_string(axis)));
    }
    model::Scenario t = s;
    if (axis == LoadAxis::Concurrency) {
        if (load != std::floor(load) || load > 1 << 24) {
            throw InvalidArgument(gpuplan::checked_format(
                "a concurrency of {} is not a whole number of sequences up to 2^24; "
                "give whole numbers, e.g. 8",
                load));
        }
        model::set_closed_loop(t.workload, static_cast<int>(load));
    } else {
        if (t.workload.arrival.kind == model::ArrivalKind::Trace) {
            // A trace keeps its own arrival times (model::set_offered_rate), so every rate
            // would be the same load.
            throw InvalidArgument("the workload replays a trace, whose arrival times set its "
                                  "rate; draw the curves against concurrency instead "
                                  "(--axis concurrency)");
        }
        model::set_offered_rate(t.workload, load);
    }
    return t;
}

namespace {

std::string ms(Seconds s) {
    return gpuplan::checked_format("{:.1f} ms", s.si() * 1e3);
}

} // namespace

CurvePoint curve_point(const model::Scenario& s, const model::EfficiencyProfile& profile,
                       LoadAxis axis, double load) {
    const model::Scenario t = at_load(s, axis, load);
    const model::ServingEstimate e = model::estimate_serving(t.deployment, t.workload, profile);
    const model::Workload w = model::analytic_request(t.workload);
    CurvePoint p;
    p.load = load;
    p.throughput = e.throughput;
    p.ttft = e.ttft_loaded;
    p.tpot = e.tpot;
    // The sizing search's analytic E2E (plan/sizing_search.cpp): the first token, then one
    // TPOT per further token.
    p.e2e = e.ttft_loaded + static_cast<double>(std::max(0, w.output_tokens - 1)) * e.tpot;
    p.running = e.running;
    p.utilisation = e.operating_point.utilisation;
    if (axis == LoadAxis::Concurrency) {
        const model::LoadFit f = model::load_fit(t.deployment, e.memory, w, static_cast<int>(load));
        p.fits = f.fits;
        if (!f.fits) {
            p.miss = f.reason;
        }
    } else {
        p.fits = e.memory.fits && e.peak_throughput > 0 && p.utilisation && *p.utilisation <= 1.0;
        if (!p.fits) {
            p.miss =
                !e.memory.fits || !(e.peak_throughput > 0)
                    ? "the engine does not start"
                    : gpuplan::checked_format("the offered load is {:.0f} % of what the deployment "
                                              "serves: the queue grows without bound",
                                              p.utilisation.value_or(0) * 100);
        }
    }
    if (!p.fits) {
        return p;
    }
    std::vector<std::string> missed;
    const auto check = [&](const std::optional<Seconds>& target, Seconds value, const char* what) {
        if (target && value > *target) {
            missed.push_back(gpuplan::checked_format("{} {} > {}", what, ms(value), ms(*target)));
        }
    };
    if (axis == LoadAxis::RequestRate) {
        // An open loop is judged at the SLO's percentile under Poisson arrivals
        // (model::slo_capacity's question), so the highest rate served is that capacity.
        const model::SloFigures f =
            model::slo_figures_at(s.deployment, s.workload, s.slo, profile, load);
        const std::string at = gpuplan::checked_format(" (p{:.0f})", s.slo.percentile);
        check(s.slo.ttft, f.ttft, ("TTFT" + at).c_str());
        check(s.slo.tpot, f.tpot, ("TPOT" + at).c_str());
        check(s.slo.e2e, f.e2e, ("E2E" + at).c_str());
    } else {
        check(s.slo.ttft, p.ttft, "TTFT");
        check(s.slo.tpot, p.tpot, "TPOT");
        check(s.slo.e2e, p.e2e, "E2E");
    }
    p.meets_slo = missed.empty();
    for (std::size_t i = 0; i < missed.size(); ++i) {
        p.miss += (i ? ", " : "") + missed[i];
    }
    return p;
}

namespace {

/// The sequences the deployment runs at once for the analytic request (0: it does not fit).
int capacity_of(const model::Scenario& s) {
    const model::MemoryEstimate mem = model::estimate_memory(s.deployment);
    if (!mem.fits) {
        return 0;
    }
    return model::replica_capacity(mem, model::analytic_request(s.workload)) * s.deployment.par.dp;
}

/// The rate at utilisation 1: the deployment's peak output tokens/s over the request's output.
double saturation_rate(const model::Scenario& s, const model::EfficiencyProfile& profile) {
    const model::ServingEstimate e = model::estimate_serving(s.deployment, s.workload, profile);
    const model::Workload w = model::analytic_request(s.workload);
    return w.output_tokens > 0 ? e.peak_throughput / w.output_tokens : 0.0;
}

} // namespace

std::optional<double> max_load_meeting_slo(const model::Scenario& s,
                                           const model::EfficiencyProfile& profile, LoadAxis axis) {
    const auto meets = [&](double load) { return curve_point(s, profile, axis, load).meets_slo; };
    if (axis == LoadAxis::Concurrency) {
        if (!meets(1)) {
            return std::nullopt;
        }
        // Past the capacity a closed loop does not fit, so the first failing load is at most
        // capacity + 1.
        long long lo = 1;
        long long hi = std::max(2, capacity_of(s) + 1);
        while (meets(static_cast<double>(hi)) && hi < (1 << 24)) {
            lo = hi;
            hi *= 2;
        }
        while (hi - lo > 1) {
            const long long mid = lo + (hi - lo) / 2;
            (meets(static_cast<double>(mid)) ? lo : hi) = mid;
        }
        return static_cast<double>(lo);
    }
    // The capacity at the SLO: the one answer of model::slo_capacity (estimate, plan and
    // plan --fleet print the same figure).
    const model::SloCapacity c = model::slo_capacity(s.deployment, s.workload, s.slo, profile);
    if (!(c.rate > 0)) {
        return std::nullopt;
    }
    return c.rate;
}

std::vector<double> default_loads(const model::Scenario& s, const model::EfficiencyProfile& profile,
                                  LoadAxis axis, int n) {
    std::vector<double> out;
    n = std::max(2, n);
    if (axis == LoadAxis::Concurrency) {
        const int cap = capacity_of(s);
        if (cap < 1) {
            return out;
        }
        for (int i = 0; i < n; ++i) {
            const double c = std::round(std::pow(static_cast<double>(cap), i / double(n - 1)));
            if (out.empty() || c > out.back()) {
                out.push_back(c);
            }
        }
        return out;
    }
    const double saturation = capacity_of(s) > 0 ? saturation_rate(s, profile) : 0.0;
    if (!(saturation > 0)) {
        return out;
    }
    for (int i = 1; i <= n; ++i) {
        out.push_back(saturation * i / n);
    }
    return out;
}

std::vector<CurveCandidate> curve_candidates(
    const model::Scenario& s, const model::EfficiencyProfile& own,
    const std::vector<model::PlanCandidate>& others,
    const std::function<model::EfficiencyProfile(const model::AcceleratorSpec&)>& choose) {
    std::vector<CurveCandidate> out;
    out.push_back({s.deployment.gpu.name, s, own});
    SizingConfig k;
    k.par = s.deployment.par;
    k.weights = s.deployment.prec.weights;
    k.kv_cache = s.deployment.prec.kv_cache;
    k.speculative = s.deployment.engine.speculative.has_value();
    for (const model::PlanCandidate& c : others) {
        const bool seen = std::any_of(
            out.begin(), out.end(), [&](const CurveCandidate& o) { return o.name == c.gpu.name; });
        if (seen) {
            continue;
        }
        out.push_back({c.gpu.name, configured_scenario(s, c, k), choose(c.gpu)});
    }
    return out;
}

LoadCurve load_curve(const std::vector<CurveCandidate>& candidates, LoadAxis axis,
                     std::vector<double> loads, int points) {
    LoadCurve r;
    r.axis = axis;
    if (candidates.empty()) {
        return r;
    }
    r.slo = candidates.front().scenario.slo;
    if (loads.empty()) {
        for (const CurveCandidate& c : candidates) {
            try {
                loads = default_loads(c.scenario, c.profile, axis, points);
            } catch (const InvalidArgument&) {
                loads.clear();
            }
            if (!loads.empty()) {
                break;
            }
        }
    }
    r.curves.resize(candidates.size());
    // One job per candidate: each bisection is a few dozen estimates.
    parallel_for(candidates.size(), 0, [&](std::size_t i) {
        const CurveCandidate& c = candidates[i];
        CandidateCurve& out = r.curves[i];
        out.name = c.name;
        try {
            for (double load : loads) {
                out.points.push_back(curve_point(c.scenario, c.profile, axis, load));
            }
            out.max_load = max_load_meeting_slo(c.scenario, c.profile, axis);
        } catch (const InvalidArgument& e) {
            out.points.clear();
            out.max_load.reset();
            out.error = e.what();
        }
    });
    return r;
}

std::vector<SimulatedPoint> simulate_curve(const model::Scenario& s,
                                           const model::EfficiencyProfile& profile,
                                           const std::optional<model::NodePower>& node,
                                           LoadAxis axis, const std::vector<double>& loads,
                                           int requests, int threads, std::stop_token stop,
                                           const std::function<void(double)>& progress) {
    std::vector<SimulatedPoint> out(loads.size());
    std::atomic<int> done{0};
    parallel_for(loads.size(), threads, [&](std::size_t i) {
        SimulatedPoint& p = out[i];
        p.load = loads[i];
        if (stop.stop_requested()) {
            p.reason = "stopped";
            return;
        }
        sim::SimOptions o;
        o.profile = profile;
        o.node = node;
        // A closed loop of n sequences reaches its steady state only when several rounds of
        // n requests run: at least four.
        o.requests = axis == LoadAxis::Concurrency
                         ? std::max(requests, static_cast<int>(std::min(4 * loads[i], 1e7)))
                         : requests;
        // A duration of the scenario's would cut the run short of `requests`.
        o.duration.reset();
        model::Scenario t = at_load(s, axis, loads[i]);
        t.workload.duration.reset();
        const sim::SimResult res = sim::simulate(t, o, stop);
        if (!res.ok || res.stopped) {
            p.reason = res.stopped ? "stopped"
                                   : gpuplan::checked_format("{}", fmt::join(res.reasons, "; "));
        } else {
            const sim::RequestSummary& o2 = res.overall;
            p.ok = true;
            p.throughput = res.output_tok_s;
            p.ttft_p50_s = o2.ttft.p50.si();
            p.ttft_p99_s = o2.ttft.p99.si();
            p.tpot_p50_s = o2.tpot.p50.si();
            p.tpot_p99_s = o2.tpot.p99.si();
            const double pct = s.slo.percentile;
            p.ttft_at_slo_s = sim::at_percentile(o2.ttft, pct).si();
            p.tpot_at_slo_s = sim::at_percentile(o2.tpot, pct).si();
            p.e2e_at_slo_s = sim::at_percentile(o2.e2e, pct).si();
            p.completed = o2.completed;
            p.failed = o2.rejected + o2.timed_out;
            const auto within = [](const std::optional<Seconds>& target, double v) {
                return !target || v <= target->si();
            };
            p.meets_slo = p.completed > 0 && p.failed == 0 && within(s.slo.ttft, p.ttft_at_slo_s) &&
                          within(s.slo.tpot, p.tpot_at_slo_s) && within(s.slo.e2e, p.e2e_at_slo_s);
        }
        const int n = ++done;
        if (progress) {
            progress(static_cast<double>(n) / static_cast<double>(loads.size()));
        }
    });
    return out;
}

} // namespace gpuplan::plan
