#pragma once
/// Reads scenario YAML (docs/scenario-schema.md) into model::Scenario, resolving model and
/// hardware names against the hwdb. Every error names file:line:column and the key path.

#include "hwdb/database.hpp"
#include "model/scenario.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuplan::hwdb {

/// Parses scenario text; `file` names it in messages. Throws ConfigError.
[[nodiscard]] model::Scenario parse_scenario(std::string_view text, const std::string& file,
                                             const Database& db);

/// Reads and parses a scenario file. Throws InputError when it cannot be read.
[[nodiscard]] model::Scenario load_scenario(const std::filesystem::path& path, const Database& db);

/// One `--set key.path=value` override, applied to the YAML before it is read (so it is checked
/// like the file's own keys). `path` is dot-separated; numeric segments index lists.
struct ScenarioOverride {
    ScenarioOverride(std::string p, std::string v, std::string o = {})
        : path(std::move(p)), value(std::move(v)), origin(std::move(o)) {}
    std::string path;
    std::string value;
    std::string origin; ///< the flag as messages name it; empty: "--set path=value"
};

/// parse_scenario with overrides.
[[nodiscard]] model::Scenario parse_scenario(std::string_view text, const std::string& file,
                                             const Database& db,
                                             const std::vector<ScenarioOverride>& overrides);

/// load_scenario with overrides.
[[nodiscard]] model::Scenario load_scenario(const std::filesystem::path& path, const Database& db,
                                            const std::vector<ScenarioOverride>& overrides);

/// Sets the scenario's accelerator (and node, when not empty) from hwdb names and fills the
/// links and GPUs per node as the loader does: the node's links, else the accelerator's
/// scale-up link, else its host link. Throws InputError naming an unknown entry.
void set_hardware(model::Scenario& s, const Database& db, const std::string& accelerator,
                  const std::string& node = "");

/// A sizing-search candidate (a `plan.candidates` entry without prices) from hwdb names,
/// resolved exactly as the scenario's own hardware by set_hardware: the same links and GPUs
/// per node. The loader, the CLI and the GUI all build candidates here. Throws InputError
/// naming an unknown entry.
[[nodiscard]] model::PlanCandidate
plan_candidate(const Database& db, const std::string& accelerator, const std::string& node = "");

} // namespace gpuplan::hwdb
