#pragma once
/// Latency-bound capacity: the highest request rate whose percentile TTFT, TPOT and E2E meet the
/// scenario's SLO under Poisson arrivals, beside the throughput capacity (the rate at
/// utilisation 1, peak output tokens/s ÷ output tokens). Three things cost it
/// (docs/operating-point.md, "Capacity at the SLO"):
///  (a) the batch the TPOT limit allows: a decode step grows with the batch;
///  (b) prefill interference: a step that carries a prompt chunk is longer, and a request's TPOT
///      is the mean of its steps, so its percentile is set by how many of its steps carry chunks
///      (binomial in the share of such steps);
///  (c) arrival tails: a request waits for its prompt's turn at the chunk steps (M/D/1) and,
///      when Poisson bursts fill the batch, for a slot (Erlang C); each wait's percentile with the
///      Allen–Cunneen correction and an exponential tail.
/// The load itself is estimate_serving's offered-rate operating point (Little's law), so at a
/// rate both report the same running batch, TTFT under load and mean TPOT.

#include "model/deployment.hpp"
#include "model/efficiency.hpp"
#include "model/scenario.hpp"
#include "model/serving.hpp"
#include "model/units.hpp"

#include <optional>

namespace gpuplan::model {

/// What stops a higher rate.
enum class SloBound {
    Throughput,   ///< no target binds below utilisation 1 (no TTFT target, or none given)
    TpotBatch,    ///< (a) the decode-only step at the running batch exceeds the TPOT target
    TpotPrefill,  ///< (b) prompt chunks riding in the decode steps push the TPOT percentile over
    TtftPrefill,  ///< the prefill under load alone exceeds the TTFT target
    TtftQueueing, ///< (c) the queueing delay's percentile pushes the TTFT over
    E2e,          ///< the end-to-end percentile
};

/// "throughput", "tpot_batch", "tpot_prefill", "ttft_prefill", "ttft_queueing", "e2e".
[[nodiscard]] const char* to_string(SloBound b);

/// z with Φ(z) = p for 0 < p < 1 (the standard normal quantile).
[[nodiscard]] double normal_quantile(double p);

/// (b) The `percentile` of a request's TPOT (the mean of its n = output_tokens − 1 step gaps)
/// when a share f of the steps carry a chunk, under Poisson arrivals. Its decode life sees
/// P = n f ÷ s prompts arrive (s = chunk_steps each, a = s × extra ÷ n of TPOT per prompt) and
/// shares its steps with a running batch that grows the decode-only step by `per_sequence` (β)
/// per sequence; both counts come from the one arrival stream: with lifetimes of one length the
/// life's mean batch has variance 2P/3 and covariance P/2 with the prompts (M/G/∞). Each chunk
/// lengthens the life, in which more prompts arrive: a branching process with m = f × extra ÷
/// mean TPOT prompts per prompt, which multiplies the spread by 1 / (1 − m). With the normal
/// approximation TPOT_p = mean + z_p √(P (a² + 2β²/3 + a β)) ÷ (1 − m), mean = decode_step +
/// f × extra, within [decode_step, decode_step + extra]. With every step mixed (or one output
/// token) it is the mean.
[[nodiscard]] Seconds tpot_percentile(const ChunkInterference& c, int output_tokens,
                                      double percentile, Seconds per_sequence = Seconds(0));

/// (c) The `percentile` of the wait for a slot at `rate` requests/s on a replica that completes
/// at most `capacity_rate` (μ_c) requests/s with `servers` (c) sequences at once: an M/M/c
/// queue's Erlang C probability of waiting C, scaled by the Allen–Cunneen factor
/// k = (c_a² + c_s²) / 2 (`variability`; 1/2 for Poisson arrivals of requests of one length),
/// with an exponential tail P(W > t) ≈ C exp(−(μ_c − λ) t / k), so
/// W_p = k / (μ_c − λ) × ln(C / (1 − p)) when C > 1 − p, else 0. One server is the M/D/1 queue:
/// mean wait ρ S / (2 (1 − ρ)) (Pollaczek–Khinchine) with the same tail. Infinite at or above
/// capacity.
[[nodiscard]] Seconds queue_wait_percentile(double rate, double capacity_rate, int servers,
                                            double percentile, double variability = 0.5);

/// (a) The most sequences one replica runs whose decode-only step (model::tpot at the average
/// context) is within `limit`, up to `most`; 0 when even one sequence misses.
[[nodiscard]] int tpot_batch_limit(const StepCostModel& m, const Workload& w, Seconds limit,
                                   int most);

/// The percentile figures at one offered rate.
struct SloFigures {
    double rate = 0;                   ///< requests/s of the deployment
    std::optional<double> utilisation; ///< the operating point's (rate ÷ throughput capacity)
    int running = 0;                   ///< sequences per replica by Little's law
    Seconds prefill;                   ///< TTFT under load without queueing (ttft_loaded)
    /// (c) the wait at the percentile: for a slot (Erlang C over the batch) plus for the
    /// prompt's turn at the chunk steps (M/D/1, service the prefill under load)
    Seconds queue_wait;
    Seconds ttft;             ///< prefill + queue_wait
    ChunkInterference chunks; ///< (b) the steps at the running batch
    Seconds tpot;             ///< (b) TPOT at the percentile
    Seconds e2e; ///< queue_wait + prefill + (output − 1) × tpot (the percentiles added: an upper
                 ///< bound)
    bool served = false;            ///< fits, utilisation < 1 and every target met
    std::optional<SloBound> missed; ///< the first target missed (TPOT, TTFT, E2E)
    friend bool operator==(const SloFigures&, const SloFigures&) = default;
};

/// The figures of `w` (its analytic request) at `rate` requests/s at `slo.percentile`.
[[nodiscard]] SloFigures slo_figures_at(const Deployment& d, const Workload& w, const Slo& slo,
                                        const EfficiencyProfile& profile, double rate,
                                        int cached_prefix = 0);

/// The capacity at the SLO beside the throughput capacity.
struct SloCapacity {
    bool has_targets = false;   ///< the SLO gives a TTFT, TPOT or E2E target
    double percentile = 99.0;   ///< the SLO's
    double throughput_rate = 0; ///< requests/s at utilisation 1 (0: the deployment does not fit)
    /// The highest requests/s meeting every target (bisection to a relative 1e-4); 0 when even
    /// the lightest load misses.
    double rate = 0;
    double ratio = 0;        ///< rate ÷ throughput_rate
    double output_tok_s = 0; ///< rate × output tokens
    SloBound bound = SloBound::Throughput;
    int tpot_batch = 0; ///< (a) tpot_batch_limit per replica (0 without a TPOT target)
    SloFigures at;      ///< the figures at `rate`
    friend bool operator==(const SloCapacity&, const SloCapacity&) = default;
};

/// The highest rate at which the deployment meets `slo` with Poisson arrivals of `w`'s analytic
/// request (a class mix's mean, its shared prefix cached), and what binds. Without targets it is
/// the throughput capacity. Throws InvalidArgument as estimate_serving does.
[[nodiscard]] SloCapacity slo_capacity(const Deployment& d, const Workload& w, const Slo& slo,
                                       const EfficiencyProfile& profile, int cached_prefix = 0);

} // namespace gpuplan::model
