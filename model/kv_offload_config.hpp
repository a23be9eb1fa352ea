#pragma once
/// The `engine.kv_offload` block as a value: host DRAM and local NVMe tiers behind the GPU's KV
/// cache (LMCache, vLLM's OffloadingConnector, SGLang's hierarchical cache). Kept apart so that
/// deployment.hpp can hold the block without depending on the tier model (model/kv_offload.hpp).

#include "model/units.hpp"

#include <optional>

namespace gpuplan::model {

/// Capacities and bandwidths are per GPU (each tensor-parallel rank offloads its own KV shard
/// over its own host link, as LMCache's `max_local_cpu_size` is per worker). nullopt: the
/// documented default of model/kv_offload.hpp.
struct KvOffloadConfig {
    /// Host DRAM for offloaded KV per GPU. nullopt: twice the GPU's KV pool (SGLang's
    /// `--hicache-ratio` default of 2.0). 0: no host tier.
    std::optional<Bytes> host;
    /// Local NVMe for offloaded KV per GPU. nullopt or 0: no NVMe tier.
    std::optional<Bytes> nvme;
    /// Host → GPU load bandwidth per GPU. nullopt: the accelerator's host link (the swap
    /// bandwidth, one direction of its PCIe link).
    std::optional<BytesPerSecond> host_bandwidth;
    /// NVMe → GPU load bandwidth per GPU. nullopt: kDefaultNvmeBandwidth.
    std::optional<BytesPerSecond> nvme_bandwidth;
    /// The accelerator's host link bandwidth (one direction), filled in by the scenario loader
    /// from the hwdb; not a scenario key. The host_bandwidth default.
    std::optional<BytesPerSecond> host_link;
    friend bool operator==(const KvOffloadConfig&, const KvOffloadConfig&) = default;
};

} // namespace gpuplan::model
