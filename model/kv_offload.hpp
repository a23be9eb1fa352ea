#pragma once
/// KV offload tiers (`engine.kv_offload`): host DRAM and local NVMe behind the GPU's prefix
/// cache, as LMCache (arXiv:2510.09665), vLLM's KV connectors (OffloadingConnector) and SGLang's
/// hierarchical cache (HiCache) run them. A prefix block the GPU evicts is demoted to host
/// memory; the host tier's least recently used block moves on to NVMe; NVMe drops its least
/// recently used. A prompt whose leading blocks sit in a lower tier loads them (bytes ÷ the
/// tier's bandwidth, before its prefill computes: not overlapped layer by layer) instead of
/// recomputing them, and the block leaves that tier for the GPU (the tiers hold disjoint
/// blocks, so together they act as one LRU stack of GPU + host + NVMe blocks).
///
/// This file holds the closed forms: the tiers' resolved sizes and bandwidths, the load time,
/// and the steady-state split of prefix hits over the tiers for equally popular shared
/// prefixes. estimate_serving (model/serving.hpp) uses them; the simulator
/// (sim/kv_tiers.hpp) runs the tiers block by block.

#include "model/kv_offload_config.hpp"
#include "model/units.hpp"

#include <optional>

namespace gpuplan::model {

struct Workload;

/// Default NVMe → GPU bandwidth per GPU: one PCIe 4.0 NVMe drive per GPU (DGX H100 ships 8 ×
/// 3.84 TB U.2 NVMe drives for 8 GPUs, NVIDIA DGX H100 User Guide, "Hardware Overview") read
/// sequentially at about 7 GB/s (Samsung PM1733 datasheet: 7,000 MB/s sequential read).
inline constexpr double kDefaultNvmeBandwidth = 7e9;
/// Default host tier: this many times the GPU's KV pool (SGLang's `--hicache-ratio`, default
/// 2.0: python/sglang/srt/server_args.py).
inline constexpr double kDefaultHostRatio = 2.0;
/// Default host → GPU bandwidth when the accelerator names no host link: PCIe 4.0 x16, one
/// direction (the simulator's swap default).
inline constexpr double kDefaultHostBandwidth = 25e9;

/// One tier, resolved: capacity and load bandwidth per GPU.
struct KvTier {
    Bytes capacity;
    BytesPerSecond bandwidth;
    friend bool operator==(const KvTier&, const KvTier&) = default;
};

/// Both lower tiers, resolved (a capacity of 0: no such tier).
struct KvTiers {
    KvTier host;
    KvTier nvme;
    friend bool operator==(const KvTiers&, const KvTiers&) = default;
};

/// Checks the block: capacities >= 0 and not both 0, bandwidths > 0. Throws InvalidArgument
/// whose message starts with "engine.kv_offload.<key>: ".
void validate(const KvOffloadConfig& c);

/// The tiers with every default filled in: `gpu_kv_pool` is the GPU's KV pool per GPU (for the
/// host default), `host_link` the accelerator's host link bandwidth (nullopt:
/// kDefaultHostBandwidth).
[[nodiscard]] KvTiers resolve_kv_offload(const KvOffloadConfig& c, Bytes gpu_kv_pool,
                                         std::optional<BytesPerSecond> host_link);

/// Time to load `bytes` of KV from a tier: bytes ÷ bandwidth (each GPU loads its own shard over
/// its own link, so the per-GPU bytes over the per-GPU bandwidth).
[[nodiscard]] Seconds kv_load_time(Bytes bytes, BytesPerSecond bandwidth);

/// Where prefix lookups are served in the steady state, as fractions of the shared-prefix
/// tokens looked up (they sum to 1).
struct TierHitSplit {
    double gpu = 1.0;
    double host = 0.0;
    double nvme = 0.0;
    double miss = 0.0; ///< recomputed
    friend bool operator==(const TierHitSplit&, const TierHitSplit&) = default;
};

/// LRU over a working set of `working_set` tokens of equally popular prefixes (independent
/// references): an LRU cache of C tokens holds the C most recently used, and with equal
/// popularity a reference hits it with probability min(C, W) ÷ W. The tiers form one stack
/// (GPU on top, then host, then NVMe), so gpu = min(G, W)/W, host = (min(G + H, W) − min(G,
/// W))/W, nvme likewise below, miss = the rest. A working set of 0: everything on the GPU.
[[nodiscard]] TierHitSplit lru_tier_hits(double working_set, double gpu, double host, double nvme);

/// The distinct shared-prefix tokens of the workload's local classes: Σ prefix_groups ×
/// shared_prefix over classes with share > 0, not routed to the cloud and not agent sessions
/// (an agent's history is its own). 0 without classes.
[[nodiscard]] double kv_working_set_tokens(const Workload& w);

/// What `estimate` reports with engine.kv_offload (ServingEstimate::kv_offload), per replica.
struct KvOffloadFigures {
    KvTiers tiers;                 ///< resolved, per GPU
    double working_set = 0;        ///< distinct shared-prefix tokens (kv_working_set_tokens)
    double gpu_cache_tokens = 0;   ///< GPU KV tokens left for cached prefixes at the running batch
    double host_tokens = 0;        ///< tokens the host tier holds
    double nvme_tokens = 0;        ///< tokens the NVMe tier holds
    int shared_tokens = 0;         ///< mean shared prefix per request
    TierHitSplit split;            ///< of the shared prefix
    double hit_rate = 0;           ///< prompt tokens served from any tier ÷ prompt tokens
    double hit_rate_without = 0;   ///< the same with the GPU's cache alone
    Seconds load_time;             ///< per request: host and NVMe loads
    Bytes bytes_per_request;       ///< loaded per request and GPU
    Seconds ttft_without;          ///< lone-request TTFT with the GPU's cache alone
    double throughput_without = 0; ///< output tokens/s with the GPU's cache alone
    friend bool operator==(const KvOffloadFigures&, const KvOffloadFigures&) = default;
};

} // namespace gpuplan::model
