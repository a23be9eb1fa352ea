// Multi-LoRA serving in the simulator (sim/detail/lora_cache.hpp): Zipf sampling frequencies,
// a hand-checked LRU residency sequence, vLLM's max_loras admission limit on a hand-built
// state, and whole runs whose loads are counted by hand.
#include "model/lora.hpp"
#include "sim/detail/lora_cache.hpp"
#include "sim/detail/metrics.hpp"
#include "sim/detail/request.hpp"
#include "sim/detail/scheduler_policy.hpp"
#include "sim/detail/scheduler_state.hpp"
#include "sim/rng.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

namespace gpuplan::sim {
namespace {

using detail::LoraCache;
using detail::LoraSetup;
using detail::Request;

LoraSetup setup_of(const model::LoraServingConfig& c, double gpu_s = 1.0, double disk_s = 10.0) {
    LoraSetup s;
    s.adapters = c.adapters;
    s.max_loras = c.max_loras;
    s.max_cpu_loras = model::max_cpu_loras(c);
    s.gpu_load_s = gpu_s;
    s.disk_load_s = disk_s;
    double acc = 0;
    for (const double p : model::lora_popularity(c)) {
        acc += p;
        s.cdf.push_back(acc);
    }
    return s;
}

// Zipf s = 1 over 5 adapters: p_i = (1/i) / H_5, H_5 = 137/60. 200,000 draws: each frequency
// within 0.005 (the largest standard error is sqrt(0.44 × 0.56 / 200000) = 0.0011).
TEST(LoraSim, ZipfSamplingFrequencies) {
    model::LoraServingConfig c;
    c.adapters = 5;
    c.popularity = model::LoraPopularity::Zipf;
    c.zipf_s = 1.0;
    const LoraSetup s = setup_of(c);
    Rng rng(42);
    std::vector<int> count(5, 0);
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        ++count[static_cast<std::size_t>(detail::sample_adapter(s, rng))];
    }
    for (int i = 0; i < 5; ++i) {
        const double expected = (1.0 / (i + 1)) / (137.0 / 60.0);
        EXPECT_NEAR(count[static_cast<std::size_t>(i)] / double(n), expected, 0.005) << i;
    }
}

// Two GPU slots, three host slots, steps each running one newly admitted request of adapters
// A B A C B (nothing running between steps, so nothing is pinned):
//   A: GPU miss, host miss (disk)        GPU {A}      host {A}
//   B: GPU miss, host miss (disk)        GPU {A B}    host {A B}
//   A: hit
//   C: GPU miss (evicts B, the LRU), host miss (disk)   GPU {A C}  host {A B C}
//   B: GPU miss (evicts A), host hit     GPU {C B}
// 5 requests, 1 hit, 4 loads, 3 from disk: 4 × 1 s + 3 × 10 s of loading.
TEST(LoraSim, LruResidencyByHand) {
    model::LoraServingConfig c;
    c.adapters = 3;
    c.max_loras = 2;
    c.max_cpu_loras = 3;
    const LoraSetup s = setup_of(c);
    LoraCache cache(s);
    detail::RequestPool pool;
    const std::vector<std::uint32_t> running;
    const int order[] = {0, 1, 0, 2, 1};
    Tick now = 0;
    for (const int a : order) {
        const std::uint32_t slot = pool.acquire();
        Request& r = pool[slot];
        r.adapter = a;
        r.in_batch = true;
        r.first_scheduled = now;
        int distinct = 0;
        (void)cache.step({slot}, running, pool, now, distinct);
        EXPECT_EQ(distinct, 1);
        pool.release(slot);
        now += 10;
    }
    const detail::LoraCounts& k = cache.counts();
    EXPECT_EQ(k.requests, 5);
    EXPECT_EQ(k.hits, 1);
    EXPECT_EQ(k.loads, 4);
    EXPECT_EQ(k.disk_loads, 3);
    EXPECT_DOUBLE_EQ(k.load_s, 4 * 1.0 + 3 * 10.0);
    EXPECT_TRUE(cache.resident(2));
    EXPECT_TRUE(cache.resident(1));
    EXPECT_FALSE(cache.resident(0));
}

// A running request's adapter is never evicted: with A running, loading C evicts B although A
// was used earlier.
TEST(LoraSim, RunningAdaptersStayResident) {
    model::LoraServingConfig c;
    c.adapters = 3;
    c.max_loras = 2;
    const LoraSetup s = setup_of(c);
    LoraCache cache(s);
    detail::RequestPool pool;
    const std::uint32_t a = pool.acquire();
    pool[a].adapter = 0;
    pool[a].in_batch = true;
    const std::uint32_t b = pool.acquire();
    pool[b].adapter = 1;
    pool[b].in_batch = true;
    int distinct = 0;
    (void)cache.step({a}, {a}, pool, 0, distinct);
    (void)cache.step({b}, {a}, pool, 1, distinct);
    const std::uint32_t cc = pool.acquire();
    pool[cc].adapter = 2;
    pool[cc].in_batch = true;
    (void)cache.step({cc}, {a, cc}, pool, 2, distinct);
    EXPECT_TRUE(cache.resident(0));
    EXPECT_FALSE(cache.resident(1));
    EXPECT_TRUE(cache.resident(2));
}

// vLLM's max_loras limit: with max_loras 1 and a request of adapter 0 running, a waiting
// request of adapter 1 is skipped and the one behind it, of adapter 0, is admitted.
TEST(LoraSim, MaxLorasHoldsBackAThirdAdapter) {
    model::LoraServingConfig c;
    c.adapters = 2;
    c.max_loras = 1;
    const LoraSetup s = setup_of(c);
    detail::ReplicaConfig rc;
    rc.max_num_batched_tokens = 1000;
    rc.block_size = 16;
    rc.kv_blocks = 100;
    rc.prefix_caching = false;
    rc.lora = &s;
    detail::Metrics metrics({detail::ClassSlo{}}, 1, false, false, 0);
    detail::RequestPool pool;
    const auto policy = detail::make_scheduler_policy(rc);
    detail::SchedulerState state(pool, metrics, rc, policy->uses_prefix_cache());
    std::vector<std::uint32_t> slots;
    for (const int a : {0, 1, 0}) {
        const std::uint32_t slot = pool.acquire();
        Request& r = pool[slot];
        r.id = slots.size();
        r.stream_id = r.id + 1;
        r.prompt = 32;
        r.output = 4;
        r.adapter = a;
        state.enqueue(slot, 0);
        slots.push_back(slot);
    }
    state.begin_step(0);
    state.begin_attempt();
    policy->form(state);
    std::vector<std::uint32_t> batch;
    for (const std::uint32_t slot : state.batch()) {
        if (pool[slot].in_batch) {
            batch.push_back(slot);
        }
    }
    EXPECT_EQ(batch, (std::vector<std::uint32_t>{slots[0], slots[2]}));
    EXPECT_EQ(state.waiting(), 1);
    EXPECT_EQ(pool[slots[1]].state, detail::ReqState::Waiting);
}

// One adapter, one slot: the first request loads it from disk (disk + host-to-GPU time, its
// bytes over each bandwidth), every later one hits.
TEST(LoraSim, OneAdapterLoadsOnce) {
    model::Scenario s = test::llama8b_scenario(512, 64, 4.0, 50);
    model::LoraServingConfig c;
    c.adapters = 1;
    c.rank = 16;
    c.load_bandwidth = BytesPerSecond(25e9);
    c.disk_bandwidth = BytesPerSecond(2e9);
    s.deployment.engine.lora = c;
    const SimResult r = simulate(s);
    ASSERT_TRUE(r.ok);
    ASSERT_TRUE(r.lora.has_value());
    EXPECT_EQ(r.lora->requests, 50);
    EXPECT_EQ(r.lora->hits, 49);
    EXPECT_EQ(r.lora->loads, 1);
    EXPECT_EQ(r.lora->disk_loads, 1);
    // Llama-3-8B rank 16 on q, k, v, o: 27,262,976 bytes.
    EXPECT_NEAR(r.lora->load_time.si(), 27262976.0 / 25e9 + 27262976.0 / 2e9, 1e-12);
    EXPECT_DOUBLE_EQ(r.lora->adapters_per_step, 1.0);
}

// Without the block nothing is sampled or reported and the run is the same run; with it the
// steps cost more (the LoRA kernels), so the run differs.
TEST(LoraSim, OffLeavesTheRunAlone) {
    const model::Scenario base = test::llama8b_scenario(512, 64, 4.0, 60);
    const SimResult a = simulate(base);
    const SimResult b = simulate(base);
    EXPECT_FALSE(a.lora.has_value());
    EXPECT_EQ(a.overall.ttft.mean, b.overall.ttft.mean);
    model::Scenario on = base;
    on.deployment.engine.lora = model::LoraServingConfig{};
    const SimResult c = simulate(on);
    ASSERT_TRUE(c.lora.has_value());
    EXPECT_GT(c.overall.tpot.mean, a.overall.tpot.mean);
}

// Adapter affinity: two replicas, eight adapters, two slots each. Sending each request where
// its adapter is resident loads fewer adapters than least-outstanding routing.
TEST(LoraSim, AffinityRoutingLoadsFewerAdapters) {
    model::Scenario s = test::llama8b_scenario(256, 32, 20.0, 400);
    s.deployment.par.dp = 2;
    model::LoraServingConfig c;
    c.adapters = 8;
    c.max_loras = 2;
    c.max_cpu_loras = 8;
    c.popularity = model::LoraPopularity::Zipf;
    c.zipf_s = 1.2;
    s.deployment.engine.lora = c;
    s.cluster.router = model::RouterPolicy::LeastOutstanding;
    const SimResult plain = simulate(s);
    s.cluster.router = model::RouterPolicy::AdapterAffinity;
    const SimResult affine = simulate(s);
    ASSERT_TRUE(plain.lora && affine.lora);
    EXPECT_LT(affine.lora->loads, plain.lora->loads);
    EXPECT_GT(affine.lora->hit_rate, plain.lora->hit_rate);
}

} // namespace
} // namespace gpuplan::sim
