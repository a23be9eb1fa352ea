#pragma once
/// The serving features' events as the simulation runs, for a trace written while it goes
/// (`gpuplan simulate --out`'s Chrome trace; docs/simulator.md, "Chrome trace"): what each
/// speculative step accepted, each prompt's KV transfer between the disaggregated pools, each
/// replica's prefix-cache hit rate, its KV offload tiers' hits and loads, and its LoRA
/// adapters' loads. The hooks are null unless a front end sets them; with
/// them null nothing is built and the run is unchanged. Each hook must not throw unless the run
/// is to end with that exception. Times are simulated seconds from the run's start.

#include "model/units.hpp"

#include <cstdint>
#include <functional>

namespace gpuplan::sim {

/// One engine step of a replica with speculative decoding, at its end: the sequences whose
/// drafts were verified in it, the drafts proposed and the drafts accepted. A sequence advanced
/// by its accepted drafts and one token of its own, so the step's mean tokens per verified
/// sequence is (accepted + sequences) / sequences (before the cap at the output's length).
struct SpeculativeStepRecord {
    int replica = 0;
    Seconds end;
    std::int64_t sequences = 0;
    std::int64_t drafted = 0;
    std::int64_t accepted = 0;
};

/// One prompt's KV moved from a prefill replica to the decode pool (cluster.disaggregation):
/// issued at `ready` (the prefill's end), on the prefill replica's link from `link_start` to
/// `arrival` (the link carries it for `transfer` = latency + bytes ÷ bandwidth, ending at its
/// arrival; one transfer at a time per link).
struct KvTransferRecord {
    std::uint64_t request = 0; ///< the request's id (RequestRecord::id)
    int replica = 0;           ///< the prefill replica whose link sends it
    Seconds ready;
    Seconds link_start;
    Seconds arrival;
    Seconds transfer;
    double bytes = 0;
};

/// A replica's prefix cache after a request first admitted there left the system: the prompt
/// tokens its cache served and looked up so far (the routing figures' per-replica hit rate,
/// SimResult::replicas[].prefix_hit_rate, at that moment).
struct PrefixHitRecord {
    int replica = 0;
    Seconds time;
    std::int64_t hit_tokens = 0;
    std::int64_t queried_tokens = 0;
};

/// KV offload tiers (engine.kv_offload): one admission's load of prompt blocks from the host
/// and NVMe tiers into the GPU (resumed requests included), taking `time` = Σ block bytes ÷ its
/// tier's bandwidth from `start` (the step's earlier tier loads before it: a step's loads run
/// one after another and its compute waits for them).
struct KvTierLoadRecord {
    std::uint64_t request = 0; ///< the request's id (RequestRecord::id)
    int replica = 0;
    Seconds start;
    std::int64_t host_blocks = 0;
    std::int64_t nvme_blocks = 0;
    double bytes = 0; ///< per GPU
    Seconds time;
};

/// KV offload tiers: a replica's step that looked prompts up for their first admission or
/// loaded blocks from the tiers, at its start: the replica's first admissions' prompt tokens
/// looked up and served by each tier so far (SimResult::kv_offload's counts, for this replica),
/// and the blocks the step loaded and their load time.
struct KvTierStepRecord {
    int replica = 0;
    Seconds time;
    std::int64_t looked_up_tokens = 0;
    std::int64_t gpu_hit_tokens = 0;
    std::int64_t host_hit_tokens = 0;
    std::int64_t nvme_hit_tokens = 0;
    std::int64_t host_blocks = 0; ///< loaded in this step
    std::int64_t nvme_blocks = 0;
    Seconds load; ///< this step's tier load time
};

/// Multi-LoRA (engine.lora): one adapter copied into a GPU slot of `replica` before a step's
/// compute, from host memory or read from disk first, over [start, start + time] (a step's
/// loads run one after another from its start).
struct LoraLoadRecord {
    int replica = 0;
    int adapter = 0;
    bool from_disk = false;
    Seconds start;
    Seconds time;
};

/// Multi-LoRA: a replica's adapter slots after a step that loaded adapters: the adapters
/// resident in GPU slots now and the loads (and disk reads) and load time so far.
struct LoraStepRecord {
    int replica = 0;
    Seconds time;
    int resident = 0;
    std::int64_t loads = 0;
    std::int64_t disk_loads = 0;
    Seconds load_time;
};

/// SimOptions::features: one hook per feature (null: not observed).
struct FeatureHooks {
    std::function<void(const SpeculativeStepRecord&)> speculative;
    std::function<void(const KvTransferRecord&)> kv_transfer;
    std::function<void(const PrefixHitRecord&)> prefix;
    std::function<void(const KvTierLoadRecord&)> kv_tier_load;
    std::function<void(const KvTierStepRecord&)> kv_tier_step;
    std::function<void(const LoraLoadRecord&)> lora_load;
    std::function<void(const LoraStepRecord&)> lora_step;
};

} // namespace gpuplan::sim
