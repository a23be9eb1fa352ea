#pragma once
/// Import of a Hugging Face `config.json` into a catalog model, so a user can plan for a model
/// that is not in `hwdb/models/` (write it out with model_to_yaml to keep it).

#include "model/model_spec.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::hwdb {

/// Builds a ModelSpec named `name` from the text of a Hugging Face `config.json`.
///
/// The family comes from `architectures[0]` (or `model_type` when that is absent or unknown):
/// Llama, Qwen2, Qwen3, Qwen3-MoE, Mistral, Mixtral, DeepSeek-V3 and Gemma-2. Fields a config
/// may omit take the defaults of the transformers config class (kv heads = heads,
/// head_dim = hidden_size / heads, untied embeddings except Gemma-2). DeepSeek-V3's head_dim is
/// the query/key head size qk_nope_head_dim + qk_rope_head_dim.
///
/// A config.json has no parameter count, so `published_params` (and
/// `published_active_params` for MoE) are set to count_params() of the imported architecture;
/// `source` says so. `hf_id` is taken from `_name_or_path` when that looks like a repository id.
///
/// Throws ConfigError naming `file`: with line and column for malformed JSON; with the key for
/// a missing or mistyped field, an unsupported architecture or layer layout, and for values
/// that model::validate rejects.
[[nodiscard]] model::ModelSpec import_hf_config(std::string_view json_text, const std::string& file,
                                                const std::string& name);

/// The `architectures[0]` values import_hf_config accepts, each followed by its `model_type` in
/// parentheses, e.g. "LlamaForCausalLM (llama)"; for help texts and error messages.
[[nodiscard]] std::vector<std::string> supported_hf_architectures();

} // namespace gpuplan::hwdb
