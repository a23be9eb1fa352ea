// `gpuplan diagnose`: what a running deployment shows (vLLM /metrics, `vllm bench serve`
// results, nvidia-smi samples) beside what the model predicts at the same load, as rows of the
// symptom → cause → check → fix table with evidence and re-estimated fixes (docs/diagnose.md).
#include "cli/cli_context.hpp"
#include "cli/emit.hpp"
#include "cli/interrupt.hpp"
#include "cli/json_out.hpp"
#include "cli/options.hpp"
#include "cli/power_report.hpp"
#include "cli/scenario_options.hpp"
#include "cli/table.hpp"
#include "hwdb/observed_readers.hpp"
#include "model/diagnose.hpp"
#include "model/error.hpp"
#include "plan/diagnosis.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>

namespace gpuplan::cli {
namespace {

nlohmann::json fix_json(const model::DiagnosisFix& f) {
    nlohmann::json j{{"layer", model::to_string(f.layer)},
                     {"change", f.change},
                     {"estimated", f.estimated},
                     {"effect", f.effect}};
    if (f.estimated) {
        j["fits"] = f.fits;
        j["gpus"] = f.gpus;
        j["capacity"] = f.capacity;
        j["ttft_s"] = f.ttft.si();
        j["tpot_s"] = f.tpot.si();
        j["throughput_tokens_per_s"] = f.throughput;
    }
    if (f.step) {
        j["step_s"] = f.step->si();
    }
    return j;
}

// Observed beside predicted, one object per figure both have (serving and training alike).
nlohmann::json comparisons_json(const model::Diagnosis& g) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& c : g.comparisons) {
        out.push_back({{"figure", c.figure},
                       {"unit", c.unit},
                       {"observed", c.observed},
                       {"predicted", c.predicted},
                       {"source", c.source},
                       {"basis", c.basis}});
    }
    return out;
}

nlohmann::json rows_json(const model::Diagnosis& g) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : g.rows) {
        nlohmann::json fixes = nlohmann::json::array();
        for (const auto& f : r.fixes)
            fixes.push_back(fix_json(f));
        rows.push_back({{"id", r.id},
                        {"symptom", r.symptom},
                        {"cause", r.cause},
                        {"evidence", r.evidence},
                        {"check", r.check},
                        {"fixes", fixes},
                        {"severity", r.severity}});
    }
    return rows;
}

nlohmann::json diagnosis_json(const model::Scenario& s, const model::Diagnosis& g) {
    const auto& e = g.predicted.estimate;
    if (g.training) {
        nlohmann::json j{{"scenario", s.name},
                         {"training", true},
                         {"predicted", {{"step_s", g.predicted_step.si()}}}};
        j["comparisons"] = comparisons_json(g);
        j["rows"] = rows_json(g);
        j["notes"] = g.notes;
        return j;
    }
    nlohmann::json j{{"scenario", s.name},
                     {"running", g.running},
                     {"demand", g.demand},
                     {"capacity", g.capacity},
                     {"input_tokens", g.input_tokens},
                     {"output_tokens", g.output_tokens},
                     {"predicted",
                      {{"ttft_s", e.ttft_loaded.si()},
                       {"tpot_s", e.tpot.si()},
                       {"throughput_tokens_per_s", e.throughput},
                       {"decode_binding", model::to_string(g.predicted.decode.binding)},
                       {"prefill_binding", model::to_string(g.predicted.prefill.binding)},
                       {"error_band_p90", e.error_band.p90}}}};
    j["comparisons"] = comparisons_json(g);
    j["rows"] = rows_json(g);
    j["notes"] = g.notes;
    return j;
}

// The figures whose observed/predicted ratio lies outside the model's P90 error band (±band),
// joined for a sentence; empty when all lie within it.
std::string figures_outside(const model::Diagnosis& g, double band) {
    std::string out;
    for (const auto& c : g.comparisons) {
        const double ratio = c.predicted > 0 ? c.observed / c.predicted : 0;
        if (!(ratio >= 1 / (1 + band) && ratio <= 1 + band)) {
            out += (out.empty() ? "" : ", ") + c.figure;
        }
    }
    return out;
}

// With no row: the observations agree with the model only when every compared figure lies
// within its error band; else no row covers what differs, and the report says so (issue 33: an
// MFU of 1e302 % was said to agree with the model).
void print_no_row(std::ostream& out, const model::Diagnosis& g, double band) {
    if (!(band > 0)) {
        out << "no row of the troubleshooting table applies (docs/diagnose.md)\n";
        return;
    }
    const std::string outside = figures_outside(g, band);
    if (outside.empty()) {
        out << "no row of the troubleshooting table applies: the observations agree with the model "
               "within its thresholds (docs/diagnose.md)\n";
        return;
    }
    out << "no row of the troubleshooting table applies, but " << outside
        << " lie outside the model's error band (±" << fixed(band * 100, 0)
        << " % P90): no row explains the difference; check the observation files and the "
           "scenario (docs/diagnose.md)\n";
}

void print_diagnosis(std::ostream& out, const model::Scenario& s, const model::Diagnosis& g) {
    const auto& d = s.deployment;
    const auto& e = g.predicted.estimate;
    if (g.training && s.training) {
        const auto& l = s.training->layout;
        out << s.name << ": training " << d.model.name << " on " << d.gpus() << " x " << d.gpu.name
            << " (tp " << l.tp << ", pp " << l.pp << ", dp " << l.dp << ", ZeRO " << l.zero
            << ", micro-batch " << l.micro_batch << ", recompute " << model::to_string(l.recompute)
            << ")\npredicted step for " << s.training->global_batch << " sequences of "
            << s.training->seq_len << " tokens: " << fixed(g.predicted_step.si() * 1e3, 1)
            << " ms\n\n";
    } else {
        out << s.name << ": " << d.model.name << " on " << d.gpus() << " x " << d.gpu.name
            << " (tp " << d.par.tp << ", pp " << d.par.pp << ", dp " << d.par.dp << "), weights "
            << d.prec.weights.name << ", KV " << d.prec.kv_cache.name << "\n"
            << "predicted at the observed load: " << g.running << " running, " << g.input_tokens
            << " + " << g.output_tokens << " tokens per request; the deployment runs " << g.capacity
            << " at once (error band ±" << fixed(e.error_band.p90 * 100, 0) << " % P90)\n\n";
    }
    if (!g.comparisons.empty()) {
        Table t({"figure", "observed", "predicted", "observed/predicted", "source", "basis"});
        for (const auto& c : g.comparisons) {
            const int dec = c.unit == "ms" || c.unit == "%" || c.unit == "TFLOP/s" ? 1
                            : c.unit == "x"                                        ? 2
                                                                                   : 0;
            t.add_row({c.figure, fixed(c.observed, dec) + " " + c.unit,
                       fixed(c.predicted, dec) + " " + c.unit,
                       c.predicted > 0 ? fixed(c.observed / c.predicted, 2) : "-", c.source,
                       c.basis});
        }
        t.print(out);
        out << '\n';
    }
    if (g.rows.empty()) {
        print_no_row(out, g, e.error_band.p90);
    }
    int n = 0;
    for (const auto& r : g.rows) {
        out << ++n << ". " << r.id << ": " << r.symptom << "\n   cause: " << r.cause
            << "\n   evidence:\n";
        for (const auto& ev : r.evidence)
            out << "     - " << ev << '\n';
        out << "   check: " << r.check << "\n   fixes (framework → model → hardware):\n";
        int k = 0;
        for (const auto& f : r.fixes) {
            out << "     " << ++k << ". [" << model::to_string(f.layer) << "] " << f.change
                << "\n        " << f.effect << '\n';
        }
        out << '\n';
    }
    for (const auto& note : g.notes)
        out << "note: " << note << '\n';
}

} // namespace

int run_diagnose(CliContext& ctx) {
    po::options_description desc("options");
    ScenarioFlags flags;
    add_scenario_options(desc, flags);
    std::vector<std::string> metrics;
    std::string bench, smi, emit, guidellm, aiperf, dmon, dcgm, startup_log, training_log;
    std::optional<double> interval;
    std::optional<int> bench_index;
    desc.add_options()(
        "metrics", po::value(&metrics),
        "a vLLM /metrics scrape (give it twice, earlier first, for rates over the window)")(
        "interval", po::value<double>()->notifier([&](double v) { interval = v; }),
        "seconds between the two scrapes (default: their sample timestamps)")(
        "bench", po::value(&bench), "a `vllm bench serve --save-result` JSON file")(
        "guidellm", po::value(&guidellm), "GuideLLM's benchmarks.json")(
        "bench-index", po::value<int>()->notifier([&](int v) { bench_index = v; }),
        "which benchmark of a GuideLLM sweep (0-based; required when it has several)")(
        "aiperf", po::value(&aiperf), "AIPerf's profile_export_aiperf.json")(
        "smi", po::value(&smi), "nvidia-smi --query-gpu=... --format=csv samples")(
        "dmon", po::value(&dmon), "`nvidia-smi dmon` output")("dcgm", po::value(&dcgm),
                                                              "a DCGM exporter /metrics scrape")(
        "startup-log", po::value(&startup_log),
        "the engine's start-up log (vLLM's 'GPU KV cache size' lines)")(
        "training-log", po::value(&training_log),
        "a training job's step times: Megatron-LM's iteration lines or a CSV "
        "step,seconds[,tokens]")(
        "emit", po::value(&emit),
        "print the launch and benchmark commands with the first fix applied: vllm, sglang, "
        "tensorrt-llm or llama.cpp")("json", "machine-readable output");
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("diagnose", ctx.args, desc, pos, vm, *ctx.out,
                       "SCENARIO [--metrics FILE [--metrics FILE]] [--bench FILE | --guidellm "
                       "FILE [--bench-index N] | --aiperf FILE] [--smi FILE] [--dmon FILE] "
                       "[--dcgm FILE] [--startup-log FILE] [--training-log FILE] [--json] "
                       "[--emit ENGINE]")) {
        return 0;
    }
    if (!emit.empty()) {
        (void)parse_emit_engine(emit); // a usage error before any file is read
    }
    if (metrics.size() > 2) {
        throw UsageError("--metrics is given " + std::to_string(metrics.size()) +
                         " times; give one scrape, or two (earlier first) for rates");
    }
    if (interval && (!std::isfinite(*interval) || *interval <= 0)) {
        throw UsageError("--interval must be a positive number of seconds");
    }
    if (interval && metrics.size() != 2) {
        throw UsageError("--interval needs two --metrics scrapes (earlier first)");
    }
    if (static_cast<int>(!bench.empty()) + static_cast<int>(!guidellm.empty()) +
            static_cast<int>(!aiperf.empty()) >
        1) {
        throw UsageError("give one benchmark result: --bench, --guidellm or --aiperf");
    }
    if (bench_index && guidellm.empty()) {
        throw UsageError("--bench-index chooses a benchmark of a --guidellm file; give --guidellm");
    }
    if (metrics.empty() && bench.empty() && guidellm.empty() && aiperf.empty() && smi.empty() &&
        dmon.empty() && dcgm.empty() && startup_log.empty() && training_log.empty()) {
        throw UsageError("diagnose needs something observed: --metrics, --bench, --guidellm, "
                         "--aiperf, --smi, --dmon, --dcgm, --startup-log or --training-log FILE");
    }
    model::Scenario s = build_scenario(ctx, flags);
    const model::EfficiencyProfile profile = choose_profile(ctx, flags, s.deployment.gpu);
    hwdb::ObservationFiles files;
    files.metrics.assign(metrics.begin(), metrics.end());
    files.interval_s = interval;
    files.bench = bench;
    files.guidellm = guidellm;
    files.bench_index = bench_index;
    files.aiperf = aiperf;
    files.smi = smi;
    files.dmon = dmon;
    files.dcgm = dcgm;
    files.startup_log = startup_log;
    files.training_log = training_log;
    const model::Observations obs = hwdb::read_observations(files);
    plan::DiagnosisInputs inputs;
    inputs.node = scenario_node(ctx, s, nullptr);
    if (s.training) {
        inputs.training = training_cost_inputs(ctx, s);
    }
    model::Diagnosis g = plan::diagnose_scenario(s, profile, obs, interrupt_token(), inputs);
    throw_if_interrupted();
    if (g.training && !emit.empty()) {
        throw UsageError("--emit prints an inference engine's launch and benchmark commands; a "
                         "training diagnosis has none (drop --emit)");
    }

    // The configuration to launch: the first re-estimated fix of the first row, else as is; the
    // benchmark that checks it runs at the load the fix was estimated at.
    model::Deployment launch = s.deployment;
    int bench_clients = g.running;
    std::string launch_why = "the scenario as it is (no re-estimated fix)";
    bool found = false;
    for (const auto& r : g.rows) {
        for (const auto& f : r.fixes) {
            if (!found && f.estimated && f.deployment) {
                launch = *f.deployment;
                if (f.workload && f.workload->concurrency) {
                    bench_clients = *f.workload->concurrency;
                }
                launch_why = r.id + ": " + f.change;
                found = true;
            }
        }
    }
    std::optional<LaunchCommands> launch_cmds;
    if (!emit.empty()) {
        launch_cmds = launch_commands(parse_emit_engine(emit), launch,
                                      BenchLoad{g.input_tokens, g.output_tokens, bench_clients, {}},
                                      s.scheduler);
    }
    if (vm.count("json")) {
        nlohmann::json j = diagnosis_json(s, g);
        if (launch_cmds) {
            j["emit"] = launch_json(*launch_cmds);
            j["emit"]["applies"] = launch_why;
        }
        *ctx.out << json_text(j) << '\n';
        return 0;
    }
    print_diagnosis(*ctx.out, s, g);
    if (launch_cmds) {
        *ctx.out << "\nwith the fix applied (" << launch_why << "):\n";
        print_launch(*ctx.out, *launch_cmds);
    }
    return 0;
}

} // namespace gpuplan::cli
