#pragma once
/// A small CSV reader for the measurement files calibration imports: comma-separated fields,
/// optional double-quoted fields ("" escapes a quote; a quoted field may span lines), spaces around
/// fields trimmed, CRLF accepted, blank lines skipped, and leading '#' comment lines kept for
/// metadata. Every error is an InputError (ConfigError) naming file:line:column and the column's
/// name.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::calib {

/// One data line of a CSV file.
struct CsvRow {
    int line = 0;                   ///< 1-based line in the file
    std::vector<std::string> cells; ///< trimmed, unquoted
    std::vector<int> columns;       ///< 1-based character column where each cell starts
};

/// A parsed CSV file.
class CsvTable {
  public:
    std::string file;                  ///< the name used in error messages
    std::vector<std::string> header;   ///< column names; empty for a file without a header
    std::vector<std::string> comments; ///< text of the leading '#' lines, without the '#'
    std::vector<CsvRow> rows;

    /// Index of the named column. Throws ConfigError listing the columns when it is missing.
    [[nodiscard]] int column(const std::string& name) const;
    /// Whether the header has the column.
    [[nodiscard]] bool has_column(const std::string& name) const;
    /// The cell as a finite number. Throws ConfigError (file:line:column, column name) when it
    /// is not one.
    [[nodiscard]] double number(const CsvRow& row, int col) const;
    /// The cell as a number followed by `unit` (e.g. "0.19ms" with unit "ms").
    [[nodiscard]] double number_with_suffix(const CsvRow& row, int col,
                                            std::string_view unit) const;
    /// The cell's text.
    [[nodiscard]] const std::string& text(const CsvRow& row, int col) const;
    /// The name of a column for messages: the header's, else "column N".
    [[nodiscard]] std::string column_name(int col) const;
    /// Throws ConfigError located at a row's cell.
    [[noreturn]] void fail(const CsvRow& row, int col, const std::string& message) const;
};

/// Parses CSV text. `has_header`: the first non-comment line names the columns. Every row must
/// have as many cells as the header (or as the first row when there is none).
[[nodiscard]] CsvTable parse_csv(std::string_view text, const std::string& file, bool has_header);

/// Reads and parses a CSV file (at most 256 MiB). Throws InputError when it cannot be read.
[[nodiscard]] CsvTable read_csv(const std::filesystem::path& path, bool has_header);

} // namespace gpuplan::calib
