// Error bands per printed figure (model/error_bands.hpp, calib/error_bands.hpp,
// hwdb/error_bands_io.hpp): the band rule on a hand-made validation set, the lookup and its
// labelled fallback, the YAML round trip, `calib validate --write-bands` against its own table,
// and the shipped hwdb/error_bands.yaml against a fresh measurement on ../shared/data (skipped
// when absent).
#include "calib/error_bands.hpp"
#include "hwdb/error_bands_io.hpp"
#include "hwdb/file_io.hpp"
#include "model/error.hpp"
#include "tests/support/run_cli.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>

using namespace gpuplan;

namespace {

namespace fs = std::filesystem;

const model::ValidationClass kH100Decode{"h100-sxm", "vllm", false, "16-bit",
                                         model::BandRegime::Decode};

calib::BandSample sample(double error, model::ValidationClass cls = kH100Decode) {
    return {model::BandFigure::Tpot, std::move(cls), error, "hand-made set", "whole-step"};
}

fs::path temp_dir(const std::string& name) {
    const fs::path d =
        fs::temp_directory_path() / ("gpuplan_bands_" + name + "_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

} // namespace

TEST(ErrorBands, P90IsTheNinthOfTenAbsoluteErrorsAndTheMeanIsSigned) {
    // |errors| sorted: 0, .05, .05, .10, .15, .20, .25, .30, .35, .40. Nearest rank: the
    // ceil(0.9 x 10) = 9th, 0.35. Signed sum 0.55 over 10 points: mean +0.055.
    const std::vector<double> errors = {0.10, -0.20, 0.05, 0.30,  -0.40,
                                        0.15, 0.0,   0.25, -0.05, 0.35};
    std::vector<calib::BandSample> s;
    for (const double e : errors) {
        s.push_back(sample(e));
    }
    model::ValidationClass a100 = kH100Decode;
    a100.gpu = "a100-sxm-80gb";
    s.push_back(sample(-0.5, a100));
    const auto bands = calib::measure_bands(s);
    ASSERT_EQ(bands.size(), 2u);
    EXPECT_EQ(bands[0].cls, kH100Decode);
    EXPECT_EQ(bands[0].points, 10);
    EXPECT_DOUBLE_EQ(bands[0].p90, 0.35);
    EXPECT_NEAR(bands[0].mean_signed, 0.055, 1e-15);
    EXPECT_EQ(bands[1].points, 1);
    EXPECT_DOUBLE_EQ(bands[1].p90, 0.5);
    EXPECT_DOUBLE_EQ(bands[1].mean_signed, -0.5);
}

TEST(ErrorBands, DecodeThroughputErrorIsTheInverseOfTheTokenTimeError) {
    // Predicted token time 25 % slow: throughput = batch / time is 1 / 1.25 = 0.8 of measured.
    calib::EndToEndReport r;
    r.token_errors = {{"h100-sxm", 0.25}};
    const auto db = hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    const auto s = calib::step_band_samples(r, "llama-2-70b", db, "set");
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].figure, model::BandFigure::Tpot);
    EXPECT_DOUBLE_EQ(s[0].error, 0.25);
    EXPECT_EQ(s[1].figure, model::BandFigure::Throughput);
    EXPECT_NEAR(s[1].error, -0.2, 1e-15);
    EXPECT_EQ(s[1].cls.regime, model::BandRegime::Decode);
    EXPECT_FALSE(s[1].cls.moe);
}

TEST(ErrorBands, ClassWithoutValidationFallsBackToTheLabelledWiderDefault) {
    model::ErrorBands bands;
    bands.bands = calib::measure_bands({sample(0.1), sample(-0.3)});
    const model::BandQuery h100{"h100-sxm", "vllm", false, "16-bit"};
    // Nothing for another GPU, another regime or a fitted-on set.
    for (const model::BandQuery& q : {model::BandQuery{"b200", "vllm", false, "16-bit"}, h100}) {
        const model::FigureBand b =
            model::band_for(bands, model::BandFigure::Tpot, model::BandRegime::Prefill, q);
        EXPECT_FALSE(b.validated);
        EXPECT_DOUBLE_EQ(b.p90, model::kUnvalidatedBand);
        EXPECT_EQ(model::band_text(b), "±50 % (default: no validation for this class)");
    }
    model::ErrorBands fitted = bands;
    fitted.bands[0].fitted_on = true;
    EXPECT_FALSE(model::band_for(fitted, model::BandFigure::Tpot, model::BandRegime::Decode, h100)
                     .validated);
    // The measured class: P90 of {0.1, 0.3} by nearest rank is 0.3.
    const model::FigureBand b =
        model::band_for(bands, model::BandFigure::Tpot, model::BandRegime::Decode, h100);
    EXPECT_TRUE(b.validated);
    EXPECT_EQ(model::band_text(b), "±30 % (P90 of 2 whole-step validation points, hand-made set)");
    // Another engine's band is used and says so.
    const model::FigureBand other =
        model::band_for(bands, model::BandFigure::Tpot, model::BandRegime::Decode,
                        {"h100-sxm", "sglang", false, "16-bit"});
    EXPECT_NE(model::band_text(other).find("engine: vllm, not sglang"), std::string::npos);
    EXPECT_EQ(model::precision_class(16), "16-bit");
    EXPECT_EQ(model::precision_class(8), "8-bit");
    EXPECT_EQ(model::precision_class(4.25), "4-bit");
}

TEST(ErrorBands, YamlReadsBackToTheSameBands) {
    model::ErrorBands bands;
    bands.generated_by = "gpuplan calib validate \"x\"";
    bands.bands = calib::measure_bands({sample(0.1), sample(-0.3)});
    bands.bands[0].fitted_on = true;
    const fs::path dir = temp_dir("yaml");
    hwdb::write_text_file(dir / "error_bands.yaml", hwdb::error_bands_yaml(bands));
    EXPECT_EQ(hwdb::read_error_bands_file(dir / "error_bands.yaml"), bands);
    EXPECT_EQ(hwdb::load_error_bands({fs::path("/nonexistent-folder"), dir}), bands);
    hwdb::write_text_file(dir / "error_bands.yaml",
                          "schema: 1\nerror_bands:\n  bands:\n    - figure: tpot\n      gpu: x\n"
                          "      engine: vllm\n      precision: 12-bit\n");
    try {
        (void)hwdb::read_error_bands_file(dir / "error_bands.yaml");
        FAIL() << "a bad precision class was accepted";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("error_bands.yaml:7"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("use 16-bit, 8-bit or 4-bit"), std::string::npos);
    }
    fs::remove_all(dir);
}

TEST(ErrorBands, CalibValidateWritesTheBandsItPrints) {
    const fs::path dir = temp_dir("cli");
    const std::string csv =
        std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/calib/splitwise_tiny";
    const auto r = test::run_cli("calib validate " + csv + " --write-bands " +
                                 (dir / "bands.yaml").string() + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const model::ErrorBands file = hwdb::read_error_bands_file(dir / "bands.yaml");
    nlohmann::json rows;
    for (const auto& item : nlohmann::json::parse(r.out)) {
        if (item.contains("error_bands")) {
            rows = item["error_bands"];
        }
    }
    // Three H100 rows and one A100 row, every prompt time above the datasheet-peak floor: TTFT
    // (prefill), TPOT and throughput (decode) for each GPU, 6 bands.
    ASSERT_EQ(file.bands.size(), 6u);
    ASSERT_EQ(rows.size(), file.bands.size());
    ASSERT_FALSE(file.bands.empty());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const model::MeasuredBand& b = file.bands[i];
        EXPECT_EQ(rows[i]["figure"], model::name_of(b.figure));
        EXPECT_EQ(rows[i]["gpu"], b.cls.gpu);
        EXPECT_EQ(rows[i]["regime"], model::name_of(b.cls.regime));
        EXPECT_EQ(rows[i]["points"], b.points);
        EXPECT_DOUBLE_EQ(rows[i]["p90"].get<double>(), b.p90);
        EXPECT_DOUBLE_EQ(rows[i]["mean_signed"].get<double>(), b.mean_signed);
        EXPECT_FALSE(b.fitted_on);
    }
    // The Markdown table (docs/validation.md) has one row per band, after header and rule.
    const auto md = test::run_cli("calib validate " + csv + " --markdown");
    ASSERT_EQ(md.exit_code, 0) << md.out;
    EXPECT_EQ(std::count(md.out.begin(), md.out.end(), '\n'),
              static_cast<long>(file.bands.size() + 2));
    const auto both = test::run_cli("calib validate " + csv + " --markdown --json");
    EXPECT_EQ(both.exit_code, 2) << both.out;
    EXPECT_NE(both.out.find("pass one of them"), std::string::npos) << both.out;
    fs::remove_all(dir);
}

TEST(ErrorBands, ShippedBandsAreTheMeasurementOfTheValidationSets) {
    const fs::path data(GPUPLAN_SHARED_DATA_DIR);
    if (!fs::exists(data / "splitwise/data/perf_model.csv") ||
        !fs::exists(data / "llmservingsim/bench/examples")) {
        GTEST_SKIP() << "no " << data << " (../shared/data is not part of a clone)";
    }
    const fs::path dir = temp_dir("shipped");
    const auto r =
        test::run_cli("calib validate " + (data / "splitwise").string() + " " +
                      (data / "llmservingsim").string() + " " +
                      (fs::path(GPUPLAN_SOURCE_DIR) / "validation/published-training").string() +
                      " --markdown --write-bands " + (dir / "bands.yaml").string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const model::ErrorBands fresh = hwdb::read_error_bands_file(dir / "bands.yaml");
    const model::ErrorBands shipped =
        hwdb::read_error_bands_file(fs::path(GPUPLAN_SOURCE_DIR) / "hwdb/error_bands.yaml");
    ASSERT_EQ(fresh.bands.size(), shipped.bands.size());
    for (std::size_t i = 0; i < fresh.bands.size(); ++i) {
        EXPECT_EQ(fresh.bands[i].cls, shipped.bands[i].cls) << i;
        EXPECT_EQ(fresh.bands[i].points, shipped.bands[i].points) << i;
        EXPECT_NEAR(fresh.bands[i].p90, shipped.bands[i].p90, 1e-9) << i;
        EXPECT_NEAR(fresh.bands[i].mean_signed, shipped.bands[i].mean_signed, 1e-9) << i;
    }
    fs::remove_all(dir);
}

TEST(ErrorBands, EstimateAndTrainPrintTheShippedBandOfTheirClassOrTheDefault) {
    const fs::path root(GPUPLAN_SOURCE_DIR);
    const model::ErrorBands shipped = hwdb::read_error_bands_file(root / "hwdb/error_bands.yaml");
    const auto json_of = [](const std::string& args) {
        const auto r = test::run_cli(args);
        EXPECT_EQ(r.exit_code, 0) << r.out;
        return nlohmann::json::parse(r.out);
    };
    // quickstart: Llama-3.1-8B, bf16 weights, vLLM on one H100-SXM.
    const nlohmann::json h100 =
        json_of("estimate " + (root / "examples/quickstart.yaml").string() + " --json");
    const model::BandQuery q{"h100-sxm", "vllm", false, "16-bit"};
    const model::FigureBand tpot =
        model::band_for(shipped, model::BandFigure::Tpot, model::BandRegime::Decode, q);
    ASSERT_TRUE(tpot.validated);
    EXPECT_DOUBLE_EQ(h100["bands"]["tpot"]["p90"].get<double>(), tpot.p90);
    EXPECT_EQ(h100["bands"]["tpot"]["source"], tpot.source);
    const model::FigureBand ttft =
        model::band_for(shipped, model::BandFigure::Ttft, model::BandRegime::Prefill, q);
    EXPECT_DOUBLE_EQ(h100["bands"]["ttft"]["p90"].get<double>(), ttft.p90);
    // The same scenario on a GPU no validation set covers: the labelled default on every figure.
    const nlohmann::json mi300 = json_of(
        "estimate " + (root / "examples/quickstart.yaml").string() + " --gpu mi300x --json");
    for (const auto& [key, band] : mi300["bands"].items()) {
        EXPECT_FALSE(band["validated"].get<bool>()) << key;
        EXPECT_DOUBLE_EQ(band["p90"].get<double>(), model::kUnvalidatedBand) << key;
        EXPECT_EQ(band["source"], "default: no validation for this class") << key;
    }
    // Training steps on H100 in 16-bit: the published Llama 3 runs (validation/published-training).
    const nlohmann::json train =
        json_of("train " + (root / "examples/failures-training-llama70b-1024xh100.yaml").string() +
                " --json");
    const model::FigureBand step =
        model::band_for(shipped, model::BandFigure::TrainingStep, model::BandRegime::Training,
                        {"h100-sxm", "training", false, "16-bit"});
    ASSERT_TRUE(step.validated);
    EXPECT_TRUE(train["step_time_band"]["validated"].get<bool>());
    EXPECT_DOUBLE_EQ(train["step_time_band"]["p90"].get<double>(), step.p90);
    // A training class without a published run (MoE on H100): the labelled default.
    const model::FigureBand moe =
        model::band_for(shipped, model::BandFigure::TrainingStep, model::BandRegime::Training,
                        {"h100-sxm", "training", true, "16-bit"});
    EXPECT_FALSE(moe.validated);
    EXPECT_DOUBLE_EQ(moe.p90, model::kUnvalidatedBand);
}

TEST(ErrorBands, BadBandsFileInAnHwdbFolderExitsTwoNamingTheLine) {
    const fs::path dir = temp_dir("badhwdb");
    hwdb::write_text_file(dir / "error_bands.yaml",
                          "schema: 1\nerror_bands:\n  bands:\n    - figure: latency\n");
    const auto r = test::run_cli("--hwdb " + dir.string() + " estimate " +
                                 std::string(GPUPLAN_SOURCE_DIR) + "/examples/quickstart.yaml");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("error_bands.yaml:4"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("unknown value 'latency'"), std::string::npos) << r.out;
    fs::remove_all(dir);
}
