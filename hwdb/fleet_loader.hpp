#pragma once
/// The scenario's `fleet:` block (model::FleetConfig; docs/fleet.md). It is read apart from the
/// scenario value: load_scenario checks it (a typo is an error there too), and `gpuplan plan
/// --fleet` reads it with the same `--set` overrides through these functions.

#include "hwdb/scenario_loader.hpp"
#include "model/fleet.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::hwdb {

/// The `fleet:` block of scenario text `text` (named `file` in messages) after `overrides`;
/// nullopt when it has none. Throws ConfigError at the key for a bad value.
[[nodiscard]] std::optional<model::FleetConfig>
parse_fleet(std::string_view text, const std::string& file,
            const std::vector<ScenarioOverride>& overrides = {});

/// parse_fleet on the file at `path` (the bounded reader of hwdb/file_io.hpp).
[[nodiscard]] std::optional<model::FleetConfig>
load_fleet(const std::filesystem::path& path, const std::vector<ScenarioOverride>& overrides = {});

} // namespace gpuplan::hwdb
