#pragma once
/// The Curves tab: sizing curves of the scenario being edited — throughput, TTFT and TPOT
/// against offered load (sequences in flight or requests/s) for its GPU and its plan candidates,
/// with the SLO lines and each candidate's highest load meeting them. The analytic curves are
/// plan::load_curve (what `gpuplan curve` prints), computed on a worker thread whenever the
/// scenario changes; "Confirm with simulator" runs plan::simulate_curve at a few loads around
/// each candidate's highest load on a worker thread (progress and cancel) and draws its P50 and
/// P99 as markers.

#include "gui/analysis.hpp"
#include "gui/scenario_document.hpp"
#include "gui/views.hpp"
#include "plan/load_curve.hpp"

#include <QFutureWatcher>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>
#include <stop_token>
#include <vector>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStandardItemModel;

namespace gpuplan::gui {

/// The curves of one scenario as the tab shows them.
struct CurveOutcome {
    model::Scenario scenario;
    std::optional<plan::LoadCurve> curve;
    std::string error;
};

/// The simulator's points for each candidate of a curve (in the curve's order).
struct CurveSimulation {
    model::Scenario scenario;
    plan::LoadAxis axis = plan::LoadAxis::Concurrency;
    std::vector<std::vector<plan::SimulatedPoint>> points;
    std::string error;
    int requests = 0; ///< per load
    bool stopped = false;
};

/// The candidates of `s`'s curves with the core's profiles (plan::curve_candidates with the
/// scenario's plan candidates, as `gpuplan curve` builds them).
[[nodiscard]] std::vector<plan::CurveCandidate> curve_candidates(const model::Scenario& s,
                                                                 const Core& core);

/// The loads the simulator confirms for one candidate: half, three quarters, all and 1.25 × its
/// highest load meeting the SLO (else the curve's loads at quarters), whole for concurrency.
[[nodiscard]] std::vector<double> confirm_loads(const plan::CandidateCurve& c, plan::LoadAxis axis);

class CurveView : public QWidget, public ExportableView {
    Q_OBJECT
  public:
    CurveView(ScenarioDocument& doc, const Core& core, QWidget* parent = nullptr);
    ~CurveView() override;

    /// Recomputes the analytic curves now (on the worker thread); `shown` follows.
    void refresh();
    /// Starts the simulator at confirm_loads of every candidate; `simulated` follows.
    void confirm();
    void cancel();
    /// Waits for running jobs (tests).
    void waitForIdle();

    [[nodiscard]] const std::shared_ptr<const CurveOutcome>& outcome() const { return outcome_; }
    [[nodiscard]] const std::shared_ptr<const CurveSimulation>& simulation() const {
        return simulation_;
    }
    [[nodiscard]] QString headline() const;
    [[nodiscard]] QString errorText() const;
    [[nodiscard]] QList<ChartPanel*> charts() const override;
    [[nodiscard]] QList<QPair<QString, const QAbstractItemModel*>> tables() const override;

  signals:
    /// The analytic curves (or their error) are drawn.
    void shown();
    /// A simulator run finished (or was stopped) and its markers are drawn.
    void simulated();

  protected:
    void showEvent(QShowEvent* e) override;

  private:
    [[nodiscard]] plan::LoadAxis axis() const;
    void curveDone();
    void simulationDone();
    void draw();

    ScenarioDocument& doc_;
    const Core& core_;
    QComboBox* axis_;
    QSpinBox* points_;
    QSpinBox* requests_;
    QPushButton* confirm_;
    QPushButton* cancel_;
    QProgressBar* progress_;
    QLabel* banner_;
    QLabel* headline_;
    ChartPanel* throughput_;
    ChartPanel* ttft_;
    ChartPanel* tpot_;
    QStandardItemModel* table_;
    QTimer debounce_;
    bool dirty_ = true;    ///< the scenario changed since the curves were computed
    bool pending_ = false; ///< a refresh was asked for while one ran
    QFutureWatcher<std::shared_ptr<const CurveOutcome>> curveJob_;
    QFutureWatcher<std::shared_ptr<const CurveSimulation>> simJob_;
    std::stop_source stop_;
    std::shared_ptr<const CurveOutcome> outcome_;
    std::shared_ptr<const CurveSimulation> simulation_;
};

} // namespace gpuplan::gui
