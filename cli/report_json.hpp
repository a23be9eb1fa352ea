#pragma once
/// JSON views of the analytic model's results (keys documented in docs/cli-json.md).

#include "model/bottleneck.hpp"
#include "model/memory.hpp"
#include "model/scenario.hpp"
#include "model/serving.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

namespace gpuplan::cli {

[[nodiscard]] nlohmann::json scenario_json(const model::Scenario& s);
[[nodiscard]] nlohmann::json memory_json(const model::MemoryEstimate& m);
[[nodiscard]] nlohmann::json estimate_json(const model::Scenario& s,
                                           const model::ServingEstimate& e,
                                           const model::BottleneckReport& b,
                                           const std::vector<model::WhatIf>& whatifs);

} // namespace gpuplan::cli
