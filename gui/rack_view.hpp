#pragma once
/// The Racks tab: the racks of the scenario's configuration drawn — each rack with its rack
/// units, its nodes (GPUs per node), its PDUs and its power against the limit — and which limit
/// binds: power (the rack budget, the PDUs or cooling) or space (rack units). Everything drawn
/// is model::plan_racks' plan as plan::analyze_serving computes it (the `rack` command's basis:
/// every GPU at its limit plus the host), the one rack model; the widget only lays it out.

#include "gui/analysis.hpp"
#include "gui/runner.hpp"
#include "gui/views.hpp"

#include <QImage>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

class QLabel;
class QPainter;

namespace gpuplan::gui {

/// What the drawing shows, as text and numbers from the analysis (units on every label).
struct RackDrawing {
    struct Rack {
        int nodes = 0;
        int gpus = 0;
        double kw = 0;      ///< the rack's nodes at the plan's node power
        int units_used = 0; ///< U (0 when the node's height is unknown)
        QString label;      ///< "rack 1: 4 nodes, 32 GPUs, 40.8 kW of 44.3 kW, 24 U of 42 U"
    };
    bool feasible = false;
    QString message;     ///< why nothing is drawn, or the plan's warnings
    QString title;       ///< "3 racks for 10 nodes (80 GPUs)"
    QString binding;     ///< "binds: power (PDU) — 4 nodes per rack"
    QString bindingKind; ///< "power" or "space"
    int racks = 0;       ///< racks the plan needs
    int rackUnits = 42;  ///< U per rack
    int nodeUnits = 0;   ///< U per node (0: unknown)
    int gpusPerNode = 0;
    double limitKw = 0; ///< the tightest power limit of one rack (kW)
    QString limitName;  ///< which limit that is ("PDU", "rack budget", "cooling")
    double pduKw = 0;   ///< what the rack's PDUs carry together, derated (kW)
    QString nodeLabel;  ///< "node: 10.2 kW, 8 GPUs, 6 U"
    QString pduLabel;   ///< "2 × PDU 400 V 32 A 3-phase: 22.2 kW nameplate, 17.7 kW usable"
    int pdus = 1;
    QStringList limits;      ///< one line per limit: "PDU: 35.5 kW, fits 3 nodes, 8.1 kW left"
    std::vector<Rack> drawn; ///< at most kMaxDrawn racks (identical full racks, then the last)
    static constexpr int kMaxDrawn = 6;
};

/// The drawing of an analysis's rack plan (its `rack`, `power` and scenario).
[[nodiscard]] RackDrawing rack_drawing(const Analysis& a);

/// Paints `d` into `area` (the widget's paintEvent and the report's image).
void paint_racks(QPainter& p, const QRectF& area, const RackDrawing& d);

/// `d` rendered to an image of `size` logical pixels at `scale` (2: a crisp report image).
[[nodiscard]] QImage render_racks(const RackDrawing& d, QSize size, double scale = 2.0);

class RackView : public QWidget, public ExportableView {
    Q_OBJECT
  public:
    explicit RackView(QWidget* parent = nullptr);
    void showAnalysis(const AnalysisPtr& a);
    void showError(const QString& message);
    [[nodiscard]] const RackDrawing& drawing() const { return drawing_; }
    [[nodiscard]] QList<ChartPanel*> charts() const override { return {}; }
    [[nodiscard]] QList<QPair<QString, const QAbstractItemModel*>> tables() const override {
        return {};
    }

  protected:
    void paintEvent(QPaintEvent* e) override;

  private:
    RackDrawing drawing_;
    QLabel* banner_;
};

} // namespace gpuplan::gui
