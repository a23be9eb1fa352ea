// Published training runs as a validation set (hwdb/training_runs_io.hpp,
// calib/training_runs.hpp): the runs.yaml reader and its errors, the step-time error of each
// kind of published figure by hand, the shipped validation/published-training set replayed by
// `calib validate` into the training rows of hwdb/error_bands.yaml, and `train` printing the
// measured band. No ../shared data is needed: the published figures are in the repository.
#include "calib/training_runs.hpp"
#include "hwdb/error_bands_io.hpp"
#include "hwdb/file_io.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"
#include "model/training.hpp"
#include "tests/support/run_cli.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace gpuplan;

namespace {

namespace fs = std::filesystem;

const fs::path kRoot(GPUPLAN_SOURCE_DIR);
const fs::path kSet = kRoot / "validation/published-training";

fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() /
                       ("gpuplan_train_runs_" + name + "_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

const hwdb::Database& db() {
    static const hwdb::Database d = hwdb::Database::load({kRoot / "hwdb"});
    return d;
}

std::optional<model::EfficiencyProfile> no_profile(const model::AcceleratorSpec&) {
    return std::nullopt;
}

hwdb::PublishedTrainingRun run_of(const std::string& scenario, hwdb::PublishedFigure f,
                                  double value) {
    hwdb::PublishedTrainingRun r;
    r.scenario = kSet / scenario;
    r.source = "test";
    r.figure = f;
    r.value = value;
    return r;
}

} // namespace

TEST(TrainingRuns, ReaderReadsEachFigureAndNamesTheLineOfAMistake) {
    const fs::path dir = temp_dir("reader");
    hwdb::write_text_file(dir / "runs.yaml",
                          "schema: 1\nset: \"s\"\nruns:\n"
                          "  - scenario: a.yaml\n    source: \"p\"\n    search: [micro_batch]\n"
                          "    published: {step_time: 1500 ms}\n"
                          "  - scenario: b.yaml\n    source: \"q\"\n    published: {mfu: 0.4}\n");
    const hwdb::PublishedTrainingRuns r = hwdb::read_training_runs_file(dir / "runs.yaml");
    ASSERT_EQ(r.runs.size(), 2u);
    EXPECT_EQ(r.set, "s");
    EXPECT_EQ(r.runs[0].scenario, dir / "a.yaml");
    EXPECT_EQ(r.runs[0].figure, hwdb::PublishedFigure::StepTime);
    EXPECT_DOUBLE_EQ(r.runs[0].value, 1.5);
    EXPECT_EQ(r.runs[0].search, std::vector<std::string>{"micro_batch"});
    EXPECT_EQ(r.runs[1].figure, hwdb::PublishedFigure::Mfu);
    EXPECT_DOUBLE_EQ(r.runs[1].value, 0.4);
    EXPECT_EQ(calib::find_training_runs(dir), dir / "runs.yaml");
    EXPECT_FALSE(calib::find_training_runs(dir / "nothing-here"));
    for (const auto& [bad, what] : std::vector<std::pair<std::string, std::string>>{
             {"    published: {mfu: 0.4, gpu_hours: 10}\n", "exactly one positive"},
             {"    published: {mfu: 0.4}\n    search: [layers]\n", "unknown layout dimension"},
             {"    published: {mfu: 0.4}\n    publishd: 1\n", "publishd"}}) {
        hwdb::write_text_file(dir / "runs.yaml", "schema: 1\nset: s\nruns:\n"
                                                 "  - scenario: a.yaml\n    source: p\n" +
                                                     bad);
        try {
            (void)hwdb::read_training_runs_file(dir / "runs.yaml");
            FAIL() << "accepted: " << bad;
        } catch (const ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find("runs.yaml:"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    }
    fs::remove_all(dir);
}

// The step-time error of each published figure, from the planner's own estimate of the GPT-3
// run: a time (step, GPU-hours) gives predicted / published − 1, a rate (TFLOP/s per GPU, MFU)
// published / predicted − 1, so a model 10 % slow is +10 % whichever the paper reports.
TEST(TrainingRuns, StepErrorOfEachFigureIsTheStepTimeError) {
    const model::Scenario s = hwdb::load_scenario(kSet / "gpt3-175b-1024xa100.yaml", db());
    const model::TrainingEstimate e =
        model::estimate_training(s.deployment, *s.training, model::default_profile());
    const double step = e.result.step.total.si();
    const double tflops = e.result.hardware_flops.si() / (step * 1024) / 1e12;
    const auto replay = [&](hwdb::PublishedFigure f, double v) {
        return calib::replay_training_run(run_of("gpt3-175b-1024xa100.yaml", f, v), db(),
                                          no_profile);
    };
    const auto t = replay(hwdb::PublishedFigure::StepTime, step / 1.1);
    EXPECT_NEAR(t.step_error, 0.1, 1e-12);
    const auto f = replay(hwdb::PublishedFigure::TflopsPerGpu, tflops * 1.1);
    EXPECT_NEAR(f.predicted, tflops, 1e-9 * tflops);
    EXPECT_NEAR(f.step_error, 0.1, 1e-12);
    const auto m = replay(hwdb::PublishedFigure::Mfu, e.result.mfu * 1.1);
    EXPECT_NEAR(m.step_error, 0.1, 1e-12);
    const auto h = replay(hwdb::PublishedFigure::GpuHours, e.result.gpu_hours / 1.1);
    EXPECT_NEAR(h.step_error, 0.1, 1e-12);
    EXPECT_EQ(t.cls, (model::ValidationClass{"a100-sxm-80gb", "training", false, "16-bit",
                                             model::BandRegime::Training, "ampere"}));
    EXPECT_EQ(t.gpus, 1024);
    EXPECT_FALSE(t.searched);
    const auto samples = calib::training_band_samples({t, f}, "set");
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[0].figure, model::BandFigure::TrainingStep);
    EXPECT_EQ(samples[0].level, "training-run");
    EXPECT_FALSE(samples[0].fitted_on);
}

// A run that lists search dimensions keeps the others at the scenario's values.
TEST(TrainingRuns, SearchChoosesOnlyTheListedDimensions) {
    hwdb::PublishedTrainingRun r =
        run_of("korthikanti-175b-full.yaml", hwdb::PublishedFigure::StepTime, 18.13);
    r.search = {"micro_batch", "virtual_stages"};
    const auto c = calib::replay_training_run(r, db(), no_profile);
    EXPECT_TRUE(c.searched);
    EXPECT_EQ(c.layout.rfind("tp 8 pp 8 dp 1 cp 1 ep 1 zero 0 mb ", 0), 0u) << c.layout;
    EXPECT_NE(c.layout.find(" full"), std::string::npos) << c.layout;
}

// The training rows of the shipped hwdb/error_bands.yaml are what `calib validate` measures on
// the repository's published runs now, and `train` prints that band with its source.
TEST(TrainingRuns, ShippedTrainingBandsAreTheMeasurementOfThePublishedRuns) {
    const fs::path dir = temp_dir("shipped");
    const auto r = test::run_cli("calib validate " + kSet.string() + " --markdown --write-bands " +
                                 (dir / "bands.yaml").string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const model::ErrorBands fresh = hwdb::read_error_bands_file(dir / "bands.yaml");
    const model::ErrorBands shipped = hwdb::read_error_bands_file(kRoot / "hwdb/error_bands.yaml");
    std::vector<model::MeasuredBand> shipped_training;
    for (const auto& b : shipped.bands) {
        if (b.cls.regime == model::BandRegime::Training) {
            shipped_training.push_back(b);
        }
    }
    ASSERT_FALSE(fresh.bands.empty());
    ASSERT_EQ(fresh.bands.size(), shipped_training.size());
    for (std::size_t i = 0; i < fresh.bands.size(); ++i) {
        EXPECT_EQ(fresh.bands[i].cls, shipped_training[i].cls) << i;
        EXPECT_EQ(fresh.bands[i].points, shipped_training[i].points) << i;
        EXPECT_NEAR(fresh.bands[i].p90, shipped_training[i].p90, 1e-9) << i;
        EXPECT_NEAR(fresh.bands[i].mean_signed, shipped_training[i].mean_signed, 1e-9) << i;
        EXPECT_EQ(fresh.bands[i].level, "training-run");
        EXPECT_FALSE(fresh.bands[i].fitted_on);
    }
    // train on an A100 GPT-3 layout: the measured A100 training band, with its source.
    const model::FigureBand a100 =
        model::band_for(shipped, model::BandFigure::TrainingStep, model::BandRegime::Training,
                        {"a100-sxm-80gb", "training", false, "16-bit", "ampere"});
    ASSERT_TRUE(a100.validated);
    const auto j = test::run_cli(
        "train " + (kRoot / "examples/train-gpt3-1024xa100.yaml").string() + " --json");
    ASSERT_EQ(j.exit_code, 0) << j.out;
    const auto band = nlohmann::json::parse(j.out)["step_time_band"];
    EXPECT_TRUE(band["validated"].get<bool>());
    EXPECT_DOUBLE_EQ(band["p90"].get<double>(), a100.p90);
    EXPECT_EQ(band["source"], a100.source);
    EXPECT_NE(a100.source.find("training-run validation points measured on a100-sxm-80gb, dense "
                               "16-bit; published training runs"),
              std::string::npos)
        << a100.source;
    const auto text =
        test::run_cli("train " + (kRoot / "examples/train-gpt3-1024xa100.yaml").string());
    const std::string cell =
        "±" + std::to_string(static_cast<int>(std::lround(a100.p90 * 100))) + " %";
    EXPECT_NE(text.out.find("(band " + cell), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(a100.source), std::string::npos) << text.out;
    fs::remove_all(dir);
}
