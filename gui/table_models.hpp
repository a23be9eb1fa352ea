#pragma once
/// Item models that adapt the core's result structs for Qt views (one model may feed several
/// views and the CSV export). They format; they never compute.

#include "gui/analysis.hpp"
#include "model/bottleneck.hpp"
#include "model/cost.hpp"
#include "model/memory.hpp"
#include "model/rack.hpp"
#include "model/training.hpp"
#include "plan/sizing_search.hpp"
#include "sim/result.hpp"

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

namespace gpuplan::gui {

/// One number behind a figure, for the CSV export: "TTFT p99", 0.1234, "s".
struct FigureNumber {
    QString name;
    double value = 0.0;
    QString unit;
};

/// A figure as shown ("TTFT p50 / p99", "12.3 ms / 45.6 ms") and the numbers behind it.
struct FigureRow {
    QString figure;
    QString text;
    std::vector<FigureNumber> numbers; ///< empty for a text-only figure ("fits", a note)
};

/// Two columns, figure and value: a result struct as labelled rows. Its CSV export (kCsvRole)
/// writes one line per number, "figure,value,unit" (TTFT p50 and p99 on two lines, each in
/// seconds); a text-only figure is one line with its text and no unit.
class FiguresModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    using Rows = std::vector<FigureRow>;
    explicit FiguresModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setRows(Rows rows);
    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation o, int role) const override;
    /// The value of the row labelled `figure` ("" when absent).
    [[nodiscard]] QString value(const QString& figure) const;

  private:
    Rows rows_;
};

/// Rows of the serving estimate: TTFT, TPOT, throughput, MFU/MBU, KV arithmetic.
[[nodiscard]] FiguresModel::Rows servingRows(const Analysis& a);
/// Rows of the power estimate.
[[nodiscard]] FiguresModel::Rows powerRows(const model::PowerEstimate& p);
/// Rows of the rack plan.
[[nodiscard]] FiguresModel::Rows rackRows(const model::RackPlan& r);
/// Rows of the cost estimate (with its inputs).
[[nodiscard]] FiguresModel::Rows costRows(const model::CostInputs& in,
                                          const model::CostEstimate& c);
/// Rows of the training estimate.
[[nodiscard]] FiguresModel::Rows trainingRows(const model::TrainingEstimate& t);
/// Rows of a simulation's overall summary.
[[nodiscard]] FiguresModel::Rows simulationRows(const sim::SimResult& r, double wall_s);

/// Memory per GPU: item, size, share of capacity.
class MemoryTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    explicit MemoryTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setEstimate(const model::MemoryEstimate& m);
    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation o, int role) const override;

  private:
    std::vector<std::pair<QString, Bytes>> rows_;
    Bytes capacity_;
};

/// The ranked what-ifs.
class WhatIfTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    explicit WhatIfTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setWhatIfs(std::vector<model::WhatIf> w);
    [[nodiscard]] const model::WhatIf& whatIf(int row) const {
        return rows_.at(static_cast<std::size_t>(row));
    }
    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation o, int role) const override;

  private:
    std::vector<model::WhatIf> rows_;
};

/// A simulation's per-class results.
class ClassTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    explicit ClassTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setResult(const sim::SimResult& r);
    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation o, int role) const override;

  private:
    std::vector<sim::ClassResult> rows_;
};

/// Training layouts (the search's top list, or one configured layout).
class LayoutTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    explicit LayoutTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setLayouts(std::vector<model::LayoutResult> rows, QString currency);
    [[nodiscard]] const model::LayoutResult& layout(int row) const {
        return rows_.at(static_cast<std::size_t>(row));
    }
    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation o, int role) const override;

  private:
    std::vector<model::LayoutResult> rows_;
    QString currency_;
};

/// The sizing search's ranked configurations (plan::SizingRow), best first: GPU × count,
/// layout, precisions, max_num_seqs, monthly cost, cost per million tokens, power, racks, the
/// tightest SLO and its margin, and the binding resource.
class PlanTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    /// Column of the monthly cost (its Qt::UserRole is the amount, for sorting and tests).
    static constexpr int kMonthlyColumn = 5;
    explicit PlanTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setRows(std::vector<plan::SizingRow> rows, QString currency, double percentile);
    [[nodiscard]] const plan::SizingRow& row(int r) const {
        return rows_.at(static_cast<std::size_t>(r));
    }
    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation o, int role) const override;

  private:
    std::vector<plan::SizingRow> rows_;
    QString currency_;
    double percentile_ = 99;
};

/// Pinned configurations side by side: one row per figure, one column per configuration.
class CompareTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    explicit CompareTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    /// `names` and `analyses` in step; an empty analysis shows its error.
    void setConfigurations(QStringList names, std::vector<std::optional<Analysis>> analyses,
                           std::vector<std::string> errors);
    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation o, int role) const override;
    /// The figures shown, in row order.
    [[nodiscard]] static QStringList figureNames();

  private:
    QStringList names_;
    std::vector<QStringList> columns_; // per configuration, one text per figure
};

} // namespace gpuplan::gui
