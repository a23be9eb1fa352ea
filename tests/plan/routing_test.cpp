// The router as a choice of the plan (plan/routing.hpp): with several replicas and shared
// prefixes the routers are simulated and a prefix-aware one wins on a workload whose prefixes
// overflow each replica's cache when spread; without shared prefixes least outstanding is the
// answer with its reason, and nothing is simulated.
#include "plan/routing.hpp"

#include "tests/model/fixtures.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpuplan::plan {
namespace {

model::RequestClass cls(const char* name, double share, int prefix, int groups, int input) {
    model::RequestClass c;
    c.name = name;
    c.share = share;
    c.shared_prefix = prefix;
    c.prefix_groups = groups;
    c.input = model::LengthDistribution::fixed(input);
    c.output = model::LengthDistribution::fixed(150);
    c.ttft = Seconds(1.0);
    c.tpot = Seconds(0.06);
    return c;
}

// examples/prefix-routing-rag.yaml's shape: four Llama-3-8B replicas with 6 GiB of KV each
// (49,152 tokens), 32 document sets of 3,000 tokens (96,000 tokens) and a system prompt.
model::Scenario rag(bool shared) {
    model::Scenario s = sim::test::llama8b_scenario(512, 128, 30.0, 600);
    sim::test::set_kv_pool(s, 6.0);
    s.cluster.replicas = 4;
    s.seed = 11;
    s.workload.classes = {cls("rag", 0.8, shared ? 3000 : 0, 32, shared ? 175 : 3175),
                          cls("chat", 0.2, shared ? 800 : 0, 1, shared ? 400 : 1200)};
    return s;
}

TEST(CompareRouters, APrefixAwareRouterWinsWhenSpreadPrefixesOverflowTheCaches) {
    const RouterComparison c = compare_routers(rag(true), sim::SimOptions{}, 2);
    ASSERT_TRUE(c.choice);
    EXPECT_EQ(c.replicas, 4);
    EXPECT_EQ(c.cache_tokens, 6 * 8192);
    EXPECT_DOUBLE_EQ(c.prefix_tokens, 32 * 3000 + 800);
    ASSERT_EQ(c.options.size(), 3u);
    EXPECT_NE(c.chosen, "least_outstanding") << c.verdict;
    EXPECT_EQ(c.options.front().router, c.chosen);
    const auto least = std::find_if(c.options.begin(), c.options.end(), [](const RouterOption& o) {
        return o.router == "least_outstanding";
    });
    ASSERT_NE(least, c.options.end());
    const RouterOption& win = c.options.front();
    EXPECT_TRUE(win.simulated);
    EXPECT_GT(win.hit_rate, least->hit_rate + 0.2);
    EXPECT_LT(win.ttft_mean_s, least->ttft_mean_s);
    // The closed form puts them in the same order, by the same margin.
    EXPECT_GT(win.analytic_hit_rate, least->analytic_hit_rate + 0.2);
    EXPECT_NE(c.verdict.find(c.chosen + " wins at 4 replicas over least_outstanding"),
              std::string::npos)
        << c.verdict;
    EXPECT_NE(c.verdict.find("prefix hit rate"), std::string::npos) << c.verdict;
}

TEST(CompareRouters, LeastOutstandingWithoutSharedPrefixesAndNothingToChooseWithOneReplica) {
    const RouterComparison c = compare_routers(rag(false), sim::SimOptions{}, 2);
    EXPECT_FALSE(c.choice);
    EXPECT_EQ(c.chosen, "least_outstanding");
    ASSERT_EQ(c.options.size(), 1u);
    EXPECT_FALSE(c.options.front().simulated);
    EXPECT_NE(c.verdict.find("no class shares a prefix"), std::string::npos) << c.verdict;
    model::Scenario off = rag(true);
    off.deployment.engine.enable_prefix_caching = false;
    EXPECT_NE(compare_routers(off, sim::SimOptions{}, 2).verdict.find("prefix caching is off"),
              std::string::npos);
    model::Scenario one = rag(true);
    one.cluster.replicas = 1;
    const RouterComparison o = compare_routers(one, sim::SimOptions{}, 2);
    EXPECT_FALSE(o.choice);
    EXPECT_TRUE(o.options.empty());
}

// The scenario's own router is never dropped unseen: adapter affinity with engine.lora stays the
// answer when there is no prefix to route by (it keeps adapters where they are resident), and a
// router outside the three prefix-aware choices is simulated beside them.
TEST(CompareRouters, TheScenariosOwnRouterIsKeptOrCompared) {
    model::Scenario lora = rag(false);
    lora.deployment.engine.lora = model::LoraServingConfig{};
    lora.cluster.router = model::RouterPolicy::AdapterAffinity;
    const RouterComparison a = compare_routers(lora, sim::SimOptions{}, 2);
    EXPECT_FALSE(a.choice);
    EXPECT_EQ(a.chosen, "adapter_affinity") << a.verdict;
    EXPECT_EQ(a.verdict.find("set cluster.router"), std::string::npos) << a.verdict;
    model::Scenario rr = rag(true);
    rr.cluster.router = model::RouterPolicy::RoundRobin;
    const RouterComparison b = compare_routers(rr, sim::SimOptions{}, 2);
    ASSERT_EQ(b.options.size(), 4u);
    EXPECT_TRUE(std::any_of(b.options.begin(), b.options.end(),
                            [](const RouterOption& o) { return o.router == "round_robin"; }));
}

} // namespace
} // namespace gpuplan::plan
