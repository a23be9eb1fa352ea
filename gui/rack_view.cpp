#include "gui/rack_view.hpp"

#include "gui/ui_util.hpp"

#include <QFontMetricsF>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QVBoxLayout>

#include <algorithm>

namespace gpuplan::gui {

namespace {

QString kw(double watts) {
    return QString::number(watts / 1e3, 'f', 1) + QStringLiteral(" kW");
}

QString limitName(model::RackLimit l) {
    switch (l) {
    case model::RackLimit::Budget: return QObject::tr("rack budget");
    case model::RackLimit::Pdu: return QObject::tr("PDU");
    case model::RackLimit::Cooling: return QObject::tr("cooling");
    case model::RackLimit::RackUnits: return QObject::tr("rack units");
    }
    return {};
}

/// "1 node", "5 nodes".
QString count(int n, const char* one, const char* many) {
    return QObject::tr("%1 %2").arg(n).arg(n == 1 ? QObject::tr(one) : QObject::tr(many));
}

bool isPower(model::RackLimit l) {
    return l != model::RackLimit::RackUnits;
}

} // namespace

RackDrawing rack_drawing(const Analysis& a) {
    RackDrawing d;
    if (!a.rack) {
        d.message = a.rack_error.empty() ? QObject::tr("No rack plan.")
                                         : QObject::tr("No rack plan: %1").arg(qs(a.rack_error));
        return d;
    }
    const model::RackPlan& r = *a.rack;
    const model::RackConfig& cfg = a.scenario.rack;
    d.feasible = r.feasible;
    d.racks = r.racks;
    d.rackUnits = cfg.rack_units;
    d.nodeUnits = r.node_units;
    d.gpusPerNode = a.power ? a.power->node.gpus : a.scenario.deployment.gpus_per_node;
    const int gpus = a.scenario.deployment.gpus();
    d.pdus = std::max(1, cfg.pdu.count);
    d.pduLabel = QObject::tr("%1 × PDU %2 V %3 A %4-phase%5: %6 nameplate, %7 usable each, %8 "
                             "per rack")
                     .arg(d.pdus)
                     .arg(cfg.pdu.voltage_v, 0, 'f', 0)
                     .arg(cfg.pdu.current_a, 0, 'f', 0)
                     .arg(cfg.pdu.phases)
                     .arg(cfg.pdu.redundant ? QObject::tr(" (A+B feeds)") : QString())
                     .arg(kw(r.pdu_nameplate.si()), kw(r.pdu_usable.si()), kw(r.pdu_capacity.si()));
    d.nodeLabel = QObject::tr("node: %1 at its peak, %2 GPUs, %3")
                      .arg(kw(r.node_power.si()))
                      .arg(d.gpusPerNode)
                      .arg(r.node_units > 0 ? QObject::tr("%1 U").arg(r.node_units)
                                            : QObject::tr("height unknown (U not counted)"));
    double tightestPower = 0;
    for (const model::RackLimitFigure& l : r.limits) {
        const bool units = l.which == model::RackLimit::RackUnits;
        const QString cap = units ? QObject::tr("%1 U").arg(l.capacity, 0, 'f', 0) : kw(l.capacity);
        const QString left =
            units ? QObject::tr("%1 U").arg(l.headroom, 0, 'f', 0) : kw(l.headroom);
        d.limits << QObject::tr("%1: %2, fits %3, %4 left at %5 per rack")
                        .arg(limitName(l.which), cap, count(l.nodes_fit, "node", "nodes"), left)
                        .arg(r.nodes_per_rack);
        if (!units && (tightestPower == 0 || l.capacity < tightestPower)) {
            tightestPower = l.capacity;
            d.limitName = limitName(l.which);
        }
    }
    d.limitKw = tightestPower / 1e3;
    d.pduKw = r.pdu_capacity.si() / 1e3;
    d.bindingKind = isPower(r.binding) ? QObject::tr("power") : QObject::tr("space");
    d.binding = QObject::tr("binds: %1 (%2) at %3 nodes = %4 GPUs per rack")
                    .arg(d.bindingKind, limitName(r.binding))
                    .arg(r.nodes_per_rack)
                    .arg(r.nodes_per_rack * d.gpusPerNode);
    if (cfg.nodes_per_rack) {
        d.binding +=
            QObject::tr("; the power budget is shared by %1 nodes per rack (rack.nodes_per_rack)")
                .arg(*cfg.nodes_per_rack);
    }
    d.title = QObject::tr("%1 racks for %2 nodes (%3 GPUs)").arg(r.racks).arg(r.nodes).arg(gpus);
    QStringList warnings;
    for (const auto& w : r.warnings) {
        warnings << qs(w);
    }
    d.message = warnings.join(QStringLiteral(" "));
    if (!r.feasible) {
        if (d.message.isEmpty()) {
            d.message = QObject::tr("Not even one node fits in a rack.");
        }
        return d;
    }
    // Full racks first, then the last one with the rest; identical full racks are drawn once
    // each up to kMaxDrawn.
    int left = r.nodes;
    for (int i = 0; i < r.racks && static_cast<int>(d.drawn.size()) < RackDrawing::kMaxDrawn; ++i) {
        // The last drawn rack stands for the last rack when racks are left out.
        const bool last =
            i == r.racks - 1 || static_cast<int>(d.drawn.size()) == RackDrawing::kMaxDrawn - 1;
        const int index = last ? r.racks : i + 1;
        const int nodes =
            last ? r.nodes - (r.racks - 1) * r.nodes_per_rack : std::min(r.nodes_per_rack, left);
        left -= nodes;
        RackDrawing::Rack k;
        k.nodes = nodes;
        // The last rack holds what the full ones leave (its last node may be partly filled).
        k.gpus =
            last ? gpus - (r.racks - 1) * r.nodes_per_rack * d.gpusPerNode : nodes * d.gpusPerNode;
        k.kw = nodes * r.node_power.si() / 1e3;
        k.units_used = nodes * r.node_units;
        k.label = QObject::tr("rack %1: %2, %3, %4 of %5 (%6)")
                      .arg(index)
                      .arg(count(nodes, "node", "nodes"), count(k.gpus, "GPU", "GPUs"),
                           kw(k.kw * 1e3), kw(tightestPower), d.limitName);
        if (r.node_units > 0) {
            k.label += QObject::tr(", %1 U of %2 U").arg(k.units_used).arg(d.rackUnits);
        }
        d.drawn.push_back(k);
    }
    return d;
}

void paint_racks(QPainter& p, const QRectF& area, const RackDrawing& d) {
    p.save();
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(area, Qt::white);
    QFont font = p.font();
    font.setPointSizeF(9);
    p.setFont(font);
    const QFontMetricsF fm(font);
    const double line = fm.height() + 2;
    double y = area.top() + 6;
    const auto text = [&](const QString& t, const QColor& c = Qt::black, bool bold = false) {
        QFont f = font;
        f.setBold(bold);
        p.setFont(f);
        p.setPen(c);
        p.drawText(QRectF(area.left() + 8, y, area.width() - 16, line), Qt::AlignLeft, t);
        y += line;
        p.setFont(font);
    };
    if (!d.feasible || d.drawn.empty()) {
        text(d.title.isEmpty() ? QObject::tr("Racks") : d.title, Qt::black, true);
        text(d.message.isEmpty() ? QObject::tr("Nothing to draw.") : d.message,
             QColor(0xc6, 0x28, 0x28));
        p.restore();
        return;
    }
    text(d.title, Qt::black, true);
    text(d.binding, QColor(0xc6, 0x28, 0x28), true);
    text(d.nodeLabel);
    text(d.pduLabel);
    for (const QString& l : d.limits) {
        text(QStringLiteral("• ") + l, QColor(0x42, 0x42, 0x42));
    }
    const double top = y + 6;
    const double bottomText = 3 * line;
    const double height = std::max(120.0, area.bottom() - top - bottomText - 6);
    const int n = static_cast<int>(d.drawn.size());
    const double slot = (area.width() - 16) / n;
    const double rackW = std::min(150.0, slot * 0.55);
    const double pduW = std::max(6.0, rackW * 0.07);
    const int units = std::max(1, d.rackUnits);
    const double uH = height / units;
    for (int i = 0; i < n; ++i) {
        const RackDrawing::Rack& k = d.drawn[static_cast<std::size_t>(i)];
        const double x = area.left() + 8 + i * slot + (slot - rackW - 2 * pduW - 8) / 2;
        const QRectF frame(x + pduW + 4, top, rackW, height);
        p.setPen(QPen(QColor(0x42, 0x42, 0x42), 2));
        p.setBrush(QColor(0xf5, 0xf5, 0xf5));
        p.drawRect(frame);
        // Nodes from the bottom; a node of unknown height drawn as 2 U.
        const int nodeU = d.nodeUnits > 0 ? d.nodeUnits : 2;
        for (int j = 0; j < k.nodes; ++j) {
            const QRectF node(frame.left() + 3, frame.bottom() - (j + 1) * nodeU * uH,
                              frame.width() - 6, nodeU * uH - 1);
            if (node.top() < frame.top()) {
                break;
            }
            p.setPen(QPen(QColor(0x0d, 0x47, 0xa1), 1));
            p.setBrush(QColor(0x90, 0xca, 0xf9));
            p.drawRect(node);
            if (node.height() > fm.height()) {
                p.setPen(Qt::black);
                p.drawText(node, Qt::AlignCenter,
                           QObject::tr("%1 GPUs").arg(
                               std::min(d.gpusPerNode, k.gpus - j * d.gpusPerNode)));
            }
        }
        // PDUs on both sides, filled to the rack's share of what they carry.
        const double share = d.pduKw > 0 ? std::min(1.0, k.kw / d.pduKw) : 0.0;
        for (int side = 0; side < std::min(2, d.pdus); ++side) {
            const double px = side == 0 ? frame.left() - pduW - 4 : frame.right() + 4;
            const QRectF pdu(px, top, pduW, height);
            p.setPen(QPen(QColor(0x61, 0x61, 0x61), 1));
            p.setBrush(Qt::white);
            p.drawRect(pdu);
            const QRectF fill(px, top + height * (1 - share), pduW, height * share);
            p.setBrush(share > 0.95 ? QColor(0xe5, 0x39, 0x35) : QColor(0xff, 0xb3, 0x00));
            p.drawRect(fill);
        }
        // Label under the rack: its figures, with units.
        p.setPen(Qt::black);
        const QRectF label(area.left() + 8 + i * slot, top + height + 4, slot - 4, bottomText);
        p.drawText(label, Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, k.label);
    }
    p.restore();
}

QImage render_racks(const RackDrawing& d, QSize size, double scale) {
    QImage img(size * scale, QImage::Format_ARGB32);
    img.setDevicePixelRatio(scale);
    img.fill(Qt::white);
    QPainter p(&img);
    paint_racks(p, QRectF(QPointF(0, 0), QSizeF(size)), d);
    p.end();
    return img;
}

RackView::RackView(QWidget* parent) : QWidget(parent) {
    banner_ = makeBanner();
    banner_->setObjectName(QStringLiteral("rack_error"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(banner_);
    layout->addStretch(1);
    setMinimumSize(480, 360);
}

void RackView::showAnalysis(const AnalysisPtr& a) {
    banner_->hide();
    drawing_ = a ? rack_drawing(*a) : RackDrawing{};
    update();
}

void RackView::showError(const QString& message) {
    banner_->setText(tr("The scenario cannot be estimated: %1").arg(message));
    banner_->show();
    drawing_ = RackDrawing{};
    drawing_.message = message;
    update();
}

void RackView::paintEvent(QPaintEvent* e) {
    QWidget::paintEvent(e);
    QPainter p(this);
    QRectF area = rect();
    if (banner_->isVisible()) {
        area.setTop(banner_->geometry().bottom() + 4);
    }
    paint_racks(p, area, drawing_);
}

} // namespace gpuplan::gui
