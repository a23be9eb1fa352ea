// The serving features' figures in the app's results (gui/feature_rows.hpp): the Simulation
// tab's summary shows speculative decoding's tokens per step and acceptance, disaggregation's
// transfer time, link utilisation and pool queues, and the prefix hit rate of each replica;
// the serving estimate shows the expected tokens per step and the disaggregated pools. Values
// are checked against hand computations from the examples' inputs.
#include "gui/analysis.hpp"
#include "gui/table_models.hpp"
#include "gui/ui_util.hpp"
#include "hwdb/scenario_loader.hpp"
#include "sim/simulate.hpp"
#include "tests/gui/gui_test_env.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

namespace {

using namespace gpuplan;

std::string example(const char* name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name;
}

// The rows of a simulation of `file` with `requests` requests, as the Simulation tab shows them.
std::unique_ptr<gui::FiguresModel> simulated(const char* file, int requests) {
    const model::Scenario s = hwdb::load_scenario(example(file), test::repo_db());
    sim::SimOptions o;
    o.requests = requests;
    const gui::Core core(test::repo_db(), {std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    o.profile = core.profile_for(s.deployment.gpu);
    auto m = std::make_unique<gui::FiguresModel>();
    m->setRows(gui::simulationRows(sim::simulate(s, o), 0.0));
    return m;
}

TEST(FeatureRows, SpeculativeTokensPerStepInTheSimulationAndTheEstimate) {
    (void)test::gui_app();
    // Llama-3.1-8B drafting 4 tokens at α = 0.7: E = (1 − 0.7^5) / (1 − 0.7) = 2.7731.
    const double expected = (1 - std::pow(0.7, 5)) / (1 - 0.7);
    const auto m = simulated("speculative-llama70b-h100.yaml", 20);
    const QString tps = m->value(QStringLiteral("tokens per step (run / expected)"));
    EXPECT_TRUE(tps.endsWith(QStringLiteral(" / ") + QString::number(expected, 'f', 2)))
        << tps.toStdString();
    EXPECT_TRUE(m->value(QStringLiteral("speculative decoding"))
                    .startsWith(QStringLiteral("draft_model, 4")));
    EXPECT_FALSE(m->value(QStringLiteral("draft acceptance (accepted / drafted)")).isEmpty());
    const gui::Core core(test::repo_db(), {std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    const gui::Analysis a = gui::analyze(
        hwdb::load_scenario(example("speculative-llama70b-h100.yaml"), test::repo_db()), core);
    ASSERT_TRUE(a.serving().speculative.has_value());
    EXPECT_NEAR(a.serving().speculative->tokens_per_step, expected, 1e-12);
    gui::FiguresModel est;
    est.setRows(gui::servingRows(a));
    EXPECT_EQ(est.value(QStringLiteral("tokens per step (expected)")),
              QString::number(expected, 'f', 2));
}

TEST(FeatureRows, DisaggregationTransferTimeAndQueuesInTheSimulationAndTheEstimate) {
    (void)test::gui_app();
    // Llama-3.1-70B's KV of a 3,000-token prompt, 2 × 80 × 8 × 128 × 2 bytes a token, over four
    // GPU pairs of 50 GB/s after 5 µs.
    const double bytes = 2.0 * 80 * 8 * 128 * 2 * 3000;
    const Seconds transfer(5e-6 + bytes / (4 * 50e9));
    const auto m = simulated("disaggregated-llama70b-h100.yaml", 20);
    EXPECT_EQ(m->value(QStringLiteral("KV transfer time mean / p99")),
              gui::formatTime(transfer) + QStringLiteral(" / ") + gui::formatTime(transfer));
    EXPECT_TRUE(
        m->value(QStringLiteral("KV transfers")).startsWith(QStringLiteral("20 over ib-ndr")));
    for (const char* row : {"link utilisation", "prefill queue p50 / p99", "decode queue p50 / p99",
                            "pool prefill", "pool decode"}) {
        EXPECT_FALSE(m->value(QString::fromUtf8(row)).isEmpty()) << row;
    }
    const gui::Core core(test::repo_db(), {std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    const gui::Analysis a = gui::analyze(
        hwdb::load_scenario(example("disaggregated-llama70b-h100.yaml"), test::repo_db()), core);
    ASSERT_TRUE(a.disaggregation.has_value()) << a.disaggregation_error;
    EXPECT_NEAR(a.disaggregation->transfer.si(), transfer.si(), 1e-12);
    gui::FiguresModel est;
    est.setRows(gui::servingRows(a));
    EXPECT_TRUE(est.value(QStringLiteral("KV transfer per mean prompt"))
                    .startsWith(QStringLiteral("983 MB in ") + gui::formatTime(transfer)));
}

TEST(FeatureRows, PrefixHitRatePerReplicaAndNoFeatureRowsForAPlainRun) {
    (void)test::gui_app();
    const auto m = simulated("prefix-routing-rag.yaml", 200);
    const QString rates = m->value(QStringLiteral("prefix hit rate per replica"));
    EXPECT_EQ(rates.split(QStringLiteral(", ")).size(), 4) << rates.toStdString();
    EXPECT_FALSE(m->value(QStringLiteral("load imbalance (requests / outstanding)")).isEmpty());
    const auto plain = simulated("simulate-chat.yaml", 20);
    for (const char* row :
         {"speculative decoding", "KV transfers", "prefix hit rate per replica"}) {
        EXPECT_TRUE(plain->value(QString::fromUtf8(row)).isEmpty()) << row;
    }
}

} // namespace
