#include "gui/chart_adapter.hpp"
#include "gui/table_models.hpp"
#include "gui/ui_util.hpp"
#include "gui/views.hpp"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace gpuplan::gui {

QString bannerStyle() {
    return QStringLiteral("background: #ffebee; color: #b71c1c; border: 1px solid #d32f2f; "
                          "border-radius: 3px; padding: 6px;");
}

QLabel* makeBanner() {
    auto* b = new QLabel();
    b->setObjectName(QStringLiteral("error_banner"));
    b->setWordWrap(true);
    b->setTextInteractionFlags(Qt::TextSelectableByMouse);
    b->setStyleSheet(bannerStyle());
    b->setVisible(false);
    return b;
}

QLabel* makeStaleNote() {
    auto* b = new QLabel();
    b->setObjectName(QStringLiteral("stale_note"));
    b->setWordWrap(true);
    b->setStyleSheet(
        QStringLiteral("background: #fff8e1; color: #7a4f01; border: 1px solid #ffb300; "
                       "border-radius: 3px; padding: 6px;"));
    b->setVisible(false);
    return b;
}

namespace {

QTableView* makeTable(QAbstractItemModel* model) {
    auto* t = new QTableView();
    t->setModel(model);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->setVisible(false);
    t->setWordWrap(false);
    t->horizontalHeader()->setStretchLastSection(true);
    t->setAlternatingRowColors(true);
    return t;
}

QString verdict(const model::PhaseBottleneck& b) {
    return QStringLiteral("<b>%1</b> (%2 of the time): %3")
        .arg(qs(std::string(model::to_string(b.binding))), formatPercent(b.share),
             qs(b.detail).toHtmlEscaped());
}

} // namespace

PlanningView::PlanningView(ScenarioDocument& doc, QWidget* parent) : QWidget(parent), doc_(doc) {
    banner_ = makeBanner();
    summary_ = new QLabel();
    summary_->setObjectName(QStringLiteral("analysis_summary"));
    summary_->setWordWrap(true);
    memory_ = new ChartPanel(QStringLiteral("memory"));
    roofline_ = new ChartPanel(QStringLiteral("roofline"));
    auto* charts = new QSplitter(Qt::Horizontal);
    charts->addWidget(memory_);
    charts->addWidget(roofline_);
    charts->setStretchFactor(0, 1);
    charts->setStretchFactor(1, 1);

    auto* binding = new QGroupBox(tr("Binding resource"));
    binding->setMinimumHeight(120);
    auto* bl = new QVBoxLayout(binding);
    prefill_ = new QLabel();
    decode_ = new QLabel();
    capacity_ = new QLabel();
    for (QLabel* l : {prefill_, decode_, capacity_}) {
        l->setWordWrap(true);
        l->setTextFormat(Qt::RichText);
        bl->addWidget(l);
    }

    figures_ = new FiguresModel(this);
    memoryTable_ = new MemoryTableModel(this);
    whatIfs_ = new WhatIfTableModel(this);
    auto* tabs = new QTabWidget();
    auto* figuresView = makeTable(figures_);
    // Long values wrap onto more lines instead of ending in "…" (the figures only: the what-if
    // table is long and its rows stay one line).
    figuresView->setWordWrap(true);
    figuresView->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    figuresView->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tabs->addTab(figuresView, tr("Serving figures"));
    auto* memoryView = makeTable(memoryTable_);
    memoryView->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tabs->addTab(memoryView, tr("Memory per GPU"));

    auto* whatIfBox = new QGroupBox(tr("What-ifs, ranked by effect (double-click to apply)"));
    auto* wl = new QVBoxLayout(whatIfBox);
    whatIfView_ = makeTable(whatIfs_);
    whatIfView_->setObjectName(QStringLiteral("what_ifs"));
    whatIfView_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    wl->addWidget(whatIfView_);
    auto* applyButton = new QPushButton(tr("Apply selected what-if"));
    applyButton->setObjectName(QStringLiteral("apply_what_if"));
    wl->addWidget(applyButton, 0, Qt::AlignRight);
    connect(whatIfView_, &QTableView::doubleClicked, this,
            [this](const QModelIndex& i) { applyWhatIf(i.row()); });
    connect(applyButton, &QPushButton::clicked, this, [this] {
        const auto rows = whatIfView_->selectionModel()->selectedRows();
        if (!rows.isEmpty()) {
            applyWhatIf(rows.first().row());
        }
    });

    auto* lower = new QSplitter(Qt::Horizontal);
    lower->addWidget(tabs);
    lower->addWidget(whatIfBox);
    lower->setStretchFactor(0, 2);
    lower->setStretchFactor(1, 3);

    auto* vertical = new QSplitter(Qt::Vertical);
    vertical->addWidget(charts);
    vertical->addWidget(binding);
    vertical->addWidget(lower);
    vertical->setStretchFactor(0, 3);
    vertical->setStretchFactor(1, 0);
    vertical->setStretchFactor(2, 2);

    results_ = vertical;
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(banner_);
    layout->addWidget(summary_);
    layout->addWidget(vertical, 1);
}

void PlanningView::showAnalysis(const AnalysisPtr& a) {
    analysis_ = a;
    banner_->setVisible(false);
    summary_->setEnabled(true);
    results_->setEnabled(true);
    const auto& s = a->scenario;
    const auto& d = s.deployment;
    const auto& e = a->serving();
    summary_->setText(tr("<b>%1</b> on %2 × %3 (tp %4, pp %5, replicas %6), weights %7, KV %8, %9: "
                         "<b>%10</b>, TTFT %11, TPOT %12, %13 tok/s")
                          .arg(qs(d.model.name).toHtmlEscaped())
                          .arg(d.gpus())
                          .arg(qs(d.gpu.name))
                          .arg(d.par.tp)
                          .arg(d.par.pp)
                          .arg(d.par.dp)
                          .arg(qs(d.prec.weights.name), qs(d.prec.kv_cache.name),
                               qs(model::to_string(e.memory.engine.kind)),
                               e.memory.fits ? tr("fits") : tr("does NOT fit"), formatTime(e.ttft),
                               formatTime(e.tpot), formatNumber(e.throughput)));
    ChartAdapter::memory(*memory_, e.memory);
    if (e.memory.fits) {
        ChartAdapter::roofline(*roofline_, d, e);
    } else {
        roofline_->showMessage(tr("No operating points: the deployment does not fit.\n%1")
                                   .arg(qs(a->bottleneck.capacity_detail)));
    }
    prefill_->setText(tr("Prefill: ") + verdict(a->bottleneck.prefill));
    decode_->setText(tr("Decode: ") + verdict(a->bottleneck.decode));
    capacity_->setVisible(a->bottleneck.capacity_binds);
    capacity_->setText(tr("<b>Memory capacity binds:</b> %1")
                           .arg(qs(a->bottleneck.capacity_detail).toHtmlEscaped()));
    figures_->setRows(servingRows(*a));
    memoryTable_->setEstimate(e.memory);
    whatIfs_->setWhatIfs(a->what_ifs);
    emit shown();
}

void PlanningView::showError(const QString& message) {
    banner_->setText(tr("Cannot estimate this scenario: %1").arg(message));
    banner_->setVisible(true);
    // The figures below belong to the last scenario that could be estimated: greyed, never
    // shown as if they were this one's.
    summary_->setEnabled(false);
    results_->setEnabled(false);
    if (analysis_) {
        summary_->setText(tr("Out of date (the last scenario that could be estimated): ") +
                          summary_->text());
        analysis_.reset();
    }
    emit shown();
}

bool PlanningView::resultsCurrent() const {
    return results_->isEnabled();
}

QString PlanningView::errorText() const {
    return banner_->isVisible() ? banner_->text() : QString();
}

bool PlanningView::applyWhatIf(int row) {
    if (!analysis_ || row < 0 || row >= whatIfs_->rowCount()) {
        return false;
    }
    const model::WhatIf& x = whatIfs_->whatIf(row);
    model::Scenario next = doc_.scenario();
    if (!apply_what_if(next, x, doc_.database(), analysis_->serving().memory)) {
        return false;
    }
    doc_.edit(next, tr("what-if: %1").arg(qs(x.change)));
    return true;
}

QList<ChartPanel*> PlanningView::charts() const {
    return {memory_, roofline_};
}

QList<QPair<QString, const QAbstractItemModel*>> PlanningView::tables() const {
    return {{QStringLiteral("serving"), figures_},
            {QStringLiteral("memory"), memoryTable_},
            {QStringLiteral("what_ifs"), whatIfs_}};
}

} // namespace gpuplan::gui
