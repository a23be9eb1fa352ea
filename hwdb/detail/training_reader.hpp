#pragma once
/// Reader for the scenario's `training:` block (docs/scenario-schema.md, docs/training.md).

#include "hwdb/detail/yaml_reader.hpp"
#include "model/deployment.hpp"
#include "model/training.hpp"

#include <optional>
#include <string>

namespace gpuplan::hwdb::detail {

/// Reads the training mapping when present. The layout defaults to the hardware block's tp, pp
/// and ep, and dp = GPUs / (tp × pp × cp); a layout that cannot run on `hw` (model::LayoutIssue)
/// is a ConfigError at the block. nullopt when the scenario has no training block.
[[nodiscard]] std::optional<model::TrainingConfig> read_training(std::optional<MapReader> m,
                                                                 const model::Deployment& hw);

} // namespace gpuplan::hwdb::detail
