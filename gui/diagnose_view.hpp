#pragma once
/// The Diagnose tab: the observation files of a running deployment (vLLM /metrics scrapes, a
/// benchmark result, GPU telemetry, the engine's start-up log) diagnosed against the scenario
/// being edited, as `gpuplan diagnose` does (docs/diagnose.md): the same readers
/// (hwdb::read_observations) and the same chain (plan::diagnose_scenario). It shows observed
/// beside predicted, the rows of the troubleshooting table the numbers support (highlighted, the
/// verdict first) with evidence, check and ranked fixes, and applies a re-estimated fix to the
/// scenario as one undoable edit.

#include "gui/analysis.hpp"
#include "gui/scenario_document.hpp"
#include "gui/views.hpp"
#include "hwdb/observed_readers.hpp"
#include "model/diagnose.hpp"

#include <QString>
#include <QWidget>

#include <optional>

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QStandardItemModel;
class QTableView;

namespace gpuplan::gui {

/// Applies a diagnosis fix to `s`: the deployment the fix was re-estimated with. Returns false
/// (and leaves `s` as it is) when the fix was not re-estimated (advice only) or changes nothing.
bool apply_diagnosis_fix(model::Scenario& s, const model::DiagnosisFix& fix);

class DiagnoseView : public QWidget, public ExportableView {
    Q_OBJECT
  public:
    /// The file inputs, each a line edit (object name "diagnose_<key>") with a browse button.
    enum class Input { Metrics, MetricsLater, Bench, Smi, Dmon, Dcgm, StartupLog };
    /// What the benchmark file is (the "diagnose_bench_kind" combo box, in this order).
    enum class BenchKind { VllmBench, GuideLlm, AiPerf };

    DiagnoseView(ScenarioDocument& doc, const Core& core, QWidget* parent = nullptr);

    /// The files the inputs name, as hwdb::read_observations takes them.
    [[nodiscard]] hwdb::ObservationFiles files() const;
    /// Reads the files and diagnoses the document's scenario (the "diagnose_run" button).
    /// Returns false and shows the error (a reader's names the file, line and field) in the
    /// banner when it fails.
    bool diagnose();
    /// Applies fix `fix` of row `row` of the diagnosis to the document (the "diagnose_apply"
    /// button applies the selected one). Returns false when it is not applicable or the
    /// diagnosis is out of date (the scenario changed since).
    bool applyFix(int row, int fix);

    [[nodiscard]] const std::optional<model::Diagnosis>& diagnosis() const { return diagnosis_; }
    [[nodiscard]] QString errorText() const;
    [[nodiscard]] QList<ChartPanel*> charts() const override { return {}; }
    [[nodiscard]] QList<QPair<QString, const QAbstractItemModel*>> tables() const override;

  signals:
    /// A diagnosis (or its error) is shown.
    void diagnosed();

  private:
    QLineEdit* addFileRow(QFormLayout* form, const QString& label, const char* key);
    void showDiagnosis();
    void showFixes(int row);
    void markStale();

    ScenarioDocument& doc_;
    const Core& core_;
    QLineEdit* metrics_;
    QLineEdit* metricsLater_;
    QDoubleSpinBox* interval_;
    QLineEdit* bench_;
    QComboBox* benchKind_;
    QSpinBox* benchIndex_;
    QLineEdit* smi_;
    QLineEdit* dmon_;
    QLineEdit* dcgm_;
    QLineEdit* startupLog_;
    QLabel* banner_;
    QLabel* stale_;
    QLabel* summary_;
    QStandardItemModel* comparisons_;
    QStandardItemModel* rows_;
    QStandardItemModel* fixes_;
    QTableView* rowsView_;
    QTableView* fixesView_;
    QPushButton* apply_;
    QLabel* notes_;
    std::optional<model::Diagnosis> diagnosis_;
    std::optional<model::Scenario> diagnosed_; ///< the scenario the diagnosis is of
    int shownRow_ = -1;
    bool isStale_ = false; ///< the scenario changed since the diagnosis
};

} // namespace gpuplan::gui
