#include "calib/bench_fit.hpp"
#include "model/checked_format.hpp"

#include "model/diagnose.hpp"
#include "model/error.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace gpuplan::calib {
namespace {

/// The model's TPOT at each benchmark's load with `p`, the way `calib validate --scenario`
/// predicts it (model::diagnose at the benchmark's concurrency and lengths).
std::vector<double> predict(const model::Scenario& s, const model::EfficiencyProfile& p,
                            const std::vector<hwdb::LabelledBench>& benches,
                            std::vector<int>* running = nullptr) {
    std::vector<double> out;
    for (const auto& b : benches) {
        model::Observations obs;
        obs.bench = b.bench;
        const model::Diagnosis g = model::diagnose(s.deployment, s.workload, p, obs);
        out.push_back(g.predicted.estimate.tpot.si());
        if (running)
            running->push_back(g.running);
    }
    return out;
}

double sq_error(const std::vector<double>& pred, const std::vector<double>& meas) {
    double e = 0;
    for (std::size_t i = 0; i < pred.size(); ++i) {
        const double r = (pred[i] - meas[i]) / meas[i];
        e += r * r;
    }
    return e;
}

double mape(const std::vector<double>& pred, const std::vector<double>& meas) {
    double e = 0;
    for (std::size_t i = 0; i < pred.size(); ++i)
        e += std::abs(pred[i] - meas[i]) / meas[i];
    return e / static_cast<double>(pred.size());
}

} // namespace

StepOverheadFit fit_step_overhead(const model::Scenario& s, const model::EfficiencyProfile& base,
                                  const std::vector<hwdb::LabelledBench>& benches,
                                  Seconds max_overhead) {
    std::vector<hwdb::LabelledBench> used;
    std::vector<double> meas;
    for (const auto& b : benches) {
        if (b.bench.mean_tpot_ms && *b.bench.mean_tpot_ms > 0) {
            used.push_back(b);
            meas.push_back(*b.bench.mean_tpot_ms / 1e3);
        }
    }
    if (used.size() < 2) {
        throw InvalidArgument(gpuplan::checked_format(
            "{} benchmark result{} with a mean TPOT; fitting the per-step overhead needs runs at "
            "two loads or more (vllm bench serve --max-concurrency 1, 8, 32, ...)",
            used.size(), used.size() == 1 ? "" : "s"));
    }
    std::vector<int> running;
    const std::vector<double> before = predict(s, base, used, &running);
    if (std::set<int>(running.begin(), running.end()).size() < 2) {
        throw InvalidArgument(gpuplan::checked_format(
            "every benchmark result ran at {} concurrent requests; one load cannot tell the "
            "per-step overhead from the kernels: give runs at two loads or more",
            running.front()));
    }
    const auto err_at = [&](double o) {
        model::EfficiencyProfile p = base;
        p.step_overhead = Seconds(o);
        return sq_error(predict(s, p, used), meas);
    };
    // Golden-section search on [0, max]: the overhead adds to every step, so the squared error
    // is convex in it.
    const double phi = (std::sqrt(5.0) - 1) / 2;
    double lo = 0, hi = max_overhead.si();
    double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
    double f1 = err_at(x1), f2 = err_at(x2);
    while (hi - lo > 1e-9) {
        if (f1 < f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - phi * (hi - lo);
            f1 = err_at(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + phi * (hi - lo);
            f2 = err_at(x2);
        }
    }
    StepOverheadFit out;
    out.base = base.step_overhead;
    out.fitted = Seconds((lo + hi) / 2);
    out.profile = base;
    out.profile.step_overhead = out.fitted;
    const std::vector<double> after = predict(s, out.profile, used);
    out.mape_before = mape(before, meas);
    out.mape_after = mape(after, meas);
    for (std::size_t i = 0; i < used.size(); ++i) {
        out.benches.push_back({used[i].label, running[i], meas[i], before[i], after[i]});
    }
    out.profile.provenance.kind = model::ProvenanceKind::EngineProfile;
    out.profile.provenance.description = gpuplan::checked_format(
        "{}; step_overhead fitted to {} benchmark results of {} (mean TPOT at "
        "concurrency {}..{}): {:.3g} ms → {:.3g} ms, TPOT error {:.1f} % → {:.1f} %",
        base.provenance.description.empty() ? base.name : base.provenance.description, used.size(),
        s.name, *std::min_element(running.begin(), running.end()),
        *std::max_element(running.begin(), running.end()), out.base.si() * 1e3,
        out.fitted.si() * 1e3, out.mape_before * 100, out.mape_after * 100);
    return out;
}

} // namespace gpuplan::calib
