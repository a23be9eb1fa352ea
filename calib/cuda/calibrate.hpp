#pragma once
/// The driver of gpuplan-calib: finds the GPU, starts NVML, runs the sections, writes the
/// points YAML and the CSV and prints a summary. It is the boundary that catches a section's
/// failure, notes it in the file and goes on.

#include "calib/cuda/options.hpp"

namespace gpuplan::calib::bench {

/// Runs a calibration. Returns 0 when every section ran, 1 when one failed (the file then holds
/// what was measured and a note of the failure). Throws NoGpuError when no CUDA GPU is usable,
/// UsageError for a --device that does not exist and InputError when the output cannot be
/// written.
[[nodiscard]] int run_calibration(const CalibOptions& options);

} // namespace gpuplan::calib::bench
