#include "hwdb/hf_import.hpp"

#include "hwdb/file_io.hpp"

#include "hwdb/database.hpp"
#include "hwdb/model_yaml_writer.hpp"

#include "model/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace gpuplan::hwdb {

namespace {

using nlohmann::json;

/// One supported family: the transformers class in `architectures[0]`, its `model_type`, and
/// the catalog family name (docs/hwdb-schema.md, models.family). A multimodal wrapper
/// (`...ForConditionalGeneration` with a `text_config`) names the family of its language model.
struct Family {
    const char* architecture;
    const char* model_type;
    const char* family;
};

constexpr std::array<Family, 23> families{{
    {"LlamaForCausalLM", "llama", "llama"},
    {"Qwen2ForCausalLM", "qwen2", "qwen2"},
    {"Qwen3ForCausalLM", "qwen3", "qwen3"},
    {"Qwen3MoeForCausalLM", "qwen3_moe", "qwen3-moe"},
    {"MistralForCausalLM", "mistral", "mistral"},
    {"MixtralForCausalLM", "mixtral", "mixtral"},
    {"DeepseekV3ForCausalLM", "deepseek_v3", "deepseek-v3"},
    {"Gemma2ForCausalLM", "gemma2", "gemma2"},
    {"Qwen3VLForConditionalGeneration", "qwen3_vl", "qwen3"},
    {"Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe", "qwen3-moe"},
    {"KimiK25ForConditionalGeneration", "kimi_k25", "deepseek-v3"},
    {"DeepseekV32ForCausalLM", "deepseek_v32", "deepseek-v32"},
    {"GlmMoeDsaForCausalLM", "glm_moe_dsa", "deepseek-v32"},
    {"GptOssForCausalLM", "gpt_oss", "gpt-oss"},
    {"Llama4ForConditionalGeneration", "llama4", "llama4"},
    {"Llama4ForCausalLM", "llama4_text", "llama4"},
    {"MiniMaxM2ForCausalLM", "minimax_m2", "minimax-m2"},
    {"Step3p7FlashForCausalLM", "step3p7", "step3p7"},
    {"Qwen3NextForCausalLM", "qwen3_next", "qwen3-next"},
    {"Qwen3_5ForConditionalGeneration", "qwen3_5", "qwen3-next"},
    {"Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe", "qwen3-next"},
    {"Qwen3_5MoeForCausalLM", "qwen3_5_moe_text", "qwen3-next"},
    {"NemotronHForCausalLM", "nemotron_h", "nemotron-h"},
}};

/// Architectures gpuplan recognises but cannot plan yet, with the field whose layout the model
/// has no place for. They are refused whole, never half-imported.
struct Refused {
    const char* architecture;
    const char* field;
    const char* reason;
};

constexpr std::array<Refused, 7> refused{{
    {"Gemma4ForConditionalGeneration", "global_head_dim",
     "Gemma 4's global layers have their own head size and KV heads "
     "(global_head_dim, num_global_key_value_heads, attention_k_eq_v) beside the sliding ones"},
    {"MiMoV2FlashForCausalLM", "swa_num_key_value_heads",
     "MiMo-V2-Flash's sliding-window layers have their own head counts and sizes "
     "(swa_num_key_value_heads, swa_head_dim) beside the full-attention ones"},
    {"DeepseekV4ForCausalLM", "compress_ratios",
     "DeepSeek-V4 compresses the KV of each layer by its own ratio (compress_ratios) and mixes "
     "the residual over hc_mult streams"},
    {"MiniMaxM3ForCausalLM", "sparse_attention_config",
     "MiniMax-M3's block-sparse attention (sparse_attention_config) selects KV blocks per layer "
     "with its own index heads"},
    {"MiniMaxM3SparseForConditionalGeneration", "sparse_attention_config",
     "MiniMax-M3's block-sparse attention (sparse_attention_config) selects KV blocks per layer "
     "with its own index heads"},
    {"KimiK3ForConditionalGeneration", "text_config.linear_attn_config",
     "Kimi-K3 mixes Kimi Delta Attention with MLA layers (linear_attn_config) and routes to "
     "latent experts of their own width (routed_expert_hidden_size)"},
    {"DeciLMForCausalLM", "block_configs",
     "Nemotron-NAS models give every layer its own shape (block_configs)"},
}};
std::string supported_list() {
    std::string out;
    for (const std::string& s : supported_hf_architectures()) {
        out += (out.empty() ? "" : ", ") + s;
    }
    return out;
}

/// Turns nlohmann's 1-based byte offset of a parse error into a 1-based line and column.
std::pair<int, int> line_column(std::string_view text, std::size_t byte) {
    const std::size_t end = std::min(byte > 0 ? byte - 1 : 0, text.size());
    int line = 1;
    int column = 1;
    for (std::size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

/// nlohmann's what() reads "[json.exception.parse_error.101] parse error at line 3, column 1:
/// syntax error while parsing ..."; keep only the part after the position.
std::string parse_error_detail(const std::string& what) {
    const std::size_t column = what.find("column ");
    const std::size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
    return colon == std::string::npos ? what : what.substr(colon + 2);
}

/// Python's json module writes float('inf') and float('nan') as the bare words Infinity,
/// -Infinity and NaN, which JSON (RFC 8259) has no place for, and Hugging Face ships them
/// (Nemotron-H's time_step_limit [0.0, Infinity]). Outside strings each is replaced by a string
/// of the same length ("~~~~~~", "-~~~~~~", "~"), so line and column of any later error stay
/// right and a size given as one is refused as a string (nonfinite_word names it).
std::string with_nonfinite_as_strings(std::string_view text) {
    std::string out(text);
    bool in_string = false;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const char c = out[i];
        if (in_string) {
            if (c == '\\') {
                ++i; // skip the escaped character
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
            continue;
        }
        for (const std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
            if (out.compare(i, word.size(), word) == 0) {
                std::string marker(word.size(), '~');
                marker.front() = '"';
                marker.back() = '"';
                if (word.front() == '-') {
                    marker[1] = '-';
                }
                if (word == "NaN") {
                    marker = "\"~\"";
                }
                out.replace(i, word.size(), marker);
                i += word.size() - 1;
                break;
            }
        }
    }
    return out;
}

/// "Infinity", "-Infinity" or "NaN" for a value with_nonfinite_as_strings replaced, else "".
std::string nonfinite_word(const json& v) {
    if (!v.is_string()) {
        return "";
    }
    const std::string& t = v.get_ref<const std::string&>();
    if (t == "~") {
        return "NaN";
    }
    if (t.size() == 6 && t.find_first_not_of('~') == std::string::npos) {
        return "Infinity";
    }
    if (t.size() == 7 && t.front() == '-' && t.find_first_not_of('~', 1) == std::string::npos) {
        return "-Infinity";
    }
    return "";
}

/// Typed access to the language model's object of a config.json with errors that name the file
/// and key: the top-level object, or the `text_config` of a multimodal wrapper, whose keys are
/// looked up first there and then at the top level (Qwen3.5 keeps tie_word_embeddings outside).
class Reader {
  public:
    Reader(const json& text, const json& top, const std::string& file, std::string family)
        : text_(text), top_(top), file_(file), family_(std::move(family)),
          prefix_(&text == &top ? "" : "text_config.") {}

    /// The value of `key`, or nullptr when absent or null (transformers treats both alike).
    [[nodiscard]] const json* find(const char* key) const {
        for (const json* j : {&text_, &top_}) {
            const auto it = j->find(key);
            if (it != j->end() && !it->is_null()) {
                return &*it;
            }
        }
        return nullptr;
    }

    [[nodiscard]] std::optional<int> opt_int(const char* key) const {
        const json* v = find(key);
        if (v == nullptr) {
            return std::nullopt;
        }
        // Configs sometimes write integral sizes as floats (e.g. 4096.0); accept those.
        double x = 0;
        if (v->is_number_integer()) {
            x = static_cast<double>(v->get<std::int64_t>());
        } else if (v->is_number_float()) {
            x = v->get<double>();
        } else if (const std::string word = nonfinite_word(*v); !word.empty()) {
            fail(key, "is " + word + ", expected an integer");
        } else {
            fail(key, "is " + std::string(v->type_name()) + ", expected an integer");
        }
        if (x != std::floor(x) || std::abs(x) > std::numeric_limits<int>::max()) {
            fail(key, "is " + v->dump() + ", expected an integer");
        }
        return static_cast<int>(x);
    }

    [[nodiscard]] int req_int(const char* key) const {
        const std::optional<int> v = opt_int(key);
        if (!v) {
            fail(key, "is missing; a " + family_ +
                          " config.json must give it (supported: " + supported_list() + ")");
        }
        return *v;
    }

    /// The first of `keys` that is present, as an integer (configs of one family spell some
    /// sizes two ways, e.g. experts_per_token and num_experts_per_tok).
    [[nodiscard]] int req_int_of(std::initializer_list<const char*> keys) const {
        for (const char* key : keys) {
            if (const std::optional<int> v = opt_int(key)) {
                return *v;
            }
        }
        return req_int(*keys.begin());
    }

    [[nodiscard]] bool opt_bool(const char* key, bool fallback) const {
        const json* v = find(key);
        if (v == nullptr) {
            return fallback;
        }
        if (!v->is_boolean()) {
            fail(key, "is " + std::string(v->type_name()) + ", expected true or false");
        }
        return v->get<bool>();
    }

    /// How many entries of the string list `key` equal `value`; nullopt when absent.
    [[nodiscard]] std::optional<int> count_in_list(const char* key, const char* value) const {
        const json* v = find(key);
        if (v == nullptr) {
            return std::nullopt;
        }
        if (!v->is_array()) {
            fail(key, "is " + std::string(v->type_name()) + ", expected a list of layer types");
        }
        int n = 0;
        for (const json& e : *v) {
            if (!e.is_string()) {
                fail(key, "holds " + e.dump() + ", expected strings such as \"full_attention\"");
            }
            n += e.get<std::string>() == value ? 1 : 0;
        }
        if (const std::optional<int> layers = opt_int("num_hidden_layers");
            layers && static_cast<int>(v->size()) != *layers) {
            fail(key, "has " + std::to_string(v->size()) + " entries for " +
                          std::to_string(*layers) + " layers (num_hidden_layers)");
        }
        return n;
    }

    [[noreturn]] void fail(const char* key, const std::string& message) const {
        const bool in_text = prefix_.empty() || text_.contains(key) || !top_.contains(key);
        throw ConfigError(file_, 0, 0, (in_text ? prefix_ : std::string()) + key, message);
    }

    /// Whether the language model sits in a `text_config` (a multimodal wrapper).
    [[nodiscard]] bool nested() const { return !prefix_.empty(); }

  private:
    const json& text_;
    const json& top_;
    const std::string& file_;
    std::string family_;
    std::string prefix_;
};

/// `model_type` spellings of language models inside wrappers, and of checkpoints that reuse
/// another family's class (Kimi-K2 is a DeepseekV3ForCausalLM with model_type kimi_k2).
constexpr std::array<std::pair<const char*, const char*>, 8> text_model_types{{
    {"kimi_k2", "deepseek-v3"},
    {"qwen3_vl_text", "qwen3"},
    {"qwen3_vl_moe_text", "qwen3-moe"},
    {"qwen3_5_text", "qwen3-next"},
    {"qwen3_5_moe_text", "qwen3-next"},
    {"llama4_text", "llama4"},
    {"glm_moe_dsa", "deepseek-v32"},
    {"deepseek_v32", "deepseek-v32"},
}};

std::string string_at(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string first_architecture(const json& j) {
    const auto arch = j.find("architectures");
    if (arch != j.end() && arch->is_array() && !arch->empty() && (*arch)[0].is_string()) {
        return (*arch)[0].get<std::string>();
    }
    return "";
}

/// The `text_config` of a multimodal wrapper, or nullptr.
const json* text_config(const json& j) {
    const auto it = j.find("text_config");
    return it != j.end() && it->is_object() ? &*it : nullptr;
}

/// The catalog family of a config: by architectures[0], then model_type, then the model_type of
/// its text_config; "" when none is known.
std::string find_family(const json& j) {
    const std::string arch = first_architecture(j);
    for (const Family& f : families) {
        if (arch == f.architecture) {
            return f.family;
        }
    }
    const json* text = text_config(j);
    for (const std::string& type :
         {string_at(j, "model_type"), text ? string_at(*text, "model_type") : std::string()}) {
        for (const Family& f : families) {
            if (!type.empty() && type == f.model_type) {
                return f.family;
            }
        }
        for (const auto& [spelling, family] : text_model_types) {
            if (!type.empty() && type == spelling) {
                return family;
            }
        }
    }
    return "";
}

std::string describe_architecture(const json& j) {
    std::string out;
    const auto arch = j.find("architectures");
    if (arch != j.end() && arch->is_array() && !arch->empty()) {
        out = (*arch)[0].dump();
    }
    const auto type = j.find("model_type");
    if (type != j.end()) {
        out += (out.empty() ? "model_type " : " (model_type ") + type->dump() +
               (out.empty() ? "" : ")");
    }
    return out.empty() ? "a config without architectures or model_type" : out;
}

/// Refuses a config whose family is unknown, naming the field not understood: the refused
/// architecture's own field, else architectures[0] (or model_type without one).
[[noreturn]] void refuse_architecture(const json& j, const std::string& file) {
    const std::string arch = first_architecture(j);
    for (const Refused& r : refused) {
        if (arch == r.architecture) {
            throw ConfigError(file, 0, 0, r.field,
                              "is not understood: " + arch + " is recognised but not supported, " +
                                  r.reason + "; supported: " + supported_list() +
                                  "; write a catalog entry by hand");
        }
    }
    const bool by_type = arch.empty();
    throw ConfigError(file, 0, 0, by_type ? "model_type" : "architectures",
                      describe_architecture(j) + " is not supported (the field not understood: " +
                          (by_type ? "model_type" : "architectures[0]") + "); supported: " +
                          supported_list() + "; write a catalog entry by hand for others");
}

/// MoE layout of the families that have one; nullopt for dense families.
std::optional<model::MoeSpec> read_moe(const Reader& r, const std::string& family) {
    model::MoeSpec e;
    if (family == "mixtral") {
        // MixtralSparseMoeBlock: num_local_experts experts of intermediate_size on every layer.
        e.experts = r.req_int("num_local_experts");
        e.active_experts = r.req_int("num_experts_per_tok");
        e.expert_ffn_size = r.req_int("intermediate_size");
        return e;
    }
    if (family == "qwen3-moe") {
        // Qwen3MoeDecoderLayer: a layer is sparse when it is not in mlp_only_layers and
        // (index + 1) % decoder_sparse_step == 0. Only "every layer after a dense prefix" fits
        // MoeSpec.
        e.experts = r.req_int("num_experts");
        e.active_experts = r.req_int("num_experts_per_tok");
        e.expert_ffn_size = r.req_int("moe_intermediate_size");
        if (r.opt_int("decoder_sparse_step").value_or(1) != 1) {
            r.fail("decoder_sparse_step", "is not 1; interleaved dense and MoE layers are not "
                                          "supported, write the catalog entry by hand");
        }
        if (const json* dense = r.find("mlp_only_layers")) {
            if (!dense->is_array()) {
                r.fail("mlp_only_layers", "is not a list of layer indices");
            }
            for (std::size_t i = 0; i < dense->size(); ++i) {
                if (!(*dense)[i].is_number_integer() ||
                    (*dense)[i].get<std::int64_t>() != static_cast<std::int64_t>(i)) {
                    r.fail("mlp_only_layers", "is not 0, 1, 2, ...; only leading dense layers "
                                              "are supported, write the catalog entry by hand");
                }
            }
            e.first_dense_layers = static_cast<int>(dense->size());
        }
        return e;
    }
    if (family == "gpt-oss" || family == "minimax-m2") {
        // GptOssMLP / MiniMaxM2SparseMoeBlock: num_local_experts experts of intermediate_size on
        // every layer (MiniMax-M2's shared_intermediate_size is 0: no shared expert).
        e.experts = r.req_int("num_local_experts");
        e.active_experts = r.req_int_of({"num_experts_per_tok", "experts_per_token"});
        e.expert_ffn_size = r.req_int("intermediate_size");
        if (r.opt_int("shared_intermediate_size").value_or(0) > 0) {
            r.fail("shared_intermediate_size", "is not 0; a shared expert of its own size is not "
                                               "supported, write the catalog entry by hand");
        }
        return e;
    }
    if (family == "llama4") {
        // Llama4TextMoe: num_local_experts routed experts and one shared expert, all of
        // intermediate_size, on layers interleave_moe_layer_step - 1, 2 * step - 1, ...
        // (Llama4TextConfig.moe_layers); the other layers have a dense MLP of
        // intermediate_size_mlp.
        e.experts = r.req_int("num_local_experts");
        e.active_experts = r.req_int("num_experts_per_tok");
        e.shared_experts = 1;
        e.expert_ffn_size = r.req_int("intermediate_size");
        e.layer_interval = r.opt_int("interleave_moe_layer_step").value_or(1);
        if (const json* listed = r.find("moe_layers")) {
            const int step = std::max(e.layer_interval, 1);
            bool regular = listed->is_array();
            for (std::size_t i = 0; regular && i < listed->size(); ++i) {
                regular = (*listed)[i].is_number_integer() &&
                          (*listed)[i].get<std::int64_t>() ==
                              static_cast<std::int64_t>((i + 1) * step - 1);
            }
            if (!regular) {
                r.fail("moe_layers", "is not every interleave_moe_layer_step-th layer; write the "
                                     "catalog entry by hand");
            }
        }
        return e;
    }
    if (family == "step3p7") {
        // Step3p7 (stepfun-ai/Step-3.7-Flash): num_experts routed experts and n_shared_experts of
        // share_expert_dim after first_k_dense_replace dense layers.
        e.experts = r.req_int("num_experts");
        e.active_experts = r.req_int("num_experts_per_tok");
        e.expert_ffn_size = r.req_int("moe_intermediate_size");
        e.shared_experts = r.opt_int("n_shared_experts").value_or(0);
        e.first_dense_layers = r.opt_int("first_k_dense_replace").value_or(0);
        if (e.shared_experts > 0 &&
            r.opt_int("share_expert_dim").value_or(e.expert_ffn_size) != e.expert_ffn_size) {
            r.fail("share_expert_dim", "differs from moe_intermediate_size; shared experts of "
                                       "their own size are not supported");
        }
        return e;
    }
    if (family == "qwen3-next") {
        // Qwen3NextSparseMoeBlock: num_experts routed experts and one shared expert of
        // shared_expert_intermediate_size (with a one-output sigmoid gate, left out); the dense
        // Qwen3.5 models have no num_experts.
        if (r.find("num_experts") == nullptr) {
            return std::nullopt;
        }
        e.experts = r.req_int("num_experts");
        e.active_experts = r.req_int("num_experts_per_tok");
        e.expert_ffn_size = r.req_int("moe_intermediate_size");
        const int shared = r.opt_int("shared_expert_intermediate_size").value_or(0);
        if (shared > 0 && shared != e.expert_ffn_size) {
            r.fail("shared_expert_intermediate_size",
                   "differs from moe_intermediate_size; a shared expert of its own size is not "
                   "supported, write the catalog entry by hand");
        }
        e.shared_experts = shared > 0 ? 1 : 0;
        if (r.opt_int("decoder_sparse_step").value_or(1) != 1) {
            r.fail("decoder_sparse_step", "is not 1; interleaved dense and MoE layers are not "
                                          "supported, write the catalog entry by hand");
        }
        if (const json* dense = r.find("mlp_only_layers"); dense != nullptr && !dense->empty()) {
            r.fail("mlp_only_layers", "is not empty; dense layers among Qwen3-Next's MoE layers "
                                      "are not supported, write the catalog entry by hand");
        }
        return e;
    }
    if (family == "deepseek-v3" || family == "deepseek-v32") {
        // DeepseekV3DecoderLayer: MoE when index >= first_k_dense_replace and
        // index % moe_layer_freq == 0.
        e.experts = r.req_int("n_routed_experts");
        e.active_experts = r.req_int("num_experts_per_tok");
        e.shared_experts = r.opt_int("n_shared_experts").value_or(0);
        e.expert_ffn_size = r.req_int("moe_intermediate_size");
        e.first_dense_layers = r.opt_int("first_k_dense_replace").value_or(0);
        if (r.opt_int("moe_layer_freq").value_or(1) != 1) {
            r.fail("moe_layer_freq", "is not 1; interleaved dense and MoE layers are not "
                                     "supported, write the catalog entry by hand");
        }
        return e;
    }
    return std::nullopt;
}

/// Sliding-window layout as each family's modeling code applies `sliding_window`.
std::optional<model::SlidingWindowSpec> read_window(const Reader& r, const std::string& family,
                                                    int layers) {
    const std::optional<int> window = r.opt_int("sliding_window");
    if (!window || *window <= 0) {
        return std::nullopt;
    }
    if (family == "mistral" || family == "mixtral") {
        return model::SlidingWindowSpec{*window, layers}; // every layer
    }
    if (family == "gemma2") {
        // Gemma2DecoderLayer: even-indexed layers are local (sliding), odd ones global.
        return model::SlidingWindowSpec{*window, (layers + 1) / 2};
    }
    if (family == "qwen2" || family == "qwen3" || family == "qwen3-moe") {
        // Qwen2/Qwen3: only with use_sliding_window, on layers >= max_window_layers.
        if (!r.opt_bool("use_sliding_window", false)) {
            return std::nullopt;
        }
        const int windowed = layers - r.opt_int("max_window_layers").value_or(layers);
        if (windowed <= 0) {
            return std::nullopt;
        }
        return model::SlidingWindowSpec{*window, windowed};
    }
    if (family == "gpt-oss" || family == "step3p7") {
        // layer_types names each layer's kind: gpt-oss alternates sliding (128) and full;
        // Step-3.7-Flash has one full layer in four.
        const int windowed = r.count_in_list("layer_types", "sliding_attention").value_or(0);
        if (windowed <= 0) {
            return std::nullopt;
        }
        return model::SlidingWindowSpec{*window, windowed};
    }
    return std::nullopt; // Llama and DeepSeek-V3 have no window
}

/// Llama 4's chunked local attention: layers with RoPE attend within attention_chunk_size
/// tokens; every no_rope_layer_interval-th layer (4) is global without RoPE
/// (Llama4TextConfig.no_rope_layers; vLLM Llama4Attention use_chunked_local_attn).
std::optional<model::SlidingWindowSpec> read_chunks(const Reader& r, int layers) {
    const std::optional<int> chunk = r.opt_int("attention_chunk_size");
    if (!chunk || *chunk <= 0) {
        return std::nullopt;
    }
    int chunked = layers - layers / 4;
    if (const json* rope = r.find("no_rope_layers"); rope != nullptr) {
        if (!rope->is_array()) {
            r.fail("no_rope_layers", "is not a list of 0 and 1 per layer");
        }
        chunked = 0;
        for (const json& v : *rope) {
            chunked += v.is_number_integer() && v.get<std::int64_t>() != 0 ? 1 : 0;
        }
    }
    if (chunked <= 0) {
        return std::nullopt;
    }
    return model::SlidingWindowSpec{*chunk, chunked, true};
}

/// Qwen3-Next / Qwen3.5 Gated DeltaNet layers (layer_types "linear_attention", or all but
/// every full_attention_interval-th layer), shaped by the linear_* keys.
std::optional<model::StateSpec> read_state(const Reader& r, const std::string& family, int layers) {
    if (family != "qwen3-next") {
        return std::nullopt;
    }
    model::StateSpec st;
    st.kind = model::StateKind::GatedDeltaNet;
    const int interval = r.opt_int("full_attention_interval").value_or(4);
    st.state_layers = r.count_in_list("layer_types", "linear_attention")
                          .value_or(layers - layers / std::max(interval, 1));
    st.heads = r.req_int("linear_num_value_heads");
    st.groups = r.req_int("linear_num_key_heads");
    st.key_dim = r.req_int("linear_key_head_dim");
    st.value_dim = r.req_int("linear_value_head_dim");
    st.conv_kernel = r.opt_int("linear_conv_kernel_dim").value_or(4);
    // Qwen3.5 states its recurrent-state dtype (mamba_ssm_dtype float32); without it vLLM keeps
    // the state in the model dtype.
    if (const json* dtype = r.find("mamba_ssm_dtype"); dtype != nullptr && dtype->is_string()) {
        st.fp32_state = dtype->get<std::string>() == "float32";
    }
    return st;
}

/// DeepSeek-V3.2 / GLM-5 sparse attention's indexer.
std::optional<model::IndexerSpec> read_indexer(const Reader& r, const std::string& family) {
    if (family != "deepseek-v32") {
        return std::nullopt;
    }
    return model::IndexerSpec{r.req_int("index_n_heads"), r.req_int("index_head_dim"),
                              r.req_int("index_topk")};
}

// ---- Quantized checkpoints -------------------------------------------------------------------
//
// transformers records how a checkpoint was quantized in config.json `quantization_config`
// (transformers/utils/quantization_config.py: AwqConfig, GPTQConfig, FbgemmFp8Config,
// FineGrainedFP8Config, CompressedTensorsConfig, Mxfp4Config); NVIDIA ModelOpt writes
// hf_quant_config.json beside it (`quantization.quant_algo`, TensorRT-LLM's QuantAlgo names).

constexpr const char* kQuantMethods =
    "awq, gptq, fp8, fbgemm_fp8, compressed-tensors, modelopt, mxfp4";
constexpr const char* kModelOptAlgos =
    "FP8, FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO, NVFP4, NVFP4_AWQ, W4A16_AWQ, INT4_AWQ, "
    "W8A16, W8A8_SQ_PER_CHANNEL, INT8_SQ, MXFP4";

/// Reads keys of one JSON object below `prefix` (e.g. "quantization_config.") with errors that
/// name the file and the full key.
class QuantReader {
  public:
    QuantReader(const json& j, const std::string& file, std::string prefix)
        : j_(j), file_(file), prefix_(std::move(prefix)) {}

    [[nodiscard]] const json* find(const char* key) const {
        const auto it = j_.find(key);
        return it == j_.end() || it->is_null() ? nullptr : &*it;
    }
    [[nodiscard]] std::optional<std::string> opt_string(const char* key) const {
        const json* v = find(key);
        if (v == nullptr) {
            return std::nullopt;
        }
        if (!v->is_string()) {
            fail(key, "is " + std::string(v->type_name()) + ", expected a string");
        }
        return v->get<std::string>();
    }
    [[nodiscard]] int opt_int(const char* key, int fallback) const {
        const json* v = find(key);
        if (v == nullptr) {
            return fallback;
        }
        if (!v->is_number_integer()) {
            fail(key, "is " + v->dump() + ", expected an integer");
        }
        const auto x = v->get<std::int64_t>();
        if (x < -1 || x > (1 << 20)) {
            fail(key, "is " + v->dump() + ", expected a small integer");
        }
        return static_cast<int>(x);
    }
    [[noreturn]] void fail(const std::string& key, const std::string& message) const {
        throw ConfigError(file_, 0, 0, prefix_ + key, message);
    }
    [[nodiscard]] const std::string& prefix() const { return prefix_; }

  private:
    const json& j_;
    const std::string& file_;
    std::string prefix_;
};

std::string lower_ascii(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

/// "awq-int4" with its group size: the catalog's `name:gN` spelling (model/precision.hpp). A
/// group size of -1 or 0 means one scale per output channel (AutoGPTQ, compressed-tensors
/// strategy "channel"): one scale per `in_features` weights, approximated by the hidden size.
model::Precision grouped(const std::string& base, int group, int hidden_size) {
    if (group <= 0) {
        group = std::clamp(hidden_size, 1, 1 << 16);
    }
    return model::parse_precision(base + ":g" + std::to_string(std::min(group, 1 << 16)));
}

/// One compressed-tensors scheme (config_groups.NAME): `weights` and `input_activations` are
/// QuantizationArgs {num_bits, type "int"|"float", strategy, group_size}
/// (neuralmagic/compressed-tensors, quantization/quant_args.py).
model::Precision compressed_tensors_scheme(const json& group, const std::string& file,
                                           const std::string& prefix, const std::string& format,
                                           int hidden_size) {
    if (!group.is_object()) {
        throw ConfigError(file, 0, 0, prefix,
                          "is not an object with weights and input_activations");
    }
    const QuantReader g(group, file, prefix + ".");
    const json* w = g.find("weights");
    if (w == nullptr || !w->is_object()) {
        g.fail("weights",
               "is missing; a compressed-tensors scheme gives num_bits and type of its weights");
    }
    const QuantReader wr(*w, file, prefix + ".weights.");
    const int bits = wr.opt_int("num_bits", 8);
    const std::string type = lower_ascii(wr.opt_string("type").value_or("int"));
    const std::string strategy = lower_ascii(wr.opt_string("strategy").value_or("tensor"));
    const int group_size =
        strategy == "group" || strategy == "tensor_group" ? wr.opt_int("group_size", 128) : -1;
    int act_bits = 0;
    std::string act_type;
    if (const json* a = g.find("input_activations"); a != nullptr && a->is_object()) {
        const QuantReader ar(*a, file, prefix + ".input_activations.");
        act_bits = ar.opt_int("num_bits", 8);
        act_type = lower_ascii(ar.opt_string("type").value_or("int"));
    }
    const std::string found =
        type + std::to_string(bits) + " weights" +
        (act_bits > 0 ? " with " + act_type + std::to_string(act_bits) + " activations"
                      : " (weight-only)");
    if (type == "float" && bits == 8) {
        return model::parse_precision("fp8"); // float-quantized: FP8 E4M3 (W8A8 or W8A16)
    }
    if (type == "float" && bits == 4) {
        // nvfp4-pack-quantized: E2M1 with an FP8 scale per 16; mxfp4-pack-quantized: E8M0 per 32.
        return model::parse_precision(format.find("mxfp4") != std::string::npos ? "mxfp4"
                                                                                : "nvfp4");
    }
    if (type == "int" && bits == 8) {
        return act_bits == 8 ? model::parse_precision("int8")
                             : grouped("int8-weight-only", group_size, hidden_size);
    }
    if (type == "int" && bits == 4 && act_bits == 0) {
        return grouped("int4", group_size, hidden_size); // W4A16, e.g. pack-quantized
    }
    wr.fail("num_bits", found +
                            " have no gpuplan precision; supported compressed-tensors schemes: "
                            "int4 weight-only (W4A16), int8 weight-only (W8A16), int8 with int8 "
                            "activations (W8A8), float8 (FP8) and float4 (NVFP4, MXFP4); set "
                            "precision.weights in the scenario instead");
}

std::optional<model::Precision> compressed_tensors(const QuantReader& q, const std::string& file,
                                                   int hidden_size) {
    const std::string format = lower_ascii(q.opt_string("format").value_or(""));
    const json* groups = q.find("config_groups");
    if (groups == nullptr || (groups->is_object() && groups->empty())) {
        return std::nullopt; // sparsity only (sparsity_config), weights stay 16 bit
    }
    if (!groups->is_object()) {
        q.fail("config_groups", "is not an object of named schemes");
    }
    std::optional<model::Precision> out;
    std::string first;
    for (const auto& [key, group] : groups->items()) {
        const std::string prefix = q.prefix() + "config_groups." + key;
        // A scheme's own format wins over the top-level one (compressed-tensors >= 0.10).
        std::string own = format;
        if (group.is_object() && group.contains("format") && group["format"].is_string()) {
            own = lower_ascii(group["format"].get<std::string>());
        }
        const model::Precision p = compressed_tensors_scheme(group, file, prefix, own, hidden_size);
        if (out && !(*out == p)) {
            throw ConfigError(file, 0, 0, prefix,
                              "is " + p.name + " but " + first + " is " + out->name +
                                  "; a checkpoint with mixed weight formats has no single "
                                  "precision, set precision.weights in the scenario instead");
        }
        out = p;
        first = prefix;
    }
    return out;
}

/// The precision a ModelOpt `quant_algo` names; nullopt for none (e.g. only the KV cache is
/// quantized). `r` reads the object holding quant_algo and group_size.
std::optional<model::Precision> modelopt_algo(const QuantReader& r, int hidden_size) {
    const std::optional<std::string> algo = r.opt_string("quant_algo");
    if (!algo || algo->empty() || lower_ascii(*algo) == "none") {
        return std::nullopt;
    }
    const std::string a = lower_ascii(*algo);
    if (a == "mixed_precision") {
        // Per-layer formats (quantized_layers, e.g. Qwen3.6's FP8 attention and W4A16 NVFP4
        // experts) have no single precision.
        r.fail("quant_algo", "is MIXED_PRECISION: the layers are quantized to different formats "
                             "(quantized_layers), which no single gpuplan precision states; set "
                             "precision.weights in the scenario to the experts' format instead");
    }
    if (a == "fp8" || a == "fp8_per_channel_per_token" || a == "fp8_pb_wo" ||
        a == "fp8_block_scales") {
        return model::parse_precision("fp8");
    }
    if (a == "nvfp4" || a == "nvfp4_awq") {
        return model::parse_precision("nvfp4");
    }
    if (a == "mxfp4") {
        return model::parse_precision("mxfp4");
    }
    if (a == "w4a16_awq" || a == "int4_awq") {
        return grouped("awq-int4", r.opt_int("group_size", 128), hidden_size);
    }
    if (a == "w8a16") {
        return grouped("int8-weight-only", r.opt_int("group_size", -1), hidden_size);
    }
    if (a == "int8_sq" || a == "w8a8_sq_per_channel") {
        return model::parse_precision("int8"); // SmoothQuant W8A8
    }
    r.fail("quant_algo", "'" + *algo + "' has no gpuplan precision; supported: " + kModelOptAlgos +
                             "; set precision.weights in the scenario instead");
}

/// The weight precision stated by config.json `quantization_config`; nullopt without one.
/// `modelopt_file` is true when hf_quant_config.json was read instead (then a "modelopt"
/// quantization_config is not read).
std::optional<model::Precision> config_quantization(const json& j, const std::string& file,
                                                    int hidden_size, bool modelopt_file) {
    // Wrappers keep quantization_config at the top level; a few nest it in text_config.
    const json* qc = nullptr;
    for (const json* holder : {&j, text_config(j)}) {
        if (holder != nullptr && qc == nullptr) {
            const auto found = holder->find("quantization_config");
            qc = found != holder->end() && !found->is_null() ? &*found : nullptr;
        }
    }
    if (qc == nullptr) {
        return std::nullopt;
    }
    if (!qc->is_object()) {
        throw ConfigError(file, 0, 0, "quantization_config",
                          std::string("is ") + qc->type_name() +
                              ", expected an object with quant_method");
    }
    const QuantReader q(*qc, file, "quantization_config.");
    const std::optional<std::string> method_text = q.opt_string("quant_method");
    if (!method_text) {
        q.fail("quant_method", std::string("is missing; supported: ") + kQuantMethods);
    }
    std::string method = lower_ascii(*method_text);
    std::replace(method.begin(), method.end(), '_', '-');
    if (method == "awq") {
        // AutoAWQ writes 4-bit GEMM/GEMV kernels only.
        if (const int bits = q.opt_int("bits", 4); bits != 4) {
            q.fail("bits",
                   std::to_string(bits) + " is not supported for AWQ; AWQ checkpoints are 4-bit");
        }
        return grouped("awq-int4", q.opt_int("group_size", 128), hidden_size);
    }
    if (method == "gptq") {
        const int bits = q.opt_int("bits", 4);
        if (bits != 4 && bits != 8) {
            q.fail("bits", std::to_string(bits) + "-bit GPTQ has no gpuplan precision; supported: "
                                                  "4 (gptq-int4) and 8 (gptq-int8)");
        }
        return grouped(bits == 4 ? "gptq-int4" : "gptq-int8", q.opt_int("group_size", 128),
                       hidden_size);
    }
    if (method == "fp8" || method == "fbgemm-fp8") {
        // FineGrainedFP8Config (fmt e4m3, optional 128x128 weight blocks: one fp32 scale per
        // 16384 weights, 0.002 bit, left out) and Meta's FbgemmFp8Config (row-wise scales).
        const std::string fmt = lower_ascii(q.opt_string("fmt").value_or("e4m3"));
        return model::parse_precision(fmt == "e5m2" ? "fp8-e5m2" : "fp8");
    }
    if (method == "mxfp4") {
        return model::parse_precision("mxfp4");
    }
    if (method == "compressed-tensors") {
        return compressed_tensors(q, file, hidden_size);
    }
    if (method == "modelopt") {
        if (modelopt_file) {
            return std::nullopt; // hf_quant_config.json decides
        }
        if (q.find("quant_algo") == nullptr && q.find("config_groups") != nullptr) {
            return compressed_tensors(q, file, hidden_size); // ModelOpt's newer export
        }
        if (q.find("quant_algo") == nullptr) {
            q.fail("quant_method", "is 'modelopt' without quant_algo; the format is in "
                                   "hf_quant_config.json beside config.json: import the "
                                   "checkpoint folder's config.json by path so both are read");
        }
        return modelopt_algo(q, hidden_size);
    }
    q.fail("quant_method", "'" + *method_text + "' is not supported; supported: " + kQuantMethods +
                               "; set precision.weights in the scenario instead");
}

} // namespace

std::vector<std::string> supported_hf_architectures() {
    std::vector<std::string> out;
    out.reserve(families.size());
    for (const Family& f : families) {
        out.push_back(std::string(f.architecture) + " (" + f.model_type + ")");
    }
    return out;
}

std::string hf_canonical_name(std::string_view id_or_path) {
    std::string_view tail = id_or_path;
    while (!tail.empty() && (tail.back() == '/' || tail.back() == '\\')) {
        tail.remove_suffix(1);
    }
    if (const auto slash = tail.find_last_of("/\\"); slash != std::string_view::npos) {
        tail.remove_prefix(slash + 1);
    }
    std::string out;
    for (const char raw : tail) {
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(raw)));
        const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
        if (ok) {
            out.push_back(c);
        } else if (!out.empty() && out.back() != '-') {
            out.push_back('-'); // '_', ' ' and the like: the catalog spells them '-'
        }
    }
    while (!out.empty() && (out.back() == '-' || out.back() == '.')) {
        out.pop_back();
    }
    while (!out.empty() && (out.front() == '-' || out.front() == '.')) {
        out.erase(out.begin());
    }
    return out;
}

std::vector<std::string> supported_quant_methods() {
    std::vector<std::string> out;
    std::string_view rest = kQuantMethods;
    while (!rest.empty()) {
        const auto comma = rest.find(", ");
        out.emplace_back(rest.substr(0, comma));
        if (comma == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(comma + 2);
    }
    return out;
}

namespace {

json parse_json_object(std::string_view raw_text, const std::string& file, const char* what) {
    json j;
    const std::string json_text = with_nonfinite_as_strings(raw_text);
    try {
        j = json::parse(json_text.begin(), json_text.end());
    } catch (const json::parse_error& e) {
        const auto [line, column] = line_column(json_text, e.byte);
        throw ConfigError(file, line, column, "",
                          "malformed JSON: " + parse_error_detail(e.what()) + "; " + what +
                              " must be one complete JSON object");
    } catch (const json::exception& e) {
        // Found by fuzzing: numbers such as 22.4E820 throw out_of_range, not parse_error.
        throw ConfigError(file, 0, 0, "",
                          "unreadable JSON: " + parse_error_detail(e.what()) +
                              " (a number too large?); fix the value or re-download the file");
    }
    if (!j.is_object()) {
        throw ConfigError(file, 0, 0, "",
                          std::string("is a JSON ") + j.type_name() + ", expected the object of " +
                              what);
    }
    return j;
}

std::optional<model::Precision> modelopt_file_quantization(const json& j, const std::string& file,
                                                           int hidden_size) {
    const auto it = j.find("quantization");
    if (it == j.end() || !it->is_object()) {
        throw ConfigError(file, 0, 0, "quantization",
                          "is missing; an NVIDIA ModelOpt hf_quant_config.json holds "
                          "quantization.quant_algo");
    }
    return modelopt_algo(QuantReader(*it, file, "quantization."), hidden_size);
}

/// The KV-cache format a checkpoint was calibrated for: compressed-tensors' and ModelOpt's
/// `kv_cache_scheme` in config.json (8-bit floats: FP8 E4M3) or ModelOpt's
/// `kv_cache_quant_algo` in hf_quant_config.json; nullopt when none is stated.
std::optional<model::Precision> kv_cache_scheme(const json& j, const std::string& file) {
    const auto qc = j.find("quantization_config");
    if (qc == j.end() || !qc->is_object()) {
        return std::nullopt;
    }
    const QuantReader q(*qc, file, "quantization_config.");
    const json* scheme = q.find("kv_cache_scheme");
    if (scheme == nullptr) {
        return std::nullopt;
    }
    const QuantReader k(*scheme, file, "quantization_config.kv_cache_scheme.");
    const int bits = k.opt_int("num_bits", 8);
    const std::string type = lower_ascii(k.opt_string("type").value_or("float"));
    if (bits == 8 && type == "float") {
        return model::parse_precision("fp8");
    }
    k.fail("num_bits", std::to_string(bits) + "-bit " + type +
                           " KV cache has no gpuplan KV precision; supported: 8-bit float (FP8)");
}

std::optional<model::Precision> modelopt_kv_cache(const json& j, const std::string& file) {
    const auto it = j.find("quantization");
    if (it == j.end() || !it->is_object()) {
        return std::nullopt;
    }
    const QuantReader q(*it, file, "quantization.");
    const std::string algo = lower_ascii(q.opt_string("kv_cache_quant_algo").value_or("none"));
    if (algo == "none" || algo.empty()) {
        return std::nullopt;
    }
    if (algo == "fp8") {
        return model::parse_precision("fp8");
    }
    if (algo == "nvfp4") {
        return model::parse_precision("nvfp4");
    }
    q.fail("kv_cache_quant_algo", "'" + algo +
                                      "' has no gpuplan KV precision; supported: FP8, "
                                      "NVFP4");
}

/// The repository id a config names in `_name_or_path` (or `name_or_path`), when it is one: not
/// a local path, and valid by the Hub's grammar.
std::string config_hub_id(const Reader& r) {
    for (const char* key : {"_name_or_path", "name_or_path"}) {
        if (const json* v = r.find(key);
            v != nullptr && v->is_string() && !v->get<std::string>().empty()) {
            const std::string id = v->get<std::string>();
            const bool path = id.front() == '/' || id.front() == '.' ||
                              id.find(':') != std::string::npos ||
                              id.find('\\') != std::string::npos;
            const bool id_like = id.find('/') != std::string::npos && !path;
            return id_like && !hub_id_problem(id) ? id : "";
        }
    }
    return "";
}

/// Layers, widths, heads and vocabulary, as every family spells them.
void read_dimensions(model::ModelSpec& m, const Reader& r, const std::string& family) {
    m.layers = r.req_int("num_hidden_layers");
    m.hidden_size = r.req_int("hidden_size");
    m.heads = r.req_int("num_attention_heads");
    // transformers: num_key_value_heads None means multi-head attention.
    m.kv_heads = r.opt_int("num_key_value_heads").value_or(m.heads);
    // Llama 4's dense layers use intermediate_size_mlp (its intermediate_size is an expert's);
    // a Qwen3.5 MoE model has no dense layer and no intermediate_size.
    if (family == "llama4") {
        m.ffn_size = r.req_int("intermediate_size_mlp");
    } else if (family == "qwen3-next" && r.find("intermediate_size") == nullptr) {
        m.ffn_size = 0;
    } else {
        m.ffn_size = r.req_int("intermediate_size");
    }
    m.vocab_size = r.req_int("vocab_size");
    m.max_context = r.req_int("max_position_embeddings");
    // Every config class defaults tie_word_embeddings to false except Gemma2Config (true);
    // Gemma-2 configs on the Hub omit the key.
    m.tied_embeddings = r.opt_bool("tie_word_embeddings", family == "gemma2");
    m.mlp = model::MlpKind::Gated; // SwiGLU everywhere, GeGLU in Gemma-2
    if (m.heads > 0) {
        const auto head_dim = r.opt_int("head_dim");
        // transformers derives head_dim = hidden_size // num_attention_heads; a remainder means
        // the attention projections cannot be split into equal heads.
        if (!head_dim && m.hidden_size % m.heads != 0 && family != "deepseek-v3" &&
            family != "deepseek-v32") {
            r.fail("num_attention_heads", std::to_string(m.heads) +
                                              " heads do not divide hidden_size " +
                                              std::to_string(m.hidden_size) +
                                              "; give head_dim or a head count that "
                                              "divides hidden_size");
        }
        m.head_dim = head_dim.value_or(m.hidden_size / m.heads);
    }
}

/// Attention kind, MLA ranks, biases and norms.
void read_attention(model::ModelSpec& m, const Reader& r, const std::string& family) {
    const bool mla_family = family == "deepseek-v3" || family == "deepseek-v32";
    if (mla_family) {
        model::MlaSpec mla;
        mla.q_lora_rank = r.opt_int("q_lora_rank").value_or(0); // null: plain q_proj
        mla.kv_lora_rank = r.req_int("kv_lora_rank");
        mla.qk_nope_head_dim = r.req_int("qk_nope_head_dim");
        mla.qk_rope_head_dim = r.req_int("qk_rope_head_dim");
        mla.v_head_dim = r.req_int("v_head_dim");
        m.attention = model::AttentionKind::Mla;
        m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim; // query/key head size
        m.mla = mla;
    } else if (m.kv_heads == m.heads) {
        m.attention = model::AttentionKind::Mha;
    } else if (m.kv_heads == 1) {
        m.attention = model::AttentionKind::Mqa;
    } else {
        m.attention = model::AttentionKind::Gqa;
    }
    // Qwen2Attention hard-codes biases on q, k, v (not o). Elsewhere attention_bias puts biases
    // on q, k, v and o; with mlp_bias too every linear layer has one. attention_bias alone is
    // counted as qkv_bias, which leaves out o's hidden_size biases per layer.
    const bool attention_bias = r.opt_bool("attention_bias", false);
    const bool mlp_bias = r.opt_bool("mlp_bias", false);
    m.linear_bias = !mla_family && attention_bias && mlp_bias;
    m.qkv_bias = family == "qwen2" || (!mla_family && attention_bias && !mlp_bias);
    // Qwen3Attention's per-head q_norm and k_norm; MiniMax-M2 normalises q and k over all heads
    // (qk_norm_type per_layer: heads x head_dim weights, counted here as one head's, 0.0003 %
    // of the model); Llama 4's use_qk_norm is an L2 norm without weights.
    m.qk_norm = family == "qwen3" || family == "qwen3-moe" || family == "qwen3-next" ||
                (family == "minimax-m2" && r.opt_bool("use_qk_norm", false));
    m.norms_per_layer = family == "gemma2" ? 4 : 2; // Gemma-2: pre and post, both sublayers
    m.attention_sinks = family == "gpt-oss";        // GptOssAttention.sinks
    m.output_gate = family == "qwen3-next" && r.opt_bool("attn_output_gate", true);
}

/// What a multimodal wrapper's import leaves out, for ModelSpec::source.
std::string left_out(const json& j) {
    std::string out;
    for (const char* key : {"vision_config", "audio_config"}) {
        if (j.contains(key)) {
            out += std::string(out.empty() ? "" : " and ") + "the " +
                   (std::string(key) == "vision_config" ? "vision encoder" : "audio encoder") +
                   " (" + key + ")";
        }
    }
    return out.empty() ? "the modules outside text_config" : out;
}

/// Refuses through the catalog's own loader, on the YAML this import writes, whatever the
/// catalog would refuse to load (ranges of layers, heads, vocabulary, ...), naming the
/// config.json and the catalog key.
void check_loads(const model::ModelSpec& m, const std::string& file) {
    try {
        Database scratch;
        scratch.add_yaml(model_to_yaml(m), file);
    } catch (const ConfigError& e) {
        std::string message = e.what();
        const std::string key = e.key_path().empty() ? "" : e.key_path() + ": ";
        if (const auto at = message.find(key.empty() ? ": " : key); at != std::string::npos) {
            message = message.substr(at + (key.empty() ? 2 : key.size()));
        }
        throw ConfigError(file, 0, 0, "",
                          "the imported model would not load into the catalog: " +
                              (key.empty() ? "" : "key '" + e.key_path() + "': ") + message);
    }
}

/// Nemotron-H (transformers NemotronHForCausalLM): `hybrid_override_pattern` gives each block
/// one part, a Mamba-2 mixer 'M', an attention mixer '*', an MoE 'E' or an MLP '-', each behind
/// one norm. gpuplan's layer is a mixer and an MLP, so a Nemotron-H model is planned as one
/// layer per mixer: the M layers recurrent (StateSpec), the MoE blocks on as many layers and
/// the remaining layers with an empty dense MLP (ffn_size 0). Counts, weights, KV, state and
/// costs are exact; the order of the blocks is not kept (it only moves pipeline-stage
/// boundaries), and the norms are counted two per mixer layer (52 blocks of Nemotron-3 Nano
/// have 52 norms, gpuplan 58: 16,128 parameters).
void read_nemotron_h(model::ModelSpec& m, const Reader& r) {
    const json* pattern = r.find("hybrid_override_pattern");
    if (pattern == nullptr || !pattern->is_string()) {
        r.fail("hybrid_override_pattern",
               "is missing; a Nemotron-H config.json gives its blocks as a string of 'M', '*', "
               "'E' and '-' (a config that spells them another way is not supported yet)");
    }
    const std::string p = pattern->get<std::string>();
    const auto count = [&p](char c) { return static_cast<int>(std::count(p.begin(), p.end(), c)); };
    const int mamba = count('M');
    const int attention = count('*');
    const int moe = count('E');
    const int mlp = count('-');
    if (static_cast<int>(p.size()) != mamba + attention + moe + mlp ||
        static_cast<int>(p.size()) != m.layers) {
        r.fail("hybrid_override_pattern",
               "'" + p + "' is not one of 'M', '*', 'E', '-' per layer (num_hidden_layers " +
                   std::to_string(m.layers) + ")");
    }
    if (mlp > 0 || moe == 0 || moe > mamba + attention) {
        r.fail("hybrid_override_pattern",
               "has dense MLP blocks ('-'), no MoE block or more MoE blocks than mixers: not "
               "supported yet; Mamba-2, attention and MoE blocks ('M', '*', 'E', as in "
               "Nemotron-3 Nano) are");
    }
    if (r.find("moe_latent_size") != nullptr) {
        r.fail("moe_latent_size", "is set: latent MoE (experts in a smaller latent width, "
                                  "Nemotron-3 Super) is not supported yet");
    }
    m.layers = mamba + attention;
    m.ffn_size = 0; // mixer layers without an MoE block have no MLP
    m.mlp = r.find("mlp_hidden_act") != nullptr && r.find("mlp_hidden_act")->is_string() &&
                    r.find("mlp_hidden_act")->get<std::string>() == "relu2"
                ? model::MlpKind::Plain // squared ReLU: up and down projections only
                : model::MlpKind::Gated;
    model::MoeSpec e;
    e.experts = r.req_int("n_routed_experts");
    e.active_experts = r.req_int("num_experts_per_tok");
    e.expert_ffn_size = r.req_int("moe_intermediate_size");
    e.first_dense_layers = m.layers - moe;
    // One shared expert of moe_shared_expert_intermediate_size: as wide as a whole number of
    // routed experts (3712 = 2 x 1856 in Nemotron-3 Nano), counted as that many.
    const int shared = r.opt_int("moe_shared_expert_intermediate_size").value_or(0) *
                       r.opt_int("n_shared_experts").value_or(1);
    if (shared % e.expert_ffn_size != 0) {
        r.fail("moe_shared_expert_intermediate_size",
               "is not a multiple of moe_intermediate_size; a shared expert of its own width is "
               "not supported yet");
    }
    e.shared_experts = shared / e.expert_ffn_size;
    m.moe = e;
    model::StateSpec st;
    st.kind = model::StateKind::Mamba2;
    st.state_layers = mamba;
    st.heads = r.req_int("mamba_num_heads");
    st.groups = r.req_int("n_groups");
    st.key_dim = r.req_int("ssm_state_size");
    st.value_dim = r.req_int("mamba_head_dim");
    st.conv_kernel = r.opt_int("conv_kernel").value_or(4);
    if (const json* dtype = r.find("mamba_ssm_cache_dtype");
        dtype != nullptr && dtype->is_string()) {
        st.fp32_state = dtype->get<std::string>() == "float32";
    }
    m.state = st;
}

/// The architecture of the language model in `j`, named `name`.
model::ModelSpec read_architecture(const json& j, const std::string& file,
                                   const std::string& family, const std::string& name) {
    const json* text = text_config(j);
    const Reader r(text != nullptr ? *text : j, j, file,
                   first_architecture(j).empty() ? family : first_architecture(j));
    if (family == "nemotron-h" && r.find("hybrid_override_pattern") == nullptr) {
        r.fail("hybrid_override_pattern",
               "is missing; gpuplan reads a Nemotron-H model's blocks from this string of 'M', "
               "'*', 'E' and '-' (layers_block_type, Nemotron-3 Ultra's spelling, is not "
               "supported yet)");
    }
    model::ModelSpec m;
    m.name = name;
    m.family = family;
    read_dimensions(m, r, family);
    read_attention(m, r, family);
    m.moe = read_moe(r, family);
    m.sliding_window =
        family == "llama4" ? read_chunks(r, m.layers) : read_window(r, family, m.layers);
    m.state = read_state(r, family, m.layers);
    m.indexer = read_indexer(r, family);
    if (family == "nemotron-h") {
        read_nemotron_h(m, r);
    }
    try {
        model::validate(m, "imported model '" + name + "'");
    } catch (const InvalidArgument& e) {
        throw ConfigError(file, 0, 0, "", e.what());
    }
    const model::ParamCount count = model::count_params(m);
    m.published_params = count.total;
    m.published_active_params = m.moe ? count.active : 0.0;
    m.source = "Hugging Face config.json imported from " + file +
               "; published_params computed by gpuplan from the architecture";
    if (r.nested()) {
        m.source +=
            "; the language model of a multimodal checkpoint (text_config): " + left_out(j) +
            " not planned";
    }
    return m;
}

/// The model's name and Hub id from, in order: the --hub-id given, a --name that is a
/// repository id, the config's _name_or_path, and the id the file's location implies.
struct Naming {
    std::string name;
    std::string hub_id;
};

Naming resolve_naming(const json& j, const std::string& file, const std::string& given_name,
                      const std::string& given_hub_id, const std::string& location_id) {
    const auto checked = [&file](const std::string& id, const char* option) {
        if (const auto problem = hub_id_problem(id)) {
            throw ConfigError(file, 0, 0, "",
                              std::string(option) + " '" + id +
                                  "' is not a Hugging Face "
                                  "repository id: " +
                                  *problem + "; give it as ORG/NAME, e.g. openai/gpt-oss-120b");
        }
        return id;
    };
    Naming n;
    if (!given_hub_id.empty()) {
        n.hub_id = checked(given_hub_id, "--hub-id");
    } else if (given_name.find('/') != std::string::npos) {
        n.hub_id = checked(given_name, "--name");
    }
    const json* text = text_config(j);
    const Reader r(j, j, file, "");
    std::string from_config = config_hub_id(r);
    if (from_config.empty() && text != nullptr) {
        from_config = config_hub_id(Reader(*text, *text, file, ""));
    }
    if (n.hub_id.empty()) {
        n.hub_id = !from_config.empty() ? from_config : location_id;
    }
    n.name = given_name.find('/') != std::string::npos ? hf_canonical_name(given_name) : given_name;
    if (n.name.empty()) {
        n.name = hf_canonical_name(n.hub_id);
    }
    for (const char* key : {"_name_or_path", "name_or_path"}) {
        if (const json* v = r.find(key); n.name.empty() && v != nullptr && v->is_string()) {
            n.name = hf_canonical_name(v->get<std::string>()); // a local folder's name
        }
    }
    if (n.name.empty()) {
        r.fail("_name_or_path", "is missing, so the model has no name; give one with "
                                "'gpuplan model import --name NAME' or its Hub id with "
                                "'--hub-id ORG/NAME'");
    }
    return n;
}

model::ModelSpec import_impl(std::string_view json_text, const std::string& file,
                             const std::string& given_name, const std::string* modelopt_text,
                             const std::string& modelopt_file, const std::string& location_id,
                             const std::string& given_hub_id) {
    const json j = parse_json_object(json_text, file, "a Hugging Face config.json");
    const std::string family = find_family(j);
    if (family.empty()) {
        refuse_architecture(j, file);
    }
    const Naming naming = resolve_naming(j, file, given_name, given_hub_id, location_id);
    model::ModelSpec m = read_architecture(j, file, family, naming.name);
    if (!naming.hub_id.empty()) {
        m.hf_id = naming.hub_id;
        m.aliases.push_back(m.hf_id);
    }
    // ModelOpt's hf_quant_config.json, when there is one, is the authority on its checkpoint.
    m.weights = config_quantization(j, file, m.hidden_size, modelopt_text != nullptr);
    m.kv_cache = kv_cache_scheme(j, file);
    if (modelopt_text != nullptr) {
        const json q = parse_json_object(*modelopt_text, modelopt_file,
                                         "an NVIDIA ModelOpt hf_quant_config.json");
        if (auto p = modelopt_file_quantization(q, modelopt_file, m.hidden_size)) {
            m.weights = p;
        }
        if (auto kv = modelopt_kv_cache(q, modelopt_file)) {
            m.kv_cache = kv;
        }
        m.source += "; weights format from " + modelopt_file;
    }
    if (family == "gpt-oss" && m.weights && m.weights->name == "mxfp4") {
        // gpt-oss ships its experts in MXFP4 and the rest (modules_to_not_convert: attention,
        // router, embeddings, LM head; 2 % of the parameters) in bf16; one precision for all
        // weights undercounts those by 1.5 bytes each.
        m.source += "; mxfp4 covers the experts only, attention and embeddings are bf16";
    }
    check_loads(m, file);
    return m;
}

} // namespace

model::ModelSpec import_hf_config(std::string_view json_text, const std::string& file,
                                  const std::string& name, const std::string& hub_id) {
    return import_impl(json_text, file, name, nullptr, "", "", hub_id);
}

std::optional<std::string> hub_id_problem(std::string_view id) {
    // huggingface_hub's validate_repo_id (huggingface/huggingface_hub@b7f86dd,
    // src/huggingface_hub/utils/_validators.py): "NAME" or "NAMESPACE/NAME", each of letters,
    // digits, '-', '_' and '.', beginning and ending with a letter, digit or '_', the name
    // 1-96 characters; no "--" or "..", and no ".git" at the end.
    if (id.empty()) {
        return "it is empty";
    }
    if (std::count(id.begin(), id.end(), '/') > 1) {
        return "it has more than one '/'";
    }
    if (id.find("--") != std::string_view::npos || id.find("..") != std::string_view::npos) {
        return "'--' and '..' are not allowed";
    }
    if (id.size() >= 4 && id.substr(id.size() - 4) == ".git") {
        return "it ends with '.git'";
    }
    const auto word = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    };
    const std::size_t slash = id.find('/');
    for (const std::string_view part :
         {slash == std::string_view::npos ? std::string_view() : id.substr(0, slash),
          slash == std::string_view::npos ? id : id.substr(slash + 1)}) {
        if (part.data() == nullptr) {
            continue;
        }
        if (part.empty() || !word(part.front()) || !word(part.back())) {
            return "'" + std::string(part) + "' must begin and end with a letter, a digit or '_'";
        }
        for (const char c : part) {
            if (!word(c) && c != '-' && c != '.') {
                return "'" + std::string(1, c) +
                       "' is not allowed (letters, digits, '-', '_' and '.' only)";
            }
        }
    }
    if (const std::size_t name =
            slash == std::string_view::npos ? id.size() : id.size() - slash - 1;
        name > 96) {
        return "the name after '/' is longer than 96 characters";
    }
    return std::nullopt;
}

std::string hub_id_from_location(const std::filesystem::path& config_json) {
    // huggingface_hub's cache keeps a snapshot at models--ORG--NAME/snapshots/REVISION/.
    const std::filesystem::path snapshots = config_json.parent_path().parent_path();
    std::string candidate;
    if (snapshots.filename() == "snapshots") {
        const std::string repo = snapshots.parent_path().filename().string();
        if (repo.rfind("models--", 0) == 0) {
            candidate = repo.substr(8);
        }
    }
    // A folder or file named ORG--NAME (the cache's spelling; ai-dynamo/aiconfigurator names its
    // copies ORG--NAME_config.json).
    if (candidate.empty()) {
        const std::string file = config_json.filename().string();
        const std::string folder = config_json.parent_path().filename().string();
        if (file.size() > 12 && file.substr(file.size() - 12) == "_config.json") {
            candidate = file.substr(0, file.size() - 12);
        } else if (file == "config.json") {
            candidate = folder;
        }
    }
    const std::size_t sep = candidate.find("--");
    if (sep == std::string::npos || sep == 0) {
        return "";
    }
    const std::string id = candidate.substr(0, sep) + "/" + candidate.substr(sep + 2);
    return hub_id_problem(id) ? "" : id;
}

model::ModelSpec import_hf_checkpoint(const std::filesystem::path& config_json,
                                      const std::string& name, const std::string& hub_id) {
    const std::string text = read_text_file(config_json, "config.json");
    const std::string location_id = hub_id_from_location(config_json);
    // ModelOpt writes hf_quant_config.json beside config.json (ORG--NAME_hf_quant_config.json
    // beside ORG--NAME_config.json in ai-dynamo/aiconfigurator's copies).
    std::filesystem::path modelopt = config_json.parent_path() / "hf_quant_config.json";
    if (const std::string f = config_json.filename().string();
        f.size() > 12 && f.substr(f.size() - 12) == "_config.json") {
        modelopt =
            config_json.parent_path() / (f.substr(0, f.size() - 12) + "_hf_quant_config.json");
    }
    std::error_code ec;
    if (std::filesystem::is_regular_file(modelopt, ec)) {
        const std::string quant = read_text_file(modelopt, "hf_quant_config.json");
        return import_impl(text, config_json.string(), name, &quant, modelopt.string(), location_id,
                           hub_id);
    }
    return import_impl(text, config_json.string(), name, nullptr, "", location_id, hub_id);
}

} // namespace gpuplan::hwdb
