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

/// One axis: a key and its values, a list as written or a range made on demand (a range of
/// 10^7 values takes no memory per value).
struct SweepAxis {
    std::string key;
    std::vector<SweepSetting> values; ///< a list's values; empty for a range
    double start = 0, step = 0;       ///< a range: start + i × step for i < count
    std::size_t count = 0;            ///< a range's number of values
    bool whole = false;               ///< a range of whole numbers (written without a point)
    std::string origin;               ///< where a range was written
    /// Number of values.
    [[nodiscard]] std::size_t size() const { return values.empty() ? count : values.size(); }
    /// Value i (i < size()).
    [[nodiscard]] SweepSetting value(std::size_t i) const;
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
    /// The axes, first outermost: each group is one axis, or zipped axes of equal size.
    std::vector<std::vector<SweepAxis>> groups;
    /// Number of points: the product of the groups' sizes (at most kMaxSweepPoints).
    [[nodiscard]] std::size_t point_count() const;
    /// Point i (i < point_count()), one setting per key in column order, made on demand so a
    /// spec's memory does not grow with its grid (issue 33: 10^7 points took gigabytes).
    [[nodiscard]] std::vector<SweepSetting> point(std::size_t i) const;
};

/// Most points one spec may give.
inline constexpr std::size_t kMaxSweepPoints = 10'000'000;

/// Parses spec text; `file` names it in messages and anchors the base path. Throws ConfigError.
[[nodiscard]] SweepSpec parse_sweep_spec(std::string_view text, const std::string& file);

/// Reads and parses a spec file. Throws InputError when it cannot be read.
[[nodiscard]] SweepSpec load_sweep_spec(const std::filesystem::path& path);

} // namespace gpuplan::hwdb
