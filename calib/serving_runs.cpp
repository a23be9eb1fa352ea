#include "calib/serving_runs.hpp"
#include "model/checked_format.hpp"

#include "hwdb/file_io.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"
#include "model/kv_cache.hpp"
#include "model/precision.hpp"
#include "sim/quantile_sketch.hpp"
#include "sim/simulate.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <sstream>

namespace gpuplan::calib {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_text(const fs::path& p) {
    return hwdb::read_text_file(p, "run file", hwdb::kMaxTableBytes);
}

const json& field(const json& j, const char* key, const std::string& where) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        throw InputError(where + ": missing field '" + key + "'");
    }
    return *it;
}

template <class T> T get(const json& j, const char* key, const std::string& where) {
    try {
        return field(j, key, where).get<T>();
    } catch (const json::exception&) {
        throw InputError(where + ": field '" + key + "' has the wrong type");
    }
}

template <class T> T get_or(const json& j, const char* key, T fallback, const std::string& where) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        return fallback;
    }
    return get<T>(j, key, where);
}

LatencySummary summarize(const std::vector<double>& v) {
    LatencySummary s;
    s.count = static_cast<int>(v.size());
    if (v.empty()) {
        return s;
    }
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    // The percentiles by the simulator's rule (numpy's default linear interpolation), as the
    // simulated latencies they are compared with.
    sim::QuantileSketch sketch;
    for (const double x : v) {
        sketch.add(x);
    }
    const sim::LatencyStats stats = sketch.stats();
    s.p50 = stats.p50.si();
    s.p99 = stats.p99.si();
    return s;
}

LatencySummary from_sim(const sim::LatencyStats& s) {
    return {static_cast<int>(s.count), s.mean.si(), s.p50.si(), s.p99.si()};
}

// The arrival as the script writes it to its trace CSV ("%.6f") and the trace loader reads back.
double microsecond_text(double s) {
    return std::strtod(gpuplan::checked_format("{:.6f}", s).c_str(), nullptr);
}

} // namespace

ServingRun read_serving_run(const fs::path& dir) {
    ServingRun run;
    run.dir = dir;
    const fs::path model_dir = dir.parent_path();
    run.label = model_dir.parent_path().filename().string() + "/" + model_dir.filename().string();

    const fs::path meta_path = dir / "meta.json";
    const std::string where = meta_path.string();
    json meta;
    try {
        meta = json::parse(read_text(meta_path));
    } catch (const json::exception& e) {
        throw InputError(where + ": not JSON: " + e.what());
    }
    run.model = get<std::string>(meta, "model", where);
    run.vllm_version = get_or<std::string>(meta, "vllm_version", "?", where);
    const json& kw = field(meta, "engine_kwargs", where);
    const std::string kw_where = where + ": engine_kwargs";
    run.tensor_parallel = get_or<int>(kw, "tensor_parallel_size", 1, kw_where);
    run.data_parallel = get_or<int>(kw, "data_parallel_size", 1, kw_where);
    run.expert_parallel = get_or<bool>(kw, "enable_expert_parallel", false, kw_where);
    run.max_num_seqs = get<int>(kw, "max_num_seqs", kw_where);
    run.max_num_batched_tokens = get<int>(kw, "max_num_batched_tokens", kw_where);
    if (auto it = kw.find("max_model_len"); it != kw.end() && !it->is_null()) {
        run.max_model_len = get<int>(kw, "max_model_len", kw_where);
    }
    run.dtype = get_or<std::string>(kw, "dtype", "bfloat16", kw_where);
    run.kv_cache_dtype = get_or<std::string>(kw, "kv_cache_dtype", "auto", kw_where);
    if (auto it = meta.find("kv_cache"); it != meta.end() && !it->is_null()) {
        const std::string kv_where = where + ": kv_cache";
        run.block_size = get_or<int>(*it, "block_size", 16, kv_where);
        run.prefix_caching = get_or<bool>(*it, "enable_prefix_caching", false, kv_where);
        run.num_gpu_blocks = get<long long>(*it, "num_gpu_blocks", kv_where);
    }
    run.gpu = model_dir.parent_path().filename().string();
    if (auto it = meta.find("hardware"); it != meta.end() && it->is_object()) {
        run.gpu = get_or<std::string>(*it, "device_name", run.gpu, where + ": hardware");
    }

    const fs::path req_path = dir / "requests.jsonl";
    std::istringstream lines(read_text(req_path));
    std::string line;
    int n = 0;
    while (std::getline(lines, line)) {
        ++n;
        if (line.find_first_not_of(" \t\r") == std::string::npos) {
            continue;
        }
        const std::string at = req_path.string() + ":" + std::to_string(n);
        json r;
        try {
            r = json::parse(line);
        } catch (const json::exception& e) {
            throw InputError(at + ": not JSON: " + e.what());
        }
        ServingRequest q;
        q.input_tokens = get<int>(r, "input_toks", at);
        q.output_tokens = get<int>(r, "output_toks", at);
        q.queued_s = get<double>(r, "queued_ts", at);
        q.first_token_s = get<double>(r, "first_token_ts", at);
        q.last_token_s = get<double>(r, "last_token_ts", at);
        if (q.input_tokens < 0 || q.output_tokens < 1) {
            throw InputError(at + ": input_toks must be >= 0 and output_toks >= 1");
        }
        run.requests.push_back(q);
    }
    if (run.requests.empty()) {
        throw InputError(req_path.string() + ": no requests");
    }
    return run;
}

std::vector<fs::path> find_serving_runs(const fs::path& root) {
    std::error_code ec;
    const auto is_run = [&](const fs::path& d) {
        return fs::is_regular_file(d / "meta.json", ec) &&
               fs::is_regular_file(d / "requests.jsonl", ec);
    };
    if (is_run(root)) {
        return {root};
    }
    std::vector<fs::path> out;
    for (const fs::path& base : {root / "llmservingsim/bench/examples", root / "bench/examples"}) {
        if (!fs::is_directory(base, ec)) {
            continue;
        }
        for (const auto& gpu : fs::directory_iterator(base, ec)) {
            if (!gpu.is_directory(ec)) {
                continue;
            }
            for (const auto& model : fs::directory_iterator(gpu.path(), ec)) {
                if (model.is_directory(ec) && is_run(model.path() / "vllm")) {
                    out.push_back(model.path() / "vllm");
                }
            }
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

ServingLatencies measured_latencies(const ServingRun& run) {
    std::vector<double> ttft, tpot, e2e;
    for (const auto& r : run.requests) {
        ttft.push_back(r.first_token_s - r.queued_s);
        e2e.push_back(r.last_token_s - r.queued_s);
        if (r.output_tokens > 1) {
            tpot.push_back((r.last_token_s - r.first_token_s) / (r.output_tokens - 1));
        }
    }
    return {summarize(ttft), summarize(tpot), summarize(e2e)};
}

std::optional<model::Scenario> serving_run_scenario(const ServingRun& run, const hwdb::Database& db,
                                                    std::string& skip_reason) {
    const model::AcceleratorSpec* gpu = db.find_accelerator(run.gpu);
    const model::ModelSpec* mdl = db.find_model(run.model);
    if (!gpu) {
        skip_reason = "GPU '" + run.gpu + "' is not in the hwdb";
        return std::nullopt;
    }
    if (!mdl) {
        skip_reason = "model '" + run.model + "' is not in the catalog";
        return std::nullopt;
    }
    if (run.data_parallel > 1 || run.expert_parallel) {
        skip_reason = "data or expert parallelism (data_parallel_size " +
                      std::to_string(run.data_parallel) + ") is not replayed";
        return std::nullopt;
    }
    if (!run.num_gpu_blocks) {
        skip_reason = "meta.json has no kv_cache section (the KV pool is unknown)";
        return std::nullopt;
    }
    if (run.kv_cache_dtype != "auto" || (run.dtype != "bfloat16" && run.dtype != "float16")) {
        skip_reason =
            "dtype " + run.dtype + " / kv_cache_dtype " + run.kv_cache_dtype + " is not replayed";
        return std::nullopt;
    }
    // The scenario the script writes for `gpuplan simulate`, read by the same loader; the trace
    // and KV pool are set as the loader sets them from the trace file and kv_cache_memory.
    std::string name = run.label;
    std::replace(name.begin(), name.end(), '/', '-');
    std::ostringstream y;
    y << "schema: 1\n"
      << "name: llmservingsim-" << name << "\n"
      << "model: " << mdl->name << "\n"
      << "hardware:\n  accelerator: " << gpu->name << "\n  count: " << run.tensor_parallel
      << "\n  tp: " << run.tensor_parallel << "\n"
      << "engine:\n  kind: vllm\n";
    if (run.max_model_len) {
        y << "  max_model_len: " << *run.max_model_len << "\n";
    }
    y << "  max_num_seqs: " << run.max_num_seqs << "\n"
      << "  max_num_batched_tokens: " << run.max_num_batched_tokens << "\n"
      << "  block_size: " << run.block_size << "\n"
      << "  enable_prefix_caching: " << (run.prefix_caching ? "true" : "false") << "\n";
    model::Scenario s = hwdb::parse_scenario(y.str(), (run.dir / "meta.json").string(), db);
    // KV bytes per token at the model dtype ("auto"): 131072 for Llama-3.1-8B at bf16.
    const double kv_per_token =
        model::kv_bytes_per_token(s.deployment.model, s.deployment.prec.kv_cache).si();
    s.deployment.engine.kv_cache_memory =
        Bytes(static_cast<double>(*run.num_gpu_blocks) * run.block_size * kv_per_token);
    return s;
}

ServingComparison replay_serving_run(
    const ServingRun& run, const hwdb::Database& db,
    const std::function<std::optional<model::EfficiencyProfile>(const model::AcceleratorSpec&)>&
        profile_for) {
    ServingComparison c;
    c.label = run.label;
    c.dir = run.dir;
    c.requests = static_cast<int>(run.requests.size());
    c.vllm_version = run.vllm_version;
    c.measured = measured_latencies(run);
    {
        double first = run.requests.front().queued_s;
        double last = run.requests.front().last_token_s;
        double tokens = 0;
        for (const auto& r : run.requests) {
            first = std::min(first, r.queued_s);
            last = std::max(last, r.last_token_s);
            tokens += r.output_tokens;
        }
        c.measured_output_tok_s = last > first ? tokens / (last - first) : 0.0;
    }
    std::string skip;
    std::optional<model::Scenario> built = serving_run_scenario(run, db, skip);
    if (const model::AcceleratorSpec* g = db.find_accelerator(run.gpu)) {
        c.gpu = g->name;
    }
    if (const model::ModelSpec* m = db.find_model(run.model)) {
        c.model = m->name;
    }
    if (!built) {
        c.skip_reason = skip;
        return c;
    }
    model::Scenario& s = *built;
    std::vector<const ServingRequest*> order;
    for (const auto& r : run.requests) {
        order.push_back(&r);
    }
    std::stable_sort(
        order.begin(), order.end(),
        [](const ServingRequest* a, const ServingRequest* b) { return a->queued_s < b->queued_s; });
    const double t0 = order.front()->queued_s;
    s.workload.trace.clear();
    for (const ServingRequest* r : order) {
        s.workload.trace.push_back(
            {Seconds(microsecond_text(r->queued_s - t0)), r->input_tokens, r->output_tokens});
    }
    s.workload.arrival.kind = model::ArrivalKind::Trace;
    s.workload.requests.reset();

    sim::SimOptions opts;
    std::optional<model::EfficiencyProfile> prof =
        profile_for ? profile_for(s.deployment.gpu) : std::nullopt;
    c.default_profile = !prof;
    opts.profile = prof ? *prof : model::default_profile();
    c.profile = opts.profile->provenance.description;
    const sim::SimResult r = sim::simulate(s, opts);
    if (!r.ok) {
        std::string why;
        for (const auto& reason : r.reasons) {
            why += (why.empty() ? "" : "; ") + reason;
        }
        c.skip_reason = "the deployment does not fit: " + why;
        return c;
    }
    c.replayed = true;
    c.simulated = {from_sim(r.overall.ttft), from_sim(r.overall.tpot), from_sim(r.overall.e2e)};
    c.simulated_output_tok_s = r.output_tok_s;
    return c;
}

} // namespace gpuplan::calib
