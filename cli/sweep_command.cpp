// `gpuplan sweep SPEC -o FILE.csv`: runs estimate, simulate, cost, train or plan once per point of
// a sweep spec (a base scenario and axes of --set overrides), in this process, and writes one table
// as CSV and JSON Lines; `--shard K/N` (or a Slurm / Kubernetes array index) runs every N-th point
// from K; `gpuplan merge OUT PARTS...` joins the shards into the table one process writes.
// Points run one after the other in this process (docs/sweep.md).
#include "cli/cli_context.hpp"
#include "cli/command_reports.hpp"
#include "cli/interrupt.hpp"
#include "cli/json_out.hpp"
#include "cli/mpi_job.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"
#include "cli/power_report.hpp"
#include "cli/progress_bar.hpp"
#include "cli/scenario_options.hpp"
#include "hwdb/file_io.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/sweep_spec.hpp"
#include "model/error.hpp"
#include "sim/simulate.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace gpuplan::cli {
namespace {

// The summary figures a CSV row carries per command: paths into the command's --json object
// (docs/sweep.md lists them; the JSON Lines file carries the whole object).
const std::vector<std::string>& figure_columns(const std::string& command) {
    static const std::vector<std::string> estimate = {
        "fits",   "max_concurrency",  "operating_point.concurrency", "ttft_s",
        "tpot_s", "throughput_tok_s", "peak_throughput_tok_s",       "bottleneck.decode"};
    static const std::vector<std::string> simulate = {
        "completed",   "failed",         "throughput_rps", "output_tok_s",
        "goodput_rps", "slo_attainment", "ttft_s.p50",     "ttft_s.p99",
        "tpot_s.p50",  "tpot_s.p99",     "e2e_s.p99",      "queue_s.p99"};
    static const std::vector<std::string> cost = {"currency",
                                                  "throughput_tok_s",
                                                  "own_monthly",
                                                  "rent_monthly",
                                                  "own_per_million_tokens",
                                                  "rent_per_million_tokens",
                                                  "break_even_month",
                                                  "cheaper"};
    // plan: the search's answer and its cheapest configuration (ranked.0, as the table shows).
    static const std::vector<std::string> plan = {"found",
                                                  "simulated",
                                                  "ranked.0.gpu",
                                                  "ranked.0.gpus",
                                                  "ranked.0.tp",
                                                  "ranked.0.replicas",
                                                  "ranked.0.weights",
                                                  "ranked.0.max_num_seqs",
                                                  "ranked.0.monthly",
                                                  "ranked.0.per_million_tokens",
                                                  "ranked.0.binding_slo"};
    static const std::vector<std::string> train = {
        "fits", "memory_per_gpu_bytes", "step_time_s", "tokens_per_s",
        "mfu",  "time_to_train_s",      "gpu_hours",   "costs.rent.amount"};
    return command == "estimate"   ? estimate
           : command == "simulate" ? simulate
           : command == "train"    ? train
           : command == "plan"     ? plan
                                   : cost;
}

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) {
        return s;
    }
    std::string out = "\"";
    for (const char c : s) {
        out += c == '"' ? "\"\"" : std::string(1, c);
    }
    return out + "\"";
}

// One word for a POSIX shell.
std::string shell_word(const std::string& s) {
    if (!s.empty() &&
        s.find_first_not_of(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=@%+,-") ==
            std::string::npos) {
        return s;
    }
    std::string out = "'";
    for (const char c : s) {
        out += c == '\'' ? "'\\''" : std::string(1, c);
    }
    return out + "'";
}

// A figure of the command's --json object as CSV text: numbers as the JSON writes them. A path
// step that is a number indexes an array ("ranked.0.gpu").
std::string figure_text(const nlohmann::json& result, const std::string& path) {
    const nlohmann::json* v = &result;
    std::size_t start = 0;
    while (start <= path.size()) {
        const auto dot = path.find('.', start);
        const std::string key =
            path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (v->is_array()) {
            std::size_t index = 0;
            const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), index);
            if (ec != std::errc() || end != key.data() + key.size() || index >= v->size()) {
                return "";
            }
            v = &(*v)[index];
        } else if (!v->is_object() || !v->contains(key)) {
            return "";
        } else {
            v = &(*v)[key];
        }
        if (dot == std::string::npos) {
            break;
        }
        start = dot + 1;
    }
    if (v->is_null()) {
        return "";
    }
    return csv_field(v->is_string() ? v->get<std::string>() : v->dump());
}

std::filesystem::path jsonl_beside(const std::filesystem::path& csv) {
    std::filesystem::path p = csv;
    if (p.extension() == ".csv") {
        return p.replace_extension(".jsonl");
    }
    return std::filesystem::path(p.string() + ".jsonl");
}

struct Shard {
    std::size_t k = 0;
    std::size_t n = 1;
    std::string from; // where it came from, for the summary line; empty: no sharding
};

std::optional<long long> env_integer(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        return std::nullopt;
    }
    char* end = nullptr;
    const long long x = std::strtoll(v, &end, 10);
    if (*end != '\0' || x < 0) {
        throw UsageError(std::string(name) + "='" + v +
                         "' is not a whole number >= 0; check the job's environment");
    }
    return x;
}

Shard make_shard(long long k, long long n, const std::string& from) {
    if (n < 1 || k < 0 || k >= n) {
        throw UsageError(from + " gives shard " + std::to_string(k) + " of " + std::to_string(n) +
                         "; the index must be from 0 to the count - 1");
    }
    return {static_cast<std::size_t>(k), static_cast<std::size_t>(n), from};
}

// --shard K/N; else SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT (or _MIN/_MAX); else
// JOB_COMPLETION_INDEX (Kubernetes Indexed Job) with --shards N or GPUPLAN_SWEEP_SHARDS.
Shard choose_shard(const std::string& flag, std::optional<long long> shards) {
    if (!flag.empty()) {
        const auto slash = flag.find('/');
        try {
            std::size_t used = 0;
            const long long k = std::stoll(flag.substr(0, slash), &used);
            const std::string rest = slash == std::string::npos ? "" : flag.substr(slash + 1);
            std::size_t used_n = 0;
            const long long n = std::stoll(rest, &used_n);
            if (used != slash || used_n != rest.size()) {
                throw std::invalid_argument("trailing");
            }
            return make_shard(k, n, "--shard " + flag);
        } catch (const std::logic_error&) {
            throw UsageError(
                "--shard '" + flag +
                "': write K/N, the shard index from 0 and the count, e.g. --shard 0/4");
        }
    }
    if (const auto id = env_integer("SLURM_ARRAY_TASK_ID")) {
        const auto min = env_integer("SLURM_ARRAY_TASK_MIN").value_or(0);
        if (const auto count = env_integer("SLURM_ARRAY_TASK_COUNT")) {
            return make_shard(*id - min, *count, "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT");
        }
        if (const auto max = env_integer("SLURM_ARRAY_TASK_MAX")) {
            return make_shard(*id - min, *max - min + 1,
                              "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_MAX");
        }
        throw UsageError(
            "SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MAX; "
            "run under 'sbatch --array' or give --shard K/N");
    }
    if (const auto index = env_integer("JOB_COMPLETION_INDEX")) {
        if (!shards) {
            shards = env_integer("GPUPLAN_SWEEP_SHARDS");
        }
        if (!shards) {
            throw UsageError(
                "JOB_COMPLETION_INDEX is set but not the number of shards; give --shards N "
                "(the Job's completions) or set GPUPLAN_SWEEP_SHARDS");
        }
        return make_shard(*index, *shards, "JOB_COMPLETION_INDEX");
    }
    if (shards && *shards != 1) {
        throw UsageError("--shards gives the count for JOB_COMPLETION_INDEX, which is not set; "
                         "give --shard K/N");
    }
    return {};
}

// A table: the header line and rows by point index, each as its CSV line and JSON line.
struct Row {
    std::string csv;
    std::string json;
};

struct Table {
    std::string header;
    std::map<std::size_t, Row> rows;
};

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto nl = text.find('\n', start);
        out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
        start = nl == std::string::npos ? text.size() : nl + 1;
    }
    return out;
}

// One output's rows with their JSON objects, checked line against line.
struct PartRow {
    std::size_t index;
    Row row;
    nlohmann::json meta;
};

std::vector<PartRow> read_part(const std::filesystem::path& csv_path, std::string& header) {
    const auto jsonl_path = jsonl_beside(csv_path);
    const auto csv = lines_of(hwdb::read_text_file(csv_path, "sweep table", hwdb::kMaxTableBytes));
    const auto jsonl =
        lines_of(hwdb::read_text_file(jsonl_path, "sweep table", hwdb::kMaxTableBytes));
    if (csv.empty()) {
        throw InputError(csv_path.string() +
                         ": empty, not a sweep table; give a file 'gpuplan sweep -o' wrote");
    }
    header = csv.front();
    if (csv.size() != jsonl.size() + 1) {
        throw InputError(csv_path.string() + " has " + std::to_string(csv.size() - 1) +
                         " rows but " + jsonl_path.string() + " has " +
                         std::to_string(jsonl.size()) +
                         "; they were not written together, run the shard again");
    }
    std::vector<PartRow> out;
    for (std::size_t i = 0; i < jsonl.size(); ++i) {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(jsonl[i]);
        } catch (const nlohmann::json::exception&) {
            throw InputError(jsonl_path.string() + ":" + std::to_string(i + 1) +
                             ": not a JSON object; give a file 'gpuplan sweep -o' wrote");
        }
        const auto has = [&j](const char* key, bool (nlohmann::json::*is)() const noexcept) {
            return j.contains(key) && (j[key].*is)();
        };
        if (!j.is_object() || !has("index", &nlohmann::json::is_number_unsigned) ||
            !has("points", &nlohmann::json::is_number_unsigned) ||
            !has("sweep_id", &nlohmann::json::is_string) ||
            !has("command", &nlohmann::json::is_string) ||
            !has("values", &nlohmann::json::is_object) ||
            !csv[i + 1].starts_with(std::to_string(j["index"].get<std::size_t>()) + ",")) {
            throw InputError(jsonl_path.string() + ":" + std::to_string(i + 1) +
                             ": the row does not match line " + std::to_string(i + 2) + " of " +
                             csv_path.string() + "; run the shard again");
        }
        out.push_back({j["index"].get<std::size_t>(), {csv[i + 1], jsonl[i]}, std::move(j)});
    }
    return out;
}

// Both files, rows sorted by index: the same bytes whichever process wrote the rows.
void write_table(const std::filesystem::path& csv_path, const Table& t, bool interrupted) {
    std::string csv = t.header + '\n';
    std::string jsonl;
    for (const auto& [i, r] : t.rows) {
        csv += r.csv + '\n';
        jsonl += r.json + '\n';
    }
    if (interrupted) {
        // Keep the finished rows even though a signal arrived (write_output_file would refuse).
        hwdb::write_text_file(jsonl_beside(csv_path), jsonl);
        hwdb::write_text_file(csv_path, csv);
        return;
    }
    write_output_file(jsonl_beside(csv_path), jsonl);
    write_output_file(csv_path, csv);
}

std::string list_indices(const std::vector<std::size_t>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size() && i < 20; ++i) {
        out += (i ? ", " : "") + std::to_string(v[i]);
    }
    if (v.size() > 20) {
        out += " and " + std::to_string(v.size() - 20) + " more";
    }
    return out;
}

// Runs `todo`'s points on every rank of `job`, each rank taking the next point as it finishes
// one, and gathers the rows at rank 0 into `table` (the other ranks' tables stay as they were).
// Returns the points computed (on rank 0: by all ranks). A rank stopped by a signal takes no
// further points; the rows finished by then are kept.
template <class ComputeRow>
std::size_t run_points_mpi(MpiJob& job, const std::vector<std::size_t>& todo,
                           const ComputeRow& compute_row, Table& table, std::size_t& failed,
                           bool& stopped, std::vector<std::size_t>& per_rank) {
    job.share_tasks(todo.size());
    std::string mine; // rows as "INDEX CSV_BYTES JSON_BYTES\n" then the two lines' bytes
    std::size_t computed = 0;
    try {
        while (const auto task = job.next_task()) {
            if (interrupt_signal() != 0) {
                stopped = true;
                break;
            }
            const std::size_t i = todo[*task];
            auto row = compute_row(i);
            if (!row) {
                stopped = true;
                break;
            }
            mine += std::to_string(i) + ' ' + std::to_string(row->csv.size()) + ' ' +
                    std::to_string(row->json.size()) + '\n' + row->csv + row->json;
            ++computed;
        }
    } catch (const std::exception& e) {
        // Anything else would leave the other ranks waiting in the gather below.
        std::fprintf(stderr, "error: rank %d: %s\n", job.rank(), e.what());
        job.abort(1);
    }
    const std::vector<std::string> parts = job.gather(mine);
    const std::vector<std::string> counts =
        job.gather(std::to_string(failed) + ' ' + std::to_string(stopped ? 1 : 0) + ' ' +
                   std::to_string(computed));
    if (job.rank() != 0) {
        return computed;
    }
    computed = 0;
    for (const std::string& part : parts) {
        std::size_t at = 0;
        while (at < part.size()) {
            const auto nl = part.find('\n', at);
            std::size_t index = 0, csv_bytes = 0, json_bytes = 0;
            std::sscanf(part.c_str() + at, "%zu %zu %zu", &index, &csv_bytes, &json_bytes);
            at = nl + 1;
            Row row{part.substr(at, csv_bytes), part.substr(at + csv_bytes, json_bytes)};
            at += csv_bytes + json_bytes;
            table.rows[index] = std::move(row);
            ++computed;
        }
    }
    failed = 0;
    for (const std::string& c : counts) {
        std::size_t rank_failed = 0, rank_stopped = 0, rank_computed = 0;
        std::sscanf(c.c_str(), "%zu %zu %zu", &rank_failed, &rank_stopped, &rank_computed);
        failed += rank_failed;
        stopped = stopped || rank_stopped != 0;
        per_rank.push_back(rank_computed);
    }
    return computed;
}

} // namespace

int run_sweep(CliContext& ctx) {
    po::options_description desc("options");
    std::string file, output, shard_flag;
    std::optional<long long> shards;
    // clang-format off
    desc.add_options()
        ("file", po::value(&file)->required(), "sweep spec YAML (docs/sweep.md)")
        ("output,o", po::value(&output)->required(), "the table as CSV; FILE.jsonl is written beside it")
        ("resume", "keep the rows already in the output for the same points and run only the others")
        ("mpi", "run the points on every rank of an MPI job (mpirun -np N gpuplan sweep ... --mpi); rank 0 writes the table")
        ("shard", po::value(&shard_flag), "run every N-th point from K (K/N, K from 0); default: "
                                          "SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX when set")
        ("shards", po::value<long long>()->notifier([&](long long v) { shards = v; }),
                   "shard count with JOB_COMPLETION_INDEX (Kubernetes Indexed Job completions)");
    // clang-format on
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("sweep", ctx.args, desc, pos, vm, *ctx.out,
                       "SPEC.yaml -o FILE.csv [--resume] [--shard K/N | --shards N] [--mpi]")) {
        return 0;
    }
    const hwdb::SweepSpec spec = hwdb::load_sweep_spec(file);
    const Shard shard = choose_shard(shard_flag, shards);
    const std::size_t total = spec.points.size();
    const auto& figures = figure_columns(spec.command);

    Table table;
    table.header = "index,sweep_id,seed";
    for (const auto& k : spec.keys) {
        table.header += ',' + csv_field(k);
    }
    table.header += ",error";
    for (const auto& f : figures) {
        table.header += ',' + f;
    }
    table.header += ",cli";

    // The command line that reproduces a point.
    std::string prefix = "gpuplan";
    for (const auto& h : ctx.extra_hwdb) {
        prefix += " --hwdb " + shell_word(h.string());
    }
    const auto overrides_of = [&](std::size_t i) {
        std::vector<hwdb::ScenarioOverride> o;
        for (const auto* list : {&spec.sets, &spec.points[i]}) {
            for (const auto& s : *list) {
                o.emplace_back(s.key, s.value, s.origin);
            }
        }
        return o;
    };
    const auto load = [&](std::size_t i) {
        const auto o = overrides_of(i);
        return spec.base_text.empty()
                   ? hwdb::load_scenario(spec.base_file, ctx.db(), o)
                   : hwdb::parse_scenario(spec.base_text, spec.file, ctx.db(), o);
    };
    const auto cli_of = [&](std::size_t i, std::uint64_t seed) {
        if (!spec.base_text.empty()) {
            return prefix + " sweep " + shell_word(spec.file) + " --shard " + std::to_string(i) +
                   "/" + std::to_string(total) + " -o point.csv";
        }
        std::string c = prefix + " " + spec.command + " " + shell_word(spec.base_file.string());
        for (const auto* list : {&spec.sets, &spec.points[i]}) {
            for (const auto& s : *list) {
                c += " --set " + shell_word(s.key + "=" + s.value);
            }
        }
        if (spec.command == "simulate") {
            c += " --seed " + std::to_string(seed);
        } else if (spec.command == "plan") {
            c += " --set seed=" + std::to_string(seed);
        }
        return c;
    };
    const auto values_of = [&](std::size_t i) {
        nlohmann::json v = nlohmann::json::object();
        for (const auto& s : spec.points[i]) {
            v[s.key] = s.value;
        }
        return v;
    };

    std::vector<std::size_t> selected;
    for (std::size_t i = shard.k; i < total; i += shard.n) {
        selected.push_back(i);
    }
    // --resume: rows of this sweep's points (same index, values, id and command) are kept.
    std::size_t skipped = 0;
    std::size_t dropped = 0; // rows of the old output that are not this sweep's
    const bool resume = vm.count("resume") > 0;
    if (resume && std::filesystem::exists(output)) {
        std::string header;
        const auto rows = read_part(output, header);
        if (header != table.header) {
            throw InputError(output +
                             " holds another sweep's table (other columns); give another -o or "
                             "leave out --resume to replace it");
        }
        for (const auto& r : rows) {
            const auto& m = r.meta;
            if (r.index < total && (r.index % shard.n) == shard.k &&
                m.value("sweep_id", "") == spec.id && m.value("command", "") == spec.command &&
                m.value("points", std::size_t{0}) == total && m["values"] == values_of(r.index)) {
                table.rows[r.index] = r.row;
            }
        }
        skipped = table.rows.size();
        dropped = rows.size() - skipped;
    }
    // Every point's scenario is read before any runs, so a bad axis or set value (an error at a
    // value the spec wrote) stops the sweep at once. A point the scenario's own checks refuse (tp 3
    // for 64 attention heads) is that point's answer: a row with the error. When every point is
    // refused the base itself is wrong, and the first error stops the sweep.
    std::map<std::size_t, std::string> refused;
    std::optional<std::string> first_refusal;
    std::size_t loaded = 0;
    for (const std::size_t i : selected) {
        if (table.rows.contains(i)) {
            continue;
        }
        try {
            (void)load(i);
            ++loaded;
        } catch (const ConfigError& e) {
            if (e.line() == 0 && e.file().starts_with(spec.file + ":")) {
                throw; // located at an axis or set value of the spec
            }
            refused[i] = e.what();
        } catch (const InputError& e) {
            refused[i] = e.what();
        }
        if (!refused.empty() && !first_refusal) {
            first_refusal = refused.begin()->second;
        }
    }
    if (loaded == 0 && first_refusal) {
        throw InputError(*first_refusal);
    }

    std::map<std::string, model::EfficiencyProfile> profiles; // by accelerator
    const auto profile_for = [&](const model::Scenario& s) -> const model::EfficiencyProfile& {
        auto it = profiles.find(s.deployment.gpu.name);
        if (it == profiles.end()) {
            it = profiles
                     .emplace(s.deployment.gpu.name,
                              choose_profile(ctx, ScenarioFlags{}, s.deployment.gpu))
                     .first;
        }
        return it->second;
    };

    // One point's row (nullopt: interrupted in the middle of it, so no row). `failed` counts the
    // points whose answer is an error.
    std::size_t failed = 0;
    bool stopped = false;
    const auto compute_row = [&](std::size_t i) -> std::optional<Row> {
        nlohmann::json result;
        std::string error;
        std::uint64_t seed = i + 1; // the loader's default seed (1) when the scenario is refused
        const auto refusal = refused.find(i);
        if (refusal != refused.end()) {
            error = refusal->second;
        }
        try {
            if (refusal != refused.end()) {
                throw InputError(error);
            }
            model::Scenario s = load(i);
            seed = s.seed + i;
            const auto& profile = profile_for(s);
            if (spec.command == "estimate") {
                result = estimate_report(ctx, s, profile);
            } else if (spec.command == "cost") {
                result = cost_report(ctx, s, profile);
            } else if (spec.command == "train") {
                result = train_report(ctx, s, profile);
            } else if (spec.command == "plan") {
                // One worker per point: points are the parallelism (shards, MPI ranks). The
                // point's seed drives the search's confirming simulations.
                s.seed = seed;
                result = plan_report(ctx, s, 1, false);
            } else {
                sim::SimOptions opts;
                opts.seed = seed;
                opts.profile = profile;
                opts.node = scenario_node(ctx, s);
                const sim::SimResult r = sim::simulate(s, opts, interrupt_token());
                if (interrupt_signal() != 0) {
                    return std::nullopt; // the point is incomplete: no row
                }
                if (!r.ok) {
                    for (const auto& reason : r.reasons) {
                        error += (error.empty() ? "" : "; ") + reason;
                    }
                    error = "the deployment does not fit, nothing was simulated: " + error;
                } else {
                    result = simulate_json(s, r);
                }
            }
        } catch (const InputError& e) {
            error = e.what(); // this point's answer is an error; the sweep goes on
        } catch (const Interrupted&) {
            return std::nullopt; // a search stopped part-way: no row
        }
        failed += error.empty() ? 0 : 1;
        nlohmann::json meta = {
            {"index", i},
            {"points", total},
            {"sweep_id", spec.id},
            {"command", spec.command},
            {"seed", seed},
            {"values", values_of(i)},
            {"cli", cli_of(i, seed)},
            {"error", error.empty() ? nlohmann::json(nullptr) : nlohmann::json(error)},
            {"result", result}};
        std::string csv = std::to_string(i) + ',' + csv_field(spec.id) + ',' + std::to_string(seed);
        for (const auto& p : spec.points[i]) {
            csv += ',' + csv_field(p.value);
        }
        csv += ',' + csv_field(error);
        for (const auto& f : figures) {
            csv += ',' + figure_text(result, f);
        }
        csv += ',' + csv_field(cli_of(i, seed));
        return Row{csv, json_line(meta)};
    };

    std::vector<std::size_t> todo;
    for (const std::size_t i : selected) {
        if (!table.rows.contains(i)) {
            todo.push_back(i);
        }
    }
    ProgressBar bar("sweep", true);
    const auto started = std::chrono::steady_clock::now();
    std::size_t computed = 0;
    std::optional<MpiJob> job;
    std::vector<std::size_t> per_rank; // points each MPI rank computed
    if (vm.count("mpi")) {
        job.emplace();
        computed = run_points_mpi(*job, todo, compute_row, table, failed, stopped, per_rank);
        if (job->rank() != 0) {
            return 0; // rank 0 writes the table and reports
        }
    } else {
        auto last_write = started;
        for (const std::size_t i : todo) {
            if (interrupt_signal() != 0) {
                stopped = true;
                break;
            }
            bar(static_cast<double>(computed) /
                    static_cast<double>(std::max<std::size_t>(todo.size(), 1)),
                std::to_string(computed) + "/" + std::to_string(todo.size()) + " points");
            auto row = compute_row(i);
            if (!row) {
                stopped = true;
                break;
            }
            table.rows[i] = std::move(*row);
            ++computed;
            // The files hold complete rows at all times: rewritten (atomically) every few
            // seconds.
            const auto now = std::chrono::steady_clock::now();
            if (now - last_write > std::chrono::seconds(5)) {
                write_table(output, table, interrupt_signal() != 0);
                last_write = now;
            }
        }
    }
    bar.clear();
    if (!(resume && computed == 0 && dropped == 0 &&
          skipped > 0)) { // else the files are already this table
        write_table(output, table, stopped || interrupt_signal() != 0);
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    auto& out = stopped ? *ctx.err : *ctx.out;
    out << "sweep " << spec.id << ": " << total << " points";
    if (!shard.from.empty()) {
        out << ", " << selected.size() << " in shard " << shard.k << "/" << shard.n << " (from "
            << shard.from << ")";
    }
    out << "; " << computed << " computed";
    if (computed > 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " in %.2f s (%.3g points/s)", secs,
                      static_cast<double>(computed) / secs);
        out << buf;
    }
    out << ", " << skipped << " skipped (already in the output)";
    if (failed > 0) {
        out << ", " << failed << " with an error (its 'error' column)";
    }
    out << "; wrote " << output << " and " << jsonl_beside(output).string() << '\n';
    if (job) {
        out << "ran on " << job->size() << " MPI ranks; points per rank:";
        for (const std::size_t n : per_rank) {
            out << ' ' << n;
        }
        out << '\n';
    }
    if (stopped) {
        out << "stopped before " << selected.size() - table.rows.size()
            << " points; the rows written are complete; run again with --resume to finish\n";
    }
    return 0;
}

int run_merge(CliContext& ctx) {
    po::options_description desc("options");
    std::string output;
    std::vector<std::string> parts;
    desc.add_options()("output", po::value(&output)->required(),
                       "merged table (CSV; .jsonl beside it)")(
        "parts", po::value(&parts)->multitoken(),
        "the shards' CSV files (each with its .jsonl beside it)");
    po::positional_options_description pos;
    pos.add("output", 1).add("parts", -1);
    po::variables_map vm;
    if (!parse_options("merge", ctx.args, desc, pos, vm, *ctx.out, "OUT.csv PART.csv...")) {
        return 0;
    }
    if (parts.empty()) {
        throw UsageError(
            "merge needs the shards' tables: gpuplan merge OUT.csv part-0.csv part-1.csv ...");
    }
    Table table;
    std::optional<std::size_t> total;
    std::string total_from;
    std::vector<std::size_t> duplicated;
    std::map<std::size_t, std::string> source;
    for (const auto& p : parts) {
        std::string header;
        for (auto& r : read_part(p, header)) {
            if (table.header.empty()) {
                table.header = header;
            } else if (header != table.header) {
                throw InputError(p + " has other columns than " + parts.front() +
                                 "; merge only shards of one sweep spec");
            }
            const std::size_t n = r.meta.value("points", std::size_t{0});
            if (total && n != *total) {
                throw InputError(p + " is from a sweep of " + std::to_string(n) + " points but " +
                                 total_from + " of " + std::to_string(*total) +
                                 "; merge only shards of one sweep spec");
            }
            total = n;
            total_from = p;
            if (table.rows.contains(r.index)) {
                duplicated.push_back(r.index);
                continue;
            }
            source[r.index] = p;
            table.rows[r.index] = std::move(r.row);
        }
    }
    if (!duplicated.empty()) {
        std::sort(duplicated.begin(), duplicated.end());
        throw InputError("point" + std::string(duplicated.size() == 1 ? " " : "s ") +
                         list_indices(duplicated) +
                         " appear more than once in the parts; merge each shard's table once");
    }
    std::vector<std::size_t> missing;
    for (std::size_t i = 0; i < total.value_or(0); ++i) {
        if (!table.rows.contains(i)) {
            missing.push_back(i);
        }
    }
    if (!missing.empty()) {
        throw InputError(
            "point" + std::string(missing.size() == 1 ? " " : "s ") + list_indices(missing) +
            " of " + std::to_string(*total) +
            " are missing from the parts; run their shards (with --resume) and merge again");
    }
    write_table(output, table, false);
    *ctx.out << "merged " << parts.size() << " parts: " << table.rows.size() << " points; wrote "
             << output << " and " << jsonl_beside(output).string() << '\n';
    return 0;
}

} // namespace gpuplan::cli
