/// Quantized checkpoints: config.json `quantization_config` (AWQ, GPTQ, FP8, compressed-tensors)
/// and NVIDIA ModelOpt's hf_quant_config.json become the model's checkpoint weight precision,
/// which scenarios use when their precision block sets none. Fixtures: tests/fixtures/hf/
/// (llama-3.1-8b.json with the quantization_config blocks of the published quantized
/// checkpoints named in each file's _name_or_path).

#include "hwdb/database.hpp"
#include "hwdb/hf_import.hpp"
#include "hwdb/model_yaml_writer.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"
#include "model/model_spec.hpp"
#include "model/precision.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using gpuplan::ConfigError;
using gpuplan::hwdb::import_hf_checkpoint;
using gpuplan::hwdb::import_hf_config;
using gpuplan::model::ComputeType;
using gpuplan::model::ModelSpec;
namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/hf/" + name;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "cannot open " << path;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

ModelSpec import_fixture(const std::string& name) {
    return import_hf_checkpoint(fixture(name + ".json"), "");
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// The llama-3.1-8b fixture with `quantization_config` set to `block` (JSON text).
std::string with_quantization(const std::string& block) {
    std::string text = read_text(fixture("llama-3.1-8b.json"));
    const std::size_t brace = text.rfind('}');
    return text.substr(0, brace) + ",\n  \"quantization_config\": " + block + "\n}\n";
}

ConfigError quant_error(const std::string& block) {
    try {
        (void)import_hf_config(with_quantization(block), "q/config.json", "q");
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no ConfigError for " << block;
    return ConfigError("", 0, 0, "", "");
}

const gpuplan::hwdb::Database& db() {
    static const gpuplan::hwdb::Database d =
        gpuplan::hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

// Bits per weight of grouped integer formats: 16-bit scale per group, plus a zero point at the
// weight width for GPTQ and AWQ (model/precision.cpp): 4 + (16 + 4) / 128 = 4.15625.
constexpr double kAwqG128Bits = 4.0 + (16.0 + 4.0) / 128.0;

} // namespace

TEST(HfQuantization, AwqBecomesAwqInt4WithItsGroupSize) {
    const ModelSpec m = import_fixture("llama-3.1-8b-awq");
    ASSERT_TRUE(m.weights.has_value());
    EXPECT_EQ(m.weights->name, "awq-int4"); // group_size 128, the default spelling
    EXPECT_DOUBLE_EQ(m.weights->bits_per_element, kAwqG128Bits);
    EXPECT_TRUE(m.weights->weight_only);
}

TEST(HfQuantization, GptqKeepsBitsAndGroupSize) {
    const ModelSpec g32 = import_fixture("llama-3.1-8b-gptq-g32");
    ASSERT_TRUE(g32.weights.has_value());
    EXPECT_EQ(g32.weights->name, "gptq-int4:g32");
    EXPECT_DOUBLE_EQ(g32.weights->bits_per_element, 4.0 + 20.0 / 32.0);
    // group_size -1: one scale per output channel, i.e. per hidden_size (4096) inputs.
    const ModelSpec int8 = import_fixture("llama-3.1-8b-gptq-int8-channel");
    ASSERT_TRUE(int8.weights.has_value());
    EXPECT_EQ(int8.weights->name, "gptq-int8:g4096");
    EXPECT_DOUBLE_EQ(int8.weights->bits_per_element, 8.0 + 24.0 / 4096.0);
}

TEST(HfQuantization, Fp8AndFbgemmFp8BecomeFp8) {
    for (const char* name :
         {"llama-3.1-8b-fp8", "llama-3.1-8b-fbgemm-fp8", "llama-3.1-8b-ct-fp8"}) {
        SCOPED_TRACE(name);
        const ModelSpec m = import_fixture(name);
        ASSERT_TRUE(m.weights.has_value());
        EXPECT_EQ(m.weights->name, "fp8");
        EXPECT_EQ(m.weights->compute, ComputeType::Fp8);
        EXPECT_EQ(m.weights->bits_per_element, 8.0);
    }
}

TEST(HfQuantization, CompressedTensorsSchemesMapToTheirFormats) {
    // W4A16 pack-quantized, symmetric, group 128: 4 + 16 / 128 bits (no zero point).
    const ModelSpec w4 = import_fixture("llama-3.1-8b-ct-w4a16");
    ASSERT_TRUE(w4.weights.has_value());
    EXPECT_EQ(w4.weights->name, "int4");
    EXPECT_DOUBLE_EQ(w4.weights->bits_per_element, 4.125);
    EXPECT_TRUE(w4.weights->weight_only);
    // W8A8 int-quantized: int8 weights and activations on the int8 tensor cores.
    const ModelSpec w8 = import_fixture("llama-3.1-8b-ct-w8a8");
    ASSERT_TRUE(w8.weights.has_value());
    EXPECT_EQ(w8.weights->name, "int8");
    EXPECT_EQ(w8.weights->compute, ComputeType::Int8);
    // float 4-bit with a group of 16 (nvfp4-pack-quantized).
    const ModelSpec fp4 = import_hf_config(
        with_quantization(
            R"({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
            "config_groups": {"group_0": {"targets": ["Linear"],
            "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16},
            "input_activations": {"num_bits": 4, "type": "float"}}}})"),
        "config.json", "m");
    ASSERT_TRUE(fp4.weights.has_value());
    EXPECT_EQ(fp4.weights->name, "nvfp4");
}

TEST(HfQuantization, ModelOptHfQuantConfigBesideConfigJson) {
    const ModelSpec m = import_hf_checkpoint(fixture("modelopt-nvfp4/config.json"), "");
    ASSERT_TRUE(m.weights.has_value());
    EXPECT_EQ(m.weights->name, "nvfp4");
    EXPECT_DOUBLE_EQ(m.weights->bits_per_element, 4.5); // e2m1 + one fp8 scale per 16
    EXPECT_TRUE(contains(m.source, "hf_quant_config.json")) << m.source;

    // FP8 and W4A16_AWQ (group_size 64) in a copy of the folder.
    const fs::path dir = fs::temp_directory_path() / "gpuplan-modelopt-test";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(fixture("modelopt-nvfp4/config.json"), dir / "config.json");
    const auto algo = [&](const std::string& quantization) {
        std::ofstream(dir / "hf_quant_config.json")
            << R"({"producer": {"name": "modelopt"}, "quantization": )" << quantization << "}";
        return import_hf_checkpoint(dir / "config.json", "m").weights;
    };
    EXPECT_EQ(algo(R"({"quant_algo": "FP8", "kv_cache_quant_algo": null})")->name, "fp8");
    EXPECT_EQ(algo(R"({"quant_algo": "W4A16_AWQ", "group_size": 64})")->name, "awq-int4:g64");
    EXPECT_FALSE(algo(R"({"quant_algo": null, "kv_cache_quant_algo": "FP8"})").has_value());
    try {
        (void)algo(R"({"quant_algo": "W4A8_AWQ"})");
        ADD_FAILURE() << "W4A8_AWQ has no precision";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key_path(), "quantization.quant_algo");
        EXPECT_TRUE(contains(e.what(), "hf_quant_config.json")) << e.what();
        EXPECT_TRUE(contains(e.what(), "NVFP4, NVFP4_AWQ, W4A16_AWQ")) << e.what();
    }
    fs::remove_all(dir);
}

TEST(HfQuantization, UnknownQuantMethodIsAnErrorNamingFileKeyAndSupportedList) {
    const ConfigError e = quant_error(R"({"quant_method": "hqq", "nbits": 4})");
    EXPECT_EQ(e.key_path(), "quantization_config.quant_method");
    EXPECT_EQ(e.file(), "q/config.json");
    const std::string what = e.what();
    EXPECT_TRUE(contains(what, "'hqq' is not supported")) << what;
    EXPECT_TRUE(contains(what, "awq, gptq, fp8, fbgemm_fp8, compressed-tensors, modelopt, mxfp4"))
        << what;
}

TEST(HfQuantization, UnsupportedSchemesAreErrorsNotBf16) {
    EXPECT_EQ(quant_error(R"({"quant_method": "awq", "bits": 3})").key_path(),
              "quantization_config.bits");
    EXPECT_EQ(quant_error(R"({"quant_method": "gptq", "bits": 2, "group_size": 128})").key_path(),
              "quantization_config.bits");
    EXPECT_EQ(quant_error(R"({"bits": 4})").key_path(), "quantization_config.quant_method");
    // W4A8 has no gpuplan precision.
    EXPECT_EQ(quant_error(R"({"quant_method": "compressed-tensors", "config_groups": {"g": {
                  "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128},
                  "input_activations": {"num_bits": 8, "type": "int"}}}})")
                  .key_path(),
              "quantization_config.config_groups.g.weights.num_bits");
    // Two schemes with different weight formats have no single precision.
    const ConfigError mixed =
        quant_error(R"({"quant_method": "compressed-tensors", "config_groups": {
        "a": {"weights": {"num_bits": 8, "type": "float"}},
        "b": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128}}}})");
    EXPECT_EQ(mixed.key_path(), "quantization_config.config_groups.b");
    EXPECT_TRUE(contains(mixed.what(), "mixed weight formats")) << mixed.what();
}

TEST(HfQuantization, NamesTheModelFromTheConfigNotItsFolder) {
    const ModelSpec m = import_fixture("llama-3.1-8b-awq");
    EXPECT_EQ(m.name, "meta-llama-3.1-8b-instruct-awq-int4");
    EXPECT_EQ(m.hf_id, "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4");
    // name_or_path (without the underscore) and a local path both name it too.
    const std::string plain = read_text(fixture("llama-3.1-8b.json"));
    const std::string with_key = "{\"name_or_path\": \"/models/My_Llama 8B\"," + plain.substr(1);
    EXPECT_EQ(import_hf_config(with_key, "config.json", "").name, "my-llama-8b");
    EXPECT_TRUE(import_hf_config(with_key, "config.json", "").hf_id.empty()); // a path, not an id
    // --name wins; without any name it is an error, not the folder's name.
    EXPECT_EQ(import_hf_checkpoint(fixture("llama-3.1-8b-awq.json"), "mine").name, "mine");
    try {
        (void)import_hf_config(plain, "llama/config.json", "");
        ADD_FAILURE() << "no name";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key_path(), "_name_or_path");
        EXPECT_TRUE(contains(e.what(), "--name")) << e.what();
    }
}

TEST(HfQuantization, WeightsRoundTripThroughTheCatalogYaml) {
    const ModelSpec m = import_fixture("llama-3.1-8b-gptq-g32");
    const std::string y = gpuplan::hwdb::model_to_yaml(m);
    EXPECT_TRUE(contains(y, "    weights: \"gptq-int4:g32\"\n")) << y;
    gpuplan::hwdb::Database d;
    d.add_yaml(y, "imported.yaml");
    ASSERT_EQ(d.models().size(), 1U);
    EXPECT_EQ(d.models()[0], m);
    // A 16-bit checkpoint writes no weights key.
    const ModelSpec plain =
        import_hf_config(read_text(fixture("llama-3.1-8b.json")), "config.json", "plain");
    EXPECT_FALSE(plain.weights.has_value());
    EXPECT_FALSE(contains(gpuplan::hwdb::model_to_yaml(plain), "weights:"));
}

TEST(HfQuantization, CatalogWeightsKeyRejectsUnknownPrecision) {
    gpuplan::hwdb::Database d;
    std::string y = gpuplan::hwdb::model_to_yaml(import_fixture("llama-3.1-8b-awq"));
    const std::string key = "weights: \"awq-int4\"";
    y.replace(y.find(key), key.size(), "weights: \"awq-int3\"");
    try {
        d.add_yaml(y, "m.yaml");
        ADD_FAILURE() << "awq-int3 accepted";
    } catch (const ConfigError& e) {
        EXPECT_TRUE(contains(e.what(), "m.yaml:")) << e.what();
        EXPECT_TRUE(contains(e.what(), "unknown precision 'awq-int3'")) << e.what();
    }
}

TEST(HfQuantization, ScenarioDefaultsToTheCheckpointWeights) {
    // DeepSeek-V3 is published in FP8 (hwdb/models/deepseek-v3.yaml, weights: fp8).
    const std::string head =
        "schema: 1\nmodel: deepseek-v3\nhardware:\n  accelerator: h200-sxm\n  tp: 8\n";
    const auto s = gpuplan::hwdb::parse_scenario(head, "s.yaml", db());
    EXPECT_EQ(s.deployment.prec.weights.name, "fp8");
    EXPECT_EQ(s.deployment.prec.kv_cache.name, "bf16");
    const auto bf16 =
        gpuplan::hwdb::parse_scenario(head + "precision:\n  weights: bf16\n", "s.yaml", db());
    EXPECT_EQ(bf16.deployment.prec.weights.name, "bf16"); // the scenario's own choice wins
    const auto kv =
        gpuplan::hwdb::parse_scenario(head + "precision:\n  kv_cache: fp8\n", "s.yaml", db());
    EXPECT_EQ(kv.deployment.prec.weights.name, "fp8");
    // 16-bit catalog checkpoints keep bf16.
    const auto llama = gpuplan::hwdb::parse_scenario(
        "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n", "s.yaml", db());
    EXPECT_EQ(llama.deployment.prec.weights.name, "bf16");
}
