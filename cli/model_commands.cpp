// `gpuplan model list|show|import`: the model catalog.
#include "cli/cli_context.hpp"
#include "cli/json_out.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"
#include "cli/table.hpp"
#include "hwdb/hf_import.hpp"
#include "hwdb/model_resolver.hpp"
#include "hwdb/model_yaml_writer.hpp"
#include "model/kv_cache.hpp"
#include "model/unit_parser.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <ostream>

namespace gpuplan::cli {
namespace {

nlohmann::json model_json(const model::ModelSpec& m) {
    const model::ParamCount p = model::count_params(m);
    const auto bf16 = model::parse_precision("bf16");
    nlohmann::json j = {
        {"name", m.name},
        {"aliases", m.aliases},
        {"family", m.family},
        {"hf_id", m.hf_id},
        {"layers", m.layers},
        {"hidden_size", m.hidden_size},
        {"heads", m.heads},
        {"kv_heads", m.kv_heads},
        {"head_dim", m.head_dim},
        {"ffn_size", m.ffn_size},
        {"vocab_size", m.vocab_size},
        {"max_context", m.max_context},
        {"attention", model::to_string(m.attention)},
        {"tied_embeddings", m.tied_embeddings},
        {"params", p.total},
        {"active_params", p.active},
        {"published_params", m.published_params},
        {"params_error_pct", 100.0 * (p.total - m.published_params) / m.published_params},
        {"kv_bytes_per_token_bf16", model::kv_bytes_per_token(m, bf16).si()},
        {"weights_bytes_bf16", p.total * 2.0},
        {"source", m.source},
        {"weights", model::checkpoint_weights(m).name},
    };
    if (m.moe) {
        j["moe"] = {{"experts", m.moe->experts},
                    {"active_experts", m.moe->active_experts},
                    {"shared_experts", m.moe->shared_experts},
                    {"expert_ffn_size", m.moe->expert_ffn_size},
                    {"first_dense_layers", m.moe->first_dense_layers}};
        j["published_active_params"] = m.published_active_params;
    }
    if (m.mla) {
        j["mla"] = {{"q_lora_rank", m.mla->q_lora_rank},
                    {"kv_lora_rank", m.mla->kv_lora_rank},
                    {"qk_nope_head_dim", m.mla->qk_nope_head_dim},
                    {"qk_rope_head_dim", m.mla->qk_rope_head_dim},
                    {"v_head_dim", m.mla->v_head_dim}};
    }
    if (m.sliding_window) {
        j["sliding_window"] = {{"window", m.sliding_window->window},
                               {"windowed_layers", m.sliding_window->windowed_layers}};
        if (m.sliding_window->chunked) {
            j["sliding_window"]["chunked"] = true;
        }
    }
    if (m.state) {
        j["state"] = {{"kind", model::name_of(m.state->kind)},
                      {"state_layers", m.state->state_layers},
                      {"state_bytes_per_sequence", model::state_bytes_per_sequence(m).si()}};
    }
    if (m.indexer) {
        j["indexer"] = {{"heads", m.indexer->heads},
                        {"head_dim", m.indexer->head_dim},
                        {"top_k", m.indexer->top_k}};
    }
    return j;
}

std::string billions(double n) {
    return fixed(n / 1e9, n < 1e10 ? 2 : 1) + "B";
}

} // namespace

int run_model_list(CliContext& ctx) {
    po::options_description desc("options");
    desc.add_options()("json", "machine-readable output");
    po::variables_map vm;
    if (!parse_options("model list", ctx.args, desc, {}, vm, *ctx.out, "[--json]")) {
        return 0;
    }
    const auto& models = ctx.db().models();
    if (vm.count("json")) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& m : models) {
            out.push_back(model_json(m));
        }
        *ctx.out << json_text(out) << '\n';
        return 0;
    }
    Table t(
        {"name", "family", "params", "active", "layers", "attention", "KV/token bf16", "context"});
    const auto bf16 = model::parse_precision("bf16");
    for (const auto& m : models) {
        const auto p = model::count_params(m);
        t.add_row({m.name, m.family, billions(p.total), m.moe ? billions(p.active) : "-",
                   std::to_string(m.layers), model::to_string(m.attention),
                   model::format_gib(model::kv_bytes_per_token(m, bf16), 0),
                   std::to_string(m.max_context)});
    }
    t.print(*ctx.out);
    *ctx.out << models.size() << " models; parameters computed from the architecture\n";
    return 0;
}

int run_model_show(CliContext& ctx) {
    po::options_description desc("options");
    std::string name;
    desc.add_options()("name", po::value(&name)->required(),
                       "model name or alias")("json", "machine-readable output");
    po::positional_options_description pos;
    pos.add("name", 1);
    po::variables_map vm;
    if (!parse_options("model show", ctx.args, desc, pos, vm, *ctx.out, "NAME [--json]")) {
        return 0;
    }
    const hwdb::ResolvedModel resolved = hwdb::resolve_model(ctx.db(), name);
    if (!resolved.note.empty()) {
        *ctx.err << "note: " << resolved.note << '\n';
    }
    const model::ModelSpec& m = resolved.spec;
    const nlohmann::json j = model_json(m);
    if (vm.count("json")) {
        *ctx.out << json_text(j) << '\n';
        return 0;
    }
    auto& out = *ctx.out;
    const auto p = model::count_params(m);
    const auto bf16 = model::parse_precision("bf16");
    out << m.name << " (" << m.family << ")\n"
        << "  parameters        " << billions(p.total) << " computed (" << fixed(p.total, 0)
        << "), published " << billions(m.published_params) << '\n';
    if (m.moe) {
        out << "  active/token      " << billions(p.active) << " computed, published "
            << billions(m.published_active_params) << "; " << m.moe->experts << " experts, top-"
            << m.moe->active_experts << ", " << m.moe->shared_experts << " shared\n";
    }
    out << "  layers            " << m.layers << ", hidden " << m.hidden_size << ", heads "
        << m.heads << " (kv " << m.kv_heads << ", dim " << m.head_dim << "), "
        << model::to_string(m.attention) << '\n'
        << "  ffn               " << m.ffn_size << ' ' << model::name_of(m.mlp) << '\n'
        << "  vocabulary        " << m.vocab_size << (m.tied_embeddings ? ", tied embeddings" : "")
        << '\n'
        << "  max context       " << m.max_context << " tokens\n"
        << "  weights at bf16   " << model::format_gb(Bytes(p.total * 2)) << " ("
        << model::format_gib(Bytes(p.total * 2)) << ")\n"
        << "  KV cache / token  " << fixed(model::kv_bytes_per_token(m, bf16).si(), 0)
        << " B at bf16 (" << model::format_gib(model::kv_bytes_per_token(m, bf16)) << ")\n";
    if (m.sliding_window) {
        out << (m.sliding_window->chunked ? "  chunked attention " : "  sliding window    ")
            << m.sliding_window->window << " tokens on " << m.sliding_window->windowed_layers
            << " layers\n";
    }
    if (m.state) {
        out << "  recurrent layers  " << m.state->state_layers << " "
            << model::name_of(m.state->kind) << " layers, "
            << model::format_gib(model::state_bytes_per_sequence(m))
            << " of state per sequence whatever its length\n";
    }
    if (m.indexer) {
        out << "  sparse attention  indexer of " << m.indexer->heads << " x " << m.indexer->head_dim
            << " picks the top " << m.indexer->top_k << " tokens; its keys are in the KV figure\n";
    }
    if (m.kv_cache) {
        out << "  checkpoint KV     " << m.kv_cache->name
            << " (the default of precision.kv_cache)\n";
    }
    if (m.weights) {
        out << "  checkpoint        " << m.weights->name << " weights ("
            << model::format_gb(Bytes(p.total * m.weights->bytes_per_element()))
            << "; the default of precision.weights)\n";
    }
    out << "  source            " << m.source << '\n';
    return 0;
}

int run_model_import(CliContext& ctx) {
    po::options_description desc("options");
    std::string file;
    std::string name;
    std::string output;
    std::string hub_id;
    desc.add_options()("file", po::value(&file)->required(),
                       "Hugging Face config.json, its folder, or a repository id (ORG/NAME) "
                       "whose config.json is in the local Hugging Face cache")(
        "name", po::value(&name),
        "canonical name for the catalog (default: from the config's _name_or_path, or the "
        "repository id); an ORG/NAME is taken as the Hub id and named after it")(
        "hub-id", po::value(&hub_id),
        "Hugging Face repository id (ORG/NAME) of the checkpoint, kept as hf_id for --emit "
        "(default: --name when it is one, the config's _name_or_path, or the file's location: "
        "models--ORG--NAME, ORG--NAME/config.json, ORG--NAME_config.json)")(
        "output,o", po::value(&output), "write the YAML here instead of standard output");
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_options("model import", ctx.args, desc, pos, vm, *ctx.out,
                       "config.json|FOLDER|ORG/NAME [--name NAME] [--hub-id ORG/NAME] [-o FILE]")) {
        return 0;
    }
    // A path first; then, for an ORG/NAME that is no path, the Hugging Face cache (offline).
    std::filesystem::path config = file;
    std::error_code ec;
    std::string cached_id;
    if (std::filesystem::is_directory(config, ec)) {
        config /= "config.json";
    } else if (!std::filesystem::exists(config, ec) && !file.ends_with(".json") &&
               std::count(file.begin(), file.end(), '/') == 1 && file.front() != '.') {
        const auto hub = hwdb::hf_hub_cache();
        const auto cached = hwdb::find_cached_config(hub, file);
        if (!cached) {
            throw InputError(file + ": no such file, and no config.json for repository '" + file +
                             "' in the Hugging Face cache " + hub.string() +
                             "; give the path of a config.json, or download it first "
                             "('huggingface-cli download " +
                             file + " config.json')");
        }
        config = *cached;
        cached_id = file;
    }
    if (name.empty() && !cached_id.empty()) {
        name = hwdb::hf_canonical_name(cached_id); // the id names it, not the snapshot's folder
    }
    model::ModelSpec spec =
        hwdb::import_hf_checkpoint(config, name, hub_id.empty() ? cached_id : hub_id);
    *ctx.err << "imported " << spec.name << ": " << billions(model::count_params(spec).total)
             << " parameters, "
             << (spec.weights
                     ? spec.weights->name + " weights (from the checkpoint's quantization config)"
                     : std::string("16-bit weights (no quantization_config)"))
             << '\n';
    const std::string yaml = hwdb::model_to_yaml(spec);
    if (output.empty()) {
        *ctx.out << yaml;
        return 0;
    }
    write_output_file(output, yaml);
    *ctx.err << "wrote " << output << " (" << spec.name << ", "
             << billions(model::count_params(spec).total) << " parameters)\n";
    return 0;
}

} // namespace gpuplan::cli
