#include "hwdb/scenario_writer.hpp"

#include "hwdb/scenario_loader.hpp"
#include "model/unit_parser.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gpuplan;

namespace {

const hwdb::Database& db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

std::filesystem::path temp_dir() {
    const auto dir =
        std::filesystem::temp_directory_path() /
        ("gpuplan-writer-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::filesystem::create_directories(dir);
    return dir;
}

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Saves, loads back and checks equality, and that a second save writes identical text.
void expect_round_trip(const model::Scenario& s, const std::string& stem) {
    const auto path = temp_dir() / (stem + ".yaml");
    hwdb::save_scenario(path, s);
    const std::string first = read(path);
    model::Scenario back;
    try {
        back = hwdb::load_scenario(path, db());
    } catch (const std::exception& e) {
        FAIL() << "the written scenario does not load: " << e.what() << "\n" << first;
    }
    EXPECT_TRUE(back == s) << "load -> save -> load changed the scenario:\n" << first;
    EXPECT_TRUE(back.deployment == s.deployment) << "deployment differs";
    EXPECT_TRUE(back.workload == s.workload) << "workload differs";
    EXPECT_TRUE(back.training == s.training) << "training differs";
    hwdb::save_scenario(path, back);
    EXPECT_EQ(read(path), first) << "a second save wrote different text";
}

} // namespace

TEST(ScenarioWriter, EveryExampleRoundTripsLosslessly) {
    int count = 0;
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(GPUPLAN_SOURCE_DIR) + "/examples")) {
        // examples/sweep-*.yaml are sweep specs (docs/sweep.md), not scenarios.
        if (e.path().extension() != ".yaml" ||
            e.path().filename().string().rfind("sweep-", 0) == 0) {
            continue;
        }
        SCOPED_TRACE(e.path().string());
        const model::Scenario s = hwdb::load_scenario(e.path(), db());
        expect_round_trip(s, e.path().stem().string());
        ++count;
    }
    EXPECT_GE(count, 5);
}

TEST(ScenarioWriter, TextParsesDirectlyWithoutFiles) {
    const model::Scenario s = hwdb::load_scenario(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/llama70b-4xh100.yaml", db());
    const std::string text = hwdb::scenario_to_yaml(s);
    EXPECT_EQ(text.rfind("schema: 1\n", 0), 0u);
    EXPECT_TRUE(hwdb::parse_scenario(text, "llama70b-4xh100.yaml", db()) == s) << text;
}

TEST(ScenarioWriter, InlineModelOddValuesAndSimulatorKeysRoundTrip) {
    model::Scenario s = hwdb::parse_scenario(R"(schema: 1
name: "odd: name # with symbols"
description: "two\nlines"
model: llama-3.1-8b
hardware:
  accelerator: h100-sxm
  tp: 2
  dp: 2
)",
                                             "odd.yaml", db());
    s.model_ref.clear(); // inline: as after a config.json import
    s.deployment.model.name = "my-imported-model";
    s.deployment.engine.usable_memory = Bytes(79.21 * 1024 * 1024 * 1024);
    s.deployment.engine.gpu_memory_utilization = 0.8734;
    s.deployment.engine.activation_memory = Bytes(1234567);
    s.slo.ttft = Seconds(0.3333);
    s.slo.tpot = Seconds(0.05);
    s.power.gpu_cap = Watts(512.5);
    s.power.pue = 1.27;
    s.power_model.min_clock = 0.33;
    s.prices.gpu_hour = model::Price{{2.123456, "USD"}, model::PriceBasis::Hour};
    s.prices.electricity = model::Price{{0.085, "EUR"}, model::PriceBasis::KilowattHour};
    // A file's accelerator prices are for the hardware it names (model/price_list.hpp): here
    // its own accelerator, as the loader records it.
    s.prices.accelerator = s.deployment.gpu.name;
    s.rack.pdu.current_a = 16;
    s.rack.pdu.phases = 1;
    s.rack.pdu.voltage_v = 230;
    s.rack.cooling.kind = model::CoolingKind::Liquid;
    s.cost.utilization.hours_per_day = 10;
    s.cost.off_hours = model::OffHours::Off;
    s.cost.colocation = model::Price{{150, "USD"}, model::PriceBasis::KilowattMonth};
    auto& w = s.workload;
    w.requests = 500;
    w.duration = Seconds(90);
    w.arrival.kind = model::ArrivalKind::Gamma;
    w.arrival.cv = 2.5;
    w.arrival.requests_per_s = 7.25;
    w.arrival.curve.kind = model::RateCurveKind::Step;
    w.arrival.curve.steps = {{Seconds(30), 40}, {Seconds(60), 8}};
    model::RequestClass chat;
    chat.name = "chat";
    chat.share = 0.6;
    chat.input.kind = model::LengthKind::LogNormal;
    chat.input.mean = 600.5;
    chat.input.stddev = 500;
    chat.input.min = 16;
    chat.input.max = 6000;
    chat.output.kind = model::LengthKind::Uniform;
    chat.output.min = 20;
    chat.output.max = 400;
    chat.ttft = Seconds(1);
    chat.route = model::RouteTarget::Local;
    model::RequestClass agent;
    agent.name = "agent";
    agent.input.kind = model::LengthKind::Empirical;
    agent.input.values = {10, 20, 30};
    agent.input.weights = {0.2, 0.3, 0.5};
    agent.agent = model::AgentSession{};
    agent.agent->think_time = Seconds(2);
    w.classes = {chat, agent};
    s.scheduler.policy = model::SchedulingPolicy::Priority;
    s.scheduler.preemption_mode = model::PreemptionMode::Swap;
    s.cluster.replicas = 3;
    s.cluster.router = model::RouterPolicy::PrefixAffinity;
    s.cluster.admission.max_queue = 64;
    s.cluster.admission.timeout = Seconds(2);
    s.cluster.cold_start.load_bandwidth = BytesPerSecond(2e9);
    s.cluster.scale = {{Seconds(120), 4}};
    s.cluster.cloud = model::CloudEndpoint{};
    s.cluster.cloud->input_price = model::Price{{3, "USD"}, model::PriceBasis::MillionTokens};
    s.seed = 42;
    expect_round_trip(s, "odd");
}

TEST(ScenarioWriter, EngineSchedulerPoliciesRoundTrip) {
    model::Scenario s = hwdb::load_scenario(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/llama70b-4xh100.yaml", db());
    s.deployment.engine.kind = model::EngineKind::TensorRtLlm;
    expect_round_trip(s, "trtllm-default");
    EXPECT_EQ(hwdb::scenario_to_yaml(s).find("capacity_scheduler"), std::string::npos);
    s.scheduler.capacity_scheduler = model::CapacityScheduler::MaxUtilization;
    expect_round_trip(s, "trtllm-max-utilization");
    EXPECT_NE(hwdb::scenario_to_yaml(s).find("capacity_scheduler: max_utilization"),
              std::string::npos);
    s.scheduler.capacity_scheduler = model::CapacityScheduler::GuaranteedNoEvict;
    s.deployment.engine.kind = model::EngineKind::Sglang;
    s.scheduler.schedule_policy = model::SglangSchedulePolicy::Lpm;
    s.scheduler.schedule_conservativeness = 0.3;
    expect_round_trip(s, "sglang-lpm");
    const std::string text = hwdb::scenario_to_yaml(s);
    EXPECT_NE(text.find("schedule_policy: lpm"), std::string::npos) << text;
    EXPECT_NE(text.find("schedule_conservativeness: 0.3"), std::string::npos) << text;
}

TEST(ScenarioWriter, PrefixAwareRoutersRoundTrip) {
    model::Scenario s = hwdb::load_scenario(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/llama70b-4xh100.yaml", db());
    s.cluster.router = model::RouterPolicy::LongestPrefix;
    expect_round_trip(s, "longest-prefix");
    s.cluster.router = model::RouterPolicy::Weighted;
    s.cluster.prefix_routing = {0.35, 16, 1.25};
    expect_round_trip(s, "weighted");
    const std::string text = hwdb::scenario_to_yaml(s);
    EXPECT_NE(text.find("router: weighted"), std::string::npos) << text;
    EXPECT_NE(text.find("weight: 0.35"), std::string::npos) << text;
    EXPECT_NE(text.find("balance_abs_threshold: 16"), std::string::npos) << text;
    EXPECT_NE(text.find("balance_rel_threshold: 1.25"), std::string::npos) << text;
}

TEST(ScenarioWriter, PoolsRoundTrip) {
    const model::Scenario s = hwdb::load_scenario(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/heterogeneous-h100-l4.yaml", db());
    ASSERT_EQ(s.cluster.pools.size(), 2u);
    expect_round_trip(s, "pools");
    const std::string text = hwdb::scenario_to_yaml(s);
    EXPECT_NE(text.find("max_prompt_tokens: 1500"), std::string::npos) << text;
    EXPECT_NE(text.find("classes: [chat]"), std::string::npos) << text;
    EXPECT_EQ(text.find("owned:"), std::string::npos) << text; // rented: the default
    model::Scenario owned = s;
    owned.cluster.pools[0].owned = true;
    expect_round_trip(owned, "pools-owned");
    EXPECT_NE(hwdb::scenario_to_yaml(owned).find("owned: true"), std::string::npos);
}

TEST(ScenarioWriter, DisaggregationRoundTrips) {
    model::Scenario s = hwdb::load_scenario(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/disaggregated-llama70b-h100.yaml", db());
    ASSERT_TRUE(s.cluster.disaggregation);
    expect_round_trip(s, "disaggregation");
    // A link given as a bandwidth, whole transfers.
    s.cluster.disaggregation->link = model::InterconnectSpec{};
    s.cluster.disaggregation->link.bandwidth_per_direction = BytesPerSecond(12.5e9);
    s.cluster.disaggregation->link.latency = Seconds(8e-6);
    s.cluster.disaggregation->transfer = model::KvTransferMode::Whole;
    expect_round_trip(s, "disaggregation-bandwidth");
}

TEST(ScenarioWriter, AutoscalerRoundTrips) {
    const model::Scenario s = hwdb::load_scenario(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/autoscaling-llama8b-diurnal.yaml", db());
    ASSERT_TRUE(s.cluster.autoscaler);
    expect_round_trip(s, "autoscaler");
    const std::string text = hwdb::scenario_to_yaml(s);
    EXPECT_NE(text.find("metric: utilisation"), std::string::npos) << text;
    EXPECT_NE(text.find("max_replicas: 6"), std::string::npos) << text;
}

// The `fleet:` block is a Scenario field: read -> write -> read gives the same value, with the
// example's figures written back (60 % swing, 14:00 peak, time-of-day prices).
TEST(ScenarioWriter, FleetBlockRoundTrips) {
    const model::Scenario s = hwdb::load_scenario(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/fleet-year-llama70b-h100.yaml", db());
    ASSERT_TRUE(s.fleet);
    EXPECT_EQ(s.fleet->span, model::FleetSpan::Year);
    EXPECT_DOUBLE_EQ(s.fleet->diurnal_amplitude, 0.6);
    ASSERT_TRUE(s.fleet->electricity);
    EXPECT_DOUBLE_EQ(s.fleet->electricity->peak.money.amount, 0.191);
    expect_round_trip(s, "fleet");
    const std::string text = hwdb::scenario_to_yaml(s);
    EXPECT_NE(text.find("fleet:\n  span: year\n  step: 1 h\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  electricity:\n    peak: 0.191 USD/kWh\n"), std::string::npos) << text;
    // Every optional key written and read back too.
    model::Scenario all = s;
    all.fleet->rented_cap = 3;
    all.fleet->owned = 5;
    all.fleet->step = Seconds(900.0);
    all.fleet->electricity->peak_start = 22;
    all.fleet->electricity->peak_end = 6;
    expect_round_trip(all, "fleet-all");
    model::Scenario none = s;
    none.fleet.reset();
    EXPECT_EQ(hwdb::scenario_to_yaml(none).find("fleet:"), std::string::npos);
}

TEST(ScenarioWriter, ReplicaFailuresRoundTrip) {
    const model::Scenario s = hwdb::load_scenario(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/failures-serving-sim-llama8b-h100.yaml", db());
    ASSERT_TRUE(s.cluster.failures);
    expect_round_trip(s, "failures");
    EXPECT_NE(hwdb::scenario_to_yaml(s).find("in_flight: retry"), std::string::npos);
}

TEST(ScenarioWriter, TraceIsWrittenBesideTheScenario) {
    model::Scenario s = hwdb::load_scenario(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/simulate-trace.yaml", db());
    ASSERT_FALSE(s.workload.trace.empty());
    const auto path = temp_dir() / "with-trace.yaml";
    hwdb::save_scenario(path, s);
    EXPECT_TRUE(std::filesystem::exists(temp_dir() / "with-trace.trace.csv"));
    EXPECT_NE(read(path).find("file: with-trace.trace.csv"), std::string::npos);
    EXPECT_TRUE(hwdb::load_scenario(path, db()) == s);
}

TEST(ScenarioWriter, QuantitiesUseReadableUnits) {
    model::Scenario s = hwdb::load_scenario(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/llama70b-4xh100.yaml", db());
    s.deployment.engine.kv_cache_memory = Bytes(80.0 * 1024 * 1024 * 1024);
    s.slo.ttft = Seconds(0.5);
    s.power.node_cap = Watts(8000);
    const std::string text = hwdb::scenario_to_yaml(s);
    EXPECT_NE(text.find("kv_cache_memory: 80 GiB"), std::string::npos) << text;
    EXPECT_NE(text.find("ttft: 0.5 s"), std::string::npos) << text;
    EXPECT_NE(text.find("node_cap: 8 kW"), std::string::npos) << text;
}

TEST(ScenarioWriter, PlanBlockRoundTrips) {
    const model::Scenario s = hwdb::parse_scenario(R"(schema: 1
model: llama-3.1-70b
hardware:
  accelerator: h100-sxm
  tp: 4
plan:
  candidates:
    - accelerator: h100-sxm
      node: dgx-h100
      gpu_hour: $2.49/h
    - {accelerator: h200-sxm, gpu_purchase: $31000}
  max_gpus: 16
  tp: [2, 4, 8]
  weights: [bf16, fp8]
  kv_cache: [fp8]
  max_num_seqs: [256, 512]
  budget: $50000/month
  power_budget: 40 kW
  max_racks: 2
  pricing: rent
  top: 3
  requests: 400
  prune_margin: 0.5
)",
                                                   "plan.yaml", db());
    ASSERT_TRUE(s.plan.has_value());
    expect_round_trip(s, "plan");
}

TEST(ScenarioWriter, FailuresAndAvailabilityBlocksRoundTrip) {
    const model::Scenario s = hwdb::parse_scenario(R"(schema: 1
model: llama-3.1-8b
hardware:
  accelerator: h100-sxm
  node: dgx-h100
  count: 16
training:
  tokens: 1e9
  global_batch: 64
  seq_len: 4096
  tp: 8
  failures:
    gpu_mtbf: 40000 h
    checkpoint_write_bandwidth: 20 GB/s
    checkpoint_read_bandwidth: 40 GB/s
    restart_overhead: 5 min
    repair_time: 12 h
    checkpoint_interval: 45 min
    spares_target: 0.999
availability:
  replicas: 3
  mtbf: 1000 h
  mttr: 2 h
  target: 0.9999
)",
                                                   "failures.yaml", db());
    ASSERT_TRUE(s.training && s.training->failures && s.availability);
    expect_round_trip(s, "failures");
}

// engine.speculative round-trips: a per-position list with EAGLE, a rate with n-gram lookup.
TEST(ScenarioWriter, SpeculativeBlockRoundTrips) {
    model::Scenario s = hwdb::parse_scenario(R"(schema: 1
model: llama-3.1-70b
hardware:
  accelerator: h100-sxm
  tp: 4
engine:
  speculative:
    method: eagle
    num_speculative_tokens: 3
    acceptance: [0.85, 0.7, 0.55]
)",
                                             "spec.yaml", db());
    expect_round_trip(s, "speculative-eagle");
    model::SpeculativeConfig c;
    c.method = model::SpeculativeMethod::Ngram;
    c.acceptance_rate = 0.35;
    s.deployment.engine.speculative = c;
    expect_round_trip(s, "speculative-ngram");
}

// engine.kv_offload round-trips: every key, and the empty block of defaults.
TEST(ScenarioWriter, KvOffloadBlockRoundTrips) {
    model::Scenario s = hwdb::parse_scenario(R"(schema: 1
model: llama-3.1-8b
hardware:
  accelerator: h100-sxm
engine:
  kv_offload:
    host: 128 GiB
    nvme: 1 TB
    host_bandwidth: 20 GB/s
    nvme_bandwidth: 5 GB/s
)",
                                             "off.yaml", db());
    expect_round_trip(s, "kv-offload-all");
    s.deployment.engine.kv_offload = model::KvOffloadConfig{};
    s.deployment.engine.kv_offload->host_link =
        db().interconnect(s.deployment.gpu.host_link).bandwidth_per_direction;
    expect_round_trip(s, "kv-offload-defaults");
}
