// Heterogeneous pools behind one router (issue 15, item 3): routing by class and by prompt
// length buckets, the fallback when no pool takes a length, the cost per pool by hand, and a
// single pool of the scenario's own hardware giving exactly the homogeneous run.
#include "model/replica_pool.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;

model::ReplicaPool pool(const model::Scenario& s, const std::string& name,
                        const model::AcceleratorSpec& gpu, int replicas) {
    model::ReplicaPool p;
    p.name = name;
    p.hardware.gpu = gpu;
    p.hardware.intra_node_link = s.deployment.intra_node_link;
    p.hardware.gpus_per_node = s.deployment.gpus_per_node;
    p.replicas = replicas;
    return p;
}

/// Chat (own prompts of 100 to 2,000 tokens) and RAG (2,500 tokens) at 8 requests/s.
model::Scenario two_classes() {
    model::Scenario s = llama8b_scenario(0, 0, 8.0, 300);
    model::RequestClass chat;
    chat.name = "chat";
    chat.input.kind = model::LengthKind::Uniform;
    chat.input.min = 100;
    chat.input.max = 2000;
    chat.output = model::LengthDistribution::fixed(50);
    model::RequestClass rag;
    rag.name = "rag";
    rag.input = model::LengthDistribution::fixed(2500);
    rag.output = model::LengthDistribution::fixed(50);
    s.workload.classes = {chat, rag};
    return s;
}

SimResult run(const model::Scenario& s) {
    SimOptions o;
    o.keep_requests = true;
    SimResult r = simulate(s, o);
    EXPECT_TRUE(r.ok) << (r.reasons.empty() ? "" : r.reasons.front());
    return r;
}

int pool_of(const SimResult& r, const RequestRecord& q) {
    return r.replicas[static_cast<std::size_t>(q.replica.value())].pool;
}

TEST(Pools, ClassesAndLengthBucketsPickThePool) {
    model::Scenario s = two_classes();
    model::ReplicaPool big = pool(s, "big", model::test::h100(), 2); // every class, any length
    model::ReplicaPool small = pool(s, "small", model::test::a100_80gb(), 3);
    small.classes = {"chat"};
    small.max_prompt_tokens = 1000;
    s.cluster.pools = {big, small};
    const SimResult r = run(s);
    ASSERT_EQ(r.replicas.size(), 5u);
    ASSERT_EQ(r.pools.size(), 2u);
    std::int64_t to_small = 0;
    for (const auto& q : r.requests) {
        ASSERT_EQ(q.outcome, Outcome::Completed);
        // rag: only "big" serves it. chat up to 1,000 tokens: "small" is the tightest bucket
        // (1,000 against no limit); longer chat: only "big" takes the length.
        const int expected = q.request_class == 1 ? 0 : (q.input_tokens <= 1000 ? 1 : 0);
        EXPECT_EQ(pool_of(r, q), expected) << "request " << q.id;
        to_small += pool_of(r, q) == 1 ? 1 : 0;
    }
    EXPECT_GT(to_small, 0);
    EXPECT_EQ(r.pools[0].requests + r.pools[1].requests, 300);
    EXPECT_EQ(r.pools[1].requests, to_small);
    EXPECT_EQ(r.pools[1].accelerator, model::test::a100_80gb().name);
}

// Issue 33: a pool never takes a prompt over its max_prompt_tokens. A chat prompt over 500
// tokens has no pool of its class that takes it (the RAG pool serves RAG only), so it is
// rejected; it went to the chat pool regardless of the bound.
TEST(Pools, ALengthNoPoolTakesIsRejected) {
    model::Scenario s = two_classes();
    model::ReplicaPool chat = pool(s, "chat", model::test::h100(), 2);
    chat.classes = {"chat"};
    chat.max_prompt_tokens = 500;
    model::ReplicaPool rag = pool(s, "rag", model::test::h100(), 1);
    rag.classes = {"rag"};
    s.cluster.pools = {chat, rag};
    const SimResult r = run(s);
    int rejected = 0;
    for (const auto& q : r.requests) {
        if (q.request_class == 0 && q.input_tokens > 500) {
            EXPECT_EQ(q.outcome, Outcome::Rejected) << "request " << q.id;
            EXPECT_FALSE(q.replica.has_value()) << "request " << q.id;
            ++rejected;
        } else {
            EXPECT_EQ(pool_of(r, q), q.request_class) << "request " << q.id;
        }
    }
    // Chat prompts are uniform on 100..2000 tokens: about 79 % are over 500.
    EXPECT_GT(rejected, 0);
}

TEST(Pools, CostIsGpuHoursTimesTheRent) {
    model::Scenario s = two_classes();
    model::ReplicaPool a = pool(s, "a", model::test::h100(), 2);
    a.hardware.gpu_hour = model::Price{{2.5, "USD"}, model::PriceBasis::Hour};
    model::ReplicaPool b = pool(s, "b", model::test::h100(), 1);
    b.tp = 2;
    b.hardware.gpu_hour = model::Price{{1.0, "USD"}, model::PriceBasis::Hour};
    model::ReplicaPool c = pool(s, "c", model::test::h100(), 1); // no price
    s.cluster.pools = {a, b, c};
    const SimResult r = run(s);
    ASSERT_EQ(r.pools.size(), 3u);
    EXPECT_EQ(r.pools[0].gpus, 2);
    EXPECT_EQ(r.pools[1].gpus, 2);
    // Every replica is up from 0 to the end of the run: GPU-hours = GPUs × end / 3600, the
    // same end for all pools, which is past the last request's finish.
    const double end_s = r.pools[0].gpu_hours * 3600.0 / 2;
    EXPECT_DOUBLE_EQ(r.pools[1].gpu_hours, 2 * end_s / 3600.0);
    EXPECT_DOUBLE_EQ(r.pools[2].gpu_hours, end_s / 3600.0);
    EXPECT_GE(end_s, r.duration.si());
    ASSERT_TRUE(r.pools[0].cost && r.pools[0].cost_per_hour);
    EXPECT_DOUBLE_EQ(r.pools[0].cost->amount, r.pools[0].gpu_hours * 2.5);
    EXPECT_DOUBLE_EQ(r.pools[0].cost_per_hour->amount, 2 * 2.5);
    EXPECT_DOUBLE_EQ(r.pools[1].cost_per_hour->amount, 2 * 1.0);
    EXPECT_FALSE(r.pools[2].cost.has_value());
    EXPECT_FALSE(r.power.modelled);
}

TEST(Pools, OnePoolOfTheScenariosHardwareIsTheHomogeneousRun) {
    model::Scenario plain = two_classes();
    plain.cluster.replicas = 3;
    model::Scenario pooled = two_classes();
    pooled.cluster.pools = {pool(pooled, "all", pooled.deployment.gpu, 3)};
    const SimResult a = run(plain);
    const SimResult b = run(pooled);
    EXPECT_EQ(a.requests, b.requests);
    EXPECT_EQ(a.overall, b.overall);
    EXPECT_EQ(a.steps, b.steps);
    ASSERT_EQ(b.pools.size(), 1u);
    EXPECT_EQ(b.pools[0].requests, 300);
}

TEST(Pools, APoolTheModelDoesNotFitIsReported) {
    model::Scenario s = two_classes();
    model::AcceleratorSpec tiny = model::test::rtx4090();
    tiny.memory = Bytes(8.0 * 1024 * 1024 * 1024);
    s.cluster.pools = {pool(s, "tiny", tiny, 1)};
    const SimResult r = simulate(s, SimOptions{});
    EXPECT_FALSE(r.ok);
    ASSERT_FALSE(r.reasons.empty());
    EXPECT_EQ(r.reasons.front().rfind("pool 'tiny': ", 0), 0u) << r.reasons.front();
}

// Pools with the autoscaler (docs/simulator.md, "Autoscaling pools"): each pool scales on its
// own replicas within its own bounds, and its replica-seconds and cost are its own. Long
// requests (100 + 8,000 or 2,000 + 6,000 tokens, a minute or more of decoding; within
// max_model_len 8,192) at known times, so the utilisation each scrape sees is known by hand
// (as in autoscaler_test.cpp).
model::Scenario two_scaled_pools() {
    model::Scenario s = llama8b_scenario();
    s.workload.requests.reset();
    s.workload.arrival.kind = model::ArrivalKind::Trace;
    for (const double t : {0.0, 15.0}) {
        for (int i = 0; i < 8; ++i) {
            s.workload.trace.push_back({Seconds(t), 100, 8000}); // to "short"
        }
    }
    for (int i = 0; i < 4; ++i) {
        s.workload.trace.push_back({Seconds(0.0), 2000, 6000}); // to "long" only
    }
    std::stable_sort(s.workload.trace.begin(), s.workload.trace.end(),
                     [](const auto& a, const auto& b) { return a.arrival < b.arrival; });
    s.deployment.engine.max_num_seqs = 8;
    s.cluster.router = model::RouterPolicy::LeastOutstanding;
    model::ReplicaPool shortp = pool(s, "short", model::test::h100(), 2);
    shortp.max_prompt_tokens = 1000;
    shortp.min_replicas = 1;
    shortp.max_replicas = 10;
    shortp.hardware.gpu_hour = model::Price{{2.0, "USD"}, model::PriceBasis::Hour};
    model::ReplicaPool longp = pool(s, "long", model::test::a100_80gb(), 1);
    longp.hardware.gpu_hour = model::Price{{1.5, "USD"}, model::PriceBasis::Hour};
    s.cluster.pools = {shortp, longp};
    model::Autoscaler a;
    a.target = 0.5;
    a.interval = Seconds(10);
    a.cooldown = Seconds(300);
    s.cluster.autoscaler = a;
    return s;
}

TEST(Pools, EachPoolScalesWithinItsBoundsAndPaysItsOwnReplicaSeconds) {
    const SimResult r = run(two_scaled_pools());
    ASSERT_TRUE(r.autoscaler);
    ASSERT_EQ(r.pools.size(), 2u);
    // 10 s: "short" runs 4 of 8 per replica (0.5 = target), "long" 4 of 8. 15 s: 8 more short
    // requests, so at 20 s "short" is at 1.0: ceil(2 × 1.0 / 0.5) = 4 replicas; "long" stays
    // at 0.5 (and at its bound 1).
    EXPECT_EQ(r.autoscaler->timeline,
              (std::vector<ReplicaCountPoint>{{Seconds(0.0), 3}, {Seconds(20.0), 5}}));
    EXPECT_EQ(r.autoscaler->scale_ups, 2);
    EXPECT_EQ(r.pools[0].peak_replicas, 4);
    EXPECT_EQ(r.pools[1].peak_replicas, 1);
    ASSERT_EQ(r.replicas.size(), 5u);
    EXPECT_EQ(r.replicas[3].pool, 0); // the new replicas are "short"'s
    EXPECT_EQ(r.replicas[4].pool, 0);
    // Replica-seconds: "short" 2 T + 2 (T − 20), "long" T, with T the end of the run (the run
    // ends before the cooldown allows a scale-down); cost = replica-hours × tp × rent.
    // (Power is not modelled with pools, so T is read off "long", whose one replica runs from
    // 0 to the end.)
    const double end = r.pools[1].replica_seconds;
    EXPECT_GT(end, 60.0); // 8,000 tokens take longer than a minute to decode
    EXPECT_NEAR(r.pools[0].replica_seconds, 2 * end + 2 * (end - 20), 1e-6);
    EXPECT_NEAR(r.pools[0].gpu_hours, (4 * end - 40) / 3600.0, 1e-9);
    ASSERT_TRUE(r.pools[0].cost && r.pools[1].cost && r.autoscaler->cost);
    EXPECT_NEAR(r.pools[0].cost->amount, (4 * end - 40) / 3600.0 * 2.0, 1e-9);
    EXPECT_NEAR(r.pools[1].cost->amount, end / 3600.0 * 1.5, 1e-9);
    EXPECT_NEAR(r.autoscaler->cost->amount, (4 * end - 40) / 3600.0 * 2.0 + end / 3600.0 * 1.5,
                1e-9);
    EXPECT_NEAR(r.autoscaler->replica_seconds, 5 * end - 40, 1e-6);
    for (const auto& rep : r.replicas) {
        EXPECT_EQ(rep.requests > 0, rep.available.si() == 0.0); // nothing came after 20 s
    }
}

// Owned against rented (model::ReplicaPool::owned): a rented pool pays gpu_hour for the
// GPU-hours it used, an owned one for every GPU it owns over the whole run, used or not.
// Fixed pools: "own" (2 replicas × tp 1 at $2/h, owned) costs 2 GPUs × span × $2/h, e.g.
// $4 over a 3,600 s run, whatever its load; "rent" (the same, rented) its GPU-hours × $2.
TEST(Pools, AnOwnedFixedPoolPaysForItsGpusOverTheRun) {
    model::Scenario s = two_classes();
    model::ReplicaPool own = pool(s, "own", model::test::h100(), 2);
    own.owned = true;
    own.classes = {"rag"}; // a fifth of the load or less
    own.hardware.gpu_hour = model::Price{{2.0, "USD"}, model::PriceBasis::Hour};
    model::ReplicaPool rent = pool(s, "rent", model::test::h100(), 2);
    rent.hardware.gpu_hour = own.hardware.gpu_hour;
    model::ReplicaPool clock = pool(s, "clock", model::test::h100(), 1); // no price: the span
    s.cluster.pools = {own, rent, clock};
    const SimResult r = run(s);
    ASSERT_EQ(r.pools.size(), 3u);
    const double span_h = r.pools[2].gpu_hours; // 1 GPU up from 0 to the end
    EXPECT_GT(span_h, 0.0);
    EXPECT_TRUE(r.pools[0].owned);
    EXPECT_EQ(r.pools[0].owned_gpus, 2);
    EXPECT_FALSE(r.pools[1].owned);
    EXPECT_EQ(r.pools[1].owned_gpus, 0);
    ASSERT_TRUE(r.pools[0].cost && r.pools[1].cost);
    EXPECT_NEAR(r.pools[0].cost->amount, 2 * 1 * span_h * 2.0, 1e-9);
    EXPECT_NEAR(r.pools[0].cost->amount / span_h, 4.0, 1e-9); // $4 per hour of run
    EXPECT_NEAR(r.pools[1].cost->amount, r.pools[1].gpu_hours * 2.0, 1e-9);
    EXPECT_DOUBLE_EQ(r.pools[0].cost_per_hour->amount, 4.0);
}

// With the autoscaler an owned pool pays for its max_replicas over the whole run: "short"
// (max 10 × tp 1 at $2/h) costs 10 × T × $2/h though it ran 4 T − 40 replica-seconds
// (EachPoolScalesWithinItsBoundsAndPaysItsOwnReplicaSeconds); the rented "long" its T.
TEST(Pools, AnOwnedAutoscaledPoolPaysForItsMaxReplicas) {
    model::Scenario s = two_scaled_pools();
    s.cluster.pools[0].owned = true;
    const SimResult r = run(s);
    ASSERT_TRUE(r.autoscaler);
    ASSERT_EQ(r.pools.size(), 2u);
    const double end = r.pools[1].replica_seconds;
    EXPECT_NEAR(r.pools[0].replica_seconds, 4 * end - 40, 1e-6); // used: as when rented
    ASSERT_TRUE(r.pools[0].cost && r.pools[1].cost && r.autoscaler->cost);
    EXPECT_EQ(r.pools[0].owned_gpus, 10);
    EXPECT_NEAR(r.pools[0].cost->amount, 10 * end / 3600.0 * 2.0, 1e-9);
    EXPECT_NEAR(r.pools[1].cost->amount, end / 3600.0 * 1.5, 1e-9);
    EXPECT_NEAR(r.autoscaler->cost->amount, 10 * end / 3600.0 * 2.0 + end / 3600.0 * 1.5, 1e-9);
}

} // namespace
} // namespace gpuplan::sim
