#pragma once
/// Models the way users name them: a catalog name or alias, a Hugging Face repository id
/// ("meta-llama/Llama-3.1-70B-Instruct", "Qwen/Qwen2.5-72B-Instruct-AWQ") matched to the catalog's
/// base model, or a config.json in the local Hugging Face cache, read offline.

#include "hwdb/database.hpp"
#include "model/model_spec.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpuplan::hwdb {

/// The local Hugging Face hub cache, as huggingface_hub finds it: $HF_HUB_CACHE, else
/// $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. The folder
/// need not exist.
[[nodiscard]] std::filesystem::path hf_hub_cache();

/// The config.json of repository `repo_id` ("org/name", matched case-insensitively) in the hub
/// cache `hub` (layout models--ORG--NAME/snapshots/REVISION/config.json): the revision that
/// refs/main names, else the most recently written snapshot that has one; nullopt when none.
[[nodiscard]] std::optional<std::filesystem::path>
find_cached_config(const std::filesystem::path& hub, std::string_view repo_id);

/// The weight precision a repository name states by its usual suffixes: AWQ -> awq-int4,
/// GPTQ(-Int8) -> gptq-int4 (gptq-int8), FP8 -> fp8, NVFP4/FP4 -> nvfp4, MXFP4 -> mxfp4,
/// W8A8/INT8 -> int8, W4A16 -> int4, W8A16 -> int8-weight-only; nullopt when it states none.
[[nodiscard]] std::optional<model::Precision> precision_in_name(std::string_view name);

/// A model found for a name, and how.
struct ResolvedModel {
    model::ModelSpec spec; ///< with `weights` set to the checkpoint's precision when known
    /// One lowercase sentence for the user when the match is not a plain catalog name or alias
    /// (a base model found by dropping suffixes, or a cached config.json); "" otherwise.
    std::string note;
};

/// Resolves `name`, offline, in this order:
/// 1. a catalog name or alias (Database::find_model), as is;
/// 2. the catalog's base model of a repository name: the part after the last '/' with
///    trailing suffixes dropped (-Instruct, -Chat, -hf, -Base, -it, -FP8, -AWQ, -GPTQ, -Int4,
///    -Int8, -W4A16, -W8A8, -dynamic, quantized.w4a16, ...) and a leading "Meta-" dropped;
///    its weights come from the cached config.json's quantization_config when the repository
///    is in `hub`, else from the suffixes (precision_in_name);
/// 3. the repository's config.json in the hub cache `hub` (import_hf_checkpoint), named after
///    the repository.
/// Throws InputError naming the folder searched, with a "did you mean" from the catalog that
/// prefers the same family and size, when nothing matches; ConfigError from the import when a
/// cached config.json cannot be read.
[[nodiscard]] ResolvedModel resolve_model(const Database& db, std::string_view name,
                                          const std::filesystem::path& hub);

/// resolve_model with hub = hf_hub_cache().
[[nodiscard]] ResolvedModel resolve_model(const Database& db, std::string_view name);

} // namespace gpuplan::hwdb
