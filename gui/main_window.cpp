#include "gui/main_window.hpp"

#include "gui/chart_adapter.hpp"
#include "gui/curve_view.hpp"
#include "gui/diagnose_view.hpp"
#include "gui/rack_view.hpp"
#include "gui/report.hpp"
#include "gui/scenario_form.hpp"
#include "gui/scenario_panel.hpp"
#include "gui/sweep_view.hpp"
#include "gui/ui_util.hpp"
#include "gui/views.hpp"
#include "gui/workload_editor.hpp"
#include "model/error.hpp"

#include <QAbstractItemModel>
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QUndoStack>

namespace gpuplan::gui {

namespace {

constexpr int kMaxRecent = 8;

QSettings settings() {
    return QSettings(QStringLiteral("gpuplan"), QStringLiteral("gpuplan-gui"));
}

} // namespace

MainWindow::MainWindow(const hwdb::Database& db, std::vector<std::filesystem::path> hwdb_folders,
                       QWidget* parent)
    : QMainWindow(parent), db_(db), core_(db, std::move(hwdb_folders)) {
    doc_ = new ScenarioDocument(db_, default_scenario(db_), this);
    runner_ = new Runner(core_, this);
    panel_ = new ScenarioPanel(*doc_);
    planning_ = new PlanningView(*doc_);
    simulation_ = new SimulationView(*doc_, *runner_);
    powerCost_ = new PowerCostView(*doc_);
    training_ = new TrainingView(*doc_, *runner_);
    compare_ = new CompareView(*doc_, *runner_);
    plan_ = new PlanView(*doc_, *runner_);
    tabs_ = new QTabWidget();
    tabs_->setObjectName(QStringLiteral("tabs"));
    tabs_->addTab(planning_, tr("Planning"));
    tabs_->addTab(simulation_, tr("Simulation"));
    tabs_->addTab(powerCost_, tr("Power && cost"));
    tabs_->addTab(training_, tr("Training"));
    tabs_->addTab(compare_, tr("Compare"));
    tabs_->addTab(plan_, tr("Plan"));
    auto* diagnose = new DiagnoseView(*doc_, core_);
    diagnose->setObjectName(QStringLiteral("diagnose_view"));
    tabs_->addTab(diagnose, tr("Diagnose"));
    auto* curves = new CurveView(*doc_, core_);
    curves->setObjectName(QStringLiteral("curve_view"));
    tabs_->addTab(curves, tr("Curves"));
    auto* racks = new RackView();
    racks->setObjectName(QStringLiteral("rack_view"));
    tabs_->addTab(racks, tr("Racks"));
    auto* workload = new WorkloadEditor(*doc_);
    workload->setObjectName(QStringLiteral("workload_editor"));
    tabs_->addTab(workload, tr("Workload"));
    auto* form = new ScenarioForm(*doc_);
    form->setObjectName(QStringLiteral("scenario_form"));
    tabs_->addTab(form, tr("Scenario"));
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(panel_);
    split->addWidget(tabs_);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setSizes({470, 1100});
    setCentralWidget(split);
    buildMenus();

    debounce_.setSingleShot(true);
    // Short: the runner already drops stale requests, the debounce only merges a burst of keys.
    debounce_.setInterval(10);
    connect(&debounce_, &QTimer::timeout, this,
            [this] { runner_->requestAnalysis(doc_->scenario()); });
    connect(doc_, &ScenarioDocument::scenarioChanged, this, &MainWindow::scheduleAnalysis);
    connect(doc_, &ScenarioDocument::fileStateChanged, this, &MainWindow::updateTitle);
    connect(runner_, &Runner::analysisReady, this, [this](const AnalysisPtr& a) {
        // Only the visible tab draws now; the others draw when they are shown.
        latest_ = a;
        showLatest();
        lastLatencyMs_ =
            sinceEdit_.isValid() ? static_cast<double>(sinceEdit_.nsecsElapsed()) / 1e6 : -1;
        statusBar()->showMessage(tr("estimated in %1 ms (edit to display %2 ms)")
                                     .arg(a->compute_ms, 0, 'f', 1)
                                     .arg(lastLatencyMs_, 0, 'f', 1));
        emit analysisShown(lastLatencyMs_);
    });
    connect(runner_, &Runner::analysisFailed, this, [this](const QString& message) {
        // No tab may go on showing the last analysis as this scenario's: each greys its
        // figures under the error, and none redraws the old analysis when it is shown.
        latest_.reset();
        planning_->showError(message);
        powerCost_->showError(message);
        training_->showError(message);
        if (auto* rackView = findChild<RackView*>()) {
            rackView->showError(message);
        }
        lastLatencyMs_ =
            sinceEdit_.isValid() ? static_cast<double>(sinceEdit_.nsecsElapsed()) / 1e6 : -1;
        statusBar()->showMessage(tr("the scenario cannot be estimated; see the Planning tab"));
        emit analysisShown(lastLatencyMs_);
    });
    connect(tabs_, &QTabWidget::currentChanged, this, [this] { showLatest(); });
    resize(1500, 940);
    updateTitle();
    scheduleAnalysis();
}

MainWindow::~MainWindow() {
    runner_->cancelSimulation();
    runner_->cancelPlanSearch();
    runner_->waitForIdle();
    // The curve view's jobs read core_, which goes before the tabs do.
    if (auto* curves = findChild<CurveView*>()) {
        curves->cancel();
        curves->waitForIdle();
    }
    // The undo stack signals "clean" while it is destroyed; nobody may listen by then.
    doc_->blockSignals(true);
    runner_->blockSignals(true);
}

void MainWindow::showLatest() {
    if (!latest_) {
        return;
    }
    QWidget* current = tabs_->currentWidget();
    const auto show = [&](QWidget* view, const auto& draw) {
        if (view == current && shownIn_[view] != latest_) {
            draw();
            shownIn_[view] = latest_;
        }
    };
    show(planning_, [&] { planning_->showAnalysis(latest_); });
    show(powerCost_, [&] { powerCost_->showAnalysis(latest_); });
    show(training_, [&] { training_->showAnalysis(latest_); });
    if (auto* racks = findChild<RackView*>()) {
        show(racks, [&] { racks->showAnalysis(latest_); });
    }
}

void MainWindow::setDebounce(int ms) {
    debounce_.setInterval(ms);
}

SweepView& MainWindow::openSweepTable(const QString& path, QString* error) {
    if (!sweep_) {
        // Its own window beside the scenario's (the table is not the scenario's result).
        sweep_ = new SweepView(this);
        sweep_->setWindowFlag(Qt::Window);
    }
    sweep_->openFile(path, error);
    sweep_->show();
    sweep_->raise();
    return *sweep_;
}

void MainWindow::scheduleAnalysis() {
    sinceEdit_.start();
    debounce_.start();
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New"), QKeySequence::New, this, [this] {
        if (maybeSave()) {
            doc_->reset(default_scenario(db_));
        }
    });
    file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
        if (!maybeSave()) {
            return;
        }
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open scenario"), {}, tr("Scenario YAML (*.yaml *.yml);;All files (*)"));
        if (!path.isEmpty()) {
            openFile(path);
        }
    });
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    file->addAction(tr("Open s&weep table…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open sweep table"), {},
                                                          tr("Sweep table (*.csv);;All files (*)"));
        if (!path.isEmpty()) {
            openSweepTable(path);
        }
    });
    file->addAction(tr("&Save"), QKeySequence::Save, this, [this] {
        if (doc_->path().isEmpty()) {
            const QString path = QFileDialog::getSaveFileName(
                this, tr("Save scenario"), qs(doc_->scenario().name) + QStringLiteral(".yaml"),
                tr("Scenario YAML (*.yaml)"));
            if (!path.isEmpty()) {
                saveFile(path);
            }
        } else {
            saveFile(doc_->path());
        }
    });
    file->addAction(tr("Save &As…"), QKeySequence::SaveAs, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save scenario as"), doc_->path(), tr("Scenario YAML (*.yaml)"));
        if (!path.isEmpty()) {
            saveFile(path);
        }
    });
    file->addSeparator();
    file->addAction(tr("Export &charts (PNG and SVG)…"), this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Export the charts of this tab to"));
        if (!dir.isEmpty()) {
            const QStringList written = exportCharts(dir);
            statusBar()->showMessage(tr("%1 files written to %2").arg(written.size()).arg(dir));
        }
    });
    file->addAction(tr("Export &results (CSV)…"), this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Export the tables of this tab to"));
        if (!dir.isEmpty()) {
            const QStringList written = exportTables(dir);
            statusBar()->showMessage(tr("%1 files written to %2").arg(written.size()).arg(dir));
        }
    });
    file->addAction(tr("Write purchase-review re&port (HTML)…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Write report"), qs(doc_->scenario().name) + QStringLiteral(".html"),
            tr("HTML (*.html)"));
        if (path.isEmpty()) {
            return;
        }
        QApplication::setOverrideCursor(Qt::WaitCursor);
        QString error;
        const bool ok = write_scenario_report(doc_->scenario(), core_, path, &error);
        QApplication::restoreOverrideCursor();
        if (ok) {
            statusBar()->showMessage(tr("report written to %1").arg(path));
        } else {
            QMessageBox::warning(this, tr("Cannot write the report"), error);
        }
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = doc_->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = doc_->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);

    QMenu* sim = menuBar()->addMenu(tr("&Simulate"));
    sim->addAction(tr("&Run"), QKeySequence(Qt::CTRL | Qt::Key_R), this, [this] {
        tabs_->setCurrentWidget(simulation_);
        simulation_->start();
    });
    sim->addAction(tr("&Cancel"), this, [this] { simulation_->cancel(); });
    QMenu* compare = menuBar()->addMenu(tr("&Compare"));
    compare->addAction(tr("&Pin current configuration"), QKeySequence(Qt::CTRL | Qt::Key_P), this,
                       [this] {
                           compare_->pinCurrent();
                           tabs_->setCurrentWidget(compare_);
                       });
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About"), this, [this] {
        QMessageBox::about(
            this, tr("About gpuplan"),
            tr("<b>gpuplan</b> — LLM capacity planner for GPUs.<br>The desktop app and the "
               "<tt>gpuplan</tt> CLI read and write the same scenario files and run the same "
               "core."));
    });
}

bool MainWindow::openFile(const QString& path, QString* error) {
    try {
        doc_->open(path);
        addRecent(QFileInfo(path).absoluteFilePath());
        return true;
    } catch (const InputError& e) {
        const QString message = qs(e.what());
        if (error) {
            *error = message;
        } else {
            QMessageBox::warning(this, tr("Cannot open the scenario"), message);
        }
        return false;
    }
}

bool MainWindow::saveFile(const QString& path, QString* error) {
    try {
        doc_->saveAs(path);
        addRecent(QFileInfo(path).absoluteFilePath());
        const QString& note = doc_->lastSaveNote();
        statusBar()->showMessage(note.isEmpty() ? tr("saved %1").arg(path)
                                                : tr("saved %1 (%2)").arg(path, note));
        return true;
    } catch (const Error& e) {
        const QString message = qs(e.what());
        if (error) {
            *error = message;
        } else {
            QMessageBox::warning(this, tr("Cannot save the scenario"), message);
        }
        return false;
    }
}

ExportableView* MainWindow::currentView() const {
    return dynamic_cast<ExportableView*>(tabs_->currentWidget());
}

QStringList MainWindow::exportCharts(const QString& folder) {
    QStringList written;
    ExportableView* view = currentView();
    if (!view) {
        return written;
    }
    const QDir dir(folder);
    for (ChartPanel* c : view->charts()) {
        const QString png = dir.filePath(c->key() + QStringLiteral(".png"));
        const QString svg = dir.filePath(c->key() + QStringLiteral(".svg"));
        if (c->savePng(png)) {
            written << png;
        }
        if (c->saveSvg(svg)) {
            written << svg;
        }
    }
    return written;
}

QStringList MainWindow::exportTables(const QString& folder) {
    QStringList written;
    ExportableView* view = currentView();
    if (!view) {
        return written;
    }
    const QDir dir(folder);
    for (const auto& [key, model] : view->tables()) {
        const QString path = dir.filePath(key + QStringLiteral(".csv"));
        if (model->rowCount() > 0 && writeCsv(*model, path)) {
            written << path;
        }
    }
    return written;
}

void MainWindow::updateTitle() {
    const QString name =
        doc_->path().isEmpty() ? qs(doc_->scenario().name) : QFileInfo(doc_->path()).fileName();
    setWindowTitle(tr("%1[*] — gpuplan").arg(name));
    setWindowModified(doc_->modified());
}

QStringList MainWindow::recentFiles() const {
    return settings().value(QStringLiteral("recentFiles")).toStringList();
}

void MainWindow::addRecent(const QString& path) {
    QStringList files = recentFiles();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMaxRecent) {
        files.removeLast();
    }
    settings().setValue(QStringLiteral("recentFiles"), files);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    if (!recentMenu_) {
        return;
    }
    recentMenu_->clear();
    const QStringList files = recentFiles();
    for (const QString& f : files) {
        recentMenu_->addAction(QFileInfo(f).fileName() + QStringLiteral("  (") +
                                   QFileInfo(f).absolutePath() + QStringLiteral(")"),
                               this, [this, f] {
                                   if (maybeSave()) {
                                       openFile(f);
                                   }
                               });
    }
    recentMenu_->setEnabled(!files.isEmpty());
}

bool MainWindow::maybeSave() {
    if (!doc_->modified() || !isVisible()) {
        return true;
    }
    const auto answer =
        QMessageBox::question(this, tr("Unsaved changes"),
                              tr("Save the changes to %1 first?").arg(qs(doc_->scenario().name)),
                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel) {
        return false;
    }
    if (answer == QMessageBox::Save) {
        const QString path = doc_->path().isEmpty()
                                 ? QFileDialog::getSaveFileName(this, tr("Save scenario"), {},
                                                                tr("Scenario YAML (*.yaml)"))
                                 : doc_->path();
        return !path.isEmpty() && saveFile(path);
    }
    return true;
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (maybeSave()) {
        e->accept();
    } else {
        e->ignore();
    }
}

} // namespace gpuplan::gui
