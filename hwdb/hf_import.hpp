#pragma once
/// Import of a Hugging Face `config.json` into a catalog model, so a user can plan for a model
/// that is not in `hwdb/models/` (write it out with model_to_yaml to keep it).

#include "model/model_spec.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::hwdb {

/// Builds a ModelSpec named `name` from the text of a Hugging Face `config.json`.
///
/// Name and Hub id (ModelSpec::hf_id, kept for `--emit`): `hub_id` when given (refused when
/// hub_id_problem finds it invalid); else a `name` of the form ORG/NAME (the id; the name is its
/// hf_canonical_name); else the config's `_name_or_path` (or `name_or_path`) when it is a valid
/// repository id. An empty `name` takes the canonical form of that id (or of a local
/// `_name_or_path`); with neither it throws ConfigError asking for --name or --hub-id.
///
/// The family comes from `architectures[0]`, else `model_type`, else `text_config.model_type`;
/// supported_hf_architectures() lists them. A multimodal wrapper's language model is read from
/// its `text_config` (keys missing there are looked up at the top level) and `source` says what
/// is left out. Fields a config may omit take the defaults of the transformers config class (kv
/// heads = heads, head_dim = hidden_size / heads, untied embeddings except Gemma-2). MLA
/// families' head_dim is the query/key head size qk_nope_head_dim + qk_rope_head_dim. Layer
/// kinds: sliding windows (layer_types or the family's rule), Llama 4's chunked attention,
/// gpt-oss's sinks, DSA's indexer (DeepSeek-V3.2, GLM-5) and Qwen3-Next/3.5 Gated DeltaNet
/// layers. Python's `Infinity`, `-Infinity` and `NaN` literals are accepted.
///
/// A config.json has no parameter count, so `published_params` (and
/// `published_active_params` for MoE) are set to count_params() of the imported architecture;
/// `source` says so.
///
/// Throws ConfigError naming `file`: with line and column for malformed JSON; with the key for
/// a missing or mistyped field, an unknown architecture (naming the field not understood, with
/// the supported list), a recognised architecture whose layout gpuplan cannot hold yet (its
/// field and the reason), and for values that model::validate rejects.
///
/// `quantization_config` sets ModelSpec::weights (docs/hwdb-schema.md, "Importing a Hugging
/// Face checkpoint", lists the mapping): awq and gptq with their bits and group_size, fp8 and
/// fbgemm_fp8, mxfp4, compressed-tensors config_groups (int4/int8 weight-only, int8 W8A8, FP8,
/// NVFP4) and modelopt with a quant_algo or config_groups; its `kv_cache_scheme` (8-bit float)
/// sets ModelSpec::kv_cache to fp8. Another quant_method, or a scheme without a gpuplan
/// precision, throws ConfigError naming the file, the key and the supported list.
[[nodiscard]] model::ModelSpec import_hf_config(std::string_view json_text, const std::string& file,
                                                const std::string& name,
                                                const std::string& hub_id = "");

/// import_hf_config of the file `config_json`, and of NVIDIA ModelOpt's `hf_quant_config.json`
/// beside it when there is one (`ORG--NAME_hf_quant_config.json` beside
/// `ORG--NAME_config.json`): its `quantization.quant_algo` (FP8, NVFP4, W4A16_AWQ, ...) sets
/// ModelSpec::weights and `kv_cache_quant_algo` ModelSpec::kv_cache. Without a Hub id from the
/// arguments or the config, hub_id_from_location supplies one. Throws InputError when a file
/// cannot be read.
[[nodiscard]] model::ModelSpec import_hf_checkpoint(const std::filesystem::path& config_json,
                                                    const std::string& name,
                                                    const std::string& hub_id = "");

/// Why `id` is not a valid Hugging Face repository id (huggingface_hub's validate_repo_id:
/// NAME or NAMESPACE/NAME of letters, digits, '-', '_', '.', no "--" or ".."); nullopt when
/// it is valid.
[[nodiscard]] std::optional<std::string> hub_id_problem(std::string_view id);

/// The repository id a config.json's location names: the Hugging Face cache's
/// models--ORG--NAME/snapshots/REV/config.json, a folder ORG--NAME/config.json, or a file
/// ORG--NAME_config.json; "" when none does (or the id would be invalid).
[[nodiscard]] std::string hub_id_from_location(const std::filesystem::path& config_json);

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
