#pragma once
/// The sizing search behind `gpuplan plan`: the cheapest configurations — accelerator and
/// count, tensor/pipeline parallelism and replicas, weight and KV-cache precisions, the
/// engine's max_num_seqs — that serve the scenario's workload within its SLOs and the plan's
/// constraints (monthly budget, power budget, racks).
///
/// 1. Enumerate replica shapes (candidate × tp × pp × weights × KV × max_num_seqs).
/// 2. Prune with the analytic model: shapes that do not fit in memory (model/memory.hpp),
///    whose lone request already misses a TTFT/TPOT/E2E SLO by more than the prune margin, or
///    whose replicas cannot reach the arrival rate within max_gpus (model/serving.hpp through
///    model::estimate_power, so a power cap's slowdown counts); then, per replica count, what
///    breaks the budget, the power budget or the racks (model/cost.hpp, model/rack.hpp).
/// 3. Confirm with the simulator, cheapest first, in fixed batches: a configuration meets the
///    SLO when every class meets its percentile SLOs and no request fails. A shape's first
///    passing replica count ends that shape (more replicas only cost more).
/// 4. Rank by monthly cost, with cost per million tokens, power, racks, SLO margins and the
///    binding resource (model/bottleneck.hpp).
///
/// It lives in plan/, above model/ and sim/, because it needs both the analytic model and the
/// simulator and adds what neither owns: money, rack packing, power budgets and worker
/// threads (plan/thread_pool.hpp). It never depends on hwdb/: the scenario comes in as a value
/// with its `plan:` candidates resolved, so the CLI and the GUI can both call it. Pure apart
/// from its worker threads; the result does not depend on their number.

#include "model/efficiency.hpp"
#include "model/money.hpp"
#include "model/plan_config.hpp"
#include "model/scenario.hpp"
#include "sim/simulate.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace gpuplan::plan {

/// One configuration of the search space.
struct SizingConfig {
    int candidate = 0;      ///< index into the hardware candidates
    std::string gpu;        ///< accelerator name
    std::string node;       ///< server name, "" when none
    model::Parallelism par; ///< tp, pp and dp (the replicas)
    int gpus = 0;           ///< tp × pp × dp
    model::Precision weights = model::bf16_precision();
    model::Precision kv_cache = model::bf16_precision();
    int max_num_seqs = 0;     ///< the engine limit (0: the scenario's engine setting)
    bool speculative = false; ///< runs the scenario's engine.speculative (false: without it)
    friend bool operator==(const SizingConfig&, const SizingConfig&) = default;
};

/// One SLO metric of one class against its target, from the simulation.
struct SloMargin {
    std::string request_class;
    std::string metric; ///< "ttft", "tpot" or "e2e"
    double value_s = 0; ///< the class's percentile of the metric
    double target_s = 0;
    /// 1 − value ÷ target: the fraction of the target left (negative: missed by that much).
    [[nodiscard]] double margin() const { return target_s > 0 ? 1.0 - value_s / target_s : 0.0; }
    friend bool operator==(const SloMargin&, const SloMargin&) = default;
};

/// Where a configuration stopped.
enum class SizingStage {
    Invalid,    ///< the layout is impossible (heads not divisible by tp, no compute path, ...)
    Memory,     ///< does not fit in memory
    Latency,    ///< a lone request misses an SLO (analytic)
    Capacity,   ///< max_gpus of replicas cannot reach the rate (analytic)
    Price,      ///< no price for the chosen pricing
    Budget,     ///< over the monthly budget
    Power,      ///< over the power budget
    Racks,      ///< more racks than allowed, or no node fits a rack
    Simulated,  ///< simulated: see meets_slo
    NotReached, ///< left unsimulated (the ranking was complete, or the simulation budget ran out)
};

/// "invalid", "memory", "latency", "capacity", "price", "budget", "power", "racks",
/// "simulated", "not_reached".
[[nodiscard]] const char* to_string(SizingStage s);

/// What the search knows about one configuration.
struct SizingRow {
    SizingConfig config;
    SizingStage stage = SizingStage::NotReached;
    std::string reason; ///< why it stopped there, with the numbers
    /// How far from feasible: the worst value ÷ limit over what it misses (1 or less: meets).
    /// Used to pick the closest miss when nothing meets the SLO.
    double miss_ratio = 0;
    // Analytic figures (model/).
    double capacity_rps = 0; ///< requests/s the replicas sustain at full batch, under the cap
    double offered_rps = 0;  ///< the workload's arrival rate (0: closed loop or trace)
    double lone_ttft_s = 0;  ///< a lone mean-length request, uncapped
    double lone_tpot_s = 0;
    /// The highest requests/s within the scenario's slo at its percentile, uncapped, for the
    /// mix's mean request with Poisson arrivals (model::slo_capacity), beside the throughput
    /// capacity it is a share of (`slo_capacity_ratio`) and what binds it; ranked rows and the
    /// closest miss only.
    double slo_capacity_rps = 0;
    double slo_capacity_ratio = 0;
    std::string slo_capacity_bound;
    // Cost and power.
    std::string currency;
    std::optional<double> monthly; ///< by the plan's pricing
    std::optional<double> own_monthly;
    std::optional<double> rent_monthly;
    std::optional<double> per_million_tokens; ///< by the plan's pricing, at the offered load
    double tokens_per_month = 0;
    double gpu_limit_w = 0;  ///< per-GPU power limit
    double avg_power_w = 0;  ///< at the wall, at the offered load (analytic)
    double peak_power_w = 0; ///< at the wall, every GPU at its limit (provisioning)
    int nodes = 0;
    int racks = 0;
    std::string rack_binding; ///< which rack limit binds ("budget", "pdu", ...)
    // Simulation (stage Simulated).
    bool meets_slo = false;
    std::vector<SloMargin> margins;
    std::string binding_slo;      ///< "<class> <metric>" with the smallest margin
    std::string binding_resource; ///< what limits that phase (model::Resource), or memory-capacity
    double sim_throughput_tok_s = 0; ///< output tokens/s
    double sim_mean_running = 0;     ///< sequences running, all replicas, time average
    double sim_avg_power_w = 0;
    double sim_peak_power_w = 0;
    double sim_energy_j_per_token = 0;
    std::int64_t failed = 0; ///< rejected + timed out
    std::vector<std::string> notes;
    friend bool operator==(const SizingRow&, const SizingRow&) = default;
};

/// The search's answer.
struct SizingResult {
    bool found = false;            ///< at least one configuration meets every SLO
    std::vector<SizingRow> ranked; ///< the cheapest meeting the SLO, best first (≤ plan.top)
    /// When nothing meets the SLO: the configuration that came closest (smallest miss_ratio,
    /// simulated ones first).
    std::optional<SizingRow> closest_miss;
    std::string verdict; ///< one sentence: the answer or why there is none
    std::string currency;
    model::PlanPricing pricing = model::PlanPricing::Own;
    int shapes = 0;         ///< replica shapes enumerated
    int configurations = 0; ///< shapes × replica counts considered
    int simulated = 0;
    bool exhausted = false; ///< the simulation budget ran out before the ranking was complete
    bool stopped = false;   ///< the stop token ended the search
    /// Configurations by where they stopped: the stage names of to_string(SizingStage), with
    /// "simulated" split into "met_slo" and "missed_slo".
    std::map<std::string, int> stages;
    std::vector<std::string> notes;
    friend bool operator==(const SizingResult&, const SizingResult&) = default;
};

/// How to run the search.
/// Runs a batch of the search's confirming simulations somewhere else (gpuplan plan --mpi spreads
/// them over MPI ranks): `run(j)` simulates job j of `count` and returns its outcome as bytes;
/// the runner must call `apply(j, bytes)` for every j, in this process, before it returns.
/// Every process of a distributed search runs the same search and so asks for the same batches.
using BatchRunner =
    std::function<void(std::size_t count, const std::function<std::string(std::size_t)>& run,
                       const std::function<void(std::size_t, const std::string&)>& apply)>;

struct SizingOptions {
    /// Worker threads; 0: std::thread::hardware_concurrency(). The result is the same for
    /// every value.
    int threads = 0;
    /// Where the confirming simulations run; empty: on `threads` threads of this process.
    BatchRunner run_batch;
    /// Efficiency profiles by accelerator name; the default profile for the others.
    std::map<std::string, model::EfficiencyProfile> profiles;
};

/// Chooses the efficiency profile for an accelerator (the front end's rule: the CLI's
/// choose_profile, the GUI's Core::profile_for).
using ProfileChooser = std::function<model::EfficiencyProfile(const model::AcceleratorSpec&)>;

/// The options a front end passes to size_deployment: `threads`, and the profile of every
/// candidate of effective_plan(s, node) chosen once per accelerator by `choose`. The CLI and
/// the GUI prepare the search through this one function.
[[nodiscard]] SizingOptions sizing_options(const model::Scenario& s,
                                           const std::optional<model::ServerSpec>& node,
                                           const ProfileChooser& choose, int threads = 0);

/// The plan the search uses: the scenario's `plan:` block, or the defaults with the scenario's
/// own hardware as the one candidate; candidates left empty are filled from the scenario.
/// `node` is the scenario's server (from hwdb), when it has one.
[[nodiscard]] model::PlanConfig effective_plan(const model::Scenario& s,
                                               const std::optional<model::ServerSpec>& node);

/// The scenario of one configuration: the candidate's hardware and prices (the scenario's
/// `prices:` are kept only for its own accelerator), the layout, precisions and max_num_seqs,
/// and cluster.replicas = dp.
[[nodiscard]] model::Scenario
configured_scenario(const model::Scenario& s, const model::PlanCandidate& c, const SizingConfig& k);

/// Monthly cost and power of a configuration, as the search ranks it: model::cost_inputs and
/// model::estimate_cost with the deployment at the offered load (its GPUs at the resident
/// floor plus the offered share of their full-batch draw under the limit, from
/// model::estimate_power). Throws InvalidArgument as estimate_power and estimate_cost do.
struct SizingCost {
    std::string currency;
    std::optional<double> own_monthly, rent_monthly, own_per_million, rent_per_million;
    double tokens_per_month = 0;
    double gpu_limit_w = 0;
    double avg_power_w = 0;
    double peak_power_w = 0;   ///< every GPU at min(board, limit) + hosts, at the wall
    double node_peak_w = 0;    ///< one full node at the same
    double capacity_tok_s = 0; ///< output tokens/s at full batch, all replicas, under the limit
    int nodes = 0;
    std::vector<std::string> excluded; ///< what the cost of owning leaves out (model::CostEstimate)
    std::vector<std::string> notes;
};
[[nodiscard]] SizingCost sizing_cost(const model::Scenario& configured,
                                     const model::PlanCandidate& c,
                                     const model::EfficiencyProfile& profile);

/// Runs the search (docs/plan.md). Throws InvalidArgument for a plan that cannot run (no
/// candidates, no workload classes, a budget that is not per month). Reports progress in
/// [0, 1] as simulations finish; stops early (result.stopped) when `stop` is requested.
/// Cost: one analytic estimate per shape and replica count, at most plan.max_simulations
/// simulations, spread over the threads.
[[nodiscard]] SizingResult
size_deployment(const model::Scenario& s,
                const std::optional<model::ServerSpec>& node = std::nullopt,
                const SizingOptions& options = {}, std::stop_token stop = {},
                const sim::ProgressFn& progress = {});

} // namespace gpuplan::plan
