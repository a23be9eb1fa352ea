#include "gui/chart_adapter.hpp"

#include "gui/downsample.hpp"
#include "gui/sim_charts.hpp"
#include "gui/ui_util.hpp"
#include "model/precision.hpp"

#include <QBuffer>
#include <QEvent>
#include <QGraphicsOpacityEffect>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QStackedLayout>
#include <QSvgGenerator>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuplan::gui {

// ---- ChartPanel ----

ChartPanel::ChartPanel(QString key, QWidget* parent) : QWidget(parent), key_(std::move(key)) {
    stack_ = new QStackedLayout(this);
    stack_->setContentsMargins(0, 0, 0, 0);
    view_ = new QChartView(this);
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setMinimumSize(260, 200);
    message_ = new QLabel(this);
    message_->setAlignment(Qt::AlignCenter);
    message_->setWordWrap(true);
    message_->setStyleSheet(QStringLiteral("color: #666; padding: 12px;"));
    stack_->addWidget(view_);
    stack_->addWidget(message_);
    showMessage(tr("Nothing to show yet."));
}

void ChartPanel::showMessage(const QString& text) {
    message_->setText(text);
    stack_->setCurrentWidget(message_);
}

bool ChartPanel::hasChart() const {
    return stack_->currentWidget() == view_ && view_->chart() != nullptr;
}

void ChartPanel::setChart(QChart* chart) {
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setMargins(QMargins(4, 4, 4, 4));
    // No axis label is ever elided ("5000…"): value axes carry short k/M/G ticks, and bar
    // categories that do not fit side by side are turned.
    for (QAbstractAxis* a : chart->axes()) {
        a->setTruncateLabels(false);
        if (auto* cat = qobject_cast<QBarCategoryAxis*>(a)) {
            int chars = 0;
            int longest = 0;
            for (const QString& c : cat->categories()) {
                chars += static_cast<int>(c.size()) + 2;
                longest = std::max(longest, static_cast<int>(c.size()));
            }
            if (chars > 40) {
                // Short labels stand upright (none overlaps the next); long ones lean.
                cat->setLabelsAngle(longest <= 12 ? -90 : -30);
            }
        }
    }
    QChart* old = view_->chart();
    view_->setChart(chart);
    // QChartView does not delete the chart it held before.
    delete old;
    stack_->setCurrentWidget(view_);
}

void ChartPanel::changeEvent(QEvent* e) {
    if (e->type() == QEvent::EnabledChange) {
        // A disabled chart view draws as an enabled one: fade it, so out-of-date figures are
        // visibly greyed like the tables beside them.
        if (isEnabled()) {
            view_->setGraphicsEffect(nullptr);
        } else if (view_->graphicsEffect() == nullptr) {
            auto* fade = new QGraphicsOpacityEffect(view_);
            fade->setOpacity(0.3);
            view_->setGraphicsEffect(fade);
        }
    }
    QWidget::changeEvent(e);
}

bool ChartPanel::faded() const {
    return view_->graphicsEffect() != nullptr;
}

int ChartPanel::seriesCount() const {
    return hasChart() ? static_cast<int>(view_->chart()->series().size()) : 0;
}

int ChartPanel::pointCount() const {
    if (!hasChart()) {
        return 0;
    }
    int n = 0;
    for (QAbstractSeries* s : view_->chart()->series()) {
        if (auto* xy = qobject_cast<QXYSeries*>(s)) {
            n += static_cast<int>(xy->count());
        } else if (auto* bars = qobject_cast<QAbstractBarSeries*>(s)) {
            for (QBarSet* set : bars->barSets()) {
                n += static_cast<int>(set->count());
            }
        }
    }
    return n;
}

QStringList ChartPanel::axisLabels(Qt::Orientation o) const {
    QStringList labels;
    if (!hasChart()) {
        return labels;
    }
    for (QAbstractAxis* a : view_->chart()->axes(o)) {
        if (auto* cat = qobject_cast<QCategoryAxis*>(a); cat && cat->isVisible()) {
            labels << cat->categoriesLabels();
        }
    }
    return labels;
}

std::pair<double, double> ChartPanel::axisRange(Qt::Orientation o) const {
    if (hasChart()) {
        for (QAbstractAxis* a : view_->chart()->axes(o)) {
            if (auto* v = qobject_cast<QValueAxis*>(a); v && v->isVisible()) {
                return {v->min(), v->max()};
            }
        }
    }
    return {0.0, 0.0};
}

QString ChartPanel::axisTitle(Qt::Orientation o) const {
    if (hasChart()) {
        for (QAbstractAxis* a : view_->chart()->axes(o)) {
            if (a->isVisible()) {
                return a->titleText();
            }
        }
    }
    return {};
}

bool ChartPanel::labelsTruncated() const {
    if (!hasChart()) {
        return false;
    }
    const auto axes = view_->chart()->axes();
    return std::any_of(axes.begin(), axes.end(),
                       [](const QAbstractAxis* a) { return a->labelsTruncated(); });
}

QStringList ChartPanel::seriesNames() const {
    QStringList names;
    if (hasChart()) {
        for (const QAbstractSeries* s : view_->chart()->series()) {
            names << s->name();
        }
    }
    return names;
}

QString ChartPanel::message() const {
    return hasChart() ? QString() : message_->text();
}

std::vector<std::pair<double, double>> ChartPanel::seriesPoints(int i) const {
    std::vector<std::pair<double, double>> out;
    if (!hasChart() || i < 0 || i >= view_->chart()->series().size()) {
        return out;
    }
    if (auto* xy = qobject_cast<QXYSeries*>(view_->chart()->series().at(i))) {
        for (const QPointF& pt : xy->points()) {
            out.emplace_back(pt.x(), pt.y());
        }
    }
    return out;
}

QString ChartPanel::title() const {
    return hasChart() ? view_->chart()->title() : QString();
}

bool ChartPanel::savePng(const QString& path) const {
    if (!hasChart()) {
        return false;
    }
    // Encoded in memory, then written by the one writer (no half file on a full disk).
    // At twice the panel's size (sharp on high-density screens and in reports).
    constexpr int kScale = 2;
    QImage image(view_->size() * kScale, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(kScale);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        view_->render(&painter);
    }
    QByteArray bytes;
    QBuffer buffer(&bytes);
    return buffer.open(QIODevice::WriteOnly) && image.save(&buffer, "PNG") &&
           writeFileBytes(path, bytes);
}

bool ChartPanel::saveSvg(const QString& path) const {
    if (!hasChart()) {
        return false;
    }
    QByteArray bytes;
    QBuffer buffer(&bytes);
    if (!buffer.open(QIODevice::WriteOnly)) {
        return false;
    }
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(view_->size());
    svg.setViewBox(QRect(QPoint(0, 0), view_->size()));
    svg.setTitle(title());
    QPainter painter;
    if (!painter.begin(&svg)) {
        return false;
    }
    view_->render(&painter);
    return painter.end() && writeFileBytes(path, bytes);
}

// ---- ChartAdapter ----

namespace {

QChart* newChart(const QString& title, bool legend = true) {
    auto* c = new QChart();
    c->setTitle(title);
    c->legend()->setVisible(legend);
    c->legend()->setAlignment(Qt::AlignBottom);
    return c;
}

/// A step of 1, 2, 2.5 or 5 × 10^k giving about `target` intervals over `span`.
double niceStep(double span, int target) {
    if (!(span > 0) || !std::isfinite(span)) {
        return 1.0;
    }
    const double raw = span / target;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : {1.0, 2.0, 2.5, 5.0}) {
        if (raw <= m * p * 1.0000001) {
            return m * p;
        }
    }
    return 10.0 * p;
}

/// An axis whose labels sit on the tick values given, written by formatTicks (k, M, G) and
/// never elided. A QCategoryAxis is a QValueAxis: series attach to it as to any linear axis.
QCategoryAxis* tickedAxis(QChart* c, Qt::Alignment where, const QString& title, double min,
                          double max, const std::vector<double>& ticks, const QStringList& labels) {
    auto* a = new QCategoryAxis();
    a->setTitleText(title);
    a->setRange(min, max);
    a->setStartValue(min);
    a->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    a->setTruncateLabels(false);
    for (std::size_t i = 0; i < ticks.size(); ++i) {
        a->append(labels.at(static_cast<int>(i)), ticks[i]);
    }
    c->addAxis(a, where);
    return a;
}

/// A linear axis from `min` to `max` with about five ticks at round values.
QValueAxis* valueAxis(QChart* c, Qt::Alignment where, const QString& title, double min,
                      double max) {
    const double step = niceStep(max - min, 5);
    std::vector<double> ticks;
    const double first = std::ceil(min / step - 1e-9);
    for (int i = 0;; ++i) {
        const double t = (first + i) * step;
        if (t > max + step * 1e-9) {
            break;
        }
        ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    }
    return tickedAxis(c, where, title, min, max, ticks, formatTicks(ticks));
}

/// A logarithmic axis for values plotted as log10(value): from 10^lo to 10^hi, a tick at each
/// power of ten labelled with its value ("0.1", "10", "1k").
QValueAxis* log10Axis(QChart* c, Qt::Alignment where, const QString& title, int lo, int hi) {
    std::vector<double> ticks;
    std::vector<double> values;
    const int every = std::max(1, (hi - lo + 7) / 8); // at most about eight labels
    for (int k = lo; k <= hi; k += every) {
        ticks.push_back(k);
        values.push_back(std::pow(10.0, k));
    }
    auto* a = tickedAxis(c, where, title, lo, hi, ticks, formatTicks(values));
    a->setMinorTickCount(8);
    return a;
}

void attach(QAbstractSeries* s, QAbstractAxis* x, QAbstractAxis* y) {
    s->attachAxis(x);
    s->attachAxis(y);
}

/// A "nice" upper bound for an axis.
double niceMax(double v) {
    if (!(v > 0) || !std::isfinite(v)) {
        return 1.0;
    }
    const double p = std::pow(10.0, std::floor(std::log10(v)));
    for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (v <= m * p) {
            return m * p;
        }
    }
    return 10.0 * p;
}

QLineSeries* lineSeries(const QString& name, const QColor& color) {
    auto* s = new QLineSeries();
    s->setName(name);
    QPen pen(color);
    pen.setWidthF(2.0);
    s->setPen(pen);
    return s;
}

/// Lines that may coincide stay visible: the first is wide and solid, each later one narrower
/// and dashed, so a line drawn over another leaves the one below showing on both sides.
void distinguish(const std::vector<QLineSeries*>& lines) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
        QPen pen = lines[i]->pen();
        pen.setWidthF(std::max(1.5, 3.5 - 1.0 * static_cast<double>(i)));
        pen.setStyle(i == 0 ? Qt::SolidLine : Qt::DashLine);
        lines[i]->setPen(pen);
    }
}

} // namespace

void ChartAdapter::memory(ChartPanel& p, const model::MemoryEstimate& m) {
    const double gib = kGiB;
    const double overhead = m.overhead.si() / gib;
    const double kv = std::max(0.0, m.kv_budget.si()) / gib;
    const double free = m.free.si() / gib;
    const QString title = m.fits ? QObject::tr("Memory per GPU: %1 of %2 GiB used")
                                       .arg(QString::number(m.total_used.si() / gib, 'f', 1),
                                            QString::number(m.capacity.si() / gib, 'f', 1))
                                 : QObject::tr("Memory per GPU: does NOT fit (%1 GiB short)")
                                       .arg(QString::number(std::fabs(free), 'f', 1));
    QChart* c = newChart(title);
    auto* series = new QHorizontalStackedBarSeries();
    const double span = std::max(m.capacity.si(), m.total_used.si()) / gib;
    const auto add = [&](const QString& name, double v, const char* color) {
        auto* set = new QBarSet(name);
        *set << v;
        set->setColor(QColor(QString::fromLatin1(color)));
        set->setBorderColor(QColor(QString::fromLatin1(color)));
        // A segment too narrow for its number shows none (the table below has it) rather than
        // numbers drawn over each other.
        if (v < 0.08 * span) {
            set->setLabelColor(Qt::transparent);
        }
        series->append(set);
    };
    add(QObject::tr("weights"), m.weights.si() / gib, "#3f51b5");
    add(QObject::tr("KV cache"), kv, "#26a69a");
    add(QObject::tr("activations"), m.activations.si() / gib, "#ffa726");
    add(QObject::tr("overhead"), overhead, "#8d6e63");
    add(QObject::tr("free"), std::max(0.0, free), "#cfd8dc");
    series->setBarWidth(0.6);
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value"));
    series->setLabelsPrecision(3);
    c->addSeries(series);
    auto* cat = new QBarCategoryAxis();
    cat->append(m.binding_stage > 0 ? QObject::tr("stage %1").arg(m.binding_stage)
                                    : QObject::tr("GPU"));
    c->addAxis(cat, Qt::AlignLeft);
    series->attachAxis(cat);
    const double total = span;
    auto* x =
        valueAxis(c, Qt::AlignBottom, QObject::tr("GiB (capacity %1)").arg(formatGiB(m.capacity)),
                  0, niceMax(total));
    series->attachAxis(x);
    // The capacity as a vertical line.
    auto* cap = lineSeries(QObject::tr("capacity"), QColor(QStringLiteral("#d32f2f")));
    cap->append(m.capacity.si() / gib, -0.5);
    cap->append(m.capacity.si() / gib, 0.5);
    c->addSeries(cap);
    cap->attachAxis(x);
    auto* hidden = new QValueAxis();
    hidden->setRange(-0.5, 0.5);
    hidden->setVisible(false);
    c->addAxis(hidden, Qt::AlignRight);
    cap->attachAxis(hidden);
    p.setChart(c);
}

void ChartAdapter::roofline(ChartPanel& p, const model::Deployment& d,
                            const model::ServingEstimate& e) {
    const auto peak = d.gpu.dense.for_type(model::gemm_compute_type(d.prec));
    const double bw = d.gpu.memory_bandwidth.si();
    if (!peak || bw <= 0) {
        p.showMessage(QObject::tr("No roofline: %1 lists no peak for this compute path.")
                          .arg(qs(d.gpu.name)));
        return;
    }
    const double tflops = 1e12;
    const double peak_t = peak->si() / tflops;
    const double ridge = peak->si() / bw; // FLOP per byte where the roofs meet
    struct Point {
        QString name;
        double intensity;
        double achieved;
        QColor color;
    };
    std::vector<Point> points;
    const auto add = [&](const QString& name, const model::StepCost& s, const char* color) {
        if (s.bytes.si() > 0 && s.time.si() > 0 && s.flops.si() > 0) {
            points.push_back({name, s.flops.si() / s.bytes.si(),
                              s.flops.si() / s.time.si() / tflops,
                              QColor(QString::fromLatin1(color))});
        }
    };
    add(QObject::tr("prefill"), e.prefill_step, "#e65100");
    add(QObject::tr("decode ×%1").arg(e.running), e.decode_step, "#1565c0");
    double xmin = std::min(0.1, ridge / 1000);
    double xmax = std::max(ridge * 100, 1e4);
    double ymin = peak_t / 1e4;
    for (const auto& pt : points) {
        xmin = std::min(xmin, pt.intensity / 3);
        xmax = std::max(xmax, pt.intensity * 3);
        ymin = std::min(ymin, pt.achieved / 3);
    }
    // Plotted as log10 of the values on log10 axes (ticks at powers of ten, labelled with the
    // values), so every axis of every chart has the same tick labels.
    const int xlo = static_cast<int>(std::floor(std::log10(xmin)));
    const int xhi = static_cast<int>(std::ceil(std::log10(xmax)));
    const int ylo = static_cast<int>(std::floor(std::log10(std::max(ymin, 1e-6))));
    const int yhi = static_cast<int>(std::ceil(std::log10(peak_t * 1.5)));
    xmin = std::pow(10.0, xlo);
    xmax = std::pow(10.0, xhi);
    const auto lg = [](double v) { return std::log10(v); };

    QChart* c =
        newChart(QObject::tr("Roofline: %1, %2 path, per GPU")
                     .arg(qs(d.gpu.name),
                          qs(std::string(model::to_string(model::gemm_compute_type(d.prec))))));
    auto* x =
        log10Axis(c, Qt::AlignBottom, QObject::tr("arithmetic intensity (FLOP/byte)"), xlo, xhi);
    auto* y = log10Axis(c, Qt::AlignLeft, QObject::tr("TFLOP/s"), ylo, yhi);
    auto* roof =
        lineSeries(QObject::tr("roof (%1 TB/s, %2 TFLOP/s)")
                       .arg(QString::number(bw / 1e12, 'f', 2), QString::number(peak_t, 'f', 0)),
                   QColor(QStringLiteral("#424242")));
    roof->append(lg(xmin), lg(xmin * bw / tflops));
    roof->append(lg(ridge), lg(peak_t));
    roof->append(lg(xmax), lg(peak_t));
    c->addSeries(roof);
    attach(roof, x, y);
    for (const auto& pt : points) {
        auto* s = new QScatterSeries();
        s->setName(pt.name);
        // The numbers next to the point: FLOP per byte, TFLOP/s.
        s->setPointLabelsVisible(true);
        s->setPointLabelsClipping(false);
        s->setPointLabelsFormat(QStringLiteral("%1 FLOP/B, %2 TFLOP/s")
                                    .arg(formatTick(pt.intensity), formatTick(pt.achieved)));
        s->setColor(pt.color);
        s->setBorderColor(pt.color);
        s->setMarkerSize(13);
        s->append(lg(pt.intensity), lg(pt.achieved));
        c->addSeries(s);
        attach(s, x, y);
    }
    p.setChart(c);
}

void ChartAdapter::latencyCdf(ChartPanel& p, const sim::SimResult& r, Latency which,
                              std::optional<Seconds> slo) {
    latencyCdf(p, latency_cdf(r, which), which, slo);
}

void ChartAdapter::latencyCdf(ChartPanel& p, const LatencyCdf& cdf, Latency which,
                              std::optional<Seconds> slo) {
    const QString name = which == Latency::Ttft   ? QObject::tr("TTFT")
                         : which == Latency::Tpot ? QObject::tr("TPOT")
                                                  : QObject::tr("E2E latency");
    if (cdf.count == 0) {
        p.showMessage(QObject::tr("No completed request has a %1.").arg(name));
        return;
    }
    // Time in ms below one second of p99, else seconds.
    const bool ms = cdf.p99_s < 1.0;
    const double k = ms ? 1e3 : 1.0;
    QChart* c = newChart(QObject::tr("%1 CDF (%2 requests)").arg(name).arg(cdf.count));
    auto* s = lineSeries(name, QColor(QStringLiteral("#1565c0")));
    // The prepared points (a few thousand at most, thinned with their steps kept), scaled and
    // handed over at once: one replace instead of a signal per appended point.
    QList<QPointF> points = cdf.points;
    for (QPointF& pt : points) {
        pt.setX(pt.x() * k);
    }
    s->replace(points);
    c->addSeries(s);
    const double xmax = niceMax(std::max(cdf.max_s, slo ? slo->si() : 0.0) * k);
    auto* x = valueAxis(c, Qt::AlignBottom, ms ? QObject::tr("ms") : QObject::tr("s"), 0, xmax);
    auto* y = valueAxis(c, Qt::AlignLeft, QObject::tr("fraction of requests"), 0, 1);
    attach(s, x, y);
    if (slo) {
        auto* line = lineSeries(QObject::tr("SLO %1").arg(formatTime(*slo)),
                                QColor(QStringLiteral("#d32f2f")));
        line->append(slo->si() * k, 0);
        line->append(slo->si() * k, 1);
        c->addSeries(line);
        attach(line, x, y);
    }
    p.setChart(c);
}

namespace {

/// A chart of per-bin levels over time, or nullptr (with the panel showing why).
template <class F>
QChart* timeSeries(ChartPanel& p, const sim::SimResult& r, const QString& title,
                   const QString& unit, std::initializer_list<std::pair<QString, F>> lines,
                   std::initializer_list<const char*> colors,
                   std::optional<double> fixed_max = std::nullopt) {
    if (r.series.empty()) {
        p.showMessage(QObject::tr("The simulation recorded no time series."));
        return nullptr;
    }
    QChart* c = newChart(title);
    double vmax = 0;
    std::vector<QLineSeries*> made;
    auto color = colors.begin();
    for (const auto& [name, get] : lines) {
        auto* s = lineSeries(name, QColor(QString::fromLatin1(*color)));
        if (std::next(color) != colors.end()) {
            ++color;
        }
        // Built as one list, thinned to the panel's pixel columns (peaks kept) and handed over
        // at once: 65,536 bins appended point by point took about 0.1 s per line.
        QList<QPointF> points;
        points.reserve(static_cast<qsizetype>(r.series.size()));
        for (const auto& b : r.series) {
            const double v = get(b);
            points.append(QPointF(b.t.si(), v));
            vmax = std::max(vmax, v);
        }
        s->replace(downsampleMinMax(points, chartColumns(p.width())));
        c->addSeries(s);
        made.push_back(s);
    }
    auto* x = valueAxis(c, Qt::AlignBottom, QObject::tr("time (s)"), 0,
                        std::max(1.0, r.series.back().t.si() + 1.0));
    // The axis starts a little below zero: a line at zero (no request waiting) is drawn above
    // the axis, not hidden under it.
    const double ymax = fixed_max.value_or(niceMax(vmax * 1.05));
    auto* y = valueAxis(c, Qt::AlignLeft, unit, -0.02 * ymax, ymax);
    for (auto* s : made) {
        attach(s, x, y);
    }
    distinguish(made);
    return c;
}

} // namespace

void ChartAdapter::throughput(ChartPanel& p, const sim::SimResult& r) {
    using F = double (*)(const sim::TimeBin&);
    QChart* c = timeSeries<F>(
        p, r, QObject::tr("Throughput over time"), QObject::tr("tokens/s"),
        {{QObject::tr("output tokens/s"), [](const sim::TimeBin& b) { return b.output_tok_s; }},
         {QObject::tr("input tokens/s"), [](const sim::TimeBin& b) { return b.input_tok_s; }}},
        {"#1565c0", "#ef6c00"});
    if (c) {
        p.setChart(c);
    }
}

void ChartAdapter::queue(ChartPanel& p, const sim::SimResult& r) {
    using F = double (*)(const sim::TimeBin&);
    QChart* c = timeSeries<F>(
        p, r, QObject::tr("Queue length and running sequences"), QObject::tr("requests"),
        {{QObject::tr("waiting"), [](const sim::TimeBin& b) { return b.waiting; }},
         {QObject::tr("running"), [](const sim::TimeBin& b) { return b.running; }}},
        {"#c62828", "#2e7d32"});
    if (c) {
        p.setChart(c);
    }
}

void ChartAdapter::kvUse(ChartPanel& p, const sim::SimResult& r) {
    using F = double (*)(const sim::TimeBin&);
    QChart* c = timeSeries<F>(
        p, r, QObject::tr("KV cache use over time"), QObject::tr("% of KV blocks"),
        {{QObject::tr("KV blocks in use"), [](const sim::TimeBin& b) { return b.kv_use * 100.0; }}},
        {"#6a1b9a"}, 100.0);
    if (c) {
        p.setChart(c);
    }
}

void ChartAdapter::power(ChartPanel& p, const sim::SimResult& r) {
    if (!r.power.modelled) {
        QStringList notes;
        for (const auto& n : r.power.notes) {
            notes << qs(n);
        }
        p.showMessage(
            QObject::tr("Power was not modelled. %1").arg(notes.join(QStringLiteral(" "))));
        return;
    }
    using F = double (*)(const sim::TimeBin&);
    QChart* c =
        timeSeries<F>(p, r,
                      QObject::tr("Power at the wall: %1 average, %2 peak")
                          .arg(formatWatts(r.power.avg_power), formatWatts(r.power.peak_power)),
                      QObject::tr("kW"),
                      {{QObject::tr("deployment (wall)"),
                        [](const sim::TimeBin& b) { return b.power.si() / 1e3; }}},
                      {"#bf360c"});
    if (c) {
        p.setChart(c);
    }
}

void ChartAdapter::sloAttainment(ChartPanel& p, const sim::SimResult& r) {
    if (r.classes.empty()) {
        p.showMessage(QObject::tr("No request classes."));
        return;
    }
    QChart* c = newChart(QObject::tr("SLO attainment per class"), false);
    auto* series = new QBarSeries();
    auto* set = new QBarSet(QObject::tr("requests meeting every SLO"));
    set->setColor(QColor(QStringLiteral("#2e7d32")));
    QStringList names;
    for (const auto& k : r.classes) {
        *set << k.summary.slo_attainment * 100.0;
        names << qs(k.name) + (k.slo_met ? QStringLiteral(" \u2713") : QStringLiteral(" \u2717"));
    }
    set->setLabelColor(Qt::black);
    series->append(set);
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value %"));
    c->addSeries(series);
    auto* x = new QBarCategoryAxis();
    x->append(names);
    c->addAxis(x, Qt::AlignBottom);
    auto* y = valueAxis(c, Qt::AlignLeft, QObject::tr("% of arrived requests"), 0, 100);
    attach(series, x, y);
    p.setChart(c);
}

void ChartAdapter::monthlyCost(ChartPanel& p, const model::CostEstimate& c) {
    if (!c.own_monthly && !c.rent_monthly) {
        p.showMessage(QObject::tr("No prices: give a purchase price or a GPU-hour rent."));
        return;
    }
    QChart* ch = newChart(QObject::tr("Monthly cost (%1)").arg(qs(c.currency)));
    ch->legend()->setAlignment(Qt::AlignRight);
    auto* series = new QStackedBarSeries();
    const auto add = [&](const QString& name, const std::optional<model::Money>& own,
                         const std::optional<model::Money>& rent, const char* color) {
        auto* set = new QBarSet(name);
        *set << (own ? own->amount : 0.0) << (rent ? rent->amount : 0.0);
        set->setColor(QColor(QString::fromLatin1(color)));
        series->append(set);
    };
    add(QObject::tr("capex"), c.capex_monthly, std::nullopt, "#3f51b5");
    add(QObject::tr("energy"), c.energy_monthly, std::nullopt, "#ffa726");
    add(QObject::tr("maintenance"), c.maintenance_monthly, std::nullopt, "#8d6e63");
    add(QObject::tr("colocation"), c.colocation_monthly, std::nullopt, "#78909c");
    add(QObject::tr("rent"), std::nullopt, c.rent_monthly, "#26a69a");
    ch->addSeries(series);
    auto* x = new QBarCategoryAxis();
    x->append({QObject::tr("own"), QObject::tr("rent")});
    ch->addAxis(x, Qt::AlignBottom);
    const double top = std::max(c.own_monthly ? c.own_monthly->amount : 0.0,
                                c.rent_monthly ? c.rent_monthly->amount : 0.0);
    auto* y = valueAxis(ch, Qt::AlignLeft, qs(c.currency) + QObject::tr(" per month"), 0,
                        niceMax(top * 1.05));
    attach(series, x, y);
    p.setChart(ch);
}

void ChartAdapter::rentVsBuy(ChartPanel& p, const model::CostEstimate& c, int months) {
    if (!c.capex || !c.opex_monthly || !c.rent_monthly) {
        p.showMessage(QObject::tr("Rent vs buy needs both a purchase price and a rent."));
        return;
    }
    months = std::max(1, months);
    QChart* ch =
        newChart(c.break_even_month
                     ? QObject::tr("Rent vs buy: break-even in month %1").arg(*c.break_even_month)
                     : QObject::tr("Rent vs buy: renting stays cheaper"));
    auto* own = lineSeries(QObject::tr("own (capex up front, then opex)"),
                           QColor(QStringLiteral("#3f51b5")));
    auto* rent = lineSeries(QObject::tr("rent"), QColor(QStringLiteral("#26a69a")));
    double top = 0;
    for (int m = 0; m <= months; ++m) {
        // The cumulative lines of model::estimate_cost's break-even definition.
        const double o = c.capex->amount + c.opex_monthly->amount * m;
        const double r = c.rent_monthly->amount * m;
        own->append(m, o);
        rent->append(m, r);
        top = std::max({top, o, r});
    }
    distinguish({own, rent});
    ch->addSeries(own);
    ch->addSeries(rent);
    auto* x = valueAxis(ch, Qt::AlignBottom, QObject::tr("month"), 0, months);
    auto* y =
        valueAxis(ch, Qt::AlignLeft, qs(c.currency) + QObject::tr(" cumulative"), 0, niceMax(top));
    attach(own, x, y);
    attach(rent, x, y);
    p.setChart(ch);
}

void ChartAdapter::rackLimits(ChartPanel& p, const model::RackPlan& r) {
    if (r.limits.empty()) {
        p.showMessage(QObject::tr("No rack limits apply."));
        return;
    }
    QChart* c = newChart(QObject::tr("Nodes per rack by limit (binding: %1)")
                             .arg(qs(std::string(model::to_string(r.binding)))));
    auto* series = new QBarSeries();
    auto* set = new QBarSet(QObject::tr("nodes this limit allows"));
    set->setColor(QColor(QStringLiteral("#5c6bc0")));
    QStringList names;
    double top = 0;
    for (const auto& l : r.limits) {
        *set << l.nodes_fit;
        names << qs(std::string(model::to_string(l.which)));
        top = std::max(top, static_cast<double>(l.nodes_fit));
    }
    series->append(set);
    series->setLabelsVisible(true);
    c->addSeries(series);
    auto* x = new QBarCategoryAxis();
    x->append(names);
    c->addAxis(x, Qt::AlignBottom);
    auto* y = valueAxis(c, Qt::AlignLeft, QObject::tr("nodes"), 0, niceMax(top * 1.1 + 1));
    attach(series, x, y);
    p.setChart(c);
}

void ChartAdapter::trainingMemory(ChartPanel& p, const model::TrainingEstimate& t) {
    const auto& stages =
        t.stages.empty() ? std::vector<model::StageMemory>{t.result.memory} : t.stages;
    QChart* c = newChart(t.result.fits ? QObject::tr("Training memory per GPU (fits)")
                                       : QObject::tr("Training memory per GPU (does NOT fit)"));
    c->legend()->setAlignment(Qt::AlignRight);
    auto* series = new QStackedBarSeries();
    struct Part {
        QString name;
        Bytes model::StageMemory::*field;
        const char* color;
    };
    const Part parts[] = {
        {QObject::tr("weights"), &model::StageMemory::weights, "#3f51b5"},
        {QObject::tr("gradients"), &model::StageMemory::gradients, "#7986cb"},
        {QObject::tr("optimizer"), &model::StageMemory::optimizer_states, "#26a69a"},
        {QObject::tr("activations"), &model::StageMemory::activations, "#ffa726"},
        {QObject::tr("logits"), &model::StageMemory::logits, "#ef5350"},
        {QObject::tr("buffers"), &model::StageMemory::buffers, "#8d6e63"},
        {QObject::tr("runtime"), &model::StageMemory::runtime, "#78909c"},
        {QObject::tr("fragmentation"), &model::StageMemory::fragmentation, "#bdbdbd"},
    };
    // Many stages: show at most 16 (first, last and evenly spaced ones).
    std::vector<std::size_t> shown;
    const std::size_t n = stages.size();
    const std::size_t step = std::max<std::size_t>(1, (n + 15) / 16);
    for (std::size_t i = 0; i < n; i += step) {
        shown.push_back(i);
    }
    if (shown.back() != n - 1) {
        shown.push_back(n - 1);
    }
    double top = 0;
    for (const auto& part : parts) {
        auto* set = new QBarSet(part.name);
        set->setColor(QColor(QString::fromLatin1(part.color)));
        for (const std::size_t i : shown) {
            *set << (stages[i].*part.field).si() / kGiB;
        }
        series->append(set);
    }
    QStringList names;
    for (const std::size_t i : shown) {
        names << QObject::tr("stage %1").arg(stages[i].stage);
        top = std::max({top, stages[i].total.si() / kGiB, stages[i].capacity.si() / kGiB});
    }
    c->addSeries(series);
    auto* x = new QBarCategoryAxis();
    x->append(names);
    c->addAxis(x, Qt::AlignBottom);
    auto* y =
        valueAxis(c, Qt::AlignLeft,
                  QObject::tr("GiB per GPU (capacity %1)").arg(formatGiB(stages.front().capacity)),
                  0, niceMax(top * 1.05));
    attach(series, x, y);
    // Each stage's capacity as a line across its bar, drawn over the bars.
    auto* cap = lineSeries(QObject::tr("capacity %1").arg(formatGiB(stages.front().capacity)),
                           QColor(QStringLiteral("#d32f2f")));
    for (std::size_t j = 0; j < shown.size(); ++j) {
        const double v = stages[shown[j]].capacity.si() / kGiB;
        cap->append(static_cast<double>(j) - 0.5, v);
        cap->append(static_cast<double>(j) + 0.5, v);
    }
    c->addSeries(cap);
    attach(cap, x, y);
    p.setChart(c);
}

void ChartAdapter::stepBreakdown(ChartPanel& p, const model::StepBreakdown& s) {
    QChart* c = newChart(QObject::tr("One optimizer step: %1").arg(formatTime(s.total)));
    c->legend()->setAlignment(Qt::AlignRight);
    auto* series = new QHorizontalStackedBarSeries();
    const auto add = [&](const QString& name, Seconds v, const char* color) {
        auto* set = new QBarSet(name);
        *set << v.si();
        set->setColor(QColor(QString::fromLatin1(color)));
        series->append(set);
    };
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value s"));
    series->setLabelsPrecision(3);
    add(QObject::tr("compute"), s.compute, "#3f51b5");
    add(QObject::tr("exposed comm"), s.exposed_comm, "#ef6c00");
    add(QObject::tr("bubble"), s.bubble, "#bdbdbd");
    add(QObject::tr("optimizer"), s.optimizer, "#26a69a");
    add(QObject::tr("input stall"), s.input_stall, "#c62828");
    series->setBarWidth(0.6);
    c->addSeries(series);
    auto* cat = new QBarCategoryAxis();
    cat->append(QObject::tr("step"));
    c->addAxis(cat, Qt::AlignLeft);
    series->attachAxis(cat);
    auto* x = valueAxis(c, Qt::AlignBottom, QObject::tr("seconds"), 0, niceMax(s.total.si()));
    series->attachAxis(x);
    p.setChart(c);
}

void ChartAdapter::bars(ChartPanel& p, const QString& title, const QString& unit,
                        const QStringList& names, const std::vector<double>& values) {
    if (names.isEmpty()) {
        p.showMessage(QObject::tr("Pin configurations to compare them."));
        return;
    }
    QChart* c = newChart(title, false);
    auto* series = new QBarSeries();
    auto* set = new QBarSet(title);
    set->setColor(QColor(QStringLiteral("#5c6bc0")));
    double top = 0;
    for (const double v : values) {
        *set << v;
        top = std::max(top, v);
    }
    series->append(set);
    c->addSeries(series);
    // Each bar's value under it, by the one tick formatter ("A: 1.81k"; the axis names the
    // unit): Qt's bar labels print "1.235e+05" and do not fit a narrow bar.
    QStringList labelled;
    for (int i = 0; i < names.size(); ++i) {
        labelled << (i < static_cast<int>(values.size())
                         ? QStringLiteral("%1: %2").arg(names[i], formatTick(values[i]))
                         : names[i]);
    }
    auto* x = new QBarCategoryAxis();
    x->append(labelled);
    c->addAxis(x, Qt::AlignBottom);
    auto* y = valueAxis(c, Qt::AlignLeft, unit, 0, niceMax(top * 1.1));
    attach(series, x, y);
    p.setChart(c);
}

namespace {

/// Round bounds around [lo, hi] for a linear axis (a span of 1 around a single value).
std::pair<double, double> niceBounds(double lo, double hi) {
    if (!(hi > lo)) {
        const double pad = lo == 0 ? 1.0 : std::fabs(lo) * 0.5;
        lo -= pad;
        hi += pad;
    }
    const double step = niceStep(hi - lo, 5);
    return {std::floor(lo / step) * step, std::ceil(hi / step) * step};
}

} // namespace

void ChartAdapter::lines(ChartPanel& p, const QString& title, const QString& xTitle,
                         const QString& yTitle, const std::vector<NamedPoints>& series) {
    double xlo = std::numeric_limits<double>::infinity();
    double xhi = -std::numeric_limits<double>::infinity();
    double ylo = std::numeric_limits<double>::infinity();
    double yhi = -std::numeric_limits<double>::infinity();
    for (const NamedPoints& s : series) {
        for (const auto& [x, y] : s.points) {
            xlo = std::min(xlo, x);
            xhi = std::max(xhi, x);
            ylo = std::min(ylo, y);
            yhi = std::max(yhi, y);
        }
    }
    if (!(xlo <= xhi)) {
        p.showMessage(QObject::tr("No row has both values to plot."));
        return;
    }
    // A figure's axis starts at zero when its values are all positive, so lines compare by
    // height; the swept axis spans its values.
    const auto [x0, x1] = niceBounds(xlo, xhi);
    const auto [y0, y1] = niceBounds(ylo >= 0 ? 0.0 : ylo, yhi);
    QChart* c = newChart(title, series.size() > 1);
    auto* xa = valueAxis(c, Qt::AlignBottom, xTitle, x0, x1);
    auto* ya = valueAxis(c, Qt::AlignLeft, yTitle, y0, y1);
    std::vector<QLineSeries*> made;
    for (const NamedPoints& s : series) {
        auto* line = new QLineSeries();
        line->setName(s.name);
        line->setPointsVisible(true);
        for (const auto& [x, y] : s.points) {
            line->append(x, y);
        }
        c->addSeries(line); // the theme gives it its colour
        attach(line, xa, ya);
        made.push_back(line);
    }
    // Lines of equal values (a figure the series column does not change) stay visible.
    distinguish(made);
    p.setChart(c);
}

void ChartAdapter::loadCurve(ChartPanel& p, const QString& title, const QString& xTitle,
                             const QString& yTitle, const std::vector<CurveSeries>& series,
                             std::optional<double> slo) {
    double xhi = 0;
    double yhi = slo.value_or(0);
    bool any = false;
    for (const CurveSeries& s : series) {
        for (const auto* pts : {&s.analytic, &s.p50, &s.p99}) {
            for (const auto& [x, y] : *pts) {
                xhi = std::max(xhi, x);
                yhi = std::max(yhi, y);
                any = true;
            }
        }
    }
    if (!any) {
        p.showMessage(QObject::tr("No candidate has a load to plot."));
        return;
    }
    const auto [x0, x1] = niceBounds(0, xhi);
    const auto [y0, y1] = niceBounds(0, yhi);
    QChart* c = newChart(title, true);
    auto* xa = valueAxis(c, Qt::AlignBottom, xTitle, x0, x1);
    auto* ya = valueAxis(c, Qt::AlignLeft, yTitle, y0, y1);
    static const QColor kColors[] = {QColor(0x15, 0x65, 0xc0), QColor(0x2e, 0x7d, 0x32),
                                     QColor(0xef, 0x6c, 0x00), QColor(0x6a, 0x1b, 0x9a),
                                     QColor(0x00, 0x83, 0x8f), QColor(0x5d, 0x40, 0x37)};
    for (std::size_t i = 0; i < series.size(); ++i) {
        const CurveSeries& s = series[i];
        const QColor color = kColors[i % std::size(kColors)];
        auto* line = lineSeries(s.name, color);
        line->setPointsVisible(true);
        for (const auto& [x, y] : s.analytic) {
            line->append(x, y);
        }
        c->addSeries(line);
        attach(line, xa, ya);
        const auto markers = [&](const std::vector<std::pair<double, double>>& pts,
                                 const QString& name, QScatterSeries::MarkerShape shape) {
            if (pts.empty()) {
                return;
            }
            auto* m = new QScatterSeries();
            m->setName(name);
            m->setMarkerShape(shape);
            m->setMarkerSize(9);
            m->setColor(color);
            for (const auto& [x, y] : pts) {
                m->append(x, y);
            }
            c->addSeries(m);
            attach(m, xa, ya);
        };
        markers(s.p50, s.name + u' ' + s.p50Label, QScatterSeries::MarkerShapeCircle);
        markers(s.p99, s.name + u' ' + s.p99Label, QScatterSeries::MarkerShapeRectangle);
        if (s.max_load) {
            auto* v =
                lineSeries(QObject::tr("%1 max %2").arg(s.name, formatTick(*s.max_load)), color);
            QPen pen = v->pen();
            pen.setStyle(Qt::DotLine);
            v->setPen(pen);
            v->append(*s.max_load, y0);
            v->append(*s.max_load, y1);
            c->addSeries(v);
            attach(v, xa, ya);
        }
    }
    if (slo) {
        auto* line = lineSeries(QObject::tr("SLO %1").arg(formatTick(*slo)),
                                QColor(QStringLiteral("#d32f2f")));
        line->append(x0, *slo);
        line->append(x1, *slo);
        c->addSeries(line);
        attach(line, xa, ya);
    }
    p.setChart(c);
}

} // namespace gpuplan::gui
