#pragma once
/// Scalar formatting shared by the YAML writers (model catalog entries and scenarios): what they
/// write must read back through the strict loader to the same values.

#include <string>

namespace gpuplan::hwdb::detail {

/// A YAML double-quoted scalar (YAML 1.2 §7.3.1): backslash, quote and control characters
/// escaped, everything else (UTF-8 included) verbatim.
[[nodiscard]] std::string yaml_quoted(const std::string& s);

/// The shortest text that reads back to the same double (std::to_chars without a format,
/// C++17 [charconv.to.chars]): 8030261248 stays an integer, 7.06e+10 keeps its exponent sign so
/// that YAML 1.1 readers see a float too. Throws InternalError for a non-finite value.
[[nodiscard]] std::string yaml_number(double v);

} // namespace gpuplan::hwdb::detail
