#include "gui/sweep_table.hpp"

#include "calib/csv.hpp"
#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace gpuplan::gui {

int SweepTable::column(const std::string& name) const {
    for (std::size_t i = 0; i < columns.size(); ++i) {
        if (columns[i].name == name) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

std::optional<double> sweep_number(const std::string& cell) {
    const char* first = cell.data();
    const char* last = cell.data() + cell.size();
    if (first != last && *first == '+') {
        ++first;
    }
    double v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    if (cell.empty() || ec != std::errc() || ptr != last || !std::isfinite(v)) {
        return std::nullopt;
    }
    return v;
}

SweepTable parse_sweep_table(std::string_view text, const std::string& file) {
    const calib::CsvTable csv = calib::parse_csv(text, file, /*has_header=*/true);
    SweepTable t;
    t.file = file;
    const auto find = [&](const char* name) {
        const auto it = std::find(csv.header.begin(), csv.header.end(), name);
        return it == csv.header.end() ? -1 : static_cast<int>(it - csv.header.begin());
    };
    const int seed = find("seed");
    const int error = find("error");
    const int cli = find("cli");
    for (const char* required : {"index", "seed", "error", "cli"}) {
        if (find(required) < 0) {
            throw ConfigError(file, 1, 1, "",
                              std::string("the header has no '") + required +
                                  "' column, so this is not a sweep table; open the CSV that "
                                  "`gpuplan sweep SPEC -o FILE.csv` or `gpuplan merge` wrote");
        }
    }
    if (!(seed < error && error < cli)) {
        throw ConfigError(file, 1, 1, "",
                          "the header's columns are not in a sweep table's order (seed, the axis "
                          "keys, error, the figures, cli); open a table `gpuplan sweep` wrote");
    }
    t.error_column = error;
    for (std::size_t c = 0; c < csv.header.size(); ++c) {
        const int i = static_cast<int>(c);
        SweepColumn col;
        col.name = csv.header[c];
        col.kind = i > seed && i < error  ? SweepColumn::Kind::Axis
                   : i > error && i < cli ? SweepColumn::Kind::Figure
                                          : SweepColumn::Kind::Meta;
        t.columns.push_back(std::move(col));
    }
    for (const calib::CsvRow& row : csv.rows) {
        t.lines.push_back(row.line);
        t.cells.push_back(row.cells);
    }
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        bool any = false;
        bool all = true;
        for (const auto& row : t.cells) {
            if (row[c].empty()) {
                continue;
            }
            any = true;
            if (!sweep_number(row[c])) {
                all = false;
                break;
            }
        }
        t.columns[c].numeric = any && all;
    }
    return t;
}

SweepTable read_sweep_table(const std::filesystem::path& path) {
    return parse_sweep_table(hwdb::read_text_file(path, "sweep table", hwdb::kMaxTableBytes),
                             path.string());
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// "p99", "p50", "p99.9"-like percentile segments carry no unit of their own.
bool is_percentile(const std::string& seg) {
    return seg.size() >= 2 && seg[0] == 'p' && std::all_of(seg.begin() + 1, seg.end(), [](char ch) {
               return std::isdigit(static_cast<unsigned char>(ch)) != 0;
           });
}

} // namespace

std::string sweep_unit(const std::string& column) {
    std::string seg = column;
    // The last segment of the key path, or the one before a percentile ("ttft_s.p99").
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t dot = column.find('.', start);
        parts.push_back(
            column.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) {
            break;
        }
        start = dot + 1;
    }
    seg = parts.back();
    if (parts.size() > 1 && is_percentile(seg)) {
        seg = parts[parts.size() - 2];
    }
    if (ends_with(seg, "_tok_s")) {
        return "tok/s";
    }
    if (ends_with(seg, "_per_s")) {
        const std::string word = seg.substr(0, seg.size() - 6);
        const std::size_t us = word.rfind('_');
        return (us == std::string::npos ? word : word.substr(us + 1)) + "/s";
    }
    if (ends_with(seg, "_rps")) {
        return "requests/s";
    }
    if (ends_with(seg, "_bytes")) {
        return "bytes";
    }
    if (ends_with(seg, "_s")) {
        return "s";
    }
    return {};
}

SweepPlot sweep_plot(const SweepTable& t, int x, int y, std::optional<int> series) {
    const int n = static_cast<int>(t.columns.size());
    for (const int c : {x, y}) {
        if (c < 0 || c >= n || !t.columns[static_cast<std::size_t>(c)].numeric) {
            throw InvalidArgument("sweep plot: column " + std::to_string(c) +
                                  " is not a numeric column of " + t.file +
                                  "; choose a numeric axis and figure");
        }
    }
    if (series && (*series < 0 || *series >= n)) {
        throw InvalidArgument("sweep plot: series column " + std::to_string(*series) +
                              " is not a column of " + t.file);
    }
    SweepPlot p;
    const auto ux = static_cast<std::size_t>(x);
    const auto uy = static_cast<std::size_t>(y);
    for (const auto& row : t.cells) {
        if (t.error_column >= 0 && !row[static_cast<std::size_t>(t.error_column)].empty()) {
            ++p.skipped_error;
            continue;
        }
        if (row[ux].empty() || row[uy].empty()) {
            ++p.skipped_empty;
            continue;
        }
        const std::string name =
            series ? row[static_cast<std::size_t>(*series)] : t.columns[uy].name;
        auto it = std::find_if(p.series.begin(), p.series.end(),
                               [&](const SweepSeries& s) { return s.name == name; });
        if (it == p.series.end()) {
            p.series.push_back({name, {}});
            it = p.series.end() - 1;
        }
        it->points.emplace_back(*sweep_number(row[ux]), *sweep_number(row[uy]));
        ++p.plotted;
    }
    for (SweepSeries& s : p.series) {
        std::stable_sort(s.points.begin(), s.points.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    return p;
}

} // namespace gpuplan::gui
