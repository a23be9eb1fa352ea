#include "gui/diagnose_view.hpp"

#include "gui/ui_util.hpp"
#include "model/error.hpp"
#include "plan/diagnosis.hpp"

#include <QApplication>
#include <QColor>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFont>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace gpuplan::gui {
namespace {

QString fixed(double v, int decimals) {
    return QString::number(v, 'f', decimals);
}

QTableView* makeTable(QStandardItemModel* m, const char* name) {
    auto* v = new QTableView();
    v->setObjectName(QString::fromLatin1(name));
    v->setModel(m);
    v->setSelectionBehavior(QAbstractItemView::SelectRows);
    v->setSelectionMode(QAbstractItemView::SingleSelection);
    v->setEditTriggers(QAbstractItemView::NoEditTriggers);
    v->setWordWrap(true);
    v->horizontalHeader()->setStretchLastSection(true);
    v->verticalHeader()->setVisible(false);
    return v;
}

QStandardItem* item(const QString& text) {
    auto* i = new QStandardItem(text);
    i->setToolTip(text);
    return i;
}

} // namespace

bool apply_diagnosis_fix(model::Scenario& s, const model::DiagnosisFix& fix) {
    if (!fix.estimated || !fix.deployment || *fix.deployment == s.deployment) {
        return false;
    }
    s.deployment = *fix.deployment;
    return true;
}

DiagnoseView::DiagnoseView(ScenarioDocument& doc, const Core& core, QWidget* parent)
    : QWidget(parent), doc_(doc), core_(core) {
    auto* form = new QFormLayout();
    metrics_ = addFileRow(form, tr("vLLM /metrics scrape"), "diagnose_metrics");
    metricsLater_ = addFileRow(form, tr("second scrape (later)"), "diagnose_metrics_later");
    interval_ = new QDoubleSpinBox();
    interval_->setObjectName(QStringLiteral("diagnose_interval"));
    interval_->setRange(0, 1e7);
    interval_->setDecimals(1);
    interval_->setSuffix(tr(" s"));
    interval_->setSpecialValueText(tr("from the scrapes' timestamps"));
    interval_->setToolTip(tr("seconds between the two scrapes"));
    form->addRow(tr("interval"), interval_);
    bench_ = addFileRow(form, tr("benchmark result"), "diagnose_bench");
    benchKind_ = new QComboBox();
    benchKind_->setObjectName(QStringLiteral("diagnose_bench_kind"));
    benchKind_->addItems({tr("vllm bench serve --save-result"), tr("GuideLLM benchmarks.json"),
                          tr("AIPerf profile_export_aiperf.json")});
    benchIndex_ = new QSpinBox();
    benchIndex_->setObjectName(QStringLiteral("diagnose_bench_index"));
    benchIndex_->setRange(-1, 100000);
    benchIndex_->setValue(-1);
    benchIndex_->setSpecialValueText(tr("the only one"));
    benchIndex_->setToolTip(tr("which benchmark of a GuideLLM sweep (0-based)"));
    auto* benchRow = new QHBoxLayout();
    benchRow->addWidget(benchKind_, 1);
    benchRow->addWidget(new QLabel(tr("sweep index")));
    benchRow->addWidget(benchIndex_);
    form->addRow(tr("benchmark tool"), benchRow);
    smi_ = addFileRow(form, tr("nvidia-smi CSV"), "diagnose_smi");
    dmon_ = addFileRow(form, tr("nvidia-smi dmon"), "diagnose_dmon");
    dcgm_ = addFileRow(form, tr("DCGM exporter scrape"), "diagnose_dcgm");
    startupLog_ = addFileRow(form, tr("engine start-up log"), "diagnose_startup_log");
    auto* run = new QPushButton(tr("Diagnose"));
    run->setObjectName(QStringLiteral("diagnose_run"));
    connect(run, &QPushButton::clicked, this, [this] { (void)diagnose(); });
    form->addRow(QString(), run);

    banner_ = makeBanner();
    banner_->setObjectName(QStringLiteral("diagnose_error"));
    stale_ = makeStaleNote();
    stale_->setText(tr("The scenario changed since this diagnosis: press Diagnose again."));
    summary_ = new QLabel();
    summary_->setObjectName(QStringLiteral("diagnose_summary"));
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    comparisons_ = new QStandardItemModel(0, 6, this);
    comparisons_->setHorizontalHeaderLabels({tr("figure"), tr("observed"), tr("predicted"),
                                             tr("observed/predicted"), tr("source"), tr("basis")});
    rows_ = new QStandardItemModel(0, 7, this);
    rows_->setHorizontalHeaderLabels({tr("row"), tr("applies"), tr("symptom"), tr("cause"),
                                      tr("evidence"), tr("check"), tr("first fix")});
    fixes_ = new QStandardItemModel(0, 4, this);
    fixes_->setHorizontalHeaderLabels({tr("layer"), tr("change"), tr("effect"), tr("applies")});
    auto* comparisonsView = makeTable(comparisons_, "diagnose_comparisons");
    rowsView_ = makeTable(rows_, "diagnose_rows");
    fixesView_ = makeTable(fixes_, "diagnose_fixes");
    connect(rowsView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& now) { showFixes(now.row()); });
    connect(fixesView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& now) {
                apply_->setEnabled(now.isValid() && !isStale_ &&
                                   fixes_->item(now.row(), 3)->text() == tr("yes"));
            });
    connect(fixesView_, &QTableView::doubleClicked, this,
            [this](const QModelIndex& i) { (void)applyFix(shownRow_, i.row()); });
    apply_ = new QPushButton(tr("Apply fix to the scenario"));
    apply_->setObjectName(QStringLiteral("diagnose_apply"));
    apply_->setEnabled(false);
    connect(apply_, &QPushButton::clicked, this,
            [this] { (void)applyFix(shownRow_, fixesView_->currentIndex().row()); });
    notes_ = new QLabel();
    notes_->setObjectName(QStringLiteral("diagnose_notes"));
    notes_->setWordWrap(true);

    auto* fixesBox = new QWidget();
    auto* fixesLayout = new QVBoxLayout(fixesBox);
    fixesLayout->setContentsMargins(0, 0, 0, 0);
    fixesLayout->addWidget(new QLabel(tr("Fixes of the selected row (framework → model → "
                                         "hardware), re-estimated at the observed demand:")));
    fixesLayout->addWidget(fixesView_);
    fixesLayout->addWidget(apply_, 0, Qt::AlignLeft);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(comparisonsView);
    split->addWidget(rowsView_);
    split->addWidget(fixesBox);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(banner_);
    layout->addWidget(stale_);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);
    layout->addWidget(notes_);

    connect(&doc_, &ScenarioDocument::scenarioChanged, this, &DiagnoseView::markStale);
}

QLineEdit* DiagnoseView::addFileRow(QFormLayout* form, const QString& label, const char* key) {
    auto* edit = new QLineEdit();
    edit->setObjectName(QString::fromLatin1(key));
    edit->setPlaceholderText(tr("(none)"));
    auto* browse = new QToolButton();
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("choose the file"));
    connect(browse, &QToolButton::clicked, this, [this, edit, label] {
        const QString path = QFileDialog::getOpenFileName(this, label, edit->text());
        if (!path.isEmpty()) {
            edit->setText(path);
        }
    });
    auto* row = new QHBoxLayout();
    row->addWidget(edit, 1);
    row->addWidget(browse);
    form->addRow(label, row);
    return edit;
}

hwdb::ObservationFiles DiagnoseView::files() const {
    const auto path = [](const QLineEdit* e) {
        return std::filesystem::path(e->text().trimmed().toStdString());
    };
    hwdb::ObservationFiles f;
    for (const QLineEdit* e : {metrics_, metricsLater_}) {
        if (!e->text().trimmed().isEmpty()) {
            f.metrics.push_back(path(e));
        }
    }
    if (interval_->value() > 0) {
        f.interval_s = interval_->value();
    }
    switch (static_cast<BenchKind>(benchKind_->currentIndex())) {
    case BenchKind::VllmBench: f.bench = path(bench_); break;
    case BenchKind::GuideLlm:
        f.guidellm = path(bench_);
        if (benchIndex_->value() >= 0) {
            f.bench_index = benchIndex_->value();
        }
        break;
    case BenchKind::AiPerf: f.aiperf = path(bench_); break;
    }
    f.smi = path(smi_);
    f.dmon = path(dmon_);
    f.dcgm = path(dcgm_);
    f.startup_log = path(startupLog_);
    return f;
}

bool DiagnoseView::diagnose() {
    const hwdb::ObservationFiles f = files();
    const model::Scenario s = doc_.scenario();
    try {
        if (f.empty()) {
            throw InvalidArgument("nothing observed is given: open a metrics scrape, a benchmark "
                                  "result, GPU telemetry or a start-up log");
        }
        QApplication::setOverrideCursor(Qt::WaitCursor);
        struct Restore {
            ~Restore() { QApplication::restoreOverrideCursor(); }
        } restore;
        const model::Observations obs = hwdb::read_observations(f);
        diagnosis_ = plan::diagnose_scenario(s, core_.profile_for(s.deployment.gpu), obs);
        diagnosed_ = s;
        banner_->hide();
    } catch (const std::exception& e) {
        diagnosis_.reset();
        diagnosed_.reset();
        banner_->setText(qs(e.what()));
        banner_->show();
    }
    isStale_ = false;
    stale_->hide();
    showDiagnosis();
    emit diagnosed();
    return diagnosis_.has_value();
}

void DiagnoseView::showDiagnosis() {
    comparisons_->removeRows(0, comparisons_->rowCount());
    rows_->removeRows(0, rows_->rowCount());
    fixes_->removeRows(0, fixes_->rowCount());
    shownRow_ = -1;
    apply_->setEnabled(false);
    summary_->clear();
    notes_->clear();
    if (!diagnosis_ || !diagnosed_) {
        return;
    }
    const model::Diagnosis& g = *diagnosis_;
    const auto& d = diagnosed_->deployment;
    summary_->setText(
        tr("%1 on %2 × %3: predicted at the observed load of %4 running, %5 + %6 tokens per "
           "request; the deployment runs %7 at once (error band ±%8 % P90). %9")
            .arg(qs(d.model.name), QString::number(d.gpus()), qs(d.gpu.name),
                 QString::number(g.running), QString::number(g.input_tokens),
                 QString::number(g.output_tokens), QString::number(g.capacity),
                 fixed(g.predicted.estimate.error_band.p90 * 100, 0),
                 g.rows.empty() ? tr("No row of the troubleshooting table applies: the "
                                     "observations agree with the model within its thresholds.")
                                : tr("Verdict: %1.").arg(qs(g.rows.front().id))));
    for (const auto& c : g.comparisons) {
        const int dec = c.unit == "ms" ? 1 : c.unit == "x" ? 2 : 0;
        comparisons_->appendRow(
            {item(qs(c.figure)), item(fixed(c.observed, dec) + u' ' + qs(c.unit)),
             item(fixed(c.predicted, dec) + u' ' + qs(c.unit)),
             item(c.predicted > 0 ? fixed(c.observed / c.predicted, 2) : QStringLiteral("-")),
             item(qs(c.source)), item(qs(c.basis))});
    }
    // The rows that apply first, ranked, highlighted (the verdict, the most severe, in bold);
    // then the rest of the troubleshooting table, greyed, with the condition that would fire it.
    bool first = true;
    for (const auto& r : g.rows) {
        QStringList evidence;
        for (const auto& e : r.evidence) {
            evidence << qs(e);
        }
        QList<QStandardItem*> cells{item(qs(r.id)),
                                    item(tr("yes")),
                                    item(qs(r.symptom)),
                                    item(qs(r.cause)),
                                    item(evidence.join(QStringLiteral("\n"))),
                                    item(qs(r.check)),
                                    item(r.fixes.empty() ? QString() : qs(r.fixes.front().change))};
        for (auto* c : cells) {
            c->setBackground(first ? QColor(255, 214, 153) : QColor(255, 240, 204));
            if (first) {
                QFont f = c->font();
                f.setBold(true);
                c->setFont(f);
            }
        }
        rows_->appendRow(cells);
        first = false;
    }
    for (const auto& t : model::troubleshooting_table()) {
        const bool applies = std::any_of(g.rows.begin(), g.rows.end(), [&](const auto& r) {
            return std::find(t.ids.begin(), t.ids.end(), r.id) != t.ids.end();
        });
        if (applies) {
            continue;
        }
        QStringList ids;
        for (const auto& id : t.ids) {
            ids << qs(id);
        }
        QList<QStandardItem*> cells{item(ids.join(QStringLiteral(", "))),
                                    item(tr("no")),
                                    item(QString()),
                                    item(QString()),
                                    item(tr("fires when %1").arg(qs(t.fires_when))),
                                    item(QString()),
                                    item(QString())};
        for (auto* c : cells) {
            c->setForeground(QColor(128, 128, 128));
        }
        rows_->appendRow(cells);
    }
    rowsView_->resizeRowsToContents();
    QStringList notes;
    for (const auto& n : g.notes) {
        notes << tr("note: %1").arg(qs(n));
    }
    notes_->setText(notes.join(u'\n'));
    if (!g.rows.empty()) {
        rowsView_->setCurrentIndex(rows_->index(0, 0));
        showFixes(0);
    }
}

void DiagnoseView::showFixes(int row) {
    fixes_->removeRows(0, fixes_->rowCount());
    shownRow_ = -1;
    apply_->setEnabled(false);
    if (!diagnosis_ || !diagnosed_ || row < 0 || row >= static_cast<int>(diagnosis_->rows.size())) {
        return;
    }
    shownRow_ = row;
    for (const auto& f : diagnosis_->rows[static_cast<std::size_t>(row)].fixes) {
        model::Scenario probe = *diagnosed_;
        const bool applies = apply_diagnosis_fix(probe, f);
        fixes_->appendRow({item(qs(model::to_string(f.layer))), item(qs(f.change)),
                           item(qs(f.effect)), item(applies ? tr("yes") : tr("no (advice)"))});
    }
    fixesView_->resizeRowsToContents();
    if (fixes_->rowCount() > 0) {
        fixesView_->setCurrentIndex(fixes_->index(0, 0));
    }
}

bool DiagnoseView::applyFix(int row, int fix) {
    if (!diagnosis_ || !diagnosed_ || isStale_ || row < 0 ||
        row >= static_cast<int>(diagnosis_->rows.size())) {
        return false;
    }
    const auto& fixes = diagnosis_->rows[static_cast<std::size_t>(row)].fixes;
    if (fix < 0 || fix >= static_cast<int>(fixes.size())) {
        return false;
    }
    const model::DiagnosisFix& f = fixes[static_cast<std::size_t>(fix)];
    model::Scenario next = doc_.scenario();
    if (!apply_diagnosis_fix(next, f)) {
        return false;
    }
    doc_.edit(next, tr("diagnosis fix: %1").arg(qs(f.change)));
    return true;
}

void DiagnoseView::markStale() {
    if (diagnosed_ && doc_.scenario() != *diagnosed_) {
        isStale_ = true;
        stale_->show();
        apply_->setEnabled(false);
    }
}

QString DiagnoseView::errorText() const {
    return banner_->isHidden() ? QString() : banner_->text();
}

QList<QPair<QString, const QAbstractItemModel*>> DiagnoseView::tables() const {
    return {{QStringLiteral("diagnosis_comparisons"), comparisons_},
            {QStringLiteral("diagnosis_rows"), rows_},
            {QStringLiteral("diagnosis_fixes"), fixes_}};
}

} // namespace gpuplan::gui
