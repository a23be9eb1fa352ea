#pragma once
/// Strict YAML reading for hwdb and scenario files: every error names file:line:column and the
/// key path; unknown keys, duplicate keys, missing units, anchors/aliases, tabs, non-UTF-8 bytes
/// and absurd nesting are rejected before they can reach the core.

#include "hwdb/file_io.hpp"
#include "model/enum_names.hpp"
#include "model/error.hpp"
#include "model/unit_parser.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuplan::hwdb::detail {

/// Limits that keep a hostile file from exhausting memory or stack.
inline constexpr std::size_t kMaxFileBytes = kMaxInputBytes;
inline constexpr int kMaxNesting = 64;

/// Checks the raw text (size, UTF-8, tabs in indentation, nesting), parses it and rejects
/// anchors, aliases and duplicate keys. Throws ConfigError.
[[nodiscard]] YAML::Node parse_strict(std::string_view text, const std::string& file);

/// One value written on the command line (`--set key=VALUE`) under parse_strict's rules
/// (anchors, aliases, duplicate keys, nesting and size refused), of any kind: a scalar, a list or
/// a mapping; null when empty. Errors name `origin` (the flag) instead of a line and column.
[[nodiscard]] YAML::Node parse_strict_value(std::string_view text, const std::string& origin);

/// The tag prefix of nodes that came from the command line; the rest of the tag names the flag
/// ("--tp 0,3"), which messages show in place of file:line:column.
inline const std::string kCommandLineTag = "!gpuplan-command-line:";

/// Throws a ConfigError located at `node`.
[[noreturn]] void fail(const YAML::Node& node, const std::string& file, const std::string& path,
                       const std::string& message);

/// Reads one YAML mapping, tracking which keys were used so that leftovers are reported as
/// unknown keys (with a "did you mean" from the expected keys).
class MapReader {
  public:
    MapReader(const YAML::Node& node, std::string file, std::string path);

    [[nodiscard]] bool has(const std::string& key) const;
    [[nodiscard]] YAML::Node node() const { return node_; }
    [[nodiscard]] const std::string& file() const { return file_; }
    [[nodiscard]] std::string path_of(const std::string& key) const;

    [[nodiscard]] std::string string(const std::string& key);
    [[nodiscard]] std::optional<std::string> opt_string(const std::string& key);
    [[nodiscard]] std::string string_or(const std::string& key, std::string fallback);
    [[nodiscard]] int integer(const std::string& key, long long min, long long max);
    [[nodiscard]] std::optional<int> opt_integer(const std::string& key, long long min,
                                                 long long max);
    [[nodiscard]] double number(const std::string& key, double min, double max);
    [[nodiscard]] std::optional<double> opt_number(const std::string& key, double min, double max);
    [[nodiscard]] bool boolean_or(const std::string& key, bool fallback);
    /// A quantity with a unit, in SI, that must lie in (min, max] when `positive`, else [0, max].
    [[nodiscard]] double quantity(const std::string& key, model::Dimension dim,
                                  bool positive = true);
    [[nodiscard]] std::optional<double> opt_quantity(const std::string& key, model::Dimension dim,
                                                     bool positive = true);
    [[nodiscard]] model::Price price(const std::string& key);
    [[nodiscard]] std::vector<std::string> string_list(const std::string& key);
    /// A nested mapping (required).
    [[nodiscard]] MapReader map(const std::string& key);
    /// A nested sequence of mappings; empty when the key is absent.
    [[nodiscard]] std::vector<MapReader> map_list(const std::string& key);
    /// A nested mapping when present.
    [[nodiscard]] std::optional<MapReader> opt_map(const std::string& key);

    /// Throws for a value found at `key` (the message says what was expected).
    [[noreturn]] void fail_at(const std::string& key, const std::string& message) const;
    /// Throws for the mapping itself.
    [[noreturn]] void fail_here(const std::string& message) const;

    /// Throws for the first key that no accessor asked for (an unknown key), suggesting the
    /// closest key that was asked for.
    void finish() const;

  private:
    YAML::Node get(const std::string& key, bool required);
    std::string scalar(const std::string& key, const YAML::Node& n) const;

    YAML::Node node_;
    std::string file_;
    std::string path_;
    std::vector<std::string> asked_; // every key an accessor asked for, present or not
};

/// An optional string key naming a value of enum E in its one spelling (model::enum_names); the
/// error lists them.
template <class E> [[nodiscard]] std::optional<E> opt_enum(MapReader& m, const std::string& key) {
    const auto text = m.opt_string(key);
    if (!text) {
        return std::nullopt;
    }
    if (const auto value = model::value_of<E>(*text)) {
        return value;
    }
    m.fail_at(key, "unknown value '" + *text + "'; use one of " + model::names_list<E>());
}

/// An optional quantity as its strong type (Bytes, Seconds, Watts, ...).
template <class Q>
[[nodiscard]] std::optional<Q> opt_typed(MapReader& m, const std::string& key, model::Dimension dim,
                                         bool positive = true) {
    if (auto v = m.opt_quantity(key, dim, positive)) {
        return Q(*v);
    }
    return std::nullopt;
}

/// Levenshtein distance between `a` and `b` (insertions, deletions, substitutions).
[[nodiscard]] std::size_t edit_distance(const std::string& a, const std::string& b);

/// The closest candidate by edit distance, when it is close enough to be a likely typo.
[[nodiscard]] std::optional<std::string> closest(const std::string& word,
                                                 const std::vector<std::string>& candidates);

} // namespace gpuplan::hwdb::detail
