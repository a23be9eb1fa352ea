#include "gui/downsample.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::gui {

QList<QPointF> downsampleMinMax(const QList<QPointF>& points, int columns) {
    const auto finite = [](const QPointF& p) {
        return std::isfinite(p.x()) && std::isfinite(p.y());
    };
    const bool all_finite = std::all_of(points.begin(), points.end(), finite);
    if (columns < 1 || (all_finite && points.size() <= 2 * static_cast<qsizetype>(columns))) {
        return points;
    }
    double x0 = 0;
    double x1 = 0;
    bool any = false;
    for (const QPointF& p : points) {
        if (finite(p)) {
            x0 = any ? std::min(x0, p.x()) : p.x();
            x1 = any ? std::max(x1, p.x()) : p.x();
            any = true;
        }
    }
    QList<QPointF> out;
    if (!any) {
        return out;
    }
    out.reserve(std::min<qsizetype>(points.size(), 2 * static_cast<qsizetype>(columns)));
    const double span = x1 - x0;
    const auto bucket_of = [&](double x) {
        if (!(span > 0)) {
            return 0;
        }
        const auto b = static_cast<int>((x - x0) / span * columns);
        return std::clamp(b, 0, columns - 1);
    };
    // One pass: the current bucket's lowest and highest point (by index, to keep their order).
    int bucket = -1;
    qsizetype lo = -1;
    qsizetype hi = -1;
    const auto flush = [&] {
        if (lo < 0) {
            return;
        }
        if (lo == hi) {
            out.push_back(points[lo]);
        } else {
            out.push_back(points[std::min(lo, hi)]);
            out.push_back(points[std::max(lo, hi)]);
        }
    };
    for (qsizetype i = 0; i < points.size(); ++i) {
        const QPointF& p = points[i];
        if (!finite(p)) {
            continue;
        }
        const int b = bucket_of(p.x());
        if (b != bucket) {
            flush();
            bucket = b;
            lo = hi = i;
            continue;
        }
        if (p.y() < points[lo].y()) {
            lo = i;
        }
        if (p.y() > points[hi].y()) {
            hi = i;
        }
    }
    flush();
    return out;
}

int chartColumns(int panel_width_px) {
    return std::max(1024, 2 * panel_width_px);
}

} // namespace gpuplan::gui
