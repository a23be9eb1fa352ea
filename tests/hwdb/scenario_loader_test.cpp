#include "hwdb/scenario_loader.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

using namespace gpuplan;

namespace {

const hwdb::Database& db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

std::string error_of(const std::string& text) {
    try {
        (void)hwdb::parse_scenario(text, "s.yaml", db());
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "no error";
}

constexpr const char* kBase = R"(schema: 1
model: llama-3.1-70b
hardware:
  accelerator: h100-sxm
  tp: 4
)";

} // namespace

TEST(ScenarioLoader, EveryExampleLoads) {
    int count = 0;
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(GPUPLAN_SOURCE_DIR) + "/examples")) {
        // examples/sweep-*.yaml are sweep specs (docs/sweep.md), run by tests/cli/sweep_test.cpp.
        if (e.path().extension() == ".yaml" &&
            e.path().filename().string().rfind("sweep-", 0) != 0) {
            SCOPED_TRACE(e.path().string());
            EXPECT_NO_THROW((void)hwdb::load_scenario(e.path(), db()));
            ++count;
        }
    }
    EXPECT_GE(count, 1);
}

TEST(ScenarioLoader, ResolvesNamesAndDefaults) {
    const auto s = hwdb::parse_scenario(kBase, "s.yaml", db());
    EXPECT_EQ(s.deployment.model.name, "llama-3.1-70b");
    EXPECT_EQ(s.deployment.gpu.name, "h100-sxm");
    EXPECT_EQ(s.deployment.gpus(), 4);
    EXPECT_EQ(s.deployment.par.tp, 4);
    EXPECT_EQ(s.deployment.intra_node_link.name, "nvlink4"); // the accelerator's scale-up link
    EXPECT_EQ(s.deployment.prec.weights.name, "bf16");
    EXPECT_EQ(s.name, "s");
}

TEST(ScenarioLoader, CountWithoutDpGivesReplicas) {
    const auto s = hwdb::parse_scenario(std::string(kBase) + "  count: 8\n", "s.yaml", db());
    EXPECT_EQ(s.deployment.par.dp, 2);
    EXPECT_EQ(s.deployment.gpus(), 8);
}

TEST(ScenarioLoader, FullScenarioReadsEverySection) {
    const auto s = hwdb::parse_scenario(std::string(kBase) + R"(  node: dgx-h100
precision:
  weights: awq-int4
  kv_cache: fp8
engine:
  max_model_len: 16384
  gpu_memory_utilization: 0.85
  max_num_seqs: 4
  enable_prefix_caching: true
workload:
  input_tokens: 2000
  output_tokens: 300
  concurrency: 16
slo:
  ttft: 300 ms
  tpot: 40 ms
power:
  gpu_cap: 500 W
  rack_budget: 40 kW
prices:
  gpu_hour: $2.10/h
  electricity: 0.6 CNY/kWh
seed: 7
)",
                                        "s.yaml", db());
    EXPECT_EQ(s.deployment.prec.weights.name, "awq-int4");
    EXPECT_DOUBLE_EQ(s.deployment.prec.kv_cache.bits_per_element, 8);
    EXPECT_EQ(*s.deployment.engine.max_model_len, 16384);
    EXPECT_DOUBLE_EQ(*s.deployment.engine.gpu_memory_utilization, 0.85);
    EXPECT_EQ(s.workload.input_tokens, 2000);
    EXPECT_DOUBLE_EQ(s.slo.ttft->si(), 0.3);
    EXPECT_DOUBLE_EQ(s.power.rack_budget->si(), 40e3);
    EXPECT_EQ(s.prices.electricity->money.currency, "CNY");
    EXPECT_EQ(s.seed, 7u);
    EXPECT_EQ(s.deployment.gpus_per_node, 8);
    ASSERT_TRUE(s.deployment.inter_node_link);
}

TEST(ScenarioLoader, ErrorsNameLineColumnAndKey) {
    EXPECT_EQ(error_of("schema: 1\nmodel: llama-3.1-7b\nhardware: {accelerator: h100-sxm}\n")
                  .rfind("s.yaml:2:8: model: unknown model 'llama-3.1-7b'; did you mean", 0),
              0u);
    EXPECT_NE(error_of(std::string(kBase) + "  count: 6\n")
                  .find("hardware.count: count 6 is not a multiple of tp × pp = 4"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "prices:\n  gpu_hour: $25000\n")
                  .find("7:13: prices.gpu_hour: wrong price unit"),
              std::string::npos);
    EXPECT_NE(
        error_of(std::string(kBase) + "slo:\n  ttft: 300\n").find("slo.ttft: '300' has no unit"),
        std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "engine:\n  max_model_lenn: 4\n")
                  .find("did you mean 'max_model_len'"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "precision:\n  weights: int3\n")
                  .find("precision.weights: unknown precision 'int3'"),
              std::string::npos);
    EXPECT_NE(
        error_of("schema: 1\nmodel: llama-3.1-70b\nhardware:\n  accelerator: h100-sxm\n  tp: 3\n")
            .find("hardware: "),
        std::string::npos);
    EXPECT_NE(error_of("schema: 1\nhardware: {accelerator: h100-sxm}\n")
                  .find("missing required key 'model'"),
              std::string::npos);
    EXPECT_NE(
        error_of(
            "schema: 1\nmodel: llama-3.1-8b\nhardware: {accelerator: h100-sxm, node: dgx-a100}\n")
            .find("hardware.node: node 'dgx-a100' holds a100-sxm-40gb, not h100-sxm"),
        std::string::npos);
}

TEST(ScenarioLoader, ReadsPowerRackAndCostBlocks) {
    const auto s = hwdb::parse_scenario(std::string(kBase) + R"(power:
  gpu_cap: 500 W
  rack_budget: 40 kW
  pue: 1.3
  psu_efficiency: 0.94
  resident_power: 121.7 W
  compute_weight: 1.5
prices:
  node_purchase: 1900000 CNY
rack:
  pdu: {amps: 16 A, volts: 230 V, phases: 1, derating: 0.8, count: 2, redundant: true}
  cooling: {kind: liquid, limit: 100 kW}
  rack_units: 48
  nodes_per_rack: 5
cost:
  amortization_years: 5
  residual_fraction: 0.1
  maintenance_fraction: 0.05
  colocation: 900 CNY/kW-month
  utilization: {hours_per_day: 10, days_per_month: 22}
  off_hours: idle
)",
                                        "s.yaml", db());
    EXPECT_DOUBLE_EQ(s.power.gpu_cap->si(), 500);
    EXPECT_DOUBLE_EQ(s.power_model.psu_efficiency, 0.94);
    EXPECT_DOUBLE_EQ(s.power_model.resident_power->si(), 121.7);
    EXPECT_DOUBLE_EQ(s.power_model.compute_weight, 1.5);
    EXPECT_EQ(s.prices.node_purchase->money.currency, "CNY");
    EXPECT_DOUBLE_EQ(s.rack.pdu.current_a, 16);
    EXPECT_DOUBLE_EQ(s.rack.pdu.voltage_v, 230);
    EXPECT_EQ(s.rack.pdu.phases, 1);
    EXPECT_TRUE(s.rack.pdu.redundant);
    EXPECT_EQ(s.rack.cooling.kind, model::CoolingKind::Liquid);
    EXPECT_DOUBLE_EQ(s.rack.cooling.limit->si(), 100e3);
    EXPECT_EQ(s.rack.nodes_per_rack, 5);
    EXPECT_DOUBLE_EQ(s.cost.amortization_years, 5);
    EXPECT_DOUBLE_EQ(s.cost.utilization.hours_per_day, 10);
    EXPECT_EQ(s.cost.off_hours, model::OffHours::Idle);
    EXPECT_EQ(s.cost.colocation->per, model::PriceBasis::KilowattMonth);
    const auto steady =
        hwdb::parse_scenario(std::string(kBase) + "cost:\n  utilization: steady\n", "s.yaml", db());
    EXPECT_DOUBLE_EQ(steady.cost.utilization.hours_per_day, 24);
}

TEST(ScenarioLoader, PowerRackAndCostErrorsNameTheKey) {
    EXPECT_NE(error_of(std::string(kBase) + "rack:\n  pdu:\n    amps: 32\n")
                  .find("rack.pdu.amps: '32' needs the unit A"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "rack:\n  pdu: {phases: 2}\n").find("rack.pdu.phases"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "rack:\n  cooling: {kind: water}\n")
                  .find("use one of air, liquid"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "cost:\n  colocation: $150/month\n")
                  .find("cost.colocation: wrong price unit"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "cost:\n  amortisation_years: 4\n")
                  .find("did you mean 'amortization_years'"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "power:\n  psu_eficiency: 0.9\n")
                  .find("did you mean 'psu_efficiency'"),
              std::string::npos);
    EXPECT_NE(error_of(std::string(kBase) + "cost:\n  utilization: peaky\n").find("write 'steady'"),
              std::string::npos);
}

// --- failures and availability (issue 15) ---

namespace {

constexpr const char* kTraining = R"(schema: 1
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
)";

} // namespace

TEST(ScenarioLoader, ReadsTrainingFailuresAndAvailability) {
    const auto s = hwdb::parse_scenario(std::string(kTraining) +
                                            "  failures:\n"
                                            "    gpu_mtbf: 40000 h\n"
                                            "    checkpoint_write_bandwidth: 20 GB/s\n"
                                            "    restart_overhead: 5 min\n"
                                            "    spares_target: 0.999\n"
                                            "availability:\n  mtbf: 1000 h\n  target: 0.99\n",
                                        "s.yaml", db());
    ASSERT_TRUE(s.training && s.training->failures);
    const auto& f = *s.training->failures;
    EXPECT_DOUBLE_EQ(f.gpu_mtbf->si(), 40000 * 3600.0);
    EXPECT_DOUBLE_EQ(f.write_bandwidth->si(), 20e9);
    EXPECT_FALSE(f.read_bandwidth);
    EXPECT_DOUBLE_EQ(f.restart_overhead->si(), 300.0);
    EXPECT_DOUBLE_EQ(*f.spares_target, 0.999);
    ASSERT_TRUE(s.availability);
    EXPECT_DOUBLE_EQ(s.availability->mtbf->si(), 1000 * 3600.0);
    EXPECT_FALSE(s.availability->mttr);
    EXPECT_DOUBLE_EQ(s.availability->target, 0.99);
    // Without the blocks nothing changes.
    const auto plain = hwdb::parse_scenario(kTraining, "s.yaml", db());
    EXPECT_FALSE(plain.training->failures);
    EXPECT_FALSE(plain.availability);
}

TEST(ScenarioLoader, BadFailureAndAvailabilityValuesNameFileLineAndColumn) {
    const std::string neg = error_of(std::string(kTraining) + "  failures:\n    gpu_mtbf: -5 h\n");
    EXPECT_NE(neg.find("s.yaml:13:15: training.failures.gpu_mtbf"), std::string::npos) << neg;
    EXPECT_NE(neg.find("greater than zero"), std::string::npos) << neg;
    const std::string one =
        error_of(std::string(kTraining) + "  failures:\n    spares_target: 1\n");
    EXPECT_NE(one.find("s.yaml:13:20: training.failures.spares_target"), std::string::npos) << one;
    EXPECT_NE(one.find("strictly between 0 and 1"), std::string::npos) << one;
    const std::string target = error_of(std::string(kBase) + "availability:\n  target: 1.5\n");
    EXPECT_NE(target.find("s.yaml:7:11: availability.target"), std::string::npos) << target;
    const std::string mttr =
        error_of(std::string(kBase) + "availability:\n  mttr: -1 h\n  target: 0.9\n");
    EXPECT_NE(mttr.find("s.yaml:7:9: availability.mttr"), std::string::npos) << mttr;
    EXPECT_NE(mttr.find("zero or more"), std::string::npos) << mttr;
    const std::string missing = error_of(std::string(kBase) + "availability:\n  mtbf: 100 h\n");
    EXPECT_NE(missing.find("missing key 'target'"), std::string::npos) << missing;
    const std::string typo =
        error_of(std::string(kTraining) + "  failures:\n    gpu_mtfb: 100 h\n");
    EXPECT_NE(typo.find("gpu_mtfb"), std::string::npos) << typo;
}

// The `fleet:` block (Scenario::fleet): read with its units and defaults, so a typo or a bad step
// fails every command at its key.
TEST(ScenarioLoader, FleetBlockReadsUnitsPricesAndDefaults) {
    const std::string text = std::string(kBase) + "fleet:\n  span: week\n  step: 30 min\n"
                                                  "  diurnal_amplitude: 0.4\n"
                                                  "  annual_growth: 0.5\n  rented_cap: 3\n"
                                                  "  electricity:\n    peak: $0.2/kWh\n"
                                                  "    off_peak: $0.1/kWh\n    peak_end: 22\n";
    const auto f = hwdb::parse_scenario(text, "s.yaml", db()).fleet;
    ASSERT_TRUE(f);
    EXPECT_EQ(f->span, model::FleetSpan::Week);
    EXPECT_DOUBLE_EQ(f->step.si(), 1800.0);
    EXPECT_DOUBLE_EQ(f->diurnal_amplitude, 0.4);
    EXPECT_DOUBLE_EQ(f->peak_hour, 14.0); // the default
    EXPECT_DOUBLE_EQ(f->weekend_factor, 1.0);
    EXPECT_DOUBLE_EQ(f->annual_growth, 0.5);
    EXPECT_EQ(f->rented_cap, 3);
    EXPECT_FALSE(f->owned);
    ASSERT_TRUE(f->electricity);
    EXPECT_DOUBLE_EQ(f->electricity->peak.money.amount, 0.2);
    EXPECT_EQ(f->electricity->peak_start, 8);
    EXPECT_EQ(f->electricity->peak_end, 22);
    EXPECT_FALSE(hwdb::parse_scenario(kBase, "s.yaml", db()).fleet);
    // --set reaches the block.
    const auto set =
        hwdb::parse_scenario(text, "s.yaml", db(), {{"fleet.annual_growth", "0.25"}}).fleet;
    ASSERT_TRUE(set);
    EXPECT_DOUBLE_EQ(set->annual_growth, 0.25);
}

TEST(ScenarioLoader, BadFleetValuesAreErrorsAtTheirKey) {
    const std::string step = error_of(std::string(kBase) + "fleet:\n  step: 7 h\n");
    EXPECT_NE(step.find("s.yaml:"), std::string::npos) << step;
    EXPECT_NE(step.find("fleet.step must divide a day"), std::string::npos) << step;
    const std::string typo = error_of(std::string(kBase) + "fleet:\n  diurnal_amplitud: 0.5\n");
    EXPECT_NE(typo.find("diurnal_amplitud"), std::string::npos) << typo;
    const std::string span = error_of(std::string(kBase) + "fleet:\n  span: month\n");
    EXPECT_NE(span.find("fleet.span"), std::string::npos) << span;
    const std::string unit =
        error_of(std::string(kBase) + "fleet:\n  electricity:\n    peak: $0.2/h\n"
                                      "    off_peak: $0.1/kWh\n");
    EXPECT_NE(unit.find("per kWh"), std::string::npos) << unit;
}

// engine.speculative: read into model::SpeculativeConfig with the draft resolved from the
// catalog; bad values are placed at their key with line and column.
TEST(ScenarioLoader, SpeculativeBlockResolvesTheDraftModel) {
    const model::Scenario s = hwdb::parse_scenario(
        std::string(kBase) + "engine:\n  speculative:\n    method: draft_model\n"
                             "    draft_model: llama-3.1-8b\n    num_speculative_tokens: 5\n"
                             "    acceptance_rate: 0.6\n",
        "s.yaml", db());
    ASSERT_TRUE(s.deployment.engine.speculative.has_value());
    const model::SpeculativeConfig& c = *s.deployment.engine.speculative;
    EXPECT_EQ(c.method, model::SpeculativeMethod::DraftModel);
    EXPECT_EQ(c.num_speculative_tokens, 5);
    EXPECT_EQ(c.acceptance_rate, 0.6);
    ASSERT_TRUE(c.draft.has_value());
    EXPECT_EQ(c.draft->name, "llama-3.1-8b");
    const model::Scenario e = hwdb::parse_scenario(
        std::string(kBase) + "engine:\n  speculative: {method: eagle, acceptance: [0.9, 0.7]}\n",
        "s.yaml", db());
    EXPECT_EQ(e.deployment.engine.speculative->acceptance, (std::vector<double>{0.9, 0.7}));
}

TEST(ScenarioLoader, SpeculativeErrorsNameFileLineColumnAndKey) {
    const auto with = [](const std::string& block) {
        return error_of(std::string(kBase) + "engine:\n  speculative:\n" + block);
    };
    EXPECT_EQ(with("    method: eagle\n    num_speculative_tokens: 0\n"),
              "s.yaml:9:29: engine.speculative.num_speculative_tokens: 0 draft tokens per step; "
              "give a whole number from 1 to 64");
    EXPECT_EQ(with("    method: eagle\n    acceptance_rate: 1.2\n"),
              "s.yaml:9:22: engine.speculative.acceptance_rate: 1.2 is outside [0, 1); give the "
              "probability that a draft token is accepted, e.g. 0.7");
    EXPECT_NE(with("    method: draft_model\n    draft_model: llama-9-1b\n")
                  .find("s.yaml:9:18: engine.speculative.draft_model: "),
              std::string::npos)
        << with("    method: draft_model\n    draft_model: llama-9-1b\n");
    EXPECT_EQ(with("    method: medusa\n"),
              "s.yaml:8:13: engine.speculative.method: unknown speculative method 'medusa'; use "
              "one of draft_model, eagle, mtp, ngram");
    EXPECT_NE(with("    method: eagle\n    acceptence_rate: 0.7\n").find("did you mean"),
              std::string::npos);
}

TEST(ScenarioLoader, PlanSpeculativeOnNeedsTheEngineBlock) {
    EXPECT_EQ(error_of(std::string(kBase) + "plan:\n  speculative: [on, off]\n"),
              "s.yaml:7:16: plan.speculative: lists 'on' but the scenario has no "
              "engine.speculative block; add one (method, num_speculative_tokens, acceptance) or "
              "list only 'off'");
    EXPECT_NE(error_of(std::string(kBase) + "plan:\n  speculative: [yes]\n")
                  .find("plan.speculative: unknown value 'yes'; list on, off or both"),
              std::string::npos);
    const model::Scenario s = hwdb::parse_scenario(
        std::string(kBase) + "engine:\n  speculative: {method: ngram}\nplan:\n  speculative: [on, "
                             "off]\n",
        "s.yaml", db());
    EXPECT_EQ(s.plan->speculative, (std::vector<bool>{true, false}));
}

// engine.kv_offload: sizes and bandwidths with units, the host link from the hwdb as the host
// bandwidth's default, and each range error at its key (file:line:col).
TEST(ScenarioLoader, KvOffloadBlockReadsAndValidates) {
    const auto s =
        hwdb::parse_scenario(std::string(kBase) + "engine:\n  kv_offload:\n    host: 256 GiB\n"
                                                  "    nvme: 2 TB\n    nvme_bandwidth: 6 GB/s\n",
                             "s.yaml", db());
    ASSERT_TRUE(s.deployment.engine.kv_offload.has_value());
    const model::KvOffloadConfig& c = *s.deployment.engine.kv_offload;
    EXPECT_DOUBLE_EQ(c.host->si(), 256.0 * 1024 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(c.nvme->si(), 2e12);
    EXPECT_DOUBLE_EQ(c.nvme_bandwidth->si(), 6e9);
    EXPECT_FALSE(c.host_bandwidth.has_value());
    // The H100 SXM's host link is PCIe 5.0 x16 (hwdb/interconnects/links.yaml).
    ASSERT_TRUE(c.host_link.has_value());
    EXPECT_DOUBLE_EQ(
        c.host_link->si(),
        db().interconnect(db().accelerator("h100-sxm").host_link).bandwidth_per_direction.si());
    const auto with = [](const std::string& block) {
        return error_of(std::string(kBase) + "engine:\n  kv_offload:\n" + block);
    };
    EXPECT_EQ(with("    host: -1 GiB\n"),
              "s.yaml:8:11: engine.kv_offload.host: '-1 GiB' must be zero or more");
    EXPECT_EQ(with("    host: 0 GiB\n"),
              "s.yaml:8:11: engine.kv_offload.host: both tiers are 0 bytes; give host or nvme a "
              "size, or remove engine.kv_offload");
    EXPECT_EQ(with("    host: 0 GiB\n    nvme: 1 TB\n"), "no error"); // NVMe alone
    EXPECT_EQ(with("    host_bandwidth: 0 GB/s\n"),
              "s.yaml:8:21: engine.kv_offload.host_bandwidth: '0 GB/s' must be greater than zero");
    EXPECT_NE(with("    disk: 1 TB\n").find("s.yaml:8:5"), std::string::npos);
    EXPECT_EQ(error_of(std::string(kBase) +
                       "engine:\n  enable_prefix_caching: false\n  kv_offload: {}\n"),
              "s.yaml:8:15: engine.kv_offload: KV offload tiers hold prefix-cache blocks, and "
              "this engine runs without a prefix cache; set enable_prefix_caching: true (not "
              "llama.cpp) or remove kv_offload");
}
