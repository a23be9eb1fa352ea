#pragma once
/// The sweep table window: opens the CSV that `gpuplan sweep SPEC -o FILE.csv` writes and plots
/// any figure against any numeric column, one line per value of a third column (e.g. P99 TTFT
/// against workload.requests_per_s, one line per hardware.accelerator). Rows with an error or an
/// empty value are skipped and counted in the status line. Reading and selecting rows is
/// gui/sweep_table (no Qt); this window only offers the choices and draws.

#include "gui/sweep_table.hpp"
#include "gui/views.hpp"

#include <QWidget>

class QComboBox;
class QLabel;

namespace gpuplan::gui {

class ChartPanel;

class SweepView : public QWidget, public ExportableView {
    Q_OBJECT
  public:
    explicit SweepView(QWidget* parent = nullptr);

    /// Opens a sweep table. On failure keeps nothing of the previous table, shows the error
    /// (file:line:column) in the banner, and returns false with the message in `error`.
    bool openFile(const QString& path, QString* error = nullptr);

    /// The choices (the real combo boxes: x axis, figure, series; the series box's first entry
    /// is "(none)"). Each change redraws.
    [[nodiscard]] QComboBox& axisBox() const { return *axis_; }
    [[nodiscard]] QComboBox& figureBox() const { return *figure_; }
    [[nodiscard]] QComboBox& seriesBox() const { return *series_; }
    [[nodiscard]] ChartPanel& chart() const { return *chart_; }
    /// "24 rows plotted, 2 skipped with an error, 1 skipped with an empty value".
    [[nodiscard]] QString statusText() const;
    /// The banner's error text ("" when none).
    [[nodiscard]] QString errorText() const;
    [[nodiscard]] const std::optional<SweepTable>& table() const { return table_; }

    [[nodiscard]] QList<ChartPanel*> charts() const override;
    [[nodiscard]] QList<QPair<QString, const QAbstractItemModel*>> tables() const override;

  private:
    void fillChoices();
    void redraw();

    std::optional<SweepTable> table_;
    QLabel* banner_;
    QLabel* fileLabel_;
    QComboBox* axis_;
    QComboBox* figure_;
    QComboBox* series_;
    ChartPanel* chart_;
    QLabel* status_;
};

} // namespace gpuplan::gui
