#pragma once
/// The app's charts rendered to PNG files without a display (Qt's offscreen platform), for
/// `gpuplan-plot` and so for the CLI's `--plot DIR`. The same ChartAdapter draws them as in
/// the desktop app.

#include "gui/analysis.hpp"
#include "hwdb/database.hpp"
#include "model/scenario.hpp"

#include <QSize>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace gpuplan::gui {

class ChartPanel;

/// What render_plots wrote, and what it could not draw (one line each).
struct PlotFiles {
    QStringList files;
    QStringList notes;
};

/// Renders the scenario's charts as PNG files into `folder` (created when missing): the
/// analytic ones (memory.png, roofline.png, monthly_cost.png, rent_vs_buy.png,
/// rack_limits.png; training_memory.png and step_breakdown.png with a training job) and, with
/// `simulate`, the simulation's (ttft_cdf.png, tpot_cdf.png, e2e_cdf.png, throughput.png,
/// queue.png, kv_use.png, power.png, slo_attainment.png). `requests` overrides the simulated
/// request count. Needs a QApplication. Throws InputError when the scenario cannot be estimated or
/// simulated, or the folder cannot be written.
/// Lays `panel` out off screen at `size`, lets `fill` draw its chart and processes the events
/// that draw it (the step before ChartPanel::savePng for a chart no window shows).
void draw_offscreen(ChartPanel& panel, QSize size, const std::function<void(ChartPanel&)>& fill);

PlotFiles render_plots(const model::Scenario& s, const Core& core, const QString& folder,
                       bool simulate, std::optional<int> requests = std::nullopt,
                       QSize size = QSize(1100, 680));

} // namespace gpuplan::gui
