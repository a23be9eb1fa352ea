/// Layer layout queries, validation messages and enum names of ModelSpec.

#include "model/model_spec.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using gpuplan::InvalidArgument;
using gpuplan::model::AttentionKind;
using gpuplan::model::MlaSpec;
using gpuplan::model::ModelSpec;
using gpuplan::model::MoeSpec;
using gpuplan::model::SlidingWindowSpec;

ModelSpec small_gqa() {
    ModelSpec m;
    m.name = "small";
    m.family = "llama";
    m.layers = 4;
    m.hidden_size = 256;
    m.heads = 8;
    m.kv_heads = 2;
    m.head_dim = 32;
    m.ffn_size = 1024;
    m.vocab_size = 1000;
    m.max_context = 2048;
    m.attention = AttentionKind::Gqa;
    return m;
}

/// The message of the InvalidArgument that validate throws, or "" when it throws nothing.
std::string validation_error(const ModelSpec& m) {
    try {
        gpuplan::model::validate(m, "models/x.yaml");
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "";
}

TEST(ModelSpec, LeadingLayersBeforeFirstDenseAreDense) {
    ModelSpec m = small_gqa();
    m.moe = MoeSpec{8, 2, 1, 128, 1};
    EXPECT_FALSE(gpuplan::model::is_moe_layer(m, 0));
    EXPECT_TRUE(gpuplan::model::is_moe_layer(m, 1));
    EXPECT_TRUE(gpuplan::model::is_moe_layer(m, 3));
    EXPECT_EQ(gpuplan::model::moe_layer_count(m), 3);
    EXPECT_THROW((void)gpuplan::model::is_moe_layer(m, 4), InvalidArgument);
}

TEST(ModelSpec, DenseModelHasNoMoeLayers) {
    const ModelSpec m = small_gqa();
    EXPECT_EQ(gpuplan::model::moe_layer_count(m), 0);
    EXPECT_FALSE(gpuplan::model::is_moe_layer(m, 0));
}

TEST(ModelSpec, ValidSpecsPass) {
    ModelSpec m = small_gqa();
    EXPECT_EQ(validation_error(m), "");
    m.moe = MoeSpec{8, 2, 0, 128, 0};
    m.sliding_window = SlidingWindowSpec{512, 2};
    EXPECT_EQ(validation_error(m), "");
    m.attention = AttentionKind::Mla;
    m.kv_heads = 8;
    m.mla = MlaSpec{0, 64, 32, 16, 32};
    EXPECT_EQ(validation_error(m), "");
}

TEST(ModelSpec, KvHeadsMustDivideHeads) {
    ModelSpec m = small_gqa();
    m.kv_heads = 3;
    EXPECT_EQ(validation_error(m),
              "models/x.yaml: kv_heads: 3 does not divide heads (8); each key/value head serves "
              "a whole group of query heads, so use a divisor of heads");
}

TEST(ModelSpec, AttentionKindMustMatchKvHeads) {
    ModelSpec m = small_gqa();
    m.attention = AttentionKind::Mha;
    EXPECT_NE(validation_error(m).find("kv_heads: 2 differs from heads (8) but attention is mha"),
              std::string::npos);
    m.attention = AttentionKind::Gqa;
    m.kv_heads = 8;
    EXPECT_NE(validation_error(m).find("set attention: mha"), std::string::npos);
}

TEST(ModelSpec, TopKAboveExpertCountIsRejected) {
    ModelSpec m = small_gqa();
    m.moe = MoeSpec{8, 9, 0, 128, 0};
    EXPECT_EQ(validation_error(m),
              "models/x.yaml: moe.active_experts: 9 is outside 1..8; set the top-k routed experts "
              "per token, at most moe.experts");
}

TEST(ModelSpec, MlaNeedsItsRanks) {
    ModelSpec m = small_gqa();
    m.attention = AttentionKind::Mla;
    EXPECT_NE(validation_error(m).find("models/x.yaml: mla: is missing but attention is mla"),
              std::string::npos);
    m.attention = AttentionKind::Gqa;
    m.mla = MlaSpec{0, 64, 32, 16, 32};
    EXPECT_NE(validation_error(m).find("mla: is given but attention is gqa"), std::string::npos);
}

TEST(ModelSpec, ZeroSizesAreRejected) {
    ModelSpec m = small_gqa();
    m.hidden_size = 0;
    EXPECT_NE(validation_error(m).find("hidden_size: 0 is not a positive count"),
              std::string::npos);
    m = small_gqa();
    m.sliding_window = SlidingWindowSpec{512, 5};
    EXPECT_NE(validation_error(m).find("sliding_window.windowed_layers: 5 is outside 1..4"),
              std::string::npos);
}

TEST(ModelSpec, AttentionKindNames) {
    EXPECT_STREQ(gpuplan::model::to_string(AttentionKind::Mha), "mha");
    EXPECT_STREQ(gpuplan::model::to_string(AttentionKind::Gqa), "gqa");
    EXPECT_STREQ(gpuplan::model::to_string(AttentionKind::Mqa), "mqa");
    EXPECT_STREQ(gpuplan::model::to_string(AttentionKind::Mla), "mla");
}

} // namespace
