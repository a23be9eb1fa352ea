/// The closed-form prefix hit rate of a router (model/prefix_routing.hpp), worked by hand.

#include "model/prefix_routing.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

namespace {

using namespace gpuplan::model;

RequestClass cls(const char* name, double share, int prefix, int groups, int input) {
    RequestClass c;
    c.name = name;
    c.share = share;
    c.shared_prefix = prefix;
    c.prefix_groups = groups;
    c.input = LengthDistribution::fixed(input);
    c.output = LengthDistribution::fixed(100);
    return c;
}

// RAG (80 %, 32 sets of 3,000 tokens before 200 of its own) and chat (20 %, one 800-token
// system prompt before 400) on 4 replicas of 48,000 KV tokens, 1,000 requests.
TEST(PrefixHitEstimate, SpreadAgainstByPrefixByHand) {
    Workload w;
    w.classes = {cls("rag", 0.8, 3000, 32, 200), cls("chat", 0.2, 800, 1, 400)};
    const PrefixHitEstimate e = prefix_hit_estimate(w, 48000, 4, 1000);
    EXPECT_TRUE(e.closed_form);
    EXPECT_TRUE(e.shares_prefixes);
    EXPECT_DOUBLE_EQ(e.prefix_tokens, 32 * 3000 + 800);
    // Spread: each replica must hold all 96,800 prefix tokens in 48,000: held 48,000 / 96,800;
    // every replica misses every set once: 4 × 32 of the 800 RAG requests, 4 of the 200 chats.
    const double held = 48000.0 / 96800.0;
    const double looked_up = 0.8 * (3000 + 200) + 0.2 * (800 + 400); // 2,800 tokens a request
    const double spread =
        (0.8 * 3000 * held * (1 - 128.0 / 800) + 0.2 * 800 * held * (1 - 4.0 / 200)) / looked_up;
    EXPECT_NEAR(e.spread, spread, 1e-12);
    EXPECT_NEAR(e.spread, 0.3848, 1e-4);
    // By prefix: 24,200 tokens per replica fit; each set is missed once.
    const double by_prefix =
        (0.8 * 3000 * (1 - 32.0 / 800) + 0.2 * 800 * (1 - 1.0 / 200)) / looked_up;
    EXPECT_NEAR(e.by_prefix, by_prefix, 1e-12);
    EXPECT_NEAR(e.by_prefix, 0.8797, 1e-4);
    // One replica: both routers are the same.
    const PrefixHitEstimate one = prefix_hit_estimate(w, 48000, 1, 1000);
    EXPECT_DOUBLE_EQ(one.spread, one.by_prefix);
}

TEST(PrefixHitEstimate, NoSharedPrefixNoHitsAndAgentsHaveNoClosedForm) {
    Workload w;
    w.classes = {cls("plain", 1.0, 0, 1, 1000)};
    const PrefixHitEstimate e = prefix_hit_estimate(w, 48000, 4, 1000);
    EXPECT_FALSE(e.shares_prefixes);
    EXPECT_DOUBLE_EQ(e.spread, 0.0);
    EXPECT_DOUBLE_EQ(e.by_prefix, 0.0);
    w.classes.front().agent = AgentSession{};
    const PrefixHitEstimate a = prefix_hit_estimate(w, 48000, 4, 1000);
    EXPECT_TRUE(a.shares_prefixes);
    EXPECT_FALSE(a.closed_form);
    EXPECT_THROW((void)prefix_hit_estimate(w, 48000, 0, 1000), gpuplan::InvalidArgument);
    EXPECT_THROW((void)prefix_hit_estimate(w, -1, 4, 1000), gpuplan::InvalidArgument);
}

} // namespace
