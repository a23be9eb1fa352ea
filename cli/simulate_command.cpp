// `gpuplan simulate`: run a scenario's workload through the discrete-event serving simulator
// and report latency percentiles, throughput, goodput, SLO attainment per class and engine
// figures; optionally write per-request and time-series CSVs and a Chrome trace.
#include "cli/chrome_trace.hpp"
#include "cli/cli_context.hpp"
#include "cli/command_reports.hpp"
#include "cli/csv_field.hpp"
#include "cli/interrupt.hpp"
#include "cli/json_out.hpp"
#include "cli/load_report.hpp"
#include "cli/options.hpp"
#include "cli/plot_option.hpp"
#include "cli/power_report.hpp"
#include "cli/progress_bar.hpp"
#include "cli/scenario_options.hpp"
#include "cli/table.hpp"
#include "hwdb/file_io.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/trace_loader.hpp"
#include "model/money.hpp"
#include "model/operating_point.hpp"
#include "plan/thread_pool.hpp"
#include "sim/simulate.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <unistd.h>

namespace gpuplan::cli {
namespace {

nlohmann::json latency_json(const sim::LatencyStats& s) {
    return {{"count", s.count},  {"mean", s.mean.si()}, {"p50", s.p50.si()}, {"p90", s.p90.si()},
            {"p95", s.p95.si()}, {"p99", s.p99.si()},   {"max", s.max.si()}};
}

nlohmann::json opt_json(const std::optional<Seconds>& v) {
    return v ? nlohmann::json(v->si()) : nlohmann::json();
}

nlohmann::json rejections_json(const sim::RejectCounts& c) {
    return {{"too_long", c.too_long},
            {"queue_full", c.queue_full},
            {"cloud_rate_limited", c.cloud_rate_limited},
            {"no_cloud_endpoint", c.no_cloud_endpoint},
            {"replica_failed", c.replica_failed}};
}

nlohmann::json summary_json(const sim::RequestSummary& s) {
    return {{"arrived", s.arrived},
            {"completed", s.completed},
            {"cloud", s.cloud},
            {"rejected", s.rejected},
            {"rejected_by_reason", rejections_json(s.rejected_by_reason)},
            {"timed_out", s.timed_out},
            {"cancelled", s.cancelled},
            {"failed", s.rejected + s.timed_out},
            {"slo_met_requests", s.slo_met},
            {"slo_attainment", s.slo_attainment},
            {"goodput_rps", s.goodput_rps},
            {"throughput_rps", s.throughput_rps},
            {"input_tokens", s.input_tokens},
            {"output_tokens", s.output_tokens},
            {"cached_tokens", s.cached_tokens},
            {"ttft_s", latency_json(s.ttft)},
            {"tpot_s", latency_json(s.tpot)},
            {"itl_s", latency_json(s.itl)},
            {"e2e_s", latency_json(s.e2e)},
            {"queue_s", latency_json(s.queue)}};
}

nlohmann::json power_result_json(const sim::PowerResult& p) {
    if (!p.modelled) {
        return {{"modelled", false}, {"notes", p.notes}};
    }
    return {{"modelled", true},
            {"limit_w", p.limit.si()},
            {"limit_source", p.limit_source},
            {"capped", p.capped},
            {"idle_power_w", p.idle.si()},
            {"resident_power_w", p.resident.si()},
            {"board_power_w", p.board.si()},
            {"gpus", p.gpus},
            {"nodes", p.nodes},
            {"nodes_per_rack", p.nodes_per_rack},
            {"racks", p.racks},
            {"pue", p.pue},
            {"span_s", p.span.si()},
            {"gpu_energy_j", p.gpu_energy.si()},
            {"busy_energy_j", p.busy_energy.si()},
            {"host_energy_j", p.host_energy.si()},
            {"energy_j", p.energy.si()},
            {"facility_energy_j", p.facility_energy.si()},
            {"avg_power_w", p.avg_power.si()},
            {"peak_power_w", p.peak_power.si()},
            {"gpu_avg_power_w", p.gpu_avg_power.si()},
            {"gpu_peak_power_w", p.gpu_peak_power.si()},
            {"energy_j_per_token", p.energy_per_token.si()},
            {"energy_j_per_request", p.energy_per_request.si()},
            {"mean_clock", p.mean_clock},
            {"capped_time_share", p.capped_time_share},
            {"notes", p.notes}};
}

/// Whether the report shows the routing figures (per-replica prefix hit rate, load balance):
/// with more than one replica, when the router looks at prefixes or requests share prefixes.
/// Other runs report exactly what they did before these figures existed.
/// The pools' costs, owned and rented apart; nullopt unless every pool has a price, all in one
/// currency.
struct PoolCosts {
    double owned = 0;
    double rented = 0;
    std::string currency;
};

std::optional<PoolCosts> pool_costs(const std::vector<sim::PoolResult>& pools) {
    PoolCosts c;
    for (const auto& p : pools) {
        if (!p.cost || (!c.currency.empty() && c.currency != p.cost->currency)) {
            return std::nullopt;
        }
        c.currency = p.cost->currency;
        (p.owned ? c.owned : c.rented) += p.cost->amount;
    }
    if (c.currency.empty()) {
        return std::nullopt;
    }
    return c;
}

bool shows_routing(const model::Scenario& s, std::size_t replicas) {
    if (replicas < 2) {
        return false;
    }
    const auto router = s.cluster.router;
    if (router == model::RouterPolicy::PrefixAffinity ||
        router == model::RouterPolicy::LongestPrefix || router == model::RouterPolicy::Weighted) {
        return true;
    }
    return std::any_of(
        s.workload.classes.begin(), s.workload.classes.end(),
        [](const model::RequestClass& c) { return c.shared_prefix > 0 || c.agent.has_value(); });
}

} // namespace

nlohmann::json simulate_json(const model::Scenario& s, const sim::SimResult& r) {
    nlohmann::json j;
    j["scenario"] = s.name;
    j["seed"] = r.seed;
    j["operating_point"] = operating_point_json(r.operating_point);
    j["ok"] = r.ok;
    j["reasons"] = r.reasons;
    j["stopped"] = r.stopped;
    j["duration_s"] = r.duration.si();
    const auto& o = r.overall;
    j["arrived"] = o.arrived;
    j["completed"] = o.completed;
    j["requests_completed"] = o.completed;
    j["failed"] = o.rejected + o.timed_out;
    j["rejected"] = o.rejected;
    j["rejected_by_reason"] = rejections_json(o.rejected_by_reason);
    j["notes"] = r.notes;
    j["arrival_window_s"] = r.arrival_window.si();
    j["drain_share"] = r.drain_share;
    j["served_rps"] = r.served_rps;
    j["served_goodput_rps"] = r.served_goodput_rps;
    j["served_tok_s"] = r.served_output_tok_s;
    j["timed_out"] = o.timed_out;
    j["cancelled"] = o.cancelled;
    j["throughput_rps"] = o.throughput_rps;
    j["throughput_tok_s"] = r.total_tok_s;
    j["input_tok_s"] = r.input_tok_s;
    j["output_tok_s"] = r.output_tok_s;
    j["goodput_rps"] = o.goodput_rps;
    j["slo_attainment"] = o.slo_attainment;
    j["ttft_s"] = latency_json(o.ttft);
    j["tpot_s"] = latency_json(o.tpot);
    j["itl_s"] = latency_json(o.itl);
    j["e2e_s"] = latency_json(o.e2e);
    j["queue_s"] = latency_json(o.queue);
    j["preemptions"] = r.preemptions;
    j["prefix_hit_rate"] = r.prefix_hit_rate;
    if (r.speculative) {
        const sim::SpeculativeResult& sp = *r.speculative;
        j["speculative"] = {{"method", sp.method},
                            {"num_speculative_tokens", sp.k},
                            {"expected_tokens_per_step", sp.expected_tokens_per_step},
                            {"tokens_per_step", sp.tokens_per_step},
                            {"acceptance_rate", sp.acceptance_rate},
                            {"verifies", sp.verifies},
                            {"drafted", sp.drafted},
                            {"accepted", sp.accepted},
                            {"draft_time_s", sp.draft_time.si()}};
    }
    if (r.kv_offload) {
        const sim::KvOffloadResult& k = *r.kv_offload;
        const double bb = k.block_bytes;
        j["kv_offload"] = {
            {"host_capacity_blocks", k.host_capacity_blocks},
            {"nvme_capacity_blocks", k.nvme_capacity_blocks},
            {"block_bytes", bb},
            {"hit_rate",
             {{"gpu", k.rate(k.gpu_hit_tokens)},
              {"host", k.rate(k.host_hit_tokens)},
              {"nvme", k.rate(k.nvme_hit_tokens)}}},
            {"hit_tokens",
             {{"gpu", k.gpu_hit_tokens}, {"host", k.host_hit_tokens}, {"nvme", k.nvme_hit_tokens}}},
            {"loaded_blocks", {{"host", k.host_loaded_blocks}, {"nvme", k.nvme_loaded_blocks}}},
            {"loaded_bytes",
             {{"host", static_cast<double>(k.host_loaded_blocks) * bb},
              {"nvme", static_cast<double>(k.nvme_loaded_blocks) * bb}}},
            {"load_time_s", {{"host", k.host_load_time.si()}, {"nvme", k.nvme_load_time.si()}}},
            {"loading_requests", k.loading_requests},
            {"demoted_blocks", {{"host", k.demoted_to_host}, {"nvme", k.demoted_to_nvme}}},
            {"dropped_blocks", k.dropped}};
    }
    if (r.lora) {
        const sim::LoraResult& l = *r.lora;
        j["lora"] = {{"adapters", l.adapters},
                     {"max_loras", l.max_loras},
                     {"max_cpu_loras", l.max_cpu_loras},
                     {"requests", l.requests},
                     {"hits", l.hits},
                     {"hit_rate", l.hit_rate},
                     {"expected_hit_rate", l.expected_hit_rate},
                     {"loads", l.loads},
                     {"disk_loads", l.disk_loads},
                     {"load_time_s", l.load_time.si()},
                     {"load_time_each_s", l.load_time_each.si()},
                     {"disk_time_each_s", l.disk_time_each.si()},
                     {"adapters_per_step", l.adapters_per_step}};
    }
    j["prefill_tokens_computed"] = r.prefill_tokens_computed;
    j["cached_tokens"] = o.cached_tokens;
    j["kv_use_mean"] = r.kv_use_mean;
    j["kv_use_max"] = r.kv_use_max;
    j["mean_in_system"] = r.mean_in_system;
    j["mean_running"] = r.mean_running;
    j["batch_size_mean"] = r.batch_size_mean;
    j["batch_size_histogram"] = r.batch_size_histogram;
    j["time_share"] = {{"prefill", r.prefill_time_share},
                       {"decode", r.decode_time_share},
                       {"mixed", r.mixed_time_share}};
    j["steps"] = r.steps;
    j["events"] = r.events;
    j["cloud"] = {{"requests", o.cloud},
                  {"spend", r.cloud_spend.amount},
                  {"currency", r.cloud_spend.currency}};
    const auto null_unless = [&](double v) {
        return r.power.modelled ? nlohmann::json(v) : nlohmann::json(nullptr);
    };
    j["energy_j_per_token"] = null_unless(r.power.energy_per_token.si());
    j["avg_power_w"] = null_unless(r.power.avg_power.si());
    j["peak_power_w"] = null_unless(r.power.peak_power.si());
    j["power"] = power_result_json(r.power);
    nlohmann::json slo_by_class = nlohmann::json::object();
    nlohmann::json classes = nlohmann::json::array();
    for (const auto& c : r.classes) {
        nlohmann::json cj = summary_json(c.summary);
        cj["name"] = c.name;
        cj["slo"] = {{"ttft_s", opt_json(c.ttft_slo)},
                     {"tpot_s", opt_json(c.tpot_slo)},
                     {"e2e_s", opt_json(c.e2e_slo)},
                     {"percentile", c.slo_percentile}};
        cj["slo_met"] = c.slo_met;
        slo_by_class[c.name] = c.summary.slo_attainment;
        classes.push_back(cj);
    }
    j["slo_attainment_by_class"] = slo_by_class;
    j["classes"] = classes;
    nlohmann::json reps = nlohmann::json::array();
    for (const auto& rep : r.replicas) {
        reps.push_back({{"available_s", rep.available.si()},
                        {"busy_fraction", rep.busy_fraction},
                        {"steps", rep.steps},
                        {"requests", rep.requests},
                        {"preemptions", rep.preemptions},
                        {"kv_blocks", rep.kv_blocks},
                        {"kv_use_mean", rep.kv_use_mean},
                        {"kv_use_max", rep.kv_use_max}});
    }
    j["replicas"] = reps;
    if (!r.pools.empty()) {
        nlohmann::json pools = nlohmann::json::array();
        for (const auto& p : r.pools) {
            pools.push_back(
                {{"name", p.name},
                 {"accelerator", p.accelerator},
                 {"replicas", p.replicas},
                 {"gpus", p.gpus},
                 {"requests", p.requests},
                 {"busy_fraction", p.busy_fraction},
                 {"prefix_hit_rate", p.prefix_hit_rate},
                 {"gpu_hours", p.gpu_hours},
                 {"cost", p.cost ? nlohmann::json(p.cost->amount) : nlohmann::json()},
                 {"cost_per_hour",
                  p.cost_per_hour ? nlohmann::json(p.cost_per_hour->amount) : nlohmann::json()},
                 {"currency", p.cost ? nlohmann::json(p.cost->currency) : nlohmann::json()},
                 {"owned", p.owned},
                 {"owned_gpus", p.owned_gpus}});
            if (r.autoscaler) {
                pools.back()["replica_seconds"] = p.replica_seconds;
                pools.back()["replica_hours"] = p.replica_seconds / 3600.0;
                pools.back()["peak_replicas"] = p.peak_replicas;
            }
        }
        j["pools"] = pools;
        if (const auto c = pool_costs(r.pools)) {
            j["pool_cost"] = {{"owned", c->owned},
                              {"rented", c->rented},
                              {"total", c->owned + c->rented},
                              {"currency", c->currency}};
        }
    }
    if (const auto& g = r.disaggregation) {
        const auto stats = [](const sim::LatencyStats& st) {
            return nlohmann::json{{"count", st.count},
                                  {"mean_s", st.mean.si()},
                                  {"p50_s", st.p50.si()},
                                  {"p99_s", st.p99.si()},
                                  {"max_s", st.max.si()}};
        };
        j["disaggregation"] = {{"link", g->link},
                               {"transfer", g->mode},
                               {"link_bandwidth_bytes_per_s", g->link_bandwidth},
                               {"transfers", g->transfers},
                               {"kv_bytes", g->kv_bytes},
                               {"transfer_time", stats(g->transfer_time)},
                               {"exposed_transfer", stats(g->exposed)},
                               {"prefill_queue", stats(g->prefill_queue)},
                               {"decode_queue", stats(g->decode_queue)},
                               {"link_utilisation", g->link_utilisation}};
    }
    if (const auto& as = r.autoscaler) {
        nlohmann::json tl = nlohmann::json::array();
        for (const auto& pt : as->timeline) {
            tl.push_back({{"t_s", pt.t.si()}, {"replicas", pt.replicas}});
        }
        j["autoscaler"] = {
            {"replica_seconds", as->replica_seconds},
            {"replica_hours", as->replica_seconds / 3600.0},
            {"gpus_per_replica", as->gpus_per_replica},
            {"cost", as->cost ? nlohmann::json(as->cost->amount) : nlohmann::json()},
            {"currency", as->cost ? nlohmann::json(as->cost->currency) : nlohmann::json()},
            {"scale_ups", as->scale_ups},
            {"scale_downs", as->scale_downs},
            {"peak_replicas", as->peak_replicas},
            {"scrapes", as->scrapes},
            {"timeline", tl}};
    }
    if (const auto& f = r.failures) {
        j["failures"] = {{"replicas", f->needed},
                         {"spares", f->spares},
                         {"mtbf_s", f->mtbf.si()},
                         {"mttr_s", f->mttr.si()},
                         {"failures", f->failures},
                         {"takeovers", f->takeovers},
                         {"requests_lost", f->requests_lost},
                         {"requests_retried", f->requests_retried},
                         {"availability", f->availability},
                         {"mean_up_fraction", f->mean_up_fraction},
                         {"expected_availability", s.cluster.autoscaler
                                                       ? nlohmann::json(nullptr)
                                                       : nlohmann::json(f->expected_availability)}};
        if (s.cluster.failures && s.cluster.failures->degraded_link) {
            j["failures"]["link_degradations"] = f->link_degradations;
            j["failures"]["degraded_replica_seconds"] = f->degraded_replica_seconds;
        }
        j["availability"] = f->availability;
    }
    {
        nlohmann::json windows = nlohmann::json::array();
        for (const auto& w : r.slo_windows) {
            nlohmann::json wj = {
                {"t_s", w.t.si()},
                {"finished", w.finished},
                {"slo_met", w.slo_met},
                {"attainment", w.attainment ? nlohmann::json(*w.attainment) : nlohmann::json()}};
            if (w.availability) {
                wj["availability"] = *w.availability;
            }
            windows.push_back(wj);
        }
        j["slo_window_s"] = r.slo_window.si();
        j["slo_windows"] = windows;
    }
    if (shows_routing(s, r.replicas.size())) {
        nlohmann::json per = nlohmann::json::array();
        for (const auto& rep : r.replicas) {
            per.push_back({{"requests", rep.requests},
                           {"outstanding_mean", rep.outstanding_mean},
                           {"prefix_queried_tokens", rep.prefix_queried_tokens},
                           {"prefix_hit_tokens", rep.prefix_hit_tokens},
                           {"prefix_hit_rate", rep.prefix_hit_rate}});
        }
        j["routing"] = {{"router", model::to_string(s.cluster.router)},
                        {"prefix_hit_rate", r.prefix_hit_rate},
                        {"request_imbalance", r.request_imbalance},
                        {"outstanding_imbalance", r.outstanding_imbalance},
                        {"replicas", per}};
    }
    return j;
}

namespace {

std::string ms(Seconds t) {
    const double s = t.si();
    return fixed(s * 1e3, s < 0.01 ? 2 : 1);
}

std::string pct(double f) {
    return fixed(100 * f, 1) + " %";
}

void latency_row(Table& t, const char* name, const sim::LatencyStats& s, bool in_ms) {
    if (s.count == 0) {
        t.add_row({name, "-", "-", "-", "-", "-", "-"});
        return;
    }
    const auto f = [&](Seconds v) { return in_ms ? ms(v) : fixed(v.si(), 2); };
    t.add_row({name, f(s.mean), f(s.p50), f(s.p90), f(s.p95), f(s.p99), f(s.max)});
}

// " (3 longer than max_model_len or the KV pool, ...)": each reason with a count, in words.
std::string rejection_reasons(const sim::RejectCounts& c) {
    std::string why;
    const auto add = [&](std::int64_t n, const char* what) {
        if (n > 0) {
            why += (why.empty() ? " (" : ", ") + std::to_string(n) + " " + what;
        }
    };
    add(c.too_long, "longer than max_model_len or the KV pool");
    add(c.queue_full, "gateway queue full");
    add(c.cloud_rate_limited, "over the cloud's rate limit");
    add(c.no_cloud_endpoint, "routed to a cloud endpoint the scenario does not have");
    add(c.replica_failed, "lost with a failed replica");
    return why.empty() ? why : why + ")";
}

// What the served rate is measured over.
std::string served_basis(const sim::SimResult& r) {
    if (r.operating_point.kind == model::LoadKind::OfflineBatch || r.arrival_window.si() <= 0) {
        return "over the whole run: the time to serve the batch";
    }
    std::string basis = "over the " + fixed(r.arrival_window.si(), 1) + " s arrival window";
    if (r.drain_share > 0.10) {
        basis += "; the drain after the last arrival is " + pct(r.drain_share) + " of the run";
    }
    return basis;
}

// The share of arrived requests a run must complete before it is reported as mostly failed.
constexpr double kCompletedShareWarning = 0.95;

// A run that completed under kCompletedShareWarning of what arrived is said on `err` (with
// the reasons), and under --strict exits 1; else 0.
int completion_verdict(const sim::SimResult& r, const std::string& which, bool strict,
                       std::ostream& err) {
    const auto& o = r.overall;
    if (!r.ok || o.arrived == 0 ||
        static_cast<double>(o.completed) >=
            kCompletedShareWarning * static_cast<double>(o.arrived)) {
        return 0;
    }
    err << "warning: " << which << "only " << o.completed << " of " << o.arrived
        << " arrived requests completed (" << o.rejected << " rejected"
        << rejection_reasons(o.rejected_by_reason) << ", " << o.timed_out << " timed out, "
        << o.cancelled << " cancelled)" << (strict ? "; failing (--strict)" : "") << '\n';
    return strict ? 1 : 0;
}

int sweep_verdict(const std::vector<sim::SimResult>& results, const std::string& key,
                  const std::vector<std::string>& values, bool strict, std::ostream& err) {
    int rc = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
        rc =
            std::max(rc, completion_verdict(results[i], key + "=" + values[i] + ": ", strict, err));
    }
    return rc;
}

void print_result(std::ostream& out, const model::Scenario& s, const sim::SimResult& r) {
    const auto& d = s.deployment;
    out << "simulate " << s.name << ": " << d.model.name << " on " << r.replicas.size()
        << " replica" << (r.replicas.size() == 1 ? "" : "s");
    if (r.pools.empty()) {
        out << " of " << model::replica_gpus(d.par) << " x " << d.gpu.name << " (tp " << d.par.tp
            << ", pp " << d.par.pp << ")";
    } else {
        out << " in " << r.pools.size() << " pools";
    }
    out << ", seed " << r.seed << (r.stopped ? " [stopped early]" : "") << '\n';
    const auto& o = r.overall;
    out << "load         " << load_line(r.operating_point) << '\n';
    out << "requests     " << o.arrived << " arrived, " << o.completed << " completed";
    if (o.cloud > 0) {
        out << " (" << o.cloud << " in the cloud)";
    }
    out << ", " << o.rejected << " rejected" << rejection_reasons(o.rejected_by_reason) << ", "
        << o.timed_out << " timed out";
    if (o.cancelled > 0) {
        out << ", " << o.cancelled << " cancelled";
    }
    out << " in " << fixed(r.duration.si(), 1) << " s\n";
    for (const auto& n : r.notes) {
        out << "note         " << n << '\n';
    }
    out << "served       " << fixed(r.served_rps, 2) << " req/s, "
        << fixed(r.served_output_tok_s, 0) << " output tok/s (" << served_basis(r) << ")\n"
        << "throughput   " << fixed(o.throughput_rps, 2) << " req/s, " << fixed(r.total_tok_s, 0)
        << " tok/s (input " << fixed(r.input_tok_s, 0) << ", output " << fixed(r.output_tok_s, 0)
        << ") over the whole run, drain included (vllm bench serve's definition)\n"
        << "goodput      " << fixed(r.served_goodput_rps, 2) << " req/s meeting every SLO, served ("
        << fixed(o.goodput_rps, 2) << " over the whole run; " << pct(o.slo_attainment)
        << " of requests)\n\n";
    Table t({"latency", "mean", "p50", "p90", "p95", "p99", "max"});
    latency_row(t, "TTFT ms", o.ttft, true);
    latency_row(t, "TPOT ms", o.tpot, true);
    latency_row(t, "ITL ms", o.itl, true);
    latency_row(t, "E2E s", o.e2e, false);
    latency_row(t, "queue ms", o.queue, true);
    t.print(out);
    out << '\n';
    if (!r.classes.empty()) {
        Table c({"class", "arrived", "done", "failed", "TTFT p99 ms", "TPOT p99 ms", "E2E p99 s",
                 "SLO attain", "SLO p" + fixed(s.slo.percentile, 0)});
        for (const auto& k : r.classes) {
            const auto& cs = k.summary;
            std::string slo = "-";
            if (k.ttft_slo || k.tpot_slo || k.e2e_slo) {
                slo = k.slo_met ? "met" : "missed";
            }
            c.add_row({k.name, std::to_string(cs.arrived), std::to_string(cs.completed),
                       std::to_string(cs.rejected + cs.timed_out),
                       cs.ttft.count ? ms(cs.ttft.p99) : "-", cs.tpot.count ? ms(cs.tpot.p99) : "-",
                       cs.e2e.count ? fixed(cs.e2e.p99.si(), 2) : "-", pct(cs.slo_attainment),
                       slo});
        }
        c.print(out);
        out << '\n';
    }
    out << "engine       " << r.steps << " steps, batch " << fixed(r.batch_size_mean, 1)
        << " sequences on average, " << fixed(r.mean_running, 1) << " running, "
        << fixed(r.mean_in_system, 1) << " in the system\n"
        << "time share   prefill " << pct(r.prefill_time_share) << ", decode "
        << pct(r.decode_time_share) << ", mixed " << pct(r.mixed_time_share) << '\n'
        << "KV cache     mean use " << pct(r.kv_use_mean) << ", max " << pct(r.kv_use_max) << ", "
        << r.preemptions << " preemptions, prefix hit rate " << pct(r.prefix_hit_rate) << '\n';
    if (r.speculative) {
        const sim::SpeculativeResult& sp = *r.speculative;
        out << "speculative  " << sp.method << ", k " << sp.k << ": "
            << fixed(sp.tokens_per_step, 2) << " tokens per step (expected "
            << fixed(sp.expected_tokens_per_step, 2) << "), acceptance " << pct(sp.acceptance_rate)
            << ", draft time " << fixed(sp.draft_time.si(), 2) << " s\n";
    }
    if (r.kv_offload) {
        const sim::KvOffloadResult& k = *r.kv_offload;
        const auto gb = [&](std::int64_t blocks) {
            return fixed(static_cast<double>(blocks) * k.block_bytes / 1e9, 1) + " GB";
        };
        const double load = (k.host_load_time + k.nvme_load_time).si();
        out << "KV offload   hits: GPU " << pct(k.rate(k.gpu_hit_tokens)) << ", host "
            << pct(k.rate(k.host_hit_tokens)) << ", NVMe " << pct(k.rate(k.nvme_hit_tokens))
            << " of prompt tokens; loaded " << gb(k.host_loaded_blocks) << " from host, "
            << gb(k.nvme_loaded_blocks) << " from NVMe per GPU in " << fixed(load, 2) << " s ("
            << (k.loading_requests > 0
                    ? fixed(load * 1e3 / static_cast<double>(k.loading_requests), 2)
                    : std::string("0.00"))
            << " ms per loading admission, " << k.loading_requests << ")\n"
            << "             tiers per GPU: host " << gb(k.host_capacity_blocks) << ", NVMe "
            << gb(k.nvme_capacity_blocks) << "; demoted " << k.demoted_to_host
            << " blocks to host, " << k.demoted_to_nvme << " to NVMe, dropped " << k.dropped
            << '\n';
    }
    if (r.lora) {
        const sim::LoraResult& l = *r.lora;
        out << "LoRA         " << l.adapters << " adapters, " << l.max_loras
            << " GPU slots: hit rate " << pct(l.hit_rate) << " (Che " << pct(l.expected_hit_rate)
            << "), " << l.loads << " loads (" << l.disk_loads << " from disk), "
            << fixed(l.load_time.si(), 2) << " s loading, " << fixed(l.adapters_per_step, 1)
            << " adapters per step\n";
    }
    out << "replicas     busy";
    for (const auto& rep : r.replicas) {
        out << ' ' << pct(rep.busy_fraction);
    }
    out << '\n';
    for (const auto& p : r.pools) {
        out << "pool         " << p.name << ": " << p.replicas << " x " << p.accelerator << " ("
            << p.gpus << " GPU" << (p.gpus == 1 ? "" : "s") << "), " << p.requests
            << " requests, busy " << pct(p.busy_fraction) << ", prefix hit rate "
            << pct(p.prefix_hit_rate) << ", " << fixed(p.gpu_hours, 3) << " GPU-hours";
        if (r.autoscaler) {
            out << " (peak " << p.peak_replicas << " replicas, "
                << fixed(p.replica_seconds / 3600.0, 3) << " replica-hours)";
        }
        if (p.cost && p.cost_per_hour) {
            out << ", " << model::to_string(*p.cost) << " (" << model::to_string(*p.cost_per_hour)
                << "/h" << (p.owned ? " owned" : "") << ")";
        }
        out << '\n';
    }
    if (const auto c = pool_costs(r.pools)) {
        out << "pool cost    " << model::to_string(model::Money{c->owned + c->rented, c->currency})
            << ": owned " << model::to_string(model::Money{c->owned, c->currency}) << ", rented "
            << model::to_string(model::Money{c->rented, c->currency}) << '\n';
    }
    if (const auto& g = r.disaggregation) {
        out << "KV transfer  " << g->transfers << " over "
            << (g->link.empty() ? "the link" : g->link) << " (" << g->mode << ", "
            << fixed(g->link_bandwidth / 1e9, 1) << " GB/s each), " << fixed(g->kv_bytes / 1e9, 2)
            << " GB; time mean " << ms(g->transfer_time.mean) << " ms, p99 "
            << ms(g->transfer_time.p99) << " ms; after the prefill mean " << ms(g->exposed.mean)
            << " ms, p99 " << ms(g->exposed.p99) << " ms; link utilisation "
            << pct(g->link_utilisation) << '\n'
            << "pool queues  prefill mean " << ms(g->prefill_queue.mean) << " ms, p99 "
            << ms(g->prefill_queue.p99) << " ms; decode admission mean " << ms(g->decode_queue.mean)
            << " ms, p99 " << ms(g->decode_queue.p99) << " ms\n";
    }
    if (const auto& as = r.autoscaler) {
        out << "autoscaler   " << model::to_string(s.cluster.autoscaler->metric) << " target "
            << fixed(s.cluster.autoscaler->target, 2) << ": " << as->scale_ups << " up, "
            << as->scale_downs << " down, peak " << as->peak_replicas << " replicas, "
            << fixed(as->replica_seconds / 3600.0, 3) << " replica-hours";
        if (as->cost && as->gpus_per_replica > 0) {
            out << " (" << as->gpus_per_replica << " GPU" << (as->gpus_per_replica == 1 ? "" : "s")
                << " each), " << model::to_string(*as->cost);
        } else if (as->cost) {
            out << ", " << model::to_string(*as->cost) << " over the pools";
        }
        out << '\n';
    }
    if (const auto& f = r.failures) {
        out << "failures     " << f->failures << " (MTBF " << fixed(f->mtbf.si() / 3600.0, 1)
            << " h, MTTR " << fixed(f->mttr.si() / 3600.0, 2) << " h per replica, " << f->spares
            << " spare" << (f->spares == 1 ? "" : "s") << "), " << f->takeovers << " takeovers, "
            << f->requests_lost << " requests lost, " << f->requests_retried
            << " retried; availability " << pct(f->availability);
        if (s.cluster.autoscaler) {
            out << " (no replacement cold-starting)";
        } else {
            out << " (closed form " << pct(f->expected_availability) << ")";
        }
        out << ", replicas up " << pct(f->mean_up_fraction) << '\n';
        if (s.cluster.failures && s.cluster.failures->degraded_link) {
            out << "links        " << f->link_degradations << " degraded (bandwidth x "
                << fixed(s.cluster.failures->degraded_link->bandwidth_factor, 3) << "), "
                << fixed(f->degraded_replica_seconds / 3600.0, 3)
                << " replica-hours served on a degraded link\n";
        }
    }
    if (r.autoscaler || r.failures) {
        // The worst window of the SLO attainment (and availability) over time.
        const sim::SloWindow* worst = nullptr;
        const sim::SloWindow* least_up = nullptr;
        for (const auto& w : r.slo_windows) {
            if (w.attainment && (!worst || *w.attainment < *worst->attainment)) {
                worst = &w;
            }
            if (w.availability && (!least_up || *w.availability < *least_up->availability)) {
                least_up = &w;
            }
        }
        out << "over time    " << r.slo_windows.size() << " windows of "
            << fixed(r.slo_window.si(), 0) << " s";
        if (worst) {
            out << ": SLO attainment lowest " << pct(*worst->attainment) << " (from "
                << fixed(worst->t.si(), 0) << " s)";
        }
        if (least_up) {
            out << ", availability lowest " << pct(*least_up->availability) << " (from "
                << fixed(least_up->t.si(), 0) << " s)";
        }
        out << '\n';
    }
    if (shows_routing(s, r.replicas.size())) {
        out << "routing      " << model::to_string(s.cluster.router) << ": prefix hit rate";
        for (const auto& rep : r.replicas) {
            out << ' ' << pct(rep.prefix_hit_rate);
        }
        out << "; requests " << fixed(r.request_imbalance, 2) << " x mean, outstanding "
            << fixed(r.outstanding_imbalance, 2) << " x mean on the busiest replica\n";
    }
    if (o.cloud > 0 || r.cloud_spend.amount > 0) {
        out << "cloud        " << o.cloud << " requests, spend " << model::to_string(r.cloud_spend)
            << '\n';
    }
    const auto& p = r.power;
    if (!p.modelled) {
        for (const auto& n : p.notes) {
            out << "power        " << n << '\n';
        }
        return;
    }
    out << "power        average " << watts(p.avg_power) << ", peak " << watts(p.peak_power)
        << " (1 s bins) at the wall for " << p.gpus << " GPU" << (p.gpus == 1 ? "" : "s") << " on "
        << p.nodes << " node" << (p.nodes == 1 ? "" : "s") << "; per GPU average "
        << watts(p.gpu_avg_power) << ", step peak " << watts(p.gpu_peak_power) << '\n'
        << "energy       " << fixed(p.facility_energy.si() / 3.6e6, 3) << " kWh"
        << (p.pue != 1.0 ? " (PUE " + fixed(p.pue, 2) + ")" : "") << ", "
        << fixed(p.energy_per_token.si(), 3) << " J per output token, "
        << fixed(p.energy_per_request.si(), 1) << " J per request\n";
    if (p.capped) {
        out << "power limit  " << watts(p.limit) << " per GPU (" << p.limit_source
            << "): steps ran at " << fixed(p.mean_clock, 2)
            << " of the datasheet clock on average, " << pct(p.capped_time_share)
            << " of busy time below full clock\n";
    }
    for (const auto& n : p.notes) {
        out << "note         " << n << '\n';
    }
}

std::string num(const std::optional<double>& v) {
    if (!v) {
        return "";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", *v);
    return buf;
}

std::string num(double v) {
    return num(std::optional<double>(v));
}

template <class Tag> std::string num(Quantity<Tag> v) {
    return num(v.si());
}

template <class Tag> std::string num(const std::optional<Quantity<Tag>>& v) {
    return v ? num(v->si()) : std::string();
}

// The files `--out` writes; a folder holding only these (a previous run's) may be replaced.
const std::vector<std::string> kOutFiles = {"requests.csv", "timeseries.csv", "power.csv",
                                            "trace.json", "summary.json"};

const char* const kRequestsHeader =
    "id,class,session,step,replica,outcome,arrival_s,queue_s,ttft_s,tpot_s,e2e_s,"
    "input_tokens,output_tokens,cached_tokens,preemptions,retries,slo_met\n";

// One row of requests.csv (written while the simulation runs, as requests finish).
void write_request_row(std::ostream& out, const std::vector<std::string>& class_names,
                       const sim::RequestRecord& q) {
    // No session or replica is written -1, as the file always has; a class name is any text, so
    // it is CSV-quoted (issue 33).
    out << q.id << ',' << csv_field(class_names[static_cast<std::size_t>(q.request_class)]) << ','
        << q.session.value_or(-1) << ',' << q.step << ',' << q.replica.value_or(-1) << ','
        << sim::to_string(q.outcome) << ',' << num(q.arrival) << ',' << num(q.queue) << ','
        << num(q.ttft) << ',' << num(q.tpot) << ',' << num(q.e2e) << ',' << q.input_tokens << ','
        << q.output_tokens << ',' << q.cached_tokens << ',' << q.preemptions << ',' << q.retries
        << ',' << (q.slo_met ? "1" : "0") << '\n';
}

// Everything but requests.csv and trace.json (streamed into the folder while the simulation
// runs), then the folder is renamed into place: a failure or a signal leaves the old folder or
// the new one, never half.
void write_outputs(hwdb::OutputFolder& folder, const model::Scenario& s, const sim::SimResult& r) {
    const std::filesystem::path dir = folder.final_path();
    const auto write_file = [&folder](const std::filesystem::path& path, const std::string& text) {
        throw_if_interrupted();
        folder.write(path.filename().string(), text);
    };
    std::string ts =
        "t_s,arrivals,completions,running,waiting,kv_use,input_tok_s,output_tok_s,power_w\n";
    for (const auto& b : r.series) {
        ts += num(b.t) + ',' + std::to_string(b.arrivals) + ',' + std::to_string(b.completions) +
              ',' + num(b.running) + ',' + num(b.waiting) + ',' + num(b.kv_use) + ',' +
              num(b.input_tok_s) + ',' + num(b.output_tok_s) + ',' + num(b.power) + '\n';
    }
    write_file(dir / "timeseries.csv", ts);
    if (r.power.modelled) {
        // One column per replica (each of its GPUs), node and rack, then the whole deployment.
        const auto& p = r.power;
        std::string pw = "t_s";
        for (std::size_t i = 0; i < p.gpu_power.size(); ++i) {
            pw += ",replica" + std::to_string(i) + "_gpu_w";
        }
        for (std::size_t i = 0; i < p.node_power.size(); ++i) {
            pw += ",node" + std::to_string(i) + "_w";
        }
        for (std::size_t i = 0; i < p.rack_power.size(); ++i) {
            pw += ",rack" + std::to_string(i) + "_w";
        }
        pw += ",total_w\n";
        for (std::size_t t = 0; t < p.total_power.size(); ++t) {
            pw += num(static_cast<double>(t) * r.series_bin.si());
            for (const auto* group : {&p.gpu_power, &p.node_power, &p.rack_power}) {
                for (const auto& series : *group) {
                    pw += ',' + num(series[t]);
                }
            }
            pw += ',' + num(p.total_power[t]) + '\n';
        }
        write_file(dir / "power.csv", pw);
    }
    write_file(dir / "summary.json", json_text(simulate_json(s, r)) + '\n');
    throw_if_interrupted();
    folder.commit();
}

} // namespace

int run_simulate(CliContext& ctx) {
    po::options_description desc("options");
    ScenarioFlags flags; // FILE and/or --model --gpu and the layout flags, as `estimate`
    std::string trace;
    std::string trace_format = "auto";
    std::string out_dir;
    std::string plot_dir;
    std::string sweep;
    std::optional<std::uint64_t> seed;
    std::optional<double> duration;
    std::optional<int> requests;
    std::int64_t trace_limit = 1000000;
    // clang-format off
    desc.add_options()
        ("seed", po::value<std::uint64_t>()->notifier([&](std::uint64_t v) { seed = v; }), "random seed (default: the scenario's)")
        ("duration", po::value<double>()->notifier([&](double v) { duration = v; }), "stop sending requests after S seconds")
        ("requests", po::value<int>()->notifier([&](int v) { requests = v; }), "requests (or agent sessions) to send")
        ("trace", po::value(&trace), "replay this trace CSV instead of the scenario's arrivals")
        ("trace-format", po::value(&trace_format), "auto, azure, vidur or plain (default auto)")
        ("sweep", po::value(&sweep), "run once per value, in parallel: --sweep workload.requests_per_s=2,4,8")
        ("out", po::value(&out_dir), "write requests.csv, timeseries.csv, trace.json and summary.json here")
        ("trace-limit", po::value(&trace_limit), "engine steps, and requests, written to --out's trace.json (default 1000000 each; 0: all)")
        ("plot", po::value(&plot_dir), "also draw the desktop app's charts (latency CDFs, throughput, queue, KV, power) as PNG files into DIR (needs gpuplan-plot)")
        ("json", "machine-readable output")
        ("strict", "exit 1 when fewer than 95 % of the arrived requests completed (a warning otherwise)");
    // clang-format on
    add_scenario_options(desc, flags);
    PowerFlags power_flags;
    add_power_options(desc, power_flags);
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("simulate", ctx.args, desc, pos, vm, *ctx.out,
                       "[FILE | --model M --gpu G ...] [--seed N] [--duration S] [--requests N] "
                       "[--rate R] [--trace CSV "
                       "[--trace-format F]] [--set key=value]... [--sweep key=v1,v2,...] [--out "
                       "DIR [--trace-limit N]] [--json]")) {
        return 0;
    }
    if (requests && *requests < 1) {
        throw UsageError("--requests must be at least 1");
    }
    if (duration && !(*duration > 0)) {
        throw UsageError("--duration must be > 0 seconds");
    }
    if (trace_limit < 0) {
        throw UsageError("--trace-limit must be >= 0 engine steps (0: no limit)");
    }
    if (!plot_dir.empty() && !sweep.empty()) {
        throw UsageError("--plot draws one run; leave out --sweep (or use --set for one value)");
    }
    (void)parse_set_flags(flags.sets); // a malformed --set is named before any work
    if (!sweep.empty() && flags.file.empty()) {
        throw UsageError("--sweep changes a key of a scenario FILE; give the file");
    }
    std::vector<model::TraceRecord> trace_records;
    if (!trace.empty()) {
        const auto fmt = hwdb::find_trace_format(trace_format);
        if (!fmt) {
            throw UsageError("--trace-format '" + trace_format +
                             "': use auto, azure, vidur or plain");
        }
        trace_records = hwdb::load_trace(trace, *fmt);
    }
    // One scenario per sweep value (or just one).
    std::string sweep_key;
    std::vector<std::string> sweep_values;
    if (!sweep.empty()) {
        const auto eq = sweep.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == sweep.size()) {
            throw UsageError(
                "--sweep '" + sweep +
                "': write key.path=v1,v2,..., e.g. --sweep workload.requests_per_s=2,4,8");
        }
        sweep_key = sweep.substr(0, eq);
        std::size_t start = eq + 1;
        for (std::size_t i = start; i <= sweep.size(); ++i) {
            if (i == sweep.size() || sweep[i] == ',') {
                sweep_values.push_back(sweep.substr(start, i - start));
                start = i + 1;
            }
        }
    }
    const std::size_t runs = sweep_values.empty() ? 1 : sweep_values.size();
    std::vector<model::Scenario> scenarios;
    for (std::size_t i = 0; i < runs; ++i) {
        ScenarioFlags run_flags = flags;
        if (!sweep_values.empty()) {
            run_flags.sets.push_back(sweep_key + "=" + sweep_values[i]);
        }
        model::Scenario s = build_scenario(ctx, run_flags);
        apply_power_flags(s, power_flags);
        if (!trace_records.empty()) {
            s.workload.trace = trace_records;
            s.workload.arrival.kind = model::ArrivalKind::Trace;
            s.workload.requests.reset(); // the whole trace unless --requests caps it
        }
        scenarios.push_back(std::move(s));
    }
    sim::SimOptions opts;
    opts.seed = seed;
    if (duration) {
        opts.duration = Seconds(*duration);
    }
    opts.requests = requests;
    opts.profile = choose_profile(ctx, flags, scenarios.front().deployment.gpu);
    const bool json = vm.count("json") > 0;
    const bool strict = vm.count("strict") > 0;
    // The node of each run (host power, GPUs per node); a sweep may change hardware.node.
    std::vector<sim::SimOptions> run_opts(runs, opts);
    for (std::size_t i = 0; i < runs; ++i) {
        run_opts[i].node = scenario_node(ctx, scenarios[i]);
    }
    opts = run_opts.front();

    if (runs == 1) {
        // The Chrome trace and requests.csv stream into the output folder's temporary name while
        // the simulation runs; the folder is renamed into place only when every file is complete.
        std::optional<hwdb::OutputFolder> folder;
        std::optional<std::ofstream> trace_file, requests_file;
        std::optional<ChromeTraceWriter> trace_writer;
        std::vector<std::string> class_names;
        std::filesystem::path trace_path, requests_path;
        if (!out_dir.empty()) {
            folder.emplace(out_dir, kOutFiles);
            trace_path = folder->staging() / "trace.json";
            requests_path = folder->staging() / "requests.csv";
            trace_file.emplace(trace_path, std::ios::binary);
            if (!*trace_file) {
                throw InputError(trace_path.string() +
                                 ": cannot write the file; check the folder is writable");
            }
            trace_writer.emplace(*trace_file, static_cast<std::uint64_t>(trace_limit));
            opts.on_step = [&](const sim::StepRecord& st) { trace_writer->step(st); };
            // The features' figures (speculative steps, KV transfers; prefix hit rates where
            // the report shows the routing figures).
            opts.features = trace_writer->hooks();
            const model::Scenario& sc = scenarios.front();
            if (!shows_routing(sc, static_cast<std::size_t>(
                                       sc.cluster.replicas.value_or(sc.deployment.par.dp)))) {
                opts.features.prefix = nullptr;
            }
            requests_file.emplace(requests_path, std::ios::binary);
            if (!*requests_file) {
                throw InputError(requests_path.string() +
                                 ": cannot write the file; check the folder is writable");
            }
            *requests_file << kRequestsHeader;
            for (const auto& c : sim::effective_classes(scenarios.front().workload)) {
                class_names.push_back(c.name);
            }
            opts.on_request = [&](const sim::RequestRecord& q) {
                write_request_row(*requests_file, class_names, q);
                trace_writer->request(q);
            };
        }
        ProgressBar bar("simulating", true);
        const sim::SimResult r =
            sim::simulate(scenarios.front(), opts, interrupt_token(), [&](double f) { bar(f); });
        throw_if_interrupted(); // a stopped run is incomplete: report and write nothing
        if (trace_writer) {
            trace_writer->finish();
            trace_file->close();
            requests_file->close();
            const std::filesystem::path shown = std::filesystem::path(out_dir);
            if (!*trace_file) {
                throw InputError((shown / "trace.json").string() +
                                 ": cannot write the file; check the disk has room");
            }
            if (!*requests_file) {
                throw InputError((shown / "requests.csv").string() +
                                 ": cannot write the file; check the disk has room");
            }
            if (trace_writer->cut()) {
                *ctx.err << "note: " << (shown / "trace.json").string() << " holds the first "
                         << trace_writer->written() << " of " << trace_writer->steps()
                         << " engine steps and the first " << trace_writer->requests_written()
                         << " of " << trace_writer->requests()
                         << " requests (--trace-limit); give --trace-limit 0 to write them all\n";
            }
        }
        if (!r.ok) {
            std::string why;
            for (const auto& reason : r.reasons) {
                why += (why.empty() ? "" : "; ") + reason;
            }
            throw InputError((flags.file.empty() ? scenarios.front().name : flags.file) +
                             ": the deployment does not fit, nothing was simulated: " + why);
        }
        if (!out_dir.empty()) {
            write_outputs(*folder, scenarios.front(), r);
        }
        if (json) {
            *ctx.out << json_text(simulate_json(scenarios.front(), r)) << '\n';
        } else {
            print_result(*ctx.out, scenarios.front(), r);
            if (!out_dir.empty()) {
                *ctx.out << "wrote " << out_dir
                         << "/{requests.csv,timeseries.csv,trace.json,summary.json"
                         << (r.power.modelled ? ",power.csv" : "") << "}\n";
            }
        }
        if (!plot_dir.empty()) {
            // gpuplan-plot re-runs this simulation (deterministic: same scenario and seed).
            model::Scenario shown = scenarios.front();
            if (seed) {
                shown.seed = *seed;
            }
            if (duration) {
                shown.workload.duration = Seconds(*duration);
            }
            ctx.out->flush();
            write_plots(shown, plot_dir, true, requests, *ctx.err);
        }
        return completion_verdict(r, "", strict, *ctx.err);
    }
    // A sweep: the runs are independent values, so they go to the thread pool side by side.
    std::vector<sim::SimResult> results(runs);
    try {
        plan::parallel_for(runs, plan::worker_threads(), [&](std::size_t i) {
            results[i] = sim::simulate(scenarios[i], run_opts[i], interrupt_token());
        });
    } catch (...) {
        throw_if_interrupted(); // an interrupt is reported as such, before a run's error
        throw;
    }
    throw_if_interrupted();
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (std::size_t i = 0; i < runs; ++i) {
            nlohmann::json j = simulate_json(scenarios[i], results[i]);
            j["sweep_key"] = sweep_key;
            j["sweep_value"] = sweep_values[i];
            arr.push_back(j);
        }
        *ctx.out << json_text(arr) << '\n';
        return sweep_verdict(results, sweep_key, sweep_values, strict, *ctx.err);
    }
    Table t({sweep_key, "done", "failed", "req/s", "tok/s", "goodput", "TTFT p50 ms", "TTFT p99 ms",
             "TPOT p50 ms", "TPOT p99 ms", "E2E p99 s", "preempt", "avg W", "J/tok"});
    for (std::size_t i = 0; i < runs; ++i) {
        const auto& r = results[i];
        const auto& o = r.overall;
        if (!r.ok) {
            t.add_row({sweep_values[i], "does not fit"});
            continue;
        }
        t.add_row({sweep_values[i], std::to_string(o.completed),
                   std::to_string(o.rejected + o.timed_out), fixed(o.throughput_rps, 2),
                   fixed(r.total_tok_s, 0), fixed(o.goodput_rps, 2), ms(o.ttft.p50), ms(o.ttft.p99),
                   ms(o.tpot.p50), ms(o.tpot.p99), fixed(o.e2e.p99.si(), 2),
                   std::to_string(r.preemptions),
                   r.power.modelled ? fixed(r.power.avg_power.si(), 0) : "-",
                   r.power.modelled ? fixed(r.power.energy_per_token.si(), 3) : "-"});
    }
    t.print(*ctx.out);
    return sweep_verdict(results, sweep_key, sweep_values, strict, *ctx.err);
}

} // namespace gpuplan::cli
