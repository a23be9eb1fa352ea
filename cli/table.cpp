#include "cli/table.hpp"

#include "model/unit_parser.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace gpuplan::cli {
namespace {

// Counts UTF-8 code points so that 'µ' or '×' do not break the alignment.
std::size_t display_width(const std::string& s) {
    return static_cast<std::size_t>(std::count_if(
        s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool looks_numeric(const std::string& s) {
    return !s.empty() &&
           (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '$');
}

} // namespace

void Table::print(std::ostream& out) const {
    std::vector<std::size_t> width(header_.size(), 0);
    const auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
            width[i] = std::max(width[i], display_width(row[i]));
        }
    };
    measure(header_);
    for (const auto& r : rows_) {
        measure(r);
    }
    const auto emit = [&](const std::vector<std::string>& row, bool header) {
        for (std::size_t i = 0; i < width.size(); ++i) {
            const std::string cell = i < row.size() ? row[i] : "";
            const std::string pad(width[i] - display_width(cell), ' ');
            const bool right = !header && i > 0 && looks_numeric(cell);
            out << (i ? "  " : "")
                << (right ? pad + cell : cell + (i + 1 < width.size() ? pad : ""));
        }
        out << '\n';
    };
    emit(header_, true);
    std::size_t total = 0;
    for (auto w : width) {
        total += w + 2;
    }
    out << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
    for (const auto& r : rows_) {
        emit(r, false);
    }
}

std::string fixed(double v, int decimals) {
    return model::format_fixed(v, decimals);
}

} // namespace gpuplan::cli
