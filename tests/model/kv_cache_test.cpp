#include "model/kv_cache.hpp"

#include <gtest/gtest.h>

using namespace gpuplan;
using namespace gpuplan::model;

namespace {
ModelSpec dense(int layers, int heads, int kv_heads, int head_dim) {
    ModelSpec m;
    m.name = "t";
    m.layers = layers;
    m.heads = heads;
    m.kv_heads = kv_heads;
    m.head_dim = head_dim;
    m.attention = kv_heads == heads ? AttentionKind::Mha : AttentionKind::Gqa;
    return m;
}
const Precision kBf16 = parse_precision("bf16");
} // namespace

// docs/domain.md §3 checked values.
TEST(KvCache, PerTokenMatchesTheDomainBrief) {
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(dense(32, 32, 32, 128), kBf16).si(),
                     512 * 1024); // Llama-2-7B
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(dense(32, 32, 8, 128), kBf16).si(),
                     128 * 1024); // Llama-3-8B
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(dense(28, 28, 4, 128), kBf16).si(),
                     56 * 1024); // Qwen2.5-7B
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(dense(80, 64, 8, 128), kBf16).si(),
                     327680); // Llama-3.1-70B
}

TEST(KvCache, SevenBAtFourKTimesEightIsSixteenGiB) {
    const ModelSpec llama2 = dense(32, 32, 32, 128);
    EXPECT_DOUBLE_EQ(8 * kv_bytes_per_sequence(llama2, kBf16, 4096).si(), 16.0 * kGiB);
    EXPECT_DOUBLE_EQ(8 * kv_bytes_per_sequence(llama2, kBf16, 32768).si(), 128.0 * kGiB);
}

TEST(KvCache, MlaCachesTheLatent) {
    ModelSpec m = dense(61, 128, 128, 128);
    m.attention = AttentionKind::Mla;
    m.mla = MlaSpec{1536, 512, 128, 64, 128};
    // DeepSeek-V3: 61 × (512 + 64) × 2 B = 70,272 B per token.
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, kBf16).si(), 61.0 * 576 * 2);
}

TEST(KvCache, SlidingWindowLayersStopGrowing) {
    ModelSpec m = dense(42, 16, 8, 256);
    m.sliding_window = SlidingWindowSpec{4096, 21};
    const double per_layer = 2.0 * 8 * 256 * 2;
    EXPECT_DOUBLE_EQ(kv_bytes_per_sequence(m, kBf16, 8192).si(),
                     per_layer * (21 * 8192 + 21 * 4096));
    EXPECT_DOUBLE_EQ(kv_bytes_per_sequence(m, kBf16, 1000).si(), per_layer * 42 * 1000);
}

TEST(KvCache, Fp8HalvesIt) {
    const ModelSpec m = dense(32, 32, 8, 128);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, parse_precision("fp8")) / kv_bytes_per_token(m, kBf16),
                     0.5);
}
