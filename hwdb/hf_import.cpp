#include "hwdb/hf_import.hpp"

#include "hwdb/database.hpp"
#include "hwdb/model_yaml_writer.hpp"

#include "model/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace gpuplan::hwdb {

namespace {

using nlohmann::json;

/// One supported family: the transformers class in `architectures[0]`, its `model_type`, and
/// the catalog family name (docs/hwdb-schema.md, models.family).
struct Family {
    const char* architecture;
    const char* model_type;
    const char* family;
};

constexpr std::array<Family, 8> families{{
    {"LlamaForCausalLM", "llama", "llama"},
    {"Qwen2ForCausalLM", "qwen2", "qwen2"},
    {"Qwen3ForCausalLM", "qwen3", "qwen3"},
    {"Qwen3MoeForCausalLM", "qwen3_moe", "qwen3-moe"},
    {"MistralForCausalLM", "mistral", "mistral"},
    {"MixtralForCausalLM", "mixtral", "mixtral"},
    {"DeepseekV3ForCausalLM", "deepseek_v3", "deepseek-v3"},
    {"Gemma2ForCausalLM", "gemma2", "gemma2"},
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

/// Typed access to the top-level object with errors that name the file and key.
class Reader {
  public:
    Reader(const json& j, const std::string& file, std::string family)
        : j_(j), file_(file), family_(std::move(family)) {}

    /// The value of `key`, or nullptr when absent or null (transformers treats both alike).
    [[nodiscard]] const json* find(const char* key) const {
        const auto it = j_.find(key);
        return it == j_.end() || it->is_null() ? nullptr : &*it;
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

    [[noreturn]] void fail(const char* key, const std::string& message) const {
        throw ConfigError(file_, 0, 0, key, message);
    }

  private:
    const json& j_;
    const std::string& file_;
    std::string family_;
};

const Family* find_family(const json& j) {
    const auto by = [](const char* Family::*member, const std::string& value) -> const Family* {
        for (const Family& f : families) {
            if (value == f.*member) {
                return &f;
            }
        }
        return nullptr;
    };
    const auto arch = j.find("architectures");
    if (arch != j.end() && arch->is_array() && !arch->empty() && (*arch)[0].is_string()) {
        if (const Family* f = by(&Family::architecture, (*arch)[0].get<std::string>())) {
            return f;
        }
    }
    const auto type = j.find("model_type");
    if (type != j.end() && type->is_string()) {
        return by(&Family::model_type, type->get<std::string>());
    }
    return nullptr;
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
    if (family == "deepseek-v3") {
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
    return std::nullopt; // Llama and DeepSeek-V3 have no window
}

} // namespace

std::vector<std::string> supported_hf_architectures() {
    std::vector<std::string> out;
    for (const Family& f : families) {
        out.push_back(std::string(f.architecture) + " (" + f.model_type + ")");
    }
    return out;
}

model::ModelSpec import_hf_config(std::string_view json_text, const std::string& file,
                                  const std::string& name) {
    json j;
    try {
        j = json::parse(json_text.begin(), json_text.end());
    } catch (const json::parse_error& e) {
        const auto [line, column] = line_column(json_text, e.byte);
        throw ConfigError(file, line, column, "",
                          "malformed JSON: " + parse_error_detail(e.what()) +
                              "; a Hugging Face config.json must be one complete JSON object");
    } catch (const json::exception& e) {
        // Found by fuzzing: numbers such as 22.4E820 throw out_of_range, not parse_error.
        throw ConfigError(file, 0, 0, "",
                          "unreadable JSON: " + parse_error_detail(e.what()) +
                              " (a number too large?); fix the value or re-download the config.json");
    }
    if (!j.is_object()) {
        throw ConfigError(file, 0, 0, "",
                          std::string("is a JSON ") + j.type_name() +
                              ", expected the object of a Hugging Face config.json");
    }
    const Family* fam = find_family(j);
    if (fam == nullptr) {
        throw ConfigError(file, 0, 0, "architectures",
                          describe_architecture(j) + " is not supported; supported: " +
                              supported_list() + "; write a catalog entry by hand for others");
    }
    const std::string family = fam->family;
    const Reader r(j, file, fam->architecture);

    model::ModelSpec m;
    m.name = name;
    m.family = family;
    if (const json* id = r.find("_name_or_path");
        id != nullptr && id->is_string() && id->get<std::string>().find('/') != std::string::npos &&
        id->get<std::string>().front() != '/' && id->get<std::string>().front() != '.') {
        m.hf_id = id->get<std::string>();
        m.aliases.push_back(m.hf_id);
    }
    m.layers = r.req_int("num_hidden_layers");
    m.hidden_size = r.req_int("hidden_size");
    m.heads = r.req_int("num_attention_heads");
    // transformers: num_key_value_heads None means multi-head attention.
    m.kv_heads = r.opt_int("num_key_value_heads").value_or(m.heads);
    m.ffn_size = r.req_int("intermediate_size");
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
        if (!head_dim && family != "deepseek-v3" && m.hidden_size % m.heads != 0) {
            r.fail("num_attention_heads",
                   std::to_string(m.heads) + " heads do not divide hidden_size " +
                       std::to_string(m.hidden_size) + "; give head_dim or a head count that "
                       "divides hidden_size");
        }
        m.head_dim = head_dim.value_or(m.hidden_size / m.heads);
    }

    if (family == "deepseek-v3") {
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
    m.linear_bias = family != "deepseek-v3" && attention_bias && mlp_bias;
    m.qkv_bias = family == "qwen2" || (family != "deepseek-v3" && attention_bias && !mlp_bias);
    m.qk_norm = family == "qwen3" || family == "qwen3-moe"; // Qwen3Attention q_norm, k_norm
    m.norms_per_layer = family == "gemma2" ? 4 : 2;         // Gemma-2: pre and post, both sublayers
    m.moe = read_moe(r, family);
    m.sliding_window = read_window(r, family, m.layers);

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

    // The catalog's own loader, on the YAML this import writes: whatever the catalog would
    // refuse to load (ranges of layers, heads, vocabulary, ...), the import refuses too, naming
    // the config.json and the catalog key.
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
    return m;
}

} // namespace gpuplan::hwdb
