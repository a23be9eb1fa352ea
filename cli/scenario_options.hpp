#pragma once
/// The options shared by `fit`, `estimate` and `compare`: a scenario file and/or flags that
/// override it (--model --gpu --gpus --tp --pp --weights --kv --max-model-len --concurrency
/// --input-len --output-len and the engine knobs), turned into one model::Scenario.

#include "cli/cli_context.hpp"
#include "cli/options.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/efficiency.hpp"
#include "model/scenario.hpp"

#include "hwdb/scenario_loader.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::cli {

/// Values of the scenario flags as given (empty/nullopt: not given).
struct ScenarioFlags {
    std::string file;
    std::string model, gpu, node, weights, kv, activations, engine, profile;
    std::optional<int> gpus, tp, pp, ep, max_model_len, concurrency, input_len, output_len, batch,
        batch_requests;
    std::optional<int> max_num_seqs, max_num_batched_tokens, block_size;
    std::optional<double> gpu_memory_utilization, rate;
    std::optional<std::string> prefix_caching, chunked_prefill;
    bool enforce_eager = false;
    bool allow_long_context = false;
    std::vector<std::string> sets; ///< --set KEY=VALUE, applied to the file's YAML
};

/// --set KEY=VALUE flags as scenario overrides (checked like the file's own keys). Throws
/// UsageError for a flag without '='. Shared by every command that reads a scenario.
[[nodiscard]] std::vector<hwdb::ScenarioOverride>
parse_set_flags(const std::vector<std::string>& sets);

/// Adds the scenario flags to `desc`, bound to `flags`.
void add_scenario_options(po::options_description& desc, ScenarioFlags& flags);

/// A token count as vLLM's --max-model-len reads it: 8192, "8k" (8000), "8K" (8192), "25.6k".
/// Throws UsageError naming `flag` and the accepted forms.
[[nodiscard]] int parse_token_count(const std::string& text, const char* flag);

/// The scenario: loaded from flags.file when given, then every given flag applied on top.
/// Without a file, --model and --gpu are required. Throws InputError naming the flag.
[[nodiscard]] model::Scenario build_scenario(CliContext& ctx, const ScenarioFlags& flags);

/// The efficiency profile for the scenario's GPU: --profile FILE, else the best profile under
/// hwdb/profiles for this GPU (same architecture, flagged extrapolated), else the built-in
/// spec-sheet defaults.
[[nodiscard]] model::EfficiencyProfile choose_profile(CliContext& ctx, const ScenarioFlags& flags,
                                                      const model::AcceleratorSpec& gpu);

} // namespace gpuplan::cli
