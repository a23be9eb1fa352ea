#include "gui/chart_adapter.hpp"
#include "gui/table_models.hpp"
#include "gui/ui_util.hpp"
#include "gui/views.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace gpuplan::gui {

namespace {

QSpinBox* intBox(const QString& name, int min, int max) {
    auto* b = new QSpinBox();
    b->setObjectName(name);
    b->setRange(min, max);
    return b;
}

/// A training job to start from when the scenario has none: Chinchilla-style pre-training of
/// the scenario's model on its GPUs with the hardware layout.
model::TrainingConfig starter(const model::Scenario& s) {
    model::TrainingConfig c;
    c.tokens = 1e11;
    c.seq_len = 4096;
    c.global_batch = 512;
    c.layout.tp = s.deployment.par.tp;
    c.layout.pp = s.deployment.par.pp;
    c.layout.dp = std::max(1, s.deployment.gpus() / (c.layout.tp * c.layout.pp));
    return c;
}

} // namespace

TrainingView::TrainingView(ScenarioDocument& doc, Runner& runner, QWidget* parent)
    : QWidget(parent), doc_(doc), runner_(runner) {
    banner_ = makeBanner();
    enabled_ = new QCheckBox(tr("Plan a training job on this hardware"));
    enabled_->setObjectName(QStringLiteral("training_enabled"));
    tokens_ = new QDoubleSpinBox();
    tokens_->setObjectName(QStringLiteral("training_tokens"));
    tokens_->setRange(0.001, 1e6);
    tokens_->setDecimals(3);
    tokens_->setSuffix(tr(" B tokens"));
    globalBatch_ = intBox(QStringLiteral("global_batch"), 1, 1 << 26);
    seqLen_ = intBox(QStringLiteral("seq_len"), 1, 1 << 24);
    tp_ = intBox(QStringLiteral("train_tp"), 1, 4096);
    pp_ = intBox(QStringLiteral("train_pp"), 1, 4096);
    cp_ = intBox(QStringLiteral("train_cp"), 1, 4096);
    zero_ = intBox(QStringLiteral("zero"), 0, 3);
    microBatch_ = intBox(QStringLiteral("micro_batch"), 1, 1 << 20);
    recompute_ = new QComboBox();
    recompute_->setObjectName(QStringLiteral("recompute"));
    for (const auto r :
         {model::Recompute::None, model::Recompute::Selective, model::Recompute::Full}) {
        recompute_->addItem(qs(model::to_string(r)), static_cast<int>(r));
    }
    method_ = new QComboBox();
    method_->setObjectName(QStringLiteral("method"));
    for (const auto m :
         {model::FinetuneMethod::Full, model::FinetuneMethod::Lora, model::FinetuneMethod::Qlora}) {
        method_->addItem(qs(model::to_string(m)), static_cast<int>(m));
    }
    auto* settings = new QGroupBox(tr("Training job"));
    auto* form = new QFormLayout(settings);
    form->addRow(enabled_);
    form->addRow(tr("tokens"), tokens_);
    form->addRow(tr("global batch (sequences)"), globalBatch_);
    form->addRow(tr("sequence length"), seqLen_);
    auto* par = new QHBoxLayout();
    for (auto [label, box] : {std::pair{tr("TP"), tp_}, {tr("PP"), pp_}, {tr("CP"), cp_}}) {
        par->addWidget(new QLabel(label));
        par->addWidget(box, 1);
    }
    form->addRow(tr("layout"), par);
    form->addRow(tr("ZeRO stage"), zero_);
    form->addRow(tr("micro-batch"), microBatch_);
    form->addRow(tr("recomputation"), recompute_);
    form->addRow(tr("method"), method_);
    search_ = new QPushButton(tr("Search layouts"));
    search_->setObjectName(QStringLiteral("search_layouts"));
    searchStatus_ = new QLabel();
    searchStatus_->setWordWrap(true);
    form->addRow(search_);
    form->addRow(searchStatus_);

    const auto edit = [this](const QString& what, int key,
                             const std::function<void(model::TrainingConfig&)>& f) {
        if (refreshing_) {
            return;
        }
        model::Scenario next = doc_.scenario();
        if (!next.training) {
            return;
        }
        f(*next.training);
        // dp follows from the GPU count, as the loader derives it.
        auto& l = next.training->layout;
        l.dp = std::max(1, next.deployment.gpus() / std::max(1, l.tp * l.pp * l.cp));
        doc_.edit(next, what, key);
    };
    connect(enabled_, &QCheckBox::toggled, this, [this](bool on) {
        if (refreshing_) {
            return;
        }
        model::Scenario next = doc_.scenario();
        if (on) {
            next.training = starter(next);
        } else {
            next.training.reset();
        }
        doc_.edit(next, on ? tr("add training job") : tr("remove training job"));
    });
    connect(tokens_, &QDoubleSpinBox::valueChanged, this, [edit](double v) {
        edit(tr("training tokens"), 201, [v](model::TrainingConfig& c) { c.tokens = v * 1e9; });
    });
    connect(globalBatch_, &QSpinBox::valueChanged, this, [edit](int v) {
        edit(tr("global batch"), 202, [v](model::TrainingConfig& c) { c.global_batch = v; });
    });
    connect(seqLen_, &QSpinBox::valueChanged, this, [edit](int v) {
        edit(tr("sequence length"), 203, [v](model::TrainingConfig& c) { c.seq_len = v; });
    });
    connect(tp_, &QSpinBox::valueChanged, this, [edit](int v) {
        edit(tr("training TP"), 204, [v](model::TrainingConfig& c) { c.layout.tp = v; });
    });
    connect(pp_, &QSpinBox::valueChanged, this, [edit](int v) {
        edit(tr("training PP"), 205, [v](model::TrainingConfig& c) { c.layout.pp = v; });
    });
    connect(cp_, &QSpinBox::valueChanged, this, [edit](int v) {
        edit(tr("training CP"), 206, [v](model::TrainingConfig& c) { c.layout.cp = v; });
    });
    connect(zero_, &QSpinBox::valueChanged, this, [edit](int v) {
        edit(tr("ZeRO stage"), 207, [v](model::TrainingConfig& c) { c.layout.zero = v; });
    });
    connect(microBatch_, &QSpinBox::valueChanged, this, [edit](int v) {
        edit(tr("micro-batch"), 208, [v](model::TrainingConfig& c) { c.layout.micro_batch = v; });
    });
    connect(recompute_, &QComboBox::activated, this, [this, edit](int i) {
        const auto r = static_cast<model::Recompute>(recompute_->itemData(i).toInt());
        edit(tr("recomputation"), 209, [r](model::TrainingConfig& c) { c.layout.recompute = r; });
    });
    connect(method_, &QComboBox::activated, this, [this, edit](int i) {
        const auto m = static_cast<model::FinetuneMethod>(method_->itemData(i).toInt());
        edit(tr("method"), 210, [m](model::TrainingConfig& c) { c.method = m; });
    });
    connect(search_, &QPushButton::clicked, this, &TrainingView::search);
    connect(&runner_, &Runner::layoutSearchReady, this, [this](const AnalysisPtr& a) {
        search_->setEnabled(true);
        if (!a->layouts) {
            searchStatus_->setText(tr("Search failed: %1").arg(qs(a->training_error)));
            return;
        }
        const auto& r = *a->layouts;
        searchStatus_->setText(tr("%1 layouts enumerated, %2 fit, %3 do not fit, %4 cannot run. %5")
                                   .arg(r.enumerated)
                                   .arg(r.fitting)
                                   .arg(r.not_fitting)
                                   .arg(r.invalid)
                                   .arg(qs(r.why)));
        QString currency;
        if (const auto rent = model::gpu_hour_price(a->scenario)) {
            currency = qs(rent->price.money.currency);
        }
        layouts_->setLayouts(r.top, currency);
    });
    connect(layoutView_ = new QTableView(), &QTableView::doubleClicked, this,
            [this](const QModelIndex& i) {
                // Adopt a layout from the search.
                const model::TrainingLayout l = layouts_->layout(i.row()).layout;
                model::Scenario next = doc_.scenario();
                if (next.training) {
                    next.training->layout = l;
                    doc_.edit(next, tr("adopt training layout"));
                }
            });

    memory_ = new ChartPanel(QStringLiteral("training_memory"));
    step_ = new ChartPanel(QStringLiteral("step_breakdown"));
    figures_ = new FiguresModel(this);
    layouts_ = new LayoutTableModel(this);
    layoutView_->setModel(layouts_);
    layoutView_->setObjectName(QStringLiteral("layouts"));
    layoutView_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layoutView_->setSelectionBehavior(QAbstractItemView::SelectRows);
    layoutView_->verticalHeader()->setVisible(false);
    layoutView_->horizontalHeader()->setStretchLastSection(true);
    layoutView_->setToolTip(tr("Double-click a layout to adopt it"));
    auto* figuresView = new QTableView();
    figuresView->setModel(figures_);
    figuresView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    figuresView->verticalHeader()->setVisible(false);
    // Long values wrap onto more lines instead of ending in "…".
    figuresView->setWordWrap(true);
    figuresView->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    figuresView->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    figuresView->horizontalHeader()->setStretchLastSection(true);
    auto* tabs = new QTabWidget();
    tables_ = tabs;
    tabs->addTab(figuresView, tr("Estimate"));
    tabs->addTab(layoutView_, tr("Top layouts (search)"));

    auto* grid = new QGridLayout();
    // Two columns (readable at 1280 × 800 beside the scenario panel): the charts, then the
    // tables and the job's settings.
    grid->addWidget(memory_, 0, 0);
    grid->addWidget(step_, 0, 1);
    grid->addWidget(tabs, 1, 0);
    grid->addWidget(settings, 1, 1);
    grid->setColumnStretch(0, 1);
    grid->setColumnStretch(1, 1);
    grid->setRowStretch(0, 3);
    grid->setRowStretch(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(banner_);
    layout->addLayout(grid, 1);
    connect(&doc_, &ScenarioDocument::scenarioChanged, this, &TrainingView::refresh);
    refresh();
}

void TrainingView::refresh() {
    refreshing_ = true;
    const auto& t = doc_.scenario().training;
    const QSignalBlocker b0(enabled_), b1(tokens_), b2(globalBatch_), b3(seqLen_), b4(tp_), b5(pp_),
        b6(cp_), b7(zero_), b8(microBatch_), b9(recompute_), b10(method_);
    enabled_->setChecked(t.has_value());
    for (QWidget* w :
         std::initializer_list<QWidget*>{tokens_, globalBatch_, seqLen_, tp_, pp_, cp_, zero_,
                                         microBatch_, recompute_, method_, search_}) {
        w->setEnabled(t.has_value());
    }
    if (t) {
        showValue(tokens_, t->tokens / 1e9);
        showValue(globalBatch_, t->global_batch);
        showValue(seqLen_, t->seq_len);
        showValue(tp_, t->layout.tp);
        showValue(pp_, t->layout.pp);
        showValue(cp_, t->layout.cp);
        showValue(zero_, t->layout.zero);
        showValue(microBatch_, t->layout.micro_batch);
        recompute_->setCurrentIndex(
            std::max(0, recompute_->findData(static_cast<int>(t->layout.recompute))));
        method_->setCurrentIndex(std::max(0, method_->findData(static_cast<int>(t->method))));
    }
    refreshing_ = false;
}

void TrainingView::search() {
    if (!doc_.scenario().training) {
        return;
    }
    search_->setEnabled(false);
    searchStatus_->setText(tr("searching…"));
    runner_.requestLayoutSearch(doc_.scenario());
}

void TrainingView::showError(const QString& message) {
    banner_->setStyleSheet(bannerStyle());
    banner_->setText(tr("Cannot estimate this scenario: %1").arg(message));
    banner_->setVisible(true);
    for (QWidget* w : std::initializer_list<QWidget*>{memory_, step_, tables_}) {
        w->setEnabled(false);
    }
}

bool TrainingView::resultsCurrent() const {
    return tables_->isEnabled();
}

QString TrainingView::errorText() const {
    return banner_->isVisible() ? banner_->text() : QString();
}

void TrainingView::showAnalysis(const AnalysisPtr& a) {
    for (QWidget* w : std::initializer_list<QWidget*>{memory_, step_, tables_}) {
        w->setEnabled(true);
    }
    if (!a->training) {
        figures_->setRows({});
        const QString why = qs(a->training_error);
        banner_->setText(a->scenario.training ? tr("The training plan failed: %1").arg(why) : why);
        banner_->setStyleSheet(a->scenario.training ? bannerStyle()
                                                    : QStringLiteral("color: #555; padding: 6px;"));
        banner_->setVisible(!why.isEmpty());
        memory_->showMessage(a->scenario.training ? tr("No estimate for this layout.")
                                                  : tr("No training job."));
        step_->showMessage(a->scenario.training ? tr("No estimate for this layout.")
                                                : tr("No training job."));
        return;
    }
    banner_->setStyleSheet(bannerStyle());
    banner_->setVisible(false);
    const model::TrainingEstimate& t = *a->training;
    ChartAdapter::trainingMemory(*memory_, t);
    ChartAdapter::stepBreakdown(*step_, t.result.step);
    figures_->setRows(trainingRows(t));
}

QList<ChartPanel*> TrainingView::charts() const {
    return {memory_, step_};
}

QList<QPair<QString, const QAbstractItemModel*>> TrainingView::tables() const {
    return {{QStringLiteral("training"), figures_}, {QStringLiteral("training_layouts"), layouts_}};
}

} // namespace gpuplan::gui
