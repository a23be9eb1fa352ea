#pragma once
/// Reads scenario YAML (docs/scenario-schema.md) into model::Scenario, resolving model and
/// hardware names against the hwdb. Every error names file:line:column and the key path.

#include "hwdb/database.hpp"
#include "model/scenario.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace gpuplan::hwdb {

/// Parses scenario text; `file` names it in messages. Throws ConfigError.
[[nodiscard]] model::Scenario parse_scenario(std::string_view text, const std::string& file,
                                             const Database& db);

/// Reads and parses a scenario file. Throws InputError when it cannot be read.
[[nodiscard]] model::Scenario load_scenario(const std::filesystem::path& path, const Database& db);

/// Sets the scenario's accelerator (and node, when not empty) from hwdb names and fills the
/// links and GPUs per node as the loader does: the node's links, else the accelerator's
/// scale-up link, else its host link. Throws InputError naming an unknown entry.
void set_hardware(model::Scenario& s, const Database& db, const std::string& accelerator,
                  const std::string& node = "");

}  // namespace gpuplan::hwdb
