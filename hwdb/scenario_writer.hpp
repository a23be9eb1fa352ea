#pragma once
/// Writes a model::Scenario as scenario YAML (docs/scenario-schema.md), the format the CLI and
/// the desktop app read, so that parse → write → parse gives back an equal Scenario.

#include "model/scenario.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace gpuplan::hwdb {

/// Choices for scenario_to_yaml.
struct ScenarioYamlOptions {
    /// The `workload.trace.file` to reference when the workload holds trace records (relative
    /// to the scenario file). Empty: "<name>.trace.csv". The caller writes the records there
    /// with trace_to_csv (save_scenario does both).
    std::string trace_file;
};

/// The scenario as YAML text starting with `schema: 1`. Quantities carry units ("80 GiB",
/// "500 ms", "700 W"), chosen among the accepted spellings as the shortest text that parses
/// back to the same double; prices use model::to_string when that reads back exactly, else
/// "<amount> <CUR>/<basis>". Keys equal to the loader's defaults are left out where the loader
/// would give the same value; links, GPUs per node and the layout are always written. An
/// inline model (empty model_ref) is written as a mapping with the catalog keys, empirical
/// lengths read from a CSV column are written as `values:` lists. Never throws for a
/// scenario the loader produced.
[[nodiscard]] std::string scenario_to_yaml(const model::Scenario& s,
                                           const ScenarioYamlOptions& options = {});

/// Trace records as the plain CSV layout (`arrival_s,input_tokens,output_tokens`), each time
/// in the shortest text that reads back to the same double.
[[nodiscard]] std::string trace_to_csv(const std::vector<model::TraceRecord>& trace);

/// Writes the scenario to `path` and, when its workload holds trace records, the trace as
/// `<stem>.trace.csv` beside it (referenced from the YAML). Throws InputError when a file
/// cannot be written.
void save_scenario(const std::filesystem::path& path, const model::Scenario& s);

} // namespace gpuplan::hwdb
