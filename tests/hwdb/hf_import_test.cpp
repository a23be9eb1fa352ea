/// Import of Hugging Face config.json fixtures (tests/fixtures/hf/, copies of the real configs)
/// and the catalog YAML written from them.

#include "hwdb/hf_import.hpp"

#include "hwdb/model_yaml_writer.hpp"
#include "model/error.hpp"
#include "model/model_spec.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

using gpuplan::ConfigError;
using gpuplan::hwdb::import_hf_config;
using gpuplan::model::AttentionKind;
using gpuplan::model::count_params;
using gpuplan::model::ModelSpec;

std::string fixture_path(const std::string& name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/hf/" + name + ".json";
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "cannot open " << path;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

ModelSpec import_fixture(const std::string& name) {
    const std::string path = fixture_path(name);
    return import_hf_config(read_text(path), path, name);
}

/// The ConfigError import_hf_config throws for `text`; fails the test when none is thrown.
ConfigError import_error(const std::string& text) {
    try {
        (void)import_hf_config(text, "config.json", "bad");
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no ConfigError for: " << text.substr(0, 80);
    return ConfigError("", 0, 0, "", "");
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(HfImport, Llama31_8bMapsFieldsAndCountsExactly) {
    const ModelSpec m = import_fixture("llama-3.1-8b");
    EXPECT_EQ(m.name, "llama-3.1-8b");
    EXPECT_EQ(m.family, "llama");
    EXPECT_EQ(m.layers, 32);
    EXPECT_EQ(m.kv_heads, 8);
    EXPECT_EQ(m.head_dim, 128); // absent from this config: hidden_size / heads
    EXPECT_EQ(m.attention, AttentionKind::Gqa);
    EXPECT_FALSE(m.tied_embeddings);
    EXPECT_EQ(m.max_context, 131072);
    EXPECT_FALSE(m.sliding_window.has_value());
    EXPECT_EQ(m.published_params, 8'030'261'248.0); // the import computes it
    EXPECT_NEAR(m.published_params, 8.03e9, 0.01 * 8.03e9);
    EXPECT_EQ(m.published_active_params, 0.0);
}

TEST(HfImport, Qwen25HasQkvBiasAndIgnoresDisabledSlidingWindow) {
    const ModelSpec m = import_fixture("qwen2.5-7b");
    EXPECT_EQ(m.family, "qwen2");
    EXPECT_TRUE(m.qkv_bias);
    EXPECT_FALSE(m.linear_bias);
    EXPECT_EQ(m.kv_heads, 4);
    EXPECT_FALSE(m.sliding_window.has_value()); // use_sliding_window is false
    EXPECT_NEAR(m.published_params, 7.61e9, 0.01 * 7.61e9);
}

TEST(HfImport, Qwen3MoeMapsExpertsAndQkNorm) {
    const ModelSpec m = import_fixture("qwen3-30b-a3b");
    EXPECT_EQ(m.family, "qwen3-moe");
    EXPECT_TRUE(m.qk_norm);
    EXPECT_EQ(m.head_dim, 128); // explicit; heads x head_dim = 4096 != hidden_size 2048
    ASSERT_TRUE(m.moe.has_value());
    EXPECT_EQ(*m.moe, (gpuplan::model::MoeSpec{128, 8, 0, 768, 0}));
    EXPECT_NEAR(m.published_params, 30.5e9, 0.01 * 30.5e9);
    // Model card: 29.9B without embeddings; its "3.3B activated" truncates the 3.353e9 counted
    // with the embedding and LM head.
    const auto c = count_params(m);
    EXPECT_NEAR(c.total - c.embedding - c.lm_head, 29.9e9, 0.01 * 29.9e9);
    EXPECT_EQ(m.published_active_params, c.active);
    EXPECT_NEAR(m.published_active_params, 3.353e9, 0.001e9);
}

TEST(HfImport, MixtralIsTopTwoOfEight) {
    const ModelSpec m = import_fixture("mixtral-8x7b");
    EXPECT_EQ(m.family, "mixtral");
    ASSERT_TRUE(m.moe.has_value());
    EXPECT_EQ(*m.moe, (gpuplan::model::MoeSpec{8, 2, 0, 14336, 0}));
    EXPECT_FALSE(m.sliding_window.has_value()); // sliding_window is null
    EXPECT_NEAR(m.published_params, 46.7e9, 0.01 * 46.7e9);
    EXPECT_NEAR(m.published_active_params, 12.9e9, 0.01 * 12.9e9);
}

TEST(HfImport, DeepSeekV3MapsMlaRanksAndDenseLayers) {
    const ModelSpec m = import_fixture("deepseek-v3");
    EXPECT_EQ(m.family, "deepseek-v3");
    EXPECT_EQ(m.attention, AttentionKind::Mla);
    ASSERT_TRUE(m.mla.has_value());
    EXPECT_EQ(*m.mla, (gpuplan::model::MlaSpec{1536, 512, 128, 64, 128}));
    EXPECT_EQ(m.head_dim, 192);
    ASSERT_TRUE(m.moe.has_value());
    EXPECT_EQ(*m.moe, (gpuplan::model::MoeSpec{256, 8, 1, 2048, 3}));
    EXPECT_FALSE(m.qkv_bias);
    EXPECT_NEAR(m.published_params, 671e9, 0.01 * 671e9);
    // README_WEIGHTS.md: 36.6B activated without the input embedding.
    EXPECT_NEAR(m.published_active_params - count_params(m).embedding, 36.6e9, 0.01 * 36.6e9);
}

TEST(HfImport, Gemma2HasFourNormsTiedEmbeddingsAndHalfWindowedLayers) {
    const ModelSpec m = import_fixture("gemma-2-9b");
    EXPECT_EQ(m.family, "gemma2");
    EXPECT_EQ(m.norms_per_layer, 4);
    EXPECT_TRUE(m.tied_embeddings); // Gemma2Config default; the config omits the key
    EXPECT_EQ(m.head_dim, 256);
    ASSERT_TRUE(m.sliding_window.has_value());
    EXPECT_EQ(*m.sliding_window, (gpuplan::model::SlidingWindowSpec{4096, 21}));
    EXPECT_NEAR(m.published_params, 9.24e9, 0.01 * 9.24e9);
}

TEST(HfImport, TruncatedJsonReportsLineAndColumn) {
    const std::string text = read_text(fixture_path("llama-3.1-8b"));
    const std::string cut = text.substr(0, text.find("\"hidden_size\""));
    const ConfigError e = import_error(cut);
    EXPECT_EQ(e.file(), "config.json");
    EXPECT_EQ(e.line(), 10); // after the last line kept, where the input ends
    EXPECT_EQ(e.column(), 3);
    EXPECT_TRUE(contains(e.what(), "config.json:10:3: malformed JSON: ")) << e.what();
    EXPECT_TRUE(contains(e.what(), "unexpected end of input")) << e.what();
}

TEST(HfImport, UnknownArchitectureNamesSupportedOnes) {
    const ConfigError e = import_error(
        R"({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_layer": 12})");
    EXPECT_EQ(e.key_path(), "architectures");
    EXPECT_TRUE(contains(e.what(), "\"GPT2LMHeadModel\" (model_type \"gpt2\") is not supported"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "LlamaForCausalLM (llama)")) << e.what();
    EXPECT_TRUE(contains(e.what(), "Gemma2ForCausalLM (gemma2)")) << e.what();
}

TEST(HfImport, MissingFieldIsNamed) {
    const ConfigError e =
        import_error(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096})");
    EXPECT_EQ(e.key_path(), "num_hidden_layers");
    EXPECT_TRUE(contains(e.what(), "config.json: num_hidden_layers: is missing; a "
                                   "LlamaForCausalLM config.json must give it"))
        << e.what();
}

TEST(HfImport, MistypedFieldIsNamed) {
    const ConfigError e = import_error(R"({"model_type": "mistral", "num_hidden_layers": "32"})");
    EXPECT_EQ(e.key_path(), "num_hidden_layers");
    EXPECT_TRUE(contains(e.what(), "is string, expected an integer")) << e.what();
}

TEST(HfImport, InconsistentValuesBecomeConfigErrors) {
    std::string text = read_text(fixture_path("llama-3.1-8b"));
    const std::string from = "\"num_key_value_heads\": 8";
    text.replace(text.find(from), from.size(), "\"num_key_value_heads\": 7");
    const ConfigError e = import_error(text);
    EXPECT_TRUE(contains(e.what(), "config.json: imported model 'bad': kv_heads: 7 does not "
                                   "divide heads (32)"))
        << e.what();
}

TEST(ModelYamlWriter, WritesSchemaKeysAndOnlyNonDefaults) {
    const std::string y = gpuplan::hwdb::model_to_yaml(import_fixture("gemma-2-9b"));
    EXPECT_EQ(y.rfind("schema: 1\nmodels:\n  - name: \"gemma-2-9b\"\n", 0), 0U) << y;
    EXPECT_TRUE(contains(y, "    family: \"gemma2\"\n    layers: 42\n")) << y;
    EXPECT_TRUE(contains(y, "    head_dim: 256\n")) << y;
    EXPECT_TRUE(contains(y, "    tied_embeddings: true\n")) << y;
    EXPECT_TRUE(contains(y, "    norms_per_layer: 4\n")) << y;
    EXPECT_TRUE(contains(y, "    sliding_window:\n      window: 4096\n      windowed_layers: 21\n"))
        << y;
    EXPECT_TRUE(contains(y, "    published_params: 9241705984\n")) << y;
    EXPECT_FALSE(contains(y, "published_active_params")) << y;
    EXPECT_FALSE(contains(y, "mlp:")) << y; // gated is the default
    EXPECT_FALSE(contains(y, "norm:")) << y;
}

TEST(ModelYamlWriter, WritesMlaAndMoeMapsAndEscapesStrings) {
    ModelSpec m = import_fixture("deepseek-v3");
    m.source = "say \"hi\"\\ok";
    const std::string y = gpuplan::hwdb::model_to_yaml(m);
    EXPECT_TRUE(contains(y, "    attention: mla\n    mla:\n      q_lora_rank: 1536\n"
                            "      kv_lora_rank: 512\n      qk_nope_head_dim: 128\n"
                            "      qk_rope_head_dim: 64\n      v_head_dim: 128\n"))
        << y;
    EXPECT_TRUE(contains(y, "    moe:\n      experts: 256\n      active_experts: 8\n"
                            "      shared_experts: 1\n      expert_ffn_size: 2048\n"
                            "      first_dense_layers: 3\n"))
        << y;
    EXPECT_TRUE(contains(y, "    published_active_params: 37552282624\n")) << y;
    EXPECT_TRUE(contains(y, "    source: \"say \\\"hi\\\"\\\\ok\"\n")) << y;
}

} // namespace

// Regression from fuzz_hf_config: a number out of double range threw nlohmann's out_of_range,
// which escaped as an internal error.
TEST(HfImport, HugeNumberIsAConfigErrorNotACrash) {
    EXPECT_THROW((void)gpuplan::hwdb::import_hf_config(" 22.4E820\xb0"
                                                       "00",
                                                       "config.json", "m"),
                 gpuplan::ConfigError);
    EXPECT_THROW(
        (void)gpuplan::hwdb::import_hf_config(R"({"hidden_size": 1e999})", "config.json", "m"),
        gpuplan::ConfigError);
}
