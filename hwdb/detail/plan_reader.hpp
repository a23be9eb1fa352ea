#pragma once
/// Reader for the scenario's `plan:` block (docs/scenario-schema.md, "Sizing search"): the
/// hardware candidates resolved against the hwdb, the layouts, precisions and engine limits to
/// try, the constraints and the search's budget.

#include "hwdb/database.hpp"
#include "hwdb/detail/yaml_reader.hpp"
#include "model/plan_config.hpp"

namespace gpuplan::hwdb::detail {

/// Reads the `plan:` mapping. Candidate names are resolved as set_hardware does (a node's
/// links, else the accelerator's scale-up link, else its host link). Throws ConfigError.
[[nodiscard]] model::PlanConfig read_plan(MapReader m, const Database& db);

} // namespace gpuplan::hwdb::detail
