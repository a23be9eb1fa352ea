// Properties of the serving simulator: agreement with the analytic model, queueing laws,
// determinism, and the qualitative effects of each engine and cluster mechanism.
#include "model/memory.hpp"
#include "model/serving.hpp"
#include "model/step_cost.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;
using test::set_kv_pool;

model::StepCostModel cost_model(const model::Scenario& s) {
    return model::StepCostModel(s.deployment, model::default_profile());
}

SimResult run(const model::Scenario& s, bool keep = false) {
    SimOptions o;
    o.keep_requests = keep;
    SimResult r = simulate(s, o);
    EXPECT_TRUE(r.ok);
    return r;
}

TEST(Simulate, OneRequestAloneTakesExactlyTheAnalyticTtftAndTpot) {
    for (const int budget : {8192, 2048}) {
        SCOPED_TRACE(budget);
        model::Scenario s = llama8b_scenario(6000, 40, 1.0, 1);
        s.deployment.engine.max_num_batched_tokens = budget;
        const SimResult r = run(s, true);
        ASSERT_EQ(r.requests.size(), 1u);
        const RequestRecord& q = r.requests[0];
        ASSERT_EQ(q.outcome, Outcome::Completed);
        const auto m = cost_model(s);
        // Each step is rounded to the nanosecond, nothing else differs.
        const int chunks = (6000 + budget - 1) / budget;
        EXPECT_NEAR(q.ttft->si(), model::ttft(m, 6000).si(), chunks * 1e-9);
        double decode = 0;
        for (int k = 1; k < 40; ++k) {
            decode += model::tpot(m, 1, 6000 + k).si();
        }
        EXPECT_NEAR(q.e2e->si() - q.ttft->si(), decode, 40 * 1e-9);
        EXPECT_NEAR(q.tpot->si(), decode / 39, 1e-9);
        EXPECT_DOUBLE_EQ(q.queue->si(), 0.0);
        EXPECT_EQ(r.overall.output_tokens, 40);
    }
}

model::Scenario mixed_scenario() {
    model::Scenario s = llama8b_scenario(0, 0, 12.0, 400);
    set_kv_pool(s, 1.0);
    model::RequestClass chat;
    chat.name = "chat";
    chat.share = 3;
    chat.input.kind = model::LengthKind::LogNormal;
    chat.input.mean = 600;
    chat.input.stddev = 400;
    chat.input.max = 3000;
    chat.output.kind = model::LengthKind::Uniform;
    chat.output.min = 20;
    chat.output.max = 300;
    chat.shared_prefix = 200;
    chat.ttft = Seconds(1.0);
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
    code.ttft = Seconds(0.3);
    s.workload.classes = {chat, rag, code};
    return s;
}

TEST(Simulate, SameSeedGivesIdenticalResultsAndOtherSeedsDiffer) {
    const model::Scenario s = mixed_scenario();
    SimOptions o;
    o.keep_requests = true;
    o.keep_steps = true;
    const SimResult a = simulate(s, o);
    const SimResult b = simulate(s, o);
    EXPECT_TRUE(a == b);
    EXPECT_GT(a.preemptions, 0); // the run exercises preemption and the prefix cache
    EXPECT_GT(a.prefix_hit_rate, 0.2);
    o.seed = 8;
    const SimResult c = simulate(s, o);
    EXPECT_FALSE(a == c);
}

TEST(Simulate, LittlesLawHoldsOnTheSummary) {
    model::Scenario s = llama8b_scenario(800, 200, 20.0, 3000);
    s.workload.output_tokens = 200;
    const SimResult r = run(s);
    ASSERT_EQ(r.overall.completed, 3000);
    const double l = r.overall.throughput_rps * r.overall.e2e.mean.si();
    EXPECT_NEAR(r.mean_in_system / l, 1.0, 0.02);
}

TEST(Simulate, ConservesTokens) {
    model::Scenario s = mixed_scenario();
    const SimResult r = run(s, true);
    std::int64_t in = 0, out = 0;
    for (const auto& q : r.requests) {
        if (q.outcome == Outcome::Completed) {
            in += q.input_tokens;
            out += q.output_tokens;
        }
    }
    EXPECT_EQ(r.overall.arrived, 400);
    EXPECT_EQ(r.overall.completed, 400);
    EXPECT_EQ(r.overall.input_tokens, in);
    EXPECT_EQ(r.overall.output_tokens, out);
    std::int64_t series_out = 0;
    for (const auto& b : r.series) {
        series_out += static_cast<std::int64_t>(b.output_tok_s);
    }
    EXPECT_EQ(series_out, out);
    // Every prompt token is either computed or served from the cache (recomputation adds more).
    EXPECT_GE(r.prefill_tokens_computed + r.overall.cached_tokens, in);
}

TEST(Simulate, MatchesMd1MeanWaitAtSeventyPercentLoad) {
    // One sequence at a time, one output token: a constant service time D per request.
    model::Scenario s = llama8b_scenario(512, 1, 1.0, 1);
    s.deployment.engine.max_num_seqs = 1;
    s.deployment.engine.enable_prefix_caching = false;
    const double d = run(s, true).requests[0].e2e.value().si();
    const double rho = 0.7;
    s.workload.requests_per_s = rho / d;
    s.workload.requests = 200000;
    const SimResult r = run(s);
    const double wq = rho * d / (2 * (1 - rho)); // Pollaczek-Khinchine for M/D/1
    EXPECT_NEAR(r.overall.queue.mean.si() / wq, 1.0, 0.03);
}

TEST(Simulate, ThroughputRisesWithMaxNumSeqsUntilKvBinds) {
    std::vector<double> tput;
    for (const int seqs : {1, 4, 16, 32, 256}) {
        model::Scenario s = llama8b_scenario(512, 256, 1.0, 600);
        set_kv_pool(s, 2.0); // 16384 tokens: about 21 sequences of 768 tokens
        s.workload.arrival.kind = model::ArrivalKind::ClosedLoop;
        s.workload.arrival.users = 300;
        s.deployment.engine.max_num_seqs = seqs;
        tput.push_back(run(s).output_tok_s);
    }
    EXPECT_GT(tput[1], 2.5 * tput[0]);
    EXPECT_GT(tput[2], 2.0 * tput[1]);
    EXPECT_GT(tput[3], tput[2]);
    // Beyond what the KV cache holds, more sequences buy little.
    EXPECT_LT(tput[4], 1.15 * tput[3]);
}

TEST(Simulate, ChunkedPrefillLowersTailTpotWhenLongPromptsArrive) {
    const auto scenario = [](bool chunked) {
        model::Scenario s = llama8b_scenario(0, 0, 20.0, 1500);
        model::RequestClass chat;
        chat.name = "chat";
        chat.share = 20;
        chat.input = model::LengthDistribution::fixed(200);
        chat.output = model::LengthDistribution::fixed(100);
        model::RequestClass doc;
        doc.name = "long";
        doc.share = 1;
        doc.input = model::LengthDistribution::fixed(7500);
        doc.output = model::LengthDistribution::fixed(20);
        s.workload.classes = {chat, doc};
        s.deployment.engine.enable_chunked_prefill = chunked;
        s.deployment.engine.enable_prefix_caching = false;
        if (chunked) {
            s.deployment.engine.max_num_batched_tokens = 512;
        }
        return s;
    };
    const SimResult on = run(scenario(true));
    const SimResult off = run(scenario(false));
    const auto& chat_on = on.classes[0].summary;
    const auto& chat_off = off.classes[0].summary;
    EXPECT_LT(chat_on.tpot.p99.si(), 0.9 * chat_off.tpot.p99.si());
    EXPECT_LT(chat_on.itl.p99.si(), 0.5 * chat_off.itl.p99.si());
}

TEST(Simulate, PrefixCachingCutsPrefillTokensByTheSharedFraction) {
    const auto scenario = [](bool caching) {
        model::Scenario s = llama8b_scenario(0, 0, 2.0, 200);
        model::RequestClass rag;
        rag.name = "rag";
        rag.shared_prefix = 3000;
        rag.input = model::LengthDistribution::fixed(200);
        rag.output = model::LengthDistribution::fixed(20);
        s.workload.classes = {rag};
        s.deployment.engine.enable_prefix_caching = caching;
        return s;
    };
    const SimResult on = run(scenario(true));
    const SimResult off = run(scenario(false));
    EXPECT_EQ(off.prefill_tokens_computed, 200 * 3200);
    // Block-aligned hits: 187 blocks of 16 = 2992 tokens for all but the first request.
    EXPECT_EQ(on.prefill_tokens_computed, 200 * 3200 - 199 * 2992);
    EXPECT_NEAR(on.prefix_hit_rate, 199.0 * 2992 / (200.0 * 3200), 1e-9);
    EXPECT_LT(on.overall.ttft.p50.si(), 0.3 * off.overall.ttft.p50.si());
}

TEST(Simulate, PreemptsWhenKvRunsOutAndStillFinishesEveryRequest) {
    for (const auto mode : {model::PreemptionMode::Recompute, model::PreemptionMode::Swap}) {
        model::Scenario s = llama8b_scenario(200, 600, 1000.0, 64);
        set_kv_pool(s, 0.5);                      // 256 blocks: 4096 tokens for 64 × 800
        s.deployment.engine.max_model_len = 2048; // vLLM must hold one full sequence to start
        s.scheduler.preemption_mode = mode;
        const SimResult r = run(s);
        EXPECT_GT(r.preemptions, 0);
        EXPECT_EQ(r.overall.completed, 64);
        EXPECT_EQ(r.overall.rejected + r.overall.timed_out, 0);
        EXPECT_EQ(r.overall.output_tokens, 64 * 600);
        EXPECT_LE(r.kv_use_max, 1.0);
    }
}

TEST(Simulate, RejectsRequestsLongerThanTheEngineTakes) {
    model::Scenario s = llama8b_scenario(9000, 10, 1.0, 5);
    const SimResult r = run(s, true);
    EXPECT_EQ(r.overall.rejected, 5);
    EXPECT_EQ(r.overall.completed, 0);
    // Nothing served them and they belong to no agent session: no replica, no session, no
    // latencies (absent, not a sentinel value).
    ASSERT_EQ(r.requests.size(), 5u);
    for (const auto& q : r.requests) {
        EXPECT_EQ(q.outcome, Outcome::Rejected);
        EXPECT_FALSE(q.replica.has_value());
        EXPECT_FALSE(q.session.has_value());
        EXPECT_FALSE(q.ttft.has_value());
        EXPECT_FALSE(q.e2e.has_value());
    }
}

model::Scenario overload(bool controlled) {
    model::Scenario s = llama8b_scenario(1000, 200, 60.0, 0);
    s.workload.requests.reset();
    s.workload.duration = Seconds(30);
    set_kv_pool(s, 4.0);
    s.slo.ttft = Seconds(2.0);
    if (controlled) {
        s.cluster.admission.max_concurrency = 96;
        s.cluster.admission.max_queue = 64;
        s.cluster.admission.timeout = Seconds(1.0);
    }
    return s;
}

TEST(Simulate, AdmissionControlKeepsGoodputWhereAnUncontrolledBurstCollapses) {
    const SimResult free_for_all = run(overload(false));
    const SimResult gated = run(overload(true));
    // Uncontrolled, queues grow without bound and almost nothing meets the TTFT SLO.
    EXPECT_EQ(free_for_all.overall.rejected + free_for_all.overall.timed_out, 0);
    EXPECT_GT(gated.overall.rejected + gated.overall.timed_out, 0);
    EXPECT_GT(gated.overall.goodput_rps, 2.0 * free_for_all.overall.goodput_rps);
    double max_waiting = 0;
    for (const auto& b : gated.series) {
        max_waiting = std::max(max_waiting, b.waiting);
    }
    EXPECT_LE(max_waiting, 64.0 + 1.0);
    // Fast fail: nobody waits in the queue longer than the timeout.
    EXPECT_LE(gated.overall.queue.max.si(), 1.0 + 1e-9);
}

TEST(Simulate, StaticBatchingHasWorseTtftThanContinuous) {
    const auto scenario = [](model::BatchingMode mode) {
        model::Scenario s = llama8b_scenario(0, 0, 8.0, 400);
        model::RequestClass c;
        c.input.kind = model::LengthKind::Uniform;
        c.input.min = 100;
        c.input.max = 1500;
        c.output.kind = model::LengthKind::Uniform;
        c.output.min = 10;
        c.output.max = 500;
        s.workload.classes = {c};
        s.scheduler.batching = mode;
        s.scheduler.static_batch_size = 16;
        return s;
    };
    const SimResult cont = run(scenario(model::BatchingMode::Continuous));
    const SimResult stat = run(scenario(model::BatchingMode::Static));
    EXPECT_EQ(stat.overall.completed, 400);
    EXPECT_GT(stat.overall.ttft.mean.si(), 2.0 * cont.overall.ttft.mean.si());
    EXPECT_GT(stat.overall.e2e.p90.si(), cont.overall.e2e.p90.si());
}

TEST(Simulate, PriorityPolicyServesTheUrgentClassFirst) {
    const auto scenario = [](model::SchedulingPolicy p) {
        model::Scenario s = mixed_scenario();
        s.workload.requests_per_s = 30.0;
        s.scheduler.policy = p;
        return s;
    };
    const SimResult fcfs = run(scenario(model::SchedulingPolicy::Fcfs));
    const SimResult prio = run(scenario(model::SchedulingPolicy::Priority));
    EXPECT_LT(prio.classes[2].summary.ttft.p90.si(), fcfs.classes[2].summary.ttft.p90.si());
}

TEST(Simulate, TraceReplayReproducesArrivalsAndTokenTotals) {
    model::Scenario s = llama8b_scenario();
    s.workload.requests.reset();
    s.workload.arrival.kind = model::ArrivalKind::Trace;
    std::int64_t in = 0, out = 0;
    for (int i = 0; i < 300; ++i) {
        const int input = 50 + (i * 37) % 2000;
        const int output = 5 + (i * 53) % 400;
        s.workload.trace.push_back({Seconds(0.1 * i + (i % 7) * 0.013), input, output});
        in += input;
        out += output;
    }
    const SimResult r = run(s, true);
    EXPECT_EQ(r.overall.arrived, 300);
    EXPECT_EQ(r.overall.completed, 300);
    EXPECT_EQ(r.overall.input_tokens, in);
    EXPECT_EQ(r.overall.output_tokens, out);
    // Arrivals keep the trace's timestamps.
    double last = 0;
    for (const auto& q : r.requests) {
        last = std::max(last, q.arrival.si());
    }
    EXPECT_NEAR(last, 0.1 * 299 + (299 % 7) * 0.013, 1e-9);
}

TEST(Simulate, ClosedLoopKeepsItsUsersInTheSystem) {
    model::Scenario s = llama8b_scenario(500, 100, 1.0, 2000);
    s.workload.arrival.kind = model::ArrivalKind::ClosedLoop;
    s.workload.arrival.users = 16;
    const SimResult r = run(s);
    EXPECT_EQ(r.overall.completed, 2000);
    EXPECT_NEAR(r.mean_in_system, 16.0, 0.5);
}

TEST(Simulate, AgentSessionsGrowTheirContextAndHitTheCache) {
    model::Scenario s = llama8b_scenario(0, 0, 0.5, 40);
    model::RequestClass agent;
    agent.name = "agent";
    agent.shared_prefix = 2000;
    agent.input = model::LengthDistribution::fixed(300);
    agent.output = model::LengthDistribution::fixed(100);
    agent.agent = model::AgentSession{6, model::LengthDistribution::fixed(150), Seconds(0.5)};
    s.workload.classes = {agent};
    const SimResult r = run(s, true);
    EXPECT_EQ(r.overall.completed, 40 * 6);
    // Step k re-sends the prefix, the history and a new input.
    std::map<std::int64_t, int> steps_per_session;
    for (const auto& q : r.requests) {
        const int expected = 2000 + 300 + 100 + (q.step - 1) * 250 + 150;
        EXPECT_EQ(q.input_tokens, q.step == 0 ? 2300 : expected);
        ASSERT_TRUE(q.session.has_value());
        ++steps_per_session[*q.session];
    }
    // 40 sessions of 6 steps each.
    EXPECT_EQ(steps_per_session.size(), 40u);
    for (const auto& [session, steps] : steps_per_session) {
        EXPECT_EQ(steps, 6) << "session " << session;
    }
    EXPECT_GT(r.prefix_hit_rate, 0.8);
}

TEST(Simulate, ReplicasShareTheLoadAndPrefixAffinityRaisesHits) {
    const auto scenario = [](model::RouterPolicy p) {
        model::Scenario s = llama8b_scenario(0, 0, 30.0, 1200);
        model::RequestClass rag;
        rag.shared_prefix = 4000;
        rag.prefix_groups = 8;
        rag.input = model::LengthDistribution::fixed(100);
        rag.output = model::LengthDistribution::fixed(50);
        s.workload.classes = {rag};
        set_kv_pool(s, 2.5); // about 5 prefixes per replica
        s.cluster.replicas = 4;
        s.cluster.router = p;
        return s;
    };
    const SimResult rr = run(scenario(model::RouterPolicy::RoundRobin));
    const SimResult aff = run(scenario(model::RouterPolicy::PrefixAffinity));
    ASSERT_EQ(rr.replicas.size(), 4u);
    for (const auto& rep : rr.replicas) {
        EXPECT_EQ(rep.requests, 300);
    }
    EXPECT_GT(aff.prefix_hit_rate, rr.prefix_hit_rate + 0.02);
    EXPECT_EQ(run(scenario(model::RouterPolicy::LeastKv)).overall.completed, 1200);
    EXPECT_EQ(run(scenario(model::RouterPolicy::LeastOutstanding)).overall.completed, 1200);
}

TEST(Simulate, ColdStartDelaysTheFirstTokens) {
    model::Scenario s = llama8b_scenario(200, 20, 5.0, 20);
    s.cluster.cold_start.load_bandwidth = BytesPerSecond(2e9);
    s.cluster.cold_start.startup = Seconds(5);
    s.cluster.cold_start.at_start = true;
    const SimResult r = run(s);
    const double load = model::estimate_memory(s.deployment).weights.si() / 2e9 + 5;
    EXPECT_NEAR(r.replicas[0].available.si(), load, 1e-6);
    EXPECT_EQ(r.overall.completed, 20);
    EXPECT_GT(r.overall.ttft.p50.si(), load - 4.0);
}

TEST(Simulate, HybridRoutingPinsClassesAndFallsBackToTheCloudWithItsSpend) {
    model::Scenario s = overload(true);
    model::RequestClass local;
    local.name = "sensitive";
    local.route = model::RouteTarget::Local;
    local.input = model::LengthDistribution::fixed(1000);
    local.output = model::LengthDistribution::fixed(200);
    model::RequestClass any = local;
    any.name = "chat";
    any.route = model::RouteTarget::Any;
    model::RequestClass cloud = local;
    cloud.name = "complex";
    cloud.route = model::RouteTarget::Cloud;
    cloud.share = 0.2;
    s.workload.classes = {local, any, cloud};
    model::CloudEndpoint ep;
    ep.input_price = model::Price{{3.0, "USD"}, model::PriceBasis::MillionTokens};
    ep.output_price = model::Price{{15.0, "USD"}, model::PriceBasis::MillionTokens};
    s.cluster.cloud = ep;
    const SimResult r = run(s, true);
    const auto& sens = r.classes[0].summary;
    const auto& chat = r.classes[1].summary;
    const auto& cx = r.classes[2].summary;
    EXPECT_EQ(sens.cloud, 0);
    EXPECT_GT(sens.rejected + sens.timed_out, 0); // sensitive requests never leave
    EXPECT_GT(chat.cloud, 0);                     // overflow goes to the cloud
    EXPECT_EQ(chat.rejected + chat.timed_out, 0);
    EXPECT_EQ(cx.cloud, cx.completed);
    EXPECT_EQ(cx.completed, cx.arrived);
    const double cloud_requests = static_cast<double>(chat.cloud + cx.cloud);
    EXPECT_NEAR(r.cloud_spend.amount, cloud_requests * (1000 * 3.0 + 200 * 15.0) / 1e6, 1e-9);
    // A request served in the cloud has no replica; one served locally has its replica (the
    // only one).
    for (const auto& q : r.requests) {
        if (q.outcome == Outcome::Cloud) {
            EXPECT_FALSE(q.replica.has_value());
        } else if (q.outcome == Outcome::Completed) {
            EXPECT_EQ(q.replica, std::optional<int>(0));
        }
    }
}

TEST(Simulate, ReportsADeploymentThatDoesNotFit) {
    model::Scenario s = llama8b_scenario();
    s.deployment.model = model::test::llama31_70b();
    const SimResult r = simulate(s);
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.reasons.empty());
}

TEST(Simulate, StopsWhenAsked) {
    model::Scenario s = llama8b_scenario(500, 100, 50.0, 100000);
    std::stop_source src;
    int calls = 0;
    const SimResult r = simulate(s, {}, src.get_token(), [&](double) {
        if (++calls == 2) {
            src.request_stop();
        }
    });
    EXPECT_TRUE(r.stopped);
    EXPECT_LT(r.overall.completed, 100000);
    EXPECT_EQ(r.overall.arrived, r.overall.completed + r.overall.cancelled);
}

} // namespace
} // namespace gpuplan::sim
