#pragma once
/// The fleet over a long horizon and the owned-against-rented question (`gpuplan plan --fleet`,
/// docs/fleet.md). One capacity per replica is computed once by the analysis chain
/// (plan::analyze_serving): the most sequences one replica runs whose steady-state TTFT, TPOT
/// and E2E stay within the scenario's SLO, and the request rate that batch carries. The
/// horizon itself is model::run_fleet / model::plan_fleet: steady states in coarse steps, no
/// second serving model.

#include "model/efficiency.hpp"
#include "model/fleet.hpp"
#include "model/hardware_spec.hpp"
#include "model/scenario.hpp"

#include <string>
#include <vector>

namespace gpuplan::plan {

/// One replica at the most load it carries within the SLO.
struct ReplicaCapacity {
    int running = 0;      ///< sequences in flight on the replica (closed loop)
    int most_running = 0; ///< what its KV cache and max_num_seqs allow
    double rps = 0; ///< requests/s it takes: completes at `running`, at most model::slo_capacity
    double output_tok_s = 0;
    double ttft_s = 0; ///< a prefill sharing steps with the running decodes (no queueing)
    double tpot_s = 0;
    double e2e_s = 0;
    std::string bound; ///< what stops a larger batch: "ttft", "tpot", "e2e" or "memory"
};

/// The highest load one replica of `s` carries within s.slo (TTFT, TPOT and E2E of the
/// analytic steady state, under the scenario's power limits): a bisection over the running
/// batch, each point one analyze_serving power link. Throws InvalidArgument when the model
/// does not fit or a lone request already misses the SLO.
[[nodiscard]] ReplicaCapacity replica_capacity_within_slo(const model::Scenario& s,
                                                          const model::ServerSpec* server,
                                                          const model::EfficiencyProfile& profile);

/// The fleet model's inputs for `s` over `config` (its `fleet:` block), base rate
/// (model::offered_rate), the replica capacity above, one replica's owned cost per hour
/// (model::estimate_cost's capex, maintenance and colocation per month × 12 ÷ 8,760 h, from
/// whole nodes: a node of several replicas is shared among them), its rent (GPUs × the price
/// list's rent per GPU-hour), its wall power resident and at capacity, the cloud endpoint's
/// price per request (cluster.cloud) and the replica availability of the `availability:` block.
/// Throws InvalidArgument when the workload has no offered rate or the owned hardware has no
/// purchase price.
struct FleetSetup {
    model::FleetInputs inputs;
    ReplicaCapacity capacity;
    std::vector<std::string> notes;
};
[[nodiscard]] FleetSetup fleet_setup(const model::Scenario& s, const model::FleetConfig& config,
                                     const model::ServerSpec* server,
                                     const model::EfficiencyProfile& profile);

/// The owned-against-rented answer for `s` over `config`: fleet_setup, then model::plan_fleet
/// (what `gpuplan plan --fleet` prints and the app's Fleet tab draws).
struct FleetAnswer {
    FleetSetup setup;
    model::FleetPlan plan;
};
[[nodiscard]] FleetAnswer fleet_answer(const model::Scenario& s, const model::FleetConfig& config,
                                       const model::ServerSpec* server,
                                       const model::EfficiencyProfile& profile);

} // namespace gpuplan::plan
