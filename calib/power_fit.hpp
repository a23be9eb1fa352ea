#pragma once
/// Fitting the accelerator power model (model/power.hpp) to measured power samples.
///
/// At core clock factor k the model is
///   P = P_res + (P_board − P_res) · min(1, a_c·x_c + a_m·x_m)
///   x_c = u_c·k^(γ−1),  x_m = u_m·(1 − β + β·k^(γ−1))          (k = 1: x = u)
/// Below the board limit this is linear in (P_res, c_c, c_m) with c = (P_board − P_res)·a:
///   P = P_res + c_c·x_c + c_m·x_m
/// so the fit is one linear least-squares problem (Eigen), with a_c = c_c ÷ (P_board − P_res).
/// Samples within `saturation_fraction` of the board power are held at the limit by the GPU's
/// own power limiter, carry only "a_c·x_c + a_m·x_m ≥ 1", and are left out of the fit (they
/// still count in the residuals, with the clamp). docs/power.md, "Calibrating from
/// measurements", has the inputs and the procedure.

#include "calib/csv.hpp"
#include "model/hardware_spec.hpp"
#include "model/power_model.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::calib {

/// One measured power sample: how hard the GPU was driven and what it drew.
struct PowerSample {
    std::string gpu;      ///< hwdb canonical name where the resolver knows it
    double u_compute = 0; ///< achieved FLOP/s ÷ datasheet dense peak
    double u_memory = 0;  ///< achieved device-memory bytes/s ÷ datasheet bandwidth
    double power_w = 0;   ///< measured board power (mean over the measurement)
    double clock = 1.0;   ///< core clock factor (SM clock ÷ boost clock); 1 when not known
    std::string where;    ///< "file:line", for listings
};

/// Looks a GPU name (hwdb name or alias, or a CUDA name) up; nullptr when unknown.
using GpuResolver = std::function<const model::AcceleratorSpec*(std::string_view)>;

/// Samples read from one or more files, and what was passed over.
struct PowerSampleSet {
    std::vector<PowerSample> samples;
    int skipped = 0;                ///< rows that give no sample (see notes)
    std::vector<std::string> notes; ///< one line per kind of skipped row, with its count
};

/// Samples from a plain CSV with the header `gpu,u_compute,u_memory,power_w[,clock_factor]`
/// (any column order, extra columns ignored). Errors name file:line:column and the column.
[[nodiscard]] PowerSampleSet power_samples_from_plain(const CsvTable& t,
                                                      const GpuResolver& resolve);

/// Samples from the CSV that gpuplan-calib writes next to its points YAML: GEMM points give
/// u_c = 2·m·n·k ÷ (peak(dtype) × time) and u_m = (m·k + k·n + m·n) × element bytes ÷
/// (bandwidth × time); memory-bound points give u_m = bytes ÷ (bandwidth × time), u_c = 0;
/// power is power_mean_w; clock = sm_clock_mhz ÷ the hwdb boost clock (else ÷ the file's highest
/// SM clock for that GPU), at most 1. Other rows, and rows without a power sample, are skipped
/// and counted. An unknown GPU is an error at its cell.
[[nodiscard]] PowerSampleSet power_samples_from_calib(const CsvTable& t,
                                                      const GpuResolver& resolve);

/// Reads a file in either format (told apart by the header: `power_mean_w` and `op_class` mean
/// the gpuplan-calib CSV, `u_compute` the plain one). Throws InputError otherwise.
[[nodiscard]] PowerSampleSet read_power_samples(const std::filesystem::path& path,
                                                const GpuResolver& resolve);

/// Options of fit_power.
struct PowerFitOptions {
    double board_power_w = 0;               ///< P_board of the GPU (required, > 0)
    std::optional<double> resident_power_w; ///< fix P_res instead of fitting it
    /// γ and β used to fold a known clock factor into x_c, x_m (not fitted here).
    double dynamic_exponent = model::PowerModel{}.dynamic_exponent;
    double memory_core_share = model::PowerModel{}.memory_core_share;
    /// Samples at or above this fraction of the board power are held by the limiter: not fitted.
    double saturation_fraction = 0.97;
};

/// The fitted coefficients and how well they describe the samples.
struct PowerFitResult {
    double resident_w = 0; ///< P_res (fitted, or the fixed value)
    bool resident_fitted = false;
    double compute_weight = 0; ///< a_c
    double memory_weight = 0;  ///< a_m
    double board_w = 0;
    int samples = 0;                ///< all samples given
    int fitted = 0;                 ///< samples in the least-squares problem
    int saturated = 0;              ///< samples at the board limit, left out of the fit
    double rms_w = 0;               ///< residual RMS over all samples (clamped model)
    double fit_rms_w = 0;           ///< residual RMS over the fitted samples
    double max_abs_w = 0;           ///< largest |residual| over all samples
    int worst = -1;                 ///< index of that sample
    std::vector<double> residuals;  ///< predicted − measured, per sample, in input order
    std::vector<std::string> notes; ///< coefficients held at a default, and why
};

/// The model's power for a sample under fitted coefficients (with the min(1, ·) clamp).
[[nodiscard]] double predicted_power(const PowerSample& s, const PowerFitResult& r,
                                     const PowerFitOptions& o);

/// Fits P_res (unless fixed), a_c and a_m by linear least squares. A coefficient the samples do
/// not determine (no sample with compute, or with memory, activity; or a fitted weight below
/// zero) is held at the PowerModel default and noted. Throws InputError with fewer samples
/// below the limit than coefficients to fit, or a fitted P_res outside [0, P_board).
[[nodiscard]] PowerFitResult fit_power(const std::vector<PowerSample>& samples,
                                       const PowerFitOptions& o);

/// The fit as YAML keys of a scenario's `power:` block (resident_power, compute_weight,
/// memory_weight; read by hwdb/power_cost_reader.cpp), with a comment header naming the GPU,
/// the command and the residuals. Every line after the header is a top-level key, so the file
/// can be pasted under `power:` with two spaces of indent.
[[nodiscard]] std::string power_fit_yaml(const PowerFitResult& r, const std::string& gpu,
                                         const std::string& command);

} // namespace gpuplan::calib
