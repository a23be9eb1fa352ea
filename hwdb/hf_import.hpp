#pragma once
/// Import of a Hugging Face `config.json` into a catalog model, so a user can plan for a model
/// that is not in `hwdb/models/` (write it out with model_to_yaml to keep it).

#include "model/model_spec.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::hwdb {

/// Builds a ModelSpec named `name` from the text of a Hugging Face `config.json`. An empty
/// `name` takes the canonical form (hf_canonical_name) of the config's `_name_or_path` (or
/// `name_or_path`); without either it throws ConfigError asking for a name.
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
///
/// `quantization_config` sets ModelSpec::weights (docs/hwdb-schema.md, "Importing a Hugging
/// Face checkpoint", lists the mapping): awq and gptq with their bits and group_size, fp8 and
/// fbgemm_fp8, mxfp4, compressed-tensors config_groups (int4/int8 weight-only, int8 W8A8, FP8,
/// NVFP4) and modelopt with a quant_algo. Another quant_method, or a scheme without a gpuplan
/// precision, throws ConfigError naming the file, the key and the supported list.
[[nodiscard]] model::ModelSpec import_hf_config(std::string_view json_text, const std::string& file,
                                                const std::string& name);

/// import_hf_config of the file `config_json`, and of NVIDIA ModelOpt's `hf_quant_config.json`
/// beside it when there is one: its `quantization.quant_algo` (FP8, NVFP4, W4A16_AWQ, ...)
/// sets ModelSpec::weights. Throws InputError when a file cannot be read.
[[nodiscard]] model::ModelSpec import_hf_checkpoint(const std::filesystem::path& config_json,
                                                    const std::string& name);

/// The catalog spelling of a repository id or path: its last component, lowercase, with runs of
/// characters other than letters, digits, '.' and '-' turned into one '-'
/// ("meta-llama/Llama-3.1-8B-Instruct" -> "llama-3.1-8b-instruct"); "" when nothing is left.
[[nodiscard]] std::string hf_canonical_name(std::string_view id_or_path);

/// The `quantization_config.quant_method` values import_hf_config accepts.
[[nodiscard]] std::vector<std::string> supported_quant_methods();

/// The `architectures[0]` values import_hf_config accepts, each followed by its `model_type` in
/// parentheses, e.g. "LlamaForCausalLM (llama)"; for help texts and error messages.
[[nodiscard]] std::vector<std::string> supported_hf_architectures();

} // namespace gpuplan::hwdb
