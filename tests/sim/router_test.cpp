// The prefix-aware routers (longest_prefix, weighted) on hand-built cluster states: three
// replicas whose prefix caches are primed with known prefixes, then requests whose replica
// follows by hand from the rule in docs/simulator.md ("Prefix-aware routing"); and, through
// simulate(), the degenerate weights, the load-balance figures and the old routers unchanged.
#include "model/step_cost.hpp"
#include "sim/detail/cluster.hpp"
#include "sim/detail/metrics.hpp"
#include "sim/detail/request.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;
using test::set_kv_pool;

constexpr std::uint64_t kP1 = 0x1001; // content ids of two shared prefixes
constexpr std::uint64_t kP2 = 0x1002;

/// Three idle replicas of Llama-3-8B on one H100 (4096 KV blocks of 16 tokens each, prefix
/// caching on) behind `router`, requests submitted by hand.
class Bench {
  public:
    explicit Bench(model::RouterPolicy router, model::PrefixRouting pr = {})
        : scenario_(llama8b_scenario()), cost_(scenario_.deployment, model::default_profile()),
          metrics_({detail::ClassSlo{}}, 3, false, false, 0),
          cluster_(sim_, cost_, pool_, metrics_, setup(router, pr), Rng(3)) {
        cluster_.start();
        sim_.run(0); // the replicas come up at time 0
    }

    /// Submits now a request whose prompt is `shared_len` tokens of shared prefix `prefix`
    /// then 100 tokens of its own, generating 10; returns the replica it was routed to.
    int submit(std::uint64_t prefix, int shared_len) {
        const std::uint32_t slot = pool_.acquire();
        detail::Request& r = pool_[slot];
        r.id = next_id_++;
        r.shared_id = prefix;
        r.shared_len = shared_len;
        r.stream_id = (std::uint64_t{1} << 62) | r.id;
        r.prompt = shared_len + 100;
        r.output = 10;
        cluster_.submit(slot);
        return pool_[slot].replica;
    }
    /// Runs until every submitted request has finished.
    void drain() { sim_.run(); }

  private:
    static detail::ClusterSetup setup(model::RouterPolicy router, model::PrefixRouting pr) {
        detail::ClusterSetup s;
        s.config.router = router;
        s.config.prefix_routing = pr;
        s.replicas = 3;
        s.replica.kv_blocks = 4096;
        s.replica.block_size = 16;
        s.replica.max_model_len = 8192;
        s.class_routes = {model::RouteTarget::Any};
        return s;
    }

    model::Scenario scenario_;
    model::StepCostModel cost_;
    Simulation sim_{1};
    detail::RequestPool pool_;
    detail::Metrics metrics_;
    detail::Cluster cluster_;
    std::uint64_t next_id_ = 0;
};

/// Primes the caches: P1 (2000 tokens) on replica 0, the first 1000 tokens of P2 on replica 1,
/// 2000 tokens of P2 on replica 2. Nothing is cached yet, so each request goes to the least
/// outstanding replica (lowest id among equals) whatever the router.
void prime(Bench& b) {
    ASSERT_EQ(b.submit(kP1, 2000), 0);
    ASSERT_EQ(b.submit(kP2, 1000), 1);
    ASSERT_EQ(b.submit(kP2, 2000), 2);
    b.drain();
}

// A request of 2000 tokens of P2 + 100 own: replica 0 holds none of it, replica 1 the 62 full
// blocks of the first 1000 tokens (992 tokens), replica 2 all 125 blocks (2000 tokens).
constexpr double kHit1 = 992.0 / 2100.0;
constexpr double kHit2 = 2000.0 / 2100.0;

TEST(PrefixRouter, LongestPrefixPicksTheReplicaHoldingTheLongestMatch) {
    Bench b(model::RouterPolicy::LongestPrefix);
    prime(b);
    // All idle: least outstanding would take replica 0.
    EXPECT_EQ(b.submit(kP2, 2000), 2);
    // Only the first 1000 tokens asked: replicas 1 and 2 both hold them (62 blocks); the tie
    // goes to the fewer outstanding, replica 1 (replica 2 has one now).
    EXPECT_EQ(b.submit(kP2, 1000), 1);
    EXPECT_EQ(b.submit(kP1, 2000), 0);
    // Still the longest match on replica 2 (1 outstanding vs 1 and 1: no imbalance).
    EXPECT_EQ(b.submit(kP2, 2000), 2);
}

TEST(PrefixRouter, LeastOutstandingIgnoresTheCaches) {
    Bench b(model::RouterPolicy::LeastOutstanding);
    prime(b);
    EXPECT_EQ(b.submit(kP2, 2000), 0);
    EXPECT_EQ(b.submit(kP2, 2000), 1);
    EXPECT_EQ(b.submit(kP2, 2000), 2);
}

TEST(PrefixRouter, WeightedScoresHitFractionAgainstQueueByHand) {
    model::PrefixRouting pr;
    pr.weight = 0.6;
    Bench b(model::RouterPolicy::Weighted, pr);
    prime(b);
    // Outstanding (0, 0, 0): queue scores all 1. Scores 0.4, 0.6 kHit1 + 0.4, 0.6 kHit2 + 0.4.
    ASSERT_GT(0.6 * kHit2 + 0.4, 0.6 * kHit1 + 0.4);
    EXPECT_EQ(b.submit(kP2, 2000), 2);
    // Outstanding (0, 0, 1): queue scores 1, 1, 0. Scores 0.4, 0.6 kHit1 + 0.4 = 0.683,
    // 0.6 kHit2 = 0.571: replica 1, where longest_prefix would stay on replica 2.
    ASSERT_GT(0.6 * kHit1 + 0.4, 0.6 * kHit2);
    EXPECT_EQ(b.submit(kP2, 2000), 1);
    // Outstanding (0, 1, 1): queue scores 1, 0, 0. Scores 0.4, 0.283, 0.571: replica 2.
    ASSERT_GT(0.6 * kHit2, 0.4);
    EXPECT_EQ(b.submit(kP2, 2000), 2);
    // Outstanding (0, 1, 2): queue scores 1, 0.5, 0. Scores 0.4, 0.483, 0.571: replica 2.
    ASSERT_GT(0.6 * kHit2, 0.6 * kHit1 + 0.2);
    EXPECT_EQ(b.submit(kP2, 2000), 2);
    // Outstanding (0, 1, 3): queue scores 1, 2/3, 0. Scores 0.4, 0.550, 0.571: replica 2.
    EXPECT_EQ(b.submit(kP2, 2000), 2);
    // Outstanding (0, 1, 4): queue scores 1, 0.75, 0. Scores 0.4, 0.583, 0.571: replica 1.
    ASSERT_GT(0.6 * kHit1 + 0.4 * 0.75, 0.6 * kHit2);
    EXPECT_EQ(b.submit(kP2, 2000), 1);
}

TEST(PrefixRouter, OutOfBalanceTakesTheLeastOutstanding) {
    model::PrefixRouting pr;
    pr.balance_abs_threshold = 1;
    pr.balance_rel_threshold = 1.5;
    Bench b(model::RouterPolicy::LongestPrefix, pr);
    prime(b);
    EXPECT_EQ(b.submit(kP2, 2000), 2); // (0, 0, 0): balanced
    EXPECT_EQ(b.submit(kP2, 2000), 2); // (0, 0, 1): 1 − 0 is not above 1
    EXPECT_EQ(b.submit(kP2, 2000), 0); // (0, 0, 2): 2 − 0 > 1 and 2 > 1.5 × 0
    EXPECT_EQ(b.submit(kP2, 2000), 1); // (1, 0, 2): still out of balance
    EXPECT_EQ(b.submit(kP2, 2000), 2); // (1, 1, 2): 2 − 1 is not above 1
}

/// RAG on four replicas: 16 document sets of 3000 tokens, each replica's pool holding about 6.
model::Scenario rag(model::RouterPolicy router, int requests = 800) {
    model::Scenario s = llama8b_scenario(0, 0, 20.0, requests);
    model::RequestClass c;
    c.shared_prefix = 3000;
    c.prefix_groups = 16;
    c.input = model::LengthDistribution::fixed(150);
    c.output = model::LengthDistribution::fixed(60);
    s.workload.classes = {c};
    set_kv_pool(s, 2.5);
    s.cluster.replicas = 4;
    s.cluster.router = router;
    return s;
}

SimResult run(const model::Scenario& s) {
    SimOptions o;
    o.keep_requests = true;
    SimResult r = simulate(s, o);
    EXPECT_TRUE(r.ok);
    return r;
}

TEST(PrefixRouter, WeightZeroIsLeastOutstandingAndWeightOneIsLongestPrefix) {
    model::Scenario w0 = rag(model::RouterPolicy::Weighted);
    w0.cluster.prefix_routing.weight = 0;
    EXPECT_EQ(run(w0), run(rag(model::RouterPolicy::LeastOutstanding)));
    model::Scenario w1 = rag(model::RouterPolicy::Weighted);
    w1.cluster.prefix_routing.weight = 1;
    const SimResult longest = run(rag(model::RouterPolicy::LongestPrefix));
    EXPECT_EQ(run(w1), longest);
    // And neither is trivially so: the two routers do route differently here.
    EXPECT_NE(longest.requests, run(rag(model::RouterPolicy::LeastOutstanding)).requests);
}

TEST(PrefixRouter, LongestPrefixRaisesTheHitRateOverLeastOutstanding) {
    const SimResult lo = run(rag(model::RouterPolicy::LeastOutstanding));
    const SimResult lp = run(rag(model::RouterPolicy::LongestPrefix));
    EXPECT_EQ(lp.overall.completed, 800);
    EXPECT_GT(lp.prefix_hit_rate, lo.prefix_hit_rate + 0.1);
    EXPECT_LT(lp.overall.ttft.mean.si(), lo.overall.ttft.mean.si());
}

TEST(PrefixRouter, PerReplicaHitsAddUpToTheOverallHitRate) {
    const SimResult r = run(rag(model::RouterPolicy::Weighted));
    std::int64_t queried = 0, hit = 0, cached = 0, prompt = 0;
    for (const auto& rep : r.replicas) {
        queried += rep.prefix_queried_tokens;
        hit += rep.prefix_hit_tokens;
        EXPECT_DOUBLE_EQ(rep.prefix_hit_rate, static_cast<double>(rep.prefix_hit_tokens) /
                                                  static_cast<double>(rep.prefix_queried_tokens));
    }
    for (const auto& q : r.requests) {
        cached += q.cached_tokens;
        prompt += q.input_tokens;
    }
    EXPECT_EQ(queried, prompt);
    EXPECT_EQ(hit, cached);
    EXPECT_DOUBLE_EQ(r.prefix_hit_rate, static_cast<double>(hit) / static_cast<double>(queried));
}

TEST(PrefixRouter, ImbalanceIsTheBusiestReplicaOverTheMean) {
    // Round robin: 800 requests, 200 on each replica.
    const SimResult rr = run(rag(model::RouterPolicy::RoundRobin));
    EXPECT_DOUBLE_EQ(rr.request_imbalance, 1.0);
    // One prefix, requests one at a time (each done before the next): longest_prefix keeps
    // every request on replica 0, which holds the prefix: 4 × the mean of 4 replicas, by
    // requests and by time-averaged outstanding requests.
    model::Scenario s = llama8b_scenario(0, 0, 0.2, 20);
    s.workload.arrival.kind = model::ArrivalKind::Constant;
    model::RequestClass c;
    c.shared_prefix = 1000;
    c.input = model::LengthDistribution::fixed(50);
    c.output = model::LengthDistribution::fixed(20);
    s.workload.classes = {c};
    s.cluster.replicas = 4;
    s.cluster.router = model::RouterPolicy::LongestPrefix;
    const SimResult one = run(s);
    ASSERT_EQ(one.replicas.size(), 4u);
    EXPECT_EQ(one.replicas[0].requests, 20);
    EXPECT_DOUBLE_EQ(one.request_imbalance, 4.0);
    EXPECT_DOUBLE_EQ(one.outstanding_imbalance, 4.0);
    EXPECT_EQ(one.replicas[1].outstanding_mean, 0.0);
    // 19 of 20 requests hit the 62 full blocks of the prefix (992 tokens) of a 1050-token prompt.
    EXPECT_DOUBLE_EQ(one.prefix_hit_rate, 19.0 * 992.0 / (20.0 * 1050.0));
}

TEST(PrefixRouter, OldRoutersIgnoreThePrefixRoutingKeys) {
    for (const auto router :
         {model::RouterPolicy::RoundRobin, model::RouterPolicy::LeastOutstanding,
          model::RouterPolicy::LeastKv, model::RouterPolicy::PrefixAffinity}) {
        SCOPED_TRACE(model::to_string(router));
        model::Scenario odd = rag(router, 200);
        odd.cluster.prefix_routing = {0.1, 2, 7.0};
        EXPECT_EQ(run(odd), run(rag(router, 200)));
    }
}

} // namespace
} // namespace gpuplan::sim
