#pragma once
/// Text formatting that marks non-finite numbers by their value (issue 33). A report is text, and
/// a name a user chose ("inf-test", a file nan.yaml) may read as a non-finite number, so the
/// CLI's last line of defence (cli::FiniteLineFilter) must not look for words: every formatter of
/// a number puts kNonFiniteMark before a NaN or an infinity it writes, and the filter looks for
/// the mark. The mark starts with a control character (SOH), which no name in a report carries.

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace gpuplan {

/// Written before the text of a non-finite number. nlohmann::json writes the SOH as "\u0001",
/// so a report checks for kNonFiniteMarkJson in JSON text too.
inline constexpr std::string_view kNonFiniteMark = "\x01non-finite:";
/// kNonFiniteMark as it reads inside a JSON string.
inline constexpr std::string_view kNonFiniteMarkJson = "\\u0001non-finite:";

/// True when `v` is a floating-point value that is NaN or infinite; false for any other type.
template <class T> [[nodiscard]] constexpr bool is_non_finite_arg(const T& v) {
    if constexpr (std::is_floating_point_v<std::remove_cvref_t<T>>) {
        return !std::isfinite(v);
    } else {
        return false;
    }
}

/// `text` (the formatted `v`) with kNonFiniteMark in front when `v` is not finite.
[[nodiscard]] inline std::string mark_non_finite(double v, std::string text) {
    if (!std::isfinite(v)) {
        text.insert(0, kNonFiniteMark);
    }
    return text;
}

/// fmt::format, with kNonFiniteMark in front of the result when any floating-point argument is
/// NaN or infinite. Same compile-time check of the format string as fmt::format.
template <class... T>
[[nodiscard]] std::string checked_format(fmt::format_string<T...> f, T&&... args) {
    const bool bad = (is_non_finite_arg(args) || ...);
    std::string text = fmt::vformat(f, fmt::make_format_args(args...));
    if (bad) {
        text.insert(0, kNonFiniteMark);
    }
    return text;
}

} // namespace gpuplan
