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
    const auto it = j.find("quantization_config");
    if (it == j.end() || it->is_null()) {
        return std::nullopt;
    }
    if (!it->is_object()) {
        throw ConfigError(file, 0, 0, "quantization_config",
                          std::string("is ") + it->type_name() +
                              ", expected an object with quant_method");
    }
    const QuantReader q(*it, file, "quantization_config.");
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

json parse_json_object(std::string_view json_text, const std::string& file, const char* what) {
    json j;
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

model::ModelSpec import_impl(std::string_view json_text, const std::string& file,
                             const std::string& given_name, const std::string* modelopt_text,
                             const std::string& modelopt_file, const std::string& cache_id) {
    json j;
    j = parse_json_object(json_text, file, "a Hugging Face config.json");
    const Family* fam = find_family(j);
    if (fam == nullptr) {
        throw ConfigError(file, 0, 0, "architectures",
                          describe_architecture(j) + " is not supported; supported: " +
                              supported_list() + "; write a catalog entry by hand for others");
    }
    const std::string family = fam->family;
    const Reader r(j, file, fam->architecture);

    // transformers saves the repository id or local folder the model was loaded from as
    // `_name_or_path` (PretrainedConfig.to_dict); some exporters write `name_or_path`.
    std::string name_or_path;
    for (const char* key : {"_name_or_path", "name_or_path"}) {
        if (const json* v = r.find(key);
            v != nullptr && v->is_string() && !v->get<std::string>().empty()) {
            name_or_path = v->get<std::string>();
            break;
        }
    }
    if (name_or_path.empty()) {
        name_or_path = cache_id; // the repository of a Hugging Face cache snapshot
    }
    std::string name = given_name;
    if (name.empty()) {
        name = hf_canonical_name(name_or_path);
        if (name.empty()) {
            r.fail("_name_or_path", "is missing, so the model has no name (gpuplan does not name "
                                    "a model after its folder); give one with "
                                    "'gpuplan model import --name NAME'");
        }
    }

    model::ModelSpec m;
    m.name = name;
    m.family = family;
    if (const std::string& id = name_or_path; id.find('/') != std::string::npos &&
                                              id.front() != '/' && id.front() != '.' &&
                                              id.find(':') == std::string::npos) {
        m.hf_id = id;
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
            r.fail("num_attention_heads", std::to_string(m.heads) +
                                              " heads do not divide hidden_size " +
                                              std::to_string(m.hidden_size) +
                                              "; give head_dim or a head count that "
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

    // ModelOpt's hf_quant_config.json, when there is one, is the authority on its checkpoint.
    m.weights = config_quantization(j, file, m.hidden_size, modelopt_text != nullptr);
    if (modelopt_text != nullptr) {
        const json q = parse_json_object(*modelopt_text, modelopt_file,
                                         "an NVIDIA ModelOpt hf_quant_config.json");
        if (auto p = modelopt_file_quantization(q, modelopt_file, m.hidden_size)) {
            m.weights = p;
        }
        m.source += "; weights format from " + modelopt_file;
    }
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

} // namespace

model::ModelSpec import_hf_config(std::string_view json_text, const std::string& file,
                                  const std::string& name) {
    return import_impl(json_text, file, name, nullptr, "", "");
}

model::ModelSpec import_hf_checkpoint(const std::filesystem::path& config_json,
                                      const std::string& name) {
    const std::string text = read_text_file(config_json, "config.json");
    // huggingface_hub's cache keeps a snapshot at models--ORG--NAME/snapshots/REVISION/, so the
    // path names the repository even when config.json does not.
    std::string cache_id;
    const std::filesystem::path snapshots = config_json.parent_path().parent_path();
    if (snapshots.filename() == "snapshots") {
        const std::string repo = snapshots.parent_path().filename().string();
        const std::size_t sep = repo.find("--", 8);
        if (repo.rfind("models--", 0) == 0 && sep != std::string::npos) {
            cache_id = repo.substr(8, sep - 8) + "/" + repo.substr(sep + 2);
        }
    }
    const std::filesystem::path modelopt = config_json.parent_path() / "hf_quant_config.json";
    std::error_code ec;
    if (std::filesystem::is_regular_file(modelopt, ec)) {
        const std::string quant = read_text_file(modelopt, "hf_quant_config.json");
        return import_impl(text, config_json.string(), name, &quant, modelopt.string(), cache_id);
    }
    return import_impl(text, config_json.string(), name, nullptr, "", cache_id);
}

} // namespace gpuplan::hwdb
