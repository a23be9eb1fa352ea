// The analytic model's whole prefill and decode steps against SplitwiseSim's measured Llama-2-70B
// runs on DGX-A100 and DGX-H100 (../shared/data/splitwise; skipped when absent). The bounds are
// the errors reached when this test was written, with a little headroom, so a regression in the
// step cost or the profiles shows up here.
#include "calib/end_to_end.hpp"

#include "hwdb/profile_loader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

using namespace gpuplan;

namespace {

std::filesystem::path splitwise_csv() {
    return std::filesystem::path(GPUPLAN_SHARED_DATA_DIR) / "splitwise/data/perf_model.csv";
}

void print(const char* what, const calib::StepErrorStats& s) {
    std::cout << what << ": " << s.points << " points, MAPE " << s.mape * 100 << " %, median "
              << s.median * 100 << " %, P90 " << s.p90 * 100 << " %, bias " << s.bias * 100
              << " %; worst " << s.worst << '\n';
}

} // namespace

TEST(EndToEnd, SplitwiseLlama70bStepsWithinTheFittedProfilesBand) {
    if (!std::filesystem::exists(splitwise_csv())) {
        GTEST_SKIP() << "no " << splitwise_csv() << " (../shared/data is not part of a clone)";
    }
    const auto db = hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    int skipped = 0;
    const auto runs = calib::import_splitwise(splitwise_csv(), &skipped);
    ASSERT_EQ(runs.size(), 630u); // 6 (GPU, TP) groups × 105 rows; bloom and -pcap rows skipped
    const auto fitted = calib::validate_step_runs(runs, db, [](const model::AcceleratorSpec& gpu) {
        return hwdb::find_profile_for_gpu({hwdb::builtin_profile_folder()}, gpu)
            .value_or(model::default_profile());
    });
    const auto spec = calib::validate_step_runs(
        runs, db, [](const model::AcceleratorSpec&) { return model::default_profile(); });
    std::cout << "prompt rows below the datasheet-peak floor, left out: "
              << fitted.rejected_prompt_rows << '\n';
    print("prompt, fitted profiles", fitted.prompt);
    print("token,  fitted profiles", fitted.token);
    print("prompt, spec-sheet defaults", spec.prompt);
    print("token,  spec-sheet defaults", spec.token);
    for (const auto& [gpu, s] : fitted.prompt_by_gpu)
        print(("prompt " + gpu).c_str(), s);
    for (const auto& [gpu, s] : fitted.token_by_gpu)
        print(("token " + gpu).c_str(), s);
    EXPECT_LT(fitted.prompt.mape, 0.30); // 25.8 % when written (spec-sheet defaults: 29.4 %)
    EXPECT_LT(fitted.token.mape, 0.36);  // 31.3 % when written (spec-sheet defaults: 43.1 %)
    EXPECT_LT(fitted.prompt.mape, spec.prompt.mape);
    EXPECT_LT(fitted.token.mape, spec.token.mape);
}
