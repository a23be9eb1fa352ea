#include "hwdb/observed_readers.hpp"

#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <vector>

namespace gpuplan::hwdb {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& file, int line, int column, const std::string& key,
                       const std::string& message) {
    throw ConfigError(file, line, column, key, message);
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

/// A number as Prometheus and nvidia-smi write it; nullopt when it is not one.
std::optional<double> to_number(std::string_view s) {
    s = trim(s);
    if (s == "NaN")
        return std::nan("");
    if (s == "+Inf" || s == "Inf")
        return HUGE_VAL;
    if (s == "-Inf")
        return -HUGE_VAL;
    if (!s.empty() && s.front() == '+')
        s.remove_prefix(1);
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty())
        return std::nullopt;
    return v;
}

bool name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool name_char(char c) {
    return name_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

/// Fraction gauges are averaged over their label sets (one per engine), not summed.
bool is_fraction(const std::string& name) {
    return name == "vllm:kv_cache_usage_perc" || name == "vllm:gpu_cache_usage_perc";
}

} // namespace

MetricsScrape parse_metrics_scrape(std::string_view text, const std::string& file) {
    MetricsScrape out;
    int line_no = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t nl = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        const std::string_view t = trim(line);
        if (t.empty() || t.front() == '#')
            continue;
        std::size_t i = 0;
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])))
            ++i;
        const std::size_t name_begin = i;
        if (i >= line.size() || !name_start(line[i])) {
            fail(file, line_no, static_cast<int>(i + 1), "",
                 "expected a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); is this the text of a "
                 "Prometheus /metrics endpoint (curl http://HOST:8000/metrics)?");
        }
        while (i < line.size() && name_char(line[i]))
            ++i;
        const std::string name(line.substr(name_begin, i - name_begin));
        if (i < line.size() && line[i] == '{') {
            bool quoted = false;
            ++i;
            for (; i < line.size(); ++i) {
                const char c = line[i];
                if (quoted && c == '\\') {
                    ++i;
                } else if (c == '"') {
                    quoted = !quoted;
                } else if (!quoted && c == '}') {
                    break;
                }
            }
            if (i >= line.size()) {
                fail(file, line_no, static_cast<int>(line.size()), name,
                     "the label set is not closed with '}'; the line was probably cut off");
            }
            ++i;
        }
        std::string_view rest = trim(line.substr(std::min(i, line.size())));
        const std::size_t sp = rest.find_first_of(" \t");
        const std::string_view value_text = rest.substr(0, sp);
        const auto value = to_number(value_text);
        if (!value) {
            fail(file, line_no, static_cast<int>(value_text.data() - line.data() + 1), name,
                 fmt::format("the value '{}' is not a number; write a decimal number, NaN or +Inf",
                             value_text));
        }
        if (sp != std::string_view::npos) {
            const auto ts = to_number(rest.substr(sp));
            if (!ts || !std::isfinite(*ts)) {
                fail(file, line_no,
                     static_cast<int>(trim(rest.substr(sp)).data() - line.data() + 1), name,
                     fmt::format("the timestamp '{}' is not a number of milliseconds",
                                 trim(rest.substr(sp))));
            }
            out.timestamp_ms = std::max(out.timestamp_ms.value_or(*ts), *ts);
        }
        if (name.ends_with("_bucket") || !std::isfinite(*value)) {
            continue; // buckets are not summed over their le labels; NaN gauges carry nothing
        }
        out.sums[name] += *value;
        ++out.series[name];
    }
    return out;
}

namespace {

struct Lookup {
    const MetricsScrape& s;
    [[nodiscard]] std::optional<double> get(const std::string& name) const {
        const auto it = s.sums.find(name);
        if (it == s.sums.end())
            return std::nullopt;
        if (is_fraction(name))
            return it->second / std::max(1, s.series.at(name));
        return it->second;
    }
    /// A counter as prometheus_client exposes it (name_total), or as written.
    [[nodiscard]] std::optional<double> counter(const std::string& name) const {
        if (auto v = get(name + "_total"))
            return v;
        return get(name);
    }
};

/// later - earlier, refusing a counter that went down.
std::optional<double> diff(const std::optional<double>& a, const std::optional<double>& b,
                           const std::string& name, const std::string& file) {
    if (!b)
        return std::nullopt;
    if (!a)
        return b;
    if (*b < *a) {
        fail(file, 0, 0, name,
             fmt::format("went down from {:g} to {:g} between the scrapes: the server restarted "
                         "in between or the files are in the wrong order; give the earlier "
                         "scrape first",
                         *a, *b));
    }
    return *b - *a;
}

model::EngineMetrics build(const MetricsScrape* earlier, const MetricsScrape& later,
                           const std::string& file) {
    bool any = false;
    for (const auto& [k, v] : later.sums)
        any = any || k.starts_with("vllm:");
    if (!any) {
        fail(file, 0, 0, "",
             "no vllm: metric found; save the vLLM server's /metrics endpoint "
             "(curl http://HOST:8000/metrics > FILE)");
    }
    const Lookup l{later};
    const auto counter = [&](const std::string& name) {
        const auto b = l.counter(name);
        if (!earlier)
            return b;
        const Lookup e{*earlier};
        const std::string shown = later.sums.count(name + "_total") ? name + "_total" : name;
        return diff(e.counter(name), b, shown, file);
    };
    const auto mean = [&](const std::string& name) -> std::optional<double> {
        const auto sum = counter(name + "_sum");
        const auto count = counter(name + "_count");
        if (!sum || !count || *count <= 0)
            return std::nullopt;
        return *sum / *count;
    };
    model::EngineMetrics m;
    m.delta = earlier != nullptr;
    m.ttft_mean_s = mean("vllm:time_to_first_token_seconds");
    m.itl_mean_s = mean("vllm:inter_token_latency_seconds");
    if (!m.itl_mean_s)
        m.itl_mean_s = mean("vllm:time_per_output_token_seconds");
    m.e2e_mean_s = mean("vllm:e2e_request_latency_seconds");
    m.queue_mean_s = mean("vllm:request_queue_time_seconds");
    m.prefill_mean_s = mean("vllm:request_prefill_time_seconds");
    m.decode_mean_s = mean("vllm:request_decode_time_seconds");
    m.requests = counter("vllm:e2e_request_latency_seconds_count");
    m.running = l.get("vllm:num_requests_running");
    m.waiting = l.get("vllm:num_requests_waiting");
    // Sequence counts become ints in the diagnosis; ten million is beyond any deployment.
    for (const auto& [name, v] : {std::pair{"vllm:num_requests_running", m.running},
                                  std::pair{"vllm:num_requests_waiting", m.waiting}}) {
        if (v && *v > 1e7) {
            fail(file, 0, 0, name,
                 fmt::format("is {:g}, more than ten million sequences; check the scrape", *v));
        }
    }
    m.kv_usage = l.get("vllm:kv_cache_usage_perc");
    if (!m.kv_usage)
        m.kv_usage = l.get("vllm:gpu_cache_usage_perc");
    m.prefix_queries = counter("vllm:prefix_cache_queries");
    m.prefix_hits = counter("vllm:prefix_cache_hits");
    m.prompt_tokens = counter("vllm:prompt_tokens");
    m.generation_tokens = counter("vllm:generation_tokens");
    m.preemptions = counter("vllm:num_preemptions");
    return m;
}

} // namespace

model::EngineMetrics engine_metrics(const MetricsScrape& later, const std::string& file) {
    return build(nullptr, later, file);
}

model::EngineMetrics engine_metrics(const MetricsScrape& earlier, const MetricsScrape& later,
                                    const std::string& later_file, std::optional<double> window_s) {
    model::EngineMetrics m = build(&earlier, later, later_file);
    if (window_s) {
        m.window_s = window_s;
    } else if (earlier.timestamp_ms && later.timestamp_ms &&
               *later.timestamp_ms > *earlier.timestamp_ms) {
        m.window_s = (*later.timestamp_ms - *earlier.timestamp_ms) / 1e3;
    }
    return m;
}

namespace {

/// 1-based line and column of the first occurrence of "key" in a JSON text (0, 0 when absent).
std::pair<int, int> key_position(std::string_view text, const std::string& key) {
    const std::size_t at = text.find('"' + key + '"');
    if (at == std::string_view::npos)
        return {0, 0};
    int line = 1, column = 1;
    for (std::size_t i = 0; i < at; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

} // namespace

model::BenchSummary parse_vllm_bench(std::string_view text, const std::string& file) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        int line = 1, column = 1;
        for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        fail(file, line, column, "",
             "not valid JSON; give the file `vllm bench serve --save-result` wrote");
    }
    if (!j.is_object()) {
        fail(file, 1, 1, "",
             "expected a JSON object, the summary `vllm bench serve --save-result` writes");
    }
    const auto number = [&](const char* key) -> std::optional<double> {
        const auto it = j.find(key);
        if (it == j.end() || it->is_null())
            return std::nullopt;
        if (!it->is_number()) {
            const auto [line, column] = key_position(text, key);
            fail(file, line, column, key, fmt::format("is {}, expected a number", it->type_name()));
        }
        const double v = it->get<double>();
        if (!std::isfinite(v) || v < 0) {
            const auto [line, column] = key_position(text, key);
            fail(file, line, column, key, fmt::format("is {}, expected a number >= 0", it->dump()));
        }
        return v;
    };
    const auto required = [&](const char* key) {
        const auto v = number(key);
        if (!v) {
            fail(file, 0, 0, key,
                 "missing; is this a `vllm bench serve --save-result` file? (it has completed, "
                 "duration, mean_ttft_ms, mean_tpot_ms, output_throughput)");
        }
        return *v;
    };
    // Counts become ints: refuse what no benchmark produces before converting.
    const auto count = [&](const char* key, double v) {
        if (v > 1e9) {
            const auto [line, column] = key_position(text, key);
            fail(file, line, column, key, fmt::format("is {:g}, more than 1e9; check the file", v));
        }
        return static_cast<int>(std::lround(v));
    };
    model::BenchSummary b;
    b.completed = count("completed", required("completed"));
    b.duration_s = required("duration");
    b.total_input_tokens = number("total_input_tokens");
    b.total_output_tokens = number("total_output_tokens");
    b.request_throughput = number("request_throughput");
    b.output_throughput = number("output_throughput");
    b.mean_ttft_ms = number("mean_ttft_ms");
    b.median_ttft_ms = number("median_ttft_ms");
    b.p99_ttft_ms = number("p99_ttft_ms");
    b.mean_tpot_ms = number("mean_tpot_ms");
    b.p99_tpot_ms = number("p99_tpot_ms");
    b.mean_itl_ms = number("mean_itl_ms");
    if (const auto c = number("max_concurrency"))
        b.max_concurrency = count("max_concurrency", *c);
    if (b.completed == 0) {
        fail(file, key_position(text, "completed").first, key_position(text, "completed").second,
             "completed",
             "is 0: no request finished, so there is nothing to diagnose; check the benchmark's "
             "errors");
    }
    return b;
}

namespace {

std::vector<std::string_view> split_csv(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t c = line.find(',', start);
        out.push_back(trim(
            line.substr(start, c == std::string_view::npos ? std::string_view::npos : c - start)));
        if (c == std::string_view::npos)
            break;
        start = c + 1;
    }
    return out;
}

enum class Column {
    Ignore,
    UtilGpu,
    UtilMem,
    MemUsed,
    MemTotal,
    Power,
    PowerLimit,
    SmClock,
    MaxSmClock,
    Throttle
};

Column column_of(std::string_view header) {
    std::string_view h = header;
    if (const auto b = h.find(" ["); b != std::string_view::npos)
        h = h.substr(0, b);
    if (h == "utilization.gpu")
        return Column::UtilGpu;
    if (h == "utilization.memory")
        return Column::UtilMem;
    if (h == "memory.used")
        return Column::MemUsed;
    if (h == "memory.total")
        return Column::MemTotal;
    if (h == "power.draw" || h == "power.draw.average" || h == "power.draw.instant")
        return Column::Power;
    if (h == "power.limit" || h == "enforced.power.limit")
        return Column::PowerLimit;
    if (h == "clocks.sm" || h == "clocks.current.sm")
        return Column::SmClock;
    if (h == "clocks.max.sm" || h == "clocks.max.sm_clock")
        return Column::MaxSmClock;
    if (h == "clocks_throttle_reasons.active" || h == "clocks_event_reasons.active" ||
        h == "clocks_event_reasons.active_mask")
        return Column::Throttle;
    return Column::Ignore;
}

} // namespace

model::GpuTelemetry parse_nvidia_smi_csv(std::string_view text, const std::string& file) {
    std::vector<Column> cols;
    std::vector<std::string> names;
    std::string header_text;
    struct Acc {
        double sum = 0;
        int n = 0;
        void add(double v) {
            sum += v;
            ++n;
        }
    };
    Acc acc[10];
    int throttle_samples = 0, power_cap = 0, thermal = 0;
    model::GpuTelemetry t;
    int line_no = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t nl = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (trim(line).empty())
            continue;
        if (cols.empty()) {
            header_text = std::string(trim(line));
            bool known = false;
            for (const auto f : split_csv(line)) {
                cols.push_back(column_of(f));
                names.emplace_back(f);
                known = known || cols.back() != Column::Ignore;
            }
            if (!known) {
                fail(file, line_no, 1, "",
                     "the header names no known field; run nvidia-smi --query-gpu=utilization.gpu,"
                     "utilization.memory,memory.used,memory.total,power.draw,clocks.sm,clocks.max."
                     "sm,"
                     "clocks_throttle_reasons.active --format=csv");
            }
            continue;
        }
        if (trim(line) == header_text)
            continue; // `-l` repeats the header
        const auto fields = split_csv(line);
        if (fields.size() != cols.size()) {
            fail(
                file, line_no, 1, "",
                fmt::format(
                    "{} fields where the header has {}; every line needs one value per query field",
                    fields.size(), cols.size()));
        }
        ++t.samples;
        for (std::size_t i = 0; i < cols.size(); ++i) {
            if (cols[i] == Column::Ignore)
                continue;
            std::string_view v = fields[i];
            if (v.starts_with("[") || v == "N/A")
                continue; // [N/A], [Not Supported]
            if (cols[i] == Column::Throttle) {
                unsigned long long mask = 0;
                std::string_view hex = v;
                if (hex.starts_with("0x") || hex.starts_with("0X"))
                    hex.remove_prefix(2);
                const auto [end, ec] =
                    std::from_chars(hex.data(), hex.data() + hex.size(), mask, 16);
                if (ec != std::errc() || end != hex.data() + hex.size() || hex.empty()) {
                    fail(file, line_no, 1, names[i],
                         fmt::format(
                             "'{}' is not a hexadecimal bit mask such as 0x0000000000000004", v));
                }
                ++throttle_samples;
                // NVML nvmlClocksThrottleReasons: 0x4 SW power cap; 0x8 HW slowdown, 0x20 SW
                // thermal, 0x40 HW thermal, 0x80 HW power brake.
                if (mask & 0x4ULL)
                    ++power_cap;
                if (mask & 0xE8ULL)
                    ++thermal;
                continue;
            }
            for (const char* unit : {" %", " MiB", " W", " MHz"}) {
                if (v.ends_with(unit))
                    v.remove_suffix(std::string_view(unit).size());
            }
            const auto x = to_number(v);
            if (!x || !std::isfinite(*x) || *x < 0) {
                fail(file, line_no, 1, names[i],
                     fmt::format("'{}' is not a number >= 0; write it as nvidia-smi does (e.g. 99 "
                                 "%, 20480 MiB, 250.5 W)",
                                 fields[i]));
            }
            double value = *x;
            if (cols[i] == Column::UtilGpu || cols[i] == Column::UtilMem) {
                if (value > 100) {
                    fail(file, line_no, 1, names[i], fmt::format("{:g} % is above 100 %", value));
                }
                value /= 100.0;
            }
            if (cols[i] == Column::MemUsed || cols[i] == Column::MemTotal)
                value *= 1048576.0;
            acc[static_cast<int>(cols[i])].add(value);
        }
    }
    if (cols.empty()) {
        fail(file, 0, 0, "",
             "the file is empty; save the output of nvidia-smi --query-gpu=... --format=csv -l 1 "
             "(with its header line)");
    }
    if (t.samples == 0) {
        fail(
            file, 0, 0, "",
            "no samples after the header; run nvidia-smi with -l 1 while the server is under load");
    }
    const auto avg = [&](Column c) -> std::optional<double> {
        const Acc& a = acc[static_cast<int>(c)];
        return a.n > 0 ? std::optional<double>(a.sum / a.n) : std::nullopt;
    };
    t.utilization_gpu = avg(Column::UtilGpu);
    t.utilization_memory = avg(Column::UtilMem);
    t.memory_used_bytes = avg(Column::MemUsed);
    t.memory_total_bytes = avg(Column::MemTotal);
    t.power_draw_w = avg(Column::Power);
    t.power_limit_w = avg(Column::PowerLimit);
    t.sm_clock_mhz = avg(Column::SmClock);
    t.max_sm_clock_mhz = avg(Column::MaxSmClock);
    if (throttle_samples > 0) {
        t.has_throttle_reasons = true;
        t.power_cap_share = static_cast<double>(power_cap) / throttle_samples;
        t.thermal_share = static_cast<double>(thermal) / throttle_samples;
    }
    return t;
}

MetricsScrape read_metrics_scrape(const std::filesystem::path& path) {
    return parse_metrics_scrape(read_text_file(path, "metrics scrape", kMaxTableBytes),
                                path.string());
}

model::BenchSummary read_vllm_bench(const std::filesystem::path& path) {
    return parse_vllm_bench(read_text_file(path, "vllm bench result"), path.string());
}

model::GpuTelemetry read_nvidia_smi_csv(const std::filesystem::path& path) {
    return parse_nvidia_smi_csv(read_text_file(path, "nvidia-smi CSV", kMaxTableBytes),
                                path.string());
}

} // namespace gpuplan::hwdb
