#pragma once
/// A sweep's output table (`gpuplan sweep SPEC -o FILE.csv`, docs/sweep.md) read for plotting:
/// its columns sorted into axes (the swept keys), figures (the command's summary numbers) and
/// the rest, numeric columns detected, and one figure against one axis split into series by a
/// third column. No Qt: the CSV is read by calib's RFC-4180 reader, so a malformed file is a
/// ConfigError naming file:line:column.

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuplan::gui {

/// One column of a sweep table.
struct SweepColumn {
    std::string name;
    enum class Kind { Meta, Axis, Figure } kind = Kind::Meta; ///< index/sweep_id/seed/error/cli
    bool numeric = false; ///< every non-empty cell is a finite number, and there is one
};

/// A parsed sweep table.
struct SweepTable {
    std::string file;
    std::vector<SweepColumn> columns;
    std::vector<int> lines;                      ///< 1-based file line of each row
    std::vector<std::vector<std::string>> cells; ///< rows × columns, unquoted
    int error_column = -1;

    /// Index of the named column, or -1.
    [[nodiscard]] int column(const std::string& name) const;
};

/// Reads a sweep table from CSV text. Throws ConfigError (file:line:column) for malformed CSV
/// and for a header without the columns every sweep table has (index, error, cli).
[[nodiscard]] SweepTable parse_sweep_table(std::string_view text, const std::string& file);
/// Reads FILE.csv. Throws InputError when it cannot be read.
[[nodiscard]] SweepTable read_sweep_table(const std::filesystem::path& path);

/// The cell as a finite number, or nothing (empty, text, inf or nan).
[[nodiscard]] std::optional<double> sweep_number(const std::string& cell);

/// The unit a column's name states: "tok/s" for `…_tok_s`, "requests/s" for
/// `…requests_per_s` (the word before `_per_s`, over seconds), "requests/s" for `…_rps`,
/// "s" for `…_s`, "bytes" for `…_bytes`; a trailing percentile segment (`ttft_s.p99`) is looked
/// through. Empty when the name states none.
[[nodiscard]] std::string sweep_unit(const std::string& column);

/// One line of a sweep plot: its name (the series column's value, or the figure's name) and its
/// points, (x, y) in the table's own numbers, sorted by x (rows of equal x in table order).
struct SweepSeries {
    std::string name;
    std::vector<std::pair<double, double>> points;
};

/// A figure against an axis.
struct SweepPlot {
    std::vector<SweepSeries> series; ///< in order of first appearance in the table
    int plotted = 0;                 ///< rows plotted
    int skipped_error = 0;           ///< rows with a non-empty error
    int skipped_empty = 0;           ///< rows (without an error) whose x or y cell is empty
};

/// Plots column `y` against column `x` (both numeric), one series per distinct text of column
/// `series` (none: one series). Rows with an error or an empty x or y are skipped and counted.
/// Throws InvalidArgument for a column out of range or not numeric.
[[nodiscard]] SweepPlot sweep_plot(const SweepTable& t, int x, int y, std::optional<int> series);

} // namespace gpuplan::gui
