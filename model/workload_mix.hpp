#pragma once
/// The analytic model's reading of a simulator workload with request classes: one request of
/// the share-weighted mean lengths, with the shared prefix as prefix-cache hits, and the
/// requests each arrival brings (an agent session brings its steps). The serving estimate, and
/// through it estimate, cost, compare, the desktop app and the sizing search's pruning, read a
/// class mix only through this one rule.

#include "model/workload.hpp"

#include <optional>

namespace gpuplan::model {

struct Workload;

/// The mean of a length distribution, clamped to [min, max] as every draw is (the sampler
/// clamps its draws, so an unclamped mean would describe requests that never occur).
[[nodiscard]] double mean_length(const LengthDistribution& d);

/// One request standing for the class mix.
struct MeanRequest {
    int input_tokens = 1;  ///< mean prompt, shared prefix included
    int output_tokens = 1; ///< mean output
    int cached_prefix = 0; ///< mean shared prefix: prompt tokens the prefix cache can serve
    double requests_per_arrival = 1.0; ///< agent sessions send their steps; plain classes 1
};

/// The mean request of a replayed trace (its rows' lengths; the classes' shared prefix as the
/// cached part), else of the workload's classes served locally (share > 0, not routed to the
/// cloud): an agent session of n steps counts n requests whose prompt re-sends, on average,
/// half of the growing context. nullopt when the workload has neither (its input_tokens and
/// output_tokens are then the request).
[[nodiscard]] std::optional<MeanRequest> mean_request(const Workload& w);

/// The request the analytic model serves: the workload's lengths (the mix's means when it has
/// classes or a trace), its load keys and arrival process, without the classes and the trace
/// (so copying it is cheap); a replayed trace's load becomes its offline batch or its mean rate.
[[nodiscard]] Workload analytic_request(const Workload& w);

/// `w` without its trace rows, as the analytic model reads it: a replayed trace becomes its
/// offline batch or its mean rate, its mean lengths the classes' (their shared prefixes kept).
/// For searches that copy the workload per candidate (a trace can be large).
[[nodiscard]] Workload without_trace(const Workload& w);

} // namespace gpuplan::model
