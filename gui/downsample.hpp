#pragma once
/// Thinning a long line series for a chart of a given width: at most two points per pixel
/// column, the lowest and the highest of the column, so every peak and trough still shows
/// (the min/max decimation that plotting tools use for long time series; see Steinarsson,
/// "Downsampling Time Series for Visual Representation", University of Iceland, 2013, §3).

#include <QList>
#include <QPointF>

namespace gpuplan::gui {

/// Points of `points` (sorted by x, non-decreasing) kept for a chart `columns` pixels wide:
/// the x range is cut into `columns` equal buckets and each bucket keeps its lowest and its
/// highest point (one point when they are the same), in their original order. The result has at
/// most 2 × columns points, x non-decreasing, and every kept point is one of the input's; the
/// input is returned unchanged when it already has no more than 2 × columns points (or
/// `columns` < 1). Points whose x or y is not finite are dropped. O(n).
[[nodiscard]] QList<QPointF> downsampleMinMax(const QList<QPointF>& points, int columns);

/// The pixel columns to thin a chart's series to: the panel's width at twice its pixels (the
/// PNG export draws at 2×), and at least 1024 so a chart drawn before it is laid out (or
/// enlarged later) keeps its detail.
[[nodiscard]] int chartColumns(int panel_width_px);

} // namespace gpuplan::gui
