// `gpuplan calib import|fit|validate`: measured kernel times in, fitted efficiency profiles out,
// and the error of the model against measurements (docs/calibration.md).
#include "calib/bench_fit.hpp"
#include "calib/end_to_end.hpp"
#include "calib/error_bands.hpp"
#include "calib/fit.hpp"
#include "calib/importers.hpp"
#include "calib/power_fit.hpp"
#include "calib/profile_writer.hpp"
#include "calib/serving_runs.hpp"
#include "calib/training_runs.hpp"
#include "cli/cli_context.hpp"
#include "cli/json_out.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"
#include "cli/scenario_options.hpp"
#include "cli/table.hpp"
#include "hwdb/error_bands_io.hpp"
#include "hwdb/observed_readers.hpp"
#include "hwdb/profile_loader.hpp"
#include "model/diagnose.hpp"
#include "model/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>

namespace gpuplan::cli {
namespace {

namespace fs = std::filesystem;
using calib::ErrorStats;
using model::Measurement;
using model::OpClass;

std::string pct(double f) {
    return fixed(f * 100.0, 1) + "%";
}

std::string today() {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

std::string joined_command(const std::string& words, const std::vector<std::string>& args) {
    std::string s = "gpuplan " + words;
    for (const auto& a : args) {
        const bool plain = !a.empty() && a.find_first_of(" \t'\"\\$`") == std::string::npos;
        s += " " + (plain ? a : "'" + a + "'");
    }
    return s;
}

calib::Format format_of(const std::string& name) {
    if (auto f = calib::find_format(name)) {
        return *f;
    }
    throw UsageError("unknown --format '" + name +
                     "'; use auto, vidur-mlp, vidur-network, blis-gemm, blis-mha, llmcompass, "
                     "llmservingsim, torch, triton-cublas, cudnn-sdpa, cudnn-norms, azure-bench, "
                     "aiter-gemm, aiter-moe, torchao-moe or fused-moe");
}

// Rewrites each point's GPU to its hwdb canonical name where the hwdb knows it (the torch script
// writes the CUDA device name, e.g. "NVIDIA H100 80GB HBM3").
void canonicalize(std::vector<Measurement>& points, const hwdb::Database& db) {
    std::map<std::string, std::string> cache;
    for (auto& p : points) {
        auto it = cache.find(p.gpu);
        if (it == cache.end()) {
            const model::AcceleratorSpec* a = db.find_accelerator(p.gpu);
            it = cache.emplace(p.gpu, a ? a->name : p.gpu).first;
        }
        p.gpu = it->second;
    }
}

// Reads points from points/profile YAML files, CSV files and folders.
hwdb::PointSet load_points(const std::vector<std::string>& paths, calib::Format format,
                           const calib::ImportOptions& options) {
    hwdb::PointSet set;
    std::vector<fs::path> to_import;
    for (const auto& p : paths) {
        const fs::path path(p);
        const auto ext = path.extension();
        if (ext == ".yaml" || ext == ".yml") {
            hwdb::PointSet s = hwdb::parse_point_set(hwdb::read_text_file(path, "points file"), p);
            set.sources.insert(set.sources.end(), s.sources.begin(), s.sources.end());
            set.points.insert(set.points.end(), s.points.begin(), s.points.end());
        } else {
            to_import.push_back(path);
        }
    }
    if (!to_import.empty()) {
        calib::ImportResult r = calib::import_paths(to_import, format, options);
        set.sources.insert(set.sources.end(), r.sources.begin(), r.sources.end());
        set.points.insert(set.points.end(), r.points.begin(), r.points.end());
    }
    std::sort(set.sources.begin(), set.sources.end());
    set.sources.erase(std::unique(set.sources.begin(), set.sources.end()), set.sources.end());
    return set;
}

calib::Hardware hardware_for(const hwdb::Database& db, const model::AcceleratorSpec& gpu) {
    return calib::Hardware{gpu, db.interconnects()};
}

std::vector<fs::path> profile_folders(CliContext& ctx) {
    return hwdb::profile_folders(hwdb::default_folders(ctx.extra_hwdb));
}

std::string signed_pct(double e) {
    return (e >= 0 ? "+" : "") + fixed(e * 100.0, 0) + "%";
}

void print_coefficients(std::ostream& out, const model::EfficiencyProfile& p) {
    out << "  gemm               e_max " << fixed(p.gemm.e_max, 3) << ", m_half "
        << fixed(p.gemm.m_half, 1) << " tokens, nk_half " << fixed(p.gemm.nk_half, 0)
        << " elements; dtype scale";
    for (std::size_t i = 0; i < model::kComputeTypeCount; ++i) {
        if (p.gemm.dtype_scale[i] != 1.0) {
            out << " " << model::to_string(static_cast<model::ComputeType>(i)) << " "
                << fixed(p.gemm.dtype_scale[i], 3);
        }
    }
    for (std::size_t j = 0; j < model::kBlockScaledClassCount; ++j) {
        if (const auto& own = p.gemm.class_scale[j]) {
            out << " "
                << model::to_string(static_cast<model::GemmClass>(model::kComputeTypeCount + j))
                << " " << fixed(*own, 3);
        }
    }
    out << "\n  gemm_weight_only   max " << fixed(p.gemm_weight_only.max, 3)
        << " (of the gemm plateau), half " << fixed(p.gemm_weight_only.half, 1) << " tokens"
        << "\n  gemm_grouped       max " << fixed(p.gemm_grouped.max, 3)
        << " (of the gemm plateau), half " << fixed(p.gemm_grouped.half, 1) << " rows per expert"
        << "\n  memory             max " << fixed(p.memory.max, 3) << ", half "
        << fixed(p.memory.half / 1024.0, 1) << " KiB\n"
        << "  attention_prefill  max " << fixed(p.attention_prefill.max, 3) << ", half "
        << fixed(p.attention_prefill.half, 1) << " tokens\n"
        << "  attention_decode   max " << fixed(p.attention_decode.max, 3) << ", half "
        << fixed(p.attention_decode.half / 1024.0, 1) << " KiB\n"
        << "  comm               max " << fixed(p.comm.bandwidth.max, 3) << ", half "
        << fixed(p.comm.bandwidth.half / 1024.0, 1) << " KiB, overhead "
        << fixed(p.comm.collective_overhead.si() * 1e6, 2) << " us\n";
}

} // namespace

int run_calib_import(CliContext& ctx) {
    po::options_description desc("options");
    std::vector<std::string> files;
    std::string format_name = "auto";
    std::string gpu;
    std::string output;
    desc.add_options()("files", po::value(&files)->multitoken()->required(),
                       "measurement files or folders")(
        "format", po::value(&format_name),
        "auto (default), vidur-mlp, vidur-network, blis-gemm, blis-mha, llmcompass, llmservingsim, "
        "torch, triton-cublas, cudnn-sdpa, cudnn-norms, azure-bench, aiter-gemm, aiter-moe, "
        "torchao-moe, fused-moe")(
        "gpu", po::value(&gpu),
        "the GPU the data was measured on (hwdb name), when the path does not say")(
        "output,o", po::value(&output),
        "write the points as YAML to this file ('-': standard output)");
    po::positional_options_description pos;
    pos.add("files", -1);
    po::variables_map vm;
    if (!parse_options("calib import", ctx.args, desc, pos, vm, *ctx.out,
                       "FILE... [--format F] [--gpu NAME] [-o points.yaml]")) {
        return 0;
    }
    const calib::Format format = format_of(format_name);
    calib::ImportResult r;
    {
        std::vector<fs::path> paths(files.begin(), files.end());
        r = calib::import_paths(paths, format, calib::ImportOptions{gpu});
    }
    canonicalize(r.points, ctx.db());
    if (output == "-") {
        *ctx.out << calib::points_to_yaml(r.points, r.sources);
        return 0;
    }
    std::map<std::pair<std::string, std::string>, int> counts;
    for (const auto& p : r.points) {
        ++counts[{p.gpu, model::to_string(p.op_class)}];
    }
    Table t({"gpu", "op class", "points"});
    for (const auto& [key, n] : counts) {
        t.add_row({key.first, key.second, std::to_string(n)});
    }
    t.print(*ctx.out);
    *ctx.out << r.points.size() << " points from " << r.files.size() << " files";
    if (!r.skipped.empty()) {
        *ctx.out << "; " << r.skipped.size() << " files in no known format skipped";
    }
    *ctx.out << '\n';
    if (!output.empty()) {
        write_output_file(output, calib::points_to_yaml(r.points, r.sources));
        *ctx.err << "wrote " << output << '\n';
    }
    return 0;
}

namespace {

// ---------------------------------------------------------------- calib fit

/// The command line of `calib fit`.
struct FitRequest {
    std::vector<std::string> inputs;
    std::string gpu_name;
    std::string output;
    std::string name;
    std::string description;
    std::string format_name = "auto";
    model::ProvenanceKind kind = model::ProvenanceKind::EngineProfile;
    calib::FitOptions options;
    std::string base_path; ///< --base: start from this profile instead of the defaults
    bool with_points = false;
    bool json = false;
};

/// Parses `calib fit`'s options; nullopt when it printed its help.
std::optional<FitRequest> parse_fit(CliContext& ctx) {
    po::options_description desc("options");
    FitRequest req;
    std::string kind_name = "engine-profile";
    desc.add_options()("points", po::value(&req.inputs)->multitoken()->required(),
                       "points YAML files (calib import -o), measurement CSVs or folders")(
        "gpu", po::value(&req.gpu_name)->required(), "fit the points of this GPU (hwdb name)")(
        "output,o", po::value(&req.output),
        "write the profile YAML here (e.g. hwdb/profiles/NAME.yaml)")(
        "name", po::value(&req.name), "profile name (default: the GPU's name)")(
        "description", po::value(&req.description), "one line on what was measured")(
        "kind", po::value(&kind_name),
        "provenance kind: engine-profile (default) or microbenchmark")(
        "format", po::value(&req.format_name), "format of CSV inputs (default auto)")(
        "holdout-every", po::value(&req.options.holdout_every),
        "hold out 1 in N shapes (default 5)")("min-points", po::value(&req.options.min_points),
                                              "training points a class needs to be fitted "
                                              "(default 8)")(
        "keep", po::value(&req.options.keep)->multitoken(),
        "keep these parameters at the base profile's values: gemm.m_half, gemm.nk_half")(
        "base", po::value(&req.base_path),
        "start from this profile YAML instead of the spec-sheet defaults: classes with too few "
        "points keep its curves, and the default columns report its errors")(
        "with-points", "store the measured points in the profile")("json",
                                                                   "print the fit report as JSON");
    po::positional_options_description pos;
    pos.add("points", -1);
    po::variables_map vm;
    if (!parse_options("calib fit", ctx.args, desc, pos, vm, *ctx.out,
                       "POINTS... --gpu NAME [-o hwdb/profiles/NAME.yaml]\n"
                       "       gpuplan calib fit BENCH.json... --scenario FILE [-o PROFILE.yaml] "
                       "(the per-step overhead from benchmark results)")) {
        return std::nullopt;
    }
    if (kind_name == "microbenchmark") {
        req.kind = model::ProvenanceKind::Microbenchmark;
    } else if (kind_name != "engine-profile") {
        throw UsageError("unknown --kind '" + kind_name +
                         "'; use engine-profile or microbenchmark");
    }
    if (req.options.min_points < 2) {
        throw UsageError("--min-points must be at least 2");
    }
    for (const auto& k : req.options.keep) {
        const auto& names = calib::keepable_parameters();
        if (std::find(names.begin(), names.end(), k) == names.end()) {
            throw UsageError("unknown --keep parameter '" + k +
                             "'; use gemm.m_half or gemm.nk_half");
        }
    }
    req.with_points = vm.count("with-points") > 0;
    req.json = vm.count("json") > 0;
    return req;
}

/// Throws InputError, listing the GPUs the points are from, when none is from `gpu`.
void require_points_of(const std::vector<Measurement>& points, const model::AcceleratorSpec& gpu) {
    const auto n_gpu = std::count_if(points.begin(), points.end(),
                                     [&](const Measurement& m) { return m.gpu == gpu.name; });
    if (n_gpu > 0) {
        return;
    }
    std::set<std::string> gpus;
    for (const auto& p : points) {
        gpus.insert(p.gpu);
    }
    std::string list;
    for (const auto& g : gpus) {
        list += (list.empty() ? "" : ", ") + g;
    }
    throw InputError("no point was measured on '" + gpu.name +
                     "'; the points are from: " + (list.empty() ? "nothing" : list));
}

nlohmann::json fit_report_json(const calib::FitReport& rep, const model::AcceleratorSpec& gpu) {
    nlohmann::json j;
    j["gpu"] = gpu.name;
    j["points"] = rep.points;
    j["skipped"] = rep.skipped;
    for (const auto& c : rep.classes) {
        j["classes"].push_back({{"op_class", model::to_string(c.op_class)},
                                {"fitted", c.fitted},
                                {"train_points", c.train.n},
                                {"held_out_points", c.held_out.n},
                                {"train_mape", c.train.mape},
                                {"held_out_mape", c.held_out.mape},
                                {"held_out_median", c.held_out.median},
                                {"held_out_p90", c.held_out.p90},
                                {"default_held_out_mape", c.default_held_out.mape},
                                {"default_held_out_p90", c.default_held_out.p90}});
    }
    j["held_out_mape"] = rep.held_out.mape;
    j["default_held_out_mape"] = rep.default_held_out.mape;
    return j;
}

/// The per-class table of a fit: training and held-out points, held-out errors of the fitted
/// and of the base profile.
void print_fit_classes(std::ostream& out, const calib::FitReport& rep) {
    Table t({"op class", "fitted", "train", "held out", "MAPE", "median", "P90", "max",
             "default MAPE", "default P90"});
    for (const auto& c : rep.classes) {
        t.add_row({model::to_string(c.op_class), c.fitted ? "yes" : "no (base)",
                   std::to_string(c.train.n), std::to_string(c.held_out.n), pct(c.held_out.mape),
                   pct(c.held_out.median), pct(c.held_out.p90), pct(c.held_out.max),
                   pct(c.default_held_out.mape), pct(c.default_held_out.p90)});
    }
    t.add_row({"all", "", "", std::to_string(rep.held_out.n), pct(rep.held_out.mape),
               pct(rep.held_out.median), pct(rep.held_out.p90), pct(rep.held_out.max),
               pct(rep.default_held_out.mape), pct(rep.default_held_out.p90)});
    t.add_row({"all, time-weighted", "", "", std::to_string(rep.held_out.n),
               pct(rep.held_out_time_weighted.mape), pct(rep.held_out_time_weighted.median),
               pct(rep.held_out_time_weighted.p90), "",
               pct(rep.default_held_out_time_weighted.mape),
               pct(rep.default_held_out_time_weighted.p90)});
    t.print(out);
}

void print_fit_report(std::ostream& out, const calib::FitReport& rep,
                      const model::AcceleratorSpec& gpu, int holdout_every) {
    out << "fit for " << gpu.name << ": " << rep.points << " points (" << rep.skipped
        << " not predictable), 1 in " << holdout_every << " shapes held out, " << rep.iterations
        << " refinement iterations\n\n";
    print_fit_classes(out, rep);
    out << "\nfitted coefficients\n";
    print_coefficients(out, rep.profile);
    for (const auto& o : rep.offsets) {
        out << "  harness offset     " << o.source << " " << fixed(o.offset.si() * 1e6, 1)
            << " us (host-timed, " << o.points << " points)\n";
    }
    out << "\nworst held-out points\n";
    for (const auto& c : rep.classes) {
        for (std::size_t i = 0; i < c.worst.size() && i < 2; ++i) {
            const auto& w = c.worst[i];
            out << "  " << signed_pct(w.rel_error) << "  " << calib::describe(w.point) << '\n';
        }
    }
    for (const auto& n : rep.notes) {
        out << "note: " << n << '\n';
    }
}

/// The profile's provenance: name, kind, description, command, date and the files the GPU's
/// points came from (not every file of a folder).
calib::ProfileMeta fit_profile_meta(CliContext& ctx, const FitRequest& req,
                                    const calib::FitReport& rep, const model::AcceleratorSpec& gpu,
                                    const std::vector<Measurement>& points) {
    calib::ProfileMeta meta;
    meta.name = req.name.empty() ? gpu.name : req.name;
    meta.kind = req.kind;
    meta.description = req.description.empty()
                           ? "fitted by gpuplan calib fit to " + std::to_string(rep.points) +
                                 " measured kernel and collective times on " + gpu.name
                           : req.description;
    meta.command = joined_command("calib fit", ctx.args);
    meta.date = today();
    std::set<std::string> cited;
    for (const auto& p : points) {
        if (p.gpu != gpu.name || p.source_file.empty()) {
            continue;
        }
        std::error_code ec;
        cited.insert(fs::exists(p.source_file, ec) ? calib::source_citation(p.source_file)
                                                   : p.source_file);
    }
    meta.sources.assign(cited.begin(), cited.end());
    return meta;
}

/// Writes the fitted profile YAML to req.output (with the GPU's points under --with-points).
void write_fit_profile(CliContext& ctx, const FitRequest& req, const calib::FitReport& rep,
                       const model::AcceleratorSpec& gpu, const std::vector<Measurement>& points) {
    const calib::ProfileMeta meta = fit_profile_meta(ctx, req, rep, gpu, points);
    std::vector<Measurement> keep;
    if (req.with_points) {
        for (const auto& p : points) {
            if (p.gpu == gpu.name) {
                keep.push_back(p);
            }
        }
    }
    const hwdb::ProfileFile file = calib::make_profile_file(rep, gpu, meta, std::move(keep));
    write_output_file(req.output, calib::profile_to_yaml(file));
    *ctx.err << "wrote " << req.output << '\n';
}

} // namespace

namespace {

/// `calib fit BENCH... --scenario FILE`: the profile's per-step overhead fitted to benchmark
/// results of the scenario's deployment at several loads (calib::fit_step_overhead).
int fit_bench_results(CliContext& ctx) {
    po::options_description desc("options");
    std::vector<std::string> files;
    std::string scenario, profile_path, output;
    desc.add_options()("bench", po::value(&files)->multitoken()->required(),
                       "benchmark results (vllm bench serve --save-result, GuideLLM, AIPerf) of "
                       "the scenario's deployment at several loads")(
        "scenario", po::value(&scenario)->required(), "the deployment the benchmarks ran")(
        "profile", po::value(&profile_path),
        "the profile to adjust (default: the GPU's profile, as estimate chooses it)")(
        "output,o", po::value(&output),
        "write the adjusted profile YAML here")("json", "print the fit as JSON");
    po::positional_options_description pos;
    pos.add("bench", -1);
    po::variables_map vm;
    if (!parse_options("calib fit", ctx.args, desc, pos, vm, *ctx.out,
                       "BENCH.json... --scenario FILE [--profile FILE] [-o PROFILE.yaml]")) {
        return 0;
    }
    ScenarioFlags flags;
    flags.file = scenario;
    flags.profile = profile_path;
    const model::Scenario s = build_scenario(ctx, flags);
    const model::EfficiencyProfile base = choose_profile(ctx, flags, s.deployment.gpu);
    std::vector<hwdb::LabelledBench> results;
    for (const auto& f : files) {
        for (auto& r : hwdb::read_bench_results(f)) {
            r.label = fs::path(r.label).filename().string();
            results.push_back(std::move(r));
        }
    }
    const calib::StepOverheadFit fit = calib::fit_step_overhead(s, base, results);
    if (vm.count("json")) {
        nlohmann::json benches = nlohmann::json::array();
        for (const auto& b : fit.benches) {
            benches.push_back({{"benchmark", b.label},
                               {"running", b.running},
                               {"measured_tpot_s", b.measured_s},
                               {"predicted_before_s", b.before_s},
                               {"predicted_after_s", b.after_s}});
        }
        *ctx.out << json_text(nlohmann::json{{"scenario", s.name},
                                             {"step_overhead_before_s", fit.base.si()},
                                             {"step_overhead_s", fit.fitted.si()},
                                             {"mape_before", fit.mape_before},
                                             {"mape_after", fit.mape_after},
                                             {"benchmarks", benches}})
                 << '\n';
    } else {
        *ctx.out
            << s.name << ": per-step overhead fitted to " << fit.benches.size()
            << " benchmark results (mean TPOT at each benchmark's concurrency and lengths)\n\n";
        Table t({"benchmark", "running", "measured TPOT", "before", "after"});
        for (const auto& b : fit.benches) {
            t.add_row({b.label, std::to_string(b.running), fixed(b.measured_s * 1e3, 2) + " ms",
                       fixed(b.before_s * 1e3, 2) + " ms", fixed(b.after_s * 1e3, 2) + " ms"});
        }
        t.print(*ctx.out);
        *ctx.out << "\nstep_overhead " << fixed(fit.base.si() * 1e3, 3) << " ms -> "
                 << fixed(fit.fitted.si() * 1e3, 3) << " ms; mean absolute TPOT error "
                 << fixed(fit.mape_before * 100, 1) << " % -> " << fixed(fit.mape_after * 100, 1)
                 << " %\n";
    }
    if (!output.empty()) {
        hwdb::ProfileFile file;
        if (!profile_path.empty()) {
            file = hwdb::read_profile_file(profile_path);
        } else if (const auto found = hwdb::find_profile_file_for_gpu(
                       hwdb::profile_folders(hwdb::default_folders(ctx.extra_hwdb)),
                       s.deployment.gpu)) {
            file = *found; // the shipped file with its residuals, as estimate chose it
        }
        file.profile = fit.profile;
        file.gpu = s.deployment.gpu.name;
        if (file.architecture.empty())
            file.architecture = s.deployment.gpu.architecture;
        file.description = fit.profile.provenance.description;
        file.command = joined_command("calib fit", ctx.args);
        file.date = today();
        for (const auto& f : files) {
            std::error_code ec;
            file.sources.push_back(fs::exists(f, ec) ? calib::source_citation(f) : f);
        }
        write_output_file(output, calib::profile_to_yaml(file));
        *ctx.err << "wrote " << output << '\n';
    }
    return 0;
}

} // namespace

int run_calib_fit(CliContext& ctx) {
    if (std::find(ctx.args.begin(), ctx.args.end(), "--scenario") != ctx.args.end()) {
        return fit_bench_results(ctx);
    }
    const std::optional<FitRequest> req = parse_fit(ctx);
    if (!req) {
        return 0;
    }
    const model::AcceleratorSpec& gpu = ctx.db().accelerator(req->gpu_name);
    hwdb::PointSet set = load_points(req->inputs, format_of(req->format_name), {});
    canonicalize(set.points, ctx.db());
    require_points_of(set.points, gpu);
    const calib::Hardware hw = hardware_for(ctx.db(), gpu);
    const model::EfficiencyProfile base = req->base_path.empty()
                                              ? model::default_profile()
                                              : hwdb::read_profile_file(req->base_path).profile;
    const calib::FitReport rep = calib::fit_profile(set.points, hw, base, req->options);
    throw_if_interrupted();
    if (req->json) {
        *ctx.out << json_text(fit_report_json(rep, gpu)) << '\n';
    } else {
        print_fit_report(*ctx.out, rep, gpu, req->options.holdout_every);
    }
    if (!req->output.empty()) {
        write_fit_profile(ctx, *req, rep, gpu, set.points);
    }
    return 0;
}

namespace {

/// `calib validate BENCH.json... --scenario FILE`: the scenario's prediction at each benchmark's
/// load (its concurrency and request lengths, as `gpuplan diagnose` takes them) against what the
/// benchmark measured, per figure, with the relative error (predicted − measured) / measured.
int validate_bench_results(CliContext& ctx, const std::string& scenario,
                           const std::vector<std::string>& files,
                           const std::vector<std::string>& profiles, bool as_json) {
    if (profiles.size() > 1) {
        throw UsageError("--scenario takes one --profile at most");
    }
    ScenarioFlags flags;
    flags.file = scenario;
    if (!profiles.empty())
        flags.profile = profiles.front();
    const model::Scenario s = build_scenario(ctx, flags);
    const model::EfficiencyProfile profile = choose_profile(ctx, flags, s.deployment.gpu);
    nlohmann::json out = nlohmann::json::array();
    Table t({"benchmark", "figure", "measured", "predicted", "error"});
    double sum_abs = 0;
    int n = 0;
    std::vector<hwdb::LabelledBench> results;
    for (const auto& f : files) {
        for (auto& r : hwdb::read_bench_results(f))
            results.push_back(std::move(r));
    }
    for (const auto& [f, bench] : results) {
        model::Observations obs;
        obs.bench = bench;
        const model::Diagnosis g = model::diagnose(s.deployment, s.workload, profile, obs);
        nlohmann::json j{{"file", f},
                         {"tool", bench.tool},
                         {"running", g.running},
                         {"input_tokens", g.input_tokens},
                         {"output_tokens", g.output_tokens},
                         {"figures", nlohmann::json::array()}};
        for (const auto& c : g.comparisons) {
            const double err = c.observed > 0 ? (c.predicted - c.observed) / c.observed : 0.0;
            sum_abs += std::abs(err);
            ++n;
            j["figures"].push_back({{"figure", c.figure},
                                    {"unit", c.unit},
                                    {"measured", c.observed},
                                    {"predicted", c.predicted},
                                    {"error", err}});
            t.add_row({fs::path(f).filename().string(), c.figure,
                       fixed(c.observed, 1) + " " + c.unit, fixed(c.predicted, 1) + " " + c.unit,
                       fixed(err * 100, 1) + " %"});
        }
        out.push_back(j);
    }
    if (as_json) {
        *ctx.out << json_text(nlohmann::json{{"scenario", s.name},
                                             {"results", out},
                                             {"mape", n > 0 ? sum_abs / n : 0.0}})
                 << '\n';
        return 0;
    }
    *ctx.out << s.name
             << ": model against benchmark results (error = (predicted - measured) / measured; "
             << "each at the benchmark's concurrency and request lengths)\n\n";
    t.print(*ctx.out);
    *ctx.out << "\nmean absolute error " << fixed(n > 0 ? sum_abs / n * 100 : 0.0, 1) << " % over "
             << n << " figures\n";
    return 0;
}

// ---------------------------------------------------------------- calib validate

/// The command line of `calib validate`.
struct ValidateRequest {
    std::vector<std::string> inputs;
    std::vector<std::string> profiles;
    std::string only_gpu;
    int holdout_every = 5;
    bool all = false;
    bool by_op = false;
    bool json = false;
    bool markdown = false;   ///< only the per-class band table, in Markdown
    std::string write_bands; ///< write the measured bands here (hwdb/error_bands.yaml)
    std::optional<std::string> scenario;
};

/// Parses `calib validate`'s options; nullopt when it printed its help.
std::optional<ValidateRequest> parse_validate(CliContext& ctx) {
    po::options_description desc("options");
    ValidateRequest req;
    desc.add_options()(
        "dirs", po::value(&req.inputs)->multitoken()->required(),
        "measurement folders or files (the data sets of docs/calibration.md), or "
        "points YAML; vLLM serving runs found there are replayed through the simulator")(
        "profile", po::value(&req.profiles)->multitoken(),
        "profile file(s) to validate (default: hwdb/profiles, by GPU)")(
        "gpu", po::value(&req.only_gpu),
        "only this GPU")("all", "use every point (default: only the shapes held out of the fit)")(
        "by-op", "also break the errors down by operator within each class")(
        "holdout-every", po::value(&req.holdout_every),
        "the fit's hold-out rule: 1 in N shapes (default 5)")(
        "scenario", po::value<std::string>(),
        "the inputs are benchmark results of this deployment (`vllm bench serve --save-result`, "
        "GuideLLM benchmarks.json, AIPerf profile_export_aiperf.json): report the model's error "
        "on them")("write-bands", po::value(&req.write_bands),
                   "write the per-class error bands of the whole-step and serving validation to "
                   "this file (hwdb/error_bands.yaml; docs/validation.md)")(
        "markdown", "print only the per-class error-band table, as Markdown")(
        "json", "machine-readable output");
    po::positional_options_description pos;
    pos.add("dirs", -1);
    po::variables_map vm;
    if (!parse_options("calib validate", ctx.args, desc, pos, vm, *ctx.out,
                       "DIR... [--profile FILE] [--gpu NAME] [--all] [--json] [--write-bands FILE] "
                       "[--markdown] | BENCH.json... "
                       "--scenario FILE")) {
        return std::nullopt;
    }
    req.all = vm.count("all") > 0;
    req.by_op = vm.count("by-op") > 0;
    req.json = vm.count("json") > 0;
    req.markdown = vm.count("markdown") > 0;
    if (req.markdown && req.json) {
        throw UsageError("calib validate: --markdown and --json both choose the output format; "
                         "pass one of them");
    }
    if (vm.count("scenario")) {
        req.scenario = vm["scenario"].as<std::string>();
    }
    return req;
}

/// One GPU's kernel-level validation: its profile and the errors of that profile and of the
/// uncalibrated default on its points.
struct GpuValidation {
    const model::AcceleratorSpec* gpu = nullptr;
    std::optional<hwdb::ProfileFile> file; ///< the profile validated; none: the default
    model::EfficiencyProfile profile;
    calib::Subset subset = calib::Subset::HeldOut;
    calib::Evaluation fitted;
    calib::Evaluation def;
};

/// The profile file to validate for `gpu`: a given one written for it (the only one given when
/// --gpu names the GPU), else with none given the one hwdb/profiles holds for it.
std::optional<hwdb::ProfileFile> profile_file_for(CliContext& ctx,
                                                  const std::vector<hwdb::ProfileFile>& given,
                                                  const std::string& only,
                                                  const model::AcceleratorSpec& gpu) {
    std::optional<hwdb::ProfileFile> pf;
    for (const auto& g : given) {
        if (g.gpu == gpu.name || (given.size() == 1 && !only.empty())) {
            pf = g;
        }
    }
    if (!pf && given.empty()) {
        pf = hwdb::find_profile_file_for_gpu(profile_folders(ctx), gpu);
    }
    return pf;
}

nlohmann::json gpu_validation_json(const GpuValidation& v) {
    nlohmann::json g = {{"gpu", v.gpu->name},
                        {"profile", v.file ? v.file->profile.provenance.file : std::string()},
                        {"provenance", v.profile.provenance.description},
                        {"subset", v.subset == calib::Subset::All ? "all" : "held_out"},
                        {"points", v.fitted.all.n},
                        {"skipped", v.fitted.skipped}};
    for (std::size_t i = 0; i < v.fitted.classes.size(); ++i) {
        const auto& c = v.fitted.classes[i];
        const auto& d = v.def.classes[i];
        g["classes"].push_back({{"op_class", model::to_string(c.op_class)},
                                {"points", c.stats.n},
                                {"mape", c.stats.mape},
                                {"median", c.stats.median},
                                {"p90", c.stats.p90},
                                {"max", c.stats.max},
                                {"default_mape", d.stats.mape},
                                {"default_median", d.stats.median},
                                {"default_p90", d.stats.p90}});
    }
    g["mape"] = v.fitted.all.mape;
    g["default_mape"] = v.def.all.mape;
    g["time_weighted_mape"] = v.fitted.all_time_weighted.mape;
    g["default_time_weighted_mape"] = v.def.all_time_weighted.mape;
    return g;
}

/// The per-class table of one GPU: the profile's and the default's errors, the worst point.
void print_class_errors(std::ostream& out, const GpuValidation& v) {
    const calib::Evaluation& fitted = v.fitted;
    const calib::Evaluation& def = v.def;
    Table t({"op class", "points", "MAPE", "median", "P90", "default MAPE", "default median",
             "default P90", "worst (profile)"});
    for (std::size_t i = 0; i < fitted.classes.size(); ++i) {
        const auto& c = fitted.classes[i];
        const auto& d = def.classes[i];
        std::string worst;
        if (!c.worst.empty()) {
            const auto& w = c.worst.front();
            worst = signed_pct(w.rel_error) + " " +
                    fs::path(w.point.source_file).filename().string() + ":" +
                    std::to_string(w.point.row) + " " + w.point.op;
        }
        t.add_row({model::to_string(c.op_class), std::to_string(c.stats.n), pct(c.stats.mape),
                   pct(c.stats.median), pct(c.stats.p90), pct(d.stats.mape), pct(d.stats.median),
                   pct(d.stats.p90), worst});
    }
    t.add_row({"all", std::to_string(fitted.all.n), pct(fitted.all.mape), pct(fitted.all.median),
               pct(fitted.all.p90), pct(def.all.mape), pct(def.all.median), pct(def.all.p90), ""});
    t.add_row({"all, time-weighted", std::to_string(fitted.all.n),
               pct(fitted.all_time_weighted.mape), pct(fitted.all_time_weighted.median),
               pct(fitted.all_time_weighted.p90), pct(def.all_time_weighted.mape),
               pct(def.all_time_weighted.median), pct(def.all_time_weighted.p90), ""});
    t.print(out);
    out << '\n';
}

/// The per-operator table of one GPU (--by-op).
void print_op_errors(std::ostream& out, const GpuValidation& v) {
    Table b({"op class", "op", "points", "MAPE", "bias", "P90", "default MAPE", "default bias"});
    for (std::size_t i = 0; i < v.fitted.ops.size() && i < v.def.ops.size(); ++i) {
        const auto& f = v.fitted.ops[i];
        const auto& d = v.def.ops[i];
        b.add_row({model::to_string(f.op_class), f.op, std::to_string(f.stats.n), pct(f.stats.mape),
                   signed_pct(f.mean_signed), pct(f.stats.p90), pct(d.stats.mape),
                   signed_pct(d.mean_signed)});
    }
    b.print(out);
    out << '\n';
}

void print_gpu_validation(std::ostream& out, const GpuValidation& v, bool by_op) {
    out << v.gpu->name << ": "
        << (v.file ? v.file->profile.provenance.file : std::string("no profile")) << " ("
        << model::to_string(v.profile.provenance.kind) << ")\n  "
        << v.profile.provenance.description << "\n  "
        << (v.subset == calib::Subset::All ? "all points" : "held-out shapes only") << ", "
        << v.fitted.all.n << " points";
    if (v.fitted.skipped > 0) {
        out << ", " << v.fitted.skipped << " not predictable (unknown link or data type)";
    }
    out << "\n\n";
    print_class_errors(out, v);
    if (by_op) {
        print_op_errors(out, v);
    }
}

/// Kernel level: each GPU's points of the inputs against its profile and the default. GPUs not
/// in the hwdb go to `unknown`; with --json each GPU is appended to `json`.
void validate_kernels(CliContext& ctx, const ValidateRequest& req, nlohmann::json& json,
                      std::vector<std::string>& unknown) {
    std::vector<hwdb::ProfileFile> given;
    for (const auto& p : req.profiles) {
        given.push_back(hwdb::read_profile_file(p));
    }
    hwdb::PointSet set = load_points(req.inputs, calib::Format::Auto, {});
    canonicalize(set.points, ctx.db());
    std::string only;
    if (!req.only_gpu.empty()) {
        only = ctx.db().accelerator(req.only_gpu).name;
    }
    std::map<std::string, int> per_gpu;
    for (const auto& p : set.points) {
        ++per_gpu[p.gpu];
    }
    const model::EfficiencyProfile base = model::default_profile();
    for (const auto& [gpu_name, count] : per_gpu) {
        if (!only.empty() && gpu_name != only) {
            continue;
        }
        GpuValidation v;
        v.gpu = ctx.db().find_accelerator(gpu_name);
        if (!v.gpu) {
            unknown.push_back(gpu_name + " (" + std::to_string(count) + " points)");
            continue;
        }
        v.file = profile_file_for(ctx, given, only, *v.gpu);
        v.profile = v.file ? v.file->profile : base;
        const std::vector<hwdb::TimingOffset> offsets =
            v.file ? v.file->timing_offsets : std::vector<hwdb::TimingOffset>{};
        const calib::Hardware hw = hardware_for(ctx.db(), *v.gpu);
        v.subset = req.all ? calib::Subset::All : calib::Subset::HeldOut;
        v.fitted = calib::evaluate(set.points, hw, v.profile, offsets, v.subset, req.holdout_every);
        v.def = calib::evaluate(set.points, hw, base, offsets, v.subset, req.holdout_every);
        if (req.json) {
            json.push_back(gpu_validation_json(v));
        } else {
            print_gpu_validation(*ctx.out, v, req.by_op);
        }
    }
}

/// The validation sets' names in the band table and hwdb/error_bands.yaml.
const std::string kSplitwiseSet = "SplitwiseSim perf_model.csv (Mutinifni/splitwise-sim)";
const std::string kServingSet = "LLMServingSim vLLM runs (casys-kaist/LLMServingSim)";

/// SplitwiseSim's perf_model.csv in or at an input, or an empty path.
fs::path splitwise_csv_in(const std::string& in) {
    for (const fs::path& cand : {fs::path(in) / "splitwise/data/perf_model.csv",
                                 fs::path(in) / "data/perf_model.csv", fs::path(in)}) {
        std::error_code ec;
        if (cand.filename() == "perf_model.csv" && fs::is_regular_file(cand, ec)) {
            return cand;
        }
    }
    return {};
}

nlohmann::json step_stats_json(const calib::StepErrorStats& e) {
    return nlohmann::json{{"points", e.points}, {"mape", e.mape}, {"median", e.median},
                          {"p90", e.p90},       {"bias", e.bias}, {"worst", e.worst}};
}

void print_step_validation(std::ostream& out, const fs::path& csv,
                           const calib::EndToEndReport& fitted, const calib::EndToEndReport& spec) {
    out << "end to end: whole prefill and decode steps vs " << csv.string() << "\n";
    Table e({"metric", "points", "MAPE", "median", "P90", "bias", "default MAPE", "default bias"});
    const auto row = [&](const char* name, const calib::StepErrorStats& f,
                         const calib::StepErrorStats& d) {
        e.add_row({name, std::to_string(f.points), pct(f.mape), pct(f.median), pct(f.p90),
                   signed_pct(f.bias), pct(d.mape), signed_pct(d.bias)});
    };
    row("prompt time", fitted.prompt, spec.prompt);
    row("token time", fitted.token, spec.token);
    e.print(out);
    out << "  " << fitted.rejected_prompt_rows
        << " prompt rows left out: faster than the datasheet peak allows (docs/calibration.md "
           "§5b)\n\n";
}

/// Whole engine steps: SplitwiseSim's measured Llama-2-70B prompt and token times, when an
/// input folder holds them (calib/end_to_end.hpp), with the profiles and with the default.
void validate_steps(CliContext& ctx, const ValidateRequest& req, nlohmann::json& json,
                    std::vector<calib::BandSample>& samples) {
    const model::EfficiencyProfile base = model::default_profile();
    for (const auto& in : req.inputs) {
        const fs::path csv = splitwise_csv_in(in);
        if (csv.empty()) {
            continue;
        }
        const auto runs = calib::import_splitwise(csv);
        const auto folders = profile_folders(ctx);
        const auto fitted =
            calib::validate_step_runs(runs, ctx.db(), [&](const model::AcceleratorSpec& gpu) {
                return hwdb::find_profile_for_gpu(folders, gpu).value_or(base);
            });
        const auto spec = calib::validate_step_runs(
            runs, ctx.db(), [&](const model::AcceleratorSpec&) { return base; });
        if (!runs.empty()) {
            for (auto& b :
                 calib::step_band_samples(fitted, runs.front().model, ctx.db(), kSplitwiseSet)) {
                samples.push_back(std::move(b));
            }
        }
        if (req.markdown) {
            continue;
        }
        if (req.json) {
            json.push_back({{"end_to_end", csv.string()},
                            {"prompt", step_stats_json(fitted.prompt)},
                            {"token", step_stats_json(fitted.token)},
                            {"default_prompt", step_stats_json(spec.prompt)},
                            {"default_token", step_stats_json(spec.token)},
                            {"rejected_prompt_rows", fitted.rejected_prompt_rows}});
        } else {
            print_step_validation(*ctx.out, csv, fitted, spec);
        }
    }
}

nlohmann::json latency_json(const calib::LatencySummary& m, const calib::LatencySummary& s) {
    const auto err = [](double got, double want) {
        return want != 0 ? nlohmann::json((got - want) / want) : nlohmann::json(nullptr);
    };
    return nlohmann::json{
        {"measured", {{"mean", m.mean}, {"p50", m.p50}, {"p99", m.p99}}},
        {"simulated", {{"mean", s.mean}, {"p50", s.p50}, {"p99", s.p99}}},
        {"error",
         {{"mean", err(s.mean, m.mean)}, {"p50", err(s.p50, m.p50)}, {"p99", err(s.p99, m.p99)}}}};
}

nlohmann::json serving_json(const fs::path& dir, const calib::ServingComparison& c) {
    nlohmann::json j = {{"serving_run", dir.string()},
                        {"label", c.label},
                        {"requests", c.requests},
                        {"vllm_version", c.vllm_version},
                        {"replayed", c.replayed}};
    if (!c.replayed) {
        j["skipped"] = c.skip_reason;
    } else {
        j["gpu"] = c.gpu;
        j["model"] = c.model;
        j["profile"] = c.default_profile ? "default" : c.profile;
        j["ttft_s"] = latency_json(c.measured.ttft, c.simulated.ttft);
        j["tpot_s"] = latency_json(c.measured.tpot, c.simulated.tpot);
        j["e2e_s"] = latency_json(c.measured.e2e, c.simulated.e2e);
    }
    return j;
}

/// Mean, p50 and p99 of one latency, measured and simulated, `unit` per second.
void add_latency_rows(Table& t, const char* name, const calib::LatencySummary& m,
                      const calib::LatencySummary& s, double unit) {
    const std::pair<const char*, double calib::LatencySummary::*> cols[] = {
        {"mean", &calib::LatencySummary::mean},
        {"p50", &calib::LatencySummary::p50},
        {"p99", &calib::LatencySummary::p99}};
    for (const auto& [col, member] : cols) {
        const double want = m.*member;
        const double got = s.*member;
        t.add_row({std::string(name) + " " + col, fixed(want * unit, 3), fixed(got * unit, 3),
                   want != 0
                       ? (got >= want ? "+" : "") + fixed(100.0 * (got - want) / want, 1) + "%"
                       : std::string("-")});
    }
}

void print_serving(std::ostream& out, const calib::ServingComparison& c) {
    if (!c.replayed) {
        out << "serving run " << c.label << ": skipped, " << c.skip_reason << "\n\n";
        return;
    }
    out << "serving run " << c.label << " (" << c.requests << " requests, vLLM " << c.vllm_version
        << ") vs the simulator: " << c.model << " on " << c.gpu << ", "
        << (c.default_profile ? std::string("default spec-sheet profile") : "profile: " + c.profile)
        << "\n";
    Table t({"metric", "measured", "simulated", "error"});
    add_latency_rows(t, "TTFT s", c.measured.ttft, c.simulated.ttft, 1.0);
    add_latency_rows(t, "TPOT ms", c.measured.tpot, c.simulated.tpot, 1e3);
    add_latency_rows(t, "E2E s", c.measured.e2e, c.simulated.e2e, 1.0);
    t.print(out);
    out << '\n';
}

/// Whole serving runs: measured vLLM runs (LLMServingSim's bench/examples) replayed through
/// the simulator (calib/serving_runs.hpp).
void validate_serving_runs(CliContext& ctx, const ValidateRequest& req, nlohmann::json& json,
                           std::vector<calib::BandSample>& samples) {
    for (const auto& in : req.inputs) {
        for (const auto& dir : calib::find_serving_runs(in)) {
            const auto folders = profile_folders(ctx);
            const calib::ServingComparison c = calib::replay_serving_run(
                calib::read_serving_run(dir), ctx.db(), [&](const model::AcceleratorSpec& gpu) {
                    return hwdb::find_profile_for_gpu(folders, gpu);
                });
            for (auto& b : calib::serving_band_samples(c, ctx.db(), kServingSet)) {
                samples.push_back(std::move(b));
            }
            if (req.markdown) {
                continue;
            }
            if (req.json) {
                json.push_back(serving_json(dir, c));
            } else {
                print_serving(*ctx.out, c);
            }
        }
    }
}

/// Whole training runs: the published runs of a runs.yaml (validation/published-training)
/// replayed through the training planner (calib/training_runs.hpp).
void validate_training_runs(CliContext& ctx, const std::vector<fs::path>& files,
                            const ValidateRequest& req, nlohmann::json& json,
                            std::vector<calib::BandSample>& samples) {
    const auto folders = profile_folders(ctx);
    for (const auto& file : files) {
        const hwdb::PublishedTrainingRuns set = hwdb::read_training_runs_file(file);
        std::vector<calib::TrainingComparison> runs;
        for (const auto& run : set.runs) {
            runs.push_back(
                calib::replay_training_run(run, ctx.db(), [&](const model::AcceleratorSpec& gpu) {
                    return hwdb::find_profile_for_gpu(folders, gpu);
                }));
            throw_if_interrupted();
        }
        for (auto& b : calib::training_band_samples(runs, set.set)) {
            samples.push_back(std::move(b));
        }
        if (req.markdown) {
            continue;
        }
        if (req.json) {
            nlohmann::json rows = nlohmann::json::array();
            for (const auto& c : runs) {
                rows.push_back({{"run", c.name},
                                {"source", c.source},
                                {"gpu", c.gpu},
                                {"gpus", c.gpus},
                                {"layout", c.layout},
                                {"layout_searched", c.searched},
                                {"fits", c.fits},
                                {"figure", hwdb::to_string(c.figure)},
                                {"published", c.published},
                                {"predicted", c.predicted},
                                {"step_time_error", c.step_error}});
            }
            json.push_back({{"training_runs", set.set}, {"runs", rows}});
            continue;
        }
        *ctx.out << "training runs: " << set.set << " (" << file.string()
                 << "), the planner against the published figure; step-time error (+: the "
                    "model is slow)\n";
        Table t({"run", "GPUs", "layout", "figure", "published", "predicted", "step error"});
        for (const auto& c : runs) {
            t.add_row({c.name + (c.fits ? "" : " (does not fit)"), std::to_string(c.gpus),
                       c.layout + (c.searched ? " (searched)" : ""), hwdb::to_string(c.figure),
                       fixed(c.published, c.published < 10 ? 3 : 1),
                       fixed(c.predicted, c.predicted < 10 ? 3 : 1),
                       (c.step_error >= 0 ? "+" : "") + fixed(c.step_error * 100, 1) + "%"});
        }
        t.print(*ctx.out);
        *ctx.out << '\n';
    }
}

/// One row per measured band: its class, n, mean signed and P90 absolute error, set.
void print_band_table(std::ostream& out, const model::ErrorBands& bands, bool markdown) {
    const std::vector<std::string> header = {"figure",      "GPU",       "family", "engine",
                                             "model",       "precision", "regime", "n",
                                             "mean signed", "P90 abs",   "set",    "fitted on it"};
    std::vector<std::vector<std::string>> rows;
    for (const model::MeasuredBand& b : bands.bands) {
        // A family aggregate names the GPUs it pools.
        std::string gpu = b.cls.gpu;
        if (gpu.empty()) {
            gpu = "family:";
            for (std::size_t i = 0; i < b.measured_on.size(); ++i) {
                gpu += (i ? ", " : " ") + b.measured_on[i];
            }
        }
        rows.push_back({model::name_of(b.figure), gpu,
                        b.cls.family.empty() ? std::string("-") : b.cls.family, b.cls.engine,
                        b.cls.moe ? "MoE" : "dense", b.cls.precision, model::name_of(b.cls.regime),
                        std::to_string(b.points),
                        (b.mean_signed >= 0 ? "+" : "") + fixed(b.mean_signed * 100, 1) + "%",
                        pct(b.p90), b.level + ": " + b.set, b.fitted_on ? "yes" : "no"});
    }
    if (!markdown) {
        Table t(header);
        for (auto& r : rows) {
            t.add_row(std::move(r));
        }
        t.print(out);
        return;
    }
    const auto line = [&](const std::vector<std::string>& cells) {
        out << '|';
        for (const auto& c : cells) {
            out << ' ' << c << " |";
        }
        out << '\n';
    };
    line(header);
    out << '|';
    for (std::size_t i = 0; i < header.size(); ++i) {
        out << "---|";
    }
    out << '\n';
    for (const auto& r : rows) {
        line(r);
    }
}

/// The per-class bands of the whole-step and serving validation: printed (text, Markdown or
/// JSON) and, with --write-bands, written for hwdb.
void report_bands(CliContext& ctx, const ValidateRequest& req, nlohmann::json& json,
                  const std::vector<calib::BandSample>& samples) {
    model::ErrorBands bands;
    bands.bands = calib::measure_bands(samples);
    std::set<std::string> sets;
    for (const auto& b : bands.bands) {
        sets.insert(b.set);
    }
    bands.generated_by = "gpuplan calib validate DATA... --write-bands FILE, on:";
    for (const auto& set : sets) {
        bands.generated_by += (set == *sets.begin() ? " " : "; ") + set;
    }
    if (!req.write_bands.empty()) {
        write_output_file(req.write_bands, hwdb::error_bands_yaml(bands));
    }
    if (req.json) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& b : bands.bands) {
            rows.push_back({{"figure", model::name_of(b.figure)},
                            {"gpu", b.cls.gpu},
                            {"family", b.cls.family},
                            {"measured_on", b.measured_on},
                            {"engine", b.cls.engine},
                            {"moe", b.cls.moe},
                            {"precision", b.cls.precision},
                            {"regime", model::name_of(b.cls.regime)},
                            {"points", b.points},
                            {"mean_signed", b.mean_signed},
                            {"p90", b.p90},
                            {"level", b.level},
                            {"set", b.set},
                            {"fitted_on", b.fitted_on}});
        }
        json.push_back({{"error_bands", rows}});
        return;
    }
    if (req.markdown) {
        print_band_table(*ctx.out, bands, true);
        return;
    }
    if (bands.bands.empty()) {
        return;
    }
    *ctx.out << "error bands per figure and class: (predicted - measured) / measured of whole "
                "steps and serving runs; mean signed (+: the model is slow) and nearest-rank P90 "
                "of the absolute error; per GPU, then per family (hwdb architecture) with every "
                "measured GPU of the family pooled\n";
    print_band_table(*ctx.out, bands, false);
    *ctx.out << '\n';
}

} // namespace

int run_calib_validate(CliContext& ctx) {
    const std::optional<ValidateRequest> req = parse_validate(ctx);
    if (!req) {
        return 0;
    }
    if (req->scenario) {
        return validate_bench_results(ctx, *req->scenario, req->inputs, req->profiles, req->json);
    }
    nlohmann::json json = nlohmann::json::array();
    std::vector<std::string> unknown;
    std::vector<calib::BandSample> samples;
    // Folders of published training runs are replayed by the training planner; the other
    // inputs are kernel, step and serving data.
    ValidateRequest data = *req;
    std::vector<fs::path> training;
    data.inputs.clear();
    for (const auto& in : req->inputs) {
        if (const auto runs = calib::find_training_runs(in)) {
            training.push_back(*runs);
        } else {
            data.inputs.push_back(in);
        }
    }
    if (!req->markdown && !data.inputs.empty()) {
        validate_kernels(ctx, data, json, unknown);
    }
    validate_steps(ctx, data, json, samples);
    validate_serving_runs(ctx, data, json, samples);
    validate_training_runs(ctx, training, *req, json, samples);
    report_bands(ctx, *req, json, samples);
    if (req->markdown) {
        return 0;
    }
    auto& out = *ctx.out;
    if (req->json) {
        out << json_text(json) << '\n';
        return 0;
    }
    if (!unknown.empty()) {
        out << "not in the hwdb, not validated:";
        for (const auto& u : unknown) {
            out << ' ' << u;
        }
        out << '\n';
    }
    out << "MAPE, median, P90: |predicted - measured| / measured per kernel call; default = the "
           "uncalibrated spec-sheet profile with the same harness offsets\n";
    return 0;
}

namespace {

// ---------------------------------------------------------------- calib fit-power

/// The command line of `calib fit-power`.
struct FitPowerRequest {
    std::vector<std::string> inputs;
    std::string gpu_name;
    std::string output;
    std::optional<double> board;    ///< --board-power, W
    std::optional<double> resident; ///< --resident-power, W
    double saturation = calib::PowerFitOptions{}.saturation_fraction;
    bool json = false;
};

/// Parses `calib fit-power`'s options; nullopt when it printed its help.
std::optional<FitPowerRequest> parse_fit_power(CliContext& ctx) {
    po::options_description desc("options");
    FitPowerRequest req;
    double board = 0;
    double resident = 0;
    desc.add_options()("samples", po::value(&req.inputs)->multitoken()->required(),
                       "sample CSVs: gpu,u_compute,u_memory,power_w[,clock_factor] or "
                       "gpuplan-calib's CSV")("gpu", po::value(&req.gpu_name)->required(),
                                              "fit the samples of this GPU (hwdb name)")(
        "output,o", po::value(&req.output),
        "write the fitted power: keys as YAML here ('-': stdout)")(
        "board-power", po::value(&board), "board power in W (default: the hwdb figure)")(
        "resident-power", po::value(&resident), "fix the resident power (W) instead of fitting it")(
        "saturation", po::value(&req.saturation),
        "samples at or above this fraction of board power are not fitted (default 0.97)")(
        "json", "print the fit as JSON");
    po::positional_options_description pos;
    pos.add("samples", -1);
    po::variables_map vm;
    if (!parse_options("calib fit-power", ctx.args, desc, pos, vm, *ctx.out,
                       "SAMPLES.csv... --gpu NAME [-o power.yaml] [--json]")) {
        return std::nullopt;
    }
    if (vm.count("board-power")) {
        req.board = board;
    }
    if (vm.count("resident-power")) {
        req.resident = resident;
    }
    req.json = vm.count("json") > 0;
    return req;
}

/// The fit's options for `gpu`: the board power given or from the hwdb, the resident power if
/// fixed, the saturation fraction; UsageError for a value out of range.
calib::PowerFitOptions power_fit_options(const FitPowerRequest& req,
                                         const model::AcceleratorSpec& gpu) {
    calib::PowerFitOptions fo;
    fo.saturation_fraction = req.saturation;
    if (req.board) {
        if (!(*req.board > 0)) {
            throw UsageError("--board-power must be positive");
        }
        fo.board_power_w = *req.board;
    } else if (gpu.board_power) {
        fo.board_power_w = gpu.board_power->si();
    } else {
        throw UsageError("'" + gpu.name + "' has no board power in the hwdb; give --board-power W");
    }
    if (req.resident) {
        if (!(*req.resident >= 0 && *req.resident < fo.board_power_w)) {
            throw UsageError("--resident-power must be in [0, board power)");
        }
        fo.resident_power_w = *req.resident;
    }
    if (!(fo.saturation_fraction > 0 && fo.saturation_fraction <= 1)) {
        throw UsageError("--saturation must be in (0, 1]");
    }
    return fo;
}

/// The power samples of one GPU from the inputs, with what was left out.
struct GpuPowerSamples {
    std::vector<calib::PowerSample> samples;
    std::vector<std::string> notes; ///< the readers' notes on skipped rows
    int other_gpu = 0;              ///< samples of other GPUs
    int skipped = 0;                ///< rows skipped
};

/// Reads the inputs' samples of `gpu`; InputError when there are none.
GpuPowerSamples read_gpu_power_samples(const hwdb::Database& db,
                                       const std::vector<std::string>& inputs,
                                       const model::AcceleratorSpec& gpu) {
    const calib::GpuResolver resolve = [&db](std::string_view n) { return db.find_accelerator(n); };
    GpuPowerSamples g;
    for (const auto& in : inputs) {
        calib::PowerSampleSet s = calib::read_power_samples(in, resolve);
        g.skipped += s.skipped;
        g.notes.insert(g.notes.end(), s.notes.begin(), s.notes.end());
        for (auto& p : s.samples) {
            if (p.gpu == gpu.name) {
                g.samples.push_back(std::move(p));
            } else {
                ++g.other_gpu;
            }
        }
    }
    if (g.samples.empty()) {
        throw InputError("no power sample of '" + gpu.name + "' in the input (" +
                         std::to_string(g.other_gpu) + " of other GPUs, " +
                         std::to_string(g.skipped) + " rows skipped)");
    }
    return g;
}

nlohmann::json power_fit_json(const calib::PowerFitResult& r, const GpuPowerSamples& g,
                              const model::AcceleratorSpec& gpu) {
    return {{"gpu", gpu.name},
            {"board_power_w", r.board_w},
            {"resident_power_w", r.resident_w},
            {"resident_fitted", r.resident_fitted},
            {"compute_weight", r.compute_weight},
            {"memory_weight", r.memory_weight},
            {"samples", r.samples},
            {"fitted", r.fitted},
            {"saturated", r.saturated},
            {"other_gpu_samples", g.other_gpu},
            {"skipped_rows", g.skipped},
            {"rms_w", r.rms_w},
            {"fit_rms_w", r.fit_rms_w},
            {"max_abs_w", r.max_abs_w},
            {"worst", r.worst >= 0
                          ? nlohmann::json(g.samples[static_cast<std::size_t>(r.worst)].where)
                          : nlohmann::json(nullptr)},
            {"notes", r.notes},
            {"input_notes", g.notes}};
}

void print_power_fit(std::ostream& out, const calib::PowerFitResult& r, const GpuPowerSamples& g,
                     const model::AcceleratorSpec& gpu) {
    const model::PowerModel d;
    out << "power fit for " << gpu.name << ": " << r.samples << " samples (" << r.fitted
        << " fitted, " << r.saturated << " at the board limit), " << g.other_gpu
        << " of other GPUs, " << g.skipped << " rows skipped\n\n";
    Table t({"coefficient", "fitted", "default"});
    t.add_row({"board power", fixed(r.board_w, 1) + " W", "(given)"});
    t.add_row({r.resident_fitted ? "resident power" : "resident power (fixed)",
               fixed(r.resident_w, 1) + " W", fixed(d.resident_fraction * r.board_w, 1) + " W"});
    t.add_row({"compute_weight a_c", fixed(r.compute_weight, 4), fixed(d.compute_weight, 4)});
    t.add_row({"memory_weight a_m", fixed(r.memory_weight, 4), fixed(d.memory_weight, 4)});
    t.print(out);
    out << "residual RMS " << fixed(r.rms_w, 1) << " W over all samples (" << fixed(r.fit_rms_w, 1)
        << " W over the fitted ones), max " << fixed(r.max_abs_w, 1) << " W";
    if (r.worst >= 0) {
        out << " at " << g.samples[static_cast<std::size_t>(r.worst)].where;
    }
    out << '\n';
    for (const auto& n : r.notes) {
        out << "note: " << n << '\n';
    }
    for (const auto& n : g.notes) {
        out << "skipped: " << n << '\n';
    }
}

} // namespace

// `gpuplan calib fit-power`: the power model's resident power and activity weights fitted to
// measured (utilization, power) samples (calib/power_fit.hpp, docs/power.md).
int run_calib_fit_power(CliContext& ctx) {
    const std::optional<FitPowerRequest> req = parse_fit_power(ctx);
    if (!req) {
        return 0;
    }
    const model::AcceleratorSpec& gpu = ctx.db().accelerator(req->gpu_name);
    const calib::PowerFitOptions fo = power_fit_options(*req, gpu);
    const GpuPowerSamples g = read_gpu_power_samples(ctx.db(), req->inputs, gpu);
    const calib::PowerFitResult r = calib::fit_power(g.samples, fo);
    throw_if_interrupted();
    const std::string yaml =
        calib::power_fit_yaml(r, gpu.name, joined_command("calib fit-power", ctx.args));
    if (req->output == "-") {
        *ctx.out << yaml;
        return 0;
    }
    if (req->json) {
        *ctx.out << json_text(power_fit_json(r, g, gpu)) << '\n';
    } else {
        print_power_fit(*ctx.out, r, g, gpu);
    }
    if (!req->output.empty()) {
        write_output_file(req->output, yaml);
        *ctx.err << "wrote " << req->output << '\n';
    }
    return 0;
}

} // namespace gpuplan::cli
