#pragma once
/// The serving features' events as the simulation runs, for a trace written while it goes
/// (`gpuplan simulate --out`'s Chrome trace; docs/simulator.md, "Chrome trace"): what each
/// speculative step accepted, each prompt's KV transfer between the disaggregated pools, and
/// each replica's prefix-cache hit rate. The hooks are null unless a front end sets them; with
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

/// SimOptions::features: one hook per feature (null: not observed).
struct FeatureHooks {
    std::function<void(const SpeculativeStepRecord&)> speculative;
    std::function<void(const KvTransferRecord&)> kv_transfer;
    std::function<void(const PrefixHitRecord&)> prefix;
};

} // namespace gpuplan::sim
