// calib::fit_step_overhead: the per-step overhead fitted to benchmark results at several loads.
// The benchmarks are synthetic: each is the model's own prediction with a known overhead, so the
// fit must recover that overhead from a profile that starts elsewhere.
#include "calib/bench_fit.hpp"

#include "hwdb/database.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/diagnose.hpp"
#include "model/error.hpp"
#include "model/operating_point.hpp"
#include "model/serving.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuplan::calib {
namespace {

const hwdb::Database& db() {
    static const auto d = hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

model::Scenario quickstart() {
    return hwdb::load_scenario(std::string(GPUPLAN_SOURCE_DIR) + "/examples/quickstart.yaml", db());
}

/// A `vllm bench serve` summary as the model predicts it with `p` at `clients` concurrent
/// requests of 512 + 128 tokens.
hwdb::LabelledBench synthetic(const model::Scenario& s, const model::EfficiencyProfile& p,
                              int clients) {
    model::Workload w = s.workload;
    w.input_tokens = 512;
    w.output_tokens = 128;
    model::set_closed_loop(w, clients);
    const model::ServingEstimate e = model::estimate_serving(s.deployment, w, p);
    model::BenchSummary b;
    b.completed = 10 * clients;
    b.duration_s = 60;
    b.max_concurrency = clients;
    b.total_input_tokens = 512.0 * b.completed;
    b.total_output_tokens = 128.0 * b.completed;
    b.mean_tpot_ms = e.tpot.si() * 1e3;
    return {"c" + std::to_string(clients), b};
}

TEST(BenchFit, RecoversTheOverheadTheBenchmarksWereMadeWith) {
    const model::Scenario s = quickstart();
    model::EfficiencyProfile truth = model::default_profile();
    truth.step_overhead = Seconds(2.5e-3);
    std::vector<hwdb::LabelledBench> benches;
    for (int c : {1, 8, 32})
        benches.push_back(synthetic(s, truth, c));
    model::EfficiencyProfile start = model::default_profile();
    ASSERT_NE(start.step_overhead.si(), 2.5e-3);
    const StepOverheadFit fit = fit_step_overhead(s, start, benches);
    EXPECT_NEAR(fit.fitted.si(), 2.5e-3, 2.5e-3 * 0.01);
    EXPECT_EQ(fit.base, start.step_overhead);
    EXPECT_LT(fit.mape_after, 1e-3);
    EXPECT_GT(fit.mape_before, fit.mape_after);
    ASSERT_EQ(fit.benches.size(), 3u);
    EXPECT_EQ(fit.benches[0].running, 1);
    EXPECT_EQ(fit.benches[2].running, 32);
    EXPECT_EQ(fit.profile.step_overhead, fit.fitted);
    EXPECT_EQ(fit.profile.provenance.kind, model::ProvenanceKind::EngineProfile);
    EXPECT_NE(fit.profile.provenance.description.find("step_overhead fitted to 3 benchmark"),
              std::string::npos)
        << fit.profile.provenance.description;
}

TEST(BenchFit, OneLoadOrOneResultIsAnInputError) {
    const model::Scenario s = quickstart();
    const model::EfficiencyProfile p = model::default_profile();
    EXPECT_THROW((void)fit_step_overhead(s, p, {synthetic(s, p, 8)}), InvalidArgument);
    EXPECT_THROW((void)fit_step_overhead(s, p, {synthetic(s, p, 8), synthetic(s, p, 8)}),
                 InvalidArgument);
}

} // namespace
} // namespace gpuplan::calib
