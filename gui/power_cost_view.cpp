#include "gui/chart_adapter.hpp"
#include "gui/table_models.hpp"
#include "gui/ui_util.hpp"
#include "gui/views.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <cmath>

namespace gpuplan::gui {

namespace {

QTableView* figuresTable(QAbstractItemModel* model) {
    auto* t = new QTableView();
    t->setModel(model);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->setVisible(false);
    // Long values wrap onto more lines instead of ending in "…".
    t->setWordWrap(true);
    t->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    t->setAlternatingRowColors(true);
    return t;
}

QDoubleSpinBox* number(const QString& name, double min, double max, double step, int decimals) {
    auto* b = new QDoubleSpinBox();
    b->setObjectName(name);
    b->setRange(min, max);
    b->setSingleStep(step);
    b->setDecimals(decimals);
    return b;
}

} // namespace

PowerCostView::PowerCostView(ScenarioDocument& doc, QWidget* parent) : QWidget(parent), doc_(doc) {
    banner_ = makeBanner();
    headline_ = new QLabel();
    headline_->setObjectName(QStringLiteral("power_cost_headline"));
    headline_->setWordWrap(true);
    monthly_ = new ChartPanel(QStringLiteral("monthly_cost"));
    rentVsBuy_ = new ChartPanel(QStringLiteral("rent_vs_buy"));
    rack_ = new ChartPanel(QStringLiteral("rack_limits"));
    power_ = new FiguresModel(this);
    rackFigures_ = new FiguresModel(this);
    cost_ = new FiguresModel(this);

    // Settings of the scenario's cost: and rack: blocks.
    auto* settings = new QGroupBox(tr("Cost and rack settings"));
    auto* form = new QFormLayout(settings);
    years_ = number(QStringLiteral("amortization_years"), 0.1, 50, 0.5, 1);
    residual_ = number(QStringLiteral("residual_fraction"), 0, 0.99, 0.05, 2);
    maintenance_ = number(QStringLiteral("maintenance_fraction"), 0, 1, 0.01, 3);
    hours_ = number(QStringLiteral("hours_per_day"), 0.01, 24, 1, 1);
    offHours_ = new QComboBox();
    offHours_->setObjectName(QStringLiteral("off_hours"));
    for (const auto o : {model::OffHours::Resident, model::OffHours::Idle, model::OffHours::Off}) {
        offHours_->addItem(qs(model::to_string(o)), static_cast<int>(o));
    }
    amps_ = number(QStringLiteral("pdu_amps"), 1, 1000, 1, 0);
    amps_->setSuffix(QStringLiteral(" A"));
    volts_ = number(QStringLiteral("pdu_volts"), 1, 1000, 10, 0);
    volts_->setSuffix(QStringLiteral(" V"));
    phases_ = new QComboBox();
    phases_->setObjectName(QStringLiteral("pdu_phases"));
    phases_->addItem(tr("three phase"), 3);
    phases_->addItem(tr("single phase"), 1);
    cooling_ = new QComboBox();
    cooling_->setObjectName(QStringLiteral("cooling"));
    for (const auto& [name, kind] : model::enum_names(model::CoolingKind{})) {
        cooling_->addItem(QString::fromUtf8(name), static_cast<int>(kind));
    }
    nodesPerRack_ = new QSpinBox();
    nodesPerRack_->setObjectName(QStringLiteral("nodes_per_rack"));
    nodesPerRack_->setRange(0, 1024);
    nodesPerRack_->setSpecialValueText(tr("none (budget only sizes racks)"));
    form->addRow(tr("amortization (years)"), years_);
    form->addRow(tr("residual value (fraction)"), residual_);
    form->addRow(tr("maintenance per year (fraction)"), maintenance_);
    form->addRow(tr("serving hours per day"), hours_);
    form->addRow(tr("GPUs outside serving hours"), offHours_);
    auto* pdu = new QHBoxLayout();
    pdu->addWidget(amps_);
    pdu->addWidget(volts_);
    pdu->addWidget(phases_);
    form->addRow(tr("PDU"), pdu);
    form->addRow(tr("cooling"), cooling_);
    form->addRow(tr("nodes per rack budget"), nodesPerRack_);

    const auto edit = [this](const QString& what, int key,
                             const std::function<void(model::Scenario&)>& f) {
        if (refreshing_) {
            return;
        }
        model::Scenario next = doc_.scenario();
        f(next);
        doc_.edit(next, what, key);
    };
    connect(years_, &QDoubleSpinBox::valueChanged, this, [edit](double v) {
        edit(tr("amortization"), 101, [v](model::Scenario& s) { s.cost.amortization_years = v; });
    });
    connect(residual_, &QDoubleSpinBox::valueChanged, this, [edit](double v) {
        edit(tr("residual value"), 102, [v](model::Scenario& s) { s.cost.residual_fraction = v; });
    });
    connect(maintenance_, &QDoubleSpinBox::valueChanged, this, [edit](double v) {
        edit(tr("maintenance"), 103, [v](model::Scenario& s) { s.cost.maintenance_fraction = v; });
    });
    connect(hours_, &QDoubleSpinBox::valueChanged, this, [edit](double v) {
        edit(tr("serving hours"), 104,
             [v](model::Scenario& s) { s.cost.utilization.hours_per_day = v; });
    });
    connect(offHours_, &QComboBox::activated, this, [this, edit](int i) {
        const auto o = static_cast<model::OffHours>(offHours_->itemData(i).toInt());
        edit(tr("off hours"), 105, [o](model::Scenario& s) { s.cost.off_hours = o; });
    });
    connect(amps_, &QDoubleSpinBox::valueChanged, this, [edit](double v) {
        edit(tr("PDU amps"), 106, [v](model::Scenario& s) { s.rack.pdu.current_a = v; });
    });
    connect(volts_, &QDoubleSpinBox::valueChanged, this, [edit](double v) {
        edit(tr("PDU volts"), 107, [v](model::Scenario& s) { s.rack.pdu.voltage_v = v; });
    });
    connect(phases_, &QComboBox::activated, this, [this, edit](int i) {
        const int p = phases_->itemData(i).toInt();
        edit(tr("PDU phases"), 108, [p](model::Scenario& s) { s.rack.pdu.phases = p; });
    });
    connect(cooling_, &QComboBox::activated, this, [this, edit](int i) {
        const auto k = static_cast<model::CoolingKind>(cooling_->itemData(i).toInt());
        edit(tr("cooling"), 109, [k](model::Scenario& s) { s.rack.cooling.kind = k; });
    });
    connect(nodesPerRack_, &QSpinBox::valueChanged, this, [edit](int v) {
        edit(tr("nodes per rack"), 110, [v](model::Scenario& s) {
            s.rack.nodes_per_rack = v > 0 ? std::optional<int>(v) : std::nullopt;
        });
    });

    auto* tabs = new QTabWidget();
    tables_ = tabs;
    tabs->addTab(figuresTable(cost_), tr("Cost"));
    tabs->addTab(figuresTable(power_), tr("Power"));
    tabs->addTab(figuresTable(rackFigures_), tr("Racks"));

    auto* grid = new QGridLayout();
    grid->addWidget(monthly_, 0, 0);
    grid->addWidget(rentVsBuy_, 0, 1);
    grid->addWidget(rack_, 0, 2);
    // The settings span two columns: no column is wider than a chart needs (readable at
    // 1280 × 800 beside the scenario panel).
    grid->addWidget(tabs, 1, 0);
    grid->addWidget(settings, 1, 1, 1, 2);
    grid->setRowStretch(0, 3);
    grid->setRowStretch(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(banner_);
    layout->addWidget(headline_);
    layout->addLayout(grid, 1);
    connect(&doc_, &ScenarioDocument::scenarioChanged, this, &PowerCostView::refresh);
    refresh();
}

void PowerCostView::refresh() {
    refreshing_ = true;
    const auto& s = doc_.scenario();
    const QSignalBlocker b1(years_), b2(residual_), b3(maintenance_), b4(hours_), b5(offHours_),
        b6(amps_), b7(volts_), b8(phases_), b9(cooling_), b10(nodesPerRack_);
    showValue(years_, s.cost.amortization_years);
    showValue(residual_, s.cost.residual_fraction);
    showValue(maintenance_, s.cost.maintenance_fraction);
    showValue(hours_, s.cost.utilization.hours_per_day);
    offHours_->setCurrentIndex(
        std::max(0, offHours_->findData(static_cast<int>(s.cost.off_hours))));
    showValue(amps_, s.rack.pdu.current_a);
    showValue(volts_, s.rack.pdu.voltage_v);
    phases_->setCurrentIndex(std::max(0, phases_->findData(s.rack.pdu.phases)));
    cooling_->setCurrentIndex(
        std::max(0, cooling_->findData(static_cast<int>(s.rack.cooling.kind))));
    showValue(nodesPerRack_, s.rack.nodes_per_rack.value_or(0));
    refreshing_ = false;
}

void PowerCostView::showError(const QString& message) {
    banner_->setText(tr("Cannot estimate this scenario: %1").arg(message));
    banner_->setVisible(true);
    if (resultsCurrent() && !headline_->text().isEmpty()) {
        headline_->setText(tr("Out of date (the last scenario that could be estimated): ") +
                           headline_->text());
    }
    for (QWidget* w :
         std::initializer_list<QWidget*>{headline_, monthly_, rentVsBuy_, rack_, tables_}) {
        w->setEnabled(false);
    }
}

bool PowerCostView::resultsCurrent() const {
    return tables_->isEnabled();
}

QString PowerCostView::errorText() const {
    return banner_->isVisible() ? banner_->text() : QString();
}

QString PowerCostView::headline() const {
    return headline_->text();
}

void PowerCostView::showAnalysis(const AnalysisPtr& a) {
    for (QWidget* w :
         std::initializer_list<QWidget*>{headline_, monthly_, rentVsBuy_, rack_, tables_}) {
        w->setEnabled(true);
    }
    QStringList problems;
    if (a->power) {
        power_->setRows(powerRows(*a->power));
    } else {
        power_->setRows({});
        problems << tr("power: %1").arg(qs(a->power_error));
    }
    if (a->rack) {
        rackFigures_->setRows(rackRows(*a->rack));
        ChartAdapter::rackLimits(*rack_, *a->rack);
    } else {
        rackFigures_->setRows({});
        rack_->showMessage(tr("No rack plan: %1").arg(qs(a->rack_error)));
        problems << tr("racks: %1").arg(qs(a->rack_error));
    }
    if (a->cost && a->cost_inputs) {
        cost_->setRows(costRows(*a->cost_inputs, *a->cost));
        ChartAdapter::monthlyCost(*monthly_, *a->cost);
        // Show the amortization period, or past the break-even month when that is later.
        const int months = static_cast<int>(std::ceil(a->scenario.cost.amortization_years * 12));
        ChartAdapter::rentVsBuy(*rentVsBuy_, *a->cost,
                                std::max(months, a->cost->break_even_month.value_or(0) + 6));
    } else {
        cost_->setRows({});
        monthly_->showMessage(tr("No cost estimate: %1").arg(qs(a->cost_error)));
        rentVsBuy_->showMessage(tr("No cost estimate: %1").arg(qs(a->cost_error)));
        problems << tr("cost: %1").arg(qs(a->cost_error));
    }
    banner_->setText(problems.join(QStringLiteral("\n")));
    banner_->setVisible(!problems.isEmpty());
    QStringList head;
    if (a->rack) {
        head << tr("nodes <b>%1</b> in racks <b>%2</b> (%3 per rack, binding: %4)")
                    .arg(a->rack->nodes)
                    .arg(a->rack->racks)
                    .arg(a->rack->nodes_per_rack)
                    .arg(qs(model::to_string(a->rack->binding)));
    }
    if (a->power) {
        head << tr("%1 average, %2 peak")
                    .arg(formatWatts(a->power->deployment_average),
                         formatWatts(a->power->deployment_peak));
    }
    if (a->cost) {
        head << tr("own <b>%1</b>/month vs rent <b>%2</b>/month; per million tokens %3 own, %4 "
                   "rented")
                    .arg(formatMoney(a->cost->own_monthly), formatMoney(a->cost->rent_monthly),
                         formatMoney(a->cost->own_per_million_tokens),
                         formatMoney(a->cost->rent_per_million_tokens));
    }
    headline_->setText(head.join(QStringLiteral("; ")));
}

QList<ChartPanel*> PowerCostView::charts() const {
    return {monthly_, rentVsBuy_, rack_};
}

QList<QPair<QString, const QAbstractItemModel*>> PowerCostView::tables() const {
    return {{QStringLiteral("cost"), cost_},
            {QStringLiteral("power"), power_},
            {QStringLiteral("racks"), rackFigures_}};
}

} // namespace gpuplan::gui
