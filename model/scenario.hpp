#pragma once
/// A planning question as a value: a deployment plus the load, the SLOs, the power budget and
/// the prices. The scenario YAML (docs/scenario-schema.md) maps onto it one to one; the CLI
/// and the GUI both read and write it.

#include "model/availability.hpp"
#include "model/cost_config.hpp"
#include "model/deployment.hpp"
#include "model/fleet.hpp"
#include "model/money.hpp"
#include "model/plan_config.hpp"
#include "model/power_model.hpp"
#include "model/rack.hpp"
#include "model/training_config.hpp"
#include "model/units.hpp"
#include "model/workload.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// The load to serve. Lengths are tokens per request. The analytic model uses the first four
/// fields; the simulator uses the rest (model/workload.hpp), and without `classes` it serves one
/// class of fixed input_tokens/output_tokens. Which load the figures are computed at (a closed
/// loop or an offered rate, and the default when neither is given) is resolved in one place,
/// model/operating_point.hpp.
struct Workload {
    int input_tokens = 1024;
    int output_tokens = 256;
    std::optional<int> concurrency;       ///< sequences in flight (closed loop), when given
    std::optional<double> requests_per_s; ///< open-loop arrival rate, when given
    ArrivalProcess arrival;               ///< simulator: how requests arrive
    std::vector<RequestClass> classes;    ///< simulator: the request mix (empty: one class)
    std::vector<TraceRecord> trace;       ///< simulator: replayed when arrival is Trace
    std::optional<int> requests;          ///< simulator: requests (or sessions) to send
    /// An offline batch: this many requests all arrive at time 0 and are served with their own
    /// lengths (what `trtllm-bench`, `vllm bench throughput` and MLPerf Offline run). A trace
    /// whose arrivals share one instant is a batch of its rows (model::offline_batch_size).
    std::optional<int> batch_requests;
    std::optional<Seconds> duration; ///< simulator: stop sending after this time
    friend bool operator==(const Workload&, const Workload&) = default;
};

/// Latency objectives, each at `percentile`.
struct Slo {
    std::optional<Seconds> ttft;
    std::optional<Seconds> tpot;
    std::optional<Seconds> e2e;
    double percentile = 99.0;
    friend bool operator==(const Slo&, const Slo&) = default;
};

/// Power limits the deployment must live within.
struct PowerBudget {
    std::optional<Watts> gpu_cap;     ///< per-GPU power limit (nvidia-smi -pl)
    std::optional<Watts> node_cap;    ///< per-node limit
    std::optional<Watts> rack_budget; ///< per-rack budget
    std::optional<double> pue;        ///< facility power usage effectiveness
    friend bool operator==(const PowerBudget&, const PowerBudget&) = default;
};

/// Prices that override or complete hwdb's estimates. The accelerator and node prices are for
/// the hardware named here (the loader fills in the scenario's own); on other hardware the
/// hwdb's estimates apply (model/price_list.hpp).
struct Prices {
    std::optional<Price> gpu_hour;      ///< cloud rent per GPU-hour
    std::optional<Price> gpu_purchase;  ///< purchase price per GPU
    std::optional<Price> electricity;   ///< per kWh, wherever the hardware runs
    std::optional<Price> node_purchase; ///< purchase price of one whole node (GPUs included)
    std::string accelerator;            ///< hwdb name gpu_hour and gpu_purchase are for ("": any)
    std::string node;                   ///< hwdb name node_purchase is for ("": any)
    friend bool operator==(const Prices&, const Prices&) = default;
};

/// One planning question.
struct Scenario {
    std::string name;
    std::string description;
    std::string model_ref;       ///< catalog name as written, "" when the model is inline
    std::string accelerator_ref; ///< hwdb name as written
    std::string node_ref;        ///< hwdb server name, "" when none
    Deployment deployment;
    Workload workload;
    Slo slo;
    PowerBudget power;
    Prices prices;
    PowerModel power_model;    ///< power-model overrides (the `power:` block's other keys)
    RackConfig rack;           ///< the rack the nodes go into (`rack:` block)
    CostConfig cost;           ///< ownership and utilization (`cost:` block)
    SchedulerConfig scheduler; ///< simulator: replica scheduler knobs beyond EngineConfig
    Cluster cluster;           ///< simulator: replicas, router, admission, cloud
    std::optional<TrainingConfig> training; ///< a training job (`training:` block), when given
    std::optional<PlanConfig> plan;         ///< the sizing search (`plan:` block), when given
    /// Spares for a serving fleet (`availability:` block, model/availability.hpp), when given.
    std::optional<AvailabilityConfig> availability;
    /// A fleet over a day, week or year (`fleet:` block, model/fleet.hpp; `plan --fleet`), when
    /// given.
    std::optional<FleetConfig> fleet;
    std::uint64_t seed = 1;
    friend bool operator==(const Scenario&, const Scenario&) = default;
};

} // namespace gpuplan::model
