#pragma once
/// Readers for the power, rack and cost keys of a scenario (docs/scenario-schema.md): the
/// power-model overrides of the `power:` block, the `rack:` block and the `cost:` block.

#include "hwdb/detail/yaml_reader.hpp"
#include "model/fleet.hpp"
#include "model/scenario.hpp"

#include <optional>

namespace gpuplan::hwdb::detail {

/// Reads the power-model keys of a `power:` mapping (board_power, idle_power, resident_power,
/// host_power, psu_efficiency and the coefficients); the caller reads the budget keys and
/// calls finish().
void read_power_model(MapReader& m, model::PowerModel& pm);

/// Reads the `rack:` mapping (defaults when absent).
[[nodiscard]] model::RackConfig read_rack(std::optional<MapReader> m);

/// Reads the `cost:` mapping (defaults when absent).
[[nodiscard]] model::CostConfig read_cost(std::optional<MapReader> m);

/// Reads the `fleet:` mapping (model::FleetConfig) when present; every key is optional.
[[nodiscard]] std::optional<model::FleetConfig> read_fleet(std::optional<MapReader> m);

} // namespace gpuplan::hwdb::detail
