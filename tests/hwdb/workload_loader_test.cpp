// The simulator's scenario keys (workload arrivals, classes and traces, the engine's scheduler
// keys, the cluster block), --set overrides, and the trace CSV parser.
#include "hwdb/scenario_loader.hpp"
#include "hwdb/trace_loader.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

using namespace gpuplan;

namespace {

const hwdb::Database& db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

constexpr const char* kBase = R"(schema: 1
model: llama-3.1-8b
hardware:
  accelerator: h100-sxm
)";

model::Scenario parse(const std::string& extra, const std::vector<hwdb::ScenarioOverride>& o = {}) {
    return hwdb::parse_scenario(std::string(kBase) + extra,
                                std::string(GPUPLAN_SOURCE_DIR) + "/examples/s.yaml", db(), o);
}

std::string error_of(const std::string& extra) {
    try {
        (void)parse(extra);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST(WorkloadLoader, ReadsArrivalsClassesSchedulerAndCluster) {
    const model::Scenario s = parse(R"(engine:
  scheduling_policy: priority
  preemption_mode: swap
  swap_space: 8 GiB
  batching: static
  static_batch_size: 4
  static_max_wait: 20 ms
  watermark: 0.01
workload:
  requests_per_s: 3
  requests: 500
  duration: 2 min
  arrival:
    process: gamma
    cv: 2
    rate_curve:
      kind: step
      steps: [{at: 10 s, requests_per_s: 9}]
  classes:
    - name: chat
      share: 2
      shared_prefix: 100
      input: {dist: lognormal, mean: 700, stddev: 300, max: 4000}
      output: 128
      slo: {ttft: 500 ms, tpot: 40 ms}
    - name: agent
      prefix_groups: 4
      priority: -1
      route: local
      input: {dist: empirical, values: [100, 200], weights: [1, 3]}
      agent: {steps: 5, step_input: {dist: uniform, min: 10, max: 20}, think_time: 1 s}
cluster:
  replicas: 3
  router: prefix_affinity
  admission: {max_queue: 10, max_concurrency: 64, timeout: 3 s, max_retries: 2, retry_backoff: 500 ms}
  cold_start: {load_bandwidth: 2 GB/s, startup: 20 s, at_start: true}
  scale: [{at: 60 s, replicas: 5}]
  cloud: {ttft_median: 700 ms, output_tokens_per_s: 60, rate_limit_rps: 2, input_price: $3/Mtok, output_price: $15/Mtok}
  cloud_fallback: false
)");
    EXPECT_EQ(s.scheduler.policy, model::SchedulingPolicy::Priority);
    EXPECT_EQ(s.scheduler.preemption_mode, model::PreemptionMode::Swap);
    EXPECT_DOUBLE_EQ(s.scheduler.swap_space.si(), 8.0 * kGiB);
    EXPECT_TRUE(s.scheduler.swap_bandwidth.has_value()); // from the H100's host link
    EXPECT_EQ(s.scheduler.batching, model::BatchingMode::Static);
    EXPECT_EQ(s.scheduler.static_batch_size, 4);
    EXPECT_DOUBLE_EQ(s.scheduler.static_max_wait.si(), 0.02);
    const auto& w = s.workload;
    EXPECT_EQ(w.requests, 500);
    EXPECT_DOUBLE_EQ(w.duration->si(), 120.0);
    EXPECT_EQ(w.arrival.kind, model::ArrivalKind::Gamma);
    EXPECT_DOUBLE_EQ(w.arrival.cv, 2.0);
    ASSERT_EQ(w.arrival.curve.steps.size(), 1u);
    EXPECT_DOUBLE_EQ(w.arrival.curve.steps[0].requests_per_s, 9.0);
    ASSERT_EQ(w.classes.size(), 2u);
    EXPECT_EQ(w.classes[0].input.kind, model::LengthKind::LogNormal);
    EXPECT_EQ(w.classes[0].output, model::LengthDistribution::fixed(128));
    EXPECT_DOUBLE_EQ(w.classes[0].ttft->si(), 0.5);
    EXPECT_EQ(w.classes[1].input.values, (std::vector<int>{100, 200}));
    EXPECT_EQ(w.classes[1].route, model::RouteTarget::Local);
    ASSERT_TRUE(w.classes[1].agent.has_value());
    EXPECT_EQ(w.classes[1].agent->steps, 5);
    EXPECT_EQ(w.classes[1].agent->step_input.kind, model::LengthKind::Uniform);
    const auto& c = s.cluster;
    EXPECT_EQ(c.replicas, 3);
    EXPECT_EQ(c.router, model::RouterPolicy::PrefixAffinity);
    EXPECT_EQ(c.admission.max_retries, 2);
    EXPECT_DOUBLE_EQ(c.cold_start.load_bandwidth->si(), 2e9);
    ASSERT_EQ(c.scale.size(), 1u);
    ASSERT_TRUE(c.cloud.has_value());
    EXPECT_DOUBLE_EQ(c.cloud->output_price->money.amount, 15.0);
    EXPECT_FALSE(c.cloud_fallback);
}

TEST(WorkloadLoader, ReadsThePrefixAwareRoutersAndTheirKnobs) {
    const model::Scenario s = parse(R"(cluster:
  router: weighted
  prefix_routing: {weight: 0.25, balance_abs_threshold: 8, balance_rel_threshold: 1.2}
)");
    EXPECT_EQ(s.cluster.router, model::RouterPolicy::Weighted);
    EXPECT_DOUBLE_EQ(s.cluster.prefix_routing.weight, 0.25);
    EXPECT_EQ(s.cluster.prefix_routing.balance_abs_threshold, 8);
    EXPECT_DOUBLE_EQ(s.cluster.prefix_routing.balance_rel_threshold, 1.2);
    const model::Scenario d = parse("cluster:\n  router: longest_prefix\n");
    EXPECT_EQ(d.cluster.router, model::RouterPolicy::LongestPrefix);
    // The documented defaults: SGLang's router thresholds, llm-d's scorer weights 3 : 2.
    EXPECT_DOUBLE_EQ(d.cluster.prefix_routing.weight, 0.6);
    EXPECT_EQ(d.cluster.prefix_routing.balance_abs_threshold, 64);
    EXPECT_DOUBLE_EQ(d.cluster.prefix_routing.balance_rel_threshold, 1.5);
}

TEST(WorkloadLoader, BadPrefixRoutingNamesTheFileLineAndKey) {
    // Line 5 is the first line after kBase's four.
    const std::string weight = error_of("cluster:\n  prefix_routing: {weight: 1.5}\n");
    EXPECT_NE(weight.find("s.yaml:6:"), std::string::npos) << weight;
    EXPECT_NE(weight.find("cluster.prefix_routing.weight"), std::string::npos) << weight;
    const std::string typo = error_of("cluster:\n  prefix_routing:\n    wieght: 0.5\n");
    EXPECT_NE(typo.find("s.yaml:7:"), std::string::npos) << typo;
    EXPECT_NE(typo.find("weight"), std::string::npos) << typo;
    const std::string rel = error_of("cluster:\n  prefix_routing: {balance_rel_threshold: 0.5}\n");
    EXPECT_NE(rel.find("balance_rel_threshold"), std::string::npos) << rel;
    const std::string router = error_of("cluster:\n  router: longest_prefx\n");
    EXPECT_NE(router.find("s.yaml:6:"), std::string::npos) << router;
    EXPECT_NE(router.find("longest_prefix"), std::string::npos) << router;
}

TEST(WorkloadLoader, ReadsPoolsOfOtherAccelerators) {
    const model::Scenario s = parse(R"(workload:
  classes:
    - name: chat
    - name: rag
cluster:
  pools:
    - {name: long, accelerator: h100-sxm, replicas: 2, gpu_hour: $2.99/h}
    - {name: short, accelerator: l4, replicas: 4, tp: 1, classes: [chat], max_prompt_tokens: 1500}
)");
    ASSERT_EQ(s.cluster.pools.size(), 2u);
    const auto& short_pool = s.cluster.pools[1];
    EXPECT_EQ(short_pool.name, "short");
    EXPECT_EQ(short_pool.hardware.accelerator_ref, "l4");
    EXPECT_EQ(short_pool.replicas, 4);
    EXPECT_EQ(short_pool.classes, std::vector<std::string>{"chat"});
    EXPECT_EQ(short_pool.max_prompt_tokens, 1500);
    EXPECT_DOUBLE_EQ(s.cluster.pools[0].hardware.gpu_hour->money.amount, 2.99);
}

TEST(WorkloadLoader, ReadsDisaggregation) {
    const model::Scenario s = parse(R"(cluster:
  disaggregation:
    prefill: {accelerator: h100-sxm, tp: 2, replicas: 3, gpu_hour: $2.99/h}
    decode: {accelerator: h200-sxm, tp: 1, replicas: 2}
    link: ib-ndr
    transfer: whole
)");
    ASSERT_TRUE(s.cluster.disaggregation);
    const model::Disaggregation& g = *s.cluster.disaggregation;
    EXPECT_EQ(g.prefill.name, "prefill");
    EXPECT_EQ(g.prefill.tp, 2);
    EXPECT_EQ(g.prefill.replicas, 3);
    EXPECT_DOUBLE_EQ(g.prefill.hardware.gpu_hour->money.amount, 2.99);
    EXPECT_EQ(g.decode.hardware.accelerator_ref, "h200-sxm");
    EXPECT_EQ(g.decode.replicas, 2);
    EXPECT_EQ(g.link.name, "ib-ndr");
    EXPECT_DOUBLE_EQ(g.link.bandwidth_per_direction.si(),
                     db().interconnect("ib-ndr").bandwidth_per_direction.si());
    EXPECT_EQ(g.transfer, model::KvTransferMode::Whole);
    // A bandwidth instead of a named link; layerwise by default.
    const model::Scenario t = parse(R"(cluster:
  disaggregation:
    prefill: {accelerator: h100-sxm, replicas: 1}
    decode: {accelerator: h100-sxm, replicas: 1}
    link_bandwidth: 25 GB/s
    link_latency: 10 us
)");
    EXPECT_DOUBLE_EQ(t.cluster.disaggregation->link.bandwidth_per_direction.si(), 25e9);
    EXPECT_DOUBLE_EQ(t.cluster.disaggregation->link.latency.si(), 10e-6);
    EXPECT_EQ(t.cluster.disaggregation->transfer, model::KvTransferMode::Layerwise);
    // A null key of the other spelling is absent (--set ...=null, an emptied field in the app),
    // not an unknown key.
    const model::Scenario n = parse(R"(cluster:
  disaggregation:
    prefill: {accelerator: h100-sxm, replicas: 1}
    decode: {accelerator: h100-sxm, replicas: 1}
    link: ib-ndr
    link_bandwidth: ~
    link_latency: ~
)");
    EXPECT_EQ(n.cluster.disaggregation->link.name, "ib-ndr");
    const model::Scenario b = parse(R"(cluster:
  disaggregation:
    prefill: {accelerator: h100-sxm, replicas: 1}
    decode: {accelerator: h100-sxm, replicas: 1}
    link: ~
    link_bandwidth: 25 GB/s
)");
    EXPECT_DOUBLE_EQ(b.cluster.disaggregation->link.bandwidth_per_direction.si(), 25e9);
}

TEST(WorkloadLoader, BadDisaggregationNamesTheKey) {
    const std::string head = "cluster:\n  disaggregation:\n    prefill: {accelerator: h100-sxm, "
                             "replicas: 1}\n    decode: {accelerator: h100-sxm, replicas: 1}\n";
    const std::string no_link = error_of(head);
    EXPECT_NE(no_link.find("link_bandwidth"), std::string::npos) << no_link;
    const std::string bad_link = error_of(head + "    link: ib-xyz\n");
    EXPECT_NE(bad_link.find("s.yaml:9:"), std::string::npos) << bad_link;
    EXPECT_NE(bad_link.find("ib-xyz"), std::string::npos) << bad_link;
    const std::string mode = error_of(head + "    link: ib-ndr\n    transfer: streamed\n");
    EXPECT_NE(mode.find("layerwise"), std::string::npos) << mode;
    const std::string both = error_of(head + "    link: ib-ndr\n  replicas: 2\n");
    EXPECT_NE(both.find("leave cluster.pools, replicas"), std::string::npos) << both;
}

TEST(WorkloadLoader, BadPoolsNameTheFileLineAndKey) {
    const std::string pools = "cluster:\n  pools:\n    - {name: a, accelerator: h100-sxm, ";
    const std::string cls = error_of(pools + "replicas: 1, classes: [chta]}\n");
    EXPECT_NE(cls.find("s.yaml:7:"), std::string::npos) << cls;
    EXPECT_NE(cls.find("no request class is named 'chta'"), std::string::npos) << cls;
    const std::string price = error_of(pools + "replicas: 1, gpu_hour: $3}\n");
    EXPECT_NE(price.find("gpu_hour"), std::string::npos) << price;
    const std::string gpu = error_of("cluster:\n  pools:\n    - {name: a, accelerator: h900, "
                                     "replicas: 1}\n");
    EXPECT_NE(gpu.find("s.yaml:7:"), std::string::npos) << gpu;
    EXPECT_NE(gpu.find("h900"), std::string::npos) << gpu;
    EXPECT_NE(error_of(pools + "replicas: 1}\n  replicas: 2\n").find("leave cluster.replicas out"),
              std::string::npos);
    EXPECT_NE(error_of(pools + "replicas: 1}\n    - {name: a, accelerator: l4, replicas: 1}\n")
                  .find("two pools are named 'a'"),
              std::string::npos);
    EXPECT_NE(error_of("workload:\n  classes:\n    - name: chat\n    - name: rag\n"
                       "cluster:\n  pools:\n    - {name: a, accelerator: l4, replicas: 1, "
                       "classes: [chat]}\n")
                  .find("no pool serves class 'rag'"),
              std::string::npos);
    // tp 3 does not divide Llama-3.1-8B's 32 heads.
    EXPECT_NE(error_of(pools + "replicas: 1, tp: 3}\n").find("s.yaml:7:"), std::string::npos);
}

TEST(WorkloadLoader, ReadsTheAutoscaler) {
    const model::Scenario s = parse(R"(cluster:
  replicas: 2
  autoscaler:
    metric: queue_length
    target: 4
    interval: 10 s
    provisioning: 1 min
    cooldown: 90 s
    tolerance: 0.2
    min_replicas: 2
    max_replicas: 5
)");
    ASSERT_TRUE(s.cluster.autoscaler);
    const model::Autoscaler& a = *s.cluster.autoscaler;
    EXPECT_EQ(a.metric, model::ScaleMetric::QueueLength);
    EXPECT_DOUBLE_EQ(a.target, 4.0);
    EXPECT_DOUBLE_EQ(a.interval.si(), 10.0);
    EXPECT_DOUBLE_EQ(a.provisioning.si(), 60.0);
    EXPECT_DOUBLE_EQ(a.cooldown.si(), 90.0);
    EXPECT_DOUBLE_EQ(a.tolerance, 0.2);
    EXPECT_EQ(a.min_replicas, 2);
    EXPECT_EQ(a.max_replicas, 5);
    // The defaults: HPA's 15 s sync period, 300 s stabilisation window and 0.1 tolerance.
    const model::Scenario d = parse("cluster:\n  autoscaler: {max_replicas: 3}\n");
    EXPECT_EQ(d.cluster.autoscaler->metric, model::ScaleMetric::Utilisation);
    EXPECT_DOUBLE_EQ(d.cluster.autoscaler->interval.si(), 15.0);
    EXPECT_DOUBLE_EQ(d.cluster.autoscaler->cooldown.si(), 300.0);
    EXPECT_DOUBLE_EQ(d.cluster.autoscaler->tolerance, 0.1);
    EXPECT_EQ(d.cluster.autoscaler->min_replicas, 1);
}

TEST(WorkloadLoader, BadAutoscalerNamesTheFileLineAndKey) {
    const std::string range =
        error_of("cluster:\n  replicas: 4\n  autoscaler:\n    max_replicas: 3\n");
    EXPECT_NE(range.find("s.yaml:8:"), std::string::npos) << range;
    EXPECT_NE(range.find("outside [min_replicas, max_replicas] = [1, 3]"), std::string::npos)
        << range;
    const std::string target = error_of("cluster:\n  autoscaler: {target: 1.5, max_replicas: 3}\n");
    EXPECT_NE(target.find("target"), std::string::npos) << target;
    EXPECT_NE(target.find("(0, 1]"), std::string::npos) << target;
    EXPECT_NE(error_of("cluster:\n  autoscaler: {min_replicas: 2}\n").find("max_replicas"),
              std::string::npos);
    EXPECT_NE(
        error_of("cluster:\n  autoscaler: {metric: gpu, max_replicas: 3}\n").find("utilisation"),
        std::string::npos);
    // Still refused: with cluster.scale, saying why and what to do.
    const std::string scale =
        error_of("cluster:\n  scale: [{at: 10 s, replicas: 2}]\n  autoscaler: "
                 "{max_replicas: 3}\n");
    EXPECT_NE(scale.find("both set the replica count over time"), std::string::npos) << scale;
    EXPECT_NE(scale.find("leave cluster.scale out"), std::string::npos) << scale;
}

// Pools with the autoscaler: each pool's bounds in the pool entry (default: its replicas);
// bounds on the autoscaler itself are refused at their key, with where they go.
TEST(WorkloadLoader, PoolsTakeTheirOwnAutoscalerBounds) {
    const std::string pools =
        "cluster:\n  pools:\n"
        "    - {name: a, accelerator: h100-sxm, replicas: 2, min_replicas: 1, "
        "max_replicas: 6}\n"
        "    - {name: b, accelerator: h100-sxm, replicas: 1}\n";
    const model::Scenario s = parse(pools + "  autoscaler: {target: 0.5}\n");
    ASSERT_TRUE(s.cluster.autoscaler);
    ASSERT_EQ(s.cluster.pools.size(), 2u);
    EXPECT_EQ(s.cluster.pools[0].min_replicas, 1);
    EXPECT_EQ(s.cluster.pools[0].max_replicas, 6);
    EXPECT_FALSE(s.cluster.pools[1].min_replicas); // fixed at its replicas
    const std::string bounds = error_of(pools + "  autoscaler: {max_replicas: 4}\n");
    EXPECT_NE(bounds.find("autoscaler.max_replicas"), std::string::npos) << bounds;
    EXPECT_NE(bounds.find("give min_replicas and max_replicas in the pools"), std::string::npos)
        << bounds;
    const std::string below =
        error_of("cluster:\n  pools:\n    - {name: a, accelerator: h100-sxm, replicas: 3, "
                 "max_replicas: 2}\n");
    EXPECT_NE(below.find("max_replicas 2 is below the pool's replicas 3"), std::string::npos)
        << below;
}

TEST(WorkloadLoader, ReadsReplicaFailures) {
    const model::Scenario s = parse("cluster:\n  failures: {mtbf: 2000 h, mttr: 4 h, spares: 2, "
                                    "in_flight: lose}\n");
    ASSERT_TRUE(s.cluster.failures);
    EXPECT_DOUBLE_EQ(s.cluster.failures->mtbf->si(), 2000 * 3600.0);
    EXPECT_DOUBLE_EQ(s.cluster.failures->mttr->si(), 4 * 3600.0);
    EXPECT_EQ(s.cluster.failures->spares, 2);
    EXPECT_EQ(s.cluster.failures->in_flight, model::FailedRequests::Lose);
    const model::Scenario d = parse("cluster:\n  failures: {}\n");
    EXPECT_FALSE(d.cluster.failures->mtbf); // the Llama 3 default, resolved by the simulator
    EXPECT_EQ(d.cluster.failures->in_flight, model::FailedRequests::Retry);
    EXPECT_NE(error_of("cluster:\n  failures: {mtbf: 0 h}\n").find("mtbf"), std::string::npos);
    EXPECT_NE(error_of("cluster:\n  failures: {spares: -1}\n").find("spares"), std::string::npos);
    // With the autoscaler: accepted (a failed replica is replaced). With pools: refused, why
    // and how.
    const model::Scenario both =
        parse("cluster:\n  autoscaler: {max_replicas: 2}\n  failures: {}\n");
    EXPECT_TRUE(both.cluster.autoscaler && both.cluster.failures);
    const std::string pools =
        error_of("cluster:\n  pools:\n    - {name: a, accelerator: h100-sxm, replicas: 1}\n"
                 "  failures: {}\n");
    EXPECT_NE(pools.find("a spare would belong to one pool's hardware"), std::string::npos)
        << pools;
    EXPECT_NE(pools.find("simulate each pool as its own scenario"), std::string::npos) << pools;
    // A degraded link: read with its units and default factor; a bad factor at its block.
    const model::Scenario link = parse("cluster:\n  failures:\n    degraded_link: {mtbf: 500 h}\n");
    ASSERT_TRUE(link.cluster.failures->degraded_link);
    EXPECT_DOUBLE_EQ(link.cluster.failures->degraded_link->mtbf.si(), 500 * 3600.0);
    EXPECT_DOUBLE_EQ(link.cluster.failures->degraded_link->bandwidth_factor, 17.0 / 18.0);
    EXPECT_FALSE(link.cluster.failures->degraded_link->mttr);
    const std::string factor = error_of(
        "cluster:\n  failures:\n    degraded_link: {mtbf: 500 h, bandwidth_factor: 1.5}\n");
    EXPECT_NE(factor.find("bandwidth_factor"), std::string::npos) << factor;
}

TEST(WorkloadLoader, UnknownKeysAndBadValuesAreErrors) {
    EXPECT_NE(error_of("workload:\n  arival: {process: poisson}\n").find("arival"),
              std::string::npos);
    EXPECT_NE(error_of("workload:\n  arrival: {process: poison}\n").find("poisson"),
              std::string::npos);
    EXPECT_NE(
        error_of("workload:\n  classes:\n    - name: a\n      input: {dist: uniform, min: 5}\n")
            .find("needs min and max"),
        std::string::npos);
    EXPECT_NE(error_of("cluster:\n  router: random\n").find("round_robin"), std::string::npos);
    EXPECT_NE(error_of("cluster:\n  cloud: {input_price: $3/h}\n").find("Mtok"), std::string::npos);
    EXPECT_NE(error_of("engine:\n  scheduling_policy: lifo\n").find("fcfs"), std::string::npos);
    EXPECT_NE(error_of("workload:\n  trace: {file: no-such.csv}\n").find("cannot open"),
              std::string::npos);
}

TEST(WorkloadLoader, EngineSchedulerKnobsOfTensorRtLlm) {
    EXPECT_EQ(parse("engine:\n  kind: tensorrt-llm\n").scheduler.capacity_scheduler,
              model::CapacityScheduler::GuaranteedNoEvict); // TensorRT-LLM's default
    EXPECT_EQ(parse("engine:\n  kind: tensorrt-llm\n  capacity_scheduler: max_utilization\n")
                  .scheduler.capacity_scheduler,
              model::CapacityScheduler::MaxUtilization);
    EXPECT_NE(error_of("engine:\n  kind: tensorrt-llm\n  capacity_scheduler: static_batch\n")
                  .find("guaranteed_no_evict"),
              std::string::npos);
    // Another engine's knob on vLLM is a mistake, not a silent no-op.
    const std::string e = error_of("engine:\n  capacity_scheduler: max_utilization\n");
    EXPECT_NE(e.find("capacity_scheduler"), std::string::npos) << e;
    EXPECT_NE(e.find("tensorrt-llm"), std::string::npos) << e;
    // TensorRT-LLM pauses by recomputing; vLLM v0's swap is not its.
    EXPECT_NE(error_of("engine:\n  kind: tensorrt-llm\n  preemption_mode: swap\n")
                  .find("preemption_mode swap is vLLM's"),
              std::string::npos);
}

TEST(WorkloadLoader, EngineSchedulerKnobsOfSglang) {
    const model::Scenario d = parse("engine:\n  kind: sglang\n");
    EXPECT_EQ(d.scheduler.schedule_policy, model::SglangSchedulePolicy::Fcfs); // SGLang's default
    EXPECT_DOUBLE_EQ(d.scheduler.schedule_conservativeness, 1.0);
    const model::Scenario s = parse(
        "engine:\n  kind: sglang\n  schedule_policy: lpm\n  schedule_conservativeness: 0.3\n");
    EXPECT_EQ(s.scheduler.schedule_policy, model::SglangSchedulePolicy::Lpm);
    EXPECT_DOUBLE_EQ(s.scheduler.schedule_conservativeness, 0.3);
    EXPECT_NE(error_of("engine:\n  kind: sglang\n  schedule_policy: dfs-weight\n").find("lpm"),
              std::string::npos);
    EXPECT_NE(error_of("engine:\n  kind: sglang\n  schedule_conservativeness: -1\n")
                  .find("schedule_conservativeness"),
              std::string::npos);
    const std::string e = error_of("engine:\n  kind: tensorrt-llm\n  schedule_policy: lpm\n");
    EXPECT_NE(e.find("schedule_policy is SGLang's"), std::string::npos) << e;
    EXPECT_NE(error_of("engine:\n  kind: sglang\n  preemption_mode: swap\n")
                  .find("preemption_mode swap is vLLM's"),
              std::string::npos);
}

TEST(WorkloadLoader, TraceFileIsRelativeToTheScenarioAndSwitchesToReplay) {
    const model::Scenario s =
        parse("workload:\n  trace: {file: traces/chat-burst.csv, format: plain}\n");
    EXPECT_EQ(s.workload.arrival.kind, model::ArrivalKind::Trace);
    EXPECT_EQ(s.workload.trace.size(), 581u);
    EXPECT_DOUBLE_EQ(s.workload.trace.front().arrival.si(), 0.0);
}

TEST(WorkloadLoader, OverridesApplyBeforeReading) {
    const model::Scenario s =
        parse("workload:\n  requests_per_s: 2\n", {{"workload.requests_per_s", "8"},
                                                   {"engine.max_num_seqs", "64"},
                                                   {"cluster.admission.max_queue", "5"}});
    EXPECT_DOUBLE_EQ(*s.workload.requests_per_s, 8.0);
    EXPECT_EQ(s.deployment.engine.max_num_seqs, 64);
    EXPECT_EQ(s.cluster.admission.max_queue, 5);
    EXPECT_THROW((void)parse("", {{"engine.max_num_sqs", "64"}}), ConfigError);
}

TEST(TraceLoader, ReadsTheThreeLayouts) {
    const auto plain =
        hwdb::parse_trace("arrival_s,input_tokens,output_tokens\n1.5,100,20\n2.0,50,5\n", "p.csv");
    ASSERT_EQ(plain.size(), 2u);
    EXPECT_DOUBLE_EQ(plain[1].arrival.si(), 0.5);
    EXPECT_EQ(plain[1].input_tokens, 50);
    const auto vidur = hwdb::parse_trace(
        "arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,4808,10\n0.052,3180,8\n", "v.csv",
        hwdb::TraceFormat::Vidur);
    EXPECT_EQ(vidur[0].input_tokens, 4808);
    EXPECT_DOUBLE_EQ(vidur[1].arrival.si(), 0.052);
    const auto azure = hwdb::parse_trace(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,4808,10\n"
        "2023-11-16 18:15:47.1805900,3180,8\n2023-11-17 00:00:00.0000000,1,1\n",
        "a.csv");
    EXPECT_NEAR(azure[1].arrival.si(), 0.5, 1e-6);
    EXPECT_NEAR(azure[2].arrival.si(), 5 * 3600 + 44 * 60 + 13.31941, 1e-5);
    const auto example = hwdb::load_trace(std::string(GPUPLAN_SOURCE_DIR) +
                                          "/examples/traces/chat-azure-layout.csv");
    EXPECT_EQ(example.size(), 40u);
}

TEST(TraceLoader, ErrorsNameTheLine) {
    try {
        (void)hwdb::parse_trace("arrival_s,input_tokens,output_tokens\n1,2,3\n2,x,3\n", "t.csv");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("t.csv:3:"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)hwdb::parse_trace("a,b,c\n1,2,3\n", "t.csv"), InputError);
    EXPECT_THROW((void)hwdb::parse_trace("arrival_s,input_tokens,output_tokens\n", "t.csv"),
                 InputError);
}
