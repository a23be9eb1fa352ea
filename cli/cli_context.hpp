#pragma once
/// What every subcommand receives: its own arguments, the output format and the loaded
/// hardware database (loaded lazily, so `--help` works without a readable hwdb).

#include "hwdb/database.hpp"
#include "model/efficiency.hpp"
#include "model/error_bands.hpp"

#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::cli {

struct CliContext {
    std::vector<std::string> args;                 ///< arguments after the subcommand words
    std::vector<std::filesystem::path> extra_hwdb; ///< --hwdb folders
    std::ostream* out = nullptr;
    std::ostream* err = nullptr;
    /// The hwdb: built-in folder, GPUPLAN_HWDB, then --hwdb folders (later ones override).
    [[nodiscard]] const hwdb::Database& db();
    /// Each GPU's shipped or user profile (choose_profile without --profile), read once per
    /// process: what-ifs and sweeps ask for the same GPUs many times.
    std::map<std::string, model::EfficiencyProfile> gpu_profiles;
    /// The measured error bands of the hwdb folders (hwdb/error_bands.yaml), read once.
    [[nodiscard]] const model::ErrorBands& error_bands();

  private:
    std::optional<hwdb::Database> db_;
    std::optional<model::ErrorBands> bands_;
};

/// One subcommand: runs and returns the process exit code; throws InputError on bad input.
using Command = int (*)(CliContext&);

int run_hw_list(CliContext& ctx);
int run_hw_show(CliContext& ctx);
int run_model_list(CliContext& ctx);
int run_model_show(CliContext& ctx);
int run_model_import(CliContext& ctx);
int run_scenario_check(CliContext& ctx);
int run_fit(CliContext& ctx);
int run_estimate(CliContext& ctx);
int run_compare(CliContext& ctx);
int run_curve(CliContext& ctx);
int run_diagnose(CliContext& ctx);
int run_train(CliContext& ctx);
int run_rack(CliContext& ctx);
int run_cost(CliContext& ctx);
int run_calib_import(CliContext& ctx);
int run_calib_fit(CliContext& ctx);
int run_calib_validate(CliContext& ctx);
int run_calib_fit_power(CliContext& ctx);
int run_simulate(CliContext& ctx);
int run_plan(CliContext& ctx);
int run_sweep(CliContext& ctx);
int run_merge(CliContext& ctx);

} // namespace gpuplan::cli
