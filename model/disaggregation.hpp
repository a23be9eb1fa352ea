#pragma once
/// Prefill/decode disaggregation (DistServe, Zhong et al., OSDI 2024, arXiv:2401.09670;
/// Splitwise, Patel et al., ISCA 2024, arXiv:2311.18677): a prefill pool computes each prompt,
/// its KV cache moves over the link between the pools (whole after the prefill, or layer by
/// layer while it runs), and a decode pool generates the rest. Each pool has its own
/// accelerator, tensor-parallel size and replica count; the steady state serves the least of
/// the prefill pool's, the decode pool's and the link's request rates.

#include "model/comm.hpp"
#include "model/deployment.hpp"
#include "model/disaggregation_config.hpp"
#include "model/efficiency.hpp"
#include "model/scenario.hpp"
#include "model/units.hpp"

#include <string>

namespace gpuplan::model {

/// The path of one prompt's transfer: tensor parallelism shards the KV by heads, so each of
/// min(tp_prefill, tp_decode) GPU pairs moves its share at the link's per-GPU bandwidth at
/// once: bandwidth × min(tp_p, tp_d), the link's latency.
[[nodiscard]] Link transfer_link(const Disaggregation& g);

/// KV bytes of a `prompt`-token sequence of the deployment's model (all layers, all heads):
/// kv_bytes_per_sequence at the KV cache precision.
[[nodiscard]] Bytes kv_transfer_bytes(const Deployment& d, int prompt);

/// Time of one whole transfer: latency + bytes / bandwidth (p2p_time).
[[nodiscard]] Seconds kv_transfer_time(Bytes bytes, const Link& link);

/// The part of a transfer of `transfer` that the request waits for after its prefill of
/// `prefill` (`layers` layers). Whole: all of it. Layerwise, layer i's KV leaves when it is
/// computed (at prefill × i / L) and the link sends one layer at a time (transfer / L each), so
/// the last layer arrives at max(prefill + T/L, prefill/L + T): after the prefill that is
/// max(T/L, T − prefill × (L − 1)/L).
[[nodiscard]] Seconds exposed_transfer_time(Seconds transfer, Seconds prefill, int layers,
                                            KvTransferMode mode);

/// What disaggregation gives at a load of `rate` requests/s (0: capacity only).
struct DisaggregatedEstimate {
    int prefill_gpus = 0;
    int decode_gpus = 0;
    Bytes kv_bytes;          ///< KV of one mean prompt
    Seconds transfer;        ///< its whole transfer (kv_transfer_time)
    Seconds exposed;         ///< the part after the prefill (exposed_transfer_time)
    Seconds prefill_ttft;    ///< a lone prompt on the prefill pool (ttft)
    Seconds ttft;            ///< prefill_ttft + exposed (an idle decode replica admits at once)
    Seconds tpot;            ///< a decode step of the decode pool at its running batch
    int decode_running = 0;  ///< sequences per decode replica at `rate` (its cap at capacity)
    int decode_cap = 0;      ///< the most one decode replica runs (replica_capacity)
    double prefill_rps = 0;  ///< requests/s the prefill pool prefills at full budget steps
    double decode_rps = 0;   ///< requests/s the decode pool finishes at its cap
    double link_rps = 0;     ///< requests/s the prefill replicas' links carry
    double capacity_rps = 0; ///< the least of the three
    std::string bottleneck;  ///< "prefill", "decode" or "link"
    double prefill_utilisation = 0; ///< rate / prefill_rps at `rate`
    double decode_utilisation = 0;  ///< decode_running / decode_cap at `rate`
    double link_utilisation = 0;    ///< rate / link_rps at `rate`
    double output_tok_s = 0;        ///< at `rate` (capacity when rate is 0 or above it)
    friend bool operator==(const DisaggregatedEstimate&, const DisaggregatedEstimate&) = default;
};

/// The disaggregated steady state of `w` (its mean lengths) on `g`'s pools running `base`'s
/// model, precisions and engine. Prefill: one replica runs steps of max_num_batched_tokens
/// prompt tokens (whole prompts while they fit, else the chunked prompt alone); decode: n
/// sequences per replica at context prompt + output/2 with n = rate/D × (output − 1) × tpot(n)
/// (Little's law), at most replica_capacity; link: each prefill replica sends one transfer at
/// a time. Throws InvalidArgument when a pool does not fit its model.
[[nodiscard]] DisaggregatedEstimate
estimate_disaggregated(const Deployment& base, const Workload& w, const EfficiencyProfile& profile,
                       const Disaggregation& g, double rate = 0.0);

} // namespace gpuplan::model
