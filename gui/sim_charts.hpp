#pragma once
/// The latency CDFs of a simulation, prepared off the GUI thread (the runner's worker): sorting
/// 10^6 latencies three times took about 0.2 s each on the GUI thread. A CDF is kept thinned to
/// kCdfColumns pixel columns (downsample.hpp), so the chart gets a few thousand points whatever
/// the run's size.

#include "gui/chart_adapter.hpp"
#include "sim/result.hpp"

#include <QList>
#include <QPointF>

#include <cstddef>

namespace gpuplan::gui {

/// Pixel columns the prepared CDFs keep (twice a wide chart panel, so exports stay sharp).
inline constexpr int kCdfColumns = 2048;

/// One latency's empirical CDF over the completed requests (and those served by the cloud):
/// points (latency in seconds, fraction of requests at or below it), thinned.
struct LatencyCdf {
    QList<QPointF> points;
    std::size_t count = 0; ///< requests with this latency
    double p99_s = 0;      ///< the value at index ⌊0.99 (count − 1)⌋ of the sorted latencies
    double max_s = 0;
};

/// The CDF of `which` over `r.requests`. O(n log n).
[[nodiscard]] LatencyCdf latency_cdf(const sim::SimResult& r, ChartAdapter::Latency which);

/// The three CDFs of a run, made once on the worker thread.
struct SimChartData {
    LatencyCdf ttft, tpot, e2e;
    [[nodiscard]] const LatencyCdf& of(ChartAdapter::Latency k) const {
        return k == ChartAdapter::Latency::Ttft   ? ttft
               : k == ChartAdapter::Latency::Tpot ? tpot
                                                  : e2e;
    }
};
[[nodiscard]] SimChartData prepare_chart_data(const sim::SimResult& r);

} // namespace gpuplan::gui
