#pragma once
/// The simulator's workload as a form (issue 17 item 4, first part): the arrival process
/// (Poisson, gamma, constant, closed loop or trace replay, with a flat, step or diurnal rate
/// curve) and the request classes (share, input and output length distributions, shared
/// prefix, priority, SLOs per class, route, agent sessions) as a table. The form holds every
/// field of model::ArrivalProcess and model::RequestClass, so scenario → form → scenario is
/// lossless (tested on every example through the hwdb reader and writer). Apply records the
/// form as one undoable edit of the document.
///
/// Length distributions are written in one line: the shape, then the fields that differ from
/// model::LengthDistribution's defaults, "fixed 1024", "lognormal mean=800 stddev=400 max=4096",
/// "uniform min=100 max=2000", "empirical values=128,512,2048 weights=0.5,0.3,0.2". Numbers are
/// written in the shortest text that reads back to the same double.

#include "gui/scenario_document.hpp"
#include "model/workload.hpp"

#include <QWidget>

#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace gpuplan::gui {

/// "fixed 1024", ...; the format above.
[[nodiscard]] QString formatLength(const model::LengthDistribution& d);
/// Reads the format above; throws InputError naming the token and what it accepts.
[[nodiscard]] model::LengthDistribution parseLength(const QString& text);

class WorkloadEditor : public QWidget {
    Q_OBJECT
  public:
    explicit WorkloadEditor(ScenarioDocument& doc, QWidget* parent = nullptr);

    /// Shows `w`'s arrival process and classes in the form.
    void setWorkload(const model::Workload& w);
    /// `base` with the form's arrival process and classes. Throws InputError naming the field
    /// (row and column for the table) when a cell cannot be read.
    [[nodiscard]] model::Workload workload(const model::Workload& base) const;
    /// Applies the form to the document (one undoable edit); false, with the message shown
    /// under the form, when a field cannot be read.
    bool apply();
    /// Reads a trace CSV (hwdb::load_trace: Azure, Vidur or plain layout) to replay: the form's
    /// process becomes trace, and Apply puts the records in the scenario (saved beside it as
    /// <name>.trace.csv). False, with the message under the form, when it cannot be read.
    bool loadTrace(const QString& path);
    /// The message under the form ("" when the last apply worked).
    [[nodiscard]] QString errorText() const;
    [[nodiscard]] QTableWidget& classTable() { return *classes_; }

  public slots:
    /// Shows the document's workload (after an open, undo or an edit elsewhere).
    void refresh();

  private:
    void addClassRow(const model::RequestClass& c);

    ScenarioDocument& doc_;
    QComboBox* process_;
    QLineEdit* rate_;
    QLineEdit* cv_;
    QSpinBox* users_;
    QLineEdit* think_;
    QLineEdit* speedup_;
    QComboBox* curve_;
    QLineEdit* steps_;
    QLineEdit* period_;
    QLineEdit* amplitude_;
    QLineEdit* peak_;
    QTableWidget* classes_;
    QLabel* traceInfo_;
    std::optional<std::vector<model::TraceRecord>> trace_; ///< loaded, not yet applied
    model::Workload shown_;                                ///< what setWorkload last showed
    QPushButton* apply_;
    QLabel* error_;
};

} // namespace gpuplan::gui
