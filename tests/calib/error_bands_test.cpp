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

// No family: the hand-made sets below are per GPU unless a test gives one.
const model::ValidationClass kH100Decode{
    "h100-sxm", "vllm", false, "16-bit", model::BandRegime::Decode, ""};

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
    const model::BandQuery h100{"h100-sxm", "vllm", false, "16-bit", "hopper"};
    // Nothing for another GPU, another regime or a fitted-on set.
    for (const model::BandQuery& q :
         {model::BandQuery{"b200", "vllm", false, "16-bit", "blackwell"}, h100}) {
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
    EXPECT_EQ(model::band_text(b), "±30 % (P90 of 2 whole-step validation points measured on "
                                   "h100-sxm, engine vllm, dense 16-bit; hand-made set)");
    // Another engine's whole-step band is used and says so.
    const model::FigureBand other =
        model::band_for(bands, model::BandFigure::Tpot, model::BandRegime::Decode,
                        {"h100-sxm", "sglang", false, "16-bit", "hopper"});
    EXPECT_NE(model::band_text(other).find("engine vllm (not sglang)"), std::string::npos);
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
    // (prefill), TPOT and throughput (decode) for each GPU, 6 bands, then the same 6 for the
    // families (hopper, ampere), each pooling its one measured GPU.
    ASSERT_EQ(file.bands.size(), 12u);
    for (std::size_t i = 0; i < 6; ++i) {
        const model::MeasuredBand& g = file.bands[i];
        const model::MeasuredBand& f = file.bands[i + 6];
        EXPECT_FALSE(g.cls.gpu.empty());
        EXPECT_TRUE(f.cls.gpu.empty());
        EXPECT_EQ(f.cls.family, g.cls.family);
        EXPECT_EQ(f.measured_on, std::vector<std::string>{g.cls.gpu});
        EXPECT_EQ(f.points, g.points);
        EXPECT_DOUBLE_EQ(f.p90, g.p90);
    }
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
        EXPECT_EQ(fresh.bands[i].measured_on, shipped.bands[i].measured_on) << i;
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
    const model::BandQuery q{"h100-sxm", "vllm", false, "16-bit", "hopper"};
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
                        {"h100-sxm", "training", false, "16-bit", "hopper"});
    ASSERT_TRUE(step.validated);
    EXPECT_TRUE(train["step_time_band"]["validated"].get<bool>());
    EXPECT_DOUBLE_EQ(train["step_time_band"]["p90"].get<double>(), step.p90);
    // A training class without a published run (MoE on H100): the labelled default.
    const model::FigureBand moe =
        model::band_for(shipped, model::BandFigure::TrainingStep, model::BandRegime::Training,
                        {"h100-sxm", "training", true, "16-bit", "hopper"});
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

namespace {

model::ValidationClass hopper_decode(const std::string& gpu) {
    model::ValidationClass c = kH100Decode;
    c.gpu = gpu;
    c.family = "hopper";
    return c;
}

/// Hand-made bands: H100 {.10, -.20, .30, .15, -.05, .45} and H800 {.05, -.35, .25, 0}, both
/// hopper, vLLM, dense, 16-bit, decode TPOT.
model::ErrorBands hopper_bands(model::BandRegime regime = model::BandRegime::Decode) {
    std::vector<calib::BandSample> s;
    for (const double e : {0.10, -0.20, 0.30, 0.15, -0.05, 0.45}) {
        s.push_back(sample(e, hopper_decode("h100-sxm")));
    }
    for (const double e : {0.05, -0.35, 0.25, 0.0}) {
        s.push_back(sample(e, hopper_decode("h800")));
    }
    for (auto& x : s) {
        x.cls.regime = regime;
    }
    model::ErrorBands bands;
    bands.bands = calib::measure_bands(s);
    return bands;
}

} // namespace

TEST(ErrorBands, FamilyBandPoolsEveryMeasuredGpuOfTheFamily) {
    const model::ErrorBands bands = hopper_bands();
    // Per GPU, then the family aggregate (gpu empty).
    ASSERT_EQ(bands.bands.size(), 3u);
    // H100: |e| sorted .05 .10 .15 .20 .30 .45, nearest rank ceil(0.9 x 6) = 6th: .45; mean
    // (.10 - .20 + .30 + .15 - .05 + .45) / 6 = .75 / 6 = .125.
    EXPECT_EQ(bands.bands[0].cls.gpu, "h100-sxm");
    EXPECT_EQ(bands.bands[0].points, 6);
    EXPECT_DOUBLE_EQ(bands.bands[0].p90, 0.45);
    EXPECT_NEAR(bands.bands[0].mean_signed, 0.125, 1e-15);
    EXPECT_EQ(bands.bands[0].measured_on, std::vector<std::string>{"h100-sxm"});
    // H800: |e| 0 .05 .25 .35, ceil(3.6) = 4th: .35; mean -.05 / 4.
    EXPECT_DOUBLE_EQ(bands.bands[1].p90, 0.35);
    EXPECT_NEAR(bands.bands[1].mean_signed, -0.0125, 1e-15);
    // Hopper: the 10 points pooled, |e| 0 .05 .05 .10 .15 .20 .25 .30 .35 .45, ceil(9) = 9th:
    // .35 (narrower than H100's own .45); mean (.75 - .05) / 10 = .07.
    const model::MeasuredBand& f = bands.bands[2];
    EXPECT_TRUE(f.cls.gpu.empty());
    EXPECT_EQ(f.cls.family, "hopper");
    EXPECT_EQ(f.points, 10);
    EXPECT_DOUBLE_EQ(f.p90, 0.35);
    EXPECT_NEAR(f.mean_signed, 0.07, 1e-15);
    EXPECT_EQ(f.measured_on, (std::vector<std::string>{"h100-sxm", "h800"}));
    // The YAML keeps the family row and its GPUs.
    const fs::path dir = temp_dir("family");
    hwdb::write_text_file(dir / "error_bands.yaml", hwdb::error_bands_yaml(bands));
    EXPECT_EQ(hwdb::read_error_bands_file(dir / "error_bands.yaml"), bands);
    fs::remove_all(dir);
}

TEST(ErrorBands, LookupTakesTheSameGpuThenItsFamilyAndSaysWhich) {
    const model::ErrorBands bands = hopper_bands();
    const auto tpot = [&](const model::BandQuery& q) {
        return model::band_for(bands, model::BandFigure::Tpot, model::BandRegime::Decode, q);
    };
    // The same GPU: its own band.
    const model::FigureBand h100 = tpot({"h100-sxm", "vllm", false, "16-bit", "hopper"});
    EXPECT_DOUBLE_EQ(h100.p90, 0.45);
    EXPECT_EQ(h100.source, "P90 of 6 whole-step validation points measured on h100-sxm, engine "
                           "vllm, dense 16-bit; hand-made set");
    // An H200 (no band of its own): the hopper aggregate, not widened, named as such.
    const model::FigureBand h200 = tpot({"h200-sxm", "vllm", false, "16-bit", "hopper"});
    EXPECT_TRUE(h200.validated);
    EXPECT_DOUBLE_EQ(h200.p90, 0.35);
    EXPECT_EQ(h200.points, 10);
    EXPECT_EQ(model::band_text(h200),
              "±35 % (P90 of 10 whole-step validation points measured on h100-sxm, h800, same "
              "family (hopper), engine vllm, dense 16-bit; hand-made set)");
    // Another engine on a whole step: borrowed, and the text says with which engine.
    const model::FigureBand sglang = tpot({"h200-sxm", "sglang", false, "16-bit", "hopper"});
    EXPECT_DOUBLE_EQ(sglang.p90, 0.35);
    EXPECT_NE(sglang.source.find("engine vllm (not sglang)"), std::string::npos);
    // Another family, dense/MoE or weight width: the labelled default.
    for (const model::BandQuery& q :
         {model::BandQuery{"b200", "vllm", false, "16-bit", "blackwell"},
          model::BandQuery{"h200-sxm", "vllm", true, "16-bit", "hopper"},
          model::BandQuery{"h200-sxm", "vllm", false, "4-bit", "hopper"},
          model::BandQuery{"h200-sxm", "vllm", false, "16-bit", ""}}) {
        const model::FigureBand b = tpot(q);
        EXPECT_FALSE(b.validated) << q.gpu;
        EXPECT_DOUBLE_EQ(b.p90, model::kUnvalidatedBand);
        EXPECT_EQ(b.source, "default: no validation for this class");
    }
    // A GPU's band measured with another engine comes before its family's with this engine.
    model::ErrorBands more = bands;
    model::MeasuredBand own = bands.bands[0];
    own.cls.gpu = "h200-sxm";
    own.cls.engine = "unstated";
    own.measured_on = {"h200-sxm"};
    own.p90 = 0.2;
    more.bands.push_back(own);
    const model::FigureBand mine =
        model::band_for(more, model::BandFigure::Tpot, model::BandRegime::Decode,
                        {"h200-sxm", "vllm", false, "16-bit", "hopper"});
    EXPECT_DOUBLE_EQ(mine.p90, 0.2);
    EXPECT_NE(mine.source.find("measured on h200-sxm, engine unstated (not vllm)"),
              std::string::npos)
        << mine.source;
}

TEST(ErrorBands, ServingBandsAreNotBorrowedAcrossEngines) {
    const model::ErrorBands bands = hopper_bands(model::BandRegime::Serving);
    const auto tpot = [&](const model::BandQuery& q) {
        return model::band_for(bands, model::BandFigure::Tpot, model::BandRegime::Serving, q);
    };
    EXPECT_DOUBLE_EQ(tpot({"h200-sxm", "vllm", false, "16-bit", "hopper"}).p90, 0.35);
    const model::FigureBand trt = tpot({"h200-sxm", "tensorrt-llm", false, "16-bit", "hopper"});
    EXPECT_FALSE(trt.validated);
    EXPECT_DOUBLE_EQ(trt.p90, model::kUnvalidatedBand);
    EXPECT_EQ(trt.source, "default: no validation for this class (serving runs were measured with "
                          "vllm, not tensorrt-llm; a scheduler's error is not borrowed)");
}

// The shipped bands: an H200 scenario carries the hopper family's band (measured on H100-SXM)
// in estimate's --json and text, a B200 the default, an H800 dense training run the hopper
// training band; each --json band equals model::band_for's.
TEST(ErrorBands, ShippedBandsFallBackToTheFamilyInEveryCommand) {
    const fs::path root(GPUPLAN_SOURCE_DIR);
    const model::ErrorBands shipped = hwdb::read_error_bands_file(root / "hwdb/error_bands.yaml");
    const std::string quickstart = (root / "examples/quickstart.yaml").string();
    const auto run_json = [](const std::string& args) {
        const auto r = test::run_cli(args);
        EXPECT_EQ(r.exit_code, 0) << r.out;
        return nlohmann::json::parse(r.out);
    };
    const model::BandQuery h200{"h200-sxm", "vllm", false, "16-bit", "hopper"};
    const nlohmann::json est = run_json("estimate " + quickstart + " --gpu h200-sxm --json");
    for (const model::EstimateFigureBand& eb : model::kEstimateFigureBands) {
        const model::FigureBand b = model::band_for(shipped, eb.figure, eb.regime, h200);
        const nlohmann::json& j = est["bands"][eb.key];
        EXPECT_EQ(j["validated"].get<bool>(), b.validated) << eb.key;
        EXPECT_DOUBLE_EQ(j["p90"].get<double>(), b.p90) << eb.key;
        EXPECT_EQ(j["points"].get<int>(), b.points) << eb.key;
        EXPECT_EQ(j["source"], b.source) << eb.key;
    }
    // TPOT is a whole decode step: SplitwiseSim's H100 steps, through the hopper family.
    const std::string tpot = est["bands"]["tpot"]["source"];
    EXPECT_TRUE(est["bands"]["tpot"]["validated"].get<bool>());
    EXPECT_NE(tpot.find("measured on h100-sxm, same family (hopper), engine unstated (not vllm)"),
              std::string::npos)
        << tpot;
    const auto text = test::run_cli("estimate " + quickstart + " --gpu h200-sxm");
    ASSERT_EQ(text.exit_code, 0) << text.out;
    EXPECT_NE(text.out.find(tpot), std::string::npos) << text.out;
    // B200: no Blackwell GPU has a whole-step or serving set.
    const nlohmann::json b200 = run_json("estimate " + quickstart + " --gpu b200 --json");
    for (const auto& [key, band] : b200["bands"].items()) {
        EXPECT_FALSE(band["validated"].get<bool>()) << key;
        EXPECT_EQ(band["source"], "default: no validation for this class") << key;
    }
    // Training on H800, dense 16-bit: the hopper band measured on the H100 Llama 3 runs.
    const std::string h800 = "train --model llama-3.1-8b --gpu h800 --gpus 8 --tokens 1e9 "
                             "--global-batch 512 --seq-len 4096";
    const nlohmann::json train = run_json(h800 + " --json");
    const model::FigureBand step =
        model::band_for(shipped, model::BandFigure::TrainingStep, model::BandRegime::Training,
                        {"h800", "training", false, "16-bit", "hopper"});
    ASSERT_TRUE(step.validated);
    EXPECT_NE(step.source.find("measured on h100-sxm, same family (hopper), dense 16-bit"),
              std::string::npos)
        << step.source;
    EXPECT_DOUBLE_EQ(train["step_time_band"]["p90"].get<double>(), step.p90);
    EXPECT_EQ(train["step_time_band"]["source"], step.source);
    const auto train_text = test::run_cli(h800);
    EXPECT_NE(train_text.out.find(step.source), std::string::npos) << train_text.out;
}

// A plan row takes the band of its own GPU's family, not the scenario GPU's: plan-search (an
// H100 scenario) with L40S as its only candidate prints the ada serving band (the RTX 4090 vLLM
// run) beside the row's tightest SLO latency.
TEST(ErrorBands, PlanRowsTakeTheirOwnGpusFamily) {
    const fs::path root(GPUPLAN_SOURCE_DIR);
    std::string yaml = hwdb::read_text_file(root / "examples/plan-search.yaml", "scenario");
    const auto replace = [&](const std::string& from, const std::string& to) {
        const auto at = yaml.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        yaml.replace(at, from.size(), to);
    };
    replace("    - accelerator: h100-sxm\n    - accelerator: h200-sxm\n"
            "    - accelerator: a100-sxm-80gb\n",
            "");
    replace("weights: [bf16, fp8]", "weights: [bf16]");
    replace("kv_cache: [bf16, fp8]", "kv_cache: [bf16]");
    const fs::path dir = temp_dir("plan");
    hwdb::write_text_file(dir / "plan.yaml", yaml);
    const auto r = test::run_cli("plan " + (dir / "plan.yaml").string());
    const model::ErrorBands shipped = hwdb::read_error_bands_file(root / "hwdb/error_bands.yaml");
    const model::FigureBand ada =
        model::band_for(shipped, model::BandFigure::Ttft, model::BandRegime::Serving,
                        {"l40s", "vllm", false, "16-bit", "ada"});
    ASSERT_TRUE(ada.validated);
    EXPECT_NE(ada.source.find("measured on rtx-4090, same family (ada), engine vllm"),
              std::string::npos)
        << ada.source;
    EXPECT_NE(r.out.find("l40s tp"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ttft"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(ada.source), std::string::npos) << r.out;
    fs::remove_all(dir);
}
