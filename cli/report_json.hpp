#pragma once
/// JSON views of the analytic model's results (keys documented in docs/cli-json.md).

#include "model/bottleneck.hpp"
#include "model/memory.hpp"
#include "model/scenario.hpp"
#include "model/serving.hpp"
#include "model/slo_capacity.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::cli {

[[nodiscard]] nlohmann::json scenario_json(const model::Scenario& s);
[[nodiscard]] nlohmann::json memory_json(const model::MemoryEstimate& m);
[[nodiscard]] nlohmann::json estimate_json(const model::Scenario& s,
                                           const model::ServingEstimate& e,
                                           const model::BottleneckReport& b,
                                           const std::vector<model::WhatIf>& whatifs);
/// The capacity at the SLO beside the throughput capacity (model::slo_capacity), with units in
/// the keys: `estimate --json`'s `capacity_at_slo`.
[[nodiscard]] nlohmann::json slo_capacity_json(const model::SloCapacity& c);
/// One line: "R req/s = P % of the throughput capacity T req/s (bound: B)".
[[nodiscard]] std::string slo_capacity_text(const model::SloCapacity& c);

} // namespace gpuplan::cli
