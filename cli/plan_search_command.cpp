// `gpuplan plan FILE`: the sizing search (plan/sizing_search.hpp). Flags become overrides of the
// scenario's `plan:` block, so they are checked exactly like the file's keys; the report ranks
// the cheapest configurations that meet the SLOs, or says that nothing does and which came
// closest (docs/plan.md).
#include "cli/availability_report.hpp"
#include "cli/band_notes.hpp"
#include "cli/cli_context.hpp"
#include "cli/command_reports.hpp"
#include "cli/emit.hpp"
#include "cli/fleet_report.hpp"
#include "cli/interrupt.hpp"
#include "cli/json_out.hpp"
#include "cli/mpi_job.hpp"
#include "cli/options.hpp"
#include "cli/power_report.hpp"
#include "cli/progress_bar.hpp"
#include "cli/scenario_options.hpp"
#include "cli/table.hpp"
#include "hwdb/database.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/kv_offload.hpp"
#include "model/serving.hpp"
#include "plan/disaggregation.hpp"
#include "plan/routing.hpp"
#include "plan/serving_choices.hpp"
#include "plan/sizing_search.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <ostream>
#include <thread>
#include <tuple>
#include <unistd.h>

namespace gpuplan::cli {
namespace {

struct PlanFlags {
    std::vector<std::string> sets, candidates;
    std::string budget, power_budget, pricing, tp, pp, weights, kv, seqs;
    std::string model, gpu, node; // the scenario's model and hardware, as `estimate` takes them
    std::optional<int> input_len, output_len, concurrency, max_model_len;
    std::optional<double> rate;
    std::optional<int> max_gpus, max_racks, top, requests, max_simulations, threads;
};

// "a,b,c" as a YAML flow list of plain scalars.
std::string flow_list(const std::string& csv) {
    return "[" + csv + "]";
}

std::vector<hwdb::ScenarioOverride> overrides_of(const PlanFlags& f) {
    std::vector<hwdb::ScenarioOverride> out;
    out = parse_set_flags(f.sets);
    // The scenario flags `estimate` takes, as overrides of the same keys.
    if (!f.model.empty())
        out.insert(out.begin(), {"model", f.model, "--model " + f.model});
    if (!f.gpu.empty())
        out.insert(out.begin(), {"hardware.accelerator", f.gpu, "--gpu " + f.gpu});
    if (!f.node.empty())
        out.insert(out.begin(), {"hardware.node", f.node, "--node " + f.node});
    for (const auto& [v, key, flag] :
         {std::tuple{f.input_len, "workload.input_tokens", "--input-len"},
          {f.output_len, "workload.output_tokens", "--output-len"},
          {f.concurrency, "workload.concurrency", "--concurrency"},
          {f.max_model_len, "engine.max_model_len", "--max-model-len"}}) {
        if (v) {
            out.insert(out.begin(),
                       {key, std::to_string(*v), std::string(flag) + " " + std::to_string(*v)});
        }
    }
    if (f.rate) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", *f.rate);
        out.insert(out.begin(), {"workload.requests_per_s", buf, std::string("--rate ") + buf});
    }
    if (!f.candidates.empty()) {
        // GPU[@NODE], each a plan.candidates entry.
        std::string list = "[";
        for (const auto& c : f.candidates) {
            const auto at = c.find('@');
            if (c.empty() || at == 0 || c.find_first_of("{}[],:\"'") != std::string::npos) {
                throw UsageError("--candidate '" + c +
                                 "': write an accelerator name, optionally @node, "
                                 "e.g. --candidate h100-sxm@dgx-h100");
            }
            list += std::string(list.size() > 1 ? ", " : "") + "{accelerator: " + c.substr(0, at) +
                    (at == std::string::npos ? "" : ", node: " + c.substr(at + 1)) + "}";
        }
        out.push_back({"plan.candidates", list + "]", "--candidate"});
    }
    const auto quoted = [](const std::string& v) { return "'" + v + "'"; };
    if (!f.budget.empty())
        out.push_back({"plan.budget", quoted(f.budget), "--budget " + f.budget});
    if (!f.power_budget.empty())
        out.push_back(
            {"plan.power_budget", quoted(f.power_budget), "--power-budget " + f.power_budget});
    if (!f.pricing.empty())
        out.push_back({"plan.pricing", f.pricing, "--pricing " + f.pricing});
    if (!f.tp.empty())
        out.push_back({"plan.tp", flow_list(f.tp), "--tp " + f.tp});
    if (!f.pp.empty())
        out.push_back({"plan.pp", flow_list(f.pp), "--pp " + f.pp});
    if (!f.weights.empty())
        out.push_back({"plan.weights", flow_list(f.weights), "--weights " + f.weights});
    if (!f.kv.empty())
        out.push_back({"plan.kv_cache", flow_list(f.kv), "--kv " + f.kv});
    if (!f.seqs.empty())
        out.push_back({"plan.max_num_seqs", flow_list(f.seqs), "--max-num-seqs " + f.seqs});
    const auto number = [&](const char* key, const char* flag, const std::optional<int>& v) {
        if (v) {
            out.push_back({key, std::to_string(*v), std::string(flag) + " " + std::to_string(*v)});
        }
    };
    number("plan.max_gpus", "--max-gpus", f.max_gpus);
    number("plan.max_racks", "--max-racks", f.max_racks);
    number("plan.top", "--top", f.top);
    number("plan.requests", "--requests", f.requests);
    number("plan.max_simulations", "--max-simulations", f.max_simulations);
    return out;
}

nlohmann::json opt(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json row_json(const plan::SizingRow& r) {
    const auto& k = r.config;
    nlohmann::json slo = nlohmann::json::array();
    for (const auto& m : r.margins) {
        slo.push_back({{"class", m.request_class},
                       {"metric", m.metric},
                       {"value_s", m.value_s},
                       {"target_s", m.target_s},
                       {"margin", m.margin()}});
    }
    nlohmann::json j = {
        {"gpu", k.gpu},
        {"node", k.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(k.node)},
        {"gpus", k.gpus},
        {"tp", k.par.tp},
        {"pp", k.par.pp},
        {"replicas", k.par.dp},
        {"weights", k.weights.name},
        {"kv_cache", k.kv_cache.name},
        {"max_num_seqs", k.max_num_seqs},
        {"stage", plan::to_string(r.stage)},
        {"reason", r.reason},
        {"meets_slo", r.meets_slo},
        {"currency", r.currency},
        {"monthly", opt(r.monthly)},
        {"own_monthly", opt(r.own_monthly)},
        {"rent_monthly", opt(r.rent_monthly)},
        {"per_million_tokens", opt(r.per_million_tokens)},
        {"tokens_per_month", r.tokens_per_month},
        {"capacity_rps", r.capacity_rps},
        {"offered_rps", r.offered_rps},
        {"slo_capacity_rps", r.slo_capacity_bound.empty() ? nlohmann::json(nullptr)
                                                          : nlohmann::json(r.slo_capacity_rps)},
        {"slo_capacity_ratio", r.slo_capacity_bound.empty() ? nlohmann::json(nullptr)
                                                            : nlohmann::json(r.slo_capacity_ratio)},
        {"slo_capacity_bound", r.slo_capacity_bound.empty() ? nlohmann::json(nullptr)
                                                            : nlohmann::json(r.slo_capacity_bound)},
        {"gpu_limit_w", r.gpu_limit_w},
        {"avg_power_w", r.avg_power_w},
        {"peak_power_w", r.peak_power_w},
        {"nodes", r.nodes},
        {"racks", r.racks},
        {"rack_binding", r.rack_binding},
        {"slo", slo},
        {"binding_slo", r.binding_slo},
        {"binding_resource", r.binding_resource},
        {"miss_ratio",
         std::isfinite(r.miss_ratio) ? nlohmann::json(r.miss_ratio) : nlohmann::json(nullptr)},
        {"simulated", r.stage == plan::SizingStage::Simulated
                          ? nlohmann::json{{"output_tok_s", r.sim_throughput_tok_s},
                                           {"avg_power_w", r.sim_avg_power_w},
                                           {"peak_power_w", r.sim_peak_power_w},
                                           {"energy_j_per_token", r.sim_energy_j_per_token},
                                           {"failed", r.failed}}
                          : nlohmann::json(nullptr)},
        {"notes", r.notes}};
    if (k.speculative) {
        j["speculative"] = true; // only when on, so plans without the block read as before
    }
    return j;
}

std::string layout(const plan::SizingConfig& k) {
    std::string s = k.gpu + (k.node.empty() ? "" : "@" + k.node) + " tp" + std::to_string(k.par.tp);
    if (k.par.pp > 1) {
        s += " pp" + std::to_string(k.par.pp);
    }
    if (k.speculative) {
        s += " spec";
    }
    return s + " x" + std::to_string(k.par.dp);
}

/// The SLO figure closest to (or furthest past) its target, or null.
const plan::SloMargin* tightest_margin(const plan::SizingRow& r) {
    const plan::SloMargin* t = nullptr;
    for (const auto& m : r.margins) {
        if (!t || m.value_s / m.target_s > t->value_s / t->target_s) {
            t = &m;
        }
    }
    return t;
}

std::string tightest(const plan::SizingRow& r) {
    const plan::SloMargin* t = tightest_margin(r);
    if (!t) {
        return "-";
    }
    const auto ms = [](double s) { return fixed(s * 1e3, s < 0.1 ? 1 : 0); };
    return t->request_class + " " + t->metric + " " + ms(t->value_s) + "/" + ms(t->target_s) +
           " ms";
}

std::string slo_margin(const plan::SizingRow& r) {
    if (r.margins.empty()) {
        return "-";
    }
    double m = r.margins.front().margin();
    for (const auto& x : r.margins) {
        m = std::min(m, x.margin());
    }
    return fixed(100 * m, 0) + " %";
}

/// The measured band of the tightest SLO figure of `r` (a simulated serving latency), for the
/// row's GPU, weights and the scenario's engine and model.
std::string tightest_band(BandNotes& notes, const model::Scenario& s, const plan::SizingRow& r,
                          const hwdb::Database& db) {
    const plan::SloMargin* t = tightest_margin(r);
    const auto figure = t ? model::value_of<model::BandFigure>(t->metric) : std::nullopt;
    if (!figure) {
        return "-";
    }
    model::BandQuery q = model::band_query(s.deployment);
    if (r.config.gpu != q.gpu) {
        // The row's own GPU and family, so that no row borrows the scenario GPU's family.
        const model::AcceleratorSpec* a = db.find_accelerator(r.config.gpu);
        q.family = a ? a->architecture : std::string();
    }
    q.gpu = r.config.gpu;
    q.precision = model::precision_class(r.config.weights.bits_per_element);
    notes.set_query(std::move(q));
    return notes.cell(*figure, model::BandRegime::Serving);
}

void print_rows(std::ostream& out, const std::vector<plan::SizingRow>& rows,
                const std::string& currency, double percentile, const model::Scenario& s,
                const model::ErrorBands& bands, const hwdb::Database& db) {
    Table t({"#", "configuration", "GPUs", "precision", "seqs", currency + "/month",
             currency + "/Mtok", "avg kW", "peak kW", "racks",
             "tightest SLO (p" + fixed(percentile, 0) + ")", "band", "margin", "binding"});
    BandNotes notes(bands, model::band_query(s.deployment));
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        const auto& k = r.config;
        t.add_row({std::to_string(i + 1), layout(k), std::to_string(k.gpus),
                   k.weights.name + "/" + k.kv_cache.name, std::to_string(k.max_num_seqs),
                   r.monthly ? fixed(*r.monthly, 0) : "-",
                   r.per_million_tokens ? fixed(*r.per_million_tokens, 3) : "-",
                   fixed(r.avg_power_w / 1e3, 2), fixed(r.peak_power_w / 1e3, 2),
                   std::to_string(r.racks), tightest(r), tightest_band(notes, s, r, db),
                   slo_margin(r), r.binding_resource.empty() ? "-" : r.binding_resource});
    }
    t.print(out);
    notes.print(out);
}

// The confirming simulations of each batch spread over the ranks of `job`: every rank takes the
// next simulation as it finishes one, then every rank installs every outcome, so each rank's
// search goes on identically. A signal on any rank stops every rank at the same batch.
plan::BatchRunner mpi_batch_runner(MpiJob& job) {
    return [&job](std::size_t count, const std::function<std::string(std::size_t)>& run,
                  const std::function<void(std::size_t, const std::string&)>& apply) {
        job.share_tasks(count);
        std::string mine; // "JOB BYTES\n" then the outcome's bytes, per job this rank ran
        try {
            while (const auto j = job.next_task()) {
                const std::string outcome = run(*j);
                mine += std::to_string(*j) + ' ' + std::to_string(outcome.size()) + '\n' + outcome;
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "error: rank %d: %s\n", job.rank(), e.what());
            job.abort(1);
        }
        const int signal = interrupt_signal();
        for (const std::string& part : job.all_gather(std::to_string(signal) + '\n' + mine)) {
            std::size_t at = part.find('\n') + 1;
            const int theirs = std::atoi(part.c_str());
            if (theirs != 0 && interrupt_signal() == 0) {
                std::raise(theirs); // stop here too, at the same batch
            }
            while (at < part.size()) {
                const auto nl = part.find('\n', at);
                std::size_t j = 0, bytes = 0;
                std::sscanf(part.c_str() + at, "%zu %zu", &j, &bytes);
                apply(j, part.substr(nl + 1, bytes));
                at = nl + 1 + bytes;
            }
        }
    };
}

// The sizing search on `s` as the plan command runs it, with a progress line on a terminal
// when `progress`, its simulations spread over `job`'s ranks when there is one. Throws the
// interrupt's error when a signal stopped it (a stopped search ranks only part of the
// candidates: report nothing).
plan::SizingResult search(CliContext& ctx, const model::Scenario& s, int threads, bool progress,
                          MpiJob* job = nullptr) {
    std::optional<model::ServerSpec> node;
    if (!s.node_ref.empty()) {
        node = ctx.db().server(s.node_ref);
    }
    plan::SizingOptions o = plan::sizing_options(
        s, node,
        [&](const model::AcceleratorSpec& gpu) {
            return choose_profile(ctx, ScenarioFlags{}, gpu);
        },
        threads);
    if (job != nullptr) {
        o.run_batch = mpi_batch_runner(*job);
    }
    // An in-process caller's hook (the Python module) hears the progress even without a tty.
    const ProgressHook hook = progress_hook();
    const bool tty = progress && !hook && isatty(fileno(stderr)) != 0;
    const plan::SizingResult r =
        plan::size_deployment(s, node, o, interrupt_token(), [&](double p) {
            if (hook) {
                hook("simulating", p, {});
            } else if (tty) {
                std::fprintf(stderr, "\rsimulating %3d %%", static_cast<int>(p * 100));
                std::fflush(stderr);
            }
        });
    if (tty) {
        std::fprintf(stderr, "\r%20s\r", "");
    }
    throw_if_interrupted();
    return r;
}

nlohmann::json router_json(const plan::RouterComparison& c) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& o : c.options) {
        nlohmann::json j = {{"router", o.router},
                            {"analytic_hit_rate", o.analytic_hit_rate},
                            {"simulated", o.simulated},
                            {"meets_slo", o.meets_slo},
                            {"slo_attainment", o.slo_attainment},
                            {"prefix_hit_rate", o.hit_rate},
                            {"ttft_mean_s", o.ttft_mean_s},
                            {"ttft_at_percentile_s", o.ttft_at_p_s},
                            {"tpot_at_percentile_s", o.tpot_at_p_s},
                            {"request_imbalance", o.request_imbalance},
                            {"replicas", o.replicas},
                            {"fewest_replicas", o.fewest_replicas}};
        if (o.router == "weighted") {
            j["weight"] = o.weight;
        }
        options.push_back(std::move(j));
    }
    return {{"choice", c.choice},
            {"replicas", c.replicas},
            {"chosen", c.chosen},
            {"verdict", c.verdict},
            {"closed_form", c.closed_form},
            {"prefix_tokens", c.prefix_tokens},
            {"cache_tokens_per_replica", c.cache_tokens},
            {"options", options}};
}

void print_routers(std::ostream& out, const plan::RouterComparison& c, double percentile) {
    if (!c.choice) {
        out << "router       " << c.verdict << '\n';
        return;
    }
    const std::string p = "p" + fixed(percentile, 0);
    out << "\nrouter of the answer's " << c.replicas
        << " replicas (simulated, best first; docs/plan.md):\n";
    Table t({"router", "hit rate (analytic)", "hit rate", "TTFT mean ms", "TTFT " + p + " ms",
             "TPOT " + p + " ms", "attain", "SLO", "fewest replicas"});
    for (const auto& o : c.options) {
        t.add_row({o.router, c.closed_form ? fixed(100 * o.analytic_hit_rate, 1) + " %" : "-",
                   fixed(100 * o.hit_rate, 1) + " %", fixed(o.ttft_mean_s * 1e3, 1),
                   fixed(o.ttft_at_p_s * 1e3, 1), fixed(o.tpot_at_p_s * 1e3, 1),
                   fixed(100 * o.slo_attainment, 1) + " %", o.meets_slo ? "met" : "missed",
                   o.fewest_replicas > 0 ? std::to_string(o.fewest_replicas) : "-"});
    }
    t.print(out);
    out << "router answer " << c.verdict << '\n';
}

/// A serving feature compared on the answer (plan/serving_choices.hpp).
nlohmann::json serving_choice_json(const plan::ServingChoice& c) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& o : c.options) {
        nlohmann::json j = {{"name", o.name},
                            {"scenario", o.scenario},
                            {"simulated", o.simulated},
                            {"meets_slo", o.meets_slo},
                            {"slo_attainment", o.slo_attainment},
                            {"ttft_mean_s", o.ttft_mean_s},
                            {"ttft_at_percentile_s", o.ttft_at_p_s},
                            {"tpot_at_percentile_s", o.tpot_at_p_s},
                            {"kv_tokens", o.kv_tokens}};
        if (c.dimension == "kv_offload") {
            j["host_bytes"] = o.value;
            j["prefix_hit_rate"] = o.prefix_hit_rate;
            j["gpu_hit_rate"] = o.gpu_hit_rate;
            j["host_hit_rate"] = o.host_hit_rate;
            j["nvme_hit_rate"] = o.nvme_hit_rate;
        } else if (c.dimension == "num_speculative_tokens") {
            j["num_speculative_tokens"] = o.value;
        } else {
            j["max_loras"] = o.value;
            j["lora_hit_rate"] = o.lora_hit_rate;
            j["lora_loads"] = o.lora_loads;
            j["kv_tokens_lost"] = o.kv_tokens_lost;
        }
        options.push_back(std::move(j));
    }
    return {
        {"choice", c.choice}, {"chosen", c.chosen}, {"verdict", c.verdict}, {"options", options}};
}

void print_serving_choice(std::ostream& out, const plan::ServingChoice& c, double percentile) {
    const bool offload = c.dimension == "kv_offload";
    const bool spec = c.dimension == "num_speculative_tokens";
    const std::string label =
        offload ? "KV offload   " : (spec ? "speculative  " : "LoRA slots   ");
    if (!c.choice) {
        out << label << c.verdict << '\n';
        return;
    }
    const std::string p = "p" + fixed(percentile, 0);
    out << '\n'
        << (offload ? "KV offload tiers"
                    : (spec ? "speculative decoding's k (engine.speculative.num_speculative_tokens)"
                            : "LoRA slots (engine.lora.max_loras)"))
        << " on the answer (simulated, best first, * the scenario's; docs/plan.md):\n";
    std::vector<std::string> head{offload ? "tiers" : (spec ? "k" : "max_loras")};
    if (spec) {
        head.emplace_back("KV tokens");
    } else if (offload) {
        head.insert(head.end(), {"host GiB", "hit rate", "GPU", "host", "NVMe"});
    } else {
        head.insert(head.end(), {"adapter hits", "loads", "KV tokens"});
    }
    head.insert(head.end(),
                {"TTFT mean ms", "TTFT " + p + " ms", "TPOT " + p + " ms", "attain", "SLO"});
    Table t(head);
    for (const auto& o : c.options) {
        std::vector<std::string> row{o.name + (o.scenario ? " *" : "")};
        if (spec) {
            row.push_back(std::to_string(o.kv_tokens));
        } else if (offload) {
            row.insert(row.end(), {fixed(o.value / (1024.0 * 1024 * 1024), 1),
                                   fixed(100 * o.prefix_hit_rate, 1) + " %",
                                   fixed(100 * o.gpu_hit_rate, 1) + " %",
                                   fixed(100 * o.host_hit_rate, 1) + " %",
                                   fixed(100 * o.nvme_hit_rate, 1) + " %"});
        } else {
            row.insert(row.end(), {fixed(100 * o.lora_hit_rate, 1) + " %",
                                   std::to_string(o.lora_loads), std::to_string(o.kv_tokens)});
        }
        row.insert(row.end(),
                   {fixed(o.ttft_mean_s * 1e3, 1), fixed(o.ttft_at_p_s * 1e3, 1),
                    fixed(o.tpot_at_p_s * 1e3, 1), fixed(100 * o.slo_attainment, 1) + " %",
                    !o.simulated ? "-" : (o.meets_slo ? "met" : "missed")});
        t.add_row(row);
    }
    t.print(out);
    out << (offload ? "offload answer " : (spec ? "k answer " : "slots answer ")) << c.verdict
        << '\n';
}

} // namespace

nlohmann::json plan_report(CliContext& ctx, const model::Scenario& s, int threads, bool progress,
                           MpiJob* job) {
    return plan_json(s, search(ctx, s, threads, progress, job));
}

nlohmann::json plan_json(const model::Scenario& s, const plan::SizingResult& r) {
    nlohmann::json j;
    j["scenario"] = s.name;
    j["found"] = r.found;
    j["verdict"] = r.verdict;
    j["currency"] = r.currency;
    j["pricing"] = model::to_string(r.pricing);
    j["shapes"] = r.shapes;
    j["configurations"] = r.configurations;
    j["simulated"] = r.simulated;
    j["exhausted"] = r.exhausted;
    j["stages"] = r.stages;
    nlohmann::json ranked = nlohmann::json::array();
    for (const auto& row : r.ranked) {
        ranked.push_back(row_json(row));
    }
    j["ranked"] = ranked;
    j["closest_miss"] = r.closest_miss ? row_json(*r.closest_miss) : nlohmann::json(nullptr);
    j["notes"] = r.notes;
    if (s.availability) {
        // The spares for the best configuration's replicas (null when nothing was found).
        j["availability"] = nullptr;
        if (r.found && !r.ranked.empty()) {
            const auto& par = r.ranked.front().config.par;
            j["availability"] =
                availability_json(*scenario_availability(s, par.dp, par.tp * par.pp));
        }
    }
    return j;
}

namespace {

// The options of `gpuplan plan`, bound to `file`, `emit` and `f`.
void add_plan_options(po::options_description& desc, std::string& file, std::string& emit,
                      PlanFlags& f) {
    // clang-format off
    desc.add_options()
        ("file", po::value(&file), "scenario YAML with a workload, SLOs and optionally a plan: block (or --model and --gpu)")
        ("model", po::value(&f.model), "catalog model or Hugging Face id (overrides the file's)")
        ("gpu", po::value(&f.gpu), "hwdb accelerator (overrides the file's)")
        ("node", po::value(&f.node), "hwdb server (overrides the file's)")
        ("input-len", po::value<int>()->notifier([&](int v) { f.input_len = v; }), "prompt tokens per request")
        ("output-len", po::value<int>()->notifier([&](int v) { f.output_len = v; }), "output tokens per request")
        ("concurrency", po::value<int>()->notifier([&](int v) { f.concurrency = v; }), "sequences in flight (a closed loop)")
        ("rate", po::value<double>()->notifier([&](double v) { f.rate = v; }), "offered requests/s (an open loop)")
        ("max-model-len", po::value<std::string>()->notifier([&](const std::string& v) { f.max_model_len = parse_token_count(v, "max-model-len"); }), "longest sequence, tokens: 8192, 8k or 8K")
        ("candidate", po::value(&f.candidates)->composing(), "hardware to try: GPU or GPU@NODE (repeatable; replaces plan.candidates)")
        ("max-gpus", po::value<int>()->notifier([&](int v) { f.max_gpus = v; }), "most GPUs in one configuration (default 64)")
        ("tp", po::value(&f.tp), "tensor-parallel sizes, e.g. 1,2,4 (default 1,2,4,8 within a node)")
        ("pp", po::value(&f.pp), "pipeline sizes, e.g. 1,2 (default 1)")
        ("weights", po::value(&f.weights), "weight precisions to try, e.g. bf16,fp8")
        ("kv", po::value(&f.kv), "KV-cache precisions to try, e.g. bf16,fp8")
        ("max-num-seqs", po::value(&f.seqs), "engine max_num_seqs values to try, e.g. 64,256")
        ("budget", po::value(&f.budget), "monthly budget, e.g. '$40000/month'")
        ("power-budget", po::value(&f.power_budget), "ceiling on the deployment's peak power at the wall, e.g. '20 kW'")
        ("max-racks", po::value<int>()->notifier([&](int v) { f.max_racks = v; }), "ceiling on racks")
        ("pricing", po::value(&f.pricing), "rank by own (default) or rent")
        ("top", po::value<int>()->notifier([&](int v) { f.top = v; }), "configurations to rank (default 5)")
        ("requests", po::value<int>()->notifier([&](int v) { f.requests = v; }), "requests per simulation (default 1000)")
        ("max-simulations", po::value<int>()->notifier([&](int v) { f.max_simulations = v; }), "simulation budget (default 64)")
        ("threads", po::value<int>()->notifier([&](int v) { f.threads = v; }), "worker threads (default: all cores)")
        ("set", po::value(&f.sets)->composing(), "override a scenario key: --set slo.ttft='300 ms' (repeatable)")
        ("emit", po::value(&emit), "print the chosen configuration's launch and benchmark commands: vllm, sglang, tensorrt-llm or llama.cpp")
        ("json", "machine-readable output")
        ("fleet", "the owned-against-rented plan over the scenario's fleet: horizon (docs/fleet.md) instead of the sizing search")
        ("mpi", "spread the confirming simulations over the ranks of an MPI job (mpirun -np N gpuplan plan ... --mpi); rank 0 prints");
    // clang-format on
}

// The scenario the command plans: the FILE with the flags as overrides, or without a file the
// scenario the flags make (the same keys a file would hold).
model::Scenario plan_scenario(CliContext& ctx, const std::string& file, const PlanFlags& f,
                              const PowerFlags& power_flags) {
    if (file.empty() && (f.model.empty() || f.gpu.empty())) {
        throw UsageError("give a scenario FILE, or at least --model and --gpu (e.g. plan --model "
                         "llama-3.1-8b --gpu h100-sxm --rate 4 --set slo.tpot='50 ms')");
    }
    // Without a file the flags make the scenario (the same keys a file would hold).
    model::Scenario s =
        file.empty() ? hwdb::parse_scenario("schema: 1\n", "(flags)", ctx.db(), overrides_of(f))
                     : hwdb::load_scenario(file, ctx.db(), overrides_of(f));
    apply_power_flags(s, power_flags);
    return s;
}

/// The search's answer (its first ranked configuration) and what the comparisons on it need.
struct PlanAnswer {
    CliContext& ctx;
    const model::Scenario& s;         ///< the scenario as given
    const model::Scenario& colocated; ///< without cluster.disaggregation: what was searched
    const std::optional<model::ServerSpec>& node;
    const plan::SizingResult& r;
    int threads; ///< worker threads (0: all cores)
};

/// What the report adds beside the ranking, each only where it applies.
struct AnswerExtras {
    std::optional<plan::DisaggComparison> pd;
    std::optional<plan::RouterComparison> routers;
    std::optional<plan::ServingChoice> offload_choice;
    std::optional<plan::ServingChoice> lora_choice;
    std::optional<plan::ServingChoice> spec_choice;
    std::optional<model::SpeculativeFigures> answer_spec;
    std::optional<LaunchCommands> launch;
    std::string launch_config;
    std::optional<model::KvOffloadFigures> tiers;
};

// The simulations of a comparison on the answer `chosen`: its GPU's profile, and the plan's
// request count, at most the workload's.
sim::SimOptions answer_sim_options(const PlanAnswer& a, const model::PlanConfig& pc,
                                   const model::Scenario& chosen) {
    sim::SimOptions o;
    o.profile = choose_profile(a.ctx, ScenarioFlags{}, chosen.deployment.gpu);
    o.requests =
        a.s.workload.requests ? std::min(*a.s.workload.requests, pc.requests) : pc.requests;
    return o;
}

// Prefill/decode layouts of the pools' GPUs against co-location (cluster.disaggregation).
void compare_answer_disaggregation(const PlanAnswer& a, AnswerExtras& x) {
    if (a.s.cluster.disaggregation) {
        x.pd = plan::compare_disaggregation(
            a.s,
            [&](const model::AcceleratorSpec& gpu) {
                return choose_profile(a.ctx, ScenarioFlags{}, gpu);
            },
            a.threads, 8, interrupt_token());
        throw_if_interrupted();
    }
}

// The router of the answer's replicas: a choice with several replicas and shared prefixes
// (plan/routing.hpp; docs/plan.md, "The router").
void compare_answer_routers(const PlanAnswer& a, AnswerExtras& x) {
    const plan::SizingResult& r = a.r;
    if (r.found && !r.ranked.empty() && r.ranked.front().config.par.dp > 1) {
        const plan::SizingConfig& k = r.ranked.front().config;
        const model::PlanConfig pc = plan::effective_plan(a.colocated, a.node);
        const model::Scenario chosen =
            plan::configured_scenario(a.colocated, pc.candidates.at(k.candidate), k);
        const sim::SimOptions o = answer_sim_options(a, pc, chosen);
        x.routers = plan::compare_routers(chosen, o, a.threads, interrupt_token());
        throw_if_interrupted();
    }
}

// KV offload tiers and LoRA slots on the answer, where they are a choice
// (plan/serving_choices.hpp; docs/plan.md, "KV offload and LoRA slots").
void compare_answer_offload_and_lora(const PlanAnswer& a, AnswerExtras& x) {
    const plan::SizingResult& r = a.r;
    const model::Scenario& colocated = a.colocated;
    if (r.found && !r.ranked.empty() &&
        (colocated.deployment.engine.kv_offload || colocated.deployment.engine.lora ||
         model::kv_working_set_tokens(colocated.workload) > 0)) {
        const plan::SizingConfig& k = r.ranked.front().config;
        const model::PlanConfig pc = plan::effective_plan(colocated, a.node);
        const model::Scenario chosen =
            plan::configured_scenario(colocated, pc.candidates.at(k.candidate), k);
        const sim::SimOptions o = answer_sim_options(a, pc, chosen);
        const plan::ServingChoice off =
            plan::compare_kv_offload(chosen, o, a.threads, interrupt_token());
        throw_if_interrupted();
        if (off.choice || chosen.deployment.engine.kv_offload) {
            x.offload_choice = off;
        }
        if (chosen.deployment.engine.lora) {
            x.lora_choice = plan::compare_max_loras(chosen, o, a.threads, interrupt_token());
            throw_if_interrupted();
        }
    }
}

// Speculative decoding on an answer that speculates: the best k (simulated), then what
// estimate computes for its configuration.
void compare_answer_speculation(const PlanAnswer& a, AnswerExtras& x) {
    const plan::SizingResult& r = a.r;
    if (r.found && !r.ranked.empty() && r.ranked.front().config.speculative) {
        const plan::SizingConfig& k = r.ranked.front().config;
        const model::PlanConfig pc = plan::effective_plan(a.colocated, a.node);
        const model::Scenario chosen =
            plan::configured_scenario(a.colocated, pc.candidates.at(k.candidate), k);
        x.spec_choice = plan::compare_speculative_tokens(chosen, answer_sim_options(a, pc, chosen),
                                                         a.threads, interrupt_token());
        throw_if_interrupted();
        x.answer_spec =
            model::estimate_serving(chosen.deployment, chosen.workload,
                                    choose_profile(a.ctx, ScenarioFlags{}, chosen.deployment.gpu))
                .speculative;
    }
}

// The chosen configuration (the first ranked) as the engine would be launched.
void launch_answer(const PlanAnswer& a, const std::optional<EmitEngine>& engine, AnswerExtras& x) {
    const plan::SizingResult& r = a.r;
    if (engine && r.found && !r.ranked.empty()) {
        const plan::SizingConfig& k = r.ranked.front().config;
        const model::PlanConfig pc = plan::effective_plan(a.s, a.node);
        const model::Scenario chosen =
            plan::configured_scenario(a.s, pc.candidates.at(k.candidate), k);
        const model::ServingEstimate e =
            model::estimate_serving(chosen.deployment, chosen.workload,
                                    choose_profile(a.ctx, ScenarioFlags{}, chosen.deployment.gpu));
        x.launch =
            launch_commands(*engine, chosen.deployment,
                            bench_load(chosen.workload, e.operating_point), chosen.scheduler);
        x.launch_config = layout(k);
    }
}

// KV offload tiers (engine.kv_offload): the first configuration's tier figures, analytic
// (its simulations ran with the tiers).
void answer_tiers(const PlanAnswer& a, AnswerExtras& x) {
    const plan::SizingResult& r = a.r;
    if (a.s.deployment.engine.kv_offload && r.found && !r.ranked.empty()) {
        const plan::SizingConfig& k = r.ranked.front().config;
        const model::Scenario chosen = plan::configured_scenario(
            a.s, plan::effective_plan(a.s, a.node).candidates.at(k.candidate), k);
        x.tiers =
            model::estimate_serving(chosen.deployment, chosen.workload,
                                    choose_profile(a.ctx, ScenarioFlags{}, chosen.deployment.gpu))
                .kv_offload;
    }
}

// Everything the report adds beside the ranking, in the order the comparisons run.
AnswerExtras answer_extras(const PlanAnswer& a, const std::optional<EmitEngine>& engine) {
    AnswerExtras x;
    compare_answer_disaggregation(a, x);
    compare_answer_routers(a, x);
    compare_answer_offload_and_lora(a, x);
    compare_answer_speculation(a, x);
    launch_answer(a, engine, x);
    answer_tiers(a, x);
    return x;
}

nlohmann::json disaggregation_json(const plan::DisaggComparison& pd) {
    nlohmann::json layouts = nlohmann::json::array();
    const auto add = [&](const plan::DisaggLayout& l) {
        layouts.push_back({{"name", l.name},
                           {"disaggregated", l.disaggregated},
                           {"gpus", l.gpus},
                           {"prefill_replicas", l.prefill_replicas},
                           {"prefill_tp", l.prefill_tp},
                           {"decode_replicas", l.decode_replicas},
                           {"decode_tp", l.decode_tp},
                           {"replicas", l.replicas},
                           {"tp", l.tp},
                           {"capacity_rps", l.capacity_rps},
                           {"bottleneck", l.bottleneck},
                           {"simulated", l.simulated},
                           {"meets_slo", l.meets_slo},
                           {"slo_attainment", l.slo_attainment},
                           {"ttft_p99_s", l.ttft_p99_s},
                           {"tpot_p99_s", l.tpot_p99_s},
                           {"e2e_p99_s", l.e2e_p99_s},
                           {"output_tok_s", l.output_tok_s},
                           {"link_utilisation", l.link_utilisation},
                           {"transfer_mean_s", l.transfer_mean_s},
                           {"rent_per_hour", l.rent_per_hour ? nlohmann::json(*l.rent_per_hour)
                                                             : nlohmann::json()}});
    };
    for (const auto& l : pd.ranked) {
        add(l);
    }
    for (const auto& l : pd.not_simulated) {
        add(l);
    }
    nlohmann::json j = {{"gpus", pd.gpus}, {"verdict", pd.verdict}, {"layouts", layouts}};
    return j;
}

// The --json report: plan_json and the extras.
nlohmann::json plan_answer_json(const model::Scenario& s, const plan::SizingResult& r,
                                const AnswerExtras& x, const std::optional<EmitEngine>& engine) {
    const auto& [pd, routers, offload_choice, lora_choice, spec_choice, answer_spec, launch,
                 launch_config, tiers] = x;
    nlohmann::json j = plan_json(s, r);
    if (tiers) {
        j["kv_offload"] = {{"hit_rate", tiers->hit_rate},
                           {"hit_rate_without", tiers->hit_rate_without},
                           {"split",
                            {{"gpu", tiers->split.gpu},
                             {"host", tiers->split.host},
                             {"nvme", tiers->split.nvme},
                             {"miss", tiers->split.miss}}},
                           {"load_time_s", tiers->load_time.si()},
                           {"ttft_without_s", tiers->ttft_without.si()}};
    }
    if (engine) {
        j["emit"] = launch ? launch_json(*launch) : nlohmann::json(nullptr);
    }
    if (pd) {
        j["disaggregation"] = disaggregation_json(*pd);
    }
    if (routers) {
        j["router"] = router_json(*routers);
    }
    if (offload_choice) {
        j["kv_offload_choice"] = serving_choice_json(*offload_choice);
    }
    if (lora_choice) {
        j["max_loras_choice"] = serving_choice_json(*lora_choice);
    }
    if (spec_choice) {
        j["num_speculative_tokens_choice"] = serving_choice_json(*spec_choice);
    }
    if (answer_spec) {
        j["answer_speculative"] = {{"method", model::to_string(answer_spec->method)},
                                   {"num_speculative_tokens", answer_spec->k},
                                   {"tokens_per_step", answer_spec->tokens_per_step},
                                   {"tpot_without_s", answer_spec->tpot_off.si()},
                                   {"speedup", answer_spec->speedup}};
    }
    return j;
}

// The report's head: the scenario, its SLOs and how far the search went.
void print_plan_head(std::ostream& out, const model::Scenario& s, const plan::SizingResult& r) {
    const auto& d = s.deployment;
    out << "plan " << s.name << ": " << d.model.name << ", SLO p" << fixed(s.slo.percentile, 0);
    if (s.slo.ttft)
        out << " TTFT " << fixed(s.slo.ttft->si() * 1e3, 0) << " ms";
    if (s.slo.tpot)
        out << " TPOT " << fixed(s.slo.tpot->si() * 1e3, 0) << " ms";
    if (s.slo.e2e)
        out << " E2E " << fixed(s.slo.e2e->si(), 1) << " s";
    out << " (per-class SLOs where given), ranked by " << model::to_string(r.pricing) << " cost\n"
        << "searched     " << r.shapes << " replica shapes, " << r.configurations
        << " configurations with "
        << "replica counts; " << r.simulated << " simulated\n"
        << "stopped at   ";
    std::string sep;
    for (const auto& [stage, n] : r.stages) {
        out << sep << stage << ' ' << n;
        sep = ", ";
    }
    out << " (docs/plan.md)\n\n";
}

// The ranked configurations (or the closest miss), the verdict and the answer's capacity at
// the SLO.
void print_ranking(std::ostream& out, CliContext& ctx, const model::Scenario& s,
                   const plan::SizingResult& r) {
    if (r.found) {
        print_rows(out, r.ranked, r.currency, s.slo.percentile, s, ctx.error_bands(), ctx.db());
        out << '\n';
    } else if (r.closest_miss && r.closest_miss->monthly) {
        out << "closest miss:\n";
        print_rows(out, {*r.closest_miss}, r.currency, s.slo.percentile, s, ctx.error_bands(),
                   ctx.db());
        out << '\n';
    }
    out << (r.found ? "answer       " : "NO ANSWER    ") << r.verdict << '\n';
    if (r.found && !r.ranked.empty() && r.ranked.front().slo_capacity_ratio > 0) {
        // model::slo_capacity of the first configuration, beside its throughput capacity.
        const plan::SizingRow& first = r.ranked.front();
        out << "capacity     at the SLO (p" << fixed(s.slo.percentile, 0) << ", analytic) "
            << fixed(first.slo_capacity_rps, 2)
            << " req/s = " << fixed(first.slo_capacity_ratio * 100, 0)
            << " % of the throughput capacity "
            << fixed(first.slo_capacity_rps / first.slo_capacity_ratio, 2)
            << " req/s (bound: " << first.slo_capacity_bound << ")";
        if (first.offered_rps > 0) {
            out << "; offered " << fixed(first.offered_rps, 2) << " req/s";
        }
        out << '\n';
    }
}

void print_tiers(std::ostream& out, const std::optional<model::KvOffloadFigures>& tiers) {
    if (tiers) {
        out << "KV offload   first configuration (analytic): prefix hit rate "
            << fixed(100 * tiers->hit_rate, 1) << " %"
            << " (GPU alone " << fixed(100 * tiers->hit_rate_without, 1) << " %"
            << "), shared prefix on host " << fixed(100 * tiers->split.host, 1) << " %"
            << ", NVMe " << fixed(100 * tiers->split.nvme, 1) << " %"
            << ", load " << fixed(tiers->load_time.si() * 1e3, 1) << " ms per request\n";
    }
}

void print_disaggregation(std::ostream& out, const std::optional<plan::DisaggComparison>& pd) {
    if (pd) {
        out << "\nprefill/decode disaggregation against co-location at " << pd->gpus
            << " GPUs (simulated, best first; docs/simulator.md):\n";
        Table t({"layout", "capacity req/s", "bound", "SLO", "attain", "TTFT p99 ms", "TPOT p99 ms",
                 "out tok/s", "link busy"});
        for (const auto& l : pd->ranked) {
            t.add_row({l.name, fixed(l.capacity_rps, 2), l.bottleneck,
                       l.meets_slo ? "met" : "missed", fixed(100 * l.slo_attainment, 1) + " %",
                       fixed(l.ttft_p99_s * 1e3, 0), fixed(l.tpot_p99_s * 1e3, 1),
                       fixed(l.output_tok_s, 0),
                       l.disaggregated ? fixed(100 * l.link_utilisation, 1) + " %" : "-"});
        }
        t.print(out);
        if (!pd->not_simulated.empty()) {
            out << "not simulated (less capacity): ";
            std::string comma;
            for (const auto& l : pd->not_simulated) {
                out << comma << l.name << " (" << fixed(l.capacity_rps, 2) << " req/s)";
                comma = ", ";
            }
            out << '\n';
        }
        out << "P:D answer   " << pd->verdict << '\n';
    }
}

void print_answer_spec(std::ostream& out,
                       const std::optional<model::SpeculativeFigures>& answer_spec) {
    if (answer_spec) {
        out << "speculative  the answer drafts " << answer_spec->k << " tokens per step ("
            << model::to_string(answer_spec->method)
            << "): " << fixed(answer_spec->tokens_per_step, 2)
            << " tokens per step expected; TPOT speed-up at the operating point "
            << fixed(answer_spec->speedup, 2) << " x (TPOT "
            << fixed(answer_spec->tpot_off.si() * 1e3, 1) << " ms without)\n";
    }
}

// The text report.
void print_plan(std::ostream& out, CliContext& ctx, const model::Scenario& s,
                const plan::SizingResult& r, const AnswerExtras& x,
                const std::optional<EmitEngine>& engine) {
    const auto& [pd, routers, offload_choice, lora_choice, spec_choice, answer_spec, launch,
                 launch_config, tiers] = x;
    print_plan_head(out, s, r);
    print_ranking(out, ctx, s, r);
    print_tiers(out, tiers);
    for (const auto& n : r.notes) {
        out << "note         " << n << '\n';
    }
    print_disaggregation(out, pd);
    print_answer_spec(out, answer_spec);
    if (routers) {
        print_routers(out, *routers, s.slo.percentile);
    }
    if (offload_choice) {
        print_serving_choice(out, *offload_choice, s.slo.percentile);
    }
    if (lora_choice) {
        print_serving_choice(out, *lora_choice, s.slo.percentile);
    }
    if (spec_choice) {
        print_serving_choice(out, *spec_choice, s.slo.percentile);
    }
    if (s.availability && r.found && !r.ranked.empty()) {
        const auto& par = r.ranked.front().config.par;
        print_availability(out, *scenario_availability(s, par.dp, par.tp * par.pp));
    }
    if (launch) {
        out << "\nthe first configuration (" << launch_config << "):\n";
        print_launch(out, *launch);
    } else if (engine) {
        out << "\nno configuration meets the SLOs: nothing to launch\n";
    }
}

} // namespace

int run_plan(CliContext& ctx) {
    po::options_description desc("options");
    std::string file, emit;
    PlanFlags f;
    add_plan_options(desc, file, emit, f);
    PowerFlags power_flags;
    add_power_options(desc, power_flags);
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("plan", ctx.args, desc, pos, vm, *ctx.out,
                       "[FILE | --model M --gpu G] [--candidate GPU[@NODE]]... [--budget P] "
                       "[--power-budget W] [--max-gpus N] [--fleet] "
                       "[--top N] [--set key=value]... [--emit ENGINE] [--json] [--mpi]")) {
        return 0;
    }
    const std::optional<EmitEngine> engine = emit_option(emit);
    if (f.threads && *f.threads < 1) {
        throw UsageError("--threads must be at least 1");
    }
    model::Scenario s = plan_scenario(ctx, file, f, power_flags);
    if (vm.count("fleet")) {
        if (engine || vm.count("mpi")) {
            throw UsageError("--fleet plans the scenario's own replicas over its horizon; it "
                             "takes neither --emit nor --mpi");
        }
        return run_fleet_plan(ctx, s, s.fleet.value_or(model::FleetConfig{}),
                              vm.count("json") != 0);
    }
    std::optional<model::ServerSpec> node;
    if (!s.node_ref.empty()) {
        node = ctx.db().server(s.node_ref);
    }
    // --mpi: every rank runs the same search, its simulations spread over the ranks; rank 0
    // prints the answer.
    std::optional<MpiJob> job;
    if (vm.count("mpi")) {
        job.emplace();
    }
    MpiJob* const ranks = job ? &*job : nullptr;
    const bool lead = !job || job->rank() == 0;
    // With cluster.disaggregation the search sizes co-located replicas, and the P:D layouts of
    // the pools' GPUs are compared with co-location beside it.
    model::Scenario colocated = s;
    colocated.cluster.disaggregation.reset();
    const plan::SizingResult r = search(ctx, colocated, f.threads.value_or(0), lead, ranks);
    if (!lead) {
        return 0;
    }
    const PlanAnswer answer{ctx, s, colocated, node, r, f.threads.value_or(0)};
    const AnswerExtras extras = answer_extras(answer, engine);
    if (vm.count("json")) {
        *ctx.out << json_text(plan_answer_json(s, r, extras, engine)) << '\n';
        return 0;
    }
    print_plan(*ctx.out, ctx, s, r, extras, engine);
    return 0;
}

} // namespace gpuplan::cli
