#include "hwdb/observed_readers.hpp"

#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <unordered_map>
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

/// Lines of a text with their 1-based numbers, CR stripped.
template <class F> void for_each_line(std::string_view text, F&& f) {
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
        f(line_no, line);
    }
}

/// One label of a sample: its name and its value, unescaped (\\, \" and \n).
struct Label {
    std::string_view name;
    std::string value;
};

/// The labels of `block` ("{a=\"1\",b=\"2\"}", braces included), matched by exact name later:
/// a label named role or draft_position is not le or position (issue 33). Throws at the column
/// of a label that is not name="value".
std::vector<Label> parse_labels(std::string_view block, std::size_t block_column,
                                const std::string& file, int line_no, const std::string& metric) {
    std::vector<Label> out;
    std::size_t i = 1; // after '{'
    const auto bad = [&](std::size_t at) {
        fail(file, line_no, static_cast<int>(block_column + at), metric,
             "a label is not written name=\"value\"; labels read {engine=\"0\",le=\"0.5\"}");
    };
    while (i < block.size()) {
        while (i < block.size() && (block[i] == ' ' || block[i] == ','))
            ++i;
        if (i >= block.size() || block[i] == '}')
            break;
        const std::size_t name_begin = i;
        while (i < block.size() && name_char(block[i]))
            ++i;
        if (i == name_begin || i + 1 >= block.size() || block[i] != '=' || block[i + 1] != '"')
            bad(name_begin);
        Label l{block.substr(name_begin, i - name_begin), {}};
        for (i += 2; i < block.size() && block[i] != '"'; ++i) {
            if (block[i] == '\\' && i + 1 < block.size()) {
                ++i;
                l.value.push_back(block[i] == 'n' ? '\n' : block[i]);
            } else {
                l.value.push_back(block[i]);
            }
        }
        if (i >= block.size())
            bad(name_begin);
        ++i; // the closing quote
        out.push_back(std::move(l));
    }
    return out;
}

/// The value of the label named exactly `name`; nullptr when the sample has none.
const std::string* label(const std::vector<Label>& labels, std::string_view name) {
    for (const auto& l : labels) {
        if (l.name == name)
            return &l.value;
    }
    return nullptr;
}

/// The series' identity: its name and its labels in name order. Two samples of one series in
/// one scrape would be counted twice, so the second is refused.
std::string series_key(const std::string& name, std::vector<Label> labels) {
    std::sort(labels.begin(), labels.end(),
              [](const Label& a, const Label& b) { return a.name < b.name; });
    std::string key = name;
    for (const auto& l : labels) {
        key.append(1, '\x1f').append(l.name).append(1, '=').append(l.value);
    }
    return key;
}

/// A timestamp of the exposition format is milliseconds since the epoch. One from 1e9 to 1e11
/// would be a day in 1970-1973 in milliseconds but is a date from 2001 on in seconds: a file
/// written in seconds, whose window would read 1000 times too short (issue 33).
constexpr double kLeastMsTimestamp = 1e11;
constexpr double kLeastSecondsTimestamp = 1e9;

/// The longest latency an observation may hold: a day. A request that took longer is no serving
/// measurement, and a 300-digit TPOT would reach the diagnosis as a number (issue 33).
constexpr double kMaxLatencyS = 86400;
constexpr double kMaxLatencyMs = kMaxLatencyS * 1e3;

/// Ten billion tokens of KV cache: at the smallest KV per token of any catalog model (a few KiB)
/// that is tens of TB, more than the memory of any server; a larger count is no log line.
constexpr std::int64_t kMaxKvTokens = 10'000'000'000;
/// 1e5 TFLOP/s per GPU: over ten times the densest 4-bit peak of any GPU (B200's ~9 PFLOPS).
constexpr double kMaxTflopsPerGpu = 1e5;

/// vLLM writes its KV cache usage as a fraction (1 = 100 %), named _perc all the same.
constexpr double kMaxFraction = 1.0;

} // namespace

MetricsScrape parse_metrics_scrape(std::string_view text, const std::string& file) {
    // A JSON object is not a scrape; `vllm bench serve --save-result` writes one, and users pass
    // it here by mistake. Say which flag takes it instead of a Prometheus parse error.
    if (const std::string_view t = trim(text); !t.empty() && t.front() == '{') {
        const bool bench = t.find("\"request_throughput\"") != std::string_view::npos ||
                           t.find("\"mean_ttft_ms\"") != std::string_view::npos;
        fail(file, 1, 1, "",
             bench ? "this is a `vllm bench serve` result (JSON), not a /metrics scrape; pass it "
                     "with --bench"
                   : "this is JSON, not the Prometheus text of a /metrics endpoint (curl "
                     "http://HOST:8000/metrics > scrape.txt)");
    }
    MetricsScrape out;
    std::unordered_map<std::string, int> seen; // series key -> line
    for_each_line(text, [&](int line_no, std::string_view line) {
        const std::string_view t = trim(line);
        if (t.empty() || t.front() == '#')
            return;
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
        const std::size_t labels_begin = i;
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
        const std::vector<Label> labels =
            i > labels_begin ? parse_labels(line.substr(labels_begin, i - labels_begin),
                                            labels_begin + 1, file, line_no, name)
                             : std::vector<Label>{};
        if (const auto [at, fresh] = seen.emplace(series_key(name, labels), line_no); !fresh) {
            fail(file, line_no, static_cast<int>(name_begin + 1), name,
                 fmt::format("the same series (name and labels) as line {}; a scrape has each "
                             "series once, so the file joins two scrapes: give them as two files",
                             at->second));
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
            if (*ts >= kLeastSecondsTimestamp && *ts < kLeastMsTimestamp) {
                fail(file, line_no,
                     static_cast<int>(trim(rest.substr(sp)).data() - line.data() + 1), name,
                     fmt::format("the timestamp {:g} reads as seconds since 1970; the exposition "
                                 "format writes milliseconds ({:g}), so the window would be 1000 "
                                 "times too short: write milliseconds or give --window",
                                 *ts, *ts * 1e3));
            }
            out.timestamp_ms = std::max(out.timestamp_ms.value_or(*ts), *ts);
        }
        if (name.ends_with("_bucket")) {
            // Buckets are summed over the other labels, bucket by bucket (le).
            const std::string* le_text = label(labels, "le");
            if (le_text == nullptr) {
                fail(file, line_no, static_cast<int>(labels_begin + 1), name,
                     "a _bucket sample without an le label; a histogram bucket names its upper "
                     "bound as le=\"0.5\"");
            }
            const auto le = to_number(*le_text);
            if (!le || std::isnan(*le) || !std::isfinite(*value) || *value < 0) {
                fail(file, line_no, static_cast<int>(labels_begin + 1), name,
                     "the bucket's le bound or count is not a number; write le=\"0.5\" or "
                     "le=\"+Inf\" and a count >= 0");
            }
            const std::string base = name.substr(0, name.size() - 7);
            out.buckets[base][*le] += *value;
            return;
        }
        if (!std::isfinite(*value)) {
            return; // NaN gauges carry nothing
        }
        // Every vLLM metric counts or times something: none is negative, and its fractions are
        // at most 1 (issue 33: a negative TTFT sum or a 99 "perc" was diagnosed).
        if (name.starts_with("vllm:") && *value < 0) {
            fail(file, line_no, static_cast<int>(value_text.data() - line.data() + 1), name,
                 fmt::format("is {:g}; vLLM's counters, sums and gauges are never negative",
                             *value));
        }
        if (is_fraction(name) && *value > kMaxFraction) {
            fail(file, line_no, static_cast<int>(value_text.data() - line.data() + 1), name,
                 fmt::format("is {:g}; vLLM writes the KV cache usage as a fraction from 0 to 1 "
                             "(1 = 100 %)",
                             *value));
        }
        out.sums[name] += *value;
        out.lines.emplace(name, line_no);
        ++out.series[name];
        // Counters by draft position (vllm:spec_decode_num_accepted_tokens_per_pos{position="i"})
        // are kept apart too, as NAME|position=i.
        if (name.starts_with("vllm:spec_decode_num_accepted_tokens_per_pos")) {
            const std::string* at = label(labels, "position");
            const auto pos = at == nullptr ? std::nullopt : to_number(*at);
            if (!pos || *pos < 0 || *pos > 64 || *pos != std::floor(*pos)) {
                fail(file, line_no, static_cast<int>(labels_begin + 1), name,
                     "a per-position counter without a position label from 0 to 64; vLLM writes "
                     "position=\"0\"");
            }
            out.sums[fmt::format("{}|position={}", name, static_cast<int>(*pos))] += *value;
        }
    });
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

/// The line of the first sample named `name` or `name`_total; 0 when none.
int line_of(const MetricsScrape& s, const std::string& name) {
    for (const std::string& n : {name + "_total", name}) {
        if (const auto it = s.lines.find(n); it != s.lines.end())
            return it->second;
    }
    return 0;
}

/// Counters that count parts of another: an accepted draft token was drafted, a prefix-cache
/// hit was a query. More parts than wholes is a file from two servers or an edited one, never
/// a measurement (issue 33: 1,125 % acceptance was diagnosed).
void check_counts_agree(const model::EngineMetrics& m, const MetricsScrape& s,
                        const std::string& file) {
    const auto check = [&](const std::optional<double>& part, const char* part_name,
                           const std::optional<double>& whole, const char* whole_name) {
        if (part && whole && *part > *whole) {
            fail(file, line_of(s, part_name), 1, part_name,
                 fmt::format("counts {:g}, more than the {:g} of {}: each is a part of those, so "
                             "the scrape joins two servers or was edited",
                             *part, *whole, whole_name));
        }
    };
    check(m.spec_accepted_tokens, "vllm:spec_decode_num_accepted_tokens", m.spec_draft_tokens,
          "vllm:spec_decode_num_draft_tokens");
    check(m.prefix_hits, "vllm:prefix_cache_hits", m.prefix_queries, "vllm:prefix_cache_queries");
    for (const double at_pos : m.spec_accepted_per_pos) {
        check(at_pos, "vllm:spec_decode_num_accepted_tokens_per_pos", m.spec_drafts,
              "vllm:spec_decode_num_drafts");
    }
}

model::EngineMetrics build(const MetricsScrape* earlier, const MetricsScrape& later,
                           const std::string& file) {
    bool any = false;
    for (const auto& [k, v] : later.sums)
        any = any || k.starts_with("vllm:");
    for (const auto& [k, v] : later.buckets)
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
        const double v = *sum / *count;
        if (name.ends_with("_seconds") && v > kMaxLatencyS) {
            fail(file, line_of(later, name + "_sum"), 1, name + "_sum",
                 fmt::format("gives a mean of {:g} s per request, more than a day; check the "
                             "scrape",
                             v));
        }
        return v;
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
    m.spec_drafts = counter("vllm:spec_decode_num_drafts");
    m.spec_draft_tokens = counter("vllm:spec_decode_num_draft_tokens");
    m.spec_accepted_tokens = counter("vllm:spec_decode_num_accepted_tokens");
    for (int pos = 0; pos <= 64; ++pos) {
        const std::string suffix = fmt::format("|position={}", pos);
        const std::string base = "vllm:spec_decode_num_accepted_tokens_per_pos";
        const bool total = later.sums.count(base + "_total" + suffix) != 0;
        if (!total && later.sums.count(base + suffix) == 0)
            break;
        const auto v = counter(base + (total ? "_total" : "") + suffix);
        m.spec_accepted_per_pos.push_back(v.value_or(0));
    }
    check_counts_agree(m, later, file);
    m.iteration_tokens_mean = mean("vllm:iteration_tokens_total");
    m.iteration_steps = counter("vllm:iteration_tokens_total_count");
    // Percentiles from the buckets (differences of the two scrapes' buckets for a window).
    const auto quantiles = [&](const std::string& name, std::optional<double>& p50,
                               std::optional<double>& p90, std::optional<double>& p99) {
        const auto it = later.buckets.find(name);
        if (it == later.buckets.end())
            return;
        std::vector<model::HistogramBucket> b;
        for (const auto& [le, count] : it->second) {
            double c = count;
            if (earlier) {
                const auto e = earlier->buckets.find(name);
                if (e != earlier->buckets.end()) {
                    const auto x = e->second.find(le);
                    if (x != e->second.end()) {
                        if (x->second > c) {
                            fail(file, 0, 0, name + "_bucket",
                                 fmt::format("le=\"{:g}\" went down from {:g} to {:g} between "
                                             "the scrapes: the server restarted in between or "
                                             "the files are in the wrong order",
                                             le, x->second, c));
                        }
                        c -= x->second;
                    }
                }
            }
            b.push_back({le, c});
        }
        if (b.empty() || !std::isinf(b.back().le)) {
            fail(file, 0, 0, name + "_bucket",
                 "has no le=\"+Inf\" bucket; save the whole /metrics text");
        }
        try {
            p50 = model::histogram_quantile(0.5, b);
            p90 = model::histogram_quantile(0.9, b);
            p99 = model::histogram_quantile(0.99, b);
        } catch (const InvalidArgument& err) {
            fail(file, 0, 0, name + "_bucket", err.what());
        }
    };
    quantiles("vllm:time_to_first_token_seconds", m.ttft_p50_s, m.ttft_p90_s, m.ttft_p99_s);
    quantiles("vllm:inter_token_latency_seconds", m.itl_p50_s, m.itl_p90_s, m.itl_p99_s);
    if (!m.itl_p50_s) {
        quantiles("vllm:time_per_output_token_seconds", m.itl_p50_s, m.itl_p90_s, m.itl_p99_s);
    }
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
    } catch (const json::out_of_range&) {
        // Found by fuzzing: a number beyond a double (1e999) throws out_of_range.
        fail(file, 1, 1, "", "a number is beyond the range of a double; give figures as written");
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
        if (std::string_view(key).ends_with("_ms") && v > kMaxLatencyMs) {
            const auto [line, column] = key_position(text, key);
            fail(file, line, column, key,
                 fmt::format("is {:g} ms, more than a day; expected a request's latency", v));
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
    for_each_line(text, [&](int line_no, std::string_view line) {
        if (trim(line).empty())
            return;
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
            return;
        }
        if (trim(line) == header_text)
            return; // `-l` repeats the header
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
    });
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

namespace {

/// 1-based line and column of byte `at` of `text`.
std::pair<int, int> line_col(std::string_view text, std::size_t at) {
    int line = 1, column = 1;
    for (std::size_t i = 0; i < at && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

/// Where a nested key is written: each key of `path` searched after the previous one (the n-th
/// occurrence for a "#n" element, an array index). {0, 0} when not found.
std::pair<int, int> path_position(std::string_view text, const std::vector<std::string>& path) {
    std::size_t at = 0;
    bool found = false;
    int skip = 0; // an array index: the key after it is the (index + 1)-th occurrence
    for (const auto& key : path) {
        if (key.starts_with("#")) {
            skip = std::stoi(key.substr(1));
            continue;
        }
        std::size_t k = text.find('"' + key + '"', at);
        for (; skip > 0 && k != std::string_view::npos; --skip)
            k = text.find('"' + key + '"', k + 1);
        skip = 0;
        if (k == std::string_view::npos)
            return found ? line_col(text, at) : std::pair<int, int>{0, 0};
        at = k;
        found = true;
    }
    return found ? line_col(text, at) : std::pair<int, int>{0, 0};
}

std::string dotted(const std::vector<std::string>& path) {
    std::string out;
    for (const auto& k : path) {
        if (k.starts_with("#")) {
            out += "[" + k.substr(1) + "]";
        } else {
            out += (out.empty() ? "" : ".") + k;
        }
    }
    return out;
}

json parse_json(std::string_view text, const std::string& file, const char* what) {
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        const auto [line, column] = line_col(text, e.byte > 0 ? e.byte - 1 : 0);
        fail(file, line, column, "", fmt::format("not valid JSON; give the {}", what));
    } catch (const json::out_of_range&) {
        fail(file, 1, 1, "", "a number is beyond the range of a double; give figures as written");
    }
}

/// A strict walker over one JSON document: every error names file:line:col and the key path.
struct JsonWalker {
    std::string_view text;
    const std::string& file;

    [[noreturn]] void error(const std::vector<std::string>& path, const std::string& msg) const {
        const auto [line, column] = path_position(text, path);
        fail(file, line, column, dotted(path), msg);
    }
    /// The value at `path` under `root`; nullptr when a key is absent or null.
    const json* find(const json& root, const std::vector<std::string>& path,
                     std::size_t from = 0) const {
        const json* j = &root;
        for (std::size_t i = from; i < path.size(); ++i) {
            const std::string& k = path[i];
            if (k.starts_with("#")) {
                const auto idx = static_cast<std::size_t>(std::stoul(k.substr(1)));
                if (!j->is_array() || idx >= j->size())
                    return nullptr;
                j = &(*j)[idx];
                continue;
            }
            if (!j->is_object()) {
                std::vector<std::string> at(path.begin(), path.begin() + static_cast<long>(i));
                error(at, fmt::format("is {}, expected an object with '{}'", j->type_name(), k));
            }
            const auto it = j->find(k);
            if (it == j->end() || it->is_null())
                return nullptr;
            j = &*it;
        }
        return j;
    }
    std::optional<double> number(const json& root, const std::vector<std::string>& path) const {
        const json* j = find(root, path);
        if (!j)
            return std::nullopt;
        if (!j->is_number())
            error(path, fmt::format("is {}, expected a number", j->type_name()));
        const double v = j->get<double>();
        if (!std::isfinite(v) || v < 0)
            error(path, fmt::format("is {}, expected a number >= 0", j->dump()));
        return v;
    }
    double required(const json& root, const std::vector<std::string>& path,
                    const std::string& hint) const {
        const auto v = number(root, path);
        if (!v)
            error(path, "missing; " + hint);
        return *v;
    }
    int count(const std::vector<std::string>& path, double v) const {
        if (v > 1e9)
            error(path, fmt::format("is {:g}, more than 1e9; check the file", v));
        return static_cast<int>(std::lround(v));
    }
};

} // namespace

namespace {

/// Most benchmarks one GuideLLM file may hold: a sweep has tens; each is read once.
constexpr int kMaxBenchmarks = 100'000;

/// Benchmark `index` of the parsed GuideLLM document `j` (the text is for positions in
/// messages). Taking the parsed document lets a file of n benchmarks be read in O(n), not
/// parsed again per benchmark (issue 33: 2,000 benchmarks took 58 s).
model::BenchSummary guidellm_bench(const json& j, std::string_view text, const std::string& file,
                                   std::optional<int> index) {
    const JsonWalker w{text, file};
    const std::string hint = "is this the benchmarks.json `guidellm benchmark --output-path` "
                             "writes? (benchmarks[].metrics with time_to_first_token_ms, "
                             "inter_token_latency_ms, output_tokens_per_second)";
    if (!j.is_object() || !j.contains("benchmarks"))
        w.error({"benchmarks"}, "missing; " + hint);
    const json& list = j["benchmarks"];
    if (!list.is_array() || list.empty())
        w.error({"benchmarks"}, "is not a non-empty array; " + hint);
    const int n = static_cast<int>(list.size());
    if (!index && n > 1) {
        w.error({"benchmarks"},
                fmt::format("holds {} benchmarks (a sweep); choose one with --bench-index 0..{}", n,
                            n - 1));
    }
    const int i = index.value_or(0);
    if (i < 0 || i >= n) {
        w.error({"benchmarks"},
                fmt::format("has no benchmark {}; --bench-index takes 0..{}", i, n - 1));
    }
    const std::string at = "#" + std::to_string(i);
    const auto p = [&](std::initializer_list<std::string> keys) {
        std::vector<std::string> v{"benchmarks", at};
        v.insert(v.end(), keys);
        return v;
    };
    if (!w.find(j, p({"metrics"})))
        w.error(p({"metrics"}), "missing; " + hint);
    model::BenchSummary b;
    b.tool = "guidellm";
    // Successful requests: metrics.request_totals (0.4 and later) or the benchmark's own.
    std::optional<double> ok = w.number(j, p({"metrics", "request_totals", "successful"}));
    if (!ok)
        ok = w.number(j, p({"request_totals", "successful"}));
    if (!ok)
        w.error(p({"metrics", "request_totals", "successful"}), "missing; " + hint);
    b.completed = w.count(p({"metrics", "request_totals", "successful"}), *ok);
    if (b.completed == 0) {
        w.error(p({"metrics", "request_totals", "successful"}),
                "is 0: no request finished, so there is nothing to diagnose");
    }
    if (const auto d = w.number(j, p({"duration"}))) {
        b.duration_s = *d;
    } else {
        const auto s0 = w.number(j, p({"scheduler_metrics", "measure_start_time"}));
        const auto s1 = w.number(j, p({"scheduler_metrics", "measure_end_time"}));
        if (!s0 || !s1 || *s1 <= *s0) {
            w.error(p({"duration"}), "missing, and scheduler_metrics has no measure_start_time < "
                                     "measure_end_time; " +
                                         hint);
        }
        b.duration_s = *s1 - *s0;
    }
    const auto stat = [&](const char* metric, std::initializer_list<std::string> field) {
        std::vector<std::string> v = p({"metrics", metric, "successful"});
        v.insert(v.end(), field);
        const auto x = w.number(j, v);
        if (x && std::string_view(metric).ends_with("_ms") && *x > kMaxLatencyMs)
            w.error(v,
                    fmt::format("is {:g} ms, more than a day; expected a request's latency", *x));
        return x;
    };
    b.mean_ttft_ms = stat("time_to_first_token_ms", {"mean"});
    b.median_ttft_ms = stat("time_to_first_token_ms", {"median"});
    b.p99_ttft_ms = stat("time_to_first_token_ms", {"percentiles", "p99"});
    // GuideLLM's inter_token_latency_ms is (latency − TTFT) / (output tokens − 1): vLLM's TPOT.
    // Its time_per_output_token_ms is latency / output tokens, the first token included.
    b.mean_tpot_ms = stat("inter_token_latency_ms", {"mean"});
    b.p99_tpot_ms = stat("inter_token_latency_ms", {"percentiles", "p99"});
    b.mean_itl_ms = b.mean_tpot_ms;
    b.mean_ms_per_token_incl_first = stat("time_per_output_token_ms", {"mean"});
    b.request_throughput = stat("requests_per_second", {"mean"});
    b.output_throughput = stat("output_tokens_per_second", {"mean"});
    b.total_input_tokens = stat("prompt_token_count", {"total_sum"});
    b.total_output_tokens = stat("output_token_count", {"total_sum"});
    if (const auto c = stat("request_concurrency", {"mean"}))
        b.max_concurrency = std::max(1, w.count(p({"metrics", "request_concurrency"}), *c));
    if (!b.mean_tpot_ms && !b.mean_ttft_ms && !b.output_throughput) {
        w.error(p({"metrics", "inter_token_latency_ms"}),
                "missing, and so are time_to_first_token_ms and output_tokens_per_second; " + hint);
    }
    return b;
}

} // namespace

model::BenchSummary parse_guidellm(std::string_view text, const std::string& file,
                                   std::optional<int> index) {
    const json j = parse_json(text, file, "benchmarks.json GuideLLM writes (--output-path)");
    return guidellm_bench(j, text, file, index);
}

model::BenchSummary parse_aiperf(std::string_view text, const std::string& file) {
    const json doc = parse_json(text, file, "profile_export_aiperf.json AIPerf writes");
    const JsonWalker w{text, file};
    const std::string hint = "is this the profile_export_aiperf.json `aiperf profile` writes? "
                             "(request_count, benchmark_duration, time_to_first_token, "
                             "inter_token_latency, each with unit and avg)";
    if (!doc.is_object())
        w.error({}, "expected a JSON object; " + hint);
    // Some versions put the metrics under "records".
    const bool nested =
        doc.contains("records") && doc["records"].is_object() && !doc.contains("request_count");
    const auto path = [&](const std::string& metric, const std::string& field) {
        return nested ? std::vector<std::string>{"records", metric, field}
                      : std::vector<std::string>{metric, field};
    };
    const auto in_ms = [&](const std::string& metric, const std::string& field,
                           double v) -> double {
        const json* unit = w.find(doc, path(metric, "unit"));
        if (!unit)
            return v; // AIPerf writes times in ms
        if (!unit->is_string())
            w.error(path(metric, "unit"), "is not a string such as \"ms\"");
        const std::string u = unit->get<std::string>();
        const double ms = u == "ms"                ? v
                          : u == "s" || u == "sec" ? v * 1e3
                          : u == "ns"              ? v / 1e6
                          : u == "us"              ? v / 1e3
                                                   : -1;
        if (ms < 0) {
            w.error(path(metric, "unit"),
                    fmt::format("is \"{}\"; expected a time unit: ms, s, sec, us or ns", u));
        }
        if (ms > kMaxLatencyMs) {
            w.error(path(metric, field),
                    fmt::format("is {:g} ms, more than a day; expected a request's latency", ms));
        }
        return ms;
    };
    // A rate's unit, where the file gives one (issue 33: "tokens/ms" was read as per second).
    const auto per_s = [&](const std::string& metric, double v) -> double {
        const json* unit = w.find(doc, path(metric, "unit"));
        if (!unit)
            return v; // AIPerf writes rates per second
        const std::string u = unit->is_string() ? unit->get<std::string>() : "";
        const auto slash = u.rfind('/');
        const std::string per = slash == std::string::npos ? "" : u.substr(slash + 1);
        if (per == "sec" || per == "s")
            return v;
        if (per == "ms")
            return v * 1e3;
        if (per == "min")
            return v / 60;
        w.error(path(metric, "unit"),
                fmt::format("is {}; expected a rate such as \"tokens/sec\" or "
                            "\"requests/sec\" (per sec, s, ms or min)",
                            unit->dump()));
    };
    const auto value = [&](const std::string& metric, const std::string& field,
                           double ms_scale) -> std::optional<double> {
        const auto v = w.number(doc, path(metric, field));
        if (!v)
            return v;
        if (ms_scale == 0)
            return v;
        return in_ms(metric, field, *v);
    };
    const auto rate = [&](const std::string& metric) -> std::optional<double> {
        const auto v = w.number(doc, path(metric, "avg"));
        return v ? std::optional<double>(per_s(metric, *v)) : std::nullopt;
    };
    model::BenchSummary b;
    b.tool = "aiperf";
    const double count = w.required(doc, path("request_count", "avg"), hint);
    b.completed = w.count(path("request_count", "avg"), count);
    if (b.completed == 0) {
        w.error(path("request_count", "avg"),
                "is 0: no request finished, so there is nothing to diagnose");
    }
    // benchmark_duration is in seconds (unit "sec") in AIPerf.
    b.duration_s = w.required(doc, path("benchmark_duration", "avg"), hint);
    if (const json* u = w.find(doc, path("benchmark_duration", "unit"))) {
        const std::string unit = u->is_string() ? u->get<std::string>() : "";
        if (unit == "ms") {
            b.duration_s /= 1e3;
        } else if (unit == "ns") {
            b.duration_s /= 1e9;
        } else if (unit != "sec" && unit != "s") {
            w.error(path("benchmark_duration", "unit"),
                    fmt::format("is {}; expected \"sec\", \"s\", \"ms\" or \"ns\"", u->dump()));
        }
    }
    b.mean_ttft_ms = value("time_to_first_token", "avg", 1.0);
    b.median_ttft_ms = value("time_to_first_token", "p50", 1.0);
    b.p99_ttft_ms = value("time_to_first_token", "p99", 1.0);
    // AIPerf's inter_token_latency is (request latency − TTFT) / (output tokens − 1): TPOT.
    b.mean_tpot_ms = value("inter_token_latency", "avg", 1.0);
    b.p99_tpot_ms = value("inter_token_latency", "p99", 1.0);
    b.mean_itl_ms = b.mean_tpot_ms;
    b.request_throughput = rate("request_throughput");
    b.output_throughput = rate("output_token_throughput");
    b.total_input_tokens = value("total_isl", "avg", 0);
    b.total_output_tokens = value("total_osl", "avg", 0);
    if (!b.total_output_tokens) // some versions name it total_output_tokens
        b.total_output_tokens = value("total_output_tokens", "avg", 0);
    if (const auto c = w.number(doc, {"input_config", "loadgen", "concurrency"}))
        b.max_concurrency = std::max(1, w.count({"input_config", "loadgen", "concurrency"}, *c));
    if (!b.mean_tpot_ms && !b.mean_ttft_ms && !b.output_throughput) {
        w.error(path("inter_token_latency", "avg"),
                "missing, and so are time_to_first_token and output_token_throughput; " + hint);
    }
    return b;
}

namespace {

std::vector<std::pair<std::string_view, int>> split_ws(std::string_view line) {
    std::vector<std::pair<std::string_view, int>> out; // token, 1-based column
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])))
            ++i;
        const std::size_t b = i;
        while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i])))
            ++i;
        if (i > b)
            out.emplace_back(line.substr(b, i - b), static_cast<int>(b + 1));
    }
    return out;
}

} // namespace

model::GpuTelemetry parse_nvidia_smi_dmon(std::string_view text, const std::string& file) {
    std::vector<std::string> cols;
    struct Acc {
        double sum = 0;
        int n = 0;
    };
    std::map<std::string, Acc> acc;
    model::GpuTelemetry t;
    t.source = "nvidia-smi dmon";
    for_each_line(text, [&](int line_no, std::string_view line) {
        if (trim(line).empty())
            return;
        if (trim(line).front() == '#') {
            auto tokens = split_ws(trim(line).substr(1));
            if (!tokens.empty() && (tokens[0].first == "gpu" || tokens[0].first == "Date" ||
                                    tokens[0].first == "Time")) {
                std::vector<std::string> names;
                names.reserve(tokens.size());
                for (const auto& [tok, col] : tokens)
                    names.emplace_back(tok);
                if (!cols.empty() && names != cols) {
                    fail(file, line_no, 1, "",
                         "a second header with other columns; save one dmon run per file");
                }
                cols = std::move(names);
            }
            return; // the units line (# Idx W C ...) and comments
        }
        if (cols.empty()) {
            fail(file, line_no, 1, "",
                 "a sample before the '# gpu pwr ...' header; save the whole output of "
                 "`nvidia-smi dmon -s pucv` (with its two header lines)");
        }
        const auto fields = split_ws(line);
        if (fields.size() != cols.size()) {
            fail(file, line_no, 1, "",
                 fmt::format("{} fields where the header has {}; every line needs one value "
                             "per column",
                             fields.size(), cols.size()));
        }
        ++t.samples;
        for (std::size_t i = 0; i < cols.size(); ++i) {
            const std::string& c = cols[i];
            if (c != "pwr" && c != "sm" && c != "mem" && c != "pclk" && c != "pviol" &&
                c != "tviol") {
                continue;
            }
            const auto [v, column] = fields[i];
            if (v == "-" || v == "N/A")
                continue;
            const auto x = to_number(v);
            if (!x || !std::isfinite(*x) || *x < 0) {
                fail(file, line_no, column, c,
                     fmt::format("'{}' is not a number >= 0 (dmon writes '-' for no value)", v));
            }
            if ((c == "sm" || c == "mem" || c == "pviol") && *x > 100) {
                fail(file, line_no, column, c, fmt::format("{:g} % is above 100 %", *x));
            }
            acc[c].sum += *x;
            ++acc[c].n;
        }
    });
    if (cols.empty()) {
        fail(file, 0, 0, "",
             "no '# gpu pwr ...' header; save the output of `nvidia-smi dmon -s pucv` while the "
             "server is under load");
    }
    if (t.samples == 0) {
        fail(file, 0, 0, "", "no samples after the header; run dmon while the server is loaded");
    }
    const auto avg = [&](const char* c) -> std::optional<double> {
        const auto it = acc.find(c);
        return it == acc.end() || it->second.n == 0
                   ? std::nullopt
                   : std::optional<double>(it->second.sum / it->second.n);
    };
    if (const auto v = avg("sm"))
        t.utilization_gpu = *v / 100.0;
    if (const auto v = avg("mem"))
        t.utilization_memory = *v / 100.0;
    t.power_draw_w = avg("pwr");
    t.sm_clock_mhz = avg("pclk");
    const auto pviol = avg("pviol");
    const auto tviol = acc.find("tviol");
    if (pviol || tviol != acc.end()) {
        t.has_throttle_reasons = true;
        t.power_cap_share = pviol.value_or(0.0) / 100.0;
        if (tviol != acc.end()) {
            // tviol is a flag per sample (1: thermal violation): the mean is the share.
            t.thermal_share = std::min(1.0, tviol->second.sum / std::max(1, tviol->second.n));
        }
    }
    return t;
}

model::GpuTelemetry parse_dcgm_metrics(std::string_view text, const std::string& file) {
    const MetricsScrape s = parse_metrics_scrape(text, file);
    const auto avg = [&](const char* name) -> std::optional<double> {
        const auto it = s.sums.find(name);
        if (it == s.sums.end())
            return std::nullopt;
        return it->second / std::max(1, s.series.at(name));
    };
    model::GpuTelemetry t;
    t.source = "dcgm";
    int any = 0;
    for (const auto& [name, n] : s.series) {
        if (name.starts_with("DCGM_FI_")) {
            any = std::max(any, n);
        }
    }
    if (any == 0) {
        fail(file, 0, 0, "",
             "no DCGM_FI_ metric found; save dcgm-exporter's endpoint "
             "(curl http://HOST:9400/metrics > FILE)");
    }
    t.samples = any;
    const auto fraction = [&](const char* name, std::optional<double>& out) {
        if (const auto v = avg(name)) {
            if (*v < 0 || *v > 1.0 + 1e-9) {
                fail(
                    file, 0, 0, name,
                    fmt::format("averages {:g}; DCGM profiling fields are ratios from 0 to 1", *v));
            }
            out = std::min(1.0, *v);
        }
    };
    fraction("DCGM_FI_PROF_SM_ACTIVE", t.sm_active);
    fraction("DCGM_FI_PROF_DRAM_ACTIVE", t.dram_active);
    fraction("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", t.tensor_active);
    if (const auto v = avg("DCGM_FI_DEV_GPU_UTIL")) {
        if (*v > 100) {
            fail(file, 0, 0, "DCGM_FI_DEV_GPU_UTIL",
                 fmt::format("averages {:g} %, above 100 %", *v));
        }
        t.utilization_gpu = *v / 100.0;
    }
    if (const auto v = avg("DCGM_FI_DEV_MEM_COPY_UTIL"))
        t.utilization_memory = std::min(100.0, *v) / 100.0;
    t.power_draw_w = avg("DCGM_FI_DEV_POWER_USAGE");
    t.power_limit_w = avg("DCGM_FI_DEV_POWER_MGMT_LIMIT");
    t.sm_clock_mhz = avg("DCGM_FI_DEV_SM_CLOCK");
    t.max_sm_clock_mhz = avg("DCGM_FI_DEV_MAX_SM_CLOCK");
    for (const auto& [name, v] : {std::pair{"DCGM_FI_DEV_POWER_USAGE", t.power_draw_w},
                                  std::pair{"DCGM_FI_DEV_SM_CLOCK", t.sm_clock_mhz}}) {
        if (v && *v < 0) {
            fail(file, 0, 0, name, fmt::format("averages {:g}; expected a value >= 0", *v));
        }
    }
    // DCGM_FI_DEV_CLOCK_THROTTLE_REASONS (newer: DCGM_FI_DEV_CLOCKS_EVENT_REASONS): the NVML
    // bit mask per GPU; the share of GPUs with each reason set. The scrape's sums lose the
    // per-GPU masks, so the lines are read again here.
    int gpus = 0, power = 0, thermal = 0;
    for_each_line(text, [&](int line_no, std::string_view line) {
        const std::string_view t0 = trim(line);
        if (!(t0.starts_with("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS") ||
              t0.starts_with("DCGM_FI_DEV_CLOCKS_EVENT_REASONS"))) {
            return;
        }
        const std::size_t close = t0.rfind('}');
        const std::size_t from =
            close == std::string_view::npos ? t0.find_first_of(" \t") : close + 1;
        const auto parts = split_ws(t0.substr(from));
        const auto v = parts.empty() ? std::nullopt : to_number(parts[0].first);
        if (!v || !std::isfinite(*v) || *v < 0 || *v > 1.8e19) {
            fail(file, line_no, 1, std::string(t0.substr(0, t0.find_first_of("{ \t"))),
                 "the throttle reasons are not a bit mask (a number >= 0)");
        }
        const auto mask = static_cast<unsigned long long>(*v);
        ++gpus;
        if (mask & 0x4ULL)
            ++power;
        if (mask & 0xE8ULL)
            ++thermal;
    });
    if (gpus > 0) {
        t.has_throttle_reasons = true;
        t.power_cap_share = static_cast<double>(power) / gpus;
        t.thermal_share = static_cast<double>(thermal) / gpus;
    }
    return t;
}

namespace {

/// "432,880" or "432880" → 432880; nullopt otherwise.
std::optional<std::int64_t> grouped_integer(std::string_view s) {
    std::string digits;
    for (const char c : s) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            digits += c;
        } else if (c != ',') {
            return std::nullopt;
        }
    }
    if (digits.empty() || digits.size() > 15)
        return std::nullopt;
    return std::stoll(digits);
}

} // namespace

model::EngineStartup parse_startup_log(std::string_view text, const std::string& file) {
    model::EngineStartup st;
    // Every worker logs its pool; the engine runs with the smallest (vLLM and SGLang take the
    // minimum over workers), so the smallest logged value is kept.
    const auto set_kv = [&](std::int64_t v, int line_no, const char* engine) {
        if (v > kMaxKvTokens) {
            fail(file, line_no, 1, "kv cache tokens",
                 fmt::format("{} tokens is more than 1e10, more KV cache than the memory of any "
                             "server holds; copy the line as the engine logs it",
                             v));
        }
        if (!st.kv_tokens || v < *st.kv_tokens) {
            st.kv_tokens = v;
            st.line = line_no;
        }
        st.engine = engine;
    };
    /// The integer that follows `key` in `line` (up to a non-digit, commas allowed).
    const auto integer_after = [&](std::string_view line, std::size_t at, int line_no,
                                   const std::string& key) {
        std::size_t e = at;
        while (e < line.size() &&
               (std::isdigit(static_cast<unsigned char>(line[e])) || line[e] == ','))
            ++e;
        while (e > at && line[e - 1] == ',')
            --e;
        const auto v = grouped_integer(line.substr(at, e - at));
        if (!v) {
            fail(file, line_no, static_cast<int>(at + 1), key,
                 fmt::format("'{}' is not a token count; copy the line as the engine logs it",
                             trim(line.substr(at))));
        }
        return *v;
    };
    for_each_line(text, [&](int line_no, std::string_view line) {
        // SGLang: "KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V size: 1.42 GB"
        // (python/sglang/srt/mem_cache/memory_pool.py) and "max_total_num_tokens=46611,
        // chunked_prefill_size=8192, ..., context_len=32768" (the scheduler).
        if (const auto at = line.find("KV Cache is allocated. #tokens: ");
            at != std::string_view::npos) {
            set_kv(integer_after(line, at + 32, line_no, "#tokens"), line_no, "sglang");
            return;
        }
        if (const auto at = line.find("max_total_num_tokens="); at != std::string_view::npos) {
            set_kv(integer_after(line, at + 21, line_no, "max_total_num_tokens"), line_no,
                   "sglang");
            if (const auto c = line.find("context_len="); c != std::string_view::npos) {
                const auto len = integer_after(line, c + 12, line_no, "context_len");
                if (len > 1000000000) {
                    fail(file, line_no, static_cast<int>(c + 13), "context_len",
                         "is more than 1e9 tokens; check the log");
                }
                st.concurrency_len = static_cast<int>(len);
            }
            return;
        }
        // TensorRT-LLM: "[MemUsageChange] Allocated 26.91 GiB for max tokens in paged KV cache
        // (220480)." (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp).
        if (const auto at = line.find("for max tokens in paged KV cache (");
            at != std::string_view::npos) {
            set_kv(integer_after(line, at + 34, line_no, "paged KV cache"), line_no,
                   "tensorrt-llm");
            return;
        }
        // vLLM V1: "GPU KV cache size: 432,880 tokens" (vllm/v1/core/kv_cache_utils.py).
        if (const auto at = line.find("GPU KV cache size:"); at != std::string_view::npos) {
            const std::size_t b = at + 18;
            const std::string_view rest = trim(line.substr(b));
            const std::size_t sp = rest.find(' ');
            const auto v = grouped_integer(rest.substr(0, sp));
            if (!v || sp == std::string_view::npos || !rest.substr(sp).starts_with(" tokens")) {
                fail(file, line_no, static_cast<int>(b + 1), "GPU KV cache size",
                     fmt::format("'{}' is not 'N tokens'; copy the line as vLLM logs it", rest));
            }
            set_kv(*v, line_no, "vllm");
            return;
        }
        // V1: "Maximum concurrency for 8,192 tokens per request: 52.84x".
        if (const auto at = line.find("Maximum concurrency for "); at != std::string_view::npos) {
            const std::size_t b = at + 24;
            const std::string_view rest = line.substr(b);
            const std::size_t sp = rest.find(' ');
            const std::size_t colon = rest.find(": ");
            const auto len = grouped_integer(rest.substr(0, sp));
            std::string_view x =
                colon == std::string_view::npos ? std::string_view() : trim(rest.substr(colon + 2));
            if (x.ends_with("x"))
                x.remove_suffix(1);
            const auto conc = to_number(x);
            if (!len || !conc || !std::isfinite(*conc) || *conc < 0 || *len > 1000000000) {
                fail(file, line_no, static_cast<int>(b + 1), "Maximum concurrency",
                     fmt::format("'{}' is not 'L tokens per request: X.XXx'; copy the line as "
                                 "vLLM logs it",
                                 trim(rest)));
            }
            st.concurrency_len = static_cast<int>(*len);
            st.max_concurrency = *conc;
            return;
        }
        // V0: "# GPU blocks: 27050, # CPU blocks: 2048" (later "# cuda blocks: ...").
        for (const std::string_view key :
             {std::string_view("# GPU blocks:"), std::string_view("# cuda blocks:")}) {
            if (const auto at = line.find(key); at != std::string_view::npos) {
                const std::size_t b = at + key.size();
                std::string_view rest = trim(line.substr(b));
                const std::size_t end = rest.find(", ");
                const auto v = grouped_integer(rest.substr(0, end));
                if (!v) {
                    fail(file, line_no, static_cast<int>(b + 1), std::string(key.substr(2)),
                         fmt::format("'{}' is not a block count; copy the line as vLLM logs it",
                                     rest));
                }
                if (*v > kMaxKvTokens) {
                    fail(file, line_no, static_cast<int>(b + 1), std::string(key.substr(2)),
                         fmt::format("{} blocks is more than 1e10, more KV cache than the memory "
                                     "of any server holds",
                                     *v));
                }
                st.gpu_blocks = *v;
                st.engine = "vllm";
                if (!st.kv_tokens)
                    st.line = line_no;
                return;
            }
        }
    });
    if (!st.kv_tokens && !st.gpu_blocks) {
        fail(file, 0, 0, "",
             "no KV cache line: vLLM's 'GPU KV cache size: N tokens' (V1) or '# GPU blocks: N' "
             "(V0), SGLang's 'KV Cache is allocated. #tokens: N', TensorRT-LLM's 'Allocated X "
             "GiB for max tokens in paged KV cache (N)'; give the server's start-up log");
    }
    return st;
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

model::BenchSummary read_guidellm(const std::filesystem::path& path, std::optional<int> index) {
    return parse_guidellm(read_text_file(path, "GuideLLM benchmarks.json", kMaxTableBytes),
                          path.string(), index);
}

model::BenchSummary read_aiperf(const std::filesystem::path& path) {
    return parse_aiperf(read_text_file(path, "AIPerf profile export"), path.string());
}

std::vector<LabelledBench> parse_bench_results(std::string_view text, const std::string& file) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception&) {
        // The vLLM reader reports where the JSON breaks (or which number overflows).
        return {{file, parse_vllm_bench(text, file)}};
    }
    std::vector<LabelledBench> out;
    if (j.is_object() && j.contains("benchmarks")) {
        const json& list = j["benchmarks"];
        const int n = list.is_array()
                          ? static_cast<int>(std::min<std::size_t>(list.size(), kMaxBenchmarks + 1))
                          : 0;
        if (n > kMaxBenchmarks) {
            fail(file, 1, 1, "benchmarks",
                 fmt::format("holds more than {} benchmarks; split the sweep into files",
                             kMaxBenchmarks));
        }
        if (n <= 1)
            return {{file, guidellm_bench(j, text, file, std::nullopt)}};
        out.reserve(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
            out.push_back({file + "#" + std::to_string(i), guidellm_bench(j, text, file, i)});
        }
        return out;
    }
    if (j.is_object() && (j.contains("request_count") || j.contains("benchmark_duration") ||
                          j.contains("records"))) {
        return {{file, parse_aiperf(text, file)}};
    }
    return {{file, parse_vllm_bench(text, file)}};
}

std::vector<LabelledBench> read_bench_results(const std::filesystem::path& path) {
    return parse_bench_results(read_text_file(path, "benchmark result", kMaxTableBytes),
                               path.string());
}

model::GpuTelemetry read_nvidia_smi_dmon(const std::filesystem::path& path) {
    return parse_nvidia_smi_dmon(read_text_file(path, "nvidia-smi dmon output", kMaxTableBytes),
                                 path.string());
}

model::GpuTelemetry read_dcgm_metrics(const std::filesystem::path& path) {
    return parse_dcgm_metrics(read_text_file(path, "DCGM exporter scrape", kMaxTableBytes),
                              path.string());
}

model::EngineStartup read_startup_log(const std::filesystem::path& path) {
    return parse_startup_log(read_text_file(path, "engine start-up log", kMaxTableBytes),
                             path.string());
}

namespace {

/// The number that follows `key` in a Megatron-LM log line, up to the next '|'; nullopt when the
/// key is absent. A key present with something else than a number is an error.
std::optional<double> megatron_field(std::string_view line, std::string_view key,
                                     const std::string& file, int line_no) {
    const auto at = line.find(key);
    if (at == std::string_view::npos)
        return std::nullopt;
    const std::size_t b = at + key.size();
    const std::size_t bar = line.find('|', b);
    const std::string_view text =
        trim(line.substr(b, bar == std::string_view::npos ? std::string_view::npos : bar - b));
    // "throughput per GPU (TFLOP/s/GPU): 80.2" or newer "... : 496.3 (avg 496.1)": the first word.
    const std::string_view word = text.substr(0, text.find(' '));
    const auto v = to_number(word);
    if (!v || !std::isfinite(*v) || *v < 0) {
        fail(file, line_no, static_cast<int>(b + 1),
             std::string(trim(key.substr(0, key.size() - 1))),
             fmt::format("'{}' is not a non-negative number; copy the line as Megatron-LM logs it",
                         text));
    }
    return v;
}

} // namespace

model::TrainingLog parse_training_log(std::string_view text, const std::string& file) {
    model::TrainingLog log;
    struct Step {
        double seconds;
        int line;
    };
    std::vector<Step> steps;
    std::vector<double> tflops, tokens;
    bool csv = false;
    int seconds_col = -1, tokens_col = -1, step_col = -1, columns = 0;
    bool first = true;
    for_each_line(text, [&](int line_no, std::string_view raw) {
        const std::string_view line = trim(raw);
        if (line.empty())
            return;
        if (first) {
            first = false;
            if (line.starts_with("step,") || line == "step") {
                csv = true;
                const auto cols = split_csv(line);
                columns = static_cast<int>(cols.size());
                for (int i = 0; i < columns; ++i) {
                    const std::string_view c = trim(cols[static_cast<std::size_t>(i)]);
                    if (c == "step")
                        step_col = i;
                    else if (c == "seconds" || c == "step_time_s")
                        seconds_col = i;
                    else if (c == "tokens")
                        tokens_col = i;
                }
                if (seconds_col < 0) {
                    fail(file, line_no, 1, "seconds",
                         "the CSV header has no 'seconds' column; write 'step,seconds[,tokens]'");
                }
                return;
            }
        }
        if (csv) {
            if (line.starts_with('#'))
                return;
            const auto cols = split_csv(line);
            if (static_cast<int>(cols.size()) != columns) {
                fail(file, line_no, 1, "step",
                     fmt::format("{} values where the header names {}; write one value per column",
                                 cols.size(), columns));
            }
            const auto cell = [&](int i, const char* key) {
                const auto v = to_number(cols[static_cast<std::size_t>(i)]);
                if (!v || !std::isfinite(*v) || *v < 0) {
                    fail(file, line_no, 1, key,
                         fmt::format("'{}' is not a non-negative number",
                                     trim(cols[static_cast<std::size_t>(i)])));
                }
                return *v;
            };
            if (step_col >= 0)
                (void)cell(step_col, "step");
            const double sec = cell(seconds_col, "seconds");
            if (sec <= 0) {
                fail(file, line_no, 1, "seconds", "a step takes more than 0 seconds");
            }
            steps.push_back({sec, line_no});
            if (tokens_col >= 0)
                tokens.push_back(cell(tokens_col, "tokens"));
            return;
        }
        // PyTorch: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ...".
        if (log.oom_line == 0 && (line.find("out of memory") != std::string_view::npos ||
                                  line.find("OutOfMemoryError") != std::string_view::npos)) {
            log.oom_line = line_no;
        }
        // Megatron-LM report_memory: "[Rank 0] (after 10 iterations) memory (MB) | allocated: ...
        // | max reserved: 74306.0".
        if (line.find("memory (MB) |") != std::string_view::npos) {
            if (const auto v = megatron_field(line, "max reserved:", file, line_no)) {
                log.max_reserved_mib = std::max(log.max_reserved_mib.value_or(0), *v);
            }
            return;
        }
        // Megatron-LM training_log: " [date] iteration   10/  500 | consumed samples: ... |
        // elapsed time per iteration (ms): 1548.1 | throughput per GPU (TFLOP/s/GPU): 57.6 | ...".
        const auto it = line.find("iteration ");
        const auto bar = line.find('|');
        if (it == std::string_view::npos || bar == std::string_view::npos || bar < it ||
            line.substr(it, bar - it).find('/') == std::string_view::npos) {
            return;
        }
        const auto ms = megatron_field(line, "elapsed time per iteration (ms):", file, line_no);
        if (!ms) {
            fail(file, line_no, static_cast<int>(bar + 1), "elapsed time per iteration (ms)",
                 "an iteration line without its step time; give the log as Megatron-LM writes it");
        }
        if (*ms <= 0) {
            fail(file, line_no, static_cast<int>(bar + 1), "elapsed time per iteration (ms)",
                 "a step takes more than 0 ms");
        }
        steps.push_back({*ms / 1e3, line_no});
        if (const auto tf =
                megatron_field(line, "throughput per GPU (TFLOP/s/GPU):", file, line_no)) {
            if (*tf > kMaxTflopsPerGpu) {
                fail(file, line_no, 1, "throughput per GPU (TFLOP/s/GPU)",
                     fmt::format("{:g} TFLOP/s is more than 1e5, over ten times the dense peak of "
                                 "any GPU; copy the line as Megatron-LM logs it",
                                 *tf));
            }
            tflops.push_back(*tf);
        }
    });
    if (steps.empty() && log.oom_line == 0) {
        fail(file, 1, 1, csv ? "seconds" : "elapsed time per iteration (ms)",
             "no step times found; give Megatron-LM's iteration lines or a CSV "
             "'step,seconds[,tokens]'");
    }
    log.format = csv ? "csv" : "megatron";
    if (steps.empty()) {
        return log; // out of memory before the first step: nothing to time
    }
    // The first step holds the warm-up (compilation, allocator growth, the data loader's start).
    const std::size_t skip = steps.size() >= 3 ? 1 : 0;
    const auto mean_of = [&](const std::vector<double>& v) {
        double sum = 0;
        const std::size_t k = v.size() > skip ? skip : 0;
        for (std::size_t i = k; i < v.size(); ++i)
            sum += v[i];
        return sum / static_cast<double>(v.size() - k);
    };
    double sum = 0;
    for (std::size_t i = skip; i < steps.size(); ++i) {
        sum += steps[i].seconds;
        if (steps[i].seconds > log.step_max_s) {
            log.step_max_s = steps[i].seconds;
            log.step_max_line = steps[i].line;
        }
    }
    log.steps = static_cast<int>(steps.size() - skip);
    log.step_mean_s = sum / log.steps;
    double var = 0;
    for (std::size_t i = skip; i < steps.size(); ++i)
        var += (steps[i].seconds - log.step_mean_s) * (steps[i].seconds - log.step_mean_s);
    log.step_stddev_s = std::sqrt(var / log.steps);
    if (!tflops.empty())
        log.tflops_per_gpu = mean_of(tflops);
    if (!tokens.empty())
        log.tokens_per_step = mean_of(tokens);
    return log;
}

model::TrainingLog read_training_log(const std::filesystem::path& path) {
    return parse_training_log(read_text_file(path, "training log", kMaxTableBytes), path.string());
}

bool ObservationFiles::empty() const {
    return metrics.empty() && bench.empty() && guidellm.empty() && aiperf.empty() && smi.empty() &&
           dmon.empty() && dcgm.empty() && startup_log.empty() && training_log.empty();
}

model::Observations read_observations(const ObservationFiles& files) {
    if (files.metrics.size() > 2) {
        throw InvalidArgument(fmt::format("{} metrics scrapes are given; give one scrape, or two "
                                          "(earlier first) for rates",
                                          files.metrics.size()));
    }
    if (files.interval_s && (!std::isfinite(*files.interval_s) || *files.interval_s <= 0)) {
        throw InvalidArgument("the interval between the scrapes must be a positive number of "
                              "seconds");
    }
    if (files.interval_s && files.metrics.size() != 2) {
        throw InvalidArgument("an interval needs two metrics scrapes (earlier first)");
    }
    if (static_cast<int>(!files.bench.empty()) + static_cast<int>(!files.guidellm.empty()) +
            static_cast<int>(!files.aiperf.empty()) >
        1) {
        throw InvalidArgument("give one benchmark result: vllm bench, GuideLLM or AIPerf");
    }
    if (files.bench_index && files.guidellm.empty()) {
        throw InvalidArgument("a bench index chooses a benchmark of a GuideLLM file; give one");
    }
    model::Observations obs;
    if (files.metrics.size() == 1) {
        obs.metrics =
            engine_metrics(read_metrics_scrape(files.metrics[0]), files.metrics[0].string());
    } else if (files.metrics.size() == 2) {
        obs.metrics = engine_metrics(read_metrics_scrape(files.metrics[0]),
                                     read_metrics_scrape(files.metrics[1]),
                                     files.metrics[1].string(), files.interval_s);
    }
    if (!files.bench.empty())
        obs.bench = read_vllm_bench(files.bench);
    if (!files.guidellm.empty())
        obs.bench = read_guidellm(files.guidellm, files.bench_index);
    if (!files.aiperf.empty())
        obs.bench = read_aiperf(files.aiperf);
    const auto add_gpu = [&](model::GpuTelemetry t) {
        obs.gpu = obs.gpu ? model::merge(*obs.gpu, t) : std::move(t);
    };
    if (!files.smi.empty())
        add_gpu(read_nvidia_smi_csv(files.smi));
    if (!files.dcgm.empty())
        add_gpu(read_dcgm_metrics(files.dcgm));
    if (!files.dmon.empty())
        add_gpu(read_nvidia_smi_dmon(files.dmon));
    if (!files.startup_log.empty())
        obs.startup = read_startup_log(files.startup_log);
    if (!files.training_log.empty())
        obs.training = read_training_log(files.training_log);
    return obs;
}

} // namespace gpuplan::hwdb
