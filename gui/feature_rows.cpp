#include "gui/feature_rows.hpp"

#include "gui/ui_util.hpp"

#include <QObject>

namespace gpuplan::gui {
namespace {

FigureNumber num(const char* name, double value, const char* unit) {
    return {QString::fromUtf8(name), value, QString::fromUtf8(unit)};
}

/// Adds a row and the numbers behind it (for the CSV export).
void add(FiguresModel::Rows& r, const QString& figure, const QString& text,
         std::vector<FigureNumber> numbers = {}) {
    r.push_back({figure, text, std::move(numbers)});
}

QString p50p99(const sim::LatencyStats& s) {
    return formatTime(s.p50) + QStringLiteral(" / ") + formatTime(s.p99);
}

} // namespace

void appendSimulationFeatureRows(FiguresModel::Rows& r, const sim::SimResult& s) {
    if (s.speculative) {
        const sim::SpeculativeResult& sp = *s.speculative;
        add(r, QObject::tr("speculative decoding"),
            qs(sp.method) + QObject::tr(", %1 draft tokens per step").arg(sp.k));
        add(r, QObject::tr("tokens per step (run / expected)"),
            QString::number(sp.tokens_per_step, 'f', 2) + QStringLiteral(" / ") +
                QString::number(sp.expected_tokens_per_step, 'f', 2),
            {num("tokens per step", sp.tokens_per_step, "tokens"),
             num("expected tokens per step", sp.expected_tokens_per_step, "tokens")});
        add(r, QObject::tr("draft acceptance (accepted / drafted)"),
            formatPercent(sp.acceptance_rate) +
                QStringLiteral(" (%1 / %2)").arg(sp.accepted).arg(sp.drafted),
            {num("draft acceptance", sp.acceptance_rate * 100.0, "%")});
        add(r, QObject::tr("proposer GPU time"),
            QString::number(sp.draft_time.si(), 'f', 2) + QObject::tr(" s"),
            {num("proposer GPU time", sp.draft_time.si(), "s")});
    }
    if (s.disaggregation) {
        const sim::DisaggregationResult& d = *s.disaggregation;
        add(r, QObject::tr("KV transfers"),
            QObject::tr("%1 over %2 (%3), %4 GB moved")
                .arg(d.transfers)
                .arg(d.link.empty() ? QObject::tr("the link") : qs(d.link))
                .arg(qs(d.mode))
                .arg(d.kv_bytes / 1e9, 0, 'f', 1),
            {num("KV transfers", static_cast<double>(d.transfers), "transfers"),
             num("KV moved", d.kv_bytes, "B")});
        add(r, QObject::tr("KV transfer time mean / p99"),
            formatTime(d.transfer_time.mean) + QStringLiteral(" / ") +
                formatTime(d.transfer_time.p99),
            {num("KV transfer time mean", d.transfer_time.mean.si(), "s"),
             num("KV transfer time p99", d.transfer_time.p99.si(), "s")});
        add(r, QObject::tr("KV transfer after the prefill p50 / p99"), p50p99(d.exposed),
            {num("KV transfer exposed p99", d.exposed.p99.si(), "s")});
        add(r, QObject::tr("link utilisation"), formatPercent(d.link_utilisation),
            {num("link utilisation", d.link_utilisation * 100.0, "%")});
        add(r, QObject::tr("prefill queue p50 / p99"), p50p99(d.prefill_queue),
            {num("prefill queue p99", d.prefill_queue.p99.si(), "s")});
        add(r, QObject::tr("decode queue p50 / p99"), p50p99(d.decode_queue),
            {num("decode queue p99", d.decode_queue.p99.si(), "s")});
    }
    for (const auto& p : s.pools) {
        add(r, QObject::tr("pool %1").arg(qs(p.name)),
            QObject::tr("%1 replicas, %2 requests, %3 busy, prefix hit rate %4")
                .arg(p.replicas)
                .arg(p.requests)
                .arg(formatPercent(p.busy_fraction))
                .arg(formatPercent(p.prefix_hit_rate)));
    }
    // Prefix routing: with several replicas, each replica's hit rate and the load imbalance.
    if (s.replicas.size() > 1 && s.prefix_hit_rate > 0) {
        QStringList rates;
        std::vector<FigureNumber> numbers;
        for (std::size_t i = 0; i < s.replicas.size(); ++i) {
            rates << formatPercent(s.replicas[i].prefix_hit_rate);
            numbers.push_back({QObject::tr("prefix hit rate replica %1").arg(static_cast<int>(i)),
                               s.replicas[i].prefix_hit_rate * 100.0, QStringLiteral("%")});
        }
        add(r, QObject::tr("prefix hit rate per replica"), rates.join(QStringLiteral(", ")),
            std::move(numbers));
        add(r, QObject::tr("load imbalance (requests / outstanding)"),
            QString::number(s.request_imbalance, 'f', 2) + QStringLiteral(" / ") +
                QString::number(s.outstanding_imbalance, 'f', 2) + QObject::tr(" x mean"),
            {num("request imbalance", s.request_imbalance, "x mean"),
             num("outstanding imbalance", s.outstanding_imbalance, "x mean")});
    }
}

namespace {

void appendPoolRows(FiguresModel::Rows& r, const model::DisaggregatedEstimate& d) {
    add(r, QObject::tr("disaggregated pools (GPUs)"),
        QObject::tr("%1 prefill + %2 decode").arg(d.prefill_gpus).arg(d.decode_gpus));
    add(r, QObject::tr("KV transfer per mean prompt"),
        QObject::tr("%1 MB in %2 (%3 after the prefill)")
            .arg(d.kv_bytes.si() / 1e6, 0, 'f', 0)
            .arg(formatTime(d.transfer))
            .arg(formatTime(d.exposed)),
        {num("KV per prompt", d.kv_bytes.si(), "B"), num("KV transfer time", d.transfer.si(), "s"),
         num("KV transfer exposed", d.exposed.si(), "s")});
    add(r, QObject::tr("link utilisation (analytic)"), formatPercent(d.link_utilisation),
        {num("link utilisation", d.link_utilisation * 100.0, "%")});
    add(r, QObject::tr("disaggregated TTFT / TPOT"),
        formatTime(d.ttft) + QStringLiteral(" / ") + formatTime(d.tpot),
        {num("disaggregated TTFT", d.ttft.si(), "s"), num("disaggregated TPOT", d.tpot.si(), "s")});
    add(r, QObject::tr("disaggregated capacity"),
        QObject::tr("%1 req/s (bound: %2)").arg(d.capacity_rps, 0, 'f', 2).arg(qs(d.bottleneck)),
        {num("disaggregated capacity", d.capacity_rps, "req/s")});
}

} // namespace

void appendServingFeatureRows(FiguresModel::Rows& r, const Analysis& a) {
    if (a.disaggregation) {
        appendPoolRows(r, *a.disaggregation);
    }
    const model::ServingEstimate& e = a.serving();
    if (!e.speculative) {
        return;
    }
    const model::SpeculativeFigures& f = *e.speculative;
    add(r, QObject::tr("speculative decoding"),
        qs(model::to_string(f.method)) + QObject::tr(", %1 draft tokens per step").arg(f.k));
    double mean = 0;
    for (const double p : f.acceptance) {
        mean += p;
    }
    mean = f.acceptance.empty() ? 0 : mean / static_cast<double>(f.acceptance.size());
    add(r, QObject::tr("tokens per step (expected)"), QString::number(f.tokens_per_step, 'f', 2),
        {num("expected tokens per step", f.tokens_per_step, "tokens")});
    add(r, QObject::tr("acceptance (mean per position)"), formatPercent(mean),
        {num("acceptance", mean * 100.0, "%")});
    add(r, QObject::tr("verify / draft time per step"),
        formatTime(f.verify_time) + QStringLiteral(" / ") + formatTime(f.draft_time),
        {num("verify time", f.verify_time.si(), "s"), num("draft time", f.draft_time.si(), "s")});
    add(r, QObject::tr("TPOT without speculation (speed-up)"),
        formatTime(f.tpot_off) + QStringLiteral(" (%1 x)").arg(f.speedup, 0, 'f', 2),
        {num("TPOT without speculation", f.tpot_off.si(), "s"),
         num("speculative speed-up", f.speedup, "x")});
}

} // namespace gpuplan::gui
