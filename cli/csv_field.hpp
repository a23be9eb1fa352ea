#pragma once
/// One CSV field as RFC 4180 writes it, for every CSV the CLI writes (sweep tables,
/// simulate --out's requests.csv).

#include <string>

namespace gpuplan::cli {

/// `s` as one CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, with
/// quotes doubled, so any text (a class name, a sweep id) reads back as one field.
[[nodiscard]] inline std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) {
        return s;
    }
    std::string out = "\"";
    for (const char c : s) {
        out += c == '"' ? "\"\"" : std::string(1, c);
    }
    return out + "\"";
}

} // namespace gpuplan::cli
