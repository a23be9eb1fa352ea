#pragma once
/// Readers for the simulator's scenario keys (docs/scenario-schema.md): the workload's
/// arrivals, classes and trace, the scheduler keys of the engine block, and the cluster block.

#include "hwdb/database.hpp"
#include "hwdb/detail/yaml_reader.hpp"
#include "model/scenario.hpp"
#include "model/workload.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::hwdb::detail {

/// Reads `requests`, `duration`, `arrival`, `trace` and `classes` of a workload mapping (the
/// caller reads the other keys and calls finish()). Files (traces, empirical lengths) are
/// relative to `base_dir`.
void read_sim_workload(MapReader& m, model::Workload& w, const std::filesystem::path& base_dir);

/// Reads the scheduler keys of an engine mapping: batching, static_batch_size,
/// static_max_wait, scheduling_policy, preemption_mode, swap_space, swap_bandwidth, watermark.
void read_scheduler(MapReader& m, model::SchedulerConfig& s);

/// Reads the cluster mapping. Pools (`pools:`) resolve their accelerator and node in `db` and
/// must name classes of `classes` (the effective class names); `base` is the scenario's
/// deployment, which each pool's replicas run on their own hardware (checked with
/// model::validate).
[[nodiscard]] model::Cluster read_cluster(std::optional<MapReader> m, const Database& db,
                                          const std::vector<std::string>& classes,
                                          const model::Deployment& base);

} // namespace gpuplan::hwdb::detail
