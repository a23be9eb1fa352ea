#pragma once
/// What the desktop app shows for one scenario, as plain values: the analytic estimate, the
/// bottleneck verdict, the ranked what-ifs, power, racks, cost and the training plan. No Qt
/// here: the runner calls analyze() on a worker thread and the views only display the result.
/// This is glue over the core: the serving → power → rack → cost chain is plan::analyze_serving
/// (plan/analysis.hpp), the one the CLI's estimate, rack and cost commands run; the training
/// plan makes the train command's calls. Not a model of its own.

#include "hwdb/database.hpp"
#include "model/bottleneck.hpp"
#include "model/cost.hpp"
#include "model/disaggregation.hpp"
#include "model/efficiency.hpp"
#include "model/error_bands.hpp"
#include "model/power.hpp"
#include "model/price_list.hpp"
#include "model/rack.hpp"
#include "model/scenario.hpp"
#include "model/serving.hpp"
#include "model/training.hpp"
#include "plan/sizing_search.hpp"
#include "sim/result.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::gui {

/// Which parts of the analysis to compute (the what-ifs and the layout search cost the most).
struct AnalysisParts {
    bool what_ifs = true;
    bool power_cost = true; ///< power, racks and cost
    bool training = true;   ///< the configured training layout (when the scenario has one)
    bool layout_search = false;
};

/// Everything the views show for one scenario. A part that could not be computed has its
/// optional empty and a message saying why.
struct Analysis {
    model::Scenario scenario;
    model::BottleneckReport bottleneck; ///< its `estimate` is the serving estimate
    std::vector<model::WhatIf> what_ifs;
    std::optional<model::PowerEstimate> power;
    std::string power_error;
    std::optional<model::RackPlan> rack;
    std::string rack_error;
    std::optional<model::CostInputs> cost_inputs;
    std::optional<model::CostEstimate> cost;
    std::string cost_error;
    std::optional<model::TrainingEstimate> training;
    std::string training_error;
    std::optional<model::SearchResult> layouts;
    /// The scenario's disaggregated pools in the analytic model (plan::scenario_disaggregation,
    /// what `estimate` prints); nullopt without cluster.disaggregation or when it failed.
    std::optional<model::DisaggregatedEstimate> disaggregation;
    std::string disaggregation_error;
    /// Each estimate figure's measured error band (model::kEstimateFigureBands, keyed as
    /// `estimate --json`'s "bands"), from the hwdb's error_bands.yaml by model::band_for.
    std::vector<std::pair<std::string, model::FigureBand>> bands;
    double compute_ms = 0; ///< wall time of analyze()

    /// The serving estimate.
    [[nodiscard]] const model::ServingEstimate& serving() const { return bottleneck.estimate; }
};

/// What the app reads besides the scenario: the hardware database, the efficiency profiles
/// and the nodes' power figures, resolved as the CLI resolves them. Thread-safe: the runner's
/// jobs share one.
class Core {
  public:
    /// `db` must outlive the Core; `hwdb_folders` are the folders it was loaded from, whose
    /// profiles/ subfolders hold efficiency profiles (later folders win, as in the CLI).
    explicit Core(const hwdb::Database& db,
                  std::vector<std::filesystem::path> hwdb_folders = hwdb::default_folders({}));

    [[nodiscard]] const hwdb::Database& db() const { return db_; }
    /// The profile for `gpu`, chosen as the CLI's choose_profile() does: one measured on it
    /// (or borrowed from its architecture) in a profiles folder, else model::default_profile().
    /// Each GPU's files are read once. Throws ConfigError for a bad profile file.
    [[nodiscard]] model::EfficiencyProfile profile_for(const model::AcceleratorSpec& gpu) const;
    /// The scenario's hwdb server, or null when it names none.
    [[nodiscard]] const model::ServerSpec* server_of(const model::Scenario& s) const;
    /// The scenario's node as power figures (its server, else an unknown node).
    [[nodiscard]] model::NodePower node_of(const model::Scenario& s) const;
    /// The measured error bands of the hwdb folders (hwdb/error_bands.yaml), as the CLI reads
    /// them.
    [[nodiscard]] const model::ErrorBands& error_bands() const { return bands_; }

  private:
    const hwdb::Database& db_;
    std::vector<std::filesystem::path> profile_folders_;
    model::ErrorBands bands_;
    mutable std::mutex mutex_;
    mutable std::map<std::string, model::EfficiencyProfile> profiles_;
};

/// The GPUs tried as "another GPU" what-ifs: same vendor and form factor, same or newer launch
/// year (the CLI's rule).
[[nodiscard]] std::vector<model::AcceleratorSpec>
what_if_candidates(const hwdb::Database& db, const model::AcceleratorSpec& gpu);

/// Runs the analytic model and, per `parts`, the what-ifs, power, racks, cost and training.
/// Throws InputError when the serving estimate itself fails (an invalid deployment or
/// workload); failures of the optional parts are recorded in the result instead.
[[nodiscard]] Analysis analyze(const model::Scenario& s, const Core& core,
                               const AnalysisParts& parts = {});

/// Sets the scenario's accelerator and node as hwdb::set_hardware does, and, as the scenario
/// loader does, the swap bandwidth to the accelerator's host link when it was unset or taken
/// from the previous accelerator's (so a scenario built in the app saves and loads back equal).
/// Throws InputError for unknown names.
void change_hardware(model::Scenario& s, const hwdb::Database& db, const std::string& accelerator,
                     const std::string& node);

/// Applies a what-if (by its key, as model::what_ifs names it) to the scenario: the same change
/// the what-if was estimated with. Returns false when the key is unknown or not applicable.
bool apply_what_if(model::Scenario& s, const model::WhatIf& what_if, const hwdb::Database& db,
                   const model::MemoryEstimate& baseline);

/// The outcome of one sizing search (`gpuplan plan`): the scenario searched, the plan it used
/// (plan::effective_plan, so a row's candidate index resolves), the result, or the error.
struct PlanOutcome {
    model::Scenario scenario;
    model::PlanConfig plan;
    std::optional<plan::SizingResult> result;
    std::string error;
    double wall_s = 0;
};

/// Runs the sizing search on `s` as the CLI's plan command prepares it (plan::sizing_options
/// with the core's profiles and the scenario's node). Throws as plan::size_deployment does.
[[nodiscard]] plan::SizingResult search_sizing(const model::Scenario& s, const Core& core,
                                               std::stop_token stop = {},
                                               const sim::ProgressFn& progress = {});

/// Adopts one configuration of a sizing search into `s`: plan::configured_scenario with the
/// plan's candidate, keeping the scenario's `plan:` block, and the swap bandwidth following the
/// accelerator as change_hardware does. Returns false when the candidate index is out of range.
bool adopt_configuration(model::Scenario& s, const hwdb::Database& db,
                         const model::PlanConfig& plan, const plan::SizingConfig& config);

/// The hwdb names of the candidates in `s`'s plan block (empty: none given).
[[nodiscard]] std::vector<std::string> plan_candidate_names(const model::Scenario& s);

/// Sets the plan block's candidates to the accelerators named (each resolved with
/// hwdb::plan_candidate; an entry already in the plan keeps its node and prices). Creates the
/// plan block when the scenario has none. Throws InputError for an unknown name.
void set_plan_candidates(model::Scenario& s, const hwdb::Database& db,
                         const std::vector<std::string>& accelerators);

struct SimChartData;

/// The outcome of one simulation run: the result, or the message of the error that stopped it.
struct SimOutcome {
    std::optional<sim::SimResult> result;
    std::string error;
    double wall_s = 0;
    /// The latency CDFs, prepared on the worker thread (sim_charts.hpp); null: the view makes
    /// them from `result`.
    std::shared_ptr<const SimChartData> charts;
};

} // namespace gpuplan::gui
