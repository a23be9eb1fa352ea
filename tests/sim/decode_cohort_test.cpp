// The running-decode cohort (SchedulerState::schedule_cohort, docs/simulator.md "Performance")
// against the walk over every decode every step: the same scenario simulated both ways must give
// the same result to the bit (every request record, step record, summary and series), under the
// conditions that make the cohort decline or dissolve (KV pressure with preemption by recompute
// and by swap, a token budget below the running decodes, agent sessions that hash their blocks,
// the priority policy, replica failures that take running requests back, a stopped run).
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <stop_token>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;
using test::set_kv_pool;

// Lognormal chat and RAG prompts with shared prefixes (prefix groups), uniform outputs, and a
// short fixed-length class of higher priority.
model::Scenario mix(double rate, int requests) {
    model::Scenario s = llama8b_scenario(0, 0, rate, requests);
    model::RequestClass chat;
    chat.name = "chat";
    chat.share = 3;
    chat.input.kind = model::LengthKind::LogNormal;
    chat.input.mean = 600;
    chat.input.stddev = 400;
    chat.input.max = 3000;
    chat.output.kind = model::LengthKind::Uniform;
    chat.output.min = 1;
    chat.output.max = 300;
    chat.shared_prefix = 200;
    model::RequestClass rag = chat;
    rag.name = "rag";
    rag.share = 1;
    rag.shared_prefix = 1500;
    rag.prefix_groups = 3;
    rag.input = model::LengthDistribution::fixed(300);
    model::RequestClass code;
    code.name = "code";
    code.share = 1;
    code.input = model::LengthDistribution::fixed(400);
    code.output = model::LengthDistribution::fixed(30);
    code.priority = -1;
    s.workload.classes = {chat, rag, code};
    return s;
}

// Simulates `s` with and without the cohort and expects identical results.
void expect_same(const model::Scenario& s, const char* what) {
    SimOptions o;
    o.keep_requests = true;
    o.keep_steps = true;
    const SimResult cohort = simulate(s, o);
    o.decode_cohort = false;
    const SimResult walk = simulate(s, o);
    ASSERT_TRUE(cohort.ok) << what;
    EXPECT_GT(cohort.overall.completed, 0) << what;
    ASSERT_EQ(cohort.requests.size(), walk.requests.size()) << what;
    for (std::size_t i = 0; i < cohort.requests.size(); ++i) {
        const auto& x = cohort.requests[i];
        const auto& y = walk.requests[i];
        ASSERT_TRUE(x == y) << what << ": request " << i << " replica " << x.replica.value_or(-1)
                            << "/" << y.replica.value_or(-1) << " out " << x.output_tokens << "/"
                            << y.output_tokens << " cached " << x.cached_tokens << "/"
                            << y.cached_tokens << " pre " << x.preemptions << "/" << y.preemptions
                            << " ttft " << x.ttft.value_or(Seconds(-1)).si() << "/"
                            << y.ttft.value_or(Seconds(-1)).si() << " e2e "
                            << x.e2e.value_or(Seconds(-1)).si() << "/"
                            << y.e2e.value_or(Seconds(-1)).si() << " in " << x.input_tokens;
    }
    ASSERT_EQ(cohort.step_log.size(), walk.step_log.size()) << what;
    EXPECT_TRUE(cohort == walk) << what;
}

TEST(DecodeCohort, MatchesTheWalkUnderLightAndHeavyLoad) {
    expect_same(mix(2.0, 300), "light load");
    expect_same(mix(12.0, 400), "heavy load");
    model::Scenario s = mix(40.0, 400); // a long queue, the KV pool full
    set_kv_pool(s, 1.0);
    expect_same(s, "KV pressure");
}

TEST(DecodeCohort, MatchesTheWalkOnManyReplicasWithPrefixGroups) {
    // The benchmark's mix (bench/sim_bench.cpp) on 16 replicas at about 75 % of capacity.
    model::Scenario s = mix(0, 20000);
    s.deployment.par.dp = 16;
    s.workload.requests_per_s = 24.0 * 16;
    s.workload.classes[0].output.kind = model::LengthKind::LogNormal;
    s.workload.classes[0].output.mean = 200;
    s.workload.classes[0].output.stddev = 150;
    s.workload.classes[0].output.max = 1500;
    s.workload.classes[1].prefix_groups = 8;
    expect_same(s, "16 replicas");
}

TEST(DecodeCohort, MatchesTheWalkWhenPreemptingByRecomputeOrSwap) {
    for (const auto mode : {model::PreemptionMode::Recompute, model::PreemptionMode::Swap}) {
        model::Scenario s = llama8b_scenario(200, 600, 1000.0, 64);
        set_kv_pool(s, 0.5); // 256 blocks for 64 sequences of 800 tokens: preemptions
        s.deployment.engine.max_model_len = 2048;
        s.scheduler.preemption_mode = mode;
        expect_same(s, mode == model::PreemptionMode::Swap ? "swap" : "recompute");
    }
}

TEST(DecodeCohort, MatchesTheWalkWhenTheBudgetIsBelowTheRunningDecodes) {
    model::Scenario s = mix(20.0, 300);
    s.deployment.engine.max_num_batched_tokens = 24; // fewer tokens than running sequences
    s.deployment.engine.max_model_len = 4096;
    expect_same(s, "small budget");
    s.deployment.engine.max_num_batched_tokens = 4096;
    s.deployment.engine.enable_chunked_prefill = false;
    expect_same(s, "no chunked prefill");
}

TEST(DecodeCohort, MatchesTheWalkForAgentSessionsAndThePriorityPolicy) {
    model::Scenario s = llama8b_scenario(0, 0, 2.0, 60);
    model::RequestClass agent;
    agent.name = "agent";
    agent.shared_prefix = 2000;
    agent.input = model::LengthDistribution::fixed(300);
    agent.output = model::LengthDistribution::fixed(100);
    agent.agent = model::AgentSession{6, model::LengthDistribution::fixed(150), Seconds(0.5)};
    s.workload.classes = {agent};
    expect_same(s, "agent sessions"); // session blocks are hashed as they fill
    model::Scenario p = mix(30.0, 400);
    p.scheduler.policy = model::SchedulingPolicy::Priority;
    expect_same(p, "priority");
}

TEST(DecodeCohort, MatchesTheWalkWhenReplicasFailWithRequestsRunning) {
    for (const auto fate : {model::FailedRequests::Retry, model::FailedRequests::Lose}) {
        model::Scenario s = llama8b_scenario(512, 128, 4.0, 200);
        s.cluster.replicas = 2;
        model::ReplicaFailures f;
        f.mtbf = Seconds(30);
        f.mttr = Seconds(10);
        f.in_flight = fate;
        s.cluster.failures = f;
        expect_same(s, fate == model::FailedRequests::Retry ? "retried" : "lost");
    }
}

TEST(DecodeCohort, AStoppedRunCancelsItsRunningRequestsWithTheWalksTokenCounts) {
    // Stopped mid-run: the cancelled requests' output tokens come from their settled fields.
    const model::Scenario s = mix(12.0, 400);
    const auto stopped = [&](bool cohort) {
        SimOptions o;
        o.keep_requests = true;
        o.decode_cohort = cohort;
        std::stop_source stop;
        int steps = 0;
        o.on_step = [&](const StepRecord&) {
            if (++steps == 3000) {
                stop.request_stop();
            }
        };
        return simulate(s, o, stop.get_token());
    };
    const SimResult a = stopped(true);
    const SimResult b = stopped(false);
    ASSERT_TRUE(a.stopped);
    std::int64_t cancelled_tokens = 0;
    for (const RequestRecord& q : a.requests) {
        if (q.outcome == Outcome::Cancelled) {
            cancelled_tokens += q.output_tokens;
        }
    }
    EXPECT_GT(cancelled_tokens, 0); // some were decoding when the run stopped
    EXPECT_TRUE(a == b);
}

} // namespace
} // namespace gpuplan::sim
