#include "gui/run_memory.hpp"

#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QString>

#include <algorithm>
#include <cmath>

namespace gpuplan::gui {

namespace {

const QString kBudgetKey = QStringLiteral("simulation/memory_budget_bytes");

QSettings settings() {
    return QSettings(QStringLiteral("gpuplan"), QStringLiteral("gpuplan-gui"));
}

} // namespace

RunMemoryEstimate estimate_run_memory(const model::Scenario& s, const sim::SimOptions& o) {
    const model::Workload& w = s.workload;
    RunMemoryEstimate e;
    const auto requests = o.requests ? o.requests : w.requests;
    const auto duration = o.duration ? o.duration : w.duration;
    const bool open_loop = w.arrival.kind != model::ArrivalKind::ClosedLoop &&
                           w.arrival.kind != model::ArrivalKind::Trace;
    const double rate = w.arrival.requests_per_s.value_or(w.requests_per_s.value_or(1.0));
    double n = 1000; // the simulator's default
    if (requests) {
        n = *requests;
    } else if (w.arrival.kind == model::ArrivalKind::Trace) {
        n = static_cast<double>(w.trace.size());
    } else if (duration && open_loop && rate > 0) {
        n = duration->si() * rate;
    }
    // Agent sessions: a "request" counted above starts a session of `steps` requests.
    int steps = 1;
    for (const auto& c : w.classes) {
        if (c.agent) {
            steps = std::max(steps, c.agent->steps);
        }
    }
    n = std::min(n * steps, static_cast<double>(sim::kMaxRequests) * steps);
    e.requests = static_cast<std::int64_t>(std::llround(n));

    if (duration) {
        e.span_s = duration->si();
    } else if (open_loop && rate > 0) {
        e.span_s = n / steps / rate;
    } else if (w.arrival.kind == model::ArrivalKind::Trace && !w.trace.empty()) {
        const double speed = w.arrival.trace_speedup > 0 ? w.arrival.trace_speedup : 1.0;
        e.span_s = (w.trace.back().arrival.si() - w.trace.front().arrival.si()) / speed;
    }

    // Per request: the kept record (twice: vector capacity), and the CDF being prepared (its
    // sorted value and its point before thinning).
    const double kept = 2.0 * sizeof(sim::RequestRecord) + kCdfBytesPerRequest;
    const std::size_t classes = std::max<std::size_t>(1, w.classes.size());
    const double exact =
        std::min(n, static_cast<double>(kExactSamplesPerClass) * static_cast<double>(classes));
    e.per_request_bytes = kept + kStatisticsBytesPerRequest;
    e.request_bytes = n * kept + exact * kStatisticsBytesPerRequest;

    // Per simulated second: one TimeBin and a double per power series (replicas, nodes and
    // racks are each at most the GPU count; plus the total).
    const double gpus = static_cast<double>(
        std::max(1, s.deployment.par.tp * s.deployment.par.pp * s.deployment.par.dp));
    const double per_bin = sizeof(sim::TimeBin) + sizeof(double) * (3.0 * gpus + 1.0);
    const double bins =
        e.span_s > 0 ? std::min(std::ceil(e.span_s) + 1.0, static_cast<double>(kMaxSeriesBins))
                     : static_cast<double>(kMaxSeriesBins);
    e.series_bytes = bins * per_bin;
    e.total_bytes = e.request_bytes + e.series_bytes;
    return e;
}

double memoryBudgetBytes() {
    bool ok = false;
    const double v = settings().value(kBudgetKey).toDouble(&ok);
    return ok && v > 0 ? v : kDefaultMemoryBudgetBytes;
}

void setMemoryBudgetBytes(double bytes) {
    settings().setValue(kBudgetKey, bytes);
}

QString formatBytes(double bytes) {
    if (bytes >= kGiB) {
        return QStringLiteral("%1 GiB").arg(bytes / kGiB, 0, 'f', 1);
    }
    return QStringLiteral("%1 MiB").arg(std::max(1.0, std::round(bytes / kMiB)), 0, 'f', 0);
}

bool confirmRunMemory(QWidget* parent, const RunMemoryEstimate& e, double budget) {
    if (e.total_bytes <= budget) {
        return true;
    }
    QMessageBox box(parent);
    box.setObjectName(QStringLiteral("memory_warning"));
    box.setIcon(QMessageBox::Warning);
    box.setWindowTitle(QObject::tr("Large simulation"));
    box.setText(QObject::tr("This run needs about %1 of memory, above the budget of %2.")
                    .arg(formatBytes(e.total_bytes), formatBytes(budget)));
    box.setInformativeText(
        QObject::tr("%1 requests × %2 each (every request is kept for the latency charts), "
                    "plus %3 of time series. Send fewer requests, or raise the budget in the "
                    "Simulation tab.")
            .arg(e.requests)
            .arg(QStringLiteral("%1 B").arg(e.per_request_bytes, 0, 'f', 0),
                 formatBytes(e.series_bytes)));
    QPushButton* run = box.addButton(QObject::tr("Run anyway"), QMessageBox::AcceptRole);
    run->setObjectName(QStringLiteral("memory_continue"));
    QPushButton* cancel = box.addButton(QMessageBox::Cancel);
    cancel->setObjectName(QStringLiteral("memory_cancel"));
    box.setDefaultButton(cancel);
    box.exec();
    return box.clickedButton() == run;
}

} // namespace gpuplan::gui
