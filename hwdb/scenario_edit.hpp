#pragma once
/// Editing a scenario one YAML key at a time, and saving it back into the file it came from
/// with the file's comments kept (issue 17 item 4). Both go through the writer and the loader,
/// so a value is checked exactly as the file's own would be, and what is written reads back to
/// the edited scenario (checked before the file is written).

#include "hwdb/database.hpp"
#include "model/scenario.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace gpuplan::hwdb {

/// The value of the dotted key `path` as the writer writes `s` (scenario_to_yaml): a scalar's
/// text ("80 GiB", "least_kv", "true"), a list or mapping as one-line flow YAML, "" when the
/// writer leaves the key out (the loader's default, or unset).
[[nodiscard]] std::string scenario_key_text(const model::Scenario& s, const std::string& path);

/// scenario_key_text for several keys, writing the scenario once.
[[nodiscard]] std::vector<std::string> scenario_key_texts(const model::Scenario& s,
                                                          const std::vector<std::string>& paths);

/// `s` with the key `path` set to `value` (a field's text: "64", "1 GiB", a list or mapping in
/// flow YAML, "[1, 2]", "{metric: ...}"; other text that YAML would not read as itself, such as
/// "a: b", is taken as one quoted string; "" removes the key, so the loader's default applies),
/// read back through the loader: the value is checked as in a file and nothing the writer and
/// loader carry losslessly changes besides it (and what the loader derives from it). Trace records
/// are kept as they are. Throws InputError (ConfigError naming `origin` and the key) when the
/// loader refuses the value.
[[nodiscard]] model::Scenario with_scenario_key(const model::Scenario& s, const Database& db,
                                                const std::string& path, const std::string& value,
                                                const std::string& origin);

/// What save_scenario_keeping did.
struct KeptSave {
    bool patched = false;               ///< false: the whole file was written anew
    std::vector<std::string> replaced;  ///< scalars replaced in place (dotted paths)
    std::vector<std::string> rewritten; ///< top-level blocks emitted anew
    std::string text;                   ///< what was written
};

/// Saves `edited` to `path` by patching `original` (the text `loaded` was read from) with
/// patch_yaml: comments, blank lines and the untouched keys' spelling are kept byte for byte.
/// The patched text is read back with `db` (relative to `path`) and must give `edited`; a
/// top-level block that reads differently is emitted anew, and if that does not settle it the
/// whole file is written as save_scenario does. A replayed trace keeps the file the original
/// names when that file is beside `path` and the records did not change; else the records are
/// written beside it as `<stem>.trace.csv`, as save_scenario does, and the key points there.
/// Throws InputError when a file cannot be written.
KeptSave save_scenario_keeping(const std::filesystem::path& path, const std::string& original,
                               const model::Scenario& loaded, const model::Scenario& edited,
                               const Database& db);

} // namespace gpuplan::hwdb
