// KV offload tiers in the simulator: LRU demotion between the tiers on a hand-checked case, the
// load time of a block, the block manager's eviction hook, and whole runs with and without them.
#include "sim/block_manager.hpp"
#include "sim/kv_tiers.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;
using test::set_kv_pool;
using Where = KvTierCache::Where;

// Host of 2 blocks over NVMe of 2, blocks of 1 MB, host at 10 GB/s and NVMe at 2 GB/s.
// Demoting 1..5 in order: host keeps the two most recent, NVMe the two before, 1 is dropped.
TEST(KvTierCache, DemotesLeastRecentlyUsedDownTheTiers) {
    KvOffloadResult st;
    KvTierCache t({2, 10e9}, {2, 2e9}, 1e6, st);
    t.demote(1);
    t.demote(2);
    t.demote(3); // host full: 1 (its LRU) goes to NVMe
    EXPECT_EQ(t.find(1), Where::Nvme);
    EXPECT_EQ(t.find(2), Where::Host);
    EXPECT_EQ(t.find(3), Where::Host);
    t.demote(4); // 2 → NVMe
    t.demote(5); // 3 → NVMe, NVMe full: 1 dropped
    EXPECT_EQ(t.find(1), Where::None);
    EXPECT_EQ(t.find(2), Where::Nvme);
    EXPECT_EQ(t.find(3), Where::Nvme);
    EXPECT_EQ(t.find(4), Where::Host);
    EXPECT_EQ(t.find(5), Where::Host);
    EXPECT_EQ(st.demoted_to_host, 5);
    EXPECT_EQ(st.demoted_to_nvme, 3);
    EXPECT_EQ(st.dropped, 1);
    // Loads: 1 MB ÷ 10 GB/s = 100 µs from host, ÷ 2 GB/s = 500 µs from NVMe; the block leaves
    // its tier.
    EXPECT_DOUBLE_EQ(t.load(4), 1e6 / 10e9);
    EXPECT_DOUBLE_EQ(t.load(2), 1e6 / 2e9);
    EXPECT_DOUBLE_EQ(t.load(2), 0.0);
    EXPECT_EQ(t.find(4), Where::None);
    EXPECT_EQ(t.host_blocks(), 1);
    EXPECT_EQ(t.nvme_blocks(), 1);
    EXPECT_EQ(st.host_loaded_blocks, 1);
    EXPECT_EQ(st.nvme_loaded_blocks, 1);
    EXPECT_DOUBLE_EQ(st.host_load_time.si() + st.nvme_load_time.si(), 1e6 / 10e9 + 1e6 / 2e9);
    // Demoting 6 now fills host memory again without pushing anything down.
    t.demote(6);
    EXPECT_EQ(st.demoted_to_nvme, 3);
    // Host-less tiers demote straight to NVMe.
    KvOffloadResult st2;
    KvTierCache n({0, 1}, {1, 2e9}, 1e6, st2);
    n.demote(7);
    n.demote(8);
    EXPECT_EQ(n.find(7), Where::None);
    EXPECT_EQ(n.find(8), Where::Nvme);
    EXPECT_EQ(st2.dropped, 1);
}

// The pool demotes exactly the cached blocks it evicts, least recently freed first.
TEST(KvTierCache, BlockManagerDemotesWhatItEvicts) {
    KvOffloadResult st;
    KvTierCache t({4, 1e9}, {0, 1e9}, 1.0, st);
    BlockManager b(2, true);
    b.set_lower_tiers(&t);
    const std::int32_t x = b.allocate();
    const std::int32_t y = b.allocate();
    b.insert(11, x);
    b.insert(22, y);
    b.release(y); // freed first: evicted first
    b.release(x);
    EXPECT_EQ(t.find(11), Where::None);
    (void)b.allocate();
    EXPECT_EQ(t.find(22), Where::Host);
    EXPECT_EQ(t.find(11), Where::None);
    (void)b.allocate();
    EXPECT_EQ(t.find(11), Where::Host);
    EXPECT_EQ(st.demoted_to_host, 2);
}

/// RAG over `groups` document sets of 1,024 tokens on one H100 with a 1 GiB KV pool (8,192
/// tokens): 64 own tokens and 16 output each.
model::Scenario rag(int groups, double pool_gib, int requests = 300) {
    model::Scenario s = llama8b_scenario(0, 0, 8.0, requests);
    model::RequestClass c;
    c.shared_prefix = 1024;
    c.prefix_groups = groups;
    c.input = model::LengthDistribution::fixed(64);
    c.output = model::LengthDistribution::fixed(16);
    s.workload.classes = {c};
    set_kv_pool(s, pool_gib);
    return s;
}

SimResult run(const model::Scenario& s) {
    SimResult r = simulate(s, SimOptions{});
    EXPECT_TRUE(r.ok);
    return r;
}

// Two document sets in a pool no run ever fills: nothing is evicted, so nothing reaches the
// tiers and the run is identical to the run without them (the block adds only its counters).
TEST(SimKvOffload, AWorkingSetTheGpuHoldsRunsIdentically) {
    model::Scenario s = rag(2, 4.0, 100);
    const SimResult plain = run(s);
    EXPECT_FALSE(plain.kv_offload.has_value());
    s.deployment.engine.kv_offload = model::KvOffloadConfig{};
    SimResult with = run(s);
    ASSERT_TRUE(with.kv_offload.has_value());
    EXPECT_EQ(with.kv_offload->demoted_to_host, 0);
    EXPECT_EQ(with.kv_offload->host_hit_tokens, 0);
    with.kv_offload.reset();
    EXPECT_TRUE(with == plain);
}

// 32 document sets (32,768 tokens) against 8,192 tokens of GPU KV: with 4 GiB of host memory
// behind it (32,768 more tokens) the document sets come back from host memory instead of being
// recomputed: the hit rate rises and TTFT falls.
TEST(SimKvOffload, HostTierServesTheWorkingSetTheGpuCannotHold) {
    model::Scenario s = rag(32, 1.0);
    const SimResult plain = run(s);
    model::KvOffloadConfig c;
    c.host = Bytes(4.0 * kGiB);
    c.host_bandwidth = BytesPerSecond(25e9);
    s.deployment.engine.kv_offload = c;
    const SimResult with = run(s);
    ASSERT_TRUE(with.kv_offload.has_value());
    const KvOffloadResult& k = *with.kv_offload;
    EXPECT_GT(k.host_hit_tokens, 0);
    EXPECT_EQ(k.nvme_hit_tokens, 0);
    EXPECT_GT(with.prefix_hit_rate, plain.prefix_hit_rate + 0.2);
    EXPECT_LT(with.overall.ttft.mean, plain.overall.ttft.mean);
    // Every loaded block took its bytes over the host bandwidth: 16 tokens × 128 KiB ÷ 25 GB/s.
    EXPECT_NEAR(k.host_load_time.si(),
                static_cast<double>(k.host_loaded_blocks) * 16 * 131072 / 25e9, 1e-9);
    EXPECT_EQ(k.gpu_hit_tokens + k.host_hit_tokens, with.overall.cached_tokens);
}

} // namespace
} // namespace gpuplan::sim
