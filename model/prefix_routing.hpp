#pragma once
/// The prefix-cache hit rate a router leaves a workload, in closed form (docs/simulator.md,
/// "Prefix-aware routing"; `gpuplan plan` compares routers with it beside the simulator).
///
/// Each class c shares one of G_c prefixes of P_c tokens (uniformly drawn) before its unique
/// input of mean u_c. A router that ignores caches (least outstanding, round robin) sends
/// every prefix to every one of the R replicas, so each replica's cache of C tokens must hold
/// all F = Σ_c G_c × P_c prefix tokens; a prefix-aware router keeps each prefix on one replica,
/// F / R per replica. Under LRU with uniformly popular prefixes a prefix is cached with
/// probability min(1, C ÷ footprint) (the independent reference model, where an LRU cache of
/// C equal objects out of F holds each with probability C ÷ F; Che, Tung and Wang, IEEE JSAC
/// 20(7), 2002, with uniform popularity), and every replica that sees a prefix misses it once
/// (R × G_c such misses spread, G_c by prefix, over the class's N_c requests). So
///
///     h_c = min(1, C ÷ footprint) × max(0, 1 − misses_c ÷ N_c)
///     hit rate = Σ_c s_c × P_c × h_c ÷ Σ_c s_c × (P_c + u_c)
///
/// with s_c the class's share: prompt tokens served from cache over prompt tokens looked up,
/// as the simulator counts them. C is the replica's whole KV pool: the running sequences'
/// own blocks take part of it, so both figures are upper bounds that load lowers.

#include "model/scenario.hpp"

#include <cstdint>

namespace gpuplan::model {

struct PrefixHitEstimate {
    bool closed_form = true;      ///< false: agent sessions (their growing histories have none)
    double spread = 0;            ///< hit rate when every replica sees every prefix
    double by_prefix = 0;         ///< hit rate when each prefix stays on one replica
    double prefix_tokens = 0;     ///< F: the distinct shared-prefix tokens of the workload
    bool shares_prefixes = false; ///< some class served locally shares a prefix or is an agent
};

/// The closed form above for the workload's classes (share > 0, not sent to the cloud only),
/// `replicas` replicas of `cache_tokens` KV tokens each and `requests` requests in all.
/// Throws InvalidArgument for replicas < 1, cache_tokens < 0 or requests < 1.
[[nodiscard]] PrefixHitEstimate prefix_hit_estimate(const Workload& w, std::int64_t cache_tokens,
                                                    int replicas, std::int64_t requests);

} // namespace gpuplan::model
