// One answer through the desktop app's analysis path: gui::analyze on every serving example
// gives the figures the CLI prints for the same file (fits, KV blocks, the operating point's
// throughput, monthly cost to the cent). Part of the consistency suite (docs/operating-point.md).
#include "gui/analysis.hpp"
#include "gui/table_models.hpp"
#include "hwdb/database.hpp"
#include "hwdb/scenario_loader.hpp"
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

using namespace gpuplan;
using nlohmann::json;

// `gpuplan ARGS --json`, parsed (errors go to the shared output, so a failure shows them).
json cli_json(const std::string& args) {
    const test::RunResult r = test::run_cli(args + " --json");
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.out;
    return r.exit_code == 0 ? json::parse(r.out) : json();
}

const hwdb::Database& db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

} // namespace

TEST(AppConsistency, TheAppsAnalysisGivesTheClisFiguresForEveryServingExample) {
    const gui::Core core(db(), {std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    for (const char* name :
         {"7b-on-rtx4090.yaml", "cost-rent-vs-buy.yaml", "deepseek-v3-8xh200.yaml",
          "llama70b-2xh200.yaml", "llama70b-4xh100.yaml", "long-context-rag.yaml",
          "quickstart.yaml", "qwen7b-gptq-rtx4090.yaml", "simulate-chat.yaml", "plan-search.yaml",
          "rack-power-cap.yaml"}) {
        SCOPED_TRACE(name);
        const std::string file = std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name;
        const gui::Analysis a = gui::analyze(hwdb::load_scenario(file, db()), core);
        const json est = cli_json("estimate " + file);
        const json cost = cli_json("cost " + file);
        ASSERT_FALSE(est.is_null());
        ASSERT_FALSE(cost.is_null());
        EXPECT_EQ(a.serving().memory.fits, est["fits"].get<bool>());
        EXPECT_EQ(a.serving().memory.kv_blocks, est["memory"]["kv_blocks"].get<std::int64_t>());
        if (!est["fits"].get<bool>()) {
            continue;
        }
        EXPECT_DOUBLE_EQ(a.serving().throughput, est["throughput_tok_s"].get<double>());
        ASSERT_TRUE(a.cost.has_value()) << a.cost_error;
        EXPECT_DOUBLE_EQ(a.cost->tokens, cost["tokens_per_month"].get<double>());
        if (a.cost->own_monthly) {
            EXPECT_NEAR(a.cost->own_monthly->amount, cost["own_monthly"].get<double>(), 0.005);
        } else {
            EXPECT_TRUE(cost["own_monthly"].is_null());
        }
        if (a.cost->rent_monthly) {
            EXPECT_NEAR(a.cost->rent_monthly->amount, cost["rent_monthly"].get<double>(), 0.005);
        } else {
            EXPECT_TRUE(cost["rent_monthly"].is_null());
        }
    }
}

TEST(AppConsistency, TheAppShowsEstimatesSpeculativeAndDisaggregatedFigures) {
    const gui::Core core(db(), {std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    const std::string spec =
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/speculative-llama70b-h100.yaml";
    const gui::Analysis a = gui::analyze(hwdb::load_scenario(spec, db()), core);
    const json est = cli_json("estimate " + spec);
    ASSERT_TRUE(a.serving().speculative.has_value());
    ASSERT_FALSE(est.is_null());
    EXPECT_DOUBLE_EQ(a.serving().speculative->tokens_per_step,
                     est["speculative"]["tokens_per_step"].get<double>());
    EXPECT_DOUBLE_EQ(a.serving().speculative->speedup, est["speculative"]["speedup"].get<double>());
    EXPECT_DOUBLE_EQ(a.serving().tpot.si(), est["tpot_s"].get<double>());
    const std::string pd =
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/disaggregated-llama70b-h100.yaml";
    const gui::Analysis b = gui::analyze(hwdb::load_scenario(pd, db()), core);
    const json pest = cli_json("estimate " + pd);
    ASSERT_TRUE(b.disaggregation.has_value()) << b.disaggregation_error;
    ASSERT_FALSE(pest.is_null());
    const json& d = pest["disaggregation"];
    EXPECT_DOUBLE_EQ(b.disaggregation->transfer.si(), d["transfer_s"].get<double>());
    EXPECT_DOUBLE_EQ(b.disaggregation->ttft.si(), d["ttft_s"].get<double>());
    EXPECT_DOUBLE_EQ(b.disaggregation->tpot.si(), d["tpot_s"].get<double>());
    EXPECT_DOUBLE_EQ(b.disaggregation->capacity_rps, d["capacity_rps"].get<double>());
    EXPECT_EQ(b.disaggregation->bottleneck, d["bottleneck"].get<std::string>());
}

// The estimate view shows each figure's measured band with its source, the band `estimate`
// prints for the same file (model::band_for on the hwdb's error_bands.yaml), not the profile's
// per-kernel band: a validated class (quickstart, H100), a band borrowed from the GPU's family
// (H200: the hopper band measured on the H100) and the labelled default (RTX 4090 with GPTQ
// weights: no 4-bit validation).
TEST(AppConsistency, TheEstimateViewShowsEachFiguresBandAsTheCliPrintsIt) {
    const gui::Core core(db(), {std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    for (const char* name :
         {"quickstart.yaml", "llama70b-2xh200.yaml", "qwen7b-gptq-rtx4090.yaml"}) {
        SCOPED_TRACE(name);
        const std::string file = std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name;
        const gui::Analysis a = gui::analyze(hwdb::load_scenario(file, db()), core);
        const json est = cli_json("estimate " + file);
        ASSERT_FALSE(est.is_null());
        ASSERT_EQ(a.bands.size(), est["bands"].size());
        const gui::FiguresModel::Rows rows = gui::servingRows(a);
        for (const auto& [key, band] : a.bands) {
            SCOPED_TRACE(key);
            EXPECT_DOUBLE_EQ(band.p90, est["bands"][key]["p90"].get<double>());
            EXPECT_EQ(band.source, est["bands"][key]["source"].get<std::string>());
            EXPECT_EQ(band.validated, est["bands"][key]["validated"].get<bool>());
        }
        // The rows: "TPOT band" reads "±x % (source)".
        const auto text_of = [&](const QString& figure) {
            for (const auto& r : rows) {
                if (r.figure == figure) {
                    return r.text.toStdString();
                }
            }
            return std::string();
        };
        const std::string tpot = est["bands"]["tpot"]["source"].get<std::string>();
        const std::string shown = text_of(QStringLiteral("TPOT band"));
        EXPECT_NE(shown.find(tpot), std::string::npos) << shown;
        EXPECT_EQ(shown.rfind("±", 0), 0u) << shown;
        EXPECT_FALSE(text_of(QStringLiteral("TTFT (under load) band")).empty());
        EXPECT_FALSE(text_of(QStringLiteral("peak throughput band")).empty());
        EXPECT_TRUE(text_of(QStringLiteral("error band")).empty()); // the per-kernel row is renamed
        EXPECT_FALSE(text_of(QStringLiteral("per-kernel error")).empty());
    }
    // quickstart's TPOT is validated (SplitwiseSim on H100); the GPTQ one is the default.
    const gui::Analysis h100 = gui::analyze(
        hwdb::load_scenario(std::string(GPUPLAN_SOURCE_DIR) + "/examples/quickstart.yaml", db()),
        core);
    const model::FigureBand expected =
        model::band_for(core.error_bands(), model::BandFigure::Tpot, model::BandRegime::Decode,
                        model::band_query(h100.scenario.deployment));
    EXPECT_TRUE(expected.validated);
}
