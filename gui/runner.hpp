#pragma once
/// The one place the desktop app runs the core: every job copies its scenario (a value type),
/// runs on a worker thread through QtConcurrent and comes back as a value in a signal. Errors
/// are caught here (the GUI's boundary, where exceptions become messages) and reported as messages.
///
/// Three kinds of job: the live analysis (latest wins: a request made while one runs replaces
/// any waiting one, so typing never queues stale work), the simulation (progress and cancel
/// through a std::stop_token), comparisons of pinned configurations, and the sizing search
/// (progress and cancel as the simulation).

#include "gui/analysis.hpp"
#include "hwdb/database.hpp"
#include "model/scenario.hpp"
#include "sim/simulate.hpp"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>
#include <stop_token>
#include <vector>

namespace gpuplan::gui {

using AnalysisPtr = std::shared_ptr<const Analysis>;
using SimOutcomePtr = std::shared_ptr<const SimOutcome>;
using PlanOutcomePtr = std::shared_ptr<const PlanOutcome>;

/// The analyses of several configurations, in order, or why one failed.
struct Comparison {
    std::vector<std::optional<Analysis>> analyses;
    std::vector<std::string> errors; ///< per configuration; empty when it succeeded
};
using ComparisonPtr = std::shared_ptr<const Comparison>;

class Runner : public QObject {
    Q_OBJECT
  public:
    /// `core` must outlive the runner (jobs read it concurrently).
    explicit Runner(const Core& core, QObject* parent = nullptr);
    ~Runner() override;

    /// Analyzes `s` off the GUI thread; analysisReady or analysisFailed follows. A request made
    /// while a job runs waits, replacing any request waiting before it.
    void requestAnalysis(model::Scenario s, AnalysisParts parts = {});
    /// Starts a simulation (cancelling a running one) with the scenario's efficiency profile and
    /// node, as the CLI's simulate; progress, then simulationFinished.
    void startSimulation(model::Scenario s, sim::SimOptions options = {});
    /// Asks a running simulation to stop; it finishes with result.stopped set.
    void cancelSimulation();
    /// Analyzes several configurations (no what-ifs) in one job; comparisonReady follows.
    void requestComparison(std::vector<model::Scenario> configs);
    /// Plans the scenario's training job with the layout search; layoutSearchReady follows
    /// (with the error in training_error when the search fails).
    void requestLayoutSearch(model::Scenario s);
    /// Starts the sizing search (`gpuplan plan`) on the scenario and its `plan:` block
    /// (cancelling a running one); planSearchProgress, then planSearchFinished.
    void startPlanSearch(model::Scenario s);
    /// Asks a running sizing search to stop; it finishes with result.stopped set.
    void cancelPlanSearch();

    [[nodiscard]] bool analysisRunning() const { return analysis_.isRunning(); }
    [[nodiscard]] bool simulationRunning() const { return simulation_.isRunning(); }
    [[nodiscard]] bool searchRunning() const { return search_.isRunning(); }
    [[nodiscard]] bool planSearchRunning() const { return plan_.isRunning(); }
    [[nodiscard]] const Core& core() const { return core_; }
    /// Waits for every job (tests and shutdown).
    void waitForIdle();

  signals:
    void analysisStarted();
    void analysisReady(gpuplan::gui::AnalysisPtr analysis);
    void analysisFailed(QString message);
    void simulationProgress(double fraction);
    void simulationFinished(gpuplan::gui::SimOutcomePtr outcome);
    void comparisonReady(gpuplan::gui::ComparisonPtr comparison);
    void layoutSearchReady(gpuplan::gui::AnalysisPtr analysis);
    void planSearchProgress(double fraction);
    void planSearchFinished(gpuplan::gui::PlanOutcomePtr outcome);

  private:
    struct AnalysisResult {
        AnalysisPtr analysis;
        QString error;
    };
    void startAnalysis(model::Scenario s, AnalysisParts parts);
    void analysisDone();

    const Core& core_;
    QFutureWatcher<AnalysisResult> analysis_;
    std::optional<std::pair<model::Scenario, AnalysisParts>> pending_;
    QFutureWatcher<SimOutcomePtr> simulation_;
    std::stop_source stop_;
    std::shared_ptr<std::atomic<double>> last_progress_;
    QFutureWatcher<ComparisonPtr> comparison_;
    QFutureWatcher<AnalysisResult> search_;
    QFutureWatcher<PlanOutcomePtr> plan_;
    std::stop_source planStop_;
};

} // namespace gpuplan::gui

Q_DECLARE_METATYPE(gpuplan::gui::AnalysisPtr)
Q_DECLARE_METATYPE(gpuplan::gui::SimOutcomePtr)
Q_DECLARE_METATYPE(gpuplan::gui::ComparisonPtr)
Q_DECLARE_METATYPE(gpuplan::gui::PlanOutcomePtr)
