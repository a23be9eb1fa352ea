#include "hwdb/model_resolver.hpp"

#include "hwdb/database.hpp"
#include "hwdb/file_io.hpp"
#include "hwdb/hf_import.hpp"
#include "model/error.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace gpuplan::hwdb {
namespace {

// A name ending in .yaml or .yml is a catalog file (what `gpuplan model import -o` writes), not a
// Hugging Face repository: "./my.yaml" has a '/' but no repository is called that.
bool is_model_file_name(std::string_view name) {
    const auto ends = [&](std::string_view ext) {
        return name.size() > ext.size() &&
               std::equal(ext.rbegin(), ext.rend(), name.rbegin(), [](char a, char b) {
                   return a == std::tolower(static_cast<unsigned char>(b));
               });
    };
    return ends(".yaml") || ends(".yml");
}

// The one model of a catalog file, with a note naming the file.
ResolvedModel read_model_file(const std::filesystem::path& path) {
    Database file_db;
    file_db.add_yaml(read_text_file(path, "model file"), path.string());
    if (file_db.models().size() != 1) {
        throw InputError(path.string() + ": holds " + std::to_string(file_db.models().size()) +
                         " models under 'models:'; --model FILE takes a file with exactly one, "
                         "as 'gpuplan model import -o FILE' writes");
    }
    const model::ModelSpec& m = file_db.models().front();
    return {m, "model '" + m.name + "' read from " + path.string()};
}

namespace fs = std::filesystem;

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::vector<std::string> split(std::string_view s, std::string_view separators) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        const std::size_t end = std::min(s.find_first_of(separators, start), s.size());
        if (end > start) {
            out.emplace_back(s.substr(start, end - start));
        }
        start = end + 1;
    }
    return out;
}

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
}

/// Suffixes that name a fine-tune or a quantization of the same architecture, as the Hub's
/// repository names spell them (meta-llama/Llama-3.1-8B-Instruct, Qwen/Qwen2.5-7B-Instruct-AWQ,
/// neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8-dynamic, ...-quantized.w4a16).
bool is_variant_suffix(const std::string& token) {
    static constexpr std::array<std::string_view, 23> kSuffixes{
        "instruct", "chat",  "hf",   "base", "it",    "fp8",  "dynamic", "static",
        "awq",      "gptq",  "int4", "int8", "w4a16", "w8a8", "w8a16",   "nvfp4",
        "fp4",      "mxfp4", "gguf", "bnb",  "4bit",  "8bit", "turbo"};
    return std::find(kSuffixes.begin(), kSuffixes.end(), token) != kSuffixes.end() ||
           token.rfind("quantized", 0) == 0;
}

/// The repository part of "org/name" (the whole text without a '/').
std::string_view repository_name(std::string_view id) {
    const auto slash = id.rfind('/');
    return slash == std::string_view::npos ? id : id.substr(slash + 1);
}

/// The catalog entry of `name` after dropping trailing variant suffixes and a leading "meta-".
const model::ModelSpec* find_base_model(const Database& db, std::string_view name) {
    std::vector<std::string> tokens = split(normalize_name(repository_name(name)), "-");
    while (!tokens.empty()) {
        std::string candidate;
        for (const auto& t : tokens) {
            candidate += (candidate.empty() ? "" : "-") + t;
        }
        if (const model::ModelSpec* m = db.find_model(candidate)) {
            return m;
        }
        if (candidate.rfind("meta-", 0) == 0) {
            if (const model::ModelSpec* m = db.find_model(candidate.substr(5))) {
                return m;
            }
        }
        if (!is_variant_suffix(tokens.back())) {
            break;
        }
        tokens.pop_back();
    }
    return nullptr;
}

} // namespace

fs::path hf_hub_cache() {
    // huggingface_hub constants.py: HF_HUB_CACHE, else HF_HOME/hub, HF_HOME defaulting to
    // XDG_CACHE_HOME/huggingface, XDG_CACHE_HOME to ~/.cache.
    if (const std::string hub = env("HF_HUB_CACHE"); !hub.empty()) {
        return hub;
    }
    if (const std::string home = env("HF_HOME"); !home.empty()) {
        return fs::path(home) / "hub";
    }
    if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) {
        return fs::path(xdg) / "huggingface" / "hub";
    }
    return fs::path(env("HOME")) / ".cache" / "huggingface" / "hub";
}

std::optional<fs::path> find_cached_config(const fs::path& hub, std::string_view repo_id) {
    const std::vector<std::string> parts = split(repo_id, "/");
    if (parts.size() != 2) {
        return std::nullopt;
    }
    // huggingface_hub file_download.py repo_folder_name: "models--" + id with '/' -> "--".
    const std::string folder = "models--" + parts[0] + "--" + parts[1];
    std::error_code ec;
    fs::path repo = hub / folder;
    if (!fs::is_directory(repo, ec)) {
        // The Hub matches ids case-insensitively; the cache keeps the spelling of the download.
        repo.clear();
        for (fs::directory_iterator it(hub, ec), end; !ec && it != end; it.increment(ec)) {
            if (lower(it->path().filename().string()) == lower(folder) && it->is_directory(ec)) {
                repo = it->path();
                break;
            }
        }
        if (repo.empty()) {
            return std::nullopt;
        }
    }
    const fs::path snapshots = repo / "snapshots";
    if (std::ifstream ref(repo / "refs" / "main"); ref) {
        std::string revision;
        ref >> revision;
        const fs::path config = snapshots / revision / "config.json";
        if (!revision.empty() && fs::is_regular_file(config, ec)) {
            return config;
        }
    }
    std::optional<fs::path> best;
    fs::file_time_type best_time{};
    for (fs::directory_iterator it(snapshots, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path config = it->path() / "config.json";
        if (!fs::is_regular_file(config, ec)) {
            continue;
        }
        const auto time = fs::last_write_time(it->path(), ec);
        if (!best || time > best_time || (time == best_time && config < *best)) {
            best = config;
            best_time = time;
        }
    }
    return best;
}

std::optional<model::Precision> precision_in_name(std::string_view name) {
    const std::vector<std::string> tokens = split(lower(repository_name(name)), "-_.");
    const auto has = [&](std::string_view t) {
        return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
    };
    const char* format = nullptr;
    if (has("awq")) {
        format = "awq-int4";
    } else if (has("gptq")) {
        format = has("int8") || has("8bit") ? "gptq-int8" : "gptq-int4";
    } else if (has("nvfp4") || has("fp4")) {
        format = "nvfp4";
    } else if (has("mxfp4")) {
        format = "mxfp4";
    } else if (has("fp8")) {
        format = "fp8";
    } else if (has("w8a8") || has("int8")) {
        format = "int8";
    } else if (has("w4a16") || has("int4")) {
        format = "int4";
    } else if (has("w8a16")) {
        format = "int8-weight-only";
    }
    if (format == nullptr) {
        return std::nullopt;
    }
    return model::parse_precision(format);
}

ResolvedModel resolve_model(const Database& db, std::string_view name, const fs::path& hub) {
    const bool is_repo_id = name.find('/') != std::string_view::npos;
    if (const model::ModelSpec* m = db.find_model(name)) {
        ResolvedModel r{*m, ""};
        if (is_repo_id) {
            // An alias such as Qwen/Qwen2.5-72B-Instruct: the checkpoint the user named is the
            // one --emit launches, not the catalog's base repository.
            r.spec.hf_id = std::string(name);
        }
        return r;
    }
    if (is_model_file_name(name)) {
        return read_model_file(fs::path(name));
    }
    const std::optional<fs::path> cached =
        is_repo_id ? find_cached_config(hub, name) : std::nullopt;
    const std::string quoted = "'" + std::string(name) + "'";

    if (const model::ModelSpec* base = find_base_model(db, name)) {
        ResolvedModel r{*base, ""};
        if (is_repo_id) {
            r.spec.hf_id = std::string(name); // the quantized checkpoint named, launched as is
        }
        std::string from;
        if (cached) {
            try {
                // The cached checkpoint's own quantization_config beats what its name suggests.
                r.spec.weights = import_hf_checkpoint(*cached, base->name).weights;
                from = "its config.json in the Hugging Face cache";
            } catch (const ConfigError& e) {
                if (e.key_path().rfind("quantization", 0) == 0) {
                    throw;
                }
                // An architecture the importer does not read: the catalog's base model stands.
            }
        }
        if (from.empty()) {
            if (auto p = precision_in_name(name)) {
                r.spec.weights = *p;
                from = "its name";
            }
        }
        r.note = "model " + quoted + " is planned as catalog model '" + base->name + "'";
        if (!from.empty()) {
            r.note += " with " + (r.spec.weights ? r.spec.weights->name : std::string("bf16")) +
                      " weights (from " + from + ")";
        } else {
            // GGUF repositories hold several quantizations and bitsandbytes has no gpuplan
            // precision: say that the weights are a guess rather than plan them silently.
            const std::vector<std::string> tokens = split(lower(repository_name(name)), "-_.");
            for (const char* opaque : {"gguf", "bnb", "4bit", "8bit"}) {
                if (std::find(tokens.begin(), tokens.end(), opaque) != tokens.end()) {
                    r.note += " with the catalog's " + model::checkpoint_weights(r.spec).name +
                              " weights, though its name says it is quantized (GGUF or "
                              "bitsandbytes); set the weight precision, e.g. --weights q4_k_m";
                    break;
                }
            }
        }
        return r;
    }

    if (cached) {
        ResolvedModel r{import_hf_checkpoint(*cached, hf_canonical_name(name)), ""};
        r.spec.hf_id = std::string(name);
        if (std::find(r.spec.aliases.begin(), r.spec.aliases.end(), r.spec.hf_id) ==
            r.spec.aliases.end()) {
            r.spec.aliases.push_back(r.spec.hf_id);
        }
        r.note = "model " + quoted + " is not in the catalog; read from " + cached->string() +
                 (r.spec.weights ? " with " + r.spec.weights->name + " weights" : "");
        return r;
    }

    std::string message = "unknown model " + quoted;
    if (auto hint = db.suggest_model(name)) {
        message += "; did you mean '" + *hint + "'?";
    }
    message += " ('gpuplan model list' lists them";
    if (is_repo_id) {
        message += "; a Hugging Face id also resolves offline when its config.json is in " +
                   hub.string() + ", e.g. after 'huggingface-cli download " + std::string(name) +
                   " config.json'";
    }
    throw InputError(message + ")");
}

ResolvedModel resolve_model(const Database& db, std::string_view name) {
    return resolve_model(db, name, hf_hub_cache());
}

} // namespace gpuplan::hwdb
