#pragma once
/// End-to-end validation: whole prefill and decode steps of a real engine run against the
/// analytic model's step cost (not single kernels). The first source is SplitwiseSim's
/// perf_model.csv (Patel et al., ISCA 2024): Llama-2-70B prompt and per-token times on DGX-A100
/// and DGX-H100 at TP 2/4/8, over prompt lengths and batch sizes.

#include "hwdb/database.hpp"
#include "model/efficiency.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace gpuplan::calib {

/// One measured configuration: `batch` requests of `prompt` tokens, then `output` tokens each.
struct StepRun {
    std::string model; ///< catalog name
    std::string gpu;   ///< hwdb accelerator name
    int tp = 1;
    int prompt = 0;
    int batch = 1;
    int output = 0;
    double prompt_time_s = 0; ///< prefill of the whole batch
    double token_time_s = 0;  ///< one decode iteration of the whole batch
    std::string source;       ///< file:line
};

/// Reads SplitwiseSim's perf_model.csv. Rows of models or GPUs the catalog lacks (bloom-176b)
/// are skipped and counted in `skipped`; the `-pcap` rows are not measurements (SOURCE.md:
/// prompt times are exactly 1.3× the uncapped rows) and are skipped too.
[[nodiscard]] std::vector<StepRun> import_splitwise(const std::filesystem::path& csv,
                                                    int* skipped = nullptr);

/// Error statistics of one metric: relative errors (predicted − measured) / measured.
struct StepErrorStats {
    int points = 0;
    double mape = 0;   ///< mean absolute relative error
    double median = 0; ///< median absolute relative error (nearest rank, calib/stats.hpp)
    double p90 = 0;    ///< 90th percentile of the absolute relative error (nearest rank)
    double bias = 0;   ///< mean signed relative error (+: the model is slow)
    std::string worst; ///< the worst case, described
};

/// Predictions against measurements, per metric and per GPU.
struct EndToEndReport {
    StepErrorStats prompt;
    StepErrorStats token;
    std::vector<std::pair<std::string, StepErrorStats>> prompt_by_gpu;
    std::vector<std::pair<std::string, StepErrorStats>> token_by_gpu;
    /// Every point's signed relative error (predicted - measured) / measured, with its GPU.
    std::vector<std::pair<std::string, double>> prompt_errors;
    std::vector<std::pair<std::string, double>> token_errors;
    int rejected_prompt_rows = 0;               ///< prompt times below the datasheet-peak floor
    std::vector<std::string> rejected_examples; ///< a few of them (file:line)
};

/// Predicts every run with the model (fp16 weights, the accelerator's scale-up link, vLLM with
/// CUDA graphs) using the profile `profile_for(gpu)` returns, and compares.
[[nodiscard]] EndToEndReport validate_step_runs(
    const std::vector<StepRun>& runs, const hwdb::Database& db,
    const std::function<model::EfficiencyProfile(const model::AcceleratorSpec&)>& profile_for);

} // namespace gpuplan::calib
