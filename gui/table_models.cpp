#include "gui/table_models.hpp"

#include "gui/feature_rows.hpp"
#include "gui/ui_util.hpp"
#include "model/error_bands.hpp"
#include "model/memory.hpp"

#include <QBrush>
#include <QColor>

namespace gpuplan::gui {

namespace {

/// Column headers: `names` as displayed, `csv` (a name with its unit, or a QStringList for a
/// column of several numbers) for the CSV export (kCsvRole).
QVariant header(const QStringList& names, int section, Qt::Orientation o, int role,
                const QVariantList& csv = {}) {
    if (o != Qt::Horizontal || section < 0 || section >= names.size()) {
        return {};
    }
    if (role == kCsvRole) {
        return section < csv.size() ? csv.at(section) : QVariant();
    }
    return role == Qt::DisplayRole ? QVariant(names.at(section)) : QVariant();
}

QStringList list(std::initializer_list<const char*> names) {
    QStringList l;
    for (const char* n : names) {
        l << QString::fromUtf8(n);
    }
    return l;
}

FigureNumber num(const char* name, double value, const char* unit) {
    return {QString::fromUtf8(name), value, QString::fromUtf8(unit)};
}

/// An amount of money as a number in its currency (none when it is not priced).
std::vector<FigureNumber> money(const char* name, const std::optional<model::Money>& m) {
    if (!m) {
        return {};
    }
    return {{QString::fromUtf8(name), m->amount, qs(m->currency)}};
}

QString yesNo(bool b) {
    return b ? QObject::tr("yes") : QObject::tr("no");
}

} // namespace

// ---- FiguresModel ----

void FiguresModel::setRows(Rows rows) {
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
}

int FiguresModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int FiguresModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 2;
}

QVariant FiguresModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) {
        return {};
    }
    const auto& row = rows_.at(static_cast<std::size_t>(index.row()));
    if (role == kCsvLinesRole) {
        if (index.column() != 0) {
            return {};
        }
        QVariantList lines;
        if (row.numbers.empty()) {
            lines << QVariant(QVariantList{row.figure, row.text, QString()});
        }
        for (const FigureNumber& n : row.numbers) {
            lines << QVariant(QVariantList{n.name, n.value, n.unit});
        }
        return lines;
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    return index.column() == 0 ? row.figure : row.text;
}

QVariant FiguresModel::headerData(int section, Qt::Orientation o, int role) const {
    if (role == kCsvLinesRole) {
        return o == Qt::Horizontal && section == 0
                   ? QVariant(QStringList{QStringLiteral("figure"), QStringLiteral("value"),
                                          QStringLiteral("unit")})
                   : QVariant();
    }
    return header({tr("figure"), tr("value")}, section, o, role);
}

QString FiguresModel::value(const QString& figure) const {
    for (const auto& row : rows_) {
        if (row.figure == figure) {
            return row.text;
        }
    }
    return {};
}

FiguresModel::Rows servingRows(const Analysis& a) {
    const model::ServingEstimate& e = a.serving();
    const model::MemoryEstimate& m = e.memory;
    FiguresModel::Rows r;
    const auto add = [&r](const QString& k, const QString& v) { r.push_back({k, v, {}}); };
    // The numbers behind the row just added (for the CSV export).
    const auto more = [&r](std::vector<FigureNumber> n) { r.back().numbers = std::move(n); };
    // The measured band of the figure `key` names (as `estimate` prints it: model::band_for,
    // model::band_text), on a row of its own under the figure.
    const auto band = [&](const QString& figure, std::string_view key) {
        for (const auto& [k, b] : a.bands) {
            if (k == key) {
                add(figure + QObject::tr(" band"), qs(model::band_text(b)));
                more({{figure + QStringLiteral(" band P90"), b.p90 * 100.0, QStringLiteral("%")}});
            }
        }
    };
    add(QObject::tr("fits"), m.fits ? QObject::tr("yes") : QObject::tr("NO"));
    add(QObject::tr("TTFT (alone)"), formatTime(e.ttft));
    more({num("TTFT alone", e.ttft.si(), "s")});
    band(QObject::tr("TTFT (alone)"), "ttft");
    add(QObject::tr("TTFT (under load)"), formatTime(e.ttft_loaded));
    more({num("TTFT under load", e.ttft_loaded.si(), "s")});
    band(QObject::tr("TTFT (under load)"), "ttft_loaded");
    add(QObject::tr("TPOT"), formatTime(e.tpot));
    more({num("TPOT", e.tpot.si(), "s")});
    band(QObject::tr("TPOT"), "tpot");
    add(QObject::tr("throughput"), formatNumber(e.throughput) + QObject::tr(" tok/s"));
    more({num("throughput", e.throughput, "tok/s")});
    band(QObject::tr("throughput"), "throughput");
    add(QObject::tr("throughput per GPU"),
        formatNumber(a.scenario.deployment.gpus() > 0 ? e.throughput / a.scenario.deployment.gpus()
                                                      : 0) +
            QObject::tr(" tok/s"));
    more({num("throughput per GPU",
              a.scenario.deployment.gpus() > 0 ? e.throughput / a.scenario.deployment.gpus() : 0.0,
              "tok/s")});
    add(QObject::tr("peak throughput"),
        formatNumber(e.peak_throughput) + QObject::tr(" tok/s at %1").arg(e.peak_concurrency));
    more(
        {num("peak throughput", e.peak_throughput, "tok/s"),
         num("peak throughput concurrency", static_cast<double>(e.peak_concurrency), "sequences")});
    band(QObject::tr("peak throughput"), "peak_throughput");
    const model::OperatingPoint& op = e.operating_point;
    add(QObject::tr("load"), op.kind == model::LoadKind::OfferedRate
                                 ? QObject::tr("open loop at %1 req/s, %2 in flight")
                                       .arg(op.requests_per_s.value_or(0.0))
                                       .arg(op.concurrency)
                             : op.kind == model::LoadKind::OfflineBatch
                                 ? QObject::tr("offline batch of %1 requests, %2 at once")
                                       .arg(op.batch_requests.value_or(0))
                                       .arg(op.concurrency)
                                 : QObject::tr("closed loop at %1 sequences%2")
                                       .arg(op.concurrency)
                                       .arg(op.defaulted ? QObject::tr(" (default)") : QString()));
    add(QObject::tr("running per replica"),
        QString::number(e.running) + QObject::tr(" of %1 asked").arg(op.concurrency));
    more({num("running per replica", static_cast<double>(e.running), "sequences"),
          num("concurrency asked", static_cast<double>(op.concurrency), "sequences")});
    add(QObject::tr("single-stream bound"),
        formatNumber(e.single_stream_bound) + QObject::tr(" tok/s"));
    more({num("single-stream bound", e.single_stream_bound, "tok/s")});
    if (e.kv_offload) {
        const model::KvOffloadFigures& f = *e.kv_offload;
        add(QObject::tr("KV offload hit rate"),
            QObject::tr("%1 (GPU alone %2); shared prefix: GPU %3, host %4, NVMe %5")
                .arg(formatPercent(f.hit_rate), formatPercent(f.hit_rate_without),
                     formatPercent(f.split.gpu), formatPercent(f.split.host),
                     formatPercent(f.split.nvme)));
        more({num("KV offload hit rate", f.hit_rate * 100.0, "%"),
              num("hit rate GPU alone", f.hit_rate_without * 100.0, "%"),
              num("shared prefix on host", f.split.host * 100.0, "%"),
              num("shared prefix on NVMe", f.split.nvme * 100.0, "%")});
        add(QObject::tr("KV offload load per request"),
            formatTime(f.load_time) +
                QObject::tr("; without the tiers TTFT %1").arg(formatTime(f.ttft_without)));
        more({num("KV load per request", f.load_time.si(), "s"),
              num("TTFT without tiers", f.ttft_without.si(), "s")});
    }
    add(QObject::tr("prefill MFU / MBU"),
        formatPercent(e.prefill.mfu) + QStringLiteral(" / ") + formatPercent(e.prefill.mbu));
    more({num("prefill MFU", e.prefill.mfu * 100.0, "%"),
          num("prefill MBU", e.prefill.mbu * 100.0, "%")});
    add(QObject::tr("decode MFU / MBU"),
        formatPercent(e.decode.mfu) + QStringLiteral(" / ") + formatPercent(e.decode.mbu));
    more({num("decode MFU", e.decode.mfu * 100.0, "%"),
          num("decode MBU", e.decode.mbu * 100.0, "%")});
    add(QObject::tr("KV cache"), QObject::tr("%1 tokens in %2 blocks of %3")
                                     .arg(formatNumber(static_cast<double>(m.kv_tokens)))
                                     .arg(formatNumber(static_cast<double>(m.kv_blocks)))
                                     .arg(m.engine.block_size));
    more({num("KV cache tokens", static_cast<double>(m.kv_tokens), "tokens"),
          num("KV cache blocks", static_cast<double>(m.kv_blocks), "blocks"),
          num("block size", static_cast<double>(m.engine.block_size), "tokens")});
    add(QObject::tr("max concurrency"),
        QObject::tr("%1 x at %2 tokens (bound by %3)")
            .arg(QString::number(m.max_concurrency, 'f', 2))
            .arg(m.engine.max_model_len)
            .arg(qs(std::string(model::to_string(m.concurrency_limit)))));
    more({num("max concurrency", m.max_concurrency, "sequences"),
          num("max_model_len", static_cast<double>(m.engine.max_model_len), "tokens")});
    // The profile's per-kernel error: one kernel's, not a figure's (the bands above are).
    add(QObject::tr("per-kernel error"),
        QObject::tr("±%1 % (P90), %2 profile")
            .arg(QString::number(e.error_band.p90 * 100, 'f', 0))
            .arg(qs(std::string(model::to_string(e.provenance.kind)))));
    more({num("per-kernel error P90", e.error_band.p90 * 100.0, "%")});
    appendServingFeatureRows(r, a);
    add(QObject::tr("computed in"), QString::number(a.compute_ms, 'f', 1) + QObject::tr(" ms"));
    more({num("computed in", a.compute_ms, "ms")});
    return r;
}

FiguresModel::Rows powerRows(const model::PowerEstimate& p) {
    FiguresModel::Rows r;
    const auto add = [&r](const QString& k, const QString& v) { r.push_back({k, v, {}}); };
    // The numbers behind the row just added (for the CSV export).
    const auto more = [&r](std::vector<FigureNumber> n) { r.back().numbers = std::move(n); };
    add(QObject::tr("GPU idle / resident / board"),
        formatWatts(p.levels.idle) + QStringLiteral(" / ") + formatWatts(p.levels.resident) +
            QStringLiteral(" / ") + formatWatts(p.levels.board));
    more({num("GPU idle", p.levels.idle.si(), "W"),
          num("GPU resident", p.levels.resident.si(), "W"),
          num("GPU board", p.levels.board.si(), "W")});
    add(QObject::tr("per-GPU limit"), formatWatts(p.limit.per_gpu) + QStringLiteral(" (") +
                                          qs(std::string(model::to_string(p.limit.source))) +
                                          QStringLiteral(")"));
    more({num("per-GPU limit", p.limit.per_gpu.si(), "W")});
    add(QObject::tr("limited"),
        yesNo(p.limited) + (p.unreachable ? QObject::tr(" (unreachable)") : QString()));
    add(QObject::tr("prefill clock / slowdown"),
        formatPercent(p.prefill.clock) + QStringLiteral(" / ") +
            QString::number(p.prefill.slowdown, 'f', 3) + QStringLiteral("x"));
    more({num("prefill clock", p.prefill.clock * 100.0, "%"),
          num("prefill slowdown", p.prefill.slowdown, "x")});
    add(QObject::tr("steady clock / slowdown"),
        formatPercent(p.steady.clock) + QStringLiteral(" / ") +
            QString::number(p.steady.slowdown, 'f', 3) + QStringLiteral("x"));
    more({num("steady clock", p.steady.clock * 100.0, "%"),
          num("steady slowdown", p.steady.slowdown, "x")});
    add(QObject::tr("throughput capped"),
        formatNumber(p.capped.throughput) +
            QObject::tr(" tok/s (%1 lost)").arg(formatPercent(p.throughput_loss)));
    more({num("throughput capped", p.capped.throughput, "tok/s"),
          num("throughput lost", p.throughput_loss * 100.0, "%")});
    add(QObject::tr("GPU average / peak"),
        formatWatts(p.gpu_average) + QStringLiteral(" / ") + formatWatts(p.gpu_peak));
    more({num("GPU average", p.gpu_average.si(), "W"), num("GPU peak", p.gpu_peak.si(), "W")});
    add(QObject::tr("nodes"),
        QString::number(p.nodes) +
            (p.node.known ? QString() : QObject::tr(" (no host power counted)")));
    more({num("nodes", static_cast<double>(p.nodes), "nodes")});
    add(QObject::tr("deployment average / peak / resident"),
        formatWatts(p.deployment_average) + QStringLiteral(" / ") + formatWatts(p.deployment_peak) +
            QStringLiteral(" / ") + formatWatts(p.deployment_idle));
    more({num("deployment average", p.deployment_average.si(), "W"),
          num("deployment peak", p.deployment_peak.si(), "W"),
          num("deployment resident", p.deployment_idle.si(), "W")});
    add(QObject::tr("facility average (PUE %1)").arg(QString::number(p.pue, 'f', 2)),
        formatWatts(p.facility_average));
    more({num("facility average", p.facility_average.si(), "W"), num("PUE", p.pue, "")});
    add(QObject::tr("energy per output token"),
        QString::number(p.energy_per_token_j, 'f', 3) + QObject::tr(" J"));
    more({num("energy per output token", p.energy_per_token_j, "J")});
    add(QObject::tr("node peak uncapped / capped"),
        formatWatts(p.node_peak_uncapped) + QStringLiteral(" / ") + formatWatts(p.node_peak));
    more({num("node peak uncapped", p.node_peak_uncapped.si(), "W"),
          num("node peak capped", p.node_peak.si(), "W")});
    add(QObject::tr("oversubscription"), formatPercent(p.oversubscription));
    more({num("oversubscription", p.oversubscription * 100.0, "%")});
    for (const auto& n : p.notes) {
        add(QObject::tr("note"), qs(n));
    }
    return r;
}

FiguresModel::Rows rackRows(const model::RackPlan& p) {
    FiguresModel::Rows r;
    const auto add = [&r](const QString& k, const QString& v) { r.push_back({k, v, {}}); };
    // The numbers behind the row just added (for the CSV export).
    const auto more = [&r](std::vector<FigureNumber> n) { r.back().numbers = std::move(n); };
    add(QObject::tr("node power (peak, at the wall)"), formatWatts(p.node_power));
    more({num("node power", p.node_power.si(), "W")});
    add(QObject::tr("nodes"), QString::number(p.nodes));
    more({num("nodes", static_cast<double>(p.nodes), "nodes")});
    add(QObject::tr("nodes per rack"), QString::number(p.nodes_per_rack));
    more({num("nodes per rack", static_cast<double>(p.nodes_per_rack), "nodes")});
    add(QObject::tr("racks"), QString::number(p.racks));
    more({num("racks", static_cast<double>(p.racks), "racks")});
    add(QObject::tr("binding limit"), qs(std::string(model::to_string(p.binding))));
    add(QObject::tr("rack power"), formatWatts(p.rack_power));
    more({num("rack power", p.rack_power.si(), "W")});
    add(QObject::tr("PDU nameplate / usable / rack capacity"),
        formatWatts(p.pdu_nameplate) + QStringLiteral(" / ") + formatWatts(p.pdu_usable) +
            QStringLiteral(" / ") + formatWatts(p.pdu_capacity));
    more({num("PDU nameplate", p.pdu_nameplate.si(), "W"),
          num("PDU usable", p.pdu_usable.si(), "W"),
          num("PDU rack capacity", p.pdu_capacity.si(), "W")});
    add(QObject::tr("feasible"), yesNo(p.feasible));
    for (const auto& l : p.limits) {
        // Watts for the power limits, rack units for space, as `gpuplan rack` writes them
        // ("6.00 kW", "2 U").
        const auto amount = [&l](double v) {
            return l.which == model::RackLimit::RackUnits
                       ? QString::number(v, 'f', 0) + QStringLiteral(" U")
                       : formatWatts(Watts(v));
        };
        add(QObject::tr("limit %1").arg(qs(std::string(model::to_string(l.which)))),
            QObject::tr("%1 nodes fit; capacity %2, used %3, headroom %4")
                .arg(l.nodes_fit)
                .arg(amount(l.capacity), amount(l.used), amount(l.headroom)));
        const std::string which(model::to_string(l.which));
        const char* unit = l.which == model::RackLimit::RackUnits ? "U" : "W";
        const auto named = [&which](const char* what) {
            return QStringLiteral("%1 %2").arg(qs(which), QString::fromUtf8(what));
        };
        more({{named("nodes fit"), static_cast<double>(l.nodes_fit), QStringLiteral("nodes")},
              {named("capacity"), l.capacity, QString::fromUtf8(unit)},
              {named("used"), l.used, QString::fromUtf8(unit)},
              {named("headroom"), l.headroom, QString::fromUtf8(unit)}});
    }
    for (const auto& w : p.warnings) {
        add(QObject::tr("warning"), qs(w));
    }
    return r;
}

FiguresModel::Rows costRows(const model::CostInputs& in, const model::CostEstimate& c) {
    FiguresModel::Rows r;
    const auto add = [&r](const QString& k, const QString& v) { r.push_back({k, v, {}}); };
    // The numbers behind the row just added (for the CSV export).
    const auto more = [&r](std::vector<FigureNumber> n) { r.back().numbers = std::move(n); };
    add(QObject::tr("currency"), qs(c.currency));
    add(QObject::tr("GPUs / nodes"), QStringLiteral("%1 / %2").arg(in.gpus).arg(in.nodes));
    add(QObject::tr("serving hours per month"), formatNumber(c.hours_serving));
    more({num("serving hours per month", c.hours_serving, "h")});
    add(QObject::tr("output tokens per month"),
        formatNumber(c.tokens / 1e6, 1) + QObject::tr(" M"));
    more({num("output tokens per month", c.tokens, "tokens")});
    add(QObject::tr("capex"),
        formatMoney(c.capex) +
            (in.capex_source.empty()
                 ? QString()
                 : QStringLiteral(" (") + qs(in.capex_source) + QStringLiteral(")")));
    more(money("capex", c.capex));
    add(QObject::tr("capex amortized / month"), formatMoney(c.capex_monthly));
    more(money("capex amortized / month", c.capex_monthly));
    add(QObject::tr("energy / month"),
        formatMoney(c.energy_monthly) +
            QObject::tr(" (%1 kWh at the facility)").arg(formatNumber(c.facility_kwh)));
    more(money("energy / month", c.energy_monthly));
    add(QObject::tr("maintenance / month"), formatMoney(c.maintenance_monthly));
    more(money("maintenance / month", c.maintenance_monthly));
    add(QObject::tr("colocation / month"), formatMoney(c.colocation_monthly));
    more(money("colocation / month", c.colocation_monthly));
    add(QObject::tr("own / month"), formatMoney(c.own_monthly));
    more(money("own / month", c.own_monthly));
    add(QObject::tr("rent / month"),
        formatMoney(c.rent_monthly) +
            (in.rent_source.empty()
                 ? QString()
                 : QStringLiteral(" (") + qs(in.rent_source) + QStringLiteral(")")));
    more(money("rent / month", c.rent_monthly));
    add(QObject::tr("own per million tokens"), formatMoney(c.own_per_million_tokens));
    more(money("own per million tokens", c.own_per_million_tokens));
    add(QObject::tr("rent per million tokens"), formatMoney(c.rent_per_million_tokens));
    more(money("rent per million tokens", c.rent_per_million_tokens));
    add(QObject::tr("break-even month"), c.break_even_month ? QString::number(*c.break_even_month)
                                                            : QObject::tr("never (or not priced)"));
    if (c.break_even_month) {
        more({num("break-even month", static_cast<double>(*c.break_even_month), "month")});
    }
    add(QObject::tr("cheaper"), c.cheaper.empty() ? QStringLiteral("\u2013") : qs(c.cheaper));
    for (const auto& n : c.notes) {
        add(QObject::tr("note"), qs(n));
    }
    return r;
}

FiguresModel::Rows trainingRows(const model::TrainingEstimate& t) {
    const model::LayoutResult& x = t.result;
    FiguresModel::Rows r;
    const auto add = [&r](const QString& k, const QString& v) { r.push_back({k, v, {}}); };
    // The numbers behind the row just added (for the CSV export).
    const auto more = [&r](std::vector<FigureNumber> n) { r.back().numbers = std::move(n); };
    const auto& l = x.layout;
    add(QObject::tr("layout"),
        QObject::tr("tp %1 × pp %2 × dp %3 × cp %4, ep %5, ZeRO-%6, micro-batch %7, %8 recompute")
            .arg(l.tp)
            .arg(l.pp)
            .arg(l.dp)
            .arg(l.cp)
            .arg(l.ep)
            .arg(l.zero)
            .arg(l.micro_batch)
            .arg(qs(std::string(model::to_string(l.recompute)))));
    add(QObject::tr("fits"), x.fits ? QObject::tr("yes") : QObject::tr("NO"));
    add(QObject::tr("memory per GPU (fullest stage)"),
        formatGiB(x.memory.total) + QObject::tr(" of ") + formatGiB(x.memory.capacity));
    more({num("memory per GPU", x.memory.total.si() / kGiB, "GiB"),
          num("memory capacity", x.memory.capacity.si() / kGiB, "GiB")});
    add(QObject::tr("step time"), formatTime(x.step.total));
    more({num("step time", x.step.total.si(), "s")});
    add(QObject::tr("MFU / HFU"),
        formatPercent(x.mfu) + QStringLiteral(" / ") + formatPercent(x.hfu));
    more({num("MFU", x.mfu * 100.0, "%"), num("HFU", x.hfu * 100.0, "%")});
    add(QObject::tr("tokens/s (per GPU)"), formatNumber(x.tokens_per_s) + QStringLiteral(" (") +
                                               formatNumber(x.tokens_per_s_per_gpu) +
                                               QStringLiteral(")"));
    more({num("tokens/s", x.tokens_per_s, "tok/s"),
          num("tokens/s per GPU", x.tokens_per_s_per_gpu, "tok/s")});
    add(QObject::tr("time to train"),
        QString::number(x.time_to_train.si() / 86400.0, 'f', 1) + QObject::tr(" days"));
    more({num("time to train", x.time_to_train.si() / 86400.0, "days")});
    add(QObject::tr("GPU-hours"), formatNumber(x.gpu_hours));
    more({num("GPU-hours", x.gpu_hours, "h")});
    add(QObject::tr("compute (PF-days)"), formatNumber(t.pf_days, 0));
    more({num("compute", t.pf_days, "PF-days")});
    add(QObject::tr("rent cost"), formatMoney(t.rent_cost));
    more(money("rent cost", t.rent_cost));
    add(QObject::tr("energy cost"), formatMoney(t.energy_cost));
    more(money("energy cost", t.energy_cost));
    add(QObject::tr("energy"), t.energy_kwh ? formatNumber(*t.energy_kwh) + QObject::tr(" kWh")
                                            : QStringLiteral("\u2013"));
    if (t.energy_kwh) {
        more({num("energy", *t.energy_kwh, "kWh")});
    }
    add(QObject::tr("scaling efficiency"), formatPercent(t.scaling_efficiency));
    more({num("scaling efficiency", t.scaling_efficiency * 100.0, "%")});
    add(QObject::tr("parameters (trained)"), formatNumber(t.params / 1e9, 2) + QObject::tr(" B (") +
                                                 formatNumber(t.trainable_params / 1e9, 3) +
                                                 QObject::tr(" B)"));
    more({num("parameters", t.params, "parameters"),
          num("trainable parameters", t.trainable_params, "parameters")});
    for (const auto& n : t.notes) {
        add(QObject::tr("note"), qs(n));
    }
    return r;
}

FiguresModel::Rows simulationRows(const sim::SimResult& s, double wall_s) {
    FiguresModel::Rows r;
    const auto add = [&r](const QString& k, const QString& v) { r.push_back({k, v, {}}); };
    // The numbers behind the row just added (for the CSV export).
    const auto more = [&r](std::vector<FigureNumber> n) { r.back().numbers = std::move(n); };
    const auto& o = s.overall;
    add(QObject::tr("requests arrived / completed"),
        QStringLiteral("%1 / %2").arg(o.arrived).arg(o.completed));
    more({num("requests arrived", static_cast<double>(o.arrived), "requests"),
          num("requests completed", static_cast<double>(o.completed), "requests")});
    add(QObject::tr("rejected / timed out / cancelled"),
        QStringLiteral("%1 / %2 / %3").arg(o.rejected).arg(o.timed_out).arg(o.cancelled));
    more({num("rejected", static_cast<double>(o.rejected), "requests"),
          num("timed out", static_cast<double>(o.timed_out), "requests"),
          num("cancelled", static_cast<double>(o.cancelled), "requests")});
    add(QObject::tr("SLO attainment"), formatPercent(o.slo_attainment));
    more({num("SLO attainment", o.slo_attainment * 100.0, "%")});
    add(QObject::tr("goodput"), QString::number(o.goodput_rps, 'f', 2) + QObject::tr(" req/s"));
    more({num("goodput", o.goodput_rps, "req/s")});
    add(QObject::tr("output tokens/s"), formatNumber(s.output_tok_s));
    more({num("output tokens/s", s.output_tok_s, "tok/s")});
    add(QObject::tr("TTFT p50 / p99"),
        formatTime(o.ttft.p50) + QStringLiteral(" / ") + formatTime(o.ttft.p99));
    more({num("TTFT p50", o.ttft.p50.si(), "s"), num("TTFT p99", o.ttft.p99.si(), "s")});
    add(QObject::tr("TPOT p50 / p99"),
        formatTime(o.tpot.p50) + QStringLiteral(" / ") + formatTime(o.tpot.p99));
    more({num("TPOT p50", o.tpot.p50.si(), "s"), num("TPOT p99", o.tpot.p99.si(), "s")});
    add(QObject::tr("E2E p50 / p99"),
        formatTime(o.e2e.p50) + QStringLiteral(" / ") + formatTime(o.e2e.p99));
    more({num("E2E p50", o.e2e.p50.si(), "s"), num("E2E p99", o.e2e.p99.si(), "s")});
    add(QObject::tr("queue p99"), formatTime(o.queue.p99));
    more({num("queue p99", o.queue.p99.si(), "s")});
    add(QObject::tr("KV use mean / max"),
        formatPercent(s.kv_use_mean) + QStringLiteral(" / ") + formatPercent(s.kv_use_max));
    more({num("KV use mean", s.kv_use_mean * 100.0, "%"),
          num("KV use max", s.kv_use_max * 100.0, "%")});
    add(QObject::tr("preemptions"), QString::number(s.preemptions));
    more({num("preemptions", static_cast<double>(s.preemptions), "preemptions")});
    add(QObject::tr("prefix hit rate"), formatPercent(s.prefix_hit_rate));
    more({num("prefix hit rate", s.prefix_hit_rate * 100.0, "%")});
    if (s.kv_offload) {
        const sim::KvOffloadResult& k = *s.kv_offload;
        add(QObject::tr("KV offload hits GPU / host / NVMe"),
            formatPercent(k.rate(k.gpu_hit_tokens)) + QStringLiteral(" / ") +
                formatPercent(k.rate(k.host_hit_tokens)) + QStringLiteral(" / ") +
                formatPercent(k.rate(k.nvme_hit_tokens)));
        more({num("hits GPU", k.rate(k.gpu_hit_tokens) * 100.0, "%"),
              num("hits host", k.rate(k.host_hit_tokens) * 100.0, "%"),
              num("hits NVMe", k.rate(k.nvme_hit_tokens) * 100.0, "%")});
        add(QObject::tr("KV offload loads host / NVMe"),
            QObject::tr("%1 / %2 blocks in %3")
                .arg(k.host_loaded_blocks)
                .arg(k.nvme_loaded_blocks)
                .arg(formatTime(k.host_load_time + k.nvme_load_time)));
        more({num("blocks loaded from host", static_cast<double>(k.host_loaded_blocks), "blocks"),
              num("blocks loaded from NVMe", static_cast<double>(k.nvme_loaded_blocks), "blocks"),
              num("load time", (k.host_load_time + k.nvme_load_time).si(), "s")});
    }
    if (s.lora) {
        const sim::LoraResult& l = *s.lora;
        add(QObject::tr("LoRA adapter hit rate (Che)"),
            formatPercent(l.hit_rate) + QStringLiteral(" (") + formatPercent(l.expected_hit_rate) +
                QStringLiteral(")"));
        more({num("LoRA adapter hit rate", l.hit_rate * 100.0, "%"),
              num("LoRA expected hit rate", l.expected_hit_rate * 100.0, "%")});
        add(QObject::tr("LoRA loads (from disk) / time"),
            QStringLiteral("%1 (%2) / ").arg(l.loads).arg(l.disk_loads) +
                QString::number(l.load_time.si(), 'f', 2) + QObject::tr(" s"));
        more({num("LoRA loads", static_cast<double>(l.loads), "loads"),
              num("LoRA disk loads", static_cast<double>(l.disk_loads), "loads"),
              num("LoRA load time", l.load_time.si(), "s")});
    }
    add(QObject::tr("mean batch size"), QString::number(s.batch_size_mean, 'f', 1));
    more({num("mean batch size", s.batch_size_mean, "sequences")});
    add(QObject::tr("simulated time"),
        QString::number(s.duration.si(), 'f', 1) + QObject::tr(" s"));
    more({num("simulated time", s.duration.si(), "s")});
    add(QObject::tr("stopped early"), yesNo(s.stopped));
    add(QObject::tr("steps / events"), QStringLiteral("%1 / %2").arg(s.steps).arg(s.events));
    add(QObject::tr("wall time"), QString::number(wall_s, 'f', 2) + QObject::tr(" s"));
    more({num("wall time", wall_s, "s")});
    if (s.cloud_spend.amount > 0) {
        add(QObject::tr("cloud spend"), formatMoney(s.cloud_spend));
        more(money("cloud spend", s.cloud_spend));
    }
    appendSimulationFeatureRows(r, s);
    return r;
}

// ---- MemoryTableModel ----

void MemoryTableModel::setEstimate(const model::MemoryEstimate& m) {
    beginResetModel();
    rows_ = {{tr("weights"), m.weights},
             {tr("KV cache pool"), Bytes(std::max(0.0, m.kv_budget.si()))},
             {tr("activations (peak)"), m.activations},
             {tr("non-torch (NCCL, cuBLAS)"), m.non_torch},
             {tr("CUDA graphs"), m.cuda_graphs},
             {tr("CUDA context"), m.cuda_context},
             {tr("free"), m.free},
             {tr("capacity (as CUDA reports)"), m.capacity}};
    if (m.lora_slots.si() > 0) {
        rows_.insert(rows_.begin() + 1, {tr("LoRA adapter slots"), m.lora_slots});
    }
    capacity_ = m.capacity;
    endResetModel();
}

int MemoryTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int MemoryTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 3;
}

QVariant MemoryTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) {
        return {};
    }
    const auto& [name, size] = rows_.at(static_cast<std::size_t>(index.row()));
    if (role == Qt::ForegroundRole && size.si() < 0) {
        return QBrush(QColor(QStringLiteral("#d32f2f")));
    }
    if (role == kCsvRole) {
        switch (index.column()) {
        case 0: return name;
        case 1: return size.si() / kGiB;
        default: return capacity_.si() > 0 ? QVariant(size / capacity_ * 100.0) : QString();
        }
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (index.column()) {
    case 0: return name;
    case 1: return formatGiB(size);
    default: return capacity_.si() > 0 ? formatPercent(size / capacity_) : QString();
    }
}

QVariant MemoryTableModel::headerData(int section, Qt::Orientation o, int role) const {
    return header({tr("item"), tr("size"), tr("share")}, section, o, role,
                  {QStringLiteral("item"), QStringLiteral("size (GiB)"),
                   QStringLiteral("share of capacity (%)")});
}

// ---- WhatIfTableModel ----

void WhatIfTableModel::setWhatIfs(std::vector<model::WhatIf> w) {
    beginResetModel();
    rows_ = std::move(w);
    endResetModel();
}

int WhatIfTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int WhatIfTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 8;
}

QVariant WhatIfTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) {
        return {};
    }
    const model::WhatIf& x = rows_.at(static_cast<std::size_t>(index.row()));
    if (role == Qt::ForegroundRole && !x.applicable) {
        return QBrush(QColor(QStringLiteral("#9e9e9e")));
    }
    if (role == Qt::ToolTipRole) {
        return x.applicable ? tr("Double-click to apply: %1").arg(qs(x.change)) : qs(x.note);
    }
    if (role == kCsvRole) {
        if (!x.applicable && index.column() > 0 && index.column() < 7) {
            return QString();
        }
        switch (index.column()) {
        case 0: return qs(x.change);
        case 1: return x.fits;
        case 2: return x.gpus;
        case 3: return x.ttft.si();
        case 4: return x.tpot.si();
        case 5: return x.throughput;
        case 6: return x.throughput_gain;
        default: return qs(x.note);
        }
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    if (!x.applicable && index.column() > 0 && index.column() < 7) {
        return index.column() == 1 ? tr("n/a") : QVariant();
    }
    switch (index.column()) {
    case 0: return qs(x.change);
    case 1: return yesNo(x.fits);
    case 2: return x.gpus;
    case 3: return formatTime(x.ttft);
    case 4: return formatTime(x.tpot);
    case 5: return formatNumber(x.throughput);
    case 6: return QString::number(x.throughput_gain, 'f', 2) + QStringLiteral("x");
    default: return qs(x.note);
    }
}

QVariant WhatIfTableModel::headerData(int section, Qt::Orientation o, int role) const {
    return header({tr("change"), tr("fits"), tr("GPUs"), tr("TTFT"), tr("TPOT"), tr("tok/s"),
                   tr("gain"), tr("note")},
                  section, o, role,
                  {QStringLiteral("change"), QStringLiteral("fits"), QStringLiteral("GPUs"),
                   QStringLiteral("TTFT (s)"), QStringLiteral("TPOT (s)"),
                   QStringLiteral("throughput (tok/s)"), QStringLiteral("throughput gain (x)"),
                   QStringLiteral("note")});
}

// ---- ClassTableModel ----

void ClassTableModel::setResult(const sim::SimResult& r) {
    beginResetModel();
    rows_ = r.classes;
    endResetModel();
}

int ClassTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ClassTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 9;
}

QVariant ClassTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) {
        return {};
    }
    const sim::ClassResult& c = rows_.at(static_cast<std::size_t>(index.row()));
    if (role == Qt::ForegroundRole && index.column() == 8) {
        return QBrush(QColor(c.slo_met ? QStringLiteral("#2e7d32") : QStringLiteral("#d32f2f")));
    }
    const auto& s = c.summary;
    if (role == kCsvRole) {
        switch (index.column()) {
        case 0: return qs(c.name);
        case 1: return static_cast<qlonglong>(s.arrived);
        case 2: return static_cast<qlonglong>(s.completed);
        case 3: return static_cast<qlonglong>(s.rejected + s.timed_out);
        case 4: return QVariantList{s.ttft.p50.si(), s.ttft.p99.si()};
        case 5: return QVariantList{s.tpot.p50.si(), s.tpot.p99.si()};
        case 6: return s.e2e.p99.si();
        case 7: return s.slo_attainment * 100.0;
        default: return c.slo_met;
        }
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (index.column()) {
    case 0: return qs(c.name);
    case 1: return static_cast<qlonglong>(s.arrived);
    case 2: return static_cast<qlonglong>(s.completed);
    case 3: return static_cast<qlonglong>(s.rejected + s.timed_out);
    case 4: return formatTime(s.ttft.p50) + QStringLiteral(" / ") + formatTime(s.ttft.p99);
    case 5: return formatTime(s.tpot.p50) + QStringLiteral(" / ") + formatTime(s.tpot.p99);
    case 6: return formatTime(s.e2e.p99);
    case 7: return formatPercent(s.slo_attainment);
    default: return yesNo(c.slo_met);
    }
}

QVariant ClassTableModel::headerData(int section, Qt::Orientation o, int role) const {
    return header({tr("class"), tr("arrived"), tr("completed"), tr("failed"), tr("TTFT p50 / p99"),
                   tr("TPOT p50 / p99"), tr("E2E p99"), tr("SLO attainment"), tr("SLO met")},
                  section, o, role,
                  {QStringLiteral("class"), QStringLiteral("arrived"), QStringLiteral("completed"),
                   QStringLiteral("failed"), list({"TTFT p50 (s)", "TTFT p99 (s)"}),
                   list({"TPOT p50 (s)", "TPOT p99 (s)"}), QStringLiteral("E2E p99 (s)"),
                   QStringLiteral("SLO attainment (%)"), QStringLiteral("SLO met")});
}

// ---- LayoutTableModel ----

void LayoutTableModel::setLayouts(std::vector<model::LayoutResult> rows, QString currency) {
    beginResetModel();
    rows_ = std::move(rows);
    currency_ = std::move(currency);
    endResetModel();
}

int LayoutTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int LayoutTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 10;
}

QVariant LayoutTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || (role != Qt::DisplayRole && role != kCsvRole)) {
        return {};
    }
    const model::LayoutResult& r = rows_.at(static_cast<std::size_t>(index.row()));
    const auto& l = r.layout;
    if (role == kCsvRole) {
        switch (index.column()) {
        case 0: return QVariantList{l.tp, l.pp, l.dp, l.cp};
        case 1: return l.ep;
        case 2: return l.zero;
        case 3: return l.micro_batch;
        case 4:
            return QVariantList{qs(std::string(model::to_string(l.recompute))), l.virtual_stages};
        case 5: return r.memory.total.si() / kGiB;
        case 6: return r.step.total.si();
        case 7: return r.mfu * 100.0;
        case 8: return r.time_to_train.si() / 86400.0;
        default: return r.cost > 0 ? QVariant(r.cost) : QVariant(QString());
        }
    }
    switch (index.column()) {
    case 0: return QStringLiteral("%1×%2×%3×%4").arg(l.tp).arg(l.pp).arg(l.dp).arg(l.cp);
    case 1: return l.ep;
    case 2: return l.zero;
    case 3: return l.micro_batch;
    case 4:
        return qs(std::string(model::to_string(l.recompute))) +
               (l.virtual_stages > 1 ? QStringLiteral(", v%1").arg(l.virtual_stages) : QString());
    case 5: return formatGiB(r.memory.total);
    case 6: return formatTime(r.step.total);
    case 7: return formatPercent(r.mfu);
    case 8: return QString::number(r.time_to_train.si() / 86400.0, 'f', 1);
    default:
        return r.cost > 0 ? formatNumber(r.cost) + QStringLiteral(" ") + currency_
                          : QStringLiteral("\u2013");
    }
}

QVariant LayoutTableModel::headerData(int section, Qt::Orientation o, int role) const {
    return header({tr("tp×pp×dp×cp"), tr("ep"), tr("ZeRO"), tr("micro-batch"), tr("recompute"),
                   tr("GiB/GPU"), tr("step"), tr("MFU"), tr("days"), tr("cost")},
                  section, o, role,
                  {list({"tp", "pp", "dp", "cp"}), QStringLiteral("ep"), QStringLiteral("ZeRO"),
                   QStringLiteral("micro-batch"), list({"recompute", "virtual stages"}),
                   QStringLiteral("memory per GPU (GiB)"), QStringLiteral("step (s)"),
                   QStringLiteral("MFU (%)"), QStringLiteral("time to train (days)"),
                   QStringLiteral("cost (%1)").arg(currency_)});
}

// ---- PlanTableModel ----

void PlanTableModel::setRows(std::vector<plan::SizingRow> rows, QString currency,
                             double percentile) {
    beginResetModel();
    rows_ = std::move(rows);
    currency_ = std::move(currency);
    percentile_ = percentile;
    endResetModel();
}

int PlanTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int PlanTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 13;
}

QVariant PlanTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || (role != Qt::DisplayRole && role != Qt::UserRole &&
                             role != Qt::ToolTipRole && role != kCsvRole)) {
        return {};
    }
    const plan::SizingRow& r = rows_.at(static_cast<std::size_t>(index.row()));
    const plan::SizingConfig& k = r.config;
    if (role == Qt::ToolTipRole) {
        return qs(r.reason);
    }
    if (role == Qt::UserRole) {
        return index.column() == kMonthlyColumn && r.monthly ? QVariant(*r.monthly) : QVariant();
    }
    // The tightest SLO: the largest value ÷ target (the smallest margin).
    const plan::SloMargin* tight = nullptr;
    for (const auto& m : r.margins) {
        if (!tight || m.margin() < tight->margin()) {
            tight = &m;
        }
    }
    const QString dash = QStringLiteral("\u2013");
    if (role == kCsvRole) {
        const auto opt = [](const std::optional<double>& v) {
            return v ? QVariant(*v) : QVariant(QString());
        };
        switch (index.column()) {
        case 0: return index.row() + 1;
        case 1: return QVariantList{qs(k.gpu), qs(k.node), k.gpus};
        case 2: return QVariantList{k.par.tp, k.par.pp, k.par.dp};
        case 3: return QVariantList{qs(k.weights.name), qs(k.kv_cache.name)};
        case 4: return k.max_num_seqs;
        case kMonthlyColumn: return opt(r.monthly);
        case 6: return opt(r.per_million_tokens);
        case 7: return r.avg_power_w;
        case 8: return r.peak_power_w;
        case 9: return r.racks;
        case 10:
            return tight ? QVariantList{qs(tight->request_class), qs(tight->metric), tight->value_s,
                                        tight->target_s}
                         : QVariantList{};
        case 11: return tight ? QVariant(tight->margin() * 100.0) : QVariant(QString());
        default: return qs(r.binding_resource);
        }
    }
    switch (index.column()) {
    case 0: return index.row() + 1;
    case 1:
        return QStringLiteral("%1 \u00d7 %2")
            .arg(qs(k.gpu) + (k.node.empty() ? QString() : QStringLiteral("@") + qs(k.node)))
            .arg(k.gpus);
    case 2: return QStringLiteral("%1 / %2 / %3").arg(k.par.tp).arg(k.par.pp).arg(k.par.dp);
    case 3: return qs(k.weights.name) + QStringLiteral(" / ") + qs(k.kv_cache.name);
    case 4: return k.max_num_seqs;
    case kMonthlyColumn:
        return r.monthly ? formatNumber(*r.monthly) + QStringLiteral(" ") + currency_ : dash;
    case 6:
        return r.per_million_tokens
                   ? formatNumber(*r.per_million_tokens, 3) + QStringLiteral(" ") + currency_
                   : dash;
    case 7: return formatWatts(Watts(r.avg_power_w));
    case 8: return formatWatts(Watts(r.peak_power_w));
    case 9: return r.racks;
    case 10:
        return tight ? QStringLiteral("%1 %2 %3 / %4")
                           .arg(qs(tight->request_class), qs(tight->metric),
                                formatTime(Seconds(tight->value_s)),
                                formatTime(Seconds(tight->target_s)))
                     : dash;
    case 11: return tight ? formatPercent(tight->margin()) : dash;
    default: return r.binding_resource.empty() ? dash : qs(r.binding_resource);
    }
}

QVariant PlanTableModel::headerData(int section, Qt::Orientation o, int role) const {
    return header(
        {tr("#"), tr("GPU \u00d7 count"), tr("TP / PP / replicas"), tr("precision (weights / KV)"),
         tr("max_num_seqs"), tr("monthly cost"), tr("per Mtok"), tr("avg power"), tr("peak power"),
         tr("racks"), tr("tightest SLO (p%1)").arg(percentile_, 0, 'f', 0), tr("SLO margin"),
         tr("binding")},
        section, o, role,
        {QStringLiteral("rank"), list({"GPU", "node", "GPUs"}), list({"tp", "pp", "replicas"}),
         list({"weights", "KV cache"}), QStringLiteral("max_num_seqs"),
         QStringLiteral("monthly cost (%1/month)").arg(currency_),
         QStringLiteral("cost per million tokens (%1)").arg(currency_),
         QStringLiteral("average power (W)"), QStringLiteral("peak power (W)"),
         QStringLiteral("racks"),
         QStringList{QStringLiteral("tightest SLO class"), QStringLiteral("tightest SLO metric"),
                     QStringLiteral("tightest SLO p%1 (s)").arg(percentile_, 0, 'f', 0),
                     QStringLiteral("tightest SLO target (s)")},
         QStringLiteral("SLO margin (%)"), QStringLiteral("binding")});
}

// ---- CompareTableModel ----

QStringList CompareTableModel::figureNames() {
    return {tr("GPU"),
            tr("GPUs (tp × pp × dp)"),
            tr("precision (weights / KV)"),
            tr("fits"),
            tr("KV tokens"),
            tr("TTFT"),
            tr("TPOT"),
            tr("throughput (tok/s)"),
            tr("tok/s per GPU"),
            tr("decode binds"),
            tr("power average"),
            tr("rent per million tokens"),
            tr("own per million tokens")};
}

void CompareTableModel::setConfigurations(QStringList names,
                                          std::vector<std::optional<Analysis>> analyses,
                                          std::vector<std::string> errors) {
    beginResetModel();
    names_ = std::move(names);
    columns_.clear();
    for (std::size_t i = 0; i < analyses.size(); ++i) {
        QStringList col;
        if (!analyses[i]) {
            col << (i < errors.size() ? qs(errors[i]) : tr("failed"));
            while (col.size() < figureNames().size()) {
                col << QString();
            }
            columns_.push_back(col);
            continue;
        }
        const Analysis& a = *analyses[i];
        const auto& d = a.scenario.deployment;
        const auto& e = a.serving();
        col << qs(d.gpu.name)
            << QStringLiteral("%1 (%2 × %3 × %4)")
                   .arg(d.gpus())
                   .arg(d.par.tp)
                   .arg(d.par.pp)
                   .arg(d.par.dp)
            << qs(d.prec.weights.name) + QStringLiteral(" / ") + qs(d.prec.kv_cache.name)
            << yesNo(e.memory.fits) << formatNumber(static_cast<double>(e.memory.kv_tokens))
            << formatTime(e.ttft) << formatTime(e.tpot) << formatNumber(e.throughput)
            << formatNumber(d.gpus() > 0 ? e.throughput / d.gpus() : 0)
            << qs(std::string(model::to_string(a.bottleneck.decode.binding)))
            << (a.power ? formatWatts(a.power->deployment_average) : QStringLiteral("\u2013"))
            << (a.cost ? formatMoney(a.cost->rent_per_million_tokens) : QStringLiteral("\u2013"))
            << (a.cost ? formatMoney(a.cost->own_per_million_tokens) : QStringLiteral("\u2013"));
        columns_.push_back(col);
    }
    endResetModel();
}

int CompareTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(figureNames().size());
}

int CompareTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(columns_.size()) + 1;
}

QVariant CompareTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || role != Qt::DisplayRole) {
        return {};
    }
    if (index.column() == 0) {
        return figureNames().at(index.row());
    }
    const QStringList& col = columns_.at(static_cast<std::size_t>(index.column() - 1));
    return index.row() < col.size() ? col.at(index.row()) : QString();
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (role != Qt::DisplayRole || o != Qt::Horizontal) {
        return {};
    }
    if (section == 0) {
        return tr("figure");
    }
    return section - 1 < names_.size() ? names_.at(section - 1) : QString();
}

} // namespace gpuplan::gui
