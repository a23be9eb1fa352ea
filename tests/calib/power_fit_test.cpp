// Fitting the power model to measured samples: synthetic samples made by the model from known
// coefficients are recovered (exactly without noise, within a stated tolerance with noise),
// the fixture CSVs in tests/fixtures/calib/power parse, bad input is located at
// file:line:column, the YAML reads back through the scenario loader, and the CLI runs.
#include "calib/power_fit.hpp"

#include "hwdb/database.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

using namespace gpuplan;
using calib::PowerSample;

namespace {

std::string fx(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/calib/power/" + rel;
}

const hwdb::Database& db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

calib::GpuResolver resolver() {
    return [](std::string_view n) { return db().find_accelerator(n); };
}

bool has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
}

// The coefficients synthetic samples are made with (H100-like: 700 W board).
constexpr double kBoard = 700;
constexpr double kResident = 131.5;
constexpr double kAc = 1.62;
constexpr double kAm = 0.47;

// A small deterministic generator (same numbers on every standard library): 64-bit LCG and
// Box-Muller.
struct Rng {
    std::uint64_t s = 0x9e3779b97f4a7c15ULL;
    double uniform() {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(s >> 11) * (1.0 / 9007199254740992.0);
    }
    double normal() {
        const double u1 = 1.0 - uniform();
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    }
};

calib::PowerFitResult truth() {
    calib::PowerFitResult r;
    r.board_w = kBoard;
    r.resident_w = kResident;
    r.compute_weight = kAc;
    r.memory_weight = kAm;
    return r;
}

// n samples spread over utilizations and (when `clocks`) core clocks, power from the model,
// plus Gaussian noise of `sigma` watts.
std::vector<PowerSample> synthetic(int n, double sigma, bool clocks,
                                   const calib::PowerFitOptions& o) {
    Rng rng;
    std::vector<PowerSample> v;
    const auto t = truth();
    for (int i = 0; i < n; ++i) {
        PowerSample s;
        s.gpu = "h100-sxm";
        s.u_compute = i % 3 == 0 ? 0.0 : 0.55 * rng.uniform();
        s.u_memory = i % 5 == 0 ? 0.0 : 0.95 * rng.uniform();
        s.clock = clocks ? 0.5 + 0.5 * rng.uniform() : 1.0;
        s.power_w = calib::predicted_power(s, t, o) + sigma * rng.normal();
        s.where = "synthetic:" + std::to_string(i + 1);
        v.push_back(s);
    }
    return v;
}

calib::PowerFitOptions options() {
    calib::PowerFitOptions o;
    o.board_power_w = kBoard;
    return o;
}

} // namespace

TEST(PowerFit, RecoversKnownCoefficientsWithoutNoise) {
    const auto o = options();
    const auto samples = synthetic(60, 0.0, false, o);
    const auto r = calib::fit_power(samples, o);
    EXPECT_TRUE(r.resident_fitted);
    EXPECT_NEAR(r.resident_w, kResident, 1e-6);
    EXPECT_NEAR(r.compute_weight, kAc, 1e-6);
    EXPECT_NEAR(r.memory_weight, kAm, 1e-6);
    EXPECT_GT(r.saturated, 0); // some samples hit the board power and are left out
    EXPECT_EQ(r.fitted + r.saturated, 60);
    EXPECT_LT(r.rms_w, 1e-6);
    EXPECT_TRUE(r.notes.empty());
}

TEST(PowerFit, RecoversKnownCoefficientsAtReducedClocks) {
    const auto o = options();
    const auto samples = synthetic(60, 0.0, true, o);
    const auto r = calib::fit_power(samples, o);
    EXPECT_NEAR(r.resident_w, kResident, 1e-6);
    EXPECT_NEAR(r.compute_weight, kAc, 1e-6);
    EXPECT_NEAR(r.memory_weight, kAm, 1e-6);
}

// 400 samples with 10 W of Gaussian noise (NVML's instantaneous reading scatters by about that):
// P_res within 4 W, the weights within 0.04, the residual RMS near the noise.
TEST(PowerFit, RecoversKnownCoefficientsWithNoise) {
    const auto o = options();
    const auto samples = synthetic(400, 10.0, true, o);
    const auto r = calib::fit_power(samples, o);
    RecordProperty("resident_w", std::to_string(r.resident_w));
    RecordProperty("compute_weight", std::to_string(r.compute_weight));
    RecordProperty("memory_weight", std::to_string(r.memory_weight));
    RecordProperty("fit_rms_w", std::to_string(r.fit_rms_w));
    EXPECT_NEAR(r.resident_w, kResident, 4.0);
    EXPECT_NEAR(r.compute_weight, kAc, 0.04);
    EXPECT_NEAR(r.memory_weight, kAm, 0.04);
    EXPECT_NEAR(r.fit_rms_w, 10.0, 1.5);
}

TEST(PowerFit, FixedResidentPowerAndHeldWeights) {
    auto o = options();
    o.resident_power_w = kResident;
    auto samples = synthetic(40, 0.0, false, o);
    auto r = calib::fit_power(samples, o);
    EXPECT_FALSE(r.resident_fitted);
    EXPECT_DOUBLE_EQ(r.resident_w, kResident);
    EXPECT_NEAR(r.compute_weight, kAc, 1e-9);
    EXPECT_NEAR(r.memory_weight, kAm, 1e-9);

    // Memory-only samples made with the default a_c: a_m and P_res are fitted, a_c is held.
    calib::PowerFitOptions o2 = options();
    calib::PowerFitResult t = truth();
    t.compute_weight = model::PowerModel{}.compute_weight;
    std::vector<PowerSample> mem;
    for (int i = 0; i <= 10; ++i) {
        PowerSample s;
        s.u_memory = 0.09 * i;
        s.power_w = calib::predicted_power(s, t, o2);
        mem.push_back(s);
    }
    r = calib::fit_power(mem, o2);
    EXPECT_NEAR(r.resident_w, kResident, 1e-6);
    EXPECT_NEAR(r.memory_weight, kAm, 1e-6);
    EXPECT_DOUBLE_EQ(r.compute_weight, model::PowerModel{}.compute_weight);
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_TRUE(has(r.notes[0], "compute_weight held")) << r.notes[0];
}

TEST(PowerFit, TooFewSamplesOrNoBoardPowerIsAnInputError) {
    auto o = options();
    std::vector<PowerSample> two(2);
    two[0].u_compute = 0.1;
    two[0].power_w = 200;
    two[1].u_memory = 0.3;
    two[1].power_w = 250;
    EXPECT_THROW((void)calib::fit_power(two, o), InputError);
    o.board_power_w = 0;
    EXPECT_THROW((void)calib::fit_power(synthetic(20, 0, false, options()), o), InputError);
}

TEST(PowerFit, PlainFixtureParsesAndFits) {
    const auto set = calib::read_power_samples(fx("samples.csv"), resolver());
    ASSERT_EQ(set.samples.size(), 7u);
    EXPECT_EQ(set.samples[0].gpu, "h100-sxm");
    EXPECT_DOUBLE_EQ(set.samples[0].clock, 1.0); // empty clock_factor: full clock
    EXPECT_DOUBLE_EQ(set.samples[2].u_compute, 0.2);
    EXPECT_TRUE(has(set.samples[3].where, "samples.csv:8")) << set.samples[3].where;
    const auto r = calib::fit_power(set.samples, options());
    EXPECT_NEAR(r.resident_w, 140, 1e-6);
    EXPECT_NEAR(r.compute_weight, 1.6, 1e-6);
    EXPECT_NEAR(r.memory_weight, 0.5, 1e-6);
    EXPECT_EQ(r.saturated, 1);
}

TEST(PowerFit, CalibCsvFixtureGivesUtilizations) {
    const auto set = calib::read_power_samples(fx("calib_run.csv"), resolver());
    ASSERT_EQ(set.samples.size(), 3u);
    EXPECT_EQ(set.skipped, 3); // the L2 extra, the attention point, the row without power
    const auto* h100 = db().find_accelerator("h100-sxm");
    ASSERT_NE(h100, nullptr);
    const double bw = h100->memory_bandwidth.si();
    const double peak = h100->dense.bf16->si();
    const auto& read = set.samples[0];
    EXPECT_EQ(read.gpu, "h100-sxm"); // the CUDA name resolved through the hwdb aliases
    EXPECT_NEAR(read.u_memory, 4294967296.0 / (bw * 0.0016), 1e-12);
    EXPECT_DOUBLE_EQ(read.u_compute, 0.0);
    EXPECT_DOUBLE_EQ(read.power_w, 420);
    const auto& gemm = set.samples[1];
    EXPECT_NEAR(gemm.u_compute, 2.0 * 4096 * 6144 * 4096 / (peak * 0.000343), 1e-12);
    EXPECT_NEAR(gemm.u_memory,
                (4096.0 * 4096 + 4096.0 * 6144 + 4096.0 * 6144) * 2 / (bw * 0.000343), 1e-12);
    if (h100->boost_clock) {
        EXPECT_NEAR(gemm.clock, std::min(1.0, 1830e6 / h100->boost_clock->si()), 1e-12);
    }
    EXPECT_LE(gemm.clock, 1.0);
}

TEST(PowerFit, BadInputNamesFileLineAndColumn) {
    try {
        (void)calib::read_power_samples(fx("bad_power.csv"), resolver());
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_TRUE(has(e.what(), "bad_power.csv:3:18: power_w:")) << e.what();
    }
    try {
        const auto t = calib::parse_csv("gpu,u_compute,u_memory,power_w\nh100-sxm,0.5,-0.1,300\n",
                                        "neg.csv", true);
        (void)calib::power_samples_from_plain(t, resolver());
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_TRUE(has(e.what(), "neg.csv:2:14: u_memory: value -0.1 is outside [0, 2]"))
            << e.what();
    }
    try {
        (void)calib::read_power_samples(fx("../bad/unknown.csv"), resolver());
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_TRUE(has(e.what(), "unknown.csv")) << e.what();
    }
}

TEST(PowerFit, YamlReadsBackAsTheScenarioPowerBlock) {
    const auto o = options();
    const auto r = calib::fit_power(synthetic(30, 0.0, false, o), o);
    const std::string yaml = calib::power_fit_yaml(r, "h100-sxm", "gpuplan calib fit-power x.csv");
    std::string block;
    std::istringstream in(yaml);
    for (std::string line; std::getline(in, line);) {
        block += "  " + line + "\n";
    }
    const auto s = hwdb::parse_scenario(
        "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\npower:\n" + block,
        "s.yaml", db());
    ASSERT_TRUE(s.power_model.resident_power.has_value());
    EXPECT_NEAR(s.power_model.resident_power->si(), kResident, 1e-3);
    EXPECT_NEAR(s.power_model.compute_weight, kAc, 1e-5);
    EXPECT_NEAR(s.power_model.memory_weight, kAm, 1e-5);
}

TEST(PowerFit, CliFitsTheFixture) {
    auto r = gpuplan::test::run_cli("calib fit-power " + fx("samples.csv") + " --gpu h100-sxm");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "power fit for h100-sxm: 7 samples (6 fitted, 1 at the board limit)"))
        << r.out;
    EXPECT_TRUE(has(r.out, "140.0 W")) << r.out;
    EXPECT_TRUE(has(r.out, "1.6000")) << r.out;
    r = gpuplan::test::run_cli("calib fit-power " + fx("samples.csv") + " --gpu h100-sxm --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "\"memory_weight\": ")) << r.out;
    EXPECT_TRUE(has(r.out, "\"saturated\": 1")) << r.out;
    r = gpuplan::test::run_cli("calib fit-power " + fx("samples.csv") + " --gpu h100-sxm -o -");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "resident_power: 140 W")) << r.out;
    r = gpuplan::test::run_cli("calib fit-power " + fx("bad_power.csv") + " --gpu h100-sxm");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r.out, "bad_power.csv:3:18: power_w:")) << r.out;
    r = gpuplan::test::run_cli("calib fit-power " + fx("samples.csv") + " --gpu a100-sxm-80gb");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r.out, "no power sample of 'a100-sxm-80gb'")) << r.out;
}
