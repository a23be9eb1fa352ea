// KV offload tiers in the analytic model: the load time, the LRU split over the tiers, the
// defaults, the validation, and estimate_serving with and without the block.
#include "model/error.hpp"
#include "model/kv_offload.hpp"
#include "model/serving.hpp"
#include "tests/model/fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuplan::model {
namespace {

constexpr double kGiBytes = 1024.0 * 1024.0 * 1024.0;

// 2 GiB over 25 GB/s: 2 × 1,073,741,824 ÷ 25e9 = 0.08589934592 s.
TEST(KvOffload, LoadTimeIsBytesOverBandwidth) {
    EXPECT_DOUBLE_EQ(kv_load_time(Bytes(2 * kGiBytes), BytesPerSecond(25e9)).si(), 0.08589934592);
    // 1,000 blocks of 16 tokens at 128 KiB per token from NVMe at 7 GB/s: 2,097,152,000 B.
    EXPECT_DOUBLE_EQ(kv_load_time(Bytes(1000 * 16 * 131072.0), BytesPerSecond(7e9)).si(),
                     2097152000.0 / 7e9);
}

// One LRU stack: a working set of 100 over GPU 30, host 50, NVMe 40 puts 30 % on the GPU, 50 %
// in host memory, the last 20 % on NVMe; with host 20 and no NVMe half is recomputed.
TEST(KvOffload, LruSplitStacksTheTiers) {
    const TierHitSplit a = lru_tier_hits(100, 30, 50, 40);
    EXPECT_DOUBLE_EQ(a.gpu, 0.3);
    EXPECT_DOUBLE_EQ(a.host, 0.5);
    EXPECT_DOUBLE_EQ(a.nvme, 0.2);
    EXPECT_DOUBLE_EQ(a.miss, 0.0);
    const TierHitSplit b = lru_tier_hits(100, 30, 20, 0);
    EXPECT_DOUBLE_EQ(b.gpu, 0.3);
    EXPECT_DOUBLE_EQ(b.host, 0.2);
    EXPECT_DOUBLE_EQ(b.nvme, 0.0);
    EXPECT_DOUBLE_EQ(b.miss, 0.5);
    const TierHitSplit fits = lru_tier_hits(100, 150, 50, 0);
    EXPECT_DOUBLE_EQ(fits.gpu, 1.0);
    EXPECT_DOUBLE_EQ(fits.host, 0.0);
    EXPECT_EQ(lru_tier_hits(0, 10, 10, 10), TierHitSplit{});
}

TEST(KvOffload, DefaultsAndValidation) {
    const KvTiers t = resolve_kv_offload(KvOffloadConfig{}, Bytes(10 * kGiBytes), std::nullopt);
    EXPECT_DOUBLE_EQ(t.host.capacity.si(), 20 * kGiBytes); // SGLang's hicache_ratio 2
    EXPECT_DOUBLE_EQ(t.host.bandwidth.si(), 25e9);
    EXPECT_DOUBLE_EQ(t.nvme.capacity.si(), 0);
    EXPECT_DOUBLE_EQ(t.nvme.bandwidth.si(), 7e9);
    KvOffloadConfig c;
    c.host_link = BytesPerSecond(64e9);
    EXPECT_DOUBLE_EQ(resolve_kv_offload(c, Bytes(1), c.host_link).host.bandwidth.si(), 64e9);
    c.nvme = Bytes(-1);
    EXPECT_THROW(validate(c), InvalidArgument);
    c.nvme.reset();
    c.host = Bytes(0);
    EXPECT_THROW(validate(c), InvalidArgument); // no tier at all
    c.nvme = Bytes(1e12);
    EXPECT_NO_THROW(validate(c)); // NVMe alone
    c.nvme_bandwidth = BytesPerSecond(0);
    EXPECT_THROW(validate(c), InvalidArgument);
}

// Llama-3-8B bf16 on one H100 with a 1 GiB KV pool (8,192 tokens at 128 KiB per token), four
// requests at once of 16 document sets × 2,000 shared tokens + 100 own, 50 output.
Deployment small_pool() {
    Deployment d = test::deploy(test::llama3_8b(), test::h100());
    d.engine.max_model_len = 8192;
    d.engine.kv_cache_memory = Bytes(kGiBytes);
    return d;
}

Workload rag(int groups) {
    Workload w;
    RequestClass c;
    c.shared_prefix = 2000;
    c.prefix_groups = groups;
    c.input = LengthDistribution::fixed(100);
    c.output = LengthDistribution::fixed(50);
    w.classes = {c};
    w.concurrency = 4;
    return w;
}

// A working set the GPU holds: the tiers change nothing but add their figures.
TEST(KvOffload, EstimateUnchangedWhenTheWorkingSetFitsTheGpu) {
    Deployment d = small_pool();
    const ServingEstimate plain = estimate_serving(d, rag(2), default_profile());
    d.engine.kv_offload = KvOffloadConfig{};
    ServingEstimate with = estimate_serving(d, rag(2), default_profile());
    ASSERT_TRUE(with.kv_offload.has_value());
    EXPECT_DOUBLE_EQ(with.kv_offload->split.gpu, 1.0);
    EXPECT_DOUBLE_EQ(with.kv_offload->load_time.si(), 0.0);
    with.kv_offload.reset();
    EXPECT_TRUE(with == plain);
}

// 32,000 shared tokens against 8,192 − running × 125 on the GPU and 8,192 in host memory: the
// host's share loads at 25 GB/s, and TTFT is the lone prefill at the hits plus that load.
TEST(KvOffload, EstimateSplitsTheSharedPrefixAndAddsTheLoadTime) {
    Deployment d = small_pool();
    KvOffloadConfig c;
    c.host = Bytes(kGiBytes);
    c.host_bandwidth = BytesPerSecond(25e9);
    d.engine.kv_offload = c;
    const ServingEstimate e = estimate_serving(d, rag(16), default_profile());
    ASSERT_TRUE(e.kv_offload.has_value());
    const KvOffloadFigures& f = *e.kv_offload;
    EXPECT_DOUBLE_EQ(f.working_set, 32000);
    EXPECT_DOUBLE_EQ(f.host_tokens, 8192);
    const double gpu = 8192.0 - e.running * 125.0;
    EXPECT_DOUBLE_EQ(f.gpu_cache_tokens, gpu);
    EXPECT_DOUBLE_EQ(f.split.gpu, gpu / 32000);
    EXPECT_DOUBLE_EQ(f.split.host, 8192.0 / 32000);
    const double load = 2000 * (8192.0 / 32000) * 131072 / 25e9;
    EXPECT_NEAR(f.load_time.si(), load, 1e-12);
    const int cached = static_cast<int>(std::lround(2000 * (gpu + 8192) / 32000));
    const StepCostModel m(d, default_profile());
    EXPECT_NEAR(e.ttft.si(), ttft(m, 2100, cached).si() + load, 1e-12);
    EXPECT_NEAR(f.ttft_without.si(),
                ttft(m, 2100, static_cast<int>(std::lround(2000 * gpu / 32000))).si(), 1e-12);
    EXPECT_LT(e.ttft, f.ttft_without);
    EXPECT_NEAR(f.hit_rate, cached / 2100.0, 1e-12);
}

} // namespace
} // namespace gpuplan::model
