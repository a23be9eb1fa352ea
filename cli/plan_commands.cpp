// `gpuplan fit`, `gpuplan estimate` and `gpuplan compare`: the analytic model's answers.
#include "cli/availability_report.hpp"
#include "cli/band_notes.hpp"
#include "cli/cli_context.hpp"
#include "cli/command_reports.hpp"
#include "cli/emit.hpp"
#include "cli/json_out.hpp"
#include "cli/load_report.hpp"
#include "cli/options.hpp"
#include "cli/plot_option.hpp"
#include "cli/power_report.hpp"
#include "cli/report_json.hpp"
#include "cli/scenario_options.hpp"
#include "cli/table.hpp"
#include "hwdb/profile_loader.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/bottleneck.hpp"
#include "model/engine_rules.hpp"
#include "model/error.hpp"
#include "model/failures.hpp"
#include "model/memory.hpp"
#include "model/price_list.hpp"
#include "model/serving.hpp"
#include "model/unit_parser.hpp"
#include "model/workload_mix.hpp"
#include "plan/analysis.hpp"
#include "plan/disaggregation.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <ostream>
#include <string_view>

namespace gpuplan::cli {
namespace {

using model::format_gib;

std::string ms(Seconds s) {
    return fixed(s.si() * 1e3, 2) + " ms";
}
std::string pct(double f) {
    return fixed(f * 100, 1) + " %";
}

void print_memory(std::ostream& out, const model::Scenario& s, const model::MemoryEstimate& m,
                  int concurrency) {
    const auto& d = s.deployment;
    out << s.name << ": " << d.model.name << " on " << d.gpus() << " x " << d.gpu.name << " (tp "
        << d.par.tp << ", pp " << d.par.pp << ", dp " << d.par.dp << "), weights "
        << d.prec.weights.name << ", KV " << d.prec.kv_cache.name << ", "
        << model::to_string(m.engine.kind) << "\n\n";
    out << "memory per GPU"
        << (d.par.pp > 1 ? " (binding pipeline stage " + std::to_string(m.binding_stage) + ")" : "")
        << '\n';
    Table t({"item", "size", "share"});
    const auto row = [&](const char* name, Bytes b) {
        t.add_row({name, format_gib(b), pct(b / m.capacity)});
    };
    row("weights", m.weights);
    if (m.lora_slots.si() > 0) {
        row("LoRA adapter slots", m.lora_slots);
    }
    row("activations (peak)", m.activations);
    row("non-torch (NCCL, cuBLAS)", m.non_torch);
    row("CUDA graphs", m.cuda_graphs);
    row("CUDA context", m.cuda_context);
    row("KV cache pool", Bytes(std::max(0.0, m.kv_budget.si())));
    // With vLLM and SGLang this is what gpu_memory_utilization holds back: not room to use. A
    // fixed kv_cache_memory pool replaces that arithmetic, and what it leaves is simply unused.
    const bool kv_capped = d.engine.kv_cache_memory.has_value();
    const bool held_back = !kv_capped && (m.engine.kind == model::EngineKind::Vllm ||
                                          m.engine.kind == model::EngineKind::Sglang);
    if (m.free.si() < 0) {
        t.add_row({"over capacity (does not start)", format_gib(Bytes(-m.free.si())),
                   pct(-m.free.si() / m.capacity.si())});
    } else {
        row(kv_capped   ? "unused (kv_cache_memory fixes the KV pool)"
            : held_back ? "held back (1 - gpu_memory_utilization)"
                        : "free",
            m.free);
    }
    t.add_row({"capacity (as CUDA reports)", format_gib(m.capacity), "100.0 %"});
    t.print(out);
    out << '\n'
        << "KV cache per token   " << fixed(m.kv_per_token.si(), 0) << " B on this GPU ("
        << fixed(m.kv_per_token_model.si(), 0) << " B for the whole model)\n"
        << "engine start-up      GPU KV cache size: " << m.kv_tokens << " tokens (" << m.kv_blocks
        << " blocks of " << m.engine.block_size << ")\n"
        << "                     Maximum concurrency for " << m.engine.max_model_len
        << " tokens per request: " << fixed(m.max_concurrency, 2) << "x\n"
        << "concurrency limit    " << fixed(m.effective_concurrency, 2)
        << " full-length sequences, bound by " << model::to_string(m.concurrency_limit)
        << " (max_num_seqs " << m.engine.max_num_seqs << ")\n";
    if (m.engine.kind == model::EngineKind::TensorRtLlm) {
        // Unset in the scenario, these are trtllm-bench's choices (model/engine_defaults.hpp).
        out << "engine limits        max_batch_size " << m.engine.max_num_seqs
            << ", max_num_tokens " << m.engine.max_num_batched_tokens << ", chunked context "
            << (m.engine.chunked_prefill ? "on" : "off") << '\n';
    }
    out << "start-up verdict     " << (m.fits ? "starts" : "does NOT start") << ", "
        << format_gib(Bytes(std::abs(m.free.si())))
        << (m.free.si() < 0 ? " short"
            : kv_capped     ? " unused"
            : held_back     ? " held back"
                            : " free")
        << '\n';
    const model::LoadFit load = model::load_fit(s.deployment, m, s.workload, concurrency);
    out << "verdict              " << (load.fits ? "fits" : "does NOT fit") << ": " << concurrency
        << (concurrency == 1 ? " sequence of " : " sequences of ") << s.workload.input_tokens
        << " + " << s.workload.output_tokens << " tokens, " << load.holds << " run at once\n";
    if (!load.reason.empty() && m.fits) {
        out << "  - " << load.reason << '\n';
    }
    for (const auto& r : m.reasons) {
        out << "  - " << r << '\n';
    }
    if (const auto advice = model::capacity_advice(s.deployment, m)) {
        out << "  - " << *advice << '\n';
    }
}

nlohmann::json fit_json(const model::Scenario& s, const model::MemoryEstimate& m, int concurrency) {
    nlohmann::json j = scenario_json(s);
    j["fits"] = m.fits;
    const model::LoadFit load = model::load_fit(s.deployment, m, s.workload, concurrency);
    j["load_fit"] = {
        {"fits", load.fits},
        {"concurrency", load.requested},
        {"holds", load.holds},
        {"reason", load.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(load.reason)}};
    j["memory"] = memory_json(m);
    j["max_concurrency"] = m.max_concurrency;
    const auto advice = model::capacity_advice(s.deployment, m);
    j["advice"] = advice ? nlohmann::json(*advice) : nlohmann::json(nullptr);
    return j;
}

// `fit --max-model-len 32k` asks whether sequences of that length fit: without a request length
// of its own (--input-len, --output-len or a scenario file) the verdict judges requests that fill
// the typed context, not the default 1024 + 256 request.
void judge_typed_context(CliContext& ctx, const ScenarioFlags& flags, model::Scenario& s) {
    if (!flags.max_model_len || flags.input_len || !flags.file.empty()) {
        return;
    }
    const int context = *flags.max_model_len;
    const int output = std::min(s.workload.output_tokens, context / 2);
    s.workload.output_tokens = std::max(1, output);
    s.workload.input_tokens = std::max(1, context - s.workload.output_tokens);
    *ctx.err << "note: the verdict judges requests of the typed --max-model-len " << context << " ("
             << s.workload.input_tokens << " + " << s.workload.output_tokens
             << " tokens); give --input-len and --output-len for another request\n";
}

} // namespace

int run_fit(CliContext& ctx) {
    po::options_description desc("options");
    ScenarioFlags flags;
    add_scenario_options(desc, flags);
    // Power flags are accepted like every command that reads a scenario; memory does not
    // depend on them.
    PowerFlags pflags;
    add_power_options(desc, pflags);
    desc.add_options()("json", "machine-readable output");
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("fit", ctx.args, desc, pos, vm, *ctx.out,
                       "[FILE] [--model M --gpu G ...] [--json]")) {
        return 0;
    }
    model::Scenario s = build_scenario(ctx, flags);
    apply_power_flags(s, pflags);
    judge_typed_context(ctx, flags, s);
    const auto& d = s.deployment;
    const model::MemoryEstimate m = model::estimate_memory(d);
    const int concurrency = s.workload.concurrency.value_or(1);
    const auto at_concurrency = model::max_context_at_concurrency(d, concurrency);
    const auto fewest = model::fewest_gpus(d, 1);
    const auto host = model::host_ram_advice(d);
    if (vm.count("json")) {
        nlohmann::json j = fit_json(s, m, concurrency);
        j["max_context_at_concurrency"] =
            at_concurrency ? nlohmann::json(*at_concurrency) : nlohmann::json(nullptr);
        j["fewest_gpus"] = fewest ? nlohmann::json{{"gpus", fewest->gpus},
                                                   {"tp", fewest->par.tp},
                                                   {"pp", fewest->par.pp}}
                                  : nlohmann::json(nullptr);
        j["host_ram"] = {{"recommended_bytes", host.recommended.si()}, {"reason", host.reason}};
        *ctx.out << json_text(j) << '\n';
        return 0;
    }
    auto& out = *ctx.out;
    print_memory(out, s, m, concurrency);
    out << "longest context      ";
    if (at_concurrency) {
        out << *at_concurrency << " tokens with " << concurrency
            << (concurrency == 1 ? " sequence" : " sequences") << " at once\n";
    } else {
        out << "none: " << concurrency << (concurrency == 1 ? " sequence does" : " sequences do")
            << " not fit at any length\n";
    }
    out << "fewest GPUs          ";
    if (fewest) {
        out << fewest->gpus << " x " << d.gpu.name << " (tp " << fewest->par.tp << ", pp "
            << fewest->par.pp << ") for one replica\n";
    } else {
        out << "none up to 64 x " << d.gpu.name << '\n';
    }
    out << "host RAM             " << format_gib(host.recommended, 0) << " per node ("
        << host.reason << ")\n";
    return 0;
}

namespace {

/// The band of the estimate figure `key` (model::kEstimateFigureBands).
const model::EstimateFigureBand& estimate_band(std::string_view key) {
    for (const model::EstimateFigureBand& b : model::kEstimateFigureBands) {
        if (key == b.key) {
            return b;
        }
    }
    throw InternalError("no error band is assigned to estimate figure '" + std::string(key) + "'");
}

void print_whatifs(std::ostream& out, const std::vector<model::WhatIf>& whatifs) {
    out << "\nwhat-ifs (ranked by effect, each re-estimated)\n";
    Table wt({"change", "fits", "GPUs", "TTFT", "TPOT", "tok/s", "x"});
    int shown = 0;
    for (const auto& x : whatifs) {
        if (!x.applicable || shown++ >= 8) {
            continue;
        }
        // A change that still does not start has no speeds to show.
        if (!x.fits) {
            wt.add_row({x.change, "no", std::to_string(x.gpus), "-", "-", "-", "-"});
            continue;
        }
        wt.add_row({x.change, "yes", std::to_string(x.gpus), ms(x.ttft), ms(x.tpot),
                    fixed(x.throughput, 0), fixed(x.throughput_gain, 2)});
    }
    wt.print(out);
}

void print_estimate(std::ostream& out, const model::Scenario& s, const model::ServingEstimate& e,
                    const model::BottleneckReport& b, const std::vector<model::WhatIf>& whatifs,
                    const model::ErrorBands& bands, const model::SloCapacity& slo) {
    print_memory(out, s, e.memory, e.operating_point.concurrency);
    if (!e.memory.fits) {
        // Times of a deployment that cannot load its weights would describe nothing that runs.
        out << "\nspeed: none; the deployment does not start (memory above), so nothing runs to "
               "be timed\n";
        print_whatifs(out, whatifs);
        return;
    }
    // The request the figures are for: the class mix's mean request when the scenario has classes.
    const model::Workload w = model::analytic_request(s.workload);
    out << "\nspeed for " << w.input_tokens << " input + " << w.output_tokens << " output tokens"
        << (s.workload.arrival.kind == model::ArrivalKind::Trace && !s.workload.trace.empty()
                ? " (the mean request of the trace)"
            : s.workload.classes.empty() ? ""
                                         : " (the mean request of the class mix)")
        << '\n'
        << "load: " << load_line(e.operating_point) << '\n';
    // Each figure's band: its measured error on whole steps or serving runs (docs/validation.md).
    BandNotes notes(bands, model::band_query(s.deployment));
    const auto band = [&](std::string_view key) {
        const model::EstimateFigureBand& eb = estimate_band(key);
        return notes.cell(eb.figure, eb.regime);
    };
    Table t({"figure", "value", "band", "MFU", "MBU"});
    t.add_row({"TTFT (alone)", ms(e.ttft), band("ttft"), pct(e.prefill.mfu), pct(e.prefill.mbu)});
    t.add_row({"TTFT (under load)", ms(e.ttft_loaded), band("ttft_loaded"), "", ""});
    t.add_row({"TPOT", ms(e.tpot), band("tpot"), pct(e.decode.mfu), pct(e.decode.mbu)});
    t.add_row({"running per replica", std::to_string(e.running), "", "", ""});
    t.add_row({"throughput", fixed(e.throughput, 0) + " tok/s", band("throughput"), "", ""});
    t.add_row({"peak throughput",
               fixed(e.peak_throughput, 0) + " tok/s at " + std::to_string(e.peak_concurrency),
               band("peak_throughput"), "", ""});
    t.add_row({"single-stream bound", fixed(e.single_stream_bound, 0) + " tok/s", "", "", ""});
    if (e.speculative) {
        const model::SpeculativeFigures& f = *e.speculative;
        double mean = 0;
        for (const double a : f.acceptance) {
            mean += a / static_cast<double>(f.acceptance.size());
        }
        t.add_row({std::string("speculative (") + model::to_string(f.method) + ", k " +
                       std::to_string(f.k) + ")",
                   fixed(f.tokens_per_step, 2) + " tokens/step, acceptance " + fixed(mean, 2), "",
                   ""});
        t.add_row({"  verify + draft per step",
                   ms(f.verify_time) + " + " + ms(f.draft_time) + " (draft " +
                       pct(f.draft_time / (f.verify_time + f.draft_time)) + ")",
                   "", ""});
        t.add_row({"  TPOT without it", ms(f.tpot_off) + " (speed-up " + fixed(f.speedup, 2) + "x)",
                   "", ""});
        t.add_row({"  draft memory per GPU",
                   format_gib(f.draft_weights, 2) + " weights + " +
                       fixed(f.draft_kv_per_token.si() / 1024.0, 1) + " KiB KV/token",
                   "", ""});
    }
    if (e.kv_offload) {
        const model::KvOffloadFigures& f = *e.kv_offload;
        t.add_row(
            {"KV offload hit rate",
             pct(f.hit_rate) + " of prompt tokens (GPU alone " + pct(f.hit_rate_without) + ")", "",
             ""});
        t.add_row({"  shared prefix served by",
                   "GPU " + pct(f.split.gpu) + ", host " + pct(f.split.host) + ", NVMe " +
                       pct(f.split.nvme) + ", recomputed " + pct(f.split.miss),
                   "", ""});
        t.add_row({"  working set / GPU / host / NVMe",
                   fixed(f.working_set / 1e3, 0) + "k / " + fixed(f.gpu_cache_tokens / 1e3, 0) +
                       "k / " + fixed(f.host_tokens / 1e3, 0) + "k / " +
                       fixed(f.nvme_tokens / 1e3, 0) + "k tokens",
                   "", ""});
        t.add_row(
            {"  load per request",
             ms(f.load_time) + " (" + fixed(f.bytes_per_request.si() / 1e6, 0) + " MB per GPU)", "",
             ""});
        t.add_row({"  without the tiers",
                   "TTFT " + ms(f.ttft_without) + ", " + fixed(f.throughput_without, 0) + " tok/s",
                   "", ""});
    }
    if (e.lora) {
        const model::LoraFigures& f = *e.lora;
        t.add_row(
            {"LoRA (" + std::to_string(f.adapters) + " adapters, r " + std::to_string(f.rank) + ")",
             "GPU hit rate " + pct(f.gpu_hit_rate) + " (" + std::to_string(f.max_loras) +
                 " slots), host " + pct(f.cpu_hit_rate) + " (" + std::to_string(f.max_cpu_loras) +
                 ")",
             "", ""});
        t.add_row(
            {"  loads per replica",
             fixed(f.loads_per_s, 2) + "/s GPU, " + fixed(f.disk_loads_per_s, 2) + "/s from disk",
             "", ""});
        t.add_row({"  one load",
                   ms(f.load_time) + " host->GPU, " + ms(f.disk_time) + " disk; " +
                       ms(f.mean_load_delay) + " per request",
                   "", ""});
        t.add_row({"  adapter memory",
                   fixed(f.adapter_bytes.si() / 1e6, 1) + " MB each; " +
                       format_gib(f.reserved_per_gpu, 2) + " of slots per GPU",
                   "", ""});
    }
    t.print(out);
    notes.print(out);
    out << "capacity at SLO (p" << fixed(slo.percentile, 0) << "): " << slo_capacity_text(slo)
        << '\n';
    out << "\nbinding resource\n"
        << "  prefill: " << model::to_string(b.prefill.binding) << " - " << b.prefill.detail << '\n'
        << "  decode:  " << model::to_string(b.decode.binding) << " - " << b.decode.detail << '\n';
    if (b.capacity_binds) {
        out << "  capacity: " << b.capacity_detail << '\n';
    }
    print_whatifs(out, whatifs);
    out << "\nprovenance: " << model::to_string(e.provenance.kind)
        << (e.provenance.file.empty() ? "" : " " + hwdb::shown_path(e.provenance.file)) << " ("
        << e.provenance.description << "); per-kernel error MAPE "
        << fixed(e.error_band.mape * 100, 0) << " %, P90 " << fixed(e.error_band.p90 * 100, 0)
        << " %"
        << (e.error_band.points ? " on " + std::to_string(e.error_band.points) + " points"
                                : " (not validated)")
        << '\n';
}

} // namespace

namespace {

/// Everything `estimate` shows: the serving estimate and bottleneck, under a power limit the
/// power figures, from the shared chain (plan/analysis.hpp) that `cost`, `rack` and the desktop
/// app use, and the what-ifs.
struct EstimateParts {
    plan::ServingAnalysis analysis;
    std::vector<model::WhatIf> whatifs;
    model::SloCapacity slo; ///< the highest rate within the scenario's SLO (model::slo_capacity)
};

EstimateParts estimate_parts(CliContext& ctx, const model::Scenario& s,
                             const model::EfficiencyProfile& profile, int cached) {
    const bool with_power = has_power_limit(s);
    const model::ServerSpec* server = nullptr;
    if (with_power) {
        (void)scenario_node(ctx, s, &server);
    }
    plan::AnalysisOptions o;
    o.parts = {.serving = true, .power = with_power, .racks = false, .cost = false};
    o.cached_prefix = cached;
    EstimateParts p{plan::analyze_serving(s, server, profile, o),
                    {},
                    model::slo_capacity(s.deployment, s.workload, s.slo, profile, cached)};
    std::vector<model::GpuCandidate> candidates;
    for (const auto& g : hwdb::similar_accelerators(ctx.db(), s.deployment.gpu)) {
        candidates.push_back({g, choose_profile(ctx, ScenarioFlags{}, g)});
    }
    p.whatifs = model::what_ifs(s.deployment, s.workload, profile, candidates, cached);
    return p;
}

/// The scenario's disaggregated pools in the analytic model (plan::scenario_disaggregation).
std::optional<model::DisaggregatedEstimate> estimate_pools(CliContext& ctx,
                                                           const model::Scenario& s) {
    return plan::scenario_disaggregation(s, [&](const model::AcceleratorSpec& gpu) {
        return choose_profile(ctx, ScenarioFlags{}, gpu);
    });
}

nlohmann::json disaggregation_json(const model::DisaggregatedEstimate& d) {
    return {{"prefill_gpus", d.prefill_gpus},
            {"decode_gpus", d.decode_gpus},
            {"kv_bytes", d.kv_bytes.si()},
            {"transfer_s", d.transfer.si()},
            {"exposed_s", d.exposed.si()},
            {"prefill_ttft_s", d.prefill_ttft.si()},
            {"ttft_s", d.ttft.si()},
            {"tpot_s", d.tpot.si()},
            {"decode_running", d.decode_running},
            {"capacity_rps", d.capacity_rps},
            {"bottleneck", d.bottleneck},
            {"prefill_utilisation", d.prefill_utilisation},
            {"decode_utilisation", d.decode_utilisation},
            {"link_utilisation", d.link_utilisation},
            {"output_tok_s", d.output_tok_s}};
}

void print_pools(std::ostream& out, const model::DisaggregatedEstimate& d) {
    out << "\ndisaggregated pools (cluster.disaggregation, analytic; docs/simulator.md)\n"
        << "  GPUs        " << d.prefill_gpus << " prefill + " << d.decode_gpus << " decode\n"
        << "  KV transfer " << fixed(d.kv_bytes.si() / 1e6, 0) << " MB per mean prompt in "
        << fixed(d.transfer.si() * 1e3, 2) << " ms, " << fixed(d.exposed.si() * 1e3, 2)
        << " ms of it after the prefill; link " << fixed(100 * d.link_utilisation, 1) << " % busy\n"
        << "  TTFT        " << fixed(d.ttft.si() * 1e3, 1) << " ms (prefill "
        << fixed(d.prefill_ttft.si() * 1e3, 1) << " ms + the exposed transfer)\n"
        << "  TPOT        " << fixed(d.tpot.si() * 1e3, 1) << " ms at " << d.decode_running
        << " sequences per decode replica\n"
        << "  capacity    " << fixed(d.capacity_rps, 2) << " req/s (bound: " << d.bottleneck
        << ")\n";
}

} // namespace

nlohmann::json estimate_report(CliContext& ctx, const model::Scenario& s,
                               const model::EfficiencyProfile& profile, int cached) {
    const EstimateParts p = estimate_parts(ctx, s, profile, cached);
    const model::BottleneckReport& b = *p.analysis.bottleneck;
    nlohmann::json j = estimate_json(s, b.estimate, b, p.whatifs);
    const model::BandQuery q = model::band_query(s.deployment);
    for (const model::EstimateFigureBand& eb : model::kEstimateFigureBands) {
        j["bands"][eb.key] = band_json(model::band_for(ctx.error_bands(), eb.figure, eb.regime, q));
    }
    j["capacity_at_slo"] = slo_capacity_json(p.slo);
    if (p.analysis.power) {
        j["power"] = power_json(*p.analysis.power);
    }
    if (const auto a = scenario_availability(s)) {
        j["availability"] = availability_json(*a);
    }
    if (const auto d = estimate_pools(ctx, s)) {
        j["disaggregation"] = disaggregation_json(*d);
    }
    return j;
}

int run_estimate(CliContext& ctx) {
    po::options_description desc("options");
    ScenarioFlags flags;
    add_scenario_options(desc, flags);
    PowerFlags pflags;
    add_power_options(desc, pflags);
    int cached = 0;
    std::string plot_dir, emit;
    desc.add_options()("cached-prefix", po::value(&cached),
                       "prompt tokens per request served by the prefix cache")(
        "plot", po::value(&plot_dir),
        "also draw the desktop app's charts as PNG files into DIR (needs gpuplan-plot)")(
        "emit", po::value(&emit),
        "print the launch and benchmark commands: vllm, sglang, tensorrt-llm or llama.cpp")(
        "json", "machine-readable output");
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("estimate", ctx.args, desc, pos, vm, *ctx.out,
                       "[FILE] [--model M --gpu G ...] [--emit ENGINE] [--json]")) {
        return 0;
    }
    const std::optional<EmitEngine> engine = emit_option(emit);
    model::Scenario s = build_scenario(ctx, flags);
    apply_power_flags(s, pflags);
    const model::EfficiencyProfile profile = choose_profile(ctx, flags, s.deployment.gpu);
    const auto launch = [&]() {
        const model::ServingEstimate e = model::estimate_serving(s.deployment, s.workload, profile);
        return launch_commands(*engine, s.deployment, bench_load(s.workload, e.operating_point),
                               s.scheduler);
    };
    // The rules of model/engine_rules.hpp for the scenario's own engine: --emit refuses on them.
    const auto problems = model::launch_problems(s.deployment.engine.kind, s.deployment);
    if (vm.count("json")) {
        nlohmann::json j = estimate_report(ctx, s, profile, cached);
        if (!problems.empty()) {
            j["launch_problems"] = nlohmann::json::array();
            for (const auto& p : problems) {
                j["launch_problems"].push_back({{"key", p.key}, {"reason", p.reason}});
            }
        }
        if (engine) {
            j["emit"] = launch_json(launch());
        }
        *ctx.out << json_text(j) << '\n';
    } else {
        for (const auto& p : problems) {
            *ctx.err << "warning: " << model::to_string(s.deployment.engine.kind)
                     << " cannot launch this as estimated: " << p.key << ": " << p.reason << '\n';
        }
        // The bottleneck report carries the serving estimate it was drawn from: one estimate, and
        // the verdict and what-ifs see the same prefix-cache hits as the figures.
        const EstimateParts p = estimate_parts(ctx, s, profile, cached);
        const model::BottleneckReport& b = *p.analysis.bottleneck;
        print_estimate(*ctx.out, s, b.estimate, b, p.whatifs, ctx.error_bands(), p.slo);
        if (p.analysis.power) {
            *ctx.out << "\nunder the power limit (analytic; figures above are uncapped)\n";
            print_power(*ctx.out, *p.analysis.power);
        }
        if (const auto a = scenario_availability(s)) {
            print_availability(*ctx.out, *a);
        }
        if (const auto d = estimate_pools(ctx, s)) {
            print_pools(*ctx.out, *d);
        }
        if (engine) {
            *ctx.out << '\n';
            print_launch(*ctx.out, launch());
        }
    }
    if (!plot_dir.empty()) {
        ctx.out->flush();
        write_plots(s, plot_dir, false, std::nullopt, *ctx.err);
    }
    return 0;
}

int run_compare(CliContext& ctx) {
    po::options_description desc("options");
    ScenarioFlags flags;
    add_scenario_options(desc, flags);
    PowerFlags pflags;
    add_power_options(desc, pflags);
    std::vector<std::string> files;
    std::vector<std::string> with;
    std::string emit;
    desc.add_options()("files", po::value(&files)->multitoken(), "scenario files to compare")(
        "with", po::value(&with)->multitoken(),
        "a configuration GPU[@NODE][:COUNT[:TP]] on the first scenario's workload, e.g. h200-sxm:2 "
        "or gb300@gb300-nvl72:72:8 "
        "(repeatable)")("emit", po::value(&emit),
                        "print each configuration's launch and benchmark commands: vllm, sglang, "
                        "tensorrt-llm or llama.cpp")("json", "machine-readable output");
    po::positional_options_description pos;
    pos.add("files", -1);
    po::variables_map vm;
    if (!parse_options(
            "compare", ctx.args, desc, pos, vm, *ctx.out,
            "FILE... | FILE --with GPU[@NODE][:COUNT[:TP]]... | --model M --gpu G --with ... "
            "[--emit ENGINE]")) {
        return 0;
    }
    const std::optional<EmitEngine> engine = emit_option(emit);
    std::vector<model::Scenario> configs;
    if (!files.empty()) {
        flags.file = files.front();
    }
    model::Scenario base = build_scenario(ctx, flags);
    apply_power_flags(base, pflags);
    configs.push_back(base);
    for (std::size_t i = 1; i < files.size(); ++i) {
        ScenarioFlags f = flags;
        f.file = files[i];
        configs.push_back(build_scenario(ctx, f));
        apply_power_flags(configs.back(), pflags);
    }
    for (const auto& spec : with) {
        model::Scenario s = base;
        const auto c1 = spec.find(':');
        // GPU@NODE picks a server or rack-scale system (gb300-nvl72: one 72-GPU NVLink domain).
        const std::string hardware = spec.substr(0, c1);
        const auto at = hardware.find('@');
        const std::string gpu = hardware.substr(0, at);
        const std::string node = at == std::string::npos ? "" : hardware.substr(at + 1);
        int count = base.deployment.gpus();
        int tp = -1;
        try {
            if (c1 != std::string::npos) {
                const auto c2 = spec.find(':', c1 + 1);
                count = std::stoi(spec.substr(c1 + 1, c2 - c1 - 1));
                if (c2 != std::string::npos)
                    tp = std::stoi(spec.substr(c2 + 1));
            }
        } catch (const std::exception&) {
            throw UsageError("--with '" + spec +
                             "': write GPU[@NODE][:COUNT[:TP]], e.g. h200-sxm:2, h100-sxm:8:4 or "
                             "gb300@gb300-nvl72:72:8");
        }
        if (count <= 0 || tp == 0 || tp < -1) {
            throw UsageError("--with '" + spec + "': COUNT and TP must be positive");
        }
        hwdb::set_hardware(s, ctx.db(), gpu, node);
        s.deployment.par.tp = tp > 0 ? tp : count; // default: one replica over all GPUs
        s.deployment.par.pp = 1;
        if (count % s.deployment.par.tp != 0) {
            throw UsageError("--with '" + spec + "': COUNT must be a multiple of TP");
        }
        s.deployment.par.dp = count / s.deployment.par.tp;
        // The layout is part of the name: 8 GPUs as one TP8 replica and as eight TP1 replicas are
        // different configurations ("8x-rtx-4090-tp8" and "8x-rtx-4090-tp1").
        s.name = std::to_string(count) + "x-" + s.deployment.gpu.name +
                 (node.empty() ? "" : "@" + node) + "-tp" + std::to_string(s.deployment.par.tp);
        model::validate(s.deployment);
        configs.push_back(std::move(s));
    }
    if (configs.size() < 2) {
        throw UsageError(
            "compare needs at least two configurations: several FILEs, or --with GPU[:COUNT[:TP]]");
    }
    nlohmann::json out = nlohmann::json::array();
    Table t({"configuration", "fits", "in flight", "KV tokens", "TTFT", "TPOT", "tok/s",
             "tok/s/GPU", "decode bound", "rent/h", "rent/Mtok"});
    std::vector<std::string> sources;
    std::vector<std::string> loads;
    std::vector<LaunchCommands> launches;
    for (const auto& s : configs) {
        const auto profile = choose_profile(ctx, flags, s.deployment.gpu);
        const auto b = model::find_bottleneck(s.deployment, s.workload, profile);
        const auto& e = b.estimate;
        nlohmann::json j = estimate_json(s, e, b, {});
        const auto rent = model::gpu_hour_price(s);
        std::string per_hour = "-";
        std::string per_mtok = "-";
        if (rent) {
            const model::Money hourly = rent->price.money * s.deployment.gpus();
            per_hour = model::to_string(hourly);
            if (e.throughput > 0) {
                const model::Money mtok = hourly * (1e6 / (e.throughput * 3600));
                per_mtok = model::to_string(mtok);
                j["cost_per_million_tokens"] = mtok.amount;
            }
            j["rent_per_hour"] = hourly.amount;
            j["currency"] = hourly.currency;
            j["rent_source"] = rent->source;
            sources.push_back(s.name + ": " + model::to_string(rent->price) + " per GPU from " +
                              rent->source);
        } else {
            j["rent_source"] = nullptr;
            sources.push_back(s.name + ": no rent in the scenario or the hwdb");
        }
        // A buyer compares purchase prices too (GB300 has a rack price per GPU, no rent yet).
        if (const auto buy = model::gpu_purchase_price(s)) {
            j["purchase_per_gpu"] = buy->price.money.amount;
            j["purchase_source"] = buy->source;
            sources.push_back(s.name + ": buys at " + model::to_string(buy->price) +
                              " per GPU from " + buy->source);
        }
        loads.push_back(s.name + ": " + load_line(e.operating_point));
        if (engine) {
            launches.push_back(launch_commands(
                *engine, s.deployment, bench_load(s.workload, e.operating_point), s.scheduler));
            j["emit"] = launch_json(launches.back());
        }
        out.push_back(j);
        t.add_row({s.name + (hwdb::is_preliminary(s.deployment.gpu) ? " (preliminary)" : ""),
                   e.memory.fits ? "yes" : "no", std::to_string(e.operating_point.concurrency),
                   std::to_string(e.memory.kv_tokens), ms(e.ttft), ms(e.tpot),
                   fixed(e.throughput, 0), fixed(e.throughput / s.deployment.gpus(), 0),
                   model::to_string(b.decode.binding), per_hour, per_mtok});
    }
    if (vm.count("json")) {
        *ctx.out << json_text(out) << '\n';
        return 0;
    }
    const model::Workload w = model::analytic_request(base.workload);
    *ctx.out << base.deployment.model.name << ", " << w.input_tokens << " input + "
             << w.output_tokens << " output tokens per request\n\n";
    t.print(*ctx.out);
    *ctx.out << "\nload (each configuration resolves the scenario's load for itself):\n";
    for (const auto& l : loads) {
        *ctx.out << "  " << l << '\n';
    }
    *ctx.out << "rent for all GPUs; a scenario's own prices apply to its own accelerator only "
                "(docs/cost.md); rent/Mtok at the throughput shown:\n";
    for (const auto& src : sources) {
        *ctx.out << "  " << src << '\n';
    }
    for (std::size_t i = 0; i < launches.size(); ++i) {
        *ctx.out << '\n' << configs[i].name << ":\n";
        print_launch(*ctx.out, launches[i], "  ");
    }
    return 0;
}

} // namespace gpuplan::cli
