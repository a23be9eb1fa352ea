#pragma once
/// The `--json` reports of the commands that `sweep` runs per point, built by the same functions
/// the commands print with, so a sweep's figures are the command's own figures (keys in
/// docs/cli-json.md).

#include "cli/cli_context.hpp"
#include "model/efficiency.hpp"
#include "model/scenario.hpp"
#include "plan/sizing_search.hpp"
#include "sim/simulate.hpp"

#include <nlohmann/json.hpp>

namespace gpuplan::cli {

/// What `gpuplan estimate FILE --json` prints for scenario `s` (what-ifs and, under a power
/// limit, the power figures included).
[[nodiscard]] nlohmann::json estimate_report(CliContext& ctx, const model::Scenario& s,
                                             const model::EfficiencyProfile& profile,
                                             int cached_prefix = 0);

/// What `gpuplan cost FILE --json` prints for scenario `s`.
[[nodiscard]] nlohmann::json cost_report(CliContext& ctx, const model::Scenario& s,
                                         const model::EfficiencyProfile& profile);

/// What `gpuplan train FILE --json` prints (without --search) for scenario `s`. Throws
/// InputError when `s` has no training block or its layout cannot run.
[[nodiscard]] nlohmann::json train_report(CliContext& ctx, const model::Scenario& s,
                                          const model::EfficiencyProfile& profile);

class MpiJob;

/// What `gpuplan plan FILE --json` prints: the sizing search on `s` with `threads` workers (0:
/// all cores) and, when `progress`, a progress line on a terminal; with `job`, its confirming
/// simulations spread over the MPI ranks (plan --mpi). Throws the interrupt's error when a
/// signal stopped the search.
[[nodiscard]] nlohmann::json plan_report(CliContext& ctx, const model::Scenario& s, int threads,
                                         bool progress, MpiJob* job = nullptr);

/// The plan --json object of a finished sizing search `r` of `s`.
[[nodiscard]] nlohmann::json plan_json(const model::Scenario& s, const plan::SizingResult& r);

/// What `gpuplan simulate FILE --json` prints for a finished simulation of `s`.
[[nodiscard]] nlohmann::json simulate_json(const model::Scenario& s, const sim::SimResult& r);

} // namespace gpuplan::cli
