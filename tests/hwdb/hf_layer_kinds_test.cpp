/// Import of the Hugging Face configs of current models (tests/fixtures/hf/aic/, copies of the
/// real files, see SOURCE there): layer kinds, text_config wrappers, Infinity literals, Hub ids,
/// ModelOpt KV dtypes, and the refusals of layouts gpuplan cannot hold yet. Every file in that
/// folder is imported here. Parameter counts are checked against the model cards; the per-token
/// and per-sequence memory is recomputed by hand from the config's fields.

#include "hwdb/hf_import.hpp"

#include "hwdb/database.hpp"
#include "hwdb/model_yaml_writer.hpp"
#include "model/error.hpp"
#include "model/kv_cache.hpp"
#include "model/model_spec.hpp"
#include "model/precision.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

namespace {

using gpuplan::ConfigError;
using gpuplan::hwdb::hub_id_problem;
using gpuplan::hwdb::import_hf_checkpoint;
using gpuplan::hwdb::import_hf_config;
using gpuplan::model::AttentionKind;
using gpuplan::model::count_params;
using gpuplan::model::ModelSpec;
using gpuplan::model::parse_precision;
using gpuplan::model::StateKind;

std::filesystem::path aic(const std::string& repo) {
    return std::filesystem::path(GPUPLAN_SOURCE_DIR) / "tests/fixtures/hf/aic" /
           (repo + "_config.json");
}

ModelSpec import_aic(const std::string& repo) {
    return import_hf_checkpoint(aic(repo), "");
}

/// The ConfigError importing `repo` throws; fails the test when none is thrown.
ConfigError refusal(const std::string& repo) {
    try {
        (void)import_aic(repo);
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no ConfigError for " << repo;
    return ConfigError("", 0, 0, "", "");
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// |a / b - 1| <= tolerance.
::testing::AssertionResult within(double a, double b, double tolerance) {
    if (std::abs(a / b - 1.0) <= tolerance) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << a << " is " << (a / b - 1.0) * 100 << " % from " << b;
}

// ---- gpt-oss: alternating 128-token windows, sinks, MXFP4 experts -----------------------------

TEST(HfLayerKinds, GptOss120bMatchesTheCardAndHalvesItsLayersToTheWindow) {
    const ModelSpec m = import_aic("openai--gpt-oss-120b");
    EXPECT_EQ(m.name, "gpt-oss-120b");
    EXPECT_EQ(m.hf_id, "openai/gpt-oss-120b"); // from the file's ORG--NAME spelling
    EXPECT_EQ(m.family, "gpt-oss");
    ASSERT_TRUE(m.sliding_window.has_value());
    EXPECT_EQ(m.sliding_window->window, 128);
    EXPECT_EQ(m.sliding_window->windowed_layers, 18); // layer_types: 18 of 36 sliding
    EXPECT_TRUE(m.attention_sinks);
    ASSERT_TRUE(m.moe.has_value());
    EXPECT_EQ(m.moe->experts, 128);
    EXPECT_EQ(m.moe->active_experts, 4);
    ASSERT_TRUE(m.weights.has_value());
    EXPECT_EQ(m.weights->name, "mxfp4");
    EXPECT_TRUE(contains(m.source, "mxfp4 covers the experts only")) << m.source;
    // OpenAI's model card (gpt-oss-120b & gpt-oss-20b Model Card, 2025, table 1): 116.83B total,
    // 5.13B active, the active count without the embedding table (a lookup).
    const auto p = count_params(m);
    EXPECT_TRUE(within(p.total, 116.83e9, 0.02));
    EXPECT_TRUE(within(p.active - p.embedding, 5.13e9, 0.02));
    // By hand: per layer 2 x 8 KV heads x 64 x 2 B = 2048 B per token; at 8192 tokens 18 full
    // layers hold 8192 tokens, 18 windowed ones 128.
    const auto bf16 = parse_precision("bf16");
    EXPECT_DOUBLE_EQ(gpuplan::model::kv_bytes_per_token(m, bf16).si(), 36.0 * 2048.0);
    EXPECT_DOUBLE_EQ(gpuplan::model::kv_bytes_per_sequence(m, bf16, 8192).si(),
                     18.0 * 8192 * 2048 + 18.0 * 128 * 2048);
}

TEST(HfLayerKinds, GptOss20bMatchesTheCard) {
    const auto p = count_params(import_aic("openai--gpt-oss-20b"));
    EXPECT_TRUE(within(p.total, 20.91e9, 0.02));
    EXPECT_TRUE(within(p.active - p.embedding, 3.61e9, 0.02));
}

// ---- Llama 4: a text_config wrapper, chunked attention, shared experts, interleaved MoE -------

TEST(HfLayerKinds, Llama4ScoutReadsTextConfigAndChunksThreeLayersInFour) {
    const ModelSpec m = import_aic("meta-llama--Llama-4-Scout-17B-16E-Instruct");
    EXPECT_EQ(m.hf_id, "meta-llama/Llama-4-Scout-17B-16E-Instruct");
    EXPECT_EQ(m.layers, 48);
    ASSERT_TRUE(m.sliding_window.has_value());
    EXPECT_TRUE(m.sliding_window->chunked);
    EXPECT_EQ(m.sliding_window->window, 8192);
    EXPECT_EQ(m.sliding_window->windowed_layers, 36); // every 4th layer is global (NoPE)
    ASSERT_TRUE(m.moe.has_value());
    EXPECT_EQ(m.moe->shared_experts, 1);
    EXPECT_EQ(m.moe->layer_interval, 1);
    EXPECT_TRUE(contains(m.source, "(text_config): the modules outside text_config not planned"))
        << m.source;
    // Meta's card: 109B total (vision encoder included), 17B active.
    const auto p = count_params(m);
    EXPECT_TRUE(within(p.total, 109e9, 0.02));
    EXPECT_TRUE(within(p.active, 17e9, 0.02));
    // By hand at 131072 tokens: 12 global layers hold every token, 36 chunked ones one chunk;
    // 2 x 8 x 128 x 2 B = 4096 B per token and layer.
    const auto bf16 = parse_precision("bf16");
    EXPECT_DOUBLE_EQ(gpuplan::model::kv_bytes_per_sequence(m, bf16, 131072).si(),
                     12.0 * 131072 * 4096 + 36.0 * 8192 * 4096);
}

TEST(HfLayerKinds, Llama4MaverickAlternatesDenseAndMoeLayers) {
    const ModelSpec m = import_aic("meta-llama--Llama-4-Maverick-17B-128E-Instruct");
    ASSERT_TRUE(m.moe.has_value());
    EXPECT_EQ(m.moe->layer_interval, 2);
    EXPECT_EQ(gpuplan::model::moe_layer_count(m), 24);
    EXPECT_FALSE(gpuplan::model::is_moe_layer(m, 0));
    EXPECT_TRUE(gpuplan::model::is_moe_layer(m, 1));
    EXPECT_EQ(m.ffn_size, 16384); // intermediate_size_mlp of the dense layers
    const auto p = count_params(m);
    EXPECT_TRUE(within(p.total, 400e9, 0.02));
    EXPECT_TRUE(within(p.active, 17e9, 0.02));
}

// ---- DSA: DeepSeek-V3.2 and GLM-5 ---------------------------------------------------------

TEST(HfLayerKinds, DeepSeekV32AddsTheIndexerAndItsKeyCache) {
    const ModelSpec m = import_aic("deepseek-ai--DeepSeek-V3.2");
    EXPECT_EQ(m.family, "deepseek-v32");
    EXPECT_EQ(m.attention, AttentionKind::Mla);
    ASSERT_TRUE(m.indexer.has_value());
    EXPECT_EQ(m.indexer->heads, 64);
    EXPECT_EQ(m.indexer->head_dim, 128);
    EXPECT_EQ(m.indexer->top_k, 2048);
    // DeepSeek's card: 671B (685B with the MTP module, not counted here), 37B active.
    const auto p = count_params(m);
    EXPECT_TRUE(within(p.total, 671e9, 0.02));
    EXPECT_TRUE(within(p.active, 37e9, 0.04)); // the card's 37B leaves out the embeddings
    // By hand: MLA 512 + 64 = 576 elements per token and layer, plus the indexer's 128 FP8
    // bytes and one 4-byte scale; 61 layers.
    EXPECT_DOUBLE_EQ(gpuplan::model::kv_bytes_per_token(m, parse_precision("bf16")).si(),
                     61.0 * (576 * 2 + 132));
    EXPECT_DOUBLE_EQ(gpuplan::model::kv_bytes_per_token(m, parse_precision("fp8")).si(),
                     61.0 * (576 + 132));
}

TEST(HfLayerKinds, Glm5FamilyImportsWithItsIndexer) {
    // Z.ai's card: GLM-5 744B total, 40B active.
    for (const char* repo : {"zai-org--GLM-5", "zai-org--GLM-5.1", "zai-org--GLM-5.2"}) {
        const ModelSpec m = import_aic(repo);
        ASSERT_TRUE(m.indexer.has_value()) << repo;
        EXPECT_EQ(m.indexer->heads, 32) << repo;
        EXPECT_TRUE(within(count_params(m).total, 744e9, 0.02)) << repo;
    }
    const ModelSpec fp8 = import_aic("zai-org--GLM-5-FP8");
    ASSERT_TRUE(fp8.weights.has_value());
    EXPECT_EQ(fp8.weights->name, "fp8");
}

// ---- Kimi-K2.5: DeepSeek-V3 inside a text_config ----------------------------------------------

TEST(HfLayerKinds, KimiK25IsDeepSeekV3InsideAWrapperWithInt4Experts) {
    const ModelSpec m = import_aic("moonshotai--Kimi-K2.5");
    EXPECT_EQ(m.family, "deepseek-v3");
    EXPECT_EQ(m.attention, AttentionKind::Mla);
    ASSERT_TRUE(m.weights.has_value());
    EXPECT_EQ(m.weights->name, "int4:g32"); // compressed-tensors pack-quantized, group 32
    // Moonshot's card: 1T total (one significant figure), 32B activated.
    const auto p = count_params(m);
    EXPECT_TRUE(within(p.total, 1.0e12, 0.05));
    EXPECT_TRUE(within(p.active, 32e9, 0.05));
}

TEST(HfLayerKinds, ModelOptNvfp4CheckpointsCarryTheirFp8KvCache) {
    for (const char* repo :
         {"nvidia--Kimi-K2.5-NVFP4", "nvidia--Kimi-K2.6-NVFP4", "nvidia--MiniMax-M2.5-NVFP4",
          "nvidia--DeepSeek-V3.2-NVFP4", "nvidia--Qwen3.5-122B-A10B-NVFP4"}) {
        const ModelSpec m = import_aic(repo);
        ASSERT_TRUE(m.weights.has_value()) << repo;
        EXPECT_EQ(m.weights->name, "nvfp4") << repo;
        ASSERT_TRUE(m.kv_cache.has_value()) << repo;
        EXPECT_EQ(m.kv_cache->name, "fp8") << repo; // kv_cache_quant_algo FP8
    }
}

TEST(HfLayerKinds, ModelOptMixedPrecisionIsRefusedWithItsReason) {
    const ConfigError e = refusal("nvidia--Qwen3.6-35B-A3B-NVFP4");
    EXPECT_EQ(e.key_path(), "quantization.quant_algo");
    EXPECT_TRUE(contains(e.what(), "MIXED_PRECISION")) << e.what();
}

// ---- MiniMax-M2.x and Step-3.7-Flash ----------------------------------------------------------

TEST(HfLayerKinds, MiniMaxM2xMatchTheCardTotal) {
    // MiniMax's card (MiniMax-M2): 230B total; M2.5 and M2.7 keep the architecture.
    for (const char* repo : {"MiniMaxAI--MiniMax-M2.5", "MiniMaxAI--MiniMax-M2.7"}) {
        const ModelSpec m = import_aic(repo);
        EXPECT_EQ(m.family, "minimax-m2") << repo;
        EXPECT_TRUE(m.qk_norm) << repo;
        ASSERT_TRUE(m.weights.has_value()) << repo;
        EXPECT_EQ(m.weights->name, "fp8") << repo;
        EXPECT_TRUE(within(count_params(m).total, 230e9, 0.02)) << repo;
    }
}

TEST(HfLayerKinds, Step37FlashWindowsThreeLayersInFour) {
    const ModelSpec m = import_aic("stepfun-ai--Step-3.7-Flash");
    ASSERT_TRUE(m.sliding_window.has_value());
    EXPECT_EQ(m.sliding_window->window, 512);
    EXPECT_EQ(m.sliding_window->windowed_layers, 33); // layer_types: 12 full of 45
    ASSERT_TRUE(m.moe.has_value());
    EXPECT_EQ(m.moe->first_dense_layers, 3);
    EXPECT_EQ(m.moe->shared_experts, 1);
    // By hand (no card at hand): 2 x 128896 x 4096 embeddings, 45 x (GQA 64/8 x 128 attention
    // + 2 norms), 3 dense MLPs of 11264, 42 x (router + 289 experts of 1280) = 195.83e9.
    const double h = 4096;
    const double attention = h * 64 * 128 * 2 + 2 * h * 8 * 128;
    const double expert = 3 * h * 1280;
    const double total = 2 * 128896 * h + h + 45 * (attention + 2 * h) + 3 * 3 * h * 11264 +
                         42 * (h * 288 + 289 * expert);
    EXPECT_DOUBLE_EQ(count_params(m).total, total);
}

// ---- Qwen3.5 / Qwen3.6: Gated DeltaNet on 3 layers of 4 ---------------------------------------

TEST(HfLayerKinds, Qwen35MoeHoldsAConstantStatePerSequence) {
    const ModelSpec m = import_aic("Qwen--Qwen3.5-35B-A3B");
    EXPECT_EQ(m.family, "qwen3-next");
    ASSERT_TRUE(m.state.has_value());
    EXPECT_EQ(m.state->kind, StateKind::GatedDeltaNet);
    EXPECT_EQ(m.state->state_layers, 30);
    EXPECT_TRUE(m.state->fp32_state); // mamba_ssm_dtype float32
    EXPECT_TRUE(m.output_gate);
    // By hand: 10 attention layers x 2 KV heads x 256 x 2 (K, V) x 2 B = 20480 B per token.
    // GDN state per layer: conv 3 x (2 x 16 x 128 + 32 x 128) x 2 B = 49152 B, recurrent
    // 32 x 128 x 128 x 4 B = 2097152 B; 30 layers.
    const auto bf16 = parse_precision("bf16");
    const double state = 30.0 * (49152 + 2097152);
    EXPECT_DOUBLE_EQ(gpuplan::model::kv_bytes_per_token(m, bf16).si(), 20480.0);
    EXPECT_DOUBLE_EQ(gpuplan::model::state_bytes_per_sequence(m).si(), state);
    EXPECT_DOUBLE_EQ(gpuplan::model::kv_bytes_per_sequence(m, bf16, 4096).si(),
                     20480.0 * 4096 + state);
    EXPECT_TRUE(within(count_params(m).total, 35e9, 0.02));
}

TEST(HfLayerKinds, Qwen35FamilyMatchesTheCardTotals) {
    EXPECT_TRUE(within(count_params(import_aic("Qwen--Qwen3.5-27B")).total, 27e9, 0.02));
    EXPECT_TRUE(within(count_params(import_aic("Qwen--Qwen3.5-122B-A10B")).total, 122e9, 0.02));
    const auto big = count_params(import_aic("Qwen--Qwen3.5-397B-A17B"));
    EXPECT_TRUE(within(big.total, 397e9, 0.02));
    EXPECT_TRUE(within(big.active, 17e9, 0.03));
}

TEST(HfLayerKinds, Qwen3VlWrappersPlanTheirLanguageModel) {
    const ModelSpec moe = import_aic("Qwen--Qwen3-VL-30B-A3B-Instruct");
    EXPECT_EQ(moe.family, "qwen3-moe");
    EXPECT_TRUE(within(count_params(moe).total, 30.5e9, 0.03)); // card 31B with the vision tower
    const ModelSpec dense = import_aic("Qwen--Qwen3-VL-8B-Instruct");
    EXPECT_EQ(dense.family, "qwen3");
    EXPECT_TRUE(contains(dense.source, "vision encoder")) << dense.source;
}

// ---- Refused layouts: recognised, named, never half-imported ----------------------------------

TEST(HfLayerKinds, Nemotron3NanoIsPlannedAsMixerLayersWithMamba2State) {
    const ModelSpec m = import_aic("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
    EXPECT_EQ(m.family, "nemotron-h");
    // hybrid_override_pattern: 23 'M', 6 '*', 23 'E' blocks -> 29 mixer layers, 23 with MoE.
    EXPECT_EQ(m.layers, 29);
    ASSERT_TRUE(m.state.has_value());
    EXPECT_EQ(m.state->kind, StateKind::Mamba2);
    EXPECT_EQ(m.state->state_layers, 23);
    EXPECT_EQ(gpuplan::model::moe_layer_count(m), 23);
    EXPECT_EQ(m.mlp, gpuplan::model::MlpKind::Plain); // relu2
    ASSERT_TRUE(m.moe.has_value());
    EXPECT_EQ(m.moe->shared_experts, 2); // one shared expert of 3712 = 2 x 1856
    // NVIDIA's card (NVIDIA-Nemotron-3-Nano-30B-A3B): 31.6B total, 3.6B active with embeddings.
    const auto p = count_params(m);
    EXPECT_TRUE(within(p.total, 31.6e9, 0.02));
    EXPECT_TRUE(within(p.active, 3.6e9, 0.02));
    // By hand: 6 attention layers x 2 KV heads x 128 x 2 x 2 B = 6144 B per token; a Mamba-2
    // layer holds conv 3 x (64 x 64 + 2 x 8 x 128) x 2 B = 36864 B and an fp32 state of
    // 64 x 64 x 128 x 4 B = 2,097,152 B, 23 layers.
    const auto bf16 = parse_precision("bf16");
    EXPECT_DOUBLE_EQ(gpuplan::model::kv_bytes_per_token(m, bf16).si(), 6144.0);
    EXPECT_DOUBLE_EQ(gpuplan::model::state_bytes_per_sequence(m).si(), 23.0 * (36864 + 2097152));
}

TEST(HfLayerKinds, OtherNemotronHLayoutsParseInfinityAndAreRefusedWithTheirReason) {
    // Super and the 56B hold time_step_limit [0.0, Infinity]; the refusals are about layouts.
    const std::pair<const char*, const char*> cases[] = {
        {"nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8", "moe_latent_size"},
        {"nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", "hybrid_override_pattern"},
        {"nvidia--Nemotron-H-56B-Base-8K", "hybrid_override_pattern"},
    };
    for (const auto& [repo, field] : cases) {
        const ConfigError e = refusal(repo);
        EXPECT_EQ(e.key_path(), field) << repo;
        EXPECT_FALSE(contains(e.what(), "malformed JSON")) << e.what();
        EXPECT_TRUE(contains(e.what(), "not supported yet")) << e.what();
    }
}

TEST(HfLayerKinds, OtherNewLayoutsAreRefusedNamingTheirField) {
    const std::pair<const char*, const char*> cases[] = {
        {"google--gemma-4-26B-A4B", "global_head_dim"},
        {"nvidia--Gemma-4-31B-IT-NVFP4", "global_head_dim"},
        {"deepseek-ai--DeepSeek-V4-Flash", "compress_ratios"},
        {"deepseek-ai--DeepSeek-V4-Pro", "compress_ratios"},
        {"MiniMaxAI--MiniMax-M3", "sparse_attention_config"},
        {"moonshotai--Kimi-K3", "text_config.linear_attn_config"},
        {"XiaomiMiMo--MiMo-V2-Flash", "swa_num_key_value_heads"},
    };
    for (const auto& [repo, field] : cases) {
        const ConfigError e = refusal(repo);
        EXPECT_EQ(e.key_path(), field) << repo;
        EXPECT_TRUE(contains(e.what(), "supported: LlamaForCausalLM (llama)")) << e.what();
    }
}

TEST(HfLayerKinds, EveryLayerKindSurvivesTheCatalogYaml) {
    // Chunks and shared experts (Scout), interleaved MoE (Maverick), sinks and MXFP4 (gpt-oss),
    // the indexer (DeepSeek-V3.2), GDN state and the output gate (Qwen3.5), the FP8 KV cache
    // (ModelOpt).
    for (const char* repo :
         {"meta-llama--Llama-4-Scout-17B-16E-Instruct",
          "meta-llama--Llama-4-Maverick-17B-128E-Instruct", "openai--gpt-oss-120b",
          "deepseek-ai--DeepSeek-V3.2", "Qwen--Qwen3.5-35B-A3B", "nvidia--MiniMax-M2.5-NVFP4"}) {
        const ModelSpec spec = import_aic(repo);
        gpuplan::hwdb::Database db;
        db.add_yaml(gpuplan::hwdb::model_to_yaml(spec), "written.yaml");
        ASSERT_EQ(db.models().size(), 1U) << repo;
        EXPECT_EQ(db.models()[0], spec) << repo;
    }
}

// ---- JSON literals, Hub ids ---------------------------------------------------------------

TEST(HfLayerKinds, NonFiniteLiteralsParseAndAreRefusedWhereASizeIsExpected) {
    const std::string text = R"({"architectures": ["LlamaForCausalLM"], "x": [NaN, -Infinity],
        "num_hidden_layers": Infinity})";
    try {
        (void)import_hf_config(text, "config.json", "m");
        ADD_FAILURE() << "accepted an infinite layer count";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key_path(), "num_hidden_layers");
        EXPECT_TRUE(contains(e.what(), "is Infinity, expected an integer")) << e.what();
    }
    // A string that spells the words is left alone.
    const std::string quoted = R"({"architectures": ["LlamaForCausalLM"], "note": "NaN Infinity",
        "num_hidden_layers": "NaN"})";
    try {
        (void)import_hf_config(quoted, "config.json", "m");
        ADD_FAILURE() << "accepted a string layer count";
    } catch (const ConfigError& e) {
        EXPECT_TRUE(contains(e.what(), "is string, expected an integer")) << e.what();
    }
}

TEST(HfLayerKinds, HubIdsFollowTheHubGrammar) {
    EXPECT_FALSE(hub_id_problem("openai/gpt-oss-120b").has_value());
    EXPECT_FALSE(hub_id_problem("gpt2").has_value());
    EXPECT_FALSE(hub_id_problem("Qwen/Qwen3.5-35B-A3B").has_value());
    EXPECT_TRUE(hub_id_problem("").has_value());
    EXPECT_TRUE(hub_id_problem("a/b/c").has_value());
    EXPECT_TRUE(hub_id_problem("org/name--x").has_value());
    EXPECT_TRUE(hub_id_problem("org/na..me").has_value());
    EXPECT_TRUE(hub_id_problem("org/-name").has_value());
    EXPECT_TRUE(hub_id_problem("org/name.git").has_value());
    EXPECT_TRUE(hub_id_problem("org/na me").has_value());
    EXPECT_TRUE(hub_id_problem("org/" + std::string(97, 'a')).has_value());
}

TEST(HfLayerKinds, HubIdComesFromTheOptionThenTheNameThenTheLocation) {
    const auto path = aic("openai--gpt-oss-20b");
    EXPECT_EQ(import_hf_checkpoint(path, "").hf_id, "openai/gpt-oss-20b");
    const ModelSpec named = import_hf_checkpoint(path, "my-org/oss-small");
    EXPECT_EQ(named.hf_id, "my-org/oss-small");
    EXPECT_EQ(named.name, "oss-small");
    const ModelSpec given = import_hf_checkpoint(path, "oss", "my-org/oss-20b-ft");
    EXPECT_EQ(given.hf_id, "my-org/oss-20b-ft");
    EXPECT_EQ(given.name, "oss");
    try {
        (void)import_hf_checkpoint(path, "oss", "my org/oss");
        ADD_FAILURE() << "accepted an invalid Hub id";
    } catch (const ConfigError& e) {
        EXPECT_TRUE(contains(e.what(), "--hub-id 'my org/oss' is not a Hugging Face repository "
                                       "id: ' ' is not allowed"))
            << e.what();
    }
}

TEST(HfLayerKinds, WithoutAnyIdTheImportAsksForANameOrHubId) {
    const std::string text = R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
        "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128,
        "vocab_size": 1000, "max_position_embeddings": 512})";
    try {
        (void)import_hf_config(text, "config.json", "");
        ADD_FAILURE() << "imported a model without a name";
    } catch (const ConfigError& e) {
        EXPECT_TRUE(contains(e.what(), "--hub-id ORG/NAME")) << e.what();
    }
}

} // namespace
