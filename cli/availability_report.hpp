#pragma once
/// How estimate and plan show a serving fleet's availability with hot spares (the scenario's
/// `availability:` block, model/failures.hpp serving_availability): one text block and one JSON
/// object, the same in both commands.

#include "model/failures.hpp"
#include "model/scenario.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>

namespace gpuplan::cli {

/// The block answered for `replicas` replicas of `gpus_per_replica` GPUs (the block's own
/// `replicas` wins); nullopt without the block.
[[nodiscard]] std::optional<model::ServingAvailability>
scenario_availability(const model::Scenario& s, int replicas, int gpus_per_replica);

/// The block answered for the scenario's own deployment: cluster.replicas (else its data-parallel
/// size) replicas of tp × pp GPUs.
[[nodiscard]] std::optional<model::ServingAvailability>
scenario_availability(const model::Scenario& s);

/// {replicas_needed, mtbf_s, mtbf_default, mttr_s, mttr_default, target, replica_availability,
/// availability_without_spares, spares (null: unreachable), availability}.
[[nodiscard]] nlohmann::json availability_json(const model::ServingAvailability& a);

/// The text block: per-replica availability, the fleet's with no spares, the spares needed.
void print_availability(std::ostream& out, const model::ServingAvailability& a);

} // namespace gpuplan::cli
