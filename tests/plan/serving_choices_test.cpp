// KV offload tiers and LoRA slots as choices of the plan (plan/serving_choices.hpp): offload
// wins where the shared prefixes overflow the GPU's KV pool and makes no difference where they
// fit; more LoRA slots win where a Zipf tail of adapters keeps missing the scenario's slots.
#include "plan/serving_choices.hpp"

#include "tests/model/fixtures.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace gpuplan::plan {
namespace {

// examples/kv-offload-rag-llama8b.yaml's shape: one Llama-3-8B replica with 6 GiB of KV
// (49,152 tokens), `groups` document sets of 3,000 tokens, optionally 32 GiB of host tier.
model::Scenario rag(int groups, bool offload) {
    model::Scenario s = sim::test::llama8b_scenario(175, 150, 8.0, 480);
    sim::test::set_kv_pool(s, 6.0);
    s.seed = 5;
    model::RequestClass c;
    c.name = "rag";
    c.shared_prefix = 3000;
    c.prefix_groups = groups;
    c.input = model::LengthDistribution::fixed(175);
    c.output = model::LengthDistribution::fixed(150);
    c.ttft = Seconds(1.0);
    c.tpot = Seconds(0.06);
    s.workload.classes = {c};
    if (offload) {
        model::KvOffloadConfig k;
        k.host = Bytes(32.0 * kGiB);
        s.deployment.engine.kv_offload = k;
    }
    return s;
}

const ServingOption& named(const ServingChoice& c, const std::string& name) {
    const auto it = std::find_if(c.options.begin(), c.options.end(),
                                 [&](const ServingOption& o) { return o.name == name; });
    EXPECT_NE(it, c.options.end()) << name;
    return it != c.options.end() ? *it : c.options.front();
}

TEST(CompareKvOffload, OffloadWinsWhenThePrefixesOverflowTheGpuPool) {
    const ServingChoice c = compare_kv_offload(rag(48, true), sim::SimOptions{}, 2);
    ASSERT_TRUE(c.choice) << c.verdict;
    // off, host 1x, 2x, 4x (6, 12, 24 GiB) and the scenario's 32 GiB.
    ASSERT_EQ(c.options.size(), 5u);
    EXPECT_NE(c.chosen, "off") << c.verdict;
    const ServingOption& off = named(c, "off");
    const ServingOption& win = c.options.front();
    // 144,000 prefix tokens against 49,152: the GPU alone holds at most a third of them, and
    // 3,000 of each 3,175-token prompt are prefix, so off's hit rate is below 0.341 × 0.945.
    EXPECT_LT(off.prefix_hit_rate, 49152.0 / 144000 * 3000 / 3175);
    EXPECT_DOUBLE_EQ(off.host_hit_rate, 0.0);
    // A host tier of 4x or 32 GiB holds all 48 sets: every prefix but each set's first use
    // hits (48 first misses of 480 requests), 0.945 × (1 − 48/480) = 0.85, less the running
    // sequences' blocks.
    EXPECT_GT(win.prefix_hit_rate, 0.7);
    EXPECT_GT(win.host_hit_rate, 0.3);
    EXPECT_LT(win.ttft_at_p_s, off.ttft_at_p_s);
    EXPECT_NE(c.verdict.find(c.chosen + " wins over off"), std::string::npos) << c.verdict;
    EXPECT_NE(c.verdict.find("host"), std::string::npos) << c.verdict;
    EXPECT_NE(c.verdict.find("144000 shared-prefix tokens"), std::string::npos) << c.verdict;
}

TEST(CompareKvOffload, OffWhenThePrefixesFitInTheGpuPool) {
    // 4 sets of 3,000 tokens = 12,000 tokens against 49,152: the tiers never serve a prefix.
    const ServingChoice c = compare_kv_offload(rag(4, false), sim::SimOptions{}, 2);
    ASSERT_TRUE(c.choice) << c.verdict;
    EXPECT_EQ(c.chosen, "off") << c.verdict;
    for (const auto& o : c.options) {
        EXPECT_DOUBLE_EQ(o.host_hit_rate, 0.0) << o.name;
    }
    EXPECT_TRUE(c.options.front().scenario);
    EXPECT_NE(c.verdict.find("off: no difference"), std::string::npos) << c.verdict;
    EXPECT_NE(c.verdict.find("the GPU holds them"), std::string::npos) << c.verdict;
}

TEST(CompareKvOffload, NoChoiceWithoutSharedPrefixesOrPrefixCaching) {
    model::Scenario s = sim::test::llama8b_scenario();
    const ServingChoice c = compare_kv_offload(s, sim::SimOptions{}, 2);
    EXPECT_FALSE(c.choice);
    EXPECT_EQ(c.chosen, "off");
    EXPECT_TRUE(c.options.empty());
    model::Scenario nocache = rag(48, true);
    nocache.deployment.engine.enable_prefix_caching = false;
    EXPECT_FALSE(compare_kv_offload(nocache, sim::SimOptions{}, 2).choice);
}

// examples/lora-llama8b-h100.yaml's shape on one replica: 200 rank-16 adapters on q/k/v/o,
// Zipf s = 1.1, 16 GPU slots and 64 in host memory.
model::Scenario lora(int max_loras) {
    model::Scenario s = sim::test::llama8b_scenario(1024, 256, 10.0, 600);
    model::LoraServingConfig c;
    c.adapters = 200;
    c.rank = 16;
    c.max_loras = max_loras;
    c.max_cpu_loras = 64;
    c.popularity = model::LoraPopularity::Zipf;
    c.zipf_s = 1.1;
    s.deployment.engine.lora = c;
    s.slo.ttft = Seconds(1.0);
    s.slo.tpot = Seconds(0.05);
    return s;
}

TEST(CompareMaxLoras, MoreSlotsWinOnAZipfTail) {
    const ServingChoice c = compare_max_loras(lora(16), sim::SimOptions{}, 2);
    ASSERT_TRUE(c.choice) << c.verdict;
    ASSERT_EQ(c.options.size(), 3u);
    const ServingOption& base = named(c, "max_loras 16");
    const ServingOption& most = named(c, "max_loras 64");
    EXPECT_TRUE(base.scenario);
    EXPECT_NE(c.chosen, "max_loras 16") << c.verdict;
    EXPECT_GT(c.options.front().lora_hit_rate, base.lora_hit_rate);
    EXPECT_LT(c.options.front().lora_loads, base.lora_loads);
    // One adapter on one GPU: rank 16 × (q 4096+4096, k and v 4096+1024, o 4096+4096) × 2
    // bytes × 32 layers = 27,262,976 bytes; 48 more slots take 48 × that = 9,984 tokens of
    // 128 KiB (to a block of 16).
    EXPECT_EQ(base.kv_tokens_lost, 0);
    EXPECT_LE(std::abs(most.kv_tokens_lost - 9984), 16);
    EXPECT_EQ(base.kv_tokens - most.kv_tokens, most.kv_tokens_lost);
    EXPECT_NE(c.verdict.find(c.chosen + " wins over max_loras 16"), std::string::npos) << c.verdict;
    EXPECT_NE(c.verdict.find("GPU adapter hit rate"), std::string::npos) << c.verdict;
    EXPECT_NE(c.verdict.find("KV tokens per replica"), std::string::npos) << c.verdict;
}

TEST(CompareMaxLoras, NoChoiceWithoutLoraOrWhenTheSlotsHoldEveryAdapter) {
    EXPECT_FALSE(compare_max_loras(sim::test::llama8b_scenario(), sim::SimOptions{}, 2).choice);
    model::Scenario all = lora(16);
    all.deployment.engine.lora->adapters = 8;
    const ServingChoice c = compare_max_loras(all, sim::SimOptions{}, 2);
    EXPECT_FALSE(c.choice);
    EXPECT_NE(c.verdict.find("hold all 8 adapters"), std::string::npos) << c.verdict;
}

// Speculative decoding's k: half, the scenario's and twice it with one mean acceptance rate;
// with per-position rates (measured for k positions) only fewer, the rates truncated.
TEST(CompareSpeculativeTokens, HalfOwnAndTwiceKRankedOnTpot) {
    model::Scenario s = sim::test::llama8b_scenario(512, 128, 4.0, 200);
    model::SpeculativeConfig c;
    c.method = model::SpeculativeMethod::Ngram;
    c.num_speculative_tokens = 4;
    c.acceptance_rate = 0.4;
    s.deployment.engine.speculative = c;
    const ServingChoice r = compare_speculative_tokens(s, sim::SimOptions{}, 2);
    ASSERT_TRUE(r.choice) << r.verdict;
    ASSERT_EQ(r.options.size(), 3u);
    EXPECT_TRUE(named(r, "k 4").scenario);
    EXPECT_TRUE(named(r, "k 2").simulated);
    EXPECT_TRUE(named(r, "k 8").simulated);
    EXPECT_EQ(r.options.front().name, r.chosen);
    // Best first: no option below the winner on TPOT among those with its SLO attainment.
    for (const auto& o : r.options) {
        if (o.meets_slo == r.options.front().meets_slo &&
            o.slo_attainment == r.options.front().slo_attainment) {
            EXPECT_GE(o.tpot_at_p_s, r.options.front().tpot_at_p_s) << o.name;
        }
    }
    EXPECT_NE(r.verdict.find("TPOT"), std::string::npos) << r.verdict;
    model::Scenario measured = s;
    measured.deployment.engine.speculative->acceptance_rate.reset();
    measured.deployment.engine.speculative->num_speculative_tokens = 3;
    measured.deployment.engine.speculative->acceptance = {0.6, 0.5, 0.4};
    const ServingChoice m = compare_speculative_tokens(measured, sim::SimOptions{}, 2);
    ASSERT_EQ(m.options.size(), 2u) << m.verdict;
    named(m, "k 1");
    named(m, "k 3");
    EXPECT_FALSE(
        compare_speculative_tokens(sim::test::llama8b_scenario(), sim::SimOptions{}, 2).choice);
}

} // namespace
} // namespace gpuplan::plan
