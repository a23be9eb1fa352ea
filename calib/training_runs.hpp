#pragma once
/// Whole training runs as a validation set: the published runs of validation/published-training
/// (hwdb/training_runs_io.hpp) replayed through the training planner (model::estimate_training,
/// the layout search for what the paper leaves open) and compared with what the papers report.
/// Each run's error is that of the step time, (predicted − published) / published (+: the model
/// is slow): a published throughput (TFLOP/s per GPU, MFU) gives published / predicted − 1, a
/// published time (step time, GPU-hours) predicted / published − 1. The model was never fitted
/// on these runs: the profiles are fitted on kernel timings only.

#include "calib/error_bands.hpp"
#include "hwdb/database.hpp"
#include "hwdb/training_runs_io.hpp"
#include "model/efficiency.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::calib {

/// The runs.yaml of `root`: root itself when it is such a file, root/runs.yaml, else
/// root/validation/published-training/runs.yaml; nullopt when none exists.
[[nodiscard]] std::optional<std::filesystem::path>
find_training_runs(const std::filesystem::path& root);

/// One run replayed.
struct TrainingComparison {
    std::string name;   ///< the scenario's name
    std::string source; ///< the paper
    std::string gpu;    ///< hwdb accelerator
    int gpus = 0;       ///< GPUs of the run
    std::string layout; ///< the layout replayed, "tp 8 pp 16 dp 8 zero 0 mb 1 vs 1 full"
    bool searched = false;
    bool fits = false; ///< the planner finds it fits in memory (the figures are given either way)
    hwdb::PublishedFigure figure = hwdb::PublishedFigure::StepTime;
    double published = 0;       ///< the paper's figure (s, TFLOP/s, fraction or GPU-hours)
    double predicted = 0;       ///< the planner's same figure
    double step_error = 0;      ///< (predicted − published) / published of the step time
    model::ValidationClass cls; ///< GPU, engine "training", MoE, compute width, regime training
};

/// Replays one run: loads its scenario with `db`, runs the layout search over `run.search` (the
/// other dimensions pinned to the scenario's layout) when it lists any, and estimates the
/// training with the profile `profile_for` gives for the GPU (default_profile() when none).
/// Throws ConfigError / InvalidArgument as `gpuplan train` does for a bad scenario.
[[nodiscard]] TrainingComparison replay_training_run(
    const hwdb::PublishedTrainingRun& run, const hwdb::Database& db,
    const std::function<std::optional<model::EfficiencyProfile>(const model::AcceleratorSpec&)>&
        profile_for);

/// The step-time points of the replayed runs, figure training_step in the training regime,
/// level "training-run", set `set`, not fitted on.
[[nodiscard]] std::vector<BandSample>
training_band_samples(const std::vector<TrainingComparison>& runs, const std::string& set);

} // namespace gpuplan::calib
