#pragma once
/// The desktop app's window: the scenario panel on the left, the result tabs on the right
/// (Planning, Simulation, Power & cost, Training, Compare, Plan, Diagnose), and the File and Edit
/// menus (open, save in the CLI's format, recent files, chart and CSV export, undo and redo). Every
/// edit of the scenario schedules one analysis (debounced) on the runner; the tabs show its result.

#include "gui/runner.hpp"
#include "gui/scenario_document.hpp"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QStringList>
#include <QTimer>

#include <map>

class QMenu;
class QTabWidget;

namespace gpuplan::gui {

class CompareView;
class ExportableView;
class PlanningView;
class PlanView;
class PowerCostView;
class ScenarioPanel;
class SimulationView;
class SweepView;
class TrainingView;

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    /// `db` must outlive the window; `hwdb_folders` are the folders it was loaded from (their
    /// profiles/ subfolders hold the efficiency profiles).
    explicit MainWindow(const hwdb::Database& db,
                        std::vector<std::filesystem::path> hwdb_folders = hwdb::default_folders({}),
                        QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens a scenario file; shows the error in a dialog (or returns it) when it fails.
    bool openFile(const QString& path, QString* error = nullptr);
    /// Saves to `path` in the CLI's YAML format.
    bool saveFile(const QString& path, QString* error = nullptr);
    /// Writes every chart of the current tab as <key>.png and <key>.svg into `folder`;
    /// returns the files written.
    QStringList exportCharts(const QString& folder);
    /// Writes every table of the current tab as <key>.csv into `folder`.
    QStringList exportTables(const QString& folder);
    /// Opens a sweep's output table (`gpuplan sweep SPEC -o FILE.csv`) in the sweep window,
    /// which shows the error (file:line) when it cannot be read; `error` receives it too.
    SweepView& openSweepTable(const QString& path, QString* error = nullptr);
    /// Debounce between an edit and the analysis it triggers (default 10 ms).
    void setDebounce(int ms);

    [[nodiscard]] ScenarioDocument& document() { return *doc_; }
    [[nodiscard]] Runner& runner() { return *runner_; }
    [[nodiscard]] ScenarioPanel& panel() { return *panel_; }
    [[nodiscard]] PlanningView& planning() { return *planning_; }
    [[nodiscard]] SimulationView& simulation() { return *simulation_; }
    [[nodiscard]] PowerCostView& powerCost() { return *powerCost_; }
    [[nodiscard]] TrainingView& training() { return *training_; }
    [[nodiscard]] CompareView& compare() { return *compare_; }
    [[nodiscard]] PlanView& plan() { return *plan_; }
    [[nodiscard]] QTabWidget& tabs() { return *tabs_; }
    /// Milliseconds from the last edit to its analysis being shown (−1 before the first).
    [[nodiscard]] double lastEditToShownMs() const { return lastLatencyMs_; }
    /// The recent files, newest first.
    [[nodiscard]] QStringList recentFiles() const;

  signals:
    /// An analysis was shown in the visible tab (the others draw it when they are shown); `ms`
    /// is the time since the edit that caused it.
    void analysisShown(double ms);

  protected:
    void closeEvent(QCloseEvent* e) override;

  private:
    void buildMenus();
    void showLatest();
    void scheduleAnalysis();
    void updateTitle();
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    bool maybeSave();
    [[nodiscard]] ExportableView* currentView() const;

    const hwdb::Database& db_;
    Core core_;
    ScenarioDocument* doc_;
    Runner* runner_;
    ScenarioPanel* panel_;
    QTabWidget* tabs_;
    PlanningView* planning_;
    SimulationView* simulation_;
    PowerCostView* powerCost_;
    TrainingView* training_;
    CompareView* compare_;
    PlanView* plan_;
    SweepView* sweep_ = nullptr; ///< the sweep table window, made when first opened
    QMenu* recentMenu_ = nullptr;
    AnalysisPtr latest_;                      ///< the newest analysis
    std::map<QWidget*, AnalysisPtr> shownIn_; ///< what each tab last drew
    QTimer debounce_;
    QElapsedTimer sinceEdit_;
    double lastLatencyMs_ = -1;
};

} // namespace gpuplan::gui
