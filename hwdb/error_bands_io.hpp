#pragma once
/// hwdb/error_bands.yaml: the measured error bands of model/error_bands.hpp. `gpuplan calib
/// validate --write-bands FILE` writes the file (error_bands_yaml); load_error_bands reads it
/// from the hwdb folders (the last folder holding one wins; Database::load skips the file).
///
///   schema: 1
///   error_bands:
///     command: "gpuplan calib validate ... --write-bands hwdb/error_bands.yaml"
///     bands:
///       - {figure: tpot, gpu: h100-sxm, family: hopper, engine: unstated, moe: false,
///          precision: 16-bit, regime: decode, points: 315, mean_signed: -0.12, p90: 0.31,
///          level: whole-step, set: "...", fitted_on: false, measured_on: [h100-sxm]}
///       - {figure: tpot, gpu: "", family: hopper, ..., measured_on: [h100-sxm, h800]}
///
/// A row with an empty gpu is a family aggregate (every measured GPU of the family pooled);
/// measured_on defaults to [gpu] for a per-GPU row.

#include "hwdb/detail/yaml_reader.hpp"
#include "model/error_bands.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace gpuplan::hwdb {

/// The YAML text of `bands` (schema 1), which Database::load reads back to the same values.
[[nodiscard]] std::string error_bands_yaml(const model::ErrorBands& bands);

/// Reads one error_bands.yaml. Throws ConfigError (file:line:column, key) on a bad entry.
[[nodiscard]] model::ErrorBands read_error_bands_file(const std::filesystem::path& path);

/// The bands of the last of `hwdb_folders` that holds an error_bands.yaml at its top level;
/// none when no folder does.
[[nodiscard]] model::ErrorBands
load_error_bands(const std::vector<std::filesystem::path>& hwdb_folders);

namespace detail {

/// Reads the `error_bands` mapping.
[[nodiscard]] model::ErrorBands read_error_bands(MapReader m);

} // namespace detail
} // namespace gpuplan::hwdb
