// `gpuplan curve`: the command prints what plan::load_curve computes, one of its points is what
// `gpuplan estimate` prints at that load, and its highest rate meeting the SLO is estimate's
// capacity at the SLO.
#include "hwdb/database.hpp"
#include "hwdb/profile_loader.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/efficiency.hpp"
#include "plan/load_curve.hpp"
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

using gpuplan::test::run_cli;
using nlohmann::json;
namespace plan = gpuplan::plan;

std::string src(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel;
}

json run_json(const std::string& args) {
    const auto r = gpuplan::test::run_cli(args + " --json 2>/dev/null");
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out;
    return r.exit_code == 0 ? json::parse(r.out) : json();
}

/// The profile as the CLI chooses it (no --profile): the hwdb's for that GPU, else the default.
gpuplan::model::EfficiencyProfile profile_for(const gpuplan::model::AcceleratorSpec& gpu) {
    const auto folders = gpuplan::hwdb::profile_folders(gpuplan::hwdb::default_folders({}));
    return gpuplan::hwdb::find_profile_for_gpu(folders, gpu)
        .value_or(gpuplan::model::default_profile());
}

TEST(CurveCli, PrintsWhatTheLibraryComputes) {
    const std::string file = src("examples/quickstart.yaml");
    const json j = run_json("curve " + file +
                            " --axis concurrency --loads 1,4,16 --candidate h200-sxm "
                            "--candidate a100-sxm-80gb");
    ASSERT_FALSE(j.is_null());
    const auto db = gpuplan::hwdb::Database::load(gpuplan::hwdb::default_folders({}));
    const gpuplan::model::Scenario s = gpuplan::hwdb::load_scenario(file, db);
    const std::vector<gpuplan::model::PlanCandidate> others = {
        gpuplan::hwdb::plan_candidate(db, "h200-sxm"),
        gpuplan::hwdb::plan_candidate(db, "a100-sxm-80gb")};
    const auto cands =
        plan::curve_candidates(s, profile_for(s.deployment.gpu), others, profile_for);
    const plan::LoadCurve c = plan::load_curve(cands, plan::LoadAxis::Concurrency, {1, 4, 16});
    EXPECT_EQ(j["axis"], "concurrency");
    ASSERT_EQ(j["candidates"].size(), c.curves.size());
    ASSERT_EQ(c.curves.size(), 3u); // the scenario's GPU and the two others
    for (std::size_t i = 0; i < c.curves.size(); ++i) {
        const json& k = j["candidates"][i];
        SCOPED_TRACE(c.curves[i].name);
        EXPECT_EQ(k["gpu"], c.curves[i].name);
        ASSERT_EQ(k["points"].size(), c.curves[i].points.size());
        for (std::size_t p = 0; p < c.curves[i].points.size(); ++p) {
            const plan::CurvePoint& q = c.curves[i].points[p];
            EXPECT_DOUBLE_EQ(k["points"][p]["ttft_s"].get<double>(), q.ttft.si());
            EXPECT_DOUBLE_EQ(k["points"][p]["tpot_s"].get<double>(), q.tpot.si());
            EXPECT_DOUBLE_EQ(k["points"][p]["throughput_tok_s"].get<double>(), q.throughput);
            EXPECT_EQ(k["points"][p]["meets_slo"].get<bool>(), q.meets_slo);
        }
        if (c.curves[i].max_load) {
            EXPECT_DOUBLE_EQ(k["max_load"].get<double>(), *c.curves[i].max_load);
        } else {
            EXPECT_TRUE(k["max_load"].is_null());
        }
    }
}

TEST(CurveCli, APointIsWhatEstimatePrintsAtThatLoad) {
    const std::string file = src("examples/quickstart.yaml");
    const json c = run_json("curve " + file + " --axis concurrency --loads 4,24");
    const json e = run_json("estimate " + file + " --concurrency 24");
    ASSERT_FALSE(c.is_null() || e.is_null());
    const json& p = c["candidates"][0]["points"][1];
    EXPECT_EQ(p["load"].get<double>(), 24);
    EXPECT_DOUBLE_EQ(p["ttft_s"].get<double>(), e["ttft_loaded_s"].get<double>());
    EXPECT_DOUBLE_EQ(p["tpot_s"].get<double>(), e["tpot_s"].get<double>());
    EXPECT_DOUBLE_EQ(p["throughput_tok_s"].get<double>(), e["throughput_tok_s"].get<double>());

    const json r = run_json("curve " + file + " --axis rate --loads 2.5");
    const json er = run_json("estimate " + file + " --rate 2.5");
    ASSERT_FALSE(r.is_null() || er.is_null());
    EXPECT_DOUBLE_EQ(r["candidates"][0]["points"][0]["ttft_s"].get<double>(),
                     er["ttft_loaded_s"].get<double>());
    EXPECT_DOUBLE_EQ(r["candidates"][0]["points"][0]["throughput_tok_s"].get<double>(),
                     er["throughput_tok_s"].get<double>());
}

/// Whether `gpuplan estimate` at `rate` meets the quickstart's SLO (TTFT 500 ms, TPOT 50 ms,
/// tightened to `tpot_ms` by --set) with a utilisation of at most 1.
bool estimate_meets(const std::string& file, double rate, double tpot_ms) {
    const json e = run_json("estimate " + file + " --rate " + std::to_string(rate) +
                            " --set slo.tpot='" + std::to_string(tpot_ms) + " ms'");
    if (e.is_null()) {
        return false;
    }
    return e["operating_point"]["utilisation"].get<double>() <= 1.0 &&
           e["ttft_loaded_s"].get<double>() <= 0.5 && e["tpot_s"].get<double>() <= tpot_ms * 1e-3;
}

TEST(CurveCli, TheHighestRateMeetingTheSloIsConfirmedByEstimate) {
    const std::string file = src("examples/quickstart.yaml");
    // A TPOT target that binds below saturation: between the lone and the full-batch TPOT.
    const json lone = run_json("estimate " + file + " --concurrency 1");
    const json full = run_json("estimate " + file + " --concurrency 200");
    ASSERT_FALSE(lone.is_null() || full.is_null());
    const double tpot_ms = (lone["tpot_s"].get<double>() + full["tpot_s"].get<double>()) / 2 * 1e3;
    const json c = run_json("curve " + file + " --axis rate --loads 1 --set slo.tpot='" +
                            std::to_string(tpot_ms) + " ms'");
    ASSERT_FALSE(c.is_null());
    ASSERT_FALSE(c["candidates"][0]["max_load"].is_null());
    const double max = c["candidates"][0]["max_load"].get<double>();
    // The rate axis's highest load is the capacity at the SLO (percentiles under Poisson
    // arrivals): estimate reports the same figure for the same SLO, and the means there meet it
    // with room to spare (the percentiles bind first).
    EXPECT_TRUE(estimate_meets(file, max * (1 - 1e-3), tpot_ms));
    const json e = run_json("estimate " + file + " --rate " + std::to_string(max) +
                            " --set slo.tpot='" + std::to_string(tpot_ms) + " ms'");
    ASSERT_FALSE(e.is_null());
    EXPECT_DOUBLE_EQ(e["capacity_at_slo"]["requests_per_s"].get<double>(), max);
    EXPECT_LE(e["capacity_at_slo"]["at"]["tpot_at_slo_s"].get<double>(), tpot_ms * 1e-3);
    EXPECT_LE(e["capacity_at_slo"]["at"]["ttft_at_slo_s"].get<double>(), 0.5);
}

TEST(CurveCli, BadOptionsAreUsageErrors) {
    const std::string file = src("examples/quickstart.yaml");
    auto r = run_cli("curve " + file + " --axis speed");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("--axis 'speed' is not an axis"), std::string::npos) << r.out;
    r = run_cli("curve " + file + " --loads 1,0");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("'0' is not a number above 0"), std::string::npos) << r.out;
    r = run_cli("curve " + file + " --axis concurrency --loads 2.5");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("not a whole number"), std::string::npos) << r.out;
    r = run_cli("curve " + file + " --candidate no-such-gpu");
    EXPECT_EQ(r.exit_code, 2);
    r = run_cli("curve " + src("examples/simulate-trace.yaml") + " --axis rate");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("replays a trace"), std::string::npos) << r.out;
}

TEST(CurveCli, TheTableNamesEachGpuAndTheHighestLoad) {
    const auto r = run_cli("curve " + src("examples/quickstart.yaml") + " --points 4");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("h100-sxm"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("TTFT (ms)"), std::string::npos);
    // Two questions, two names: sequences in flight (means, closed loop) on the concurrency
    // axis, the capacity at the SLO (percentiles, Poisson arrivals) on the rate axis.
    EXPECT_NE(r.out.find("most sequences in flight meeting the SLO"), std::string::npos);
    const auto rate =
        run_cli("curve " + src("examples/quickstart.yaml") + " --points 4 --axis rate");
    EXPECT_EQ(rate.exit_code, 0) << rate.out;
    EXPECT_NE(rate.out.find("capacity at the SLO (p99, Poisson arrivals)"), std::string::npos)
        << rate.out;
}

// One question, one answer: "the highest request rate within the SLO" is estimate's capacity at
// the SLO and curve's highest rate; estimate prints it beside the throughput capacity, a share
// below 1 of it (the quickstart's P99 TTFT 500 ms and TPOT 50 ms cost capacity).
TEST(CurveCli, EstimatesCapacityAtTheSloIsTheCurvesHighestRate) {
    const std::string file = src("examples/quickstart.yaml");
    const json e = run_json("estimate " + file);
    const json c = run_json("curve " + file + " --axis rate --points 3");
    ASSERT_TRUE(e.contains("capacity_at_slo")) << e.dump();
    const json& k = e["capacity_at_slo"];
    ASSERT_FALSE(c["candidates"][0]["max_load"].is_null());
    EXPECT_DOUBLE_EQ(c["candidates"][0]["max_load"].get<double>(),
                     k["requests_per_s"].get<double>());
    EXPECT_GT(k["requests_per_s"].get<double>(), 0);
    EXPECT_LT(k["ratio"].get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(k["throughput_capacity_requests_per_s"].get<double>(),
                     e["peak_throughput_tok_s"].get<double>() / 256);
    EXPECT_DOUBLE_EQ(k["ratio"].get<double>(),
                     k["requests_per_s"].get<double>() /
                         k["throughput_capacity_requests_per_s"].get<double>());
    EXPECT_EQ(k["percentile"].get<double>(), 99.0);
    const auto text = run_cli("estimate " + file);
    EXPECT_NE(text.out.find("capacity at SLO (p99): "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("of the throughput capacity"), std::string::npos) << text.out;
}

} // namespace
