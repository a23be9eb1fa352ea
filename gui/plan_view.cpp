#include "gui/chart_adapter.hpp"
#include "gui/table_models.hpp"
#include "gui/ui_util.hpp"
#include "gui/views.hpp"
#include "model/error.hpp"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace gpuplan::gui {

namespace {

/// The precisions offered for weights and KV cache (docs/scenario-schema.md names more; a
/// plan block read from a file keeps those it lists).
const char* const kPrecisions[] = {"bf16", "fp16", "fp8", "int8", "awq-int4", "nvfp4"};

QListWidget* checkList(const char* object_name) {
    auto* list = new QListWidget();
    list->setObjectName(QString::fromLatin1(object_name));
    list->setSelectionMode(QAbstractItemView::NoSelection);
    return list;
}

QListWidget* precisionList(const char* object_name) {
    auto* list = checkList(object_name);
    list->setFlow(QListView::LeftToRight);
    list->setWrapping(true);
    list->setMaximumHeight(56);
    for (const char* p : kPrecisions) {
        auto* item = new QListWidgetItem(QString::fromLatin1(p), list);
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Unchecked);
    }
    return list;
}

std::vector<std::string> checkedNames(const QListWidget* list) {
    std::vector<std::string> out;
    for (int i = 0; i < list->count(); ++i) {
        if (list->item(i)->checkState() == Qt::Checked) {
            out.push_back(list->item(i)->text().toStdString());
        }
    }
    return out;
}

void setChecked(QListWidget* list, const std::vector<std::string>& names) {
    for (int i = 0; i < list->count(); ++i) {
        const bool on = std::find(names.begin(), names.end(),
                                  list->item(i)->text().toStdString()) != names.end();
        list->item(i)->setCheckState(on ? Qt::Checked : Qt::Unchecked);
    }
}

std::vector<model::Precision> precisionsOf(const QListWidget* list) {
    std::vector<model::Precision> out;
    for (const auto& n : checkedNames(list)) {
        if (const auto p = model::find_precision(n)) {
            out.push_back(*p);
        }
    }
    return out;
}

std::vector<std::string> namesOf(const std::vector<model::Precision>& ps) {
    std::vector<std::string> out;
    for (const auto& p : ps) {
        out.push_back(p.name);
    }
    return out;
}

} // namespace

PlanView::PlanView(ScenarioDocument& doc, Runner& runner, QWidget* parent)
    : QWidget(parent), doc_(doc), runner_(runner) {
    candidates_ = checkList("plan_candidates");
    candidates_->setToolTip(tr("accelerators to try; none ticked: the scenario's own hardware"));
    for (const auto& g : doc_.database().accelerators()) {
        auto* item = new QListWidgetItem(qs(g.name), candidates_);
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Unchecked);
    }
    maxGpus_ = new QSpinBox();
    maxGpus_->setObjectName(QStringLiteral("plan_max_gpus"));
    maxGpus_->setRange(1, 1 << 16);
    weights_ = precisionList("plan_weights");
    weights_->setToolTip(tr("weight precisions to try; none ticked: the scenario's"));
    kvCache_ = precisionList("plan_kv_cache");
    kvCache_->setToolTip(tr("KV-cache precisions to try; none ticked: the scenario's"));
    budget_ = new QDoubleSpinBox();
    budget_->setObjectName(QStringLiteral("plan_budget"));
    budget_->setRange(0, 1e9);
    budget_->setDecimals(0);
    budget_->setSingleStep(1000);
    budget_->setSpecialValueText(tr("none"));
    powerBudget_ = new QDoubleSpinBox();
    powerBudget_->setObjectName(QStringLiteral("plan_power_budget"));
    powerBudget_->setRange(0, 1e6);
    powerBudget_->setDecimals(1);
    powerBudget_->setSuffix(QStringLiteral(" kW"));
    powerBudget_->setSpecialValueText(tr("none"));
    powerBudget_->setToolTip(tr("ceiling on the deployment's peak power at the wall"));
    top_ = new QSpinBox();
    top_->setObjectName(QStringLiteral("plan_top"));
    top_->setRange(1, 1000);

    auto* form = new QFormLayout();
    form->addRow(tr("max GPUs"), maxGpus_);
    form->addRow(tr("weights"), weights_);
    form->addRow(tr("KV cache"), kvCache_);
    form->addRow(tr("monthly budget"), budget_);
    form->addRow(tr("power budget"), powerBudget_);
    form->addRow(tr("top N"), top_);
    auto* space = new QGroupBox(tr("Search space and constraints (the scenario's plan: block)"));
    auto* spaceLayout = new QHBoxLayout(space);
    auto* candBox = new QVBoxLayout();
    candBox->addWidget(new QLabel(tr("candidate GPUs")));
    candBox->addWidget(candidates_, 1);
    spaceLayout->addLayout(candBox, 1);
    spaceLayout->addLayout(form, 2);

    cost_ = new ChartPanel(QStringLiteral("plan_monthly_cost"));
    cost_->showMessage(tr("Search to rank configurations by monthly cost."));
    cost_->setMinimumHeight(230);
    auto* top = new QHBoxLayout();
    top->addWidget(space, 3);
    top->addWidget(cost_, 2);

    search_ = new QPushButton(tr("Search"));
    search_->setObjectName(QStringLiteral("plan_search"));
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setObjectName(QStringLiteral("plan_cancel"));
    cancel_->setEnabled(false);
    progress_ = new QProgressBar();
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    auto* bar = new QHBoxLayout();
    bar->addWidget(search_);
    bar->addWidget(cancel_);
    bar->addWidget(progress_, 1);
    banner_ = makeBanner();
    verdict_ = new QLabel(
        tr("The cheapest configurations that meet the SLOs; double-click one to adopt it."));
    verdict_->setObjectName(QStringLiteral("plan_verdict"));
    verdict_->setWordWrap(true);

    table_ = new PlanTableModel(this);
    tableView_ = new QTableView();
    tableView_->setObjectName(QStringLiteral("plan_table"));
    tableView_->setModel(table_);
    tableView_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    tableView_->setSelectionBehavior(QAbstractItemView::SelectRows);
    tableView_->verticalHeader()->setVisible(false);
    tableView_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    tableView_->horizontalHeader()->setStretchLastSection(true);
    tableView_->setAlternatingRowColors(true);

    stale_ = makeStaleNote();
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top, 2);
    layout->addLayout(bar);
    layout->addWidget(banner_);
    layout->addWidget(stale_);
    connect(&doc_, &ScenarioDocument::scenarioChanged, this, &PlanView::markStale);
    layout->addWidget(verdict_);
    layout->addWidget(tableView_, 3);

    connect(candidates_, &QListWidget::itemChanged, this, [this] {
        if (refreshing_) {
            return;
        }
        model::Scenario next = doc_.scenario();
        try {
            set_plan_candidates(next, doc_.database(), checkedNames(candidates_));
        } catch (const InputError& e) {
            banner_->setText(qs(e.what()));
            banner_->setVisible(true);
            return;
        }
        doc_.edit(next, tr("plan candidates"));
    });
    connect(weights_, &QListWidget::itemChanged, this, [this] {
        if (!refreshing_) {
            editPlan(tr("plan weights"), -1,
                     [this](model::PlanConfig& p) { p.weights = precisionsOf(weights_); });
        }
    });
    connect(kvCache_, &QListWidget::itemChanged, this, [this] {
        if (!refreshing_) {
            editPlan(tr("plan KV cache"), -1,
                     [this](model::PlanConfig& p) { p.kv_cache = precisionsOf(kvCache_); });
        }
    });
    connect(maxGpus_, qOverload<int>(&QSpinBox::valueChanged), this, [this](int v) {
        editPlan(tr("plan max GPUs"), 601, [v](model::PlanConfig& p) { p.max_gpus = v; });
    });
    connect(top_, qOverload<int>(&QSpinBox::valueChanged), this, [this](int v) {
        editPlan(tr("plan top N"), 602, [v](model::PlanConfig& p) { p.top = v; });
    });
    connect(budget_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this](double v) {
        editPlan(tr("plan budget"), 603, [v](model::PlanConfig& p) {
            if (v <= 0) {
                p.budget.reset();
            } else {
                const std::string currency =
                    p.budget ? p.budget->money.currency : std::string("USD");
                p.budget = model::Price{{v, currency}, model::PriceBasis::Month};
            }
        });
    });
    connect(powerBudget_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this](double v) {
        editPlan(tr("plan power budget"), 604, [v](model::PlanConfig& p) {
            if (v <= 0) {
                p.power_budget.reset();
            } else {
                p.power_budget = Watts(v * 1e3);
            }
        });
    });
    connect(search_, &QPushButton::clicked, this, &PlanView::search);
    connect(cancel_, &QPushButton::clicked, this, &PlanView::cancel);
    connect(tableView_, &QTableView::doubleClicked, this,
            [this](const QModelIndex& i) { adopt(i.row()); });
    connect(&runner_, &Runner::planSearchProgress, this,
            [this](double f) { progress_->setValue(static_cast<int>(f * 1000)); });
    connect(&runner_, &Runner::planSearchFinished, this, &PlanView::finished);
    connect(&doc_, &ScenarioDocument::scenarioChanged, this, &PlanView::refresh);
    refresh();
}

void PlanView::editPlan(const QString& what, int merge_key,
                        const std::function<void(model::PlanConfig&)>& change) {
    if (refreshing_) {
        return;
    }
    model::Scenario next = doc_.scenario();
    model::PlanConfig p = next.plan.value_or(model::PlanConfig{});
    change(p);
    next.plan = std::move(p);
    doc_.edit(next, what, merge_key);
}

void PlanView::refresh() {
    refreshing_ = true;
    const model::Scenario& s = doc_.scenario();
    const model::PlanConfig p = s.plan.value_or(model::PlanConfig{});
    setChecked(candidates_, plan_candidate_names(s));
    showValue(maxGpus_, p.max_gpus);
    setChecked(weights_, namesOf(p.weights));
    setChecked(kvCache_, namesOf(p.kv_cache));
    showValue(budget_, p.budget ? p.budget->money.amount : 0.0);
    budget_->setSuffix(QStringLiteral(" %1/month")
                           .arg(p.budget ? qs(p.budget->money.currency) : QStringLiteral("USD")));
    showValue(powerBudget_, p.power_budget ? p.power_budget->si() / 1e3 : 0.0);
    showValue(top_, p.top);
    refreshing_ = false;
}

QString PlanView::staleText() const {
    return stale_->isHidden() ? QString() : stale_->text();
}

void PlanView::markStale() {
    // Adopting a row changes the deployment, not the question the search answered.
    if (!outcome_ || adopting_ || !stale_->isHidden()) {
        return;
    }
    stale_->setText(tr("Out of date: the scenario changed after this search; search again for "
                       "an answer that matches it."));
    stale_->setVisible(true);
    tableView_->setEnabled(false);
}

void PlanView::search() {
    banner_->setVisible(false);
    stale_->setVisible(false);
    tableView_->setEnabled(true);
    progress_->setValue(0);
    progress_->setFormat(tr("searching… %p%"));
    search_->setEnabled(false);
    cancel_->setEnabled(true);
    runner_.startPlanSearch(doc_.scenario());
}

void PlanView::cancel() {
    runner_.cancelPlanSearch();
}

void PlanView::finished(const PlanOutcomePtr& outcome) {
    outcome_ = outcome;
    search_->setEnabled(true);
    cancel_->setEnabled(false);
    progress_->setFormat(QStringLiteral("%p%"));
    if (!outcome->result) {
        banner_->setText(tr("The search failed: %1").arg(qs(outcome->error)));
        banner_->setVisible(true);
        table_->setRows({}, {}, outcome->scenario.slo.percentile);
        cost_->showMessage(tr("No result."));
        emit shown();
        return;
    }
    const plan::SizingResult& r = *outcome->result;
    progress_->setValue(1000);
    // Nothing meets the SLO: the closest miss is the one row, so it can still be adopted.
    std::vector<plan::SizingRow> rows = r.ranked;
    if (!r.found && r.closest_miss) {
        rows = {*r.closest_miss};
    }
    const QString currency = qs(r.currency);
    table_->setRows(rows, currency, outcome->scenario.slo.percentile);
    QString text = (r.found ? QString() : tr("No answer: ")) + qs(r.verdict);
    if (r.stopped) {
        text += tr(" (stopped)");
    }
    text += tr(" — %1 shapes, %2 configurations, %3 simulated in %4 s, ranked by %5 cost.")
                .arg(r.shapes)
                .arg(r.configurations)
                .arg(r.simulated)
                .arg(outcome->wall_s, 0, 'f', 1)
                .arg(qs(model::to_string(r.pricing)));
    verdict_->setText(text);
    QStringList names;
    std::vector<double> values;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].monthly) {
            // The rank, as in the table's first column (a bar name short enough to stand
            // under its bar).
            names << QStringLiteral("#%1").arg(i + 1);
            values.push_back(*rows[i].monthly);
        }
    }
    if (values.empty()) {
        cost_->showMessage(tr("No configuration with a monthly cost."));
    } else {
        ChartAdapter::bars(*cost_, tr("monthly cost (%1)").arg(qs(model::to_string(r.pricing))),
                           currency + tr("/month"), names, values);
    }
    emit shown();
}

bool PlanView::adopt(int row) {
    if (!outcome_ || row < 0 || row >= table_->rowCount()) {
        return false;
    }
    const plan::SizingRow& r = table_->row(row);
    model::Scenario next = doc_.scenario();
    if (!adopt_configuration(next, doc_.database(), outcome_->plan, r.config)) {
        return false;
    }
    adopting_ = true;
    doc_.edit(next, tr("adopt %1 × %2").arg(r.config.gpus).arg(qs(r.config.gpu)));
    adopting_ = false;
    return true;
}

QList<ChartPanel*> PlanView::charts() const {
    return {cost_};
}

QList<QPair<QString, const QAbstractItemModel*>> PlanView::tables() const {
    return {{QStringLiteral("plan"), table_}};
}

} // namespace gpuplan::gui
