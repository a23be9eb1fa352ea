#pragma once
/// Writes a model as a catalog file (docs/hwdb-schema.md, "models"), e.g. after
/// import_hf_config, so it can be kept in a folder passed with `--hwdb`.

#include "model/model_spec.hpp"

#include <string>

namespace gpuplan::hwdb {

/// A complete catalog file for `m`: `schema: 1`, then `models:` with one entry. Optional keys
/// are written only when they differ from the ModelSpec defaults; strings are double-quoted and
/// escaped; published counts use the shortest text that reads back to the same double. Loading
/// the text with Database::add_yaml gives back a ModelSpec equal to `m`.
[[nodiscard]] std::string model_to_yaml(const model::ModelSpec& m);

} // namespace gpuplan::hwdb
