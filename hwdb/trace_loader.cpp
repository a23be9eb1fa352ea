#include "hwdb/trace_loader.hpp"

#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace gpuplan::hwdb {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '"')) {
        s.remove_prefix(1);
    }
    while (!s.empty() &&
           (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '"')) {
        s.remove_suffix(1);
    }
    return s;
}

std::vector<std::string_view> split(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= line.size(); ++i) {
        if (i == line.size() || line[i] == ',') {
            out.push_back(trim(line.substr(start, i - start)));
            start = i + 1;
        }
    }
    return out;
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::optional<double> number(std::string_view s) {
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) {
        return std::nullopt;
    }
    return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
long long days_from_civil(long long y, unsigned m, unsigned d) {
    y -= m <= 2 ? 1 : 0;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long long>(doe) - 719468;
}

// "YYYY-MM-DD HH:MM:SS[.fraction]" (also with 'T') in seconds since the epoch, or plain seconds.
std::optional<double> timestamp(std::string_view s) {
    if (auto v = number(s)) {
        return v;
    }
    if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
        s[13] != ':' || s[16] != ':') {
        return std::nullopt;
    }
    const auto field = [&](std::size_t pos, std::size_t len) { return number(s.substr(pos, len)); };
    const auto y = field(0, 4), mo = field(5, 2), d = field(8, 2), h = field(11, 2),
               mi = field(14, 2);
    std::string_view sec = s.substr(17);
    while (!sec.empty() && (sec.back() == 'Z' || sec.back() == 'z')) {
        sec.remove_suffix(1);
    }
    // Fractions longer than double precision still parse; only the value matters.
    const auto sc = number(sec);
    if (!y || !mo || !d || !h || !mi || !sc || *mo < 1 || *mo > 12 || *d < 1 || *d > 31) {
        return std::nullopt;
    }
    const long long days = days_from_civil(static_cast<long long>(*y), static_cast<unsigned>(*mo),
                                           static_cast<unsigned>(*d));
    return static_cast<double>(days) * 86400.0 + *h * 3600.0 + *mi * 60.0 + *sc;
}

std::string read_file(const std::filesystem::path& path, const char* what) {
    return read_text_file(path, what, kMaxTableBytes);
}

} // namespace

std::optional<int> token_count(double v, int min) {
    if (!std::isfinite(v) || v < min || v > kMaxTokenCount || v != std::floor(v)) {
        return std::nullopt;
    }
    return static_cast<int>(v);
}

std::optional<TraceFormat> find_trace_format(std::string_view name) {
    if (name == "auto")
        return TraceFormat::Auto;
    if (name == "azure")
        return TraceFormat::Azure;
    if (name == "vidur")
        return TraceFormat::Vidur;
    if (name == "plain")
        return TraceFormat::Plain;
    return std::nullopt;
}

std::vector<model::TraceRecord> parse_trace(std::string_view text, const std::string& file,
                                            TraceFormat format) {
    std::vector<model::TraceRecord> out;
    std::size_t pos = 0;
    int line_no = 0;
    int ci = -1, cin = -1, cout = -1;
    bool header = false;
    double t0 = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        const std::string_view line = trim(text.substr(pos, end - pos));
        pos = end + 1;
        ++line_no;
        if (line.empty() || line.front() == '#') {
            continue;
        }
        const auto cells = split(line);
        const std::string where = file + ":" + std::to_string(line_no) + ": ";
        if (!header) {
            header = true;
            const auto find = [&](std::initializer_list<const char*> names) {
                for (std::size_t i = 0; i < cells.size(); ++i) {
                    for (const char* n : names) {
                        if (lower(cells[i]) == n) {
                            return static_cast<int>(i);
                        }
                    }
                }
                return -1;
            };
            const char* expected = "";
            switch (format) {
            case TraceFormat::Azure:
                ci = find({"timestamp"}), cin = find({"contexttokens"}),
                cout = find({"generatedtokens"});
                expected = "TIMESTAMP,ContextTokens,GeneratedTokens";
                break;
            case TraceFormat::Vidur:
                ci = find({"arrived_at"}), cin = find({"num_prefill_tokens"}),
                cout = find({"num_decode_tokens"});
                expected = "arrived_at,num_prefill_tokens,num_decode_tokens";
                break;
            case TraceFormat::Plain:
                ci = find({"arrival_s"}), cin = find({"input_tokens"}),
                cout = find({"output_tokens"});
                expected = "arrival_s,input_tokens,output_tokens";
                break;
            case TraceFormat::Auto:
                ci = find({"timestamp", "arrived_at", "arrival_s"});
                cin = find({"contexttokens", "num_prefill_tokens", "input_tokens"});
                cout = find({"generatedtokens", "num_decode_tokens", "output_tokens"});
                expected = "one of TIMESTAMP,ContextTokens,GeneratedTokens (azure), "
                           "arrived_at,num_prefill_tokens,num_decode_tokens (vidur) or "
                           "arrival_s,input_tokens,output_tokens (plain)";
                break;
            }
            if (ci < 0 || cin < 0 || cout < 0) {
                throw InputError(where + "trace header '" + std::string(line) +
                                 "' lacks a column; expected " + expected);
            }
            continue;
        }
        const auto need = static_cast<std::size_t>(std::max({ci, cin, cout}));
        if (cells.size() <= need) {
            throw InputError(where + "expected " + std::to_string(need + 1) + " columns, found " +
                             std::to_string(cells.size()));
        }
        const auto t = timestamp(cells[static_cast<std::size_t>(ci)]);
        const auto in = number(cells[static_cast<std::size_t>(cin)]);
        const auto o = number(cells[static_cast<std::size_t>(cout)]);
        if (!t) {
            throw InputError(where + "'" + std::string(cells[static_cast<std::size_t>(ci)]) +
                             "' is not a time; write seconds or 'YYYY-MM-DD HH:MM:SS.ffff'");
        }
        const auto in_tokens = in ? token_count(*in, 1) : std::nullopt;
        const auto out_tokens = o ? token_count(*o, 0) : std::nullopt;
        if (!in_tokens || !out_tokens) {
            throw InputError(where + "token counts '" +
                             std::string(cells[static_cast<std::size_t>(cin)]) + "', '" +
                             std::string(cells[static_cast<std::size_t>(cout)]) +
                             "' must be whole numbers, input from 1 and output from 0, up to " +
                             std::to_string(kMaxTokenCount));
        }
        if (*t < 0) {
            throw InputError(where + "arrival time '" +
                             std::string(cells[static_cast<std::size_t>(ci)]) +
                             "' is negative; give seconds from the start of the trace (>= 0)");
        }
        if (out.empty()) {
            t0 = *t;
        }
        out.push_back(model::TraceRecord{Seconds(*t - t0), *in_tokens, *out_tokens});
    }
    if (out.empty()) {
        throw InputError(file +
                         ": the trace has no records; give a header line and one line per request");
    }
    return out;
}

std::vector<model::TraceRecord> load_trace(const std::filesystem::path& path, TraceFormat format) {
    return parse_trace(read_file(path, "trace"), path.string(), format);
}

std::vector<int> load_length_column(const std::filesystem::path& path, const std::string& column) {
    const std::string text = read_file(path, "length file");
    std::vector<int> out;
    std::size_t pos = 0;
    int line_no = 0;
    int col = -1;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos) {
            end = text.size();
        }
        const std::string_view line = trim(std::string_view(text).substr(pos, end - pos));
        pos = end + 1;
        ++line_no;
        if (line.empty() || line.front() == '#') {
            continue;
        }
        const auto cells = split(line);
        const std::string where = path.string() + ":" + std::to_string(line_no) + ": ";
        if (col < 0) {
            if (column.empty()) {
                col = 0;
                if (const auto v = number(cells[0])) {
                    // No header: the first line is already a length, checked like the rest.
                    const auto n = token_count(*v);
                    if (!n) {
                        throw InputError(where + "'" + std::string(cells[0]) +
                                         "' is not a token count; give whole numbers from 0 to " +
                                         std::to_string(kMaxTokenCount));
                    }
                    out.push_back(*n);
                }
                continue;
            }
            for (std::size_t i = 0; i < cells.size(); ++i) {
                if (cells[i] == column) {
                    col = static_cast<int>(i);
                }
            }
            if (col < 0) {
                throw InputError(where + "no column '" + column + "' in the header");
            }
            continue;
        }
        if (cells.size() <= static_cast<std::size_t>(col)) {
            throw InputError(where + "missing column " + std::to_string(col + 1));
        }
        const auto v = number(cells[static_cast<std::size_t>(col)]);
        const auto n = v ? token_count(*v) : std::nullopt;
        if (!n) {
            throw InputError(where + "'" + std::string(cells[static_cast<std::size_t>(col)]) +
                             "' is not a token count; give whole numbers from 0 to " +
                             std::to_string(kMaxTokenCount));
        }
        out.push_back(*n);
    }
    if (out.empty()) {
        throw InputError(path.string() + ": no lengths found");
    }
    return out;
}

} // namespace gpuplan::hwdb
