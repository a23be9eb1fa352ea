#pragma once
/// The result views of the main window's tabs. Each shows values the runner computed; none
/// computes. Every view lists its charts and tables so that the window can export them (charts
/// as PNG and SVG, tables as CSV).

#include "gui/analysis.hpp"
#include "gui/runner.hpp"
#include "gui/scenario_document.hpp"

#include <QList>
#include <QPair>
#include <QString>
#include <QWidget>

#include <functional>

class QAbstractItemModel;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QDoubleSpinBox;
class QComboBox;
class QCheckBox;
class QTableView;
class QListWidget;

namespace gpuplan::gui {

class ChartPanel;
class ClassTableModel;
class CompareTableModel;
class FiguresModel;
class LayoutTableModel;
class MemoryTableModel;
class PlanTableModel;
class WhatIfTableModel;

/// What a tab can export.
class ExportableView {
  public:
    virtual ~ExportableView() = default;
    /// The charts shown, in order.
    [[nodiscard]] virtual QList<ChartPanel*> charts() const = 0;
    /// The tables shown, each with a file-name key.
    [[nodiscard]] virtual QList<QPair<QString, const QAbstractItemModel*>> tables() const = 0;
};

/// A red banner for errors, hidden until shown.
QLabel* makeBanner();
/// An amber note that results on screen are out of date (object name "stale_note"), hidden
/// until shown.
QLabel* makeStaleNote();
/// The banner's style sheet.
QString bannerStyle();

/// The live analytic view: memory against capacity, the roofline with the prefill and decode
/// operating points, the binding resource per phase, the serving figures and the ranked
/// what-ifs (double-click one, or select it and press Apply, to apply it to the scenario).
class PlanningView : public QWidget, public ExportableView {
    Q_OBJECT
  public:
    PlanningView(ScenarioDocument& doc, QWidget* parent = nullptr);
    void showAnalysis(const AnalysisPtr& a);
    void showError(const QString& message);
    /// Applies the what-if in `row` of the table to the document. Returns false when it is
    /// not applicable.
    bool applyWhatIf(int row);
    [[nodiscard]] QList<ChartPanel*> charts() const override;
    [[nodiscard]] QList<QPair<QString, const QAbstractItemModel*>> tables() const override;
    [[nodiscard]] const WhatIfTableModel& whatIfs() const { return *whatIfs_; }
    [[nodiscard]] const FiguresModel& figures() const { return *figures_; }
    [[nodiscard]] QString errorText() const;
    [[nodiscard]] const AnalysisPtr& analysis() const { return analysis_; }
    /// False while an error banner stands over greyed, out-of-date figures.
    [[nodiscard]] bool resultsCurrent() const;

  signals:
    /// The view finished drawing `analysis` (charts and tables updated).
    void shown();

  private:
    ScenarioDocument& doc_;
    AnalysisPtr analysis_;
    QLabel* banner_;
    QLabel* summary_;
    QLabel* prefill_;
    QLabel* decode_;
    QLabel* capacity_;
    ChartPanel* memory_;
    ChartPanel* roofline_;
    FiguresModel* figures_;
    MemoryTableModel* memoryTable_;
    WhatIfTableModel* whatIfs_;
    QTableView* whatIfView_;
    QWidget* results_; ///< everything below the summary, greyed while the scenario has an error
};

/// The simulation tab: runs the discrete-event simulator through the runner with progress and
/// cancel, then shows the latency CDFs, throughput, queue, KV use and power over time, SLO
/// attainment per class and the summaries.
class SimulationView : public QWidget, public ExportableView {
    Q_OBJECT
  public:
    SimulationView(ScenarioDocument& doc, Runner& runner, QWidget* parent = nullptr);
    /// Starts a run of the document's scenario (`requests` overrides the count when > 0).
    void start();
    void cancel();
    [[nodiscard]] QList<ChartPanel*> charts() const override;
    [[nodiscard]] QList<QPair<QString, const QAbstractItemModel*>> tables() const override;
    [[nodiscard]] const SimOutcomePtr& outcome() const { return outcome_; }
    /// The out-of-date note's text, empty while the results match the scenario.
    [[nodiscard]] QString staleText() const;

  signals:
    /// A run finished (or failed) and the charts show it.
    void shown();

  private:
    void finished(const SimOutcomePtr& outcome);
    void markStale();

    ScenarioDocument& doc_;
    Runner& runner_;
    SimOutcomePtr outcome_;
    QPushButton* run_;
    QPushButton* cancel_;
    QSpinBox* requests_;
    QProgressBar* progress_;
    QLabel* banner_;
    QLabel* stale_;
    QWidget* results_;
    model::Scenario ranOn_; ///< the scenario the last run started with
    ChartPanel* power_;
    ChartPanel* ttft_;
    ChartPanel* tpot_;
    ChartPanel* e2e_;
    ChartPanel* throughput_;
    ChartPanel* queue_;
    ChartPanel* kv_;
    ChartPanel* slo_;
    FiguresModel* summary_;
    ClassTableModel* classes_;
};

/// Power, racks and cost: the power estimate, the rack layout and its binding limit, monthly
/// cost own vs rent, cost per million tokens and rent vs buy over time; with the rack and cost
/// settings of the scenario.
class PowerCostView : public QWidget, public ExportableView {
    Q_OBJECT
  public:
    PowerCostView(ScenarioDocument& doc, QWidget* parent = nullptr);
    void showAnalysis(const AnalysisPtr& a);
    /// The scenario cannot be estimated: a banner says why, and the figures below (the last
    /// estimate's) are greyed and marked out of date.
    void showError(const QString& message);
    /// False while an error banner stands over greyed, out-of-date figures.
    [[nodiscard]] bool resultsCurrent() const;
    [[nodiscard]] QString errorText() const;
    [[nodiscard]] QString headline() const;
    [[nodiscard]] QList<ChartPanel*> charts() const override;
    [[nodiscard]] QList<QPair<QString, const QAbstractItemModel*>> tables() const override;

  public slots:
    void refresh();

  private:
    ScenarioDocument& doc_;
    bool refreshing_ = false;
    QLabel* banner_;
    QLabel* headline_;
    QWidget* tables_;
    ChartPanel* monthly_;
    ChartPanel* rentVsBuy_;
    ChartPanel* rack_;
    FiguresModel* power_;
    FiguresModel* rackFigures_;
    FiguresModel* cost_;
    QDoubleSpinBox* years_;
    QDoubleSpinBox* residual_;
    QDoubleSpinBox* maintenance_;
    QDoubleSpinBox* hours_;
    QComboBox* offHours_;
    QDoubleSpinBox* amps_;
    QDoubleSpinBox* volts_;
    QComboBox* phases_;
    QComboBox* cooling_;
    QSpinBox* nodesPerRack_;
};

/// The training planner: memory per GPU by stage, the step-time breakdown, MFU, time and cost
/// to train, and the top layouts of the search; with the job's settings.
class TrainingView : public QWidget, public ExportableView {
    Q_OBJECT
  public:
    TrainingView(ScenarioDocument& doc, Runner& runner, QWidget* parent = nullptr);
    void showAnalysis(const AnalysisPtr& a);
    /// As PowerCostView::showError.
    void showError(const QString& message);
    [[nodiscard]] bool resultsCurrent() const;
    [[nodiscard]] QString errorText() const;
    /// Runs the layout search for the document's scenario.
    void search();
    [[nodiscard]] QList<ChartPanel*> charts() const override;
    [[nodiscard]] QList<QPair<QString, const QAbstractItemModel*>> tables() const override;

  public slots:
    void refresh();

  private:
    ScenarioDocument& doc_;
    Runner& runner_;
    bool refreshing_ = false;
    QLabel* banner_;
    QCheckBox* enabled_;
    QDoubleSpinBox* tokens_;
    QSpinBox* globalBatch_;
    QSpinBox* seqLen_;
    QSpinBox* tp_;
    QSpinBox* pp_;
    QSpinBox* cp_;
    QSpinBox* zero_;
    QSpinBox* microBatch_;
    QComboBox* recompute_;
    QComboBox* method_;
    QPushButton* search_;
    QLabel* searchStatus_;
    ChartPanel* memory_;
    ChartPanel* step_;
    QWidget* tables_;
    FiguresModel* figures_;
    LayoutTableModel* layouts_;
    QTableView* layoutView_;
};

/// The sizing search (`gpuplan plan`, plan::size_deployment): the scenario's `plan:` block
/// edited here (candidate GPUs from the hwdb, max GPUs, allowed precisions, monthly and power
/// budgets, top N; each change an undoable edit, so the block saves with the scenario), the
/// search run through the runner with progress and cancel, the ranked configurations in a table
/// and their monthly cost as bars. Double-click a row (or call adopt) to make that
/// configuration the scenario's hardware and layout (undoable).
class PlanView : public QWidget, public ExportableView {
    Q_OBJECT
  public:
    PlanView(ScenarioDocument& doc, Runner& runner, QWidget* parent = nullptr);
    /// Starts the search on the document's scenario.
    void search();
    void cancel();
    /// Adopts the configuration in `row` of the table into the document. Returns false when
    /// there is no such row.
    bool adopt(int row);
    [[nodiscard]] QList<ChartPanel*> charts() const override;
    [[nodiscard]] QList<QPair<QString, const QAbstractItemModel*>> tables() const override;
    [[nodiscard]] const PlanTableModel& table() const { return *table_; }
    [[nodiscard]] const PlanOutcomePtr& outcome() const { return outcome_; }
    /// The out-of-date note's text, empty while the results match the scenario.
    [[nodiscard]] QString staleText() const;

  public slots:
    /// Shows the document's plan block in the controls.
    void refresh();

  signals:
    /// A search finished (or failed) and the table and chart show it.
    void shown();

  private:
    void finished(const PlanOutcomePtr& outcome);
    void markStale();
    void editPlan(const QString& what, int merge_key,
                  const std::function<void(model::PlanConfig&)>& change);

    ScenarioDocument& doc_;
    Runner& runner_;
    bool refreshing_ = false;
    bool adopting_ = false; ///< the document changes because a row is adopted: still current
    PlanOutcomePtr outcome_;
    QListWidget* candidates_;
    QSpinBox* maxGpus_;
    QListWidget* weights_;
    QListWidget* kvCache_;
    QDoubleSpinBox* budget_;
    QDoubleSpinBox* powerBudget_;
    QSpinBox* top_;
    QPushButton* search_;
    QPushButton* cancel_;
    QProgressBar* progress_;
    QLabel* banner_;
    QLabel* stale_;
    QLabel* verdict_;
    PlanTableModel* table_;
    QTableView* tableView_;
    ChartPanel* cost_;
};

/// Up to four pinned configurations side by side for the current workload.
class CompareView : public QWidget, public ExportableView {
    Q_OBJECT
  public:
    static constexpr int kMaxPinned = 4;
    CompareView(ScenarioDocument& doc, Runner& runner, QWidget* parent = nullptr);
    /// Pins the document's current configuration; false when four are pinned already.
    bool pinCurrent();
    void clear();
    [[nodiscard]] int pinnedCount() const { return static_cast<int>(pinned_.size()); }
    [[nodiscard]] QList<ChartPanel*> charts() const override;
    [[nodiscard]] QList<QPair<QString, const QAbstractItemModel*>> tables() const override;
    [[nodiscard]] const CompareTableModel& table() const { return *table_; }

  public slots:
    /// Re-evaluates the pinned configurations with the document's current workload.
    void recompute();

  signals:
    void shown();

  private:
    void showComparison(const ComparisonPtr& c);

    ScenarioDocument& doc_;
    Runner& runner_;
    std::vector<model::Scenario> pinned_;
    QStringList names_;
    QPushButton* pin_;
    QPushButton* clear_;
    QLabel* note_;
    CompareTableModel* table_;
    ChartPanel* throughput_;
    ChartPanel* perGpu_;
    ChartPanel* tpot_;
    ChartPanel* cost_;
};

} // namespace gpuplan::gui
