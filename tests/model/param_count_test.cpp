/// Parameter counts from the architecture, checked against sums written out by hand here
/// (never read from the catalog YAML) and against the publishers' figures.

#include "model/model_spec.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using gpuplan::model::AttentionKind;
using gpuplan::model::count_params;
using gpuplan::model::MlaSpec;
using gpuplan::model::MlpKind;
using gpuplan::model::ModelSpec;
using gpuplan::model::MoeSpec;
using gpuplan::model::NormKind;
using gpuplan::model::PositionKind;

/// A dense RoPE/RMSNorm/SwiGLU decoder (the Llama recipe).
ModelSpec llama_like(int layers, int hidden, int heads, int kv_heads, int ffn, int vocab) {
    ModelSpec m;
    m.name = "test";
    m.family = "llama";
    m.layers = layers;
    m.hidden_size = hidden;
    m.heads = heads;
    m.kv_heads = kv_heads;
    m.head_dim = hidden / heads;
    m.ffn_size = ffn;
    m.vocab_size = vocab;
    m.max_context = 4096;
    m.attention = kv_heads == heads ? AttentionKind::Mha : AttentionKind::Gqa;
    return m;
}

ModelSpec deepseek_v3() {
    ModelSpec m = llama_like(61, 7168, 128, 128, 18432, 129280);
    m.name = "deepseek-v3";
    m.head_dim = 192;
    m.max_context = 163840;
    m.attention = AttentionKind::Mla;
    m.mla = MlaSpec{1536, 512, 128, 64, 128};
    m.moe = MoeSpec{256, 8, 1, 2048, 3};
    return m;
}

TEST(ParamCount, Llama2_7bIsExact) {
    const ModelSpec m = llama_like(32, 4096, 32, 32, 11008, 32000);
    const auto c = count_params(m);
    const std::int64_t per_layer = 4LL * 4096 * 4096    // Q, K, V, O
                                   + 3LL * 4096 * 11008 // gate, up, down
                                   + 2LL * 4096;        // two RMSNorms
    const std::int64_t expected = 32 * per_layer + 2LL * 32000 * 4096 + 4096;
    EXPECT_EQ(expected, 6'738'415'616LL);
    EXPECT_EQ(c.total, static_cast<double>(expected));
    EXPECT_EQ(c.active, c.total);
    EXPECT_EQ(c.embedding, 32000.0 * 4096);
    EXPECT_EQ(c.lm_head, 32000.0 * 4096);
    EXPECT_EQ(c.per_layer_attention, 4.0 * 4096 * 4096);
}

TEST(ParamCount, GroupedQueryAttentionShrinksKAndV) {
    // Llama-3.1-70B: 64 query heads share 8 KV heads of 128.
    const ModelSpec m = llama_like(80, 8192, 64, 8, 28672, 128256);
    const auto c = count_params(m);
    const std::int64_t attention = 2LL * 8192 * 8192 + 2LL * 8192 * (8 * 128);
    const std::int64_t per_layer = attention + 3LL * 8192 * 28672 + 2LL * 8192;
    const std::int64_t expected = 80 * per_layer + 2LL * 128256 * 8192 + 8192;
    EXPECT_EQ(c.per_layer_attention, static_cast<double>(attention));
    EXPECT_EQ(c.total, static_cast<double>(expected));
    EXPECT_NEAR(c.total, 70.55e9, 0.01e9);
    EXPECT_NEAR(c.total, 70.6e9, 0.01 * 70.6e9); // Meta's model card
}

TEST(ParamCount, TiedEmbeddingsHaveNoLmHead) {
    // Llama-3.2-1B: head_dim 64, tie_word_embeddings true.
    ModelSpec m = llama_like(16, 2048, 32, 8, 8192, 128256);
    m.tied_embeddings = true;
    const auto c = count_params(m);
    const std::int64_t per_layer =
        2LL * 2048 * 2048 + 2LL * 2048 * 512 + 3LL * 2048 * 8192 + 2LL * 2048;
    EXPECT_EQ(c.lm_head, 0.0);
    EXPECT_EQ(c.total, static_cast<double>(16 * per_layer + 128256LL * 2048 + 2048));
    EXPECT_NEAR(c.total, 1.23e9, 0.01 * 1.23e9);
}

TEST(ParamCount, QkvBiasAddsQueryAndKeyValueWidths) {
    // Qwen2.5-7B: 28 heads, 4 KV heads of 128, biases on Q, K, V (not O).
    ModelSpec m = llama_like(28, 3584, 28, 4, 18944, 152064);
    m.max_context = 131072;
    const double without = count_params(m).per_layer_attention;
    m.qkv_bias = true;
    const auto c = count_params(m);
    EXPECT_EQ(c.per_layer_attention - without, 3584.0 + 2 * 512);
    const std::int64_t per_layer =
        2LL * 3584 * 3584 + 2LL * 3584 * 512 + (3584 + 2 * 512) + 3LL * 3584 * 18944 + 2LL * 3584;
    EXPECT_EQ(c.total, static_cast<double>(28 * per_layer + 2LL * 152064 * 3584 + 3584));
    EXPECT_NEAR(c.total, 7.61e9, 0.01 * 7.61e9);
}

TEST(ParamCount, QkNormAddsTwoHeadDimVectorsPerLayer) {
    // Qwen3-8B: head_dim 128 is set explicitly, as in its config.
    ModelSpec m = llama_like(36, 4096, 32, 8, 12288, 151936);
    const double without = count_params(m).total;
    m.qk_norm = true;
    const auto c = count_params(m);
    EXPECT_EQ(c.total - without, 36.0 * 2 * 128);
    EXPECT_NEAR(c.total, 8.2e9, 0.01 * 8.2e9);
}

TEST(ParamCount, HeadDimIndependentOfHiddenSizeAndFourNorms) {
    // Gemma-2-9B: 16 heads x 256 = 4096 != hidden 3584; pre and post norms on both sublayers.
    ModelSpec m = llama_like(42, 3584, 16, 8, 14336, 256000);
    m.head_dim = 256;
    m.tied_embeddings = true;
    m.norms_per_layer = 4;
    const auto c = count_params(m);
    const std::int64_t attention = 2LL * 3584 * 4096 + 2LL * 3584 * 2048;
    const std::int64_t per_layer = attention + 3LL * 3584 * 14336 + 4LL * 3584;
    EXPECT_EQ(c.per_layer_attention, static_cast<double>(attention));
    EXPECT_EQ(c.total, static_cast<double>(42 * per_layer + 256000LL * 3584 + 3584));
    EXPECT_NEAR(c.total, 9.24e9, 0.01 * 9.24e9);
}

TEST(ParamCount, Gpt3LearnedPositionsLayerNormPlainMlpAndBiases) {
    ModelSpec m = llama_like(96, 12288, 96, 96, 49152, 50257);
    m.max_context = 2048;
    m.mlp = MlpKind::Plain;
    m.norm = NormKind::LayerNorm;
    m.position = PositionKind::Learned;
    m.linear_bias = true;
    m.tied_embeddings = true;
    const auto c = count_params(m);
    const std::int64_t h = 12288;
    const std::int64_t attention = 4 * h * h + 4 * h;             // QKV and O, with biases
    const std::int64_t mlp = 2 * h * (4 * h) + 4 * h + h;         // up, down, with biases
    const std::int64_t per_layer = attention + mlp + 2 * (2 * h); // two LayerNorms (w, b)
    const std::int64_t embedding = 50257 * h + 2048 * h;          // tokens + positions
    EXPECT_EQ(c.embedding, static_cast<double>(embedding));
    EXPECT_EQ(c.per_layer_attention, static_cast<double>(attention));
    EXPECT_EQ(c.total, static_cast<double>(96 * per_layer + embedding + 2 * h));
    EXPECT_NEAR(c.total, 175e9, 0.01 * 175e9);
}

TEST(ParamCount, MoeActiveCountsOnlyTopKExperts) {
    // Mixtral-8x7B: 8 experts of 14336, top-2, on all 32 layers.
    ModelSpec m = llama_like(32, 4096, 32, 8, 14336, 32000);
    m.moe = MoeSpec{8, 2, 0, 14336, 0};
    const auto c = count_params(m);
    const std::int64_t attention = 2LL * 4096 * 4096 + 2LL * 4096 * 1024;
    const std::int64_t expert = 3LL * 4096 * 14336;
    const std::int64_t router = 4096LL * 8;
    const std::int64_t outside = 2LL * 32000 * 4096 + 4096;
    const std::int64_t shared_part = attention + router + 2LL * 4096;
    EXPECT_EQ(c.total, static_cast<double>(32 * (shared_part + 8 * expert) + outside));
    EXPECT_EQ(c.active, static_cast<double>(32 * (shared_part + 2 * expert) + outside));
    EXPECT_LT(c.active, c.total);
    EXPECT_NEAR(c.total, 46.7e9, 0.01 * 46.7e9);  // Mistral AI: 46.7B total
    EXPECT_NEAR(c.active, 12.9e9, 0.01 * 12.9e9); // 12.9B per token
}

TEST(ParamCount, MlaAttentionMatchesDeepSeekV3Modules) {
    const auto c = count_params(deepseek_v3());
    const std::int64_t h = 7168;
    const std::int64_t q = h * 1536 + 1536 + 1536LL * 128 * (128 + 64);       // q_a, norm, q_b
    const std::int64_t kv = h * (512 + 64) + 512 + 512LL * 128 * (128 + 128); // kv_a, norm, kv_b
    const std::int64_t o = 128LL * 128 * h;
    EXPECT_EQ(c.per_layer_attention, static_cast<double>(q + kv + o));
}

TEST(ParamCount, DeepSeekV3TotalAndActiveMatchPublished) {
    const auto c = count_params(deepseek_v3());
    const std::int64_t h = 7168;
    const std::int64_t attention =
        h * 1536 + 1536 + 1536LL * 128 * 192 + h * 576 + 512 + 512LL * 128 * 256 + 128LL * 128 * h;
    const std::int64_t expert = 3 * h * 2048;
    const std::int64_t layer_base = attention + 2 * h;
    const std::int64_t dense = 3 * (layer_base + 3 * h * 18432);
    const std::int64_t moe_total = 58 * (layer_base + h * 256 + 257 * expert);
    const std::int64_t moe_active = 58 * (layer_base + h * 256 + 9 * expert);
    const std::int64_t outside = 2LL * 129280 * h + h;
    EXPECT_EQ(c.total, static_cast<double>(dense + moe_total + outside));
    EXPECT_EQ(c.active, static_cast<double>(dense + moe_active + outside));
    // DeepSeek: 671B total, main model without the MTP module.
    EXPECT_NEAR(c.total, 671e9, 0.01 * 671e9);
    // DeepSeek's README_WEIGHTS.md: 36.6B activated, counting the LM head but not the input
    // embedding (a lookup); the headline "37B" rounds that. Ours includes the embedding.
    EXPECT_NEAR(c.active - c.embedding, 36.6e9, 0.01 * 36.6e9);
}

TEST(ParamCount, MlaWithoutQueryCompressionUsesPlainQProjection) {
    ModelSpec m = deepseek_v3();
    const double compressed = count_params(m).per_layer_attention;
    m.mla->q_lora_rank = 0;
    const double plain = count_params(m).per_layer_attention;
    EXPECT_EQ(compressed - plain, 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 - 7168.0 * 128 * 192);
}

} // namespace
