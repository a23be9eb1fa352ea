#pragma once
/// The one spelling of an enumeration's values in YAML (scenario, hwdb and model files), flags
/// and output: each enum's header defines `enum_names(E)`, a table of (name, value) pairs next to
/// the enum, and every reader (hwdb's detail::opt_enum, model::find_*) and writer
/// (hwdb/scenario_writer, hwdb/model_yaml_writer, model::to_string, the app) goes through it, so
/// what is written reads back.

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace gpuplan::model {

/// One value of an enum and its spelling.
template <class E> struct EnumName {
    const char* name;
    E value;
};

/// The spelling of `v` (found by argument-dependent lookup of enum_names(E)): the first entry
/// with that value, later ones being accepted aliases; "?" when the table has none.
template <class E> [[nodiscard]] constexpr const char* name_of(E v) noexcept {
    for (const EnumName<E>& n : enum_names(E{})) {
        if (n.value == v) {
            return n.name;
        }
    }
    return "?";
}

/// The value spelled `name`, or nullopt.
template <class E>
[[nodiscard]] constexpr std::optional<E> value_of(std::string_view name) noexcept {
    for (const EnumName<E>& n : enum_names(E{})) {
        if (std::string_view(n.name) == name) {
            return n.value;
        }
    }
    return std::nullopt;
}

/// Every spelling, in table order (aliases included), separated by `separator`.
template <class E> [[nodiscard]] std::string names_list(std::string_view separator = ", ") {
    std::string out;
    for (const EnumName<E>& n : enum_names(E{})) {
        out.append(out.empty() ? "" : separator).append(n.name);
    }
    return out;
}

} // namespace gpuplan::model
