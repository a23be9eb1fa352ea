#include "gui/chart_adapter.hpp"
#include "gui/table_models.hpp"
#include "gui/ui_util.hpp"
#include "gui/views.hpp"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace gpuplan::gui {

namespace {

QString configName(const model::Scenario& s) {
    const auto& d = s.deployment;
    return QStringLiteral("%1× %2 tp%3 %4")
        .arg(d.gpus())
        .arg(qs(d.gpu.name))
        .arg(d.par.tp)
        .arg(qs(d.prec.weights.name));
}

} // namespace

CompareView::CompareView(ScenarioDocument& doc, Runner& runner, QWidget* parent)
    : QWidget(parent), doc_(doc), runner_(runner) {
    pin_ = new QPushButton(tr("Pin current configuration"));
    pin_->setObjectName(QStringLiteral("pin"));
    clear_ = new QPushButton(tr("Clear"));
    clear_->setObjectName(QStringLiteral("clear_pins"));
    note_ = new QLabel(
        tr("Pin up to four configurations (GPU, count, layout, precisions, engine); they are "
           "compared on the current workload and follow its edits."));
    note_->setWordWrap(true);
    auto* bar = new QHBoxLayout();
    bar->addWidget(pin_);
    bar->addWidget(clear_);
    bar->addWidget(note_, 1);
    table_ = new CompareTableModel(this);
    auto* view = new QTableView();
    view->setModel(table_);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->verticalHeader()->setVisible(false);
    // Long values wrap onto more lines instead of ending in "…".
    view->setWordWrap(true);
    view->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    view->setAlternatingRowColors(true);
    throughput_ = new ChartPanel(QStringLiteral("compare_throughput"));
    perGpu_ = new ChartPanel(QStringLiteral("compare_throughput_per_gpu"));
    tpot_ = new ChartPanel(QStringLiteral("compare_tpot"));
    cost_ = new ChartPanel(QStringLiteral("compare_cost"));
    auto* grid = new QGridLayout();
    // Two charts a row: readable at 1280 × 800 beside the scenario panel.
    grid->addWidget(view, 0, 0, 1, 2);
    grid->addWidget(throughput_, 1, 0);
    grid->addWidget(perGpu_, 1, 1);
    grid->addWidget(tpot_, 2, 0);
    grid->addWidget(cost_, 2, 1);
    grid->setRowStretch(0, 2);
    grid->setRowStretch(1, 3);
    grid->setRowStretch(2, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addLayout(grid, 1);
    connect(pin_, &QPushButton::clicked, this, [this] { pinCurrent(); });
    connect(clear_, &QPushButton::clicked, this, &CompareView::clear);
    connect(&runner_, &Runner::comparisonReady, this, &CompareView::showComparison);
    connect(&doc_, &ScenarioDocument::scenarioChanged, this, &CompareView::recompute);
    showComparison(std::make_shared<Comparison>());
}

bool CompareView::pinCurrent() {
    if (pinned_.size() >= kMaxPinned) {
        note_->setText(tr("Four configurations are pinned; clear them to pin others."));
        return false;
    }
    pinned_.push_back(doc_.scenario());
    names_ << QStringLiteral("%1: %2").arg(
        QString(QChar(static_cast<char16_t>(u'A' + names_.size()))), configName(doc_.scenario()));
    pin_->setEnabled(pinned_.size() < kMaxPinned);
    recompute();
    return true;
}

void CompareView::clear() {
    pinned_.clear();
    names_.clear();
    pin_->setEnabled(true);
    showComparison(std::make_shared<Comparison>());
}

void CompareView::recompute() {
    if (pinned_.empty()) {
        return;
    }
    // The pinned hardware and engine, the current workload, SLOs and prices.
    std::vector<model::Scenario> configs;
    const model::Scenario& now = doc_.scenario();
    for (const auto& p : pinned_) {
        model::Scenario s = now;
        s.deployment = p.deployment;
        s.model_ref = p.model_ref;
        s.accelerator_ref = p.accelerator_ref;
        s.node_ref = p.node_ref;
        s.name = p.name;
        configs.push_back(std::move(s));
    }
    runner_.requestComparison(std::move(configs));
}

void CompareView::showComparison(const ComparisonPtr& c) {
    if (c->analyses.size() > static_cast<std::size_t>(names_.size())) {
        return; // a job started before the pins were cleared
    }
    const QStringList names =
        c->analyses.empty() ? QStringList() : names_.mid(0, static_cast<int>(c->analyses.size()));
    table_->setConfigurations(names, c->analyses, c->errors);
    std::vector<double> throughput, perGpu, tpot, cost;
    QStringList costNames;
    std::vector<double> costValues;
    for (std::size_t i = 0; i < c->analyses.size(); ++i) {
        const auto& a = c->analyses[i];
        const auto& e = a ? a->serving() : model::ServingEstimate{};
        const int gpus = a ? a->scenario.deployment.gpus() : 1;
        throughput.push_back(e.throughput);
        perGpu.push_back(gpus > 0 ? e.throughput / gpus : 0);
        tpot.push_back(e.tpot.si() * 1e3);
        if (a && a->cost && a->cost->rent_per_million_tokens) {
            costNames << names.value(static_cast<int>(i));
            costValues.push_back(a->cost->rent_per_million_tokens->amount);
        }
    }
    // The bars are labelled A, B, C, D as the table's columns.
    QStringList letters;
    for (const QString& n : names) {
        letters << n.left(1);
    }
    for (QString& n : costNames) {
        n = n.left(1);
    }
    ChartAdapter::bars(*throughput_, tr("throughput"), tr("output tok/s"), letters, throughput);
    ChartAdapter::bars(*perGpu_, tr("throughput per GPU"), tr("output tok/s per GPU"), letters,
                       perGpu);
    ChartAdapter::bars(*tpot_, tr("TPOT"), tr("ms"), letters, tpot);
    if (!names.isEmpty() && costNames.isEmpty()) {
        cost_->showMessage(tr("No rent price for these GPUs."));
    } else {
        ChartAdapter::bars(*cost_, tr("rent per million tokens"), tr("per Mtok"), costNames,
                           costValues);
    }
    emit shown();
}

QList<ChartPanel*> CompareView::charts() const {
    return {throughput_, perGpu_, tpot_, cost_};
}

QList<QPair<QString, const QAbstractItemModel*>> CompareView::tables() const {
    return {{QStringLiteral("compare"), table_}};
}

} // namespace gpuplan::gui
