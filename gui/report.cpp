#include "gui/report.hpp"

#include "gui/chart_adapter.hpp"
#include "gui/curve_view.hpp"
#include "gui/headless_plot.hpp"
#include "gui/rack_view.hpp"
#include "gui/ui_util.hpp"
#include "hwdb/profile_loader.hpp"
#include "hwdb/scenario_writer.hpp"
#include "model/error.hpp"
#include "model/error_bands.hpp"
#include "model/precision.hpp"

#include <QBuffer>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <functional>

namespace gpuplan::gui {

QString app_version() {
#ifdef GPUPLAN_VERSION
    return QStringLiteral(GPUPLAN_VERSION);
#else
    return QStringLiteral("unknown");
#endif
}

QString app_commit() {
#ifdef GPUPLAN_COMMIT
    return QStringLiteral(GPUPLAN_COMMIT);
#else
    return {};
#endif
}

namespace {

/// `key` rendered off screen by `fill`, as PNG bytes (ChartPanel::savePng: twice the size).
QByteArray chart_png(const QString& key, QSize size, const std::function<void(ChartPanel&)>& fill,
                     const QDir& dir) {
    ChartPanel panel(key);
    draw_offscreen(panel, size, fill);
    const QString path = dir.filePath(key + QStringLiteral(".png"));
    if (!panel.hasChart() || !panel.savePng(path)) {
        return {};
    }
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QByteArray image_png(const QImage& img) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    if (!buffer.open(QIODevice::WriteOnly) || !img.save(&buffer, "PNG")) {
        return {};
    }
    return bytes;
}

QString sources_text(const hwdb::Database& db, const std::string& tags) {
    QStringList out;
    const QStringList list = qs(tags).split(u' ', Qt::SkipEmptyParts);
    for (const QString& tag : list) {
        const auto it = db.sources().find(tag.toStdString());
        out << (it == db.sources().end() ? tag
                                         : QStringLiteral("[%1] %2 (%3)")
                                               .arg(tag, qs(it->second.title), qs(it->second.url)));
    }
    return out.isEmpty() ? QObject::tr("no source tags") : out.join(QStringLiteral("; "));
}

QString prices_text(const std::vector<model::PriceEstimate>& prices) {
    QStringList out;
    for (const auto& p : prices) {
        out << QStringLiteral("%1 (%2, %3)")
                   .arg(qs(model::to_string(p.price)), qs(p.date), qs(p.source));
    }
    return out.join(QStringLiteral("; "));
}

} // namespace

ReportInputs gather_report(const model::Scenario& s, const Core& core, bool charts) {
    ReportInputs in;
    in.scenario_yaml = hwdb::scenario_to_yaml(s);
    in.analysis = analyze(s, core);
    try {
        in.curve = plan::load_curve(curve_candidates(s, core), plan::default_axis(s));
    } catch (const Error& e) {
        in.curve_error = e.what();
    }
    in.version = app_version();
    in.commit = app_commit();
    in.generated = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);

    const hwdb::Database& db = core.db();
    const model::Deployment& d = s.deployment;
    in.sources.push_back(
        {QObject::tr("accelerator %1").arg(qs(d.gpu.name)), sources_text(db, d.gpu.sources)});
    if (!d.gpu.prices.empty()) {
        in.sources.push_back({QObject::tr("accelerator prices"), prices_text(d.gpu.prices)});
    }
    if (const model::ServerSpec* server = core.server_of(s)) {
        in.sources.push_back(
            {QObject::tr("node %1").arg(qs(server->name)), sources_text(db, server->sources)});
        if (!server->prices.empty()) {
            in.sources.push_back({QObject::tr("node prices"), prices_text(server->prices)});
        }
    }
    in.sources.push_back({QObject::tr("link %1").arg(qs(d.intra_node_link.name)),
                          sources_text(db, d.intra_node_link.sources)});
    const model::Provenance& prov = in.analysis.serving().provenance;
    in.sources.push_back(
        {QObject::tr("efficiency profile"),
         QStringLiteral("%1%2: %3")
             .arg(qs(model::to_string(prov.kind)),
                  prov.file.empty() ? QString()
                                    : QStringLiteral(" (") + qs(hwdb::shown_path(prov.file)) +
                                          QStringLiteral(")"),
                  qs(prov.description))});
    const model::ErrorBand& band = in.analysis.serving().error_band;
    if (band.points > 0) {
        in.sources.push_back({QObject::tr("profile error"),
                              QObject::tr("MAPE %1, P90 %2 over %3 points (%4)")
                                  .arg(formatPercent(band.mape), formatPercent(band.p90))
                                  .arg(band.points)
                                  .arg(qs(band.validated_on))});
    }

    if (!charts) {
        return in;
    }
    QTemporaryDir tmp;
    if (!tmp.isValid()) {
        return in;
    }
    const QDir dir(tmp.path());
    // The app's analytic charts, drawn as gpuplan-plot draws them.
    const PlotFiles plots = render_plots(s, core, tmp.path(), false, std::nullopt, QSize(800, 480));
    for (const QString& f : plots.files) {
        QFile file(f);
        if (file.open(QIODevice::ReadOnly)) {
            in.images.push_back({QFileInfo(f).completeBaseName(), file.readAll()});
        }
    }
    if (in.curve) {
        const plan::LoadCurve& c = *in.curve;
        const bool rate = c.axis == plan::LoadAxis::RequestRate;
        const QString x =
            rate ? QObject::tr("offered load (requests/s)") : QObject::tr("sequences in flight");
        std::vector<ChartAdapter::CurveSeries> thr, ttft, tpot;
        for (const auto& k : c.curves) {
            ChartAdapter::CurveSeries t{qs(k.name), {}, {}, {}, k.max_load};
            ChartAdapter::CurveSeries f = t, g = t;
            for (const auto& p : k.points) {
                t.analytic.emplace_back(p.load, p.throughput);
                f.analytic.emplace_back(p.load, p.ttft.si() * 1e3);
                g.analytic.emplace_back(p.load, p.tpot.si() * 1e3);
            }
            thr.push_back(t);
            ttft.push_back(f);
            tpot.push_back(g);
        }
        const auto ms = [](const std::optional<Seconds>& v) {
            return v ? std::optional<double>(v->si() * 1e3) : std::nullopt;
        };
        const QSize size(800, 480);
        in.images.push_back({QStringLiteral("curve_throughput"),
                             chart_png(
                                 QStringLiteral("curve_throughput"), size,
                                 [&](ChartPanel& p) {
                                     ChartAdapter::loadCurve(p, QObject::tr("Throughput"), x,
                                                             QObject::tr("output tokens/s"), thr,
                                                             std::nullopt);
                                 },
                                 dir)});
        in.images.push_back({QStringLiteral("curve_ttft"),
                             chart_png(
                                 QStringLiteral("curve_ttft"), size,
                                 [&](ChartPanel& p) {
                                     ChartAdapter::loadCurve(p, QObject::tr("Time to first token"),
                                                             x, QObject::tr("TTFT (ms)"), ttft,
                                                             ms(c.slo.ttft));
                                 },
                                 dir)});
        in.images.push_back({QStringLiteral("curve_tpot"),
                             chart_png(
                                 QStringLiteral("curve_tpot"), size,
                                 [&](ChartPanel& p) {
                                     ChartAdapter::loadCurve(
                                         p, QObject::tr("Time per output token"), x,
                                         QObject::tr("TPOT (ms)"), tpot, ms(c.slo.tpot));
                                 },
                                 dir)});
    }
    if (in.analysis.rack) {
        in.images.push_back({QStringLiteral("racks"),
                             image_png(render_racks(rack_drawing(in.analysis), QSize(900, 520)))});
    }
    std::erase_if(in.images, [](const ReportImage& i) { return i.png.isEmpty(); });
    return in;
}

namespace {

QString esc(const QString& s) {
    return s.toHtmlEscaped();
}

QString esc(const std::string& s) {
    return qs(s).toHtmlEscaped();
}

/// A two-column table of figures.
struct Figures {
    QString html;
    void add(const QString& name, const QString& value) {
        html += QStringLiteral("<tr><th>%1</th><td>%2</td></tr>\n").arg(esc(name), esc(value));
    }
    [[nodiscard]] QString table() const {
        return QStringLiteral("<table class=\"figures\">\n") + html + QStringLiteral("</table>\n");
    }
};

QString section(const QString& title, const QString& body) {
    return QStringLiteral("<section><h2>%1</h2>\n%2</section>\n").arg(esc(title), body);
}

QString note(const QString& text) {
    return QStringLiteral("<p class=\"note\">%1</p>\n").arg(esc(text));
}

} // namespace

QString html_report(const ReportInputs& in) {
    const Analysis& a = in.analysis;
    const model::Scenario& s = a.scenario;
    const model::ServingEstimate& e = a.serving();
    const model::Deployment& d = s.deployment;
    QString body;

    // Summary.
    Figures sum;
    sum.add(QObject::tr("Model"), qs(d.model.name));
    sum.add(QObject::tr("Accelerator"), QObject::tr("%1 × %2").arg(d.gpus()).arg(qs(d.gpu.name)));
    sum.add(QObject::tr("Layout"),
            QObject::tr("TP %1, PP %2, %3 replicas").arg(d.par.tp).arg(d.par.pp).arg(d.par.dp));
    sum.add(QObject::tr("Precision"), QObject::tr("weights %1, KV cache %2")
                                          .arg(qs(d.prec.weights.name), qs(d.prec.kv_cache.name)));
    sum.add(QObject::tr("Load"), qs(e.operating_point.why));
    body += section(QObject::tr("Configuration"), sum.table());

    // The estimate.
    Figures est;
    est.add(QObject::tr("Fits in memory"), e.memory.fits ? QObject::tr("yes") : QObject::tr("no"));
    est.add(QObject::tr("Weights per GPU"), formatGiB(e.memory.weights));
    est.add(QObject::tr("KV cache pool per GPU"), formatGiB(e.memory.kv_budget));
    est.add(QObject::tr("Max concurrency (sequences)"), formatNumber(e.memory.max_concurrency, 0));
    // Each figure with its measured error band under it, as `estimate` and the estimate view
    // print it (one table, model::kEstimateFigureBands; one text, model::band_text).
    const auto figure = [&](const QString& name, const QString& value, std::string_view key) {
        est.add(name, value);
        for (const auto& [k, b] : a.bands) {
            if (k == key) {
                est.add(name + QObject::tr(": error band"), qs(model::band_text(b)));
            }
        }
    };
    figure(QObject::tr("TTFT, lone request"), formatTime(e.ttft), "ttft");
    figure(QObject::tr("TTFT at the load"), formatTime(e.ttft_loaded), "ttft_loaded");
    figure(QObject::tr("TPOT at the load"), formatTime(e.tpot), "tpot");
    figure(QObject::tr("Throughput (output tokens/s)"), formatNumber(e.throughput, 0),
           "throughput");
    figure(QObject::tr("Peak throughput (output tokens/s)"), formatNumber(e.peak_throughput, 0),
           "peak_throughput");
    est.add(QObject::tr("Sequences running per replica"), QString::number(e.running));
    // The profile's per-kernel error: one kernel's, not a figure's (the bands above are).
    est.add(QObject::tr("Per-kernel error (profile P90)"), formatPercent(e.error_band.p90));
    body += section(QObject::tr("Estimate (analytic)"), est.table());

    // Binding resources.
    Figures bind;
    bind.add(QObject::tr("Prefill binds on"), qs(model::to_string(a.bottleneck.prefill.binding)));
    bind.add(QObject::tr("Prefill"), qs(a.bottleneck.prefill.detail));
    bind.add(QObject::tr("Decode binds on"), qs(model::to_string(a.bottleneck.decode.binding)));
    bind.add(QObject::tr("Decode"), qs(a.bottleneck.decode.detail));
    if (a.bottleneck.capacity_binds) {
        bind.add(QObject::tr("Capacity"), qs(a.bottleneck.capacity_detail));
    }
    body += section(QObject::tr("Binding resources"), bind.table());

    // What-ifs.
    if (!a.what_ifs.empty()) {
        QString t = QStringLiteral(
            "<table class=\"grid\"><tr><th>what-if</th><th>change</th><th>GPUs</th><th>TTFT</th>"
            "<th>TPOT</th><th>throughput (tok/s)</th><th>× throughput</th><th>note</th></tr>\n");
        for (const model::WhatIf& w : a.what_ifs) {
            t += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td><td>%6"
                                "</td><td>%7</td><td>%8</td></tr>\n")
                     .arg(esc(w.name), esc(w.change))
                     .arg(w.gpus)
                     .arg(w.applicable ? esc(formatTime(w.ttft)) : QStringLiteral("–"),
                          w.applicable ? esc(formatTime(w.tpot)) : QStringLiteral("–"),
                          w.applicable ? esc(formatNumber(w.throughput, 0)) : QStringLiteral("–"),
                          w.applicable ? QString::number(w.throughput_gain, 'f', 2)
                                       : QStringLiteral("–"),
                          esc(w.note));
        }
        body += section(QObject::tr("What-ifs"), t + QStringLiteral("</table>\n"));
    }

    // Sizing curves.
    if (in.curve) {
        const plan::LoadCurve& c = *in.curve;
        const bool rate = c.axis == plan::LoadAxis::RequestRate;
        const QString unit = rate ? QObject::tr("requests/s") : QObject::tr("sequences");
        QString t = QStringLiteral("<table class=\"grid\"><tr><th>GPU</th><th>highest load meeting "
                                   "the SLO (%1)</th></tr>\n")
                        .arg(esc(unit));
        for (const auto& k : c.curves) {
            t += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>\n")
                     .arg(esc(k.name), !k.error.empty() ? esc(k.error)
                                       : k.max_load ? esc(formatNumber(*k.max_load, rate ? 2 : 0))
                                                    : QObject::tr("none"));
        }
        t += QStringLiteral("</table>\n");
        t += note(QObject::tr("Analytic mean values without queueing (plan::load_curve, as "
                              "`gpuplan curve` prints); the SLO percentile is judged by the "
                              "simulator."));
        body += section(QObject::tr("Sizing curves"), t);
    } else if (!in.curve_error.empty()) {
        body += section(QObject::tr("Sizing curves"), note(qs(in.curve_error)));
    }

    // Power.
    if (a.power) {
        const model::PowerEstimate& p = *a.power;
        Figures f;
        f.add(QObject::tr("GPU power limit"), formatWatts(p.limit.per_gpu));
        f.add(QObject::tr("GPU average at the load"), formatWatts(p.gpu_average));
        f.add(QObject::tr("Deployment average (wall)"), formatWatts(p.deployment_average));
        f.add(QObject::tr("Deployment peak (wall)"), formatWatts(p.deployment_peak));
        f.add(QObject::tr("Node peak (wall)"), formatWatts(p.node_peak));
        f.add(QObject::tr("Nodes"), QString::number(p.nodes));
        f.add(QObject::tr("Energy per output token"),
              QObject::tr("%1 J").arg(p.energy_per_token_j, 0, 'f', 2));
        body += section(QObject::tr("Power"), f.table());
    } else {
        body += section(QObject::tr("Power"), note(qs(a.power_error)));
    }

    // Racks.
    if (a.rack) {
        const model::RackPlan& r = *a.rack;
        Figures f;
        f.add(QObject::tr("Racks"), QString::number(r.racks));
        f.add(QObject::tr("Nodes"), QString::number(r.nodes));
        f.add(QObject::tr("Nodes per rack"), QString::number(r.nodes_per_rack));
        f.add(QObject::tr("Binding limit"), qs(model::to_string(r.binding)));
        f.add(QObject::tr("Node power (wall, at its limit)"), formatWatts(r.node_power));
        f.add(QObject::tr("Rack power"), formatWatts(r.rack_power));
        f.add(QObject::tr("PDU capacity per rack"), formatWatts(r.pdu_capacity));
        for (const auto& w : r.warnings) {
            f.add(QObject::tr("Warning"), qs(w));
        }
        body += section(QObject::tr("Racks"), f.table());
    } else {
        body += section(QObject::tr("Racks"), note(qs(a.rack_error)));
    }

    // Cost.
    if (a.cost) {
        const model::CostEstimate& c = *a.cost;
        Figures f;
        f.add(QObject::tr("Capex"), formatMoney(c.capex));
        f.add(QObject::tr("Own, per month"), formatMoney(c.own_monthly));
        f.add(QObject::tr("Rent, per month"), formatMoney(c.rent_monthly));
        f.add(QObject::tr("Own, per million output tokens"), formatMoney(c.own_per_million_tokens));
        f.add(QObject::tr("Rent, per million output tokens"),
              formatMoney(c.rent_per_million_tokens));
        f.add(QObject::tr("Output tokens per month"), formatNumber(c.tokens, 0));
        f.add(QObject::tr("Break-even month"),
              c.break_even_month ? QString::number(*c.break_even_month) : QObject::tr("none"));
        body += section(QObject::tr("Cost"), f.table());
    } else {
        body += section(QObject::tr("Cost"), note(qs(a.cost_error)));
    }

    // Charts.
    if (!in.images.empty()) {
        QString imgs;
        for (const ReportImage& i : in.images) {
            imgs += QStringLiteral("<figure><img alt=\"%1\" src=\"data:image/png;base64,%2\">"
                                   "<figcaption>%1</figcaption></figure>\n")
                        .arg(esc(i.title), QString::fromLatin1(i.png.toBase64()));
        }
        body += section(QObject::tr("Charts"), imgs);
    }

    // Provenance.
    Figures prov;
    prov.add(QObject::tr("gpuplan"), in.version);
    prov.add(QObject::tr("commit"), in.commit.isEmpty() ? QObject::tr("unknown") : in.commit);
    prov.add(QObject::tr("generated (UTC)"), in.generated);
    for (const ReportSource& src : in.sources) {
        prov.add(src.what, src.text);
    }
    body += section(QObject::tr("Provenance"), prov.table());
    body += section(QObject::tr("Scenario (YAML, as gpuplan reads it)"),
                    QStringLiteral("<pre>%1</pre>\n").arg(esc(in.scenario_yaml)));

    const QString title = QObject::tr("gpuplan report: %1").arg(qs(s.name));
    return QStringLiteral(
               "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<title>%1</title>\n<style>\n"
               "body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}\n"
               "h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc}\n"
               "table{border-collapse:collapse;margin:.5em 0}\n"
               "th,td{padding:.2em .6em;text-align:left;vertical-align:top}\n"
               "table.grid td,table.grid th{border:1px solid #ddd}\n"
               "table.figures th{font-weight:normal;color:#555}\n"
               "figure{display:inline-block;margin:.5em}img{max-width:480px}\n"
               "pre{background:#f5f5f5;padding:.6em;overflow:auto}.note{color:#555}\n"
               "</style></head>\n<body>\n<h1>%1</h1>\n%2</body></html>\n")
        .arg(esc(title), body);
}

bool write_report(const QString& path, const QString& html) {
    return writeFileBytes(path, html.toUtf8());
}

bool write_scenario_report(const model::Scenario& s, const Core& core, const QString& path,
                           QString* error) {
    try {
        if (write_report(path, html_report(gather_report(s, core)))) {
            return true;
        }
        if (error) {
            *error = QObject::tr("%1: cannot write the report; check the folder").arg(path);
        }
    } catch (const Error& e) {
        if (error) {
            *error = qs(e.what());
        }
    }
    return false;
}

} // namespace gpuplan::gui
