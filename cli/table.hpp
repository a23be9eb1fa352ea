#pragma once
/// A plain-text table with aligned columns for human-readable CLI output.

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuplan::cli {

class Table {
  public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    /// Writes the table; numeric-looking cells are right-aligned.
    void print(std::ostream& out) const;

  private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

/// printf-style number formatting for table cells.
[[nodiscard]] std::string fixed(double v, int decimals);

} // namespace gpuplan::cli
