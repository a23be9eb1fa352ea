#pragma once
/// The one adapter between the app and Qt Charts (deprecated since Qt 6.10, so it stays behind
/// this interface): ChartPanel is the widget a view places, ChartAdapter fills it from core
/// result structs. Nothing else includes a Qt Charts header. Charts only plot the core's
/// numbers; the only arithmetic is unit scaling, sorting for CDFs, the cumulative sums of
/// the rent-vs-buy lines and thinning long lines to the chart's width (downsample.hpp).

#include "model/cost.hpp"
#include "model/deployment.hpp"
#include "model/memory.hpp"
#include "model/rack.hpp"
#include "model/serving.hpp"
#include "model/training.hpp"
#include "sim/result.hpp"

#include <QSize>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <utility>
#include <vector>

class QChart;
class QChartView;
class QLabel;
class QStackedLayout;

namespace gpuplan::gui {

struct LatencyCdf;

/// A chart area: a chart, or a message when there is nothing to plot.
class ChartPanel : public QWidget {
    Q_OBJECT
  public:
    /// `key` names the chart in exported files ("memory", "roofline", ...).
    explicit ChartPanel(QString key, QWidget* parent = nullptr);

    [[nodiscard]] const QString& key() const { return key_; }
    /// Shows `text` instead of a chart (e.g. why the chart is not available).
    void showMessage(const QString& text);
    /// True when a chart (not a message) is shown.
    [[nodiscard]] bool hasChart() const;
    /// Series in the chart and points over all of them (bar sets count their values).
    [[nodiscard]] int seriesCount() const;
    [[nodiscard]] int pointCount() const;
    /// The chart's title ("" without a chart).
    [[nodiscard]] QString title() const;
    /// The tick labels of the chart's value axes along `o` (bar categories excluded), in
    /// order; empty without a chart.
    [[nodiscard]] QStringList axisLabels(Qt::Orientation o) const;
    /// The range of the chart's first value axis along `o` ({0, 0} without one).
    [[nodiscard]] std::pair<double, double> axisRange(Qt::Orientation o) const;
    /// The title of the chart's first visible axis along `o` ("" without one).
    [[nodiscard]] QString axisTitle(Qt::Orientation o) const;
    /// True when Qt Charts elided an axis label ("5000…") at the panel's current size.
    [[nodiscard]] bool labelsTruncated() const;
    /// The names of the chart's series, in drawing order.
    [[nodiscard]] QStringList seriesNames() const;
    /// The message shown instead of a chart ("" with a chart).
    [[nodiscard]] QString message() const;
    /// The (x, y) points of line or scatter series `i` as plotted (empty for another kind).
    [[nodiscard]] std::vector<std::pair<double, double>> seriesPoints(int i) const;

    /// Renders the chart as shown to a PNG (at twice the panel's size in pixels) or an SVG
    /// (the panel's size) file. Returns false without a chart or when the file cannot be
    /// written.
    bool savePng(const QString& path) const;
    bool saveSvg(const QString& path) const;

    /// True while the chart is drawn faded: the panel is disabled because its figures are out
    /// of date (an error banner stands over them).
    [[nodiscard]] bool faded() const;

  protected:
    void changeEvent(QEvent* e) override;

  private:
    friend class ChartAdapter;
    void setChart(QChart* chart); // takes ownership

    QString key_;
    QStackedLayout* stack_ = nullptr;
    QChartView* view_ = nullptr;
    QLabel* message_ = nullptr;
};

/// Fills chart panels from core results.
class ChartAdapter {
  public:
    /// Memory of one GPU as a stacked bar against its capacity: weights, KV cache, activations,
    /// overhead and free (or the shortfall when it does not fit).
    static void memory(ChartPanel& p, const model::MemoryEstimate& m);
    /// The GPU's roofline for the deployment's compute path with the prefill and decode steps
    /// as operating points (per GPU: FLOPs ÷ bytes against achieved FLOP/s).
    static void roofline(ChartPanel& p, const model::Deployment& d,
                         const model::ServingEstimate& e);

    /// CDF of one latency over completed requests (TTFT, TPOT or E2E), with the SLO line when
    /// one is given.
    enum class Latency { Ttft, Tpot, E2e };
    static void latencyCdf(ChartPanel& p, const sim::SimResult& r, Latency which,
                           std::optional<Seconds> slo);
    /// The same from a CDF prepared off the GUI thread (sim_charts.hpp).
    static void latencyCdf(ChartPanel& p, const LatencyCdf& cdf, Latency which,
                           std::optional<Seconds> slo);
    /// Input and output tokens per second over time.
    static void throughput(ChartPanel& p, const sim::SimResult& r);
    /// Waiting and running requests over time.
    static void queue(ChartPanel& p, const sim::SimResult& r);
    /// Mean KV-block use over time.
    static void kvUse(ChartPanel& p, const sim::SimResult& r);
    /// The deployment's wall power over time (when the simulator modelled it), with the
    /// per-GPU limit's share as a note in the title.
    static void power(ChartPanel& p, const sim::SimResult& r);
    /// SLO attainment per request class.
    static void sloAttainment(ChartPanel& p, const sim::SimResult& r);

    /// Monthly cost: owning (capex amortized, energy, maintenance, colocation) against renting.
    static void monthlyCost(ChartPanel& p, const model::CostEstimate& c);
    /// Cumulative cost over `months`: owning (capex up front, then opex) against renting.
    static void rentVsBuy(ChartPanel& p, const model::CostEstimate& c, int months);
    /// Each rack limit's capacity against what the planned nodes use.
    static void rackLimits(ChartPanel& p, const model::RackPlan& r);

    /// Training memory per GPU of every pipeline stage, stacked by kind, against capacity.
    static void trainingMemory(ChartPanel& p, const model::TrainingEstimate& t);
    /// One optimizer step split into compute, exposed communication, bubble, optimizer and
    /// input stall.
    static void stepBreakdown(ChartPanel& p, const model::StepBreakdown& s);

    /// One bar per configuration of a figure (`names` and `values` in step).
    static void bars(ChartPanel& p, const QString& title, const QString& unit,
                     const QStringList& names, const std::vector<double>& values);

    /// One line with point markers per named series of (x, y) points (sorted by x), on linear
    /// axes titled `xTitle` and `yTitle` (the sweep table's plot).
    struct NamedPoints {
        QString name;
        std::vector<std::pair<double, double>> points;
    };
    static void lines(ChartPanel& p, const QString& title, const QString& xTitle,
                      const QString& yTitle, const std::vector<NamedPoints>& series);

    /// One candidate of a sizing-curve chart (plan/load_curve.hpp), values already in the
    /// chart's units: the analytic line, the simulator's P50 and P99 as markers, and the
    /// highest load meeting the SLO.
    struct CurveSeries {
        QString name;
        std::vector<std::pair<double, double>> analytic;
        std::vector<std::pair<double, double>> p50, p99;
        std::optional<double> max_load;
        QString p50Label = QObject::tr("sim P50"); ///< after the name in the legend
        QString p99Label = QObject::tr("sim P99");
    };
    /// A figure against load: a line per candidate, its simulated percentiles as markers, the
    /// SLO as a horizontal red line (when given) and each candidate's highest load meeting the
    /// SLO as a vertical dotted line in its colour.
    static void loadCurve(ChartPanel& p, const QString& title, const QString& xTitle,
                          const QString& yTitle, const std::vector<CurveSeries>& series,
                          std::optional<double> slo);
};

} // namespace gpuplan::gui
