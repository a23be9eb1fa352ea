#include "calib/csv.hpp"

#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <charconv>
#include <cmath>

namespace gpuplan::calib {
namespace {

// Splits one line into cells, honouring double quotes. Returns false on an unterminated quote.
bool split_line(std::string_view line, std::vector<std::string>& cells, std::vector<int>& columns) {
    cells.clear();
    columns.clear();
    std::size_t i = 0;
    while (true) {
        while (i < line.size() && line[i] == ' ') {
            ++i;
        }
        columns.push_back(static_cast<int>(i) + 1);
        std::string cell;
        if (i < line.size() && line[i] == '"') {
            ++i;
            bool closed = false;
            while (i < line.size()) {
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        cell += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    closed = true;
                    break;
                }
                cell += line[i++];
            }
            if (!closed) {
                return false;
            }
            while (i < line.size() && line[i] != ',') {
                ++i;
            }
        } else {
            const std::size_t start = i;
            while (i < line.size() && line[i] != ',') {
                ++i;
            }
            cell.assign(line.substr(start, i - start));
            while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t')) {
                cell.pop_back();
            }
        }
        cells.push_back(std::move(cell));
        if (i >= line.size()) {
            return true;
        }
        ++i; // the comma
    }
}

} // namespace

int CsvTable::column(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i) {
        if (header[i] == name) {
            return static_cast<int>(i);
        }
    }
    std::string list;
    for (const auto& h : header) {
        if (list.size() > 200) {
            list += ", ...";
            break;
        }
        list += (list.empty() ? "" : ", ") + h;
    }
    throw ConfigError(file, 1, 1, name,
                      "the header has no column '" + name + "' (it has: " + list +
                          "); check that the file is of the format given with --format");
}

bool CsvTable::has_column(const std::string& name) const {
    for (const auto& h : header) {
        if (h == name) {
            return true;
        }
    }
    return false;
}

std::string CsvTable::column_name(int col) const {
    if (col >= 0 && static_cast<std::size_t>(col) < header.size()) {
        return header[static_cast<std::size_t>(col)];
    }
    return "column " + std::to_string(col + 1);
}

void CsvTable::fail(const CsvRow& row, int col, const std::string& message) const {
    const int c = col >= 0 && static_cast<std::size_t>(col) < row.columns.size()
                      ? row.columns[static_cast<std::size_t>(col)]
                      : 1;
    throw ConfigError(file, row.line, c, column_name(col), message);
}

const std::string& CsvTable::text(const CsvRow& row, int col) const {
    if (col < 0 || static_cast<std::size_t>(col) >= row.cells.size()) {
        fail(row, col, "the row has no such column");
    }
    return row.cells[static_cast<std::size_t>(col)];
}

double CsvTable::number(const CsvRow& row, int col) const {
    const std::string& s = text(row, col);
    double v = 0;
    const char* first = s.data();
    const char* last = s.data() + s.size();
    if (first != last && *first == '+') {
        ++first;
    }
    const auto [ptr, ec] = std::from_chars(first, last, v);
    if (s.empty() || ec != std::errc() || ptr != last || !std::isfinite(v)) {
        fail(row, col, "expected a number, found '" + s + "'");
    }
    return v;
}

double CsvTable::number_with_suffix(const CsvRow& row, int col, std::string_view unit) const {
    std::string s = text(row, col);
    if (s.size() <= unit.size() || s.compare(s.size() - unit.size(), unit.size(), unit) != 0) {
        fail(row, col,
             "expected a number followed by '" + std::string(unit) + "', found '" + s + "'");
    }
    s.resize(s.size() - unit.size());
    while (!s.empty() && s.back() == ' ') {
        s.pop_back();
    }
    double v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) {
        fail(row, col,
             "expected a number followed by '" + std::string(unit) + "', found '" + text(row, col) +
                 "'");
    }
    return v;
}

CsvTable parse_csv(std::string_view text, const std::string& file, bool has_header) {
    CsvTable t;
    t.file = file;
    int line_no = 0;
    std::size_t expected = 0;
    bool seen_data = false;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t end = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        pos = end == std::string_view::npos ? text.size() + 1 : end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (line.find_first_not_of(" \t") == std::string_view::npos) {
            continue;
        }
        if (!seen_data && line.front() == '#') {
            std::string_view c = line.substr(1);
            while (!c.empty() && c.front() == ' ') {
                c.remove_prefix(1);
            }
            t.comments.emplace_back(c);
            continue;
        }
        CsvRow row;
        row.line = line_no;
        // A quoted field may span lines (RFC 4180), e.g. a traceback in an error column: join
        // the following lines until the quote closes.
        std::string joined;
        while (!split_line(line, row.cells, row.columns)) {
            if (pos > text.size()) {
                throw ConfigError(file, row.line, 1, "",
                                  "a quoted field is not closed; add the closing '\"'");
            }
            const std::size_t next = text.find('\n', pos);
            std::string_view more = text.substr(
                pos, next == std::string_view::npos ? std::string_view::npos : next - pos);
            pos = next == std::string_view::npos ? text.size() + 1 : next + 1;
            ++line_no;
            if (!more.empty() && more.back() == '\r') {
                more.remove_suffix(1);
            }
            std::string longer(line); // `line` may view `joined` itself
            longer += '\n';
            longer += more;
            joined = std::move(longer);
            line = joined;
        }
        if (!seen_data) {
            seen_data = true;
            expected = row.cells.size();
            if (has_header) {
                t.header = std::move(row.cells);
                continue;
            }
        }
        if (row.cells.size() != expected) {
            throw ConfigError(file, line_no, 1, "",
                              "expected " + std::to_string(expected) + " fields (as in the " +
                                  (has_header ? "header" : "first row") + "), found " +
                                  std::to_string(row.cells.size()));
        }
        t.rows.push_back(std::move(row));
    }
    if (!seen_data) {
        throw ConfigError(file, 0, 0, "", "the file has no data; expected CSV rows");
    }
    return t;
}

CsvTable read_csv(const std::filesystem::path& path, bool has_header) {
    return parse_csv(hwdb::read_text_file(path, "CSV file", hwdb::kMaxTableBytes), path.string(),
                     has_header);
}

} // namespace gpuplan::calib
