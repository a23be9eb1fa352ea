#include "gui/curve_view.hpp"

#include "gui/chart_adapter.hpp"
#include "gui/ui_util.hpp"
#include "model/error.hpp"

#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>

#include <algorithm>
#include <cmath>

namespace gpuplan::gui {

std::vector<plan::CurveCandidate> curve_candidates(const model::Scenario& s, const Core& core) {
    return plan::curve_candidates(
        s, core.profile_for(s.deployment.gpu),
        s.plan ? s.plan->candidates : std::vector<model::PlanCandidate>{},
        [&core](const model::AcceleratorSpec& g) { return core.profile_for(g); });
}

std::vector<double> confirm_loads(const plan::CandidateCurve& c, plan::LoadAxis axis) {
    std::vector<double> raw;
    if (c.max_load) {
        for (double f : {0.5, 0.75, 1.0, 1.25}) {
            raw.push_back(*c.max_load * f);
        }
    } else if (!c.points.empty()) {
        const std::size_t n = c.points.size();
        for (std::size_t i : {n / 4, n / 2, (3 * n) / 4, n - 1}) {
            raw.push_back(c.points[std::min(i, n - 1)].load);
        }
    }
    std::vector<double> out;
    for (double v : raw) {
        if (axis == plan::LoadAxis::Concurrency) {
            v = std::max(1.0, std::round(v));
        }
        if (v > 0 && std::find(out.begin(), out.end(), v) == out.end()) {
            out.push_back(v);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

namespace {

enum Column {
    kGpu,
    kSource,
    kLoad,
    kThroughput,
    kTtft,
    kTtftP99,
    kTpot,
    kTpotP99,
    kMeets,
    kColumns
};

QStandardItem* number(double v, int decimals) {
    auto* item = new QStandardItem(formatNumber(v, decimals));
    item->setData(v, kCsvRole);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QStandardItem* text(const QString& t) {
    auto* item = new QStandardItem(t);
    item->setData(t, kCsvRole);
    return item;
}

} // namespace

CurveView::CurveView(ScenarioDocument& doc, const Core& core, QWidget* parent)
    : QWidget(parent), doc_(doc), core_(core) {
    axis_ = new QComboBox();
    axis_->setObjectName(QStringLiteral("curve_axis"));
    axis_->addItem(tr("As the scenario gives its load"), -1);
    axis_->addItem(tr("Sequences in flight"), static_cast<int>(plan::LoadAxis::Concurrency));
    axis_->addItem(tr("Requests per second"), static_cast<int>(plan::LoadAxis::RequestRate));
    points_ = new QSpinBox();
    points_->setObjectName(QStringLiteral("curve_points"));
    points_->setRange(2, 100);
    points_->setValue(12);
    requests_ = new QSpinBox();
    requests_->setObjectName(QStringLiteral("curve_requests"));
    requests_->setRange(50, 100000);
    requests_->setValue(500);
    requests_->setSuffix(tr(" requests per load"));
    confirm_ = new QPushButton(tr("Confirm with simulator"));
    confirm_->setObjectName(QStringLiteral("curve_confirm"));
    confirm_->setToolTip(tr("Simulate each GPU at ½, ¾, 1 and 1¼ × its highest load meeting the "
                            "SLO and draw the simulated P50 and P99"));
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setObjectName(QStringLiteral("curve_cancel"));
    cancel_->setEnabled(false);
    progress_ = new QProgressBar();
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    banner_ = makeBanner();
    banner_->setObjectName(QStringLiteral("curve_error"));
    headline_ = new QLabel();
    headline_->setObjectName(QStringLiteral("curve_headline"));
    headline_->setWordWrap(true);
    headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    throughput_ = new ChartPanel(QStringLiteral("curve_throughput"));
    ttft_ = new ChartPanel(QStringLiteral("curve_ttft"));
    tpot_ = new ChartPanel(QStringLiteral("curve_tpot"));
    for (ChartPanel* c : {throughput_, ttft_, tpot_}) {
        c->setMinimumSize(300, 220);
        c->showMessage(tr("Computing the curves…"));
    }
    table_ = new QStandardItemModel(0, kColumns, this);
    const QStringList headers = {tr("GPU"),
                                 tr("Source"),
                                 tr("Load"),
                                 tr("Throughput (tok/s)"),
                                 tr("TTFT mean / P50 (ms)"),
                                 tr("TTFT P99 (ms)"),
                                 tr("TPOT mean / P50 (ms)"),
                                 tr("TPOT P99 (ms)"),
                                 tr("Meets SLO")};
    table_->setHorizontalHeaderLabels(headers);
    for (int i = 0; i < kColumns; ++i) {
        table_->setHeaderData(i, Qt::Horizontal, headers[i], kCsvRole);
    }
    auto* tableView = new QTableView();
    tableView->setObjectName(QStringLiteral("curve_table"));
    tableView->setModel(table_);
    tableView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    tableView->verticalHeader()->hide();

    // Two rows of controls and a 2 × 2 grid, so the tab fits a 1280 × 800 window beside the
    // scenario panel.
    auto* form = new QFormLayout();
    form->addRow(tr("Load axis:"), axis_);
    form->addRow(tr("Points:"), points_);
    auto* run = new QHBoxLayout();
    run->addWidget(requests_);
    run->addWidget(confirm_);
    run->addWidget(cancel_);
    run->addWidget(progress_, 1);

    auto* grid = new QGridLayout();
    grid->addWidget(throughput_, 0, 0);
    grid->addWidget(ttft_, 0, 1);
    grid->addWidget(tpot_, 1, 0);
    grid->addWidget(tableView, 1, 1);
    grid->setRowStretch(0, 1);
    grid->setRowStretch(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(banner_);
    layout->addLayout(form);
    layout->addLayout(run);
    layout->addWidget(headline_);
    layout->addLayout(grid, 1);

    debounce_.setSingleShot(true);
    debounce_.setInterval(150);
    connect(&debounce_, &QTimer::timeout, this, &CurveView::refresh);
    connect(&doc_, &ScenarioDocument::scenarioChanged, this, [this] {
        dirty_ = true;
        if (isVisible()) {
            debounce_.start();
        }
    });
    connect(axis_, &QComboBox::currentIndexChanged, this, &CurveView::refresh);
    connect(points_, &QSpinBox::valueChanged, this, [this] { debounce_.start(); });
    connect(confirm_, &QPushButton::clicked, this, &CurveView::confirm);
    connect(cancel_, &QPushButton::clicked, this, &CurveView::cancel);
    connect(&curveJob_, &QFutureWatcher<std::shared_ptr<const CurveOutcome>>::finished, this,
            &CurveView::curveDone);
    connect(&simJob_, &QFutureWatcher<std::shared_ptr<const CurveSimulation>>::finished, this,
            &CurveView::simulationDone);
}

CurveView::~CurveView() {
    cancel();
    waitForIdle();
}

void CurveView::waitForIdle() {
    curveJob_.waitForFinished();
    simJob_.waitForFinished();
}

plan::LoadAxis CurveView::axis() const {
    const int v = axis_->currentData().toInt();
    return v < 0 ? plan::default_axis(doc_.scenario()) : static_cast<plan::LoadAxis>(v);
}

void CurveView::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    if (dirty_) {
        refresh();
    }
}

void CurveView::refresh() {
    if (curveJob_.isRunning()) {
        pending_ = true;
        return;
    }
    dirty_ = false;
    const model::Scenario s = doc_.scenario();
    const plan::LoadAxis a = axis();
    const int points = points_->value();
    const Core* core = &core_;
    curveJob_.setFuture(QtConcurrent::run([s, a, points, core] {
        auto out = std::make_shared<CurveOutcome>();
        out->scenario = s;
        try {
            out->curve = plan::load_curve(curve_candidates(s, *core), a, {}, points);
        } catch (const Error& e) {
            out->error = e.what();
        }
        return std::shared_ptr<const CurveOutcome>(std::move(out));
    }));
}

void CurveView::curveDone() {
    outcome_ = curveJob_.result();
    draw();
    emit shown();
    if (pending_) {
        pending_ = false;
        refresh();
    }
}

void CurveView::confirm() {
    if (!outcome_ || !outcome_->curve || simJob_.isRunning()) {
        return;
    }
    stop_ = std::stop_source();
    const std::stop_token token = stop_.get_token();
    const model::Scenario s = outcome_->scenario;
    const plan::LoadCurve curve = *outcome_->curve;
    const int requests = requests_->value();
    const Core* core = &core_;
    QPointer<QProgressBar> bar(progress_);
    progress_->setValue(0);
    confirm_->setEnabled(false);
    cancel_->setEnabled(true);
    simJob_.setFuture(QtConcurrent::run([s, curve, requests, core, token, bar] {
        auto out = std::make_shared<CurveSimulation>();
        out->scenario = s;
        out->axis = curve.axis;
        out->requests = requests;
        try {
            const std::vector<plan::CurveCandidate> cands = curve_candidates(s, *core);
            const std::size_t n = std::min(cands.size(), curve.curves.size());
            out->points.resize(n);
            for (std::size_t i = 0; i < n && !token.stop_requested(); ++i) {
                std::optional<model::NodePower> node;
                if (i == 0) {
                    node = core->node_of(s); // another GPU: its node's host is not known
                }
                const auto progress = [bar, i, n](double f) {
                    const int v = static_cast<int>(1000.0 * (static_cast<double>(i) + f) /
                                                   static_cast<double>(n));
                    QMetaObject::invokeMethod(
                        bar.data(),
                        [bar, v] {
                            if (bar) {
                                bar->setValue(std::max(bar->value(), v));
                            }
                        },
                        Qt::QueuedConnection);
                };
                out->points[i] = plan::simulate_curve(
                    cands[i].scenario, cands[i].profile, node, curve.axis,
                    confirm_loads(curve.curves[i], curve.axis), requests, 0, token, progress);
            }
        } catch (const Error& e) {
            out->error = e.what();
        }
        out->stopped = token.stop_requested();
        return std::shared_ptr<const CurveSimulation>(std::move(out));
    }));
}

void CurveView::cancel() {
    stop_.request_stop();
}

void CurveView::simulationDone() {
    simulation_ = simJob_.result();
    confirm_->setEnabled(true);
    cancel_->setEnabled(false);
    progress_->setValue(simulation_->stopped ? progress_->value() : 1000);
    draw();
    emit simulated();
}

QString CurveView::headline() const {
    return headline_->text();
}

QString CurveView::errorText() const {
    return banner_->isVisible() ? banner_->text() : QString();
}

void CurveView::draw() {
    table_->removeRows(0, table_->rowCount());
    if (!outcome_ || !outcome_->curve) {
        banner_->setText(tr("Cannot draw the curves: %1")
                             .arg(outcome_ ? qs(outcome_->error) : tr("nothing computed")));
        banner_->show();
        for (ChartPanel* c : {throughput_, ttft_, tpot_}) {
            c->showMessage(tr("No curves."));
        }
        headline_->clear();
        return;
    }
    const plan::LoadCurve& curve = *outcome_->curve;
    const bool byRate = curve.axis == plan::LoadAxis::RequestRate;
    const QString xTitle = byRate ? tr("offered load (requests/s)") : tr("sequences in flight");
    const QString unit = byRate ? tr("req/s") : tr("sequences");
    const int decimals = byRate ? 2 : 0;
    // The simulator's markers only while they are of the scenario and axis drawn.
    const CurveSimulation* sim = simulation_ && simulation_->scenario == outcome_->scenario &&
                                         simulation_->axis == curve.axis
                                     ? simulation_.get()
                                     : nullptr;

    std::vector<ChartAdapter::CurveSeries> thr, ttft, tpot;
    QStringList best, errors;
    for (std::size_t i = 0; i < curve.curves.size(); ++i) {
        const plan::CandidateCurve& c = curve.curves[i];
        const QString name = qs(c.name);
        if (!c.error.empty()) {
            errors << tr("%1: %2").arg(name, qs(c.error));
            continue;
        }
        ChartAdapter::CurveSeries t{name, {}, {}, {}, c.max_load};
        ChartAdapter::CurveSeries f{name, {}, {}, {}, c.max_load};
        ChartAdapter::CurveSeries d{name, {}, {}, {}, c.max_load};
        t.p50Label = tr("simulated");
        for (const plan::CurvePoint& p : c.points) {
            t.analytic.emplace_back(p.load, p.throughput);
            f.analytic.emplace_back(p.load, p.ttft.si() * 1e3);
            d.analytic.emplace_back(p.load, p.tpot.si() * 1e3);
            const QList<QStandardItem*> row = {
                text(name),
                text(tr("analytic")),
                number(p.load, decimals),
                number(p.throughput, 0),
                number(p.ttft.si() * 1e3, 1),
                text(QString()),
                number(p.tpot.si() * 1e3, 2),
                text(QString()),
                text(p.meets_slo ? tr("yes") : (p.fits ? tr("no") : tr("no (overload)")))};
            row.back()->setToolTip(qs(p.miss));
            table_->appendRow(row);
        }
        if (sim && i < sim->points.size()) {
            for (const plan::SimulatedPoint& q : sim->points[i]) {
                if (!q.ok) {
                    continue;
                }
                t.p50.emplace_back(q.load, q.throughput);
                f.p50.emplace_back(q.load, q.ttft_p50_s * 1e3);
                f.p99.emplace_back(q.load, q.ttft_p99_s * 1e3);
                d.p50.emplace_back(q.load, q.tpot_p50_s * 1e3);
                d.p99.emplace_back(q.load, q.tpot_p99_s * 1e3);
                table_->appendRow({text(name), text(tr("simulator")), number(q.load, decimals),
                                   number(q.throughput, 0), number(q.ttft_p50_s * 1e3, 1),
                                   number(q.ttft_p99_s * 1e3, 1), number(q.tpot_p50_s * 1e3, 2),
                                   number(q.tpot_p99_s * 1e3, 2),
                                   text(q.meets_slo ? tr("yes") : tr("no"))});
            }
        }
        thr.push_back(std::move(t));
        ttft.push_back(std::move(f));
        tpot.push_back(std::move(d));
        best << (c.max_load ? tr("%1 %2 %3").arg(name, formatNumber(*c.max_load, decimals), unit)
                            : tr("%1 none").arg(name));
    }
    const auto msOf = [](const std::optional<Seconds>& s) {
        return s ? std::optional<double>(s->si() * 1e3) : std::nullopt;
    };
    ChartAdapter::loadCurve(*throughput_, tr("Throughput"), xTitle, tr("output tokens/s"), thr,
                            std::nullopt);
    ChartAdapter::loadCurve(*ttft_, tr("Time to first token"), xTitle, tr("TTFT (ms)"), ttft,
                            msOf(curve.slo.ttft));
    ChartAdapter::loadCurve(*tpot_, tr("Time per output token"), xTitle, tr("TPOT (ms)"), tpot,
                            msOf(curve.slo.tpot));
    if (errors.isEmpty()) {
        banner_->clear();
        banner_->hide();
    } else {
        banner_->setText(
            tr("Some GPUs cannot be estimated: %1").arg(errors.join(QStringLiteral("; "))));
        banner_->show();
    }
    // Two questions (plan/load_curve.hpp): sequences in flight judged on the means of a closed
    // loop; requests/s judged at the SLO's percentile, the capacity at the SLO estimate prints.
    QString line = (byRate ? tr("Highest load meeting the SLO (analytic capacity at the SLO: "
                                "percentiles under Poisson arrivals): %1.")
                           : tr("Highest load meeting the SLO (analytic, mean values of a closed "
                                "loop): %1."))
                       .arg(best.join(QStringLiteral(", ")));
    if (sim) {
        line += sim->stopped ? tr(" Simulator: stopped.")
                             : tr(" Simulator: markers show P50 (circle) and P99 (square) over "
                                  "%1 requests per load.")
                                   .arg(sim->requests);
    }
    headline_->setText(line);
}

QList<ChartPanel*> CurveView::charts() const {
    return {throughput_, ttft_, tpot_};
}

QList<QPair<QString, const QAbstractItemModel*>> CurveView::tables() const {
    return {{QStringLiteral("curves"), table_}};
}

} // namespace gpuplan::gui
