#include "gui/headless_plot.hpp"

#include "gui/analysis.hpp"
#include "gui/chart_adapter.hpp"
#include "gui/ui_util.hpp"
#include "model/error.hpp"
#include "sim/simulate.hpp"

#include <QCoreApplication>
#include <QDir>

#include <algorithm>
#include <functional>

namespace gpuplan::gui {

namespace {

/// Draws one chart off screen at `size` and saves it as <key>.png.
void render(const QString& key, const QDir& dir, QSize size, PlotFiles& out,
            const std::function<void(ChartPanel&)>& fill) {
    ChartPanel panel(key);
    draw_offscreen(panel, size, fill);
    const QString path = dir.filePath(key + QStringLiteral(".png"));
    if (!panel.hasChart()) {
        out.notes << key + QStringLiteral(": ") + panel.message();
        return;
    }
    if (!panel.savePng(path)) {
        throw InputError(path.toStdString() + ": cannot write the chart; check the folder");
    }
    out.files << path;
}

} // namespace

void draw_offscreen(ChartPanel& panel, QSize size, const std::function<void(ChartPanel&)>& fill) {
    panel.setAttribute(Qt::WA_DontShowOnScreen, true);
    panel.resize(size);
    fill(panel);
    panel.show();
    QCoreApplication::processEvents();
}

PlotFiles render_plots(const model::Scenario& s, const Core& core, const QString& folder,
                       bool simulate, std::optional<int> requests, QSize size) {
    QDir dir(folder);
    if (!dir.exists() && !QDir().mkpath(folder)) {
        throw InputError(folder.toStdString() + ": cannot create the folder");
    }
    PlotFiles out;
    AnalysisParts parts;
    parts.what_ifs = false;
    const Analysis a = analyze(s, core, parts);
    const auto& e = a.serving();
    render(QStringLiteral("memory"), dir, size, out,
           [&](ChartPanel& p) { ChartAdapter::memory(p, e.memory); });
    if (e.memory.fits) {
        render(QStringLiteral("roofline"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::roofline(p, s.deployment, e); });
    } else {
        out.notes << QStringLiteral("roofline: the deployment does not fit");
    }
    if (a.cost) {
        render(QStringLiteral("monthly_cost"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::monthlyCost(p, *a.cost); });
        const int months = static_cast<int>(s.cost.amortization_years * 12 + 0.5);
        render(QStringLiteral("rent_vs_buy"), dir, size, out, [&](ChartPanel& p) {
            ChartAdapter::rentVsBuy(p, *a.cost,
                                    std::max(months, a.cost->break_even_month.value_or(0) + 6));
        });
    } else {
        out.notes << QStringLiteral("cost: ") + qs(a.cost_error);
    }
    if (a.rack) {
        render(QStringLiteral("rack_limits"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::rackLimits(p, *a.rack); });
    } else {
        out.notes << QStringLiteral("racks: ") + qs(a.rack_error);
    }
    if (a.training) {
        render(QStringLiteral("training_memory"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::trainingMemory(p, *a.training); });
        render(QStringLiteral("step_breakdown"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::stepBreakdown(p, a.training->result.step); });
    } else if (s.training) {
        out.notes << QStringLiteral("training: ") + qs(a.training_error);
    }
    if (simulate) {
        sim::SimOptions o;
        o.keep_requests = true;
        o.requests = requests;
        o.profile = core.profile_for(s.deployment.gpu);
        o.node = core.node_of(s);
        const sim::SimResult r = sim::simulate(s, o);
        if (!r.ok) {
            QStringList reasons;
            for (const auto& x : r.reasons) {
                reasons << qs(x);
            }
            out.notes << QStringLiteral("simulation: nothing ran: ") +
                             reasons.join(QStringLiteral("; "));
            return out;
        }
        using L = ChartAdapter::Latency;
        render(QStringLiteral("ttft_cdf"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::latencyCdf(p, r, L::Ttft, s.slo.ttft); });
        render(QStringLiteral("tpot_cdf"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::latencyCdf(p, r, L::Tpot, s.slo.tpot); });
        render(QStringLiteral("e2e_cdf"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::latencyCdf(p, r, L::E2e, s.slo.e2e); });
        render(QStringLiteral("throughput"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::throughput(p, r); });
        render(QStringLiteral("queue"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::queue(p, r); });
        render(QStringLiteral("kv_use"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::kvUse(p, r); });
        render(QStringLiteral("power"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::power(p, r); });
        render(QStringLiteral("slo_attainment"), dir, size, out,
               [&](ChartPanel& p) { ChartAdapter::sloAttainment(p, r); });
    }
    return out;
}

} // namespace gpuplan::gui
