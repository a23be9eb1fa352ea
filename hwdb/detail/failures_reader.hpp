#pragma once
/// Readers for the failure and availability blocks: `training.failures` (model::FailureConfig)
/// and the scenario's `availability:` (model::AvailabilityConfig); docs/failures.md.

#include "hwdb/detail/yaml_reader.hpp"
#include "model/availability.hpp"
#include "model/failures.hpp"

#include <optional>

namespace gpuplan::hwdb::detail {

/// Reads `training.failures` when present; every key is optional (documented defaults).
[[nodiscard]] std::optional<model::FailureConfig> read_failures(std::optional<MapReader> m);

/// Reads the scenario's `availability:` block when present; `target` is required.
[[nodiscard]] std::optional<model::AvailabilityConfig>
read_availability(std::optional<MapReader> m);

/// An availability target, which must lie strictly between 0 and 1 (ConfigError at the key).
[[nodiscard]] std::optional<double> read_availability_target(MapReader& m, const std::string& key,
                                                             bool required);

} // namespace gpuplan::hwdb::detail
