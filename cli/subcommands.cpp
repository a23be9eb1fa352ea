// The one table of subcommands: `gpuplan` (cli/main.cpp) and the Python module (python/) both
// dispatch through it, so a command has one name and one function for both front ends.
#include "cli/cli_context.hpp"

namespace gpuplan::cli {

namespace {

constexpr Subcommand kSubcommands[] = {
    {"hw list", run_hw_list, "list accelerators (or --links, --servers, --racks)"},
    {"hw show", run_hw_show, "show one accelerator, server, rack or link with sources"},
    {"model list", run_model_list, "list the model catalog"},
    {"model show", run_model_show, "show a model's architecture, parameters and KV cache"},
    {"model import", run_model_import, "convert a Hugging Face config.json to catalog YAML"},
    {"scenario check", run_scenario_check, "validate a scenario file"},
    {"fit", run_fit, "memory per GPU: does it fit, KV blocks, max concurrency, fewest GPUs"},
    {"estimate", run_estimate,
     "speed: TTFT, TPOT, throughput, MFU/MBU, binding resource, what-ifs"},
    {"diagnose", run_diagnose,
     "observed metrics vs the model: symptom, cause, check, re-estimated fixes"},
    {"curve", run_curve,
     "sizing curves: throughput, TTFT, TPOT against load per GPU, highest load meeting the SLO"},
    {"compare", run_compare, "several GPUs or configurations side by side for one workload"},
    {"train", run_train, "training: memory per GPU, step time, MFU, time and cost, layout search"},
    {"rack", run_rack, "nodes per rack, racks needed, binding limit (budget, PDU, cooling, U)"},
    {"cost", run_cost, "monthly cost own vs rent, cost per million tokens, break-even month"},
    {"calib import", run_calib_import,
     "read measured kernel times (Vidur, BLIS, LLMCompass, torch CSV)"},
    {"calib fit", run_calib_fit,
     "fit an efficiency profile to measured points (or its step overhead to benchmarks)"},
    {"calib validate", run_calib_validate,
     "model error vs measurements, fitted and default profile"},
    {"calib fit-power", run_calib_fit_power,
     "fit the power model (resident power, activity weights) to measured power samples"},
    {"simulate", run_simulate, "discrete-event serving simulation: latency tails, queues, goodput"},
    {"plan", run_plan, "sizing search: cheapest GPUs, layout and precision that meet the SLOs"},
    {"sweep", run_sweep,
     "run estimate, simulate, cost or train over a grid of scenario keys (CSV + JSON Lines)"},
    {"merge", run_merge, "join a sweep's shard tables into the table one process writes"},
};

} // namespace

std::span<const Subcommand> subcommands() {
    return kSubcommands;
}

const Subcommand* find_subcommand(std::string_view words) {
    for (const Subcommand& s : kSubcommands) {
        if (words == s.words) {
            return &s;
        }
    }
    return nullptr;
}

} // namespace gpuplan::cli
