#include "sim/simulate.hpp"

#include "model/availability.hpp"
#include "model/engine_defaults.hpp"
#include "model/error.hpp"
#include "model/failures.hpp"
#include "model/kv_offload.hpp"
#include "model/lora.hpp"
#include "model/memory.hpp"
#include "model/operating_point.hpp"
#include "model/power.hpp"
#include "model/price_list.hpp"
#include "model/rack.hpp"
#include "model/speculative.hpp"
#include "model/step_cost.hpp"
#include "model/validity.hpp"
#include "sim/detail/cluster.hpp"
#include "sim/detail/lora_cache.hpp"
#include "sim/detail/metrics.hpp"
#include "sim/detail/power_observer.hpp"
#include "sim/detail/source.hpp"
#include "sim/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

namespace gpuplan::sim {

const char* to_string(Outcome o) {
    switch (o) {
    case Outcome::Completed: return "completed";
    case Outcome::Cloud: return "cloud";
    case Outcome::Rejected: return "rejected";
    case Outcome::TimedOut: return "timed_out";
    case Outcome::Cancelled: return "cancelled";
    }
    return "?";
}

void RejectCounts::add(RejectReason why) noexcept {
    switch (why) {
    case RejectReason::TooLong: ++too_long; break;
    case RejectReason::QueueFull: ++queue_full; break;
    case RejectReason::CloudRateLimited: ++cloud_rate_limited; break;
    case RejectReason::NoCloudEndpoint: ++no_cloud_endpoint; break;
    case RejectReason::ReplicaFailed: ++replica_failed; break;
    case RejectReason::None: break;
    }
}

RejectCounts& RejectCounts::operator+=(const RejectCounts& o) noexcept {
    too_long += o.too_long;
    queue_full += o.queue_full;
    cloud_rate_limited += o.cloud_rate_limited;
    no_cloud_endpoint += o.no_cloud_endpoint;
    replica_failed += o.replica_failed;
    return *this;
}

Seconds at_percentile(const LatencyStats& s, double p) {
    // The reported percentiles; in between, the nearest reported one at or above p.
    if (p <= 50)
        return s.p50;
    if (p <= 90)
        return s.p90;
    if (p <= 95)
        return s.p95;
    if (p <= 99)
        return s.p99;
    return s.max;
}

std::vector<model::RequestClass> effective_classes(const model::Workload& w) {
    if (!w.classes.empty()) {
        return w.classes;
    }
    model::RequestClass c;
    c.name = "default";
    c.input = model::LengthDistribution::fixed(w.input_tokens);
    c.output = model::LengthDistribution::fixed(w.output_tokens);
    return {c};
}

namespace {

void validate_workload(const model::Workload& w, const std::vector<model::RequestClass>& classes) {
    double share = 0;
    for (const auto& c : classes) {
        if (!(c.share >= 0) || !std::isfinite(c.share)) {
            throw InvalidArgument("workload.classes: class '" + c.name + "' has a negative share");
        }
        if (c.shared_prefix < 0 || c.prefix_groups < 1) {
            throw InvalidArgument("workload.classes: class '" + c.name +
                                  "': shared_prefix must be >= 0 and prefix_groups >= 1");
        }
        if (c.agent && c.agent->steps < 1) {
            throw InvalidArgument("workload.classes: class '" + c.name +
                                  "': agent steps must be >= 1");
        }
        share += c.share;
    }
    if (!(share > 0)) {
        throw InvalidArgument(
            "workload.classes: the shares sum to 0; give at least one class a share > 0");
    }
    if (w.arrival.kind == model::ArrivalKind::Trace && w.trace.empty()) {
        throw InvalidArgument("workload.arrival: trace replay needs trace records; "
                              "give workload.trace.file or --trace");
    }
    if (w.arrival.kind == model::ArrivalKind::ClosedLoop && w.arrival.users < 1) {
        throw InvalidArgument("workload.arrival: closed loop needs users >= 1");
    }
}

// A closed loop of several clients without think time whose requests all have one fixed length:
// the clients stay in step round after round.
bool synchronized_closed_loop(const model::Workload& w,
                              const std::vector<model::RequestClass>& classes) {
    if (w.arrival.kind != model::ArrivalKind::ClosedLoop || w.arrival.users < 2 ||
        w.arrival.think_time.si() > 0) {
        return false;
    }
    const auto fixed = [](const model::LengthDistribution& d) {
        return d.kind == model::LengthKind::Fixed ||
               (d.kind == model::LengthKind::Uniform && d.min == d.max);
    };
    const auto in_step = [&](const model::RequestClass& c) {
        return fixed(c.input) && fixed(c.output) && !c.agent;
    };
    return classes.size() == 1 && in_step(classes.front());
}

// The power observer's setup: the GPU's levels, the node, the per-GPU limit the scenario's
// budget implies and how nodes group into racks. nullopt when the accelerator has no board
// power and nothing limits it (power is then not modelled); with a limit, power_levels throws
// and names the key to set.
std::optional<detail::PowerSetup> power_setup(const model::Scenario& scenario,
                                              const SimOptions& options,
                                              const model::StepCostModel& cost, int replicas) {
    const model::Deployment& d = scenario.deployment;
    const model::PowerModel& pm = scenario.power_model;
    const model::PowerBudget& b = scenario.power;
    const bool limited = b.gpu_cap || b.node_cap || (b.rack_budget && scenario.rack.nodes_per_rack);
    if (!limited && !pm.board_power && !d.gpu.board_power) {
        return std::nullopt;
    }
    detail::PowerSetup ps;
    ps.levels = model::power_levels(d.gpu, pm);
    ps.model = pm;
    ps.node = options.node.value_or(model::unknown_node(d.gpus_per_node, pm));
    ps.limit = model::gpu_power_limit(b, ps.levels, ps.node, pm, scenario.rack.nodes_per_rack);
    ps.notes = ps.limit.notes;
    if (!ps.node.known && !pm.host_power) {
        ps.notes.emplace_back("no node given: host power (CPUs, switches, fans) not counted; set "
                              "hardware.node or power.host_power");
    }
    ps.peak = cost.peak_flops();
    ps.bandwidth = cost.bandwidth();
    ps.replica_gpus = cost.replica_gpus();
    ps.pue = b.pue.value_or(1.0);
    if (scenario.rack.nodes_per_rack) {
        ps.nodes_per_rack = *scenario.rack.nodes_per_rack;
    } else {
        // Pack racks as `gpuplan rack` does on its default basis: every GPU at its limit.
        const int gpus = replicas * cost.replica_gpus();
        const int nodes = (gpus + ps.node.gpus - 1) / ps.node.gpus;
        const Watts per_gpu =
            std::min(ps.levels.board, std::max(ps.limit.per_gpu, ps.levels.resident));
        const Watts node_peak = model::node_wall_power(per_gpu, ps.node.gpus, ps.node, pm);
        const model::RackPlan plan = model::plan_racks(
            node_peak, ps.node.rack_units, std::max(1, nodes), scenario.rack, b.rack_budget);
        ps.nodes_per_rack = std::max(1, plan.nodes_per_rack);
        if (!plan.feasible) {
            ps.notes.emplace_back("not even one node fits the rack's limits; the rack series "
                                  "counts one node per rack");
        }
    }
    return ps;
}

// Formats a number for messages: "1e+12", "604800", "0.5".
std::string num(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

// Seconds for messages: "1e+12 s", "604800 s".
std::string secs(double s) {
    return num(s) + " s";
}

// Refuses a time that would take the run past kMaxSimulatedSpanS before it starts; `what` names
// the key.
void check_span(double span_s, const std::string& what) {
    if (!(span_s <= kMaxSimulatedSpanS)) {
        throw InvalidArgument(what + ": " + secs(span_s) + " is beyond the simulator's limit of " +
                              secs(kMaxSimulatedSpanS) +
                              " (10 years) of simulated time; simulate a "
                              "shorter window (a representative day, or hours at the peak rate)");
    }
}

// The up-front checks on how long and how many: the run must end within kMaxSimulatedSpanS and
// send at most kMaxRequests requests, so a bad duration or rate is refused at once instead of
// running until killed or exhausting memory.
void check_run_size(const model::Workload& w, const std::optional<int>& requests,
                    const std::optional<Seconds>& duration) {
    if (duration) {
        check_span(duration->si(), "workload.duration");
    }
    if (requests && (*requests < 1 || *requests > kMaxRequests)) {
        throw InvalidArgument("workload.requests: " + std::to_string(*requests) +
                              " is out of range; give 1 to " + std::to_string(kMaxRequests));
    }

    if (w.arrival.kind == model::ArrivalKind::Trace) {
        const double speed = w.arrival.trace_speedup > 0 ? w.arrival.trace_speedup : 1.0;
        if (!w.trace.empty()) {
            check_span((w.trace.back().arrival.si() - w.trace.front().arrival.si()) / speed,
                       "workload.trace (span of the arrival times / trace_speedup)");
        }
        return;
    }
    if (w.arrival.kind == model::ArrivalKind::ClosedLoop) {
        return;
    }
    const double rate = w.arrival.requests_per_s.value_or(w.requests_per_s.value_or(1.0));
    if (!(rate > 0) || !std::isfinite(rate)) {
        throw InvalidArgument("workload.requests_per_s: " + num(rate) +
                              " is not a rate; give a number > 0");
    }
    if (requests && !duration) {
        check_span(*requests / rate, "workload.requests / workload.requests_per_s (the expected "
                                     "time to send " +
                                         std::to_string(*requests) + " requests)");
    }
    if (duration && !requests && w.arrival.curve.kind == model::RateCurveKind::Flat) {
        const double expected = duration->si() * rate;
        if (expected > static_cast<double>(kMaxRequests)) {
            throw InvalidArgument(
                "workload.duration x workload.requests_per_s: " + secs(duration->si()) + " at " +
                num(rate) + " requests/s is about " +
                std::to_string(static_cast<long long>(expected)) +
                " requests, above the limit of " + std::to_string(kMaxRequests) +
                "; shorten the duration or set workload.requests");
        }
    }
}

// The simulated time the workload asks for when the inputs give it (a duration, a request count
// at a rate, a trace); nullopt for a closed loop, whose time depends on the service.
std::optional<double> expected_span_s(const model::Workload& w, const std::optional<int>& requests,
                                      const std::optional<Seconds>& duration) {
    if (duration) {
        return duration->si();
    }
    if (w.arrival.kind == model::ArrivalKind::Trace) {
        const double speed = w.arrival.trace_speedup > 0 ? w.arrival.trace_speedup : 1.0;
        return w.trace.empty()
                   ? 0.0
                   : (w.trace.back().arrival.si() - w.trace.front().arrival.si()) / speed;
    }
    if (w.arrival.kind == model::ArrivalKind::ClosedLoop || !requests) {
        return std::nullopt;
    }
    return *requests / w.arrival.requests_per_s.value_or(w.requests_per_s.value_or(1.0));
}

// Refuses up front a period that would pass detail::kMaxClusterEvents in the expected span
// (`per_period` events each period); the cluster checks the count as it runs as well, for a
// closed loop whose span is not known before.
void check_event_count(const std::optional<double>& span_s, double period_s, double per_period,
                       const std::string& what) {
    if (!span_s || !(period_s > 0)) {
        return;
    }
    const double events = *span_s / period_s * per_period;
    if (events > static_cast<double>(detail::kMaxClusterEvents)) {
        throw InvalidArgument(what + ": " + secs(period_s) + " over the " + secs(*span_s) +
                              " the workload runs is about " + num(events) +
                              " events, above the simulator's limit of " +
                              std::to_string(detail::kMaxClusterEvents) +
                              "; give a longer period or simulate a shorter window");
    }
}

} // namespace

SimResult simulate(const model::Scenario& scenario, const SimOptions& options, std::stop_token stop,
                   const ProgressFn& progress) {
    // Engine limits that depend on the load (TensorRT-LLM: trtllm-bench's max batch size and max
    // num tokens) are filled here as in estimate and plan, whichever front end built the scenario.
    if (model::Deployment filled =
            model::with_load_engine_defaults(scenario.deployment, scenario.workload);
        !(filled == scenario.deployment)) {
        model::Scenario s = scenario;
        s.deployment = std::move(filled);
        return simulate(s, options, std::move(stop), progress);
    }
    SimResult result;
    result.seed = options.seed.value_or(scenario.seed);
    const model::Workload& w = scenario.workload;
    const auto classes = effective_classes(w);
    validate_workload(w, classes);

    const model::Deployment& d = scenario.deployment;
    const model::MemoryEstimate mem = model::estimate_memory(d);
    if (!mem.fits || mem.kv_blocks < 1) {
        result.ok = false;
        result.reasons = mem.reasons;
        if (result.reasons.empty()) {
            result.reasons.emplace_back(
                "the KV cache holds no block; use more GPUs, a smaller model or "
                "a higher gpu_memory_utilization");
        }
        return result;
    }
    // The load: the scenario's operating point, resolved as every analytic figure resolves it;
    // with no arrival rate the simulator runs the same closed loop.
    result.operating_point = model::resolve_operating_point(mem, w, d.par.dp);
    model::Workload run_w = w;
    if (result.operating_point.kind == model::LoadKind::ClosedLoop &&
        run_w.arrival.kind != model::ArrivalKind::ClosedLoop) {
        run_w.arrival.kind = model::ArrivalKind::ClosedLoop;
        run_w.arrival.users = result.operating_point.concurrency;
        run_w.arrival.think_time = Seconds(0);
    }
    if (synchronized_closed_loop(run_w, classes)) {
        result.notes.emplace_back(
            "a closed loop of identical requests stays in step: they finish together and their "
            "prompts queue behind one another each round, so TTFT is several prefills; lengths "
            "varying by ±10 % spread them (the analytic TTFT under load assumes spread arrivals; "
            "docs/operating-point.md)");
    }
    const model::EfficiencyProfile profile = options.profile.value_or(model::default_profile());
    const model::StepCostModel cost(d, profile);
    const model::EngineSettings& eng = mem.engine;

    detail::ClusterSetup setup;
    setup.config = scenario.cluster;
    setup.replicas = scenario.cluster.replicas.value_or(d.par.dp);
    if (setup.replicas < 1) {
        throw InvalidArgument("cluster.replicas must be >= 1");
    }
    {
        Seconds load = scenario.cluster.cold_start.startup;
        if (const auto& bw = scenario.cluster.cold_start.load_bandwidth) {
            // Every GPU of a replica reads its own weight shard in parallel.
            load = mem.weights / *bw + load;
        }
        check_span(load.si(), "cluster.cold_start (startup + weights / load_bandwidth)");
        setup.load_time = to_tick(load, "cluster.cold_start");
    }
    detail::ReplicaConfig& rc = setup.replica;
    rc.engine = eng.kind;
    rc.max_num_seqs = eng.max_num_seqs;
    rc.max_num_batched_tokens = eng.max_num_batched_tokens;
    rc.block_size = eng.block_size;
    rc.max_model_len = eng.max_model_len;
    rc.chunked_prefill = eng.chunked_prefill;
    rc.prefix_caching = eng.prefix_caching;
    // The prefix cache keeps about 50 bytes of bookkeeping per block, so the simulated pool is
    // capped at 2^22 blocks per replica (67M tokens at block size 16, 200 MiB): several times
    // the largest real pool (a 192 GB GPU holds about 6M tokens of a 1B model). Only absurd
    // memory sizes reach the cap, which otherwise exhausted memory (issue 12).
    rc.kv_blocks = std::min<std::int64_t>(mem.kv_blocks, std::int64_t{1} << 22);
    rc.scheduler = scenario.scheduler;
    rc.block_bytes = mem.kv_per_token.si() * eng.block_size;
    rc.swap_bandwidth = scenario.scheduler.swap_bandwidth.value_or(BytesPerSecond(25e9)).si();
    rc.classes = static_cast<int>(classes.size());
    rc.pipeline_micro_batches = options.pipeline_micro_batches;
    rc.decode_cohort = options.decode_cohort;
    if (rc.scheduler.static_batch_size < 1) {
        throw InvalidArgument("engine.static_batch_size must be >= 1");
    }
    std::vector<detail::ClassSlo> slos;
    for (const auto& c : classes) {
        setup.class_routes.push_back(c.route);
        detail::ClassSlo s;
        const auto pick = [](const std::optional<Seconds>& a, const std::optional<Seconds>& b) {
            const auto v = a ? a : b;
            return v ? std::optional<Tick>(to_tick(*v, "slo")) : std::nullopt;
        };
        s.ttft = pick(c.ttft, scenario.slo.ttft);
        s.tpot = pick(c.tpot, scenario.slo.tpot);
        s.e2e = pick(c.e2e, scenario.slo.e2e);
        slos.push_back(s);
        ClassResult cr;
        cr.name = c.name;
        cr.slo_percentile = scenario.slo.percentile;
        if (s.ttft) {
            cr.ttft_slo = to_seconds(*s.ttft);
        }
        if (s.tpot) {
            cr.tpot_slo = to_seconds(*s.tpot);
        }
        if (s.e2e) {
            cr.e2e_slo = to_seconds(*s.e2e);
        }
        result.classes.push_back(cr);
    }

    detail::SourceLimits limits;
    const auto requests = options.requests ? options.requests : w.requests;
    const auto duration = options.duration ? options.duration : w.duration;
    check_run_size(w, requests, duration);
    // Timers from the scenario must fire within the span limit too.
    if (const auto& t = scenario.cluster.admission.timeout) {
        check_span(t->si(), "cluster.admission.timeout");
    }
    check_span(scenario.cluster.admission.retry_backoff.si(), "cluster.admission.retry_backoff");
    for (const auto& e : scenario.cluster.scale) {
        check_span(e.at.si(), "cluster.scale.at");
    }
    if (const auto& a = scenario.cluster.autoscaler) {
        if (!scenario.cluster.scale.empty()) {
            throw InvalidArgument(
                "cluster.autoscaler: not modelled with cluster.scale (both set the replica count "
                "over time); leave cluster.scale out and bound the autoscaler with min_replicas "
                "and max_replicas, or leave the autoscaler out");
        }
        if (scenario.cluster.pools.empty()) {
            model::check_autoscaler(*a, setup.replicas);
        }
        check_span(a->interval.si(), "cluster.autoscaler.interval");
        check_event_count(expected_span_s(w, requests, duration), a->interval.si(), 1.0,
                          "cluster.autoscaler.interval");
        check_span(a->provisioning.si(), "cluster.autoscaler.provisioning");
        check_span(a->cooldown.si(), "cluster.autoscaler.cooldown");
    }
    if (const auto& f = scenario.cluster.failures) {
        if (!scenario.cluster.pools.empty() || !scenario.cluster.scale.empty()) {
            throw InvalidArgument(
                "cluster.failures: not modelled with cluster.pools (a spare would belong to one "
                "pool's hardware) or cluster.scale (the scripted count does not replace a failed "
                "replica); simulate each pool as its own scenario, or use cluster.autoscaler "
                "instead of cluster.scale");
        }
        model::check_replica_failures(*f);
        // The one resolution of the defaults (model::serving_availability): the Llama 3
        // per-GPU MTBF ÷ the GPUs of a replica, and the default repair time.
        model::AvailabilityConfig ac;
        ac.mtbf = f->mtbf;
        ac.mttr = f->mttr;
        const model::ServingAvailability sa =
            model::serving_availability(ac, setup.replicas, cost.replica_gpus());
        setup.fail_mtbf = sa.inputs.mtbf;
        setup.fail_mttr = sa.inputs.mttr;
        // A failure and its repair per MTBF, for every replica and spare.
        const double units = setup.replicas + f->spares;
        check_event_count(expected_span_s(w, requests, duration), sa.inputs.mtbf.si(), 2.0 * units,
                          "cluster.failures.mtbf");
        if (f->degraded_link) {
            check_event_count(expected_span_s(w, requests, duration), f->degraded_link->mtbf.si(),
                              2.0 * units, "cluster.failures.degraded_link.mtbf");
        }
    }
    check_span(scenario.scheduler.static_max_wait.si(), "engine.static_max_wait");
    check_span(w.arrival.think_time.si(), "workload.arrival.think_time");
    if (duration) {
        limits.end = to_tick(*duration, "workload.duration");
    }
    if (const auto& batch = result.operating_point.batch_requests) {
        // An offline batch sends exactly its requests; a smaller --requests runs its first ones.
        limits.max_arrivals = options.requests ? std::min(*options.requests, *batch) : *batch;
        if (limits.max_arrivals < *batch) {
            result.notes.push_back("the offline batch of " + std::to_string(*batch) +
                                   " requests is cut to its first " +
                                   std::to_string(limits.max_arrivals) + " by --requests");
        }
    } else if (requests) {
        limits.max_arrivals = *requests;
    } else if (w.arrival.kind == model::ArrivalKind::Trace) {
        limits.max_arrivals = static_cast<std::int64_t>(w.trace.size());
    } else if (duration) {
        limits.max_arrivals = std::numeric_limits<std::int64_t>::max();
    } else {
        limits.max_arrivals = 1000;
    }

    // A heterogeneous fleet: each pool's replicas on their own hardware, with the engine
    // settings and KV pool that hardware gives (docs/simulator.md, "Heterogeneous pools").
    std::deque<model::StepCostModel> pool_costs;
    // Disaggregation (docs/simulator.md, "Prefill/decode disaggregation") runs as two pools
    // whose replicas have a role: the prefill pool, then the decode pool.
    std::vector<model::ReplicaPool> pools = scenario.cluster.pools;
    std::vector<detail::ReplicaRole> roles(pools.size(), detail::ReplicaRole::Both);
    if (const auto& g = scenario.cluster.disaggregation) {
        if (!pools.empty() || scenario.cluster.replicas || !scenario.cluster.scale.empty() ||
            scenario.cluster.autoscaler || scenario.cluster.failures) {
            throw InvalidArgument("cluster.disaggregation: not modelled with cluster.pools, "
                                  "replicas, scale, autoscaler or failures; leave them out");
        }
        pools = {g->prefill, g->decode};
        roles = {detail::ReplicaRole::Prefill, detail::ReplicaRole::Decode};
        setup.disagg = detail::DisaggSetup{d, model::transfer_link(*g), g->link.name, g->transfer};
    }
    if (!pools.empty()) {
        setup.replicas = 0;
        for (std::size_t pi = 0; pi < pools.size(); ++pi) {
            const model::ReplicaPool& pool = pools[pi];
            const model::Deployment pd = model::pool_deployment(d, pool);
            const model::MemoryEstimate pm = model::estimate_memory(pd);
            if (!pm.fits || pm.kv_blocks < 1) {
                result.ok = false;
                for (const auto& why : pm.reasons) {
                    result.reasons.push_back("pool '" + pool.name + "': " + why);
                }
                if (pm.reasons.empty()) {
                    result.reasons.push_back("pool '" + pool.name +
                                             "': the KV cache holds no block; use more GPUs "
                                             "(tp) or another accelerator");
                }
                return result;
            }
            pool_costs.emplace_back(pd, profile);
            detail::PoolSetup ps;
            ps.replica = rc;
            ps.replica.engine = pm.engine.kind;
            ps.replica.max_num_seqs = pm.engine.max_num_seqs;
            ps.replica.max_num_batched_tokens = pm.engine.max_num_batched_tokens;
            ps.replica.max_model_len = pm.engine.max_model_len;
            ps.replica.kv_blocks = std::min<std::int64_t>(pm.kv_blocks, std::int64_t{1} << 22);
            ps.replica.block_bytes = pm.kv_per_token.si() * pm.engine.block_size;
            ps.cost = &pool_costs.back();
            ps.replica.role = roles[pi];
            ps.replicas = pool.replicas;
            if (!pool.classes.empty()) {
                ps.classes.assign(classes.size(), false);
                for (std::size_t c = 0; c < classes.size(); ++c) {
                    ps.classes[c] = std::find(pool.classes.begin(), pool.classes.end(),
                                              classes[c].name) != pool.classes.end();
                }
            }
            ps.max_prompt = pool.max_prompt_tokens;
            ps.min_replicas = pool.min_replicas.value_or(pool.replicas);
            ps.max_replicas = pool.max_replicas.value_or(pool.replicas);
            if (ps.min_replicas < 1 || ps.min_replicas > pool.replicas ||
                ps.max_replicas < pool.replicas) {
                throw InvalidArgument("cluster.pools: pool '" + pool.name +
                                      "' starts outside [min_replicas, max_replicas]; give 1 <= "
                                      "min_replicas <= replicas <= max_replicas");
            }
            {
                Seconds load = scenario.cluster.cold_start.startup;
                if (const auto& bw = scenario.cluster.cold_start.load_bandwidth) {
                    load = pm.weights / *bw + load;
                }
                check_span(load.si(), "cluster.cold_start (startup + weights / load_bandwidth)");
                ps.load_time = to_tick(load, "cluster.cold_start");
            }
            setup.replicas += pool.replicas;
            setup.pools.push_back(std::move(ps));
        }
    }

    // Power: observed per step; a limit below the board power slows the steps that would draw
    // more (model::PowerCappedStepCost keeps one step-cost model per clock level). Not with
    // pools yet: the observer knows one accelerator.
    const std::optional<detail::PowerSetup> power =
        pools.empty() ? power_setup(scenario, options, cost, setup.replicas) : std::nullopt;
    std::optional<model::SpeculativeModel> speculative;
    if (d.engine.speculative) {
        if (!pools.empty()) {
            // The proposer is sized for the scenario's own hardware, not each pool's.
            result.ok = false;
            result.reasons.push_back("speculative decoding is not modelled with cluster.pools; "
                                     "remove engine.speculative or the pools");
            return result;
        }
        speculative.emplace(d, *d.engine.speculative, profile);
        rc.speculative = &*speculative;
    }
    std::optional<model::KvTiers> kv_tiers; // engine.kv_offload (sim/kv_tiers.hpp)
    if (d.engine.kv_offload && eng.prefix_caching) {
        if (!pools.empty()) {
            result.ok = false;
            result.reasons.push_back("KV offload tiers are not modelled with cluster.pools or "
                                     "cluster.disaggregation; remove engine.kv_offload or the "
                                     "pools");
            return result;
        }
        kv_tiers = model::resolve_kv_offload(*d.engine.kv_offload, mem.kv_budget,
                                             d.engine.kv_offload->host_link);
        rc.kv_offload = &*kv_tiers;
    }
    // Multi-LoRA (engine.lora): adapter popularity, load times and the GPU/host caches.
    std::optional<detail::LoraSetup> lora;
    if (d.engine.lora) {
        if (scenario.cluster.disaggregation) {
            result.ok = false;
            result.reasons.push_back("multi-LoRA is not modelled with cluster.disaggregation; "
                                     "remove engine.lora or the disaggregation block");
            return result;
        }
        const model::LoraServingConfig& lc = *d.engine.lora;
        const model::LoraFigures f = model::lora_figures(d, 0.0);
        detail::LoraSetup& ls = lora.emplace();
        ls.adapters = lc.adapters;
        ls.max_loras = lc.max_loras;
        ls.max_cpu_loras = model::max_cpu_loras(lc);
        ls.gpu_load_s = f.load_time.si();
        ls.disk_load_s = f.disk_time.si();
        double acc = 0;
        for (const double p : model::lora_popularity(lc)) {
            acc += p;
            ls.cdf.push_back(acc);
        }
        rc.lora = &*lora;
        for (detail::PoolSetup& ps : setup.pools) {
            ps.replica.lora = &*lora;
        }
    }
    std::optional<model::PowerCappedStepCost> capped;
    if (power && power->limit.per_gpu < power->levels.board) {
        capped.emplace(d, profile, scenario.power_model, power->limit.per_gpu);
        rc.capped = &*capped;
    }
    // Degraded links: the replica's deployment with its GPU-to-GPU link slowed, one step-cost
    // model (and power-capped one) shared by every replica while its link is down.
    std::optional<model::StepCostModel> link_cost;
    std::optional<model::PowerCappedStepCost> link_capped;
    if (const auto& f = scenario.cluster.failures; f && f->degraded_link) {
        const model::Deployment slow = model::degraded_link(d, f->degraded_link->bandwidth_factor);
        link_cost.emplace(slow, profile);
        setup.link_cost = &*link_cost;
        if (capped) {
            link_capped.emplace(slow, profile, scenario.power_model, power->limit.per_gpu);
            setup.link_capped = &*link_capped;
        }
        setup.link_mtbf = f->degraded_link->mtbf;
        setup.link_mttr = f->degraded_link->mttr.value_or(setup.fail_mttr);
    }

    Simulation sim(result.seed);
    detail::Metrics metrics(slos, setup.replicas, options.keep_requests, options.keep_steps,
                            options.max_steps_kept);
    if (options.on_step) {
        metrics.on_step(options.on_step);
    }
    if (options.on_request) {
        metrics.on_request(options.on_request);
    }
    metrics.on_features(options.features);
    if (power) {
        metrics.enable_power(*power);
    } else if (!pools.empty()) {
        result.power.notes.emplace_back(
            scenario.cluster.disaggregation
                ? "power is not modelled with cluster.disaggregation (one accelerator per run "
                  "only)"
                : "power is not modelled with cluster.pools (one accelerator per run only)");
    } else {
        result.power.notes.emplace_back(
            "accelerator '" + d.gpu.name +
            "' has no board power: power not modelled; set power.board_power");
    }
    detail::RequestPool pool;
    detail::Cluster cluster(sim, cost, pool, metrics, setup, sim.rng().fork(10));
    detail::WorkloadSource source(sim, pool, cluster, run_w, classes, limits, sim.rng().fork(20));
    cluster.set_listener(&source);
    if (lora) {
        source.set_lora(&*lora);
    }
    cluster.start();
    source.start();

    TickProgress tick_progress;
    if (progress) {
        tick_progress = [&](Tick now) {
            double f = 0;
            if (limits.max_arrivals < std::numeric_limits<std::int64_t>::max()) {
                f = static_cast<double>(source.arrivals()) /
                    static_cast<double>(std::max<std::int64_t>(1, limits.max_arrivals));
            }
            if (limits.end != kNever) {
                f = std::max(f, static_cast<double>(now) / static_cast<double>(limits.end));
            }
            progress(std::clamp(f, 0.0, 1.0));
        };
    }
    // The run stops at the span limit; events still pending there mean the inputs imply a
    // longer run (slow steps, long timeouts) than the series can hold.
    const Tick span_limit = to_tick(Seconds(kMaxSimulatedSpanS), "the simulated span limit");
    const RunOutcome run = sim.run(span_limit, std::move(stop), tick_progress);
    if (!run.drained && !run.stopped && sim.pending() > 0 && sim.now() >= span_limit) {
        throw InvalidArgument("the run went past the simulator's limit of " +
                              secs(kMaxSimulatedSpanS) +
                              " (10 years) of simulated time with events still pending; check "
                              "for a very slow accelerator, link or swap bandwidth, or long "
                              "think times, or simulate a shorter window");
    }
    if (run.stopped) {
        result.stopped = true;
        cluster.cancel_all();
    }
    cluster.settle();
    metrics.finish(sim.now(), result);
    for (std::size_t i = 0; i < result.replicas.size(); ++i) {
        result.replicas[i].pool = cluster.pool_of(static_cast<int>(i));
    }
    result.autoscaler = cluster.scaling(sim.now());
    result.failures = cluster.failures(sim.now());
    result.disaggregation = cluster.disaggregation(sim.now());
    if (result.failures && !scenario.cluster.autoscaler) {
        // With the autoscaler a failed replica is replaced at once, not repaired: A(N, k) of
        // fixed N and repairs does not describe it (left 0).
        result.failures->expected_availability =
            model::fleet_availability(setup.replicas, result.failures->spares,
                                      model::unit_availability(setup.fail_mtbf, setup.fail_mttr));
    }
    // An owned pool's GPUs (its max_replicas when the autoscaler scales it, else its replicas,
    // × tp), paid for over the whole run; a rented pool pays for the GPU-hours it used.
    const double run_end_s = tick_s(sim.now());
    const auto owned_gpus = [&](const model::ReplicaPool& spec) {
        if (!spec.owned) {
            return 0;
        }
        const int n =
            scenario.cluster.autoscaler ? spec.max_replicas.value_or(spec.replicas) : spec.replicas;
        return n * spec.tp;
    };
    const auto billed_gpu_hours = [&](const model::ReplicaPool& spec, double used_gpu_hours) {
        return spec.owned ? owned_gpus(spec) * run_end_s / 3600.0 : used_gpu_hours;
    };
    if (result.autoscaler && !pools.empty()) {
        // Each pool at its own price: the cost is the pools' sum when every pool has a price.
        AutoscalerResult& as = *result.autoscaler;
        as.gpus_per_replica = 0; // differs by pool
        double sum = 0;
        std::string currency;
        bool priced = true;
        for (std::size_t p = 0; p < pools.size(); ++p) {
            if (const auto& price = pools[p].hardware.gpu_hour) {
                sum +=
                    billed_gpu_hours(pools[p], as.pool_replica_seconds[p] / 3600.0 * pools[p].tp) *
                    price->money.amount;
                priced = priced && (currency.empty() || currency == price->money.currency);
                currency = price->money.currency;
            } else {
                priced = false;
            }
        }
        if (priced) {
            as.cost = model::Money{sum, currency};
        }
    } else if (result.autoscaler) {
        AutoscalerResult& as = *result.autoscaler;
        as.gpus_per_replica = cost.replica_gpus();
        if (const auto quote = model::gpu_hour_price(scenario)) {
            as.cost = model::Money{as.replica_seconds / 3600.0 * as.gpus_per_replica *
                                       quote->price.money.amount,
                                   quote->price.money.currency};
        }
    }
    for (std::size_t p = 0; p < pools.size(); ++p) {
        const model::ReplicaPool& spec = pools[p];
        PoolResult pr;
        pr.name = spec.name;
        pr.accelerator = spec.hardware.gpu.name;
        pr.replicas = spec.replicas;
        pr.gpus = spec.replicas * spec.tp;
        std::int64_t queried = 0, hit = 0;
        int pool_records = 0;
        double busy_sum = 0;
        const double end = tick_s(sim.now());
        for (const auto& rep : result.replicas) {
            if (rep.pool != static_cast<int>(p)) {
                continue;
            }
            pr.requests += rep.requests;
            pr.busy_fraction += rep.busy_fraction / spec.replicas;
            ++pool_records;
            busy_sum += rep.busy_fraction;
            queried += rep.prefix_queried_tokens;
            hit += rep.prefix_hit_tokens;
            pr.gpu_hours += std::max(0.0, end - rep.available.si()) * spec.tp / 3600.0;
        }
        if (result.autoscaler) {
            // Scaled: the replica-seconds it paid for (provisioning and cold starts included,
            // drained replicas until they left).
            pr.replica_seconds = result.autoscaler->pool_replica_seconds[p];
            pr.gpu_hours = pr.replica_seconds * spec.tp / 3600.0;
            pr.peak_replicas = cluster.peak_replicas(static_cast<int>(p));
            pr.busy_fraction = pool_records > 0 ? busy_sum / pool_records : 0.0;
        }
        pr.prefix_hit_rate =
            queried > 0 ? static_cast<double>(hit) / static_cast<double>(queried) : 0.0;
        pr.owned = spec.owned;
        pr.owned_gpus = owned_gpus(spec);
        if (const auto& price = spec.hardware.gpu_hour) {
            pr.cost = model::Money{billed_gpu_hours(spec, pr.gpu_hours) * price->money.amount,
                                   price->money.currency};
            pr.cost_per_hour =
                model::Money{(spec.owned ? pr.owned_gpus : pr.gpus) * price->money.amount,
                             price->money.currency};
        }
        result.pools.push_back(std::move(pr));
    }
    if (speculative) {
        SpeculativeResult& sr = result.speculative.emplace();
        sr.method = model::to_string(speculative->method());
        sr.k = speculative->k();
        sr.expected_tokens_per_step = speculative->tokens_per_step();
        metrics.speculative_counts(sr);
        if (sr.drafted > 0) {
            sr.acceptance_rate = static_cast<double>(sr.accepted) / static_cast<double>(sr.drafted);
        }
        if (sr.verifies > 0) {
            sr.tokens_per_step =
                static_cast<double>(sr.accepted + sr.verifies) / static_cast<double>(sr.verifies);
        }
    }
    if (kv_tiers) {
        result.kv_offload = metrics.kv_offload();
    }
    if (lora) {
        const detail::LoraCounts k = cluster.lora_counts();
        LoraResult& lr = result.lora.emplace();
        lr.adapters = lora->adapters;
        lr.max_loras = lora->max_loras;
        lr.max_cpu_loras = lora->max_cpu_loras;
        lr.requests = k.requests;
        lr.hits = k.hits;
        lr.hit_rate =
            k.requests > 0 ? static_cast<double>(k.hits) / static_cast<double>(k.requests) : 0.0;
        lr.expected_hit_rate =
            model::lru_hit_rate(model::lora_popularity(*d.engine.lora), d.engine.lora->max_loras);
        lr.loads = k.loads;
        lr.disk_loads = k.disk_loads;
        lr.load_time = Seconds(k.load_s);
        lr.load_time_each = Seconds(lora->gpu_load_s);
        lr.disk_time_each = Seconds(lora->disk_load_s);
        lr.adapters_per_step =
            k.steps > 0 ? k.adapters_per_step / static_cast<double>(k.steps) : 0.0;
    }
    if (result.operating_point.kind == model::LoadKind::OfferedRate) {
        // What the analytic model settles by Little's law, the run measures.
        result.operating_point.concurrency =
            std::max(1, static_cast<int>(std::lround(result.mean_in_system)));
        result.operating_point.why += ": " + std::to_string(result.operating_point.concurrency) +
                                      " in flight on average in this run";
    }
    result.events = sim.events_handled();
    // A class meets its SLO when its percentile of every SLO metric is within the target.
    const double p = scenario.slo.percentile;
    const auto at_p = [p](const LatencyStats& s) { return at_percentile(s, p); };
    for (auto& c : result.classes) {
        const auto& s = c.summary;
        bool met = s.completed > 0;
        if (c.ttft_slo) {
            met = met && at_p(s.ttft) <= *c.ttft_slo;
        }
        if (c.tpot_slo && s.tpot.count > 0) {
            met = met && at_p(s.tpot) <= *c.tpot_slo;
        }
        if (c.e2e_slo) {
            met = met && at_p(s.e2e) <= *c.e2e_slo;
        }
        c.slo_met = met;
    }
    if (progress) {
        progress(1.0);
    }
    return result;
}

} // namespace gpuplan::sim
