#pragma once
/// Published training runs as a validation set (validation/published-training/runs.yaml): each
/// run names a training scenario laid out as its paper describes it, the figure the paper
/// reports and the layout dimensions the paper leaves open. `gpuplan calib validate` replays
/// them (calib/training_runs.hpp) for the training step-time band (docs/validation.md).

#include <filesystem>
#include <string>
#include <vector>

namespace gpuplan::hwdb {

/// What a paper reports of a training run.
enum class PublishedFigure {
    StepTime,     ///< seconds per optimizer step
    TflopsPerGpu, ///< achieved TFLOP/s per GPU, recomputation counted (hardware FLOPs)
    Mfu,          ///< model FLOPs utilisation, a fraction
    GpuHours,     ///< GPU-hours to train the run's tokens
};

/// "step_time", "tflops_per_gpu", "mfu", "gpu_hours".
[[nodiscard]] const char* to_string(PublishedFigure f);

/// One published run.
struct PublishedTrainingRun {
    std::filesystem::path scenario; ///< the training scenario, resolved beside runs.yaml
    std::string source;             ///< the paper and the table or section
    PublishedFigure figure = PublishedFigure::StepTime;
    double value = 0;                ///< in SI (seconds), TFLOP/s, a fraction or GPU-hours
    std::vector<std::string> search; ///< layout dimensions the layout search chooses
    friend bool operator==(const PublishedTrainingRun&, const PublishedTrainingRun&) = default;
};

/// A folder's runs.yaml.
struct PublishedTrainingRuns {
    std::string set; ///< the set's name, as the bands cite it
    std::vector<PublishedTrainingRun> runs;
    friend bool operator==(const PublishedTrainingRuns&, const PublishedTrainingRuns&) = default;
};

/// The layout dimensions `search` may name.
inline const std::vector<std::string> kSearchableDimensions = {
    "tp", "pp", "cp", "ep", "zero", "micro_batch", "virtual_stages", "recompute"};

/// Reads `path` (a runs.yaml). Throws ConfigError naming file:line:column and the key for an
/// unknown key, a missing or second published figure, a non-positive value, or an unknown
/// search dimension.
[[nodiscard]] PublishedTrainingRuns read_training_runs_file(const std::filesystem::path& path);

} // namespace gpuplan::hwdb
