#include "gui/sim_charts.hpp"

#include "gui/downsample.hpp"

#include <algorithm>
#include <vector>

namespace gpuplan::gui {

LatencyCdf latency_cdf(const sim::SimResult& r, ChartAdapter::Latency which) {
    std::vector<double> v;
    v.reserve(r.requests.size());
    for (const auto& q : r.requests) {
        const std::optional<Seconds>& x = which == ChartAdapter::Latency::Ttft   ? q.ttft
                                          : which == ChartAdapter::Latency::Tpot ? q.tpot
                                                                                 : q.e2e;
        if (x && (q.outcome == sim::Outcome::Completed || q.outcome == sim::Outcome::Cloud)) {
            v.push_back(x->si());
        }
    }
    LatencyCdf cdf;
    cdf.count = v.size();
    if (v.empty()) {
        return cdf;
    }
    std::sort(v.begin(), v.end());
    cdf.p99_s = v[static_cast<std::size_t>(0.99 * static_cast<double>(v.size() - 1))];
    cdf.max_s = v.back();
    QList<QPointF> all;
    all.reserve(static_cast<qsizetype>(v.size()));
    const double n = static_cast<double>(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        all.append(QPointF(v[i], static_cast<double>(i + 1) / n));
    }
    cdf.points = downsampleMinMax(all, kCdfColumns);
    return cdf;
}

SimChartData prepare_chart_data(const sim::SimResult& r) {
    return {latency_cdf(r, ChartAdapter::Latency::Ttft),
            latency_cdf(r, ChartAdapter::Latency::Tpot),
            latency_cdf(r, ChartAdapter::Latency::E2e)};
}

} // namespace gpuplan::gui
