// `gpuplan scenario check`: validate a scenario file and summarize what it asks.
#include "cli/cli_context.hpp"
#include "cli/json_out.hpp"
#include "cli/options.hpp"
#include "cli/report_json.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/unit_parser.hpp"

#include <nlohmann/json.hpp>

#include <ostream>

namespace gpuplan::cli {

int run_scenario_check(CliContext& ctx) {
    po::options_description desc("options");
    std::vector<std::string> files;
    desc.add_options()("file", po::value(&files)->required()->multitoken(),
                       "scenario YAML file(s)")("json", "machine-readable output");
    po::positional_options_description pos;
    pos.add("file", -1);
    po::variables_map vm;
    if (!parse_options("scenario check", ctx.args, desc, pos, vm, *ctx.out, "FILE... [--json]")) {
        return 0;
    }
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : files) {
        const model::Scenario s = hwdb::load_scenario(f, ctx.db());
        const auto& d = s.deployment;
        nlohmann::json j = scenario_json(s);
        j["file"] = f;
        j["ok"] = true;
        out.push_back(std::move(j));
        if (!vm.count("json")) {
            *ctx.out << f << ": ok: " << d.model.name << " on " << d.gpus() << " x " << d.gpu.name
                     << " (tp " << d.par.tp << ", pp " << d.par.pp << ", dp " << d.par.dp
                     << "), weights " << d.prec.weights.name << ", KV " << d.prec.kv_cache.name
                     << ", link " << d.intra_node_link.name << '\n';
        }
    }
    if (vm.count("json")) {
        *ctx.out << json_text(out) << '\n';
    }
    return 0;
}

} // namespace gpuplan::cli
