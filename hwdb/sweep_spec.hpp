#pragma once
/// Reads a sweep spec (docs/sweep.md): a base scenario (a file relative to the spec, or inline),
/// fixed `set` overrides, and axes (value lists, ranges, zipped groups) whose cartesian product
/// gives the points. Strict like every loader: unknown keys and bad values are ConfigErrors
/// naming file:line:column and the key.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace gpuplan::hwdb {

/// One override every point gets (`set:`), or one axis value, with where it was written.
struct SweepSetting {
    std::string key;    ///< scenario key path, as for `--set`
    std::string value;  ///< value text, as for `--set`
    std::string origin; ///< "spec.yaml:12:9 (axes[0] workload.requests_per_s)" for messages
};

struct SweepSpec {
    std::string file;    ///< the spec's path as given
    std::string id;      ///< `id:`, a name for the sweep (a column of the output)
    std::string command; ///< estimate, simulate, cost or train
    /// The base scenario file (relative to the working folder), empty when the base is inline.
    std::filesystem::path base_file;
    /// An inline base: the spec's text with every line outside `base:` blanked, so a scenario
    /// error names the spec's own line and column.
    std::string base_text;
    std::vector<SweepSetting> sets; ///< `set:` overrides for every point, in file order
    std::vector<std::string> keys;  ///< axis keys, in column order
    /// The points, in order (first axis outermost); each holds one setting per key.
    std::vector<std::vector<SweepSetting>> points;
};

/// Most points one spec may give.
inline constexpr std::size_t kMaxSweepPoints = 10'000'000;

/// Parses spec text; `file` names it in messages and anchors the base path. Throws ConfigError.
[[nodiscard]] SweepSpec parse_sweep_spec(std::string_view text, const std::string& file);

/// Reads and parses a spec file. Throws InputError when it cannot be read.
[[nodiscard]] SweepSpec load_sweep_spec(const std::filesystem::path& path);

} // namespace gpuplan::hwdb
