#include "gui/chart_adapter.hpp"
#include "gui/run_memory.hpp"
#include "gui/sim_charts.hpp"
#include "gui/table_models.hpp"
#include "gui/ui_util.hpp"
#include "gui/views.hpp"

#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace gpuplan::gui {

namespace {

QTableView* table(QAbstractItemModel* model) {
    auto* t = new QTableView();
    t->setModel(model);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->setVisible(false);
    // Long values wrap onto more lines instead of ending in "…".
    t->setWordWrap(true);
    t->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    t->setAlternatingRowColors(true);
    return t;
}

} // namespace

SimulationView::SimulationView(ScenarioDocument& doc, Runner& runner, QWidget* parent)
    : QWidget(parent), doc_(doc), runner_(runner) {
    run_ = new QPushButton(tr("Run simulation"));
    run_->setObjectName(QStringLiteral("run_simulation"));
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setObjectName(QStringLiteral("cancel_simulation"));
    cancel_->setEnabled(false);
    requests_ = new QSpinBox();
    requests_->setObjectName(QStringLiteral("sim_requests"));
    requests_->setRange(0, 10'000'000);
    requests_->setSingleStep(100);
    requests_->setSpecialValueText(tr("scenario's count"));
    requests_->setToolTip(
        tr("requests to send (0: the scenario's workload.requests, default 1000)"));
    // Above this estimate a run asks first (run_memory.hpp); kept in the app's settings.
    auto* budget = new QDoubleSpinBox();
    budget->setObjectName(QStringLiteral("sim_memory_budget"));
    budget->setRange(0.1, 4096);
    budget->setDecimals(1);
    budget->setSuffix(tr(" GiB"));
    budget->setValue(memoryBudgetBytes() / kGiB);
    budget->setToolTip(tr("memory budget: a run estimated to need more asks before it starts"));
    connect(budget, &QDoubleSpinBox::valueChanged, this,
            [](double gib) { setMemoryBudgetBytes(gib * kGiB); });
    progress_ = new QProgressBar();
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    progress_->setTextVisible(true);
    auto* bar = new QHBoxLayout();
    bar->addWidget(run_);
    bar->addWidget(cancel_);
    bar->addWidget(new QLabel(tr("requests")));
    bar->addWidget(requests_);
    bar->addWidget(new QLabel(tr("budget")));
    bar->addWidget(budget);
    bar->addWidget(progress_, 1);
    banner_ = makeBanner();

    ttft_ = new ChartPanel(QStringLiteral("ttft_cdf"));
    tpot_ = new ChartPanel(QStringLiteral("tpot_cdf"));
    e2e_ = new ChartPanel(QStringLiteral("e2e_cdf"));
    throughput_ = new ChartPanel(QStringLiteral("throughput"));
    queue_ = new ChartPanel(QStringLiteral("queue"));
    kv_ = new ChartPanel(QStringLiteral("kv_use"));
    slo_ = new ChartPanel(QStringLiteral("slo_attainment"));
    power_ = new ChartPanel(QStringLiteral("power"));
    for (ChartPanel* p : {ttft_, tpot_, e2e_, throughput_, queue_, kv_, power_, slo_}) {
        p->showMessage(tr("Run a simulation to see this chart."));
        // A usable size (issue 17: they were 260 × 264 px); the tab scrolls instead.
        p->setMinimumSize(360, 300);
    }
    // Two charts a row, in a scroll area: readable at 1280 × 800 beside the scenario panel.
    auto* grid = new QGridLayout();
    grid->addWidget(ttft_, 0, 0);
    grid->addWidget(tpot_, 0, 1);
    grid->addWidget(e2e_, 1, 0);
    grid->addWidget(throughput_, 1, 1);
    grid->addWidget(queue_, 2, 0);
    grid->addWidget(kv_, 2, 1);
    grid->addWidget(power_, 3, 0);
    grid->addWidget(slo_, 3, 1);
    summary_ = new FiguresModel(this);
    classes_ = new ClassTableModel(this);
    auto* summaryView = table(summary_);
    summaryView->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    summaryView->setMinimumHeight(240);
    grid->addWidget(summaryView, 4, 0);
    auto* classesView = table(classes_);
    classesView->setMinimumHeight(240);
    grid->addWidget(classesView, 4, 1);
    auto* chartsWidget = new QWidget();
    chartsWidget->setLayout(grid);
    auto* scroll = new QScrollArea();
    scroll->setObjectName(QStringLiteral("simulation_scroll"));
    scroll->setWidget(chartsWidget);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);

    stale_ = makeStaleNote();
    results_ = chartsWidget;
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(banner_);
    layout->addWidget(stale_);
    layout->addWidget(scroll, 1);
    connect(&doc_, &ScenarioDocument::scenarioChanged, this, &SimulationView::markStale);

    connect(run_, &QPushButton::clicked, this, &SimulationView::start);
    connect(cancel_, &QPushButton::clicked, this, &SimulationView::cancel);
    connect(&runner_, &Runner::simulationProgress, this,
            [this](double f) { progress_->setValue(static_cast<int>(f * 1000)); });
    connect(&runner_, &Runner::simulationFinished, this, &SimulationView::finished);
}

void SimulationView::start() {
    sim::SimOptions options;
    if (requests_->value() > 0) {
        options.requests = requests_->value();
    }
    // A run that would hold more than the budget asks first (issue 12).
    if (!confirmRunMemory(this, estimate_run_memory(doc_.scenario(), options),
                          memoryBudgetBytes())) {
        progress_->setFormat(tr("not started: above the memory budget"));
        return;
    }
    banner_->setVisible(false);
    stale_->setVisible(false);
    results_->setEnabled(true);
    progress_->setValue(0);
    progress_->setFormat(tr("simulating… %p%"));
    run_->setEnabled(false);
    cancel_->setEnabled(true);
    ranOn_ = doc_.scenario();
    runner_.startSimulation(doc_.scenario(), options);
}

QString SimulationView::staleText() const {
    return stale_->isHidden() ? QString() : stale_->text();
}

void SimulationView::markStale() {
    // Results stay for reference, greyed, with a note: they answer the scenario as it was.
    if (!outcome_ || !stale_->isHidden()) {
        return;
    }
    stale_->setText(tr("Out of date: the scenario changed after this run; run the simulation "
                       "again for figures that match it."));
    stale_->setVisible(true);
    results_->setEnabled(false);
}

void SimulationView::cancel() {
    runner_.cancelSimulation();
    progress_->setFormat(tr("cancelling…"));
}

void SimulationView::finished(const SimOutcomePtr& outcome) {
    outcome_ = outcome;
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    if (!outcome->result) {
        progress_->setFormat(tr("failed"));
        banner_->setText(tr("The simulation failed: %1").arg(qs(outcome->error)));
        banner_->setVisible(true);
        emit shown();
        return;
    }
    const sim::SimResult& r = *outcome->result;
    progress_->setValue(1000);
    progress_->setFormat(r.stopped
                             ? tr("cancelled after %1 s simulated").arg(r.duration.si(), 0, 'f', 1)
                             : tr("done: %1 requests in %2 s of wall time")
                                   .arg(r.overall.arrived)
                                   .arg(outcome->wall_s, 0, 'f', 2));
    if (!r.ok) {
        QStringList reasons;
        for (const auto& x : r.reasons) {
            reasons << qs(x);
        }
        banner_->setText(tr("Nothing ran: %1").arg(reasons.join(QStringLiteral("; "))));
        banner_->setVisible(true);
    }
    const auto& slo = doc_.scenario().slo;
    const auto charts = outcome->charts
                            ? outcome->charts
                            : std::make_shared<const SimChartData>(prepare_chart_data(r));
    ChartAdapter::latencyCdf(*ttft_, charts->ttft, ChartAdapter::Latency::Ttft, slo.ttft);
    ChartAdapter::latencyCdf(*tpot_, charts->tpot, ChartAdapter::Latency::Tpot, slo.tpot);
    ChartAdapter::latencyCdf(*e2e_, charts->e2e, ChartAdapter::Latency::E2e, slo.e2e);
    ChartAdapter::throughput(*throughput_, r);
    ChartAdapter::queue(*queue_, r);
    ChartAdapter::kvUse(*kv_, r);
    ChartAdapter::power(*power_, r);
    ChartAdapter::sloAttainment(*slo_, r);
    summary_->setRows(simulationRows(r, outcome->wall_s));
    classes_->setResult(r);
    if (!(doc_.scenario() == ranOn_)) {
        markStale(); // edited while it ran
    }
    emit shown();
}

QList<ChartPanel*> SimulationView::charts() const {
    return {ttft_, tpot_, e2e_, throughput_, queue_, kv_, power_, slo_};
}

QList<QPair<QString, const QAbstractItemModel*>> SimulationView::tables() const {
    return {{QStringLiteral("simulation_summary"), summary_},
            {QStringLiteral("simulation_classes"), classes_}};
}

} // namespace gpuplan::gui
