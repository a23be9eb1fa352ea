// `gpuplan sweep SPEC -o FILE.csv`: runs estimate, simulate, cost, train or plan once per point of
// a sweep spec (a base scenario and axes of --set overrides), in this process, and writes one table
// as CSV and JSON Lines; `--shard K/N` (or a Slurm / Kubernetes array index) runs every N-th point
// from K; `gpuplan merge OUT PARTS...` joins the shards into the table one process writes.
// Points run one after the other in this process (docs/sweep.md).
#include "cli/cli_context.hpp"
#include "cli/command_reports.hpp"
#include "cli/csv_field.hpp"
#include "cli/finite_output.hpp"
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

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
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

// The records of a CSV text: split at line breaks outside quotes, so a quoted value with a
// line break (a set: value, a sweep id) stays in its record (issue 33). `complete` is false when
// the text does not end with a line break outside quotes: its last record was cut off.
std::vector<std::string> csv_records(const std::string& text, bool& complete) {
    std::vector<std::string> out;
    std::string record;
    bool quoted = false;
    for (const char c : text) {
        if (c == '"') {
            quoted = !quoted;
        }
        if (c == '\n' && !quoted) {
            out.push_back(std::move(record));
            record.clear();
        } else {
            record += c;
        }
    }
    complete = record.empty() && !quoted;
    if (!complete) {
        out.push_back(std::move(record));
    }
    return out;
}

// The fields of one CSV record (RFC 4180 quoting); a quote left open counts as one more field
// that csv_records reports as cut.
std::size_t csv_field_count(const std::string& record) {
    std::size_t n = 1;
    bool quoted = false;
    for (const char c : record) {
        if (c == '"') {
            quoted = !quoted;
        } else if (c == ',' && !quoted) {
            ++n;
        }
    }
    return n;
}

// The identity of a sweep spec: what decides its points and their rows (id, command, base, set:
// values, axis keys and point count), as 16 hex digits of FNV-1a (64 bit). Each JSON line
// carries it, so --resume and merge refuse a table of another spec that has the same columns.
std::string spec_hash(const hwdb::SweepSpec& spec, std::size_t total) {
    std::uint64_t h = 14695981039346656037ULL;
    const auto add = [&h](const std::string& text) {
        for (const char c : text) {
            h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
        }
        h = (h ^ 0x1fU) * 1099511628211ULL; // a separator, so "ab","c" differs from "a","bc"
    };
    add(spec.id);
    add(spec.command);
    add(spec.base_file.string());
    add(spec.base_text);
    for (const auto& set : spec.sets) {
        add(set.key);
        add(set.value);
    }
    for (const auto& k : spec.keys) {
        add(k);
    }
    add(std::to_string(total));
    return fmt::format("{:016x}", h);
}

// One output's rows with their JSON objects, checked line against line.
struct PartRow {
    std::size_t index;
    Row row;
    nlohmann::json meta;
};

std::vector<PartRow> read_part(const std::filesystem::path& csv_path, std::string& header) {
    const auto jsonl_path = jsonl_beside(csv_path);
    const std::string csv_text =
        hwdb::read_text_file(csv_path, "sweep table", hwdb::kMaxTableBytes);
    const std::string jsonl_text =
        hwdb::read_text_file(jsonl_path, "sweep table", hwdb::kMaxTableBytes);
    bool csv_complete = true;
    const auto csv = csv_records(csv_text, csv_complete);
    const auto jsonl = lines_of(jsonl_text);
    if (csv.empty()) {
        throw InputError(csv_path.string() +
                         ": empty, not a sweep table; give a file 'gpuplan sweep -o' wrote");
    }
    header = csv.front();
    if (!header.starts_with("index,sweep_id,seed,")) {
        throw InputError(csv_path.string() +
                         ":1: no sweep table header (index,sweep_id,seed,...); give a file "
                         "'gpuplan sweep -o' wrote");
    }
    // A row cut off (a full disk, a copy stopped part-way) is refused, not kept as a row.
    if (!csv_complete || (!jsonl_text.empty() && jsonl_text.back() != '\n')) {
        const bool in_csv = !csv_complete;
        throw InputError((in_csv ? csv_path : jsonl_path).string() + ":" +
                         std::to_string(in_csv ? csv.size() : jsonl.size()) +
                         ": the last row is cut off (no line break at its end); run the shard "
                         "again, or remove the row and use --resume");
    }
    const std::size_t columns = csv_field_count(header);
    for (std::size_t i = 1; i < csv.size(); ++i) {
        if (csv_field_count(csv[i]) != columns) {
            throw InputError(csv_path.string() + ": row " + std::to_string(i) + " has " +
                             std::to_string(csv_field_count(csv[i])) + " fields and the header " +
                             std::to_string(columns) +
                             "; the row was cut or edited, run the shard again");
        }
    }
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

namespace {

// The options of `gpuplan sweep`, bound to the variables they fill.
void add_sweep_options(po::options_description& desc, std::string& file, std::string& output,
                       std::string& shard_flag, std::optional<long long>& shards) {
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
}

// The table's header: the point's index, id and seed, the axes, the error, the command's figures
// and the command line that reproduces the point.
std::string table_header(const hwdb::SweepSpec& spec, const std::vector<std::string>& figures) {
    std::string header = "index,sweep_id,seed";
    for (const auto& k : spec.keys) {
        header += ',' + csv_field(k);
    }
    header += ",error";
    for (const auto& f : figures) {
        header += ',' + f;
    }
    header += ",cli";
    return header;
}

// The start of the command line that reproduces a point: "gpuplan [--hwdb DIR]...".
std::string reproduce_prefix(const CliContext& ctx) {
    std::string prefix = "gpuplan";
    for (const auto& h : ctx.extra_hwdb) {
        prefix += " --hwdb " + shell_word(h.string());
    }
    return prefix;
}

/// One sweep as run_sweep runs it: the spec, and what its points share.
struct Sweep {
    CliContext& ctx;
    const hwdb::SweepSpec& spec;
    std::size_t total = 0;                           ///< points in the spec
    const std::vector<std::string>& figures;         ///< the command's figure columns
    std::string prefix;                              ///< reproduce_prefix
    std::string hash = {};                           ///< spec_hash, in every JSON line
    std::map<std::size_t, std::string> refused = {}; ///< points refused, with the error
    std::map<std::string, model::EfficiencyProfile> profiles = {}; ///< by accelerator
    std::size_t failed = 0;                                        ///< points answered by an error
};

std::vector<hwdb::ScenarioOverride> point_overrides(const hwdb::SweepSpec& spec, std::size_t i) {
    std::vector<hwdb::ScenarioOverride> o;
    const std::vector<hwdb::SweepSetting> point = spec.point(i);
    for (const auto* list : {&spec.sets, &point}) {
        for (const auto& s : *list) {
            o.emplace_back(s.key, s.value, s.origin);
        }
    }
    return o;
}

model::Scenario load_point(const Sweep& w, std::size_t i) {
    const auto o = point_overrides(w.spec, i);
    return w.spec.base_text.empty()
               ? hwdb::load_scenario(w.spec.base_file, w.ctx.db(), o)
               : hwdb::parse_scenario(w.spec.base_text, w.spec.file, w.ctx.db(), o);
}

// The command line that reproduces point i at `seed`.
std::string point_cli(const Sweep& w, std::size_t i, std::uint64_t seed) {
    if (!w.spec.base_text.empty()) {
        return w.prefix + " sweep " + shell_word(w.spec.file) + " --shard " + std::to_string(i) +
               "/" + std::to_string(w.total) + " -o point.csv";
    }
    std::string c = w.prefix + " " + w.spec.command + " " + shell_word(w.spec.base_file.string());
    const std::vector<hwdb::SweepSetting> point = w.spec.point(i);
    for (const auto* list : {&w.spec.sets, &point}) {
        for (const auto& s : *list) {
            c += " --set " + shell_word(s.key + "=" + s.value);
        }
    }
    if (w.spec.command == "simulate") {
        c += " --seed " + std::to_string(seed);
    } else if (w.spec.command == "plan") {
        c += " --set seed=" + std::to_string(seed);
    }
    return c;
}

// Point i's values by axis key.
nlohmann::json point_values(const hwdb::SweepSpec& spec, std::size_t i) {
    nlohmann::json v = nlohmann::json::object();
    for (const auto& s : spec.point(i)) {
        v[s.key] = s.value;
    }
    return v;
}

// The points of `shard`: every n-th from k.
std::vector<std::size_t> shard_points(const Shard& shard, std::size_t total) {
    std::vector<std::size_t> selected;
    for (std::size_t i = shard.k; i < total; i += shard.n) {
        selected.push_back(i);
    }
    return selected;
}

/// The rows --resume kept, and the rows of the old output that are not this sweep's.
struct Resumed {
    std::size_t skipped = 0;
    std::size_t dropped = 0;
};

// --resume: rows of this sweep's points (same index, values, id and command) are kept.
Resumed keep_resumed_rows(const Sweep& w, const Shard& shard, const std::string& output,
                          Table& table) {
    Resumed kept;
    std::string header;
    const auto rows = read_part(output, header);
    if (header != table.header) {
        throw InputError(output +
                         " holds another sweep's table (other columns); give another -o or "
                         "leave out --resume to replace it");
    }
    // A row that is not this sweep's is refused with the reason, not dropped (issue 33): the
    // output holds another spec's or another shard's rows, and replacing them loses work.
    for (const auto& r : rows) {
        const auto& m = r.meta;
        const auto refuse = [&](const std::string& why) {
            throw InputError(output + ": the row of point " + std::to_string(r.index) + " " + why +
                             "; give another -o, or leave out --resume to replace the table");
        };
        if (m.value("spec_hash", "") != w.hash || m.value("sweep_id", "") != w.spec.id ||
            m.value("command", "") != w.spec.command ||
            m.value("points", std::size_t{0}) != w.total) {
            refuse("is from another sweep spec (spec_hash " + m.value("spec_hash", "none") +
                   ", this spec's " + w.hash + ")");
        }
        if (r.index >= w.total || (r.index % shard.n) != shard.k) {
            refuse("is not in shard " + std::to_string(shard.k) + "/" + std::to_string(shard.n) +
                   ": the table is another shard's");
        }
        if (m["values"] != point_values(w.spec, r.index)) {
            refuse("has other axis values than the spec gives that point");
        }
        table.rows[r.index] = r.row;
    }
    kept.skipped = table.rows.size();
    kept.dropped = rows.size() - kept.skipped;
    return kept;
}

// Every point's scenario is read before any runs, so a bad axis or set value (an error at a
// value the spec wrote) stops the sweep at once. A point the scenario's own checks refuse (tp 3
// for 64 attention heads) is that point's answer: a row with the error, kept in w.refused. When
// every point is refused the base itself is wrong, and the first error stops the sweep.
void load_points(Sweep& w, const std::vector<std::size_t>& selected, const Table& table) {
    std::optional<std::string> first_refusal;
    std::size_t loaded = 0;
    for (const std::size_t i : selected) {
        if (table.rows.contains(i)) {
            continue;
        }
        try {
            (void)load_point(w, i);
            ++loaded;
        } catch (const ConfigError& e) {
            if (e.line() == 0 && e.file().starts_with(w.spec.file + ":")) {
                throw; // located at an axis or set value of the spec
            }
            w.refused[i] = FiniteLineFilter::without_marks(e.what());
        } catch (const InputError& e) {
            w.refused[i] = FiniteLineFilter::without_marks(e.what());
        }
        if (!w.refused.empty() && !first_refusal) {
            first_refusal = w.refused.begin()->second;
        }
    }
    if (loaded == 0 && first_refusal) {
        throw InputError(*first_refusal);
    }
}

const model::EfficiencyProfile& profile_for(Sweep& w, const model::Scenario& s) {
    auto it = w.profiles.find(s.deployment.gpu.name);
    if (it == w.profiles.end()) {
        it = w.profiles
                 .emplace(s.deployment.gpu.name,
                          choose_profile(w.ctx, ScenarioFlags{}, s.deployment.gpu))
                 .first;
    }
    return it->second;
}

/// A point's answer: the command's JSON report, or the error that is its answer.
struct PointAnswer {
    nlohmann::json result;
    std::string error;
    std::uint64_t seed = 0; ///< the point's seed
};

// Runs the spec's command on the point's scenario `s` into `a`; false when a signal stopped the
// simulation in the middle of it.
bool run_command(Sweep& w, model::Scenario& s, PointAnswer& a) {
    const auto& profile = profile_for(w, s);
    if (w.spec.command == "estimate") {
        a.result = estimate_report(w.ctx, s, profile);
    } else if (w.spec.command == "cost") {
        a.result = cost_report(w.ctx, s, profile);
    } else if (w.spec.command == "train") {
        a.result = train_report(w.ctx, s, profile);
    } else if (w.spec.command == "plan") {
        // One worker per point: points are the parallelism (shards, MPI ranks). The
        // point's seed drives the search's confirming simulations.
        s.seed = a.seed;
        a.result = plan_report(w.ctx, s, 1, false);
    } else {
        sim::SimOptions opts;
        opts.seed = a.seed;
        opts.profile = profile;
        opts.node = scenario_node(w.ctx, s);
        const sim::SimResult r = sim::simulate(s, opts, interrupt_token());
        if (interrupt_signal() != 0) {
            return false; // the point is incomplete: no row
        }
        if (!r.ok) {
            for (const auto& reason : r.reasons) {
                a.error += (a.error.empty() ? "" : "; ") + reason;
            }
            a.error = "the deployment does not fit, nothing was simulated: " + a.error;
        } else {
            a.result = simulate_json(s, r);
        }
    }
    return true;
}

// Point i's answer; nullopt when a signal stopped it part-way.
std::optional<PointAnswer> answer_point(Sweep& w, std::size_t i) {
    PointAnswer a;
    a.seed = i + 1; // the loader's default seed (1) when the scenario is refused
    const auto refusal = w.refused.find(i);
    if (refusal != w.refused.end()) {
        a.error = refusal->second;
    }
    try {
        if (refusal != w.refused.end()) {
            throw InputError(a.error);
        }
        model::Scenario s = load_point(w, i);
        a.seed = s.seed + i;
        if (!run_command(w, s, a)) {
            return std::nullopt; // the point is incomplete: no row
        }
    } catch (const InputError& e) {
        // This point's answer is an error; the sweep goes on. A quoted non-finite input keeps
        // its text, not the formatters' mark (cli/finite_output.hpp).
        a.error = FiniteLineFilter::without_marks(e.what());
    } catch (const Interrupted&) {
        return std::nullopt; // a search stopped part-way: no row
    }
    return a;
}

// One point's row (nullopt: interrupted in the middle of it, so no row). w.failed counts the
// points whose answer is an error.
std::optional<Row> compute_row(Sweep& w, std::size_t i) {
    const std::optional<PointAnswer> answer = answer_point(w, i);
    if (!answer) {
        return std::nullopt;
    }
    const auto& [result, error, seed] = *answer;
    w.failed += error.empty() ? 0 : 1;
    nlohmann::json meta = {
        {"index", i},
        {"points", w.total},
        {"spec_hash", w.hash},
        {"sweep_id", w.spec.id},
        {"command", w.spec.command},
        {"seed", seed},
        {"values", point_values(w.spec, i)},
        {"cli", point_cli(w, i, seed)},
        {"error", error.empty() ? nlohmann::json(nullptr) : nlohmann::json(error)},
        {"result", result}};
    std::string csv = std::to_string(i) + ',' + csv_field(w.spec.id) + ',' + std::to_string(seed);
    for (const auto& p : w.spec.point(i)) {
        csv += ',' + csv_field(p.value);
    }
    csv += ',' + csv_field(error);
    for (const auto& f : w.figures) {
        csv += ',' + figure_text(result, f);
    }
    csv += ',' + csv_field(point_cli(w, i, seed));
    return Row{csv, json_line(meta)};
}

// The points of `selected` that the table has no row for.
std::vector<std::size_t> points_to_run(const std::vector<std::size_t>& selected,
                                       const Table& table) {
    std::vector<std::size_t> todo;
    for (const std::size_t i : selected) {
        if (!table.rows.contains(i)) {
            todo.push_back(i);
        }
    }
    return todo;
}

// Runs `todo`'s points here, one after another; returns the points computed. Sets `stopped`
// when a signal stops it.
std::size_t run_points_here(Sweep& w, const std::vector<std::size_t>& todo, ProgressBar& bar,
                            std::chrono::steady_clock::time_point started,
                            const std::string& output, Table& table, bool& stopped) {
    std::size_t computed = 0;
    auto last_write = started;
    for (const std::size_t i : todo) {
        if (interrupt_signal() != 0) {
            stopped = true;
            break;
        }
        bar(static_cast<double>(computed) /
                static_cast<double>(std::max<std::size_t>(todo.size(), 1)),
            std::to_string(computed) + "/" + std::to_string(todo.size()) + " points");
        auto row = compute_row(w, i);
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
    return computed;
}

/// What the summary reports of a run.
struct SweepSummary {
    std::size_t selected = 0; ///< points of this shard
    std::size_t computed = 0; ///< points computed by this run
    std::size_t skipped = 0;  ///< rows kept from the output (--resume)
    std::size_t rows = 0;     ///< rows in the table
    double secs = 0;          ///< wall time of the computation
    bool stopped = false;     ///< a signal stopped the run
};

void print_summary(std::ostream& out, const Sweep& w, const Shard& shard, const std::string& output,
                   const SweepSummary& t, const std::optional<MpiJob>& job,
                   const std::vector<std::size_t>& per_rank) {
    out << "sweep " << w.spec.id << ": " << w.total << " points";
    if (!shard.from.empty()) {
        out << ", " << t.selected << " in shard " << shard.k << "/" << shard.n << " (from "
            << shard.from << ")";
    }
    out << "; " << t.computed << " computed";
    if (t.computed > 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " in %.2f s (%.3g points/s)", t.secs,
                      static_cast<double>(t.computed) / t.secs);
        out << buf;
    }
    out << ", " << t.skipped << " skipped (already in the output)";
    if (w.failed > 0) {
        out << ", " << w.failed << " with an error (its 'error' column)";
    }
    out << "; wrote " << output << " and " << jsonl_beside(output).string() << '\n';
    if (job) {
        out << "ran on " << job->size() << " MPI ranks; points per rank:";
        for (const std::size_t n : per_rank) {
            out << ' ' << n;
        }
        out << '\n';
    }
    if (t.stopped) {
        out << "stopped before " << t.selected - t.rows
            << " points; the rows written are complete; run again with --resume to finish\n";
    }
}

} // namespace

int run_sweep(CliContext& ctx) {
    po::options_description desc("options");
    std::string file, output, shard_flag;
    std::optional<long long> shards;
    add_sweep_options(desc, file, output, shard_flag, shards);
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("sweep", ctx.args, desc, pos, vm, *ctx.out,
                       "SPEC.yaml -o FILE.csv [--resume] [--shard K/N | --shards N] [--mpi]")) {
        return 0;
    }
    const hwdb::SweepSpec spec = hwdb::load_sweep_spec(file);
    const Shard shard = choose_shard(shard_flag, shards);
    Sweep w{.ctx = ctx,
            .spec = spec,
            .total = spec.point_count(),
            .figures = figure_columns(spec.command),
            .prefix = reproduce_prefix(ctx),
            .hash = spec_hash(spec, spec.point_count())};
    Table table;
    table.header = table_header(spec, w.figures);
    const std::vector<std::size_t> selected = shard_points(shard, w.total);
    const bool resume = vm.count("resume") > 0;
    Resumed kept;
    if (resume && std::filesystem::exists(output)) {
        kept = keep_resumed_rows(w, shard, output, table);
    }
    load_points(w, selected, table);
    const std::vector<std::size_t> todo = points_to_run(selected, table);
    ProgressBar bar("sweep", true);
    const auto started = std::chrono::steady_clock::now();
    std::size_t computed = 0;
    bool stopped = false;
    std::optional<MpiJob> job;
    std::vector<std::size_t> per_rank; // points each MPI rank computed
    if (vm.count("mpi")) {
        job.emplace();
        computed = run_points_mpi(
            *job, todo, [&](std::size_t i) { return compute_row(w, i); }, table, w.failed, stopped,
            per_rank);
        if (job->rank() != 0) {
            return 0; // rank 0 writes the table and reports
        }
    } else {
        computed = run_points_here(w, todo, bar, started, output, table, stopped);
    }
    bar.clear();
    if (!(resume && computed == 0 && kept.dropped == 0 &&
          kept.skipped > 0)) { // else the files are already this table
        write_table(output, table, stopped || interrupt_signal() != 0);
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    print_summary(stopped ? *ctx.err : *ctx.out, w, shard, output,
                  {selected.size(), computed, kept.skipped, table.rows.size(), secs, stopped}, job,
                  per_rank);
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
    std::string hash, hash_from;
    for (const auto& p : parts) {
        std::string header;
        auto rows = read_part(p, header);
        // The header of every part, rows or none: a shard with no points is a header alone.
        if (table.header.empty()) {
            table.header = header;
        } else if (header != table.header) {
            throw InputError(p + " has other columns than " + parts.front() +
                             "; merge only shards of one sweep spec");
        }
        for (auto& r : rows) {
            const std::string h = r.meta.value("spec_hash", "");
            if (hash_from.empty()) {
                hash = h;
                hash_from = p;
            } else if (h != hash) {
                throw InputError(p + " is from another sweep spec than " + hash_from +
                                 " (spec_hash " + (h.empty() ? "none" : h) + " and " + hash +
                                 "); merge only shards of one sweep spec");
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
    if (!total) {
        throw InputError("the parts hold no rows (" + std::to_string(parts.size()) +
                         " headers alone), so the sweep's size is unknown; merge the shards "
                         "that ran its points");
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
