// Scheduler policies on hand-built replica states: each test sets up waiting and running
// sequences and a KV pool, asks the policy for one step, and checks the batch it formed against
// the schedule worked out by hand from the policy's rules.
#include "model/efficiency.hpp"
#include "model/step_cost.hpp"
#include "sim/detail/metrics.hpp"
#include "sim/detail/request.hpp"
#include "sim/detail/scheduler_policy.hpp"
#include "sim/detail/scheduler_state.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

namespace gpuplan::sim {
namespace {

using detail::ReplicaConfig;
using detail::ReqState;
using detail::Request;

/// One replica's scheduling state and policy without a simulation: requests are enqueued by
/// hand and finish_step() plays the replica's end of a step (computed tokens advance, a step
/// that completes the pending tokens emits one, finished sequences leave).
class Bench {
  public:
    explicit Bench(const ReplicaConfig& config)
        : metrics_({detail::ClassSlo{}}, 1, false, false, 0),
          policy_(detail::make_scheduler_policy(config)),
          state_(pool_, metrics_, config, policy_->uses_prefix_cache()) {}

    std::uint32_t add(int prompt, int output, int priority = 0, Tick at = 0) {
        const std::uint32_t slot = pool_.acquire();
        Request& r = pool_[slot];
        r.id = next_id_++;
        r.stream_id = r.id + 1; // distinct contents: no prefix-cache hits between requests
        r.prompt = prompt;
        r.output = output;
        r.priority = priority;
        r.enqueued = at;
        state_.enqueue(slot, at);
        return slot;
    }

    /// Forms one step at `now` (a single attempt) and returns the batch's (slot, tokens).
    std::vector<std::pair<std::uint32_t, int>> form(Tick now = 0) {
        state_.begin_step(now);
        state_.begin_attempt();
        policy_->form(state_);
        std::vector<std::pair<std::uint32_t, int>> out;
        for (const std::uint32_t slot : state_.batch()) {
            if (pool_[slot].in_batch) {
                out.emplace_back(slot, pool_[slot].sched);
            }
        }
        return out;
    }

    void finish_step() {
        for (const std::uint32_t slot : state_.batch()) {
            Request& r = pool_[slot];
            if (!r.in_batch) {
                continue;
            }
            r.in_batch = false;
            r.computed += r.sched;
            r.sched = 0;
            if (r.computed >= r.num_tokens()) {
                ++r.generated;
                if (r.generated >= r.output) {
                    state_.release(r);
                    r.state = ReqState::Done;
                }
            }
        }
        state_.drop_done();
    }

    Request& operator[](std::uint32_t slot) { return pool_[slot]; }
    detail::SchedulerState& state() { return state_; }
    const detail::SchedulerPolicy& policy() const { return *policy_; }

  private:
    detail::RequestPool pool_;
    detail::Metrics metrics_;
    std::unique_ptr<detail::SchedulerPolicy> policy_;
    detail::SchedulerState state_;
    std::uint64_t next_id_ = 0;
};

using Batch = std::vector<std::pair<std::uint32_t, int>>;

ReplicaConfig continuous(int budget, std::int64_t blocks) {
    ReplicaConfig c;
    c.max_num_batched_tokens = budget;
    c.block_size = 16;
    c.kv_blocks = blocks;
    c.prefix_caching = false;
    return c;
}

ReplicaConfig static_batching(int size, std::int64_t blocks) {
    ReplicaConfig c;
    c.block_size = 16;
    c.kv_blocks = blocks;
    c.scheduler.batching = model::BatchingMode::Static;
    c.scheduler.static_batch_size = size;
    c.scheduler.static_max_wait = Seconds(0.05);
    return c;
}

ReplicaConfig llama_cpp(int slots, int context, std::int64_t blocks) {
    ReplicaConfig c;
    c.engine = model::EngineKind::LlamaCpp;
    c.max_num_seqs = slots;
    c.max_model_len = context;
    c.max_num_batched_tokens = 512;
    c.block_size = 256;
    c.kv_blocks = blocks;
    c.prefix_caching = false;
    return c;
}

ReplicaConfig tensorrt_llm(model::CapacityScheduler capacity, int budget, std::int64_t blocks) {
    ReplicaConfig c;
    c.engine = model::EngineKind::TensorRtLlm;
    c.scheduler.capacity_scheduler = capacity;
    c.max_num_batched_tokens = budget;
    c.block_size = 16;
    c.kv_blocks = blocks;
    c.chunked_prefill = false; // TensorRT-LLM's default
    c.prefix_caching = false;
    return c;
}

/// SGLang's defaults but the pool: one token per page, chunked prefill on, `tokens` KV slots.
ReplicaConfig sglang(int budget, std::int64_t tokens) {
    ReplicaConfig c;
    c.engine = model::EngineKind::Sglang;
    c.max_num_batched_tokens = budget;
    c.block_size = 1;
    c.kv_blocks = tokens;
    c.prefix_caching = false;
    return c;
}

constexpr auto kNoEvict = model::CapacityScheduler::GuaranteedNoEvict;
constexpr auto kMaxUtil = model::CapacityScheduler::MaxUtilization;

TEST(SchedulerPolicy, SelectedFromTheBatchingModeAndTheEngine) {
    const auto cont = detail::make_scheduler_policy(continuous(512, 100));
    EXPECT_STREQ(cont->name(), "continuous");
    EXPECT_TRUE(cont->pipelines());
    EXPECT_TRUE(cont->uses_prefix_cache());
    const auto stat = detail::make_scheduler_policy(static_batching(4, 100));
    EXPECT_STREQ(stat->name(), "static");
    EXPECT_FALSE(stat->pipelines());
    EXPECT_FALSE(stat->uses_prefix_cache());
    const auto slots = detail::make_scheduler_policy(llama_cpp(2, 1024, 8));
    EXPECT_STREQ(slots->name(), "llama.cpp-slots");
    EXPECT_FALSE(slots->pipelines());
    ReplicaConfig static_llama = llama_cpp(2, 1024, 8);
    static_llama.scheduler.batching = model::BatchingMode::Static; // asked for explicitly
    EXPECT_STREQ(detail::make_scheduler_policy(static_llama)->name(), "static");
    const auto trt = detail::make_scheduler_policy(tensorrt_llm(kNoEvict, 512, 100));
    EXPECT_STREQ(trt->name(), "tensorrt-llm-guaranteed-no-evict");
    EXPECT_TRUE(trt->pipelines());
    EXPECT_TRUE(trt->uses_prefix_cache()); // KV block reuse
    EXPECT_STREQ(detail::make_scheduler_policy(tensorrt_llm(kMaxUtil, 512, 100))->name(),
                 "tensorrt-llm-max-utilization");
    const auto sgl = detail::make_scheduler_policy(sglang(512, 1000));
    EXPECT_STREQ(sgl->name(), "sglang");
    EXPECT_FALSE(sgl->pipelines());
    EXPECT_TRUE(sgl->uses_prefix_cache()); // the radix cache
    ReplicaConfig lpm = sglang(512, 1000);
    lpm.scheduler.schedule_policy = model::SglangSchedulePolicy::Lpm;
    EXPECT_STREQ(detail::make_scheduler_policy(lpm)->name(), "sglang-lpm");
    // vLLM keeps its continuous batching, whatever the TensorRT-LLM knob says.
    ReplicaConfig vllm = continuous(512, 100);
    vllm.scheduler.capacity_scheduler = kMaxUtil;
    EXPECT_STREQ(detail::make_scheduler_policy(vllm)->name(), "continuous");
}

TEST(ContinuousBatchingPolicy, ChunkedPrefillSplitsTheTokenBudget) {
    // Budget 512: the first prompt takes 300, the second the remaining 212 (a chunk).
    Bench b(continuous(512, 1000));
    const std::uint32_t x = b.add(300, 10);
    const std::uint32_t y = b.add(400, 10);
    EXPECT_EQ(b.form(), (Batch{{x, 300}, {y, 212}}));
    EXPECT_EQ(b.state().budget(), 0);
    EXPECT_EQ(b.state().running().size(), 2U);
    // ceil(300 / 16) + ceil(212 / 16) = 19 + 14 blocks.
    EXPECT_EQ(b.state().blocks().used(), 33);
    // Next step: x decodes one token, y's prefill goes on with 400 − 212 = 188 tokens.
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 188}}));
    EXPECT_EQ(b.state().budget(), 512 - 1 - 188);
}

TEST(ContinuousBatchingPolicy, WithoutChunkedPrefillAPromptOverTheBudgetLeftWaits) {
    ReplicaConfig c = continuous(512, 1000);
    c.chunked_prefill = false;
    Bench b(c);
    const std::uint32_t x = b.add(300, 10);
    const std::uint32_t y = b.add(400, 10);
    const std::uint32_t z = b.add(100, 10);
    // 400 > 212 left: y waits, and so does z behind it (the queue is FCFS).
    EXPECT_EQ(b.form(), (Batch{{x, 300}}));
    EXPECT_EQ(b.state().waiting(), 2);
    EXPECT_EQ(b.state().front_waiting(), y);
    (void)z;
    EXPECT_FALSE(b.policy().can_schedule(513, 1, c));
    EXPECT_TRUE(b.policy().can_schedule(512, 1, c));
}

// Four blocks of 16 tokens: x and y (31-token prompts) take two each; their second decode
// (33 tokens) needs a third block for x.
TEST(ContinuousBatchingPolicy, FcfsPreemptsTheLastAdmittedAndAdmitsNothing) {
    Bench b(continuous(512, 4));
    const std::uint32_t x = b.add(31, 10);
    const std::uint32_t y = b.add(31, 10);
    const std::uint32_t z = b.add(10, 10);
    EXPECT_EQ(b.form(), (Batch{{x, 31}, {y, 31}})); // z: no free block
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 1}})); // 32 tokens fit two blocks
    b.finish_step();
    // x needs 33 tokens = 3 blocks: y (admitted last) is preempted to recompute; its two blocks
    // free, x takes one, and the step admits nothing although z would fit the other.
    EXPECT_EQ(b.form(), (Batch{{x, 1}}));
    EXPECT_TRUE(b.state().preempted());
    EXPECT_EQ(b.state().preempted_count(), 1);
    EXPECT_EQ(b[y].state, ReqState::Waiting);
    EXPECT_EQ(b[y].computed, 0);
    EXPECT_EQ(b[y].preemptions, 1);
    EXPECT_EQ(b.state().blocks().used(), 3);
    EXPECT_EQ(b.state().front_waiting(), y); // back at the head of the queue
    EXPECT_EQ(b.state().waiting(), 2);
    (void)z;
}

TEST(ContinuousBatchingPolicy, PriorityPreemptsTheLowestPriorityEvenItself) {
    ReplicaConfig c = continuous(512, 4);
    c.scheduler.policy = model::SchedulingPolicy::Priority;
    Bench b(c);
    const std::uint32_t x = b.add(31, 10, 1); // priority 1 (served after 0)
    EXPECT_EQ(b.form(), (Batch{{x, 31}}));
    b.finish_step();
    const std::uint32_t y = b.add(31, 10, 0);
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 31}}));
    b.finish_step();
    // x needs a third block; the victim is the largest (priority, arrival): x itself. Running
    // requests stop there, and the step admits nothing.
    EXPECT_TRUE(b.form().empty());
    EXPECT_EQ(b[x].state, ReqState::Waiting);
    EXPECT_EQ(b[y].state, ReqState::Running);
    // The replica forms again: y decodes; x (33 tokens, 3 blocks) does not fit the 2 free.
    EXPECT_EQ(b.form(), (Batch{{y, 1}}));
    EXPECT_EQ(b.state().waiting(), 1);
}

TEST(ContinuousBatchingPolicy, SwappedSequencesResumeBeforeWaitingOnes) {
    ReplicaConfig c = continuous(512, 4);
    c.scheduler.preemption_mode = model::PreemptionMode::Swap;
    c.block_bytes = 1e6;
    c.swap_bandwidth = 1e9;
    Bench b(c);
    const std::uint32_t x = b.add(31, 3);
    const std::uint32_t y = b.add(31, 10);
    const std::uint32_t z = b.add(10, 10);
    (void)b.form();
    b.finish_step();
    (void)b.form();
    b.finish_step();
    // As with recompute, y is the victim, but its 2 computed blocks go to host memory:
    // 2 × 1 MB at 1 GB/s = 2 ms of traffic in this step.
    EXPECT_EQ(b.form(), (Batch{{x, 1}}));
    EXPECT_EQ(b[y].state, ReqState::Swapped);
    EXPECT_EQ(b[y].computed, 32);
    EXPECT_DOUBLE_EQ(b.state().swap_time(), 2e-3);
    EXPECT_EQ(b.state().waiting(), 1); // z only
    b.finish_step();                   // x's third token: done, its 3 blocks free
    // y comes back first (decode of token 33: 3 blocks, 2 ms to copy its 2 blocks in), then
    // z is admitted into the last free block.
    EXPECT_EQ(b.form(), (Batch{{y, 1}, {z, 10}}));
    EXPECT_DOUBLE_EQ(b.state().swap_time(), 2e-3);
    EXPECT_EQ(b.state().blocks().used(), 4);
}

TEST(StaticBatchingPolicy, APartialBatchWaitsForTheDeadline) {
    Bench b(static_batching(3, 100));
    const std::uint32_t x = b.add(100, 28);
    const std::uint32_t y = b.add(100, 28);
    // Two of three wait: nothing runs before the head has waited 50 ms.
    EXPECT_TRUE(b.form(0).empty());
    ASSERT_TRUE(b.state().wake().has_value());
    EXPECT_EQ(*b.state().wake(), 50'000'000);
    // At the deadline the batch forms with whole prompts, each reserving the blocks of its
    // prompt and output: 2 × ceil(128 / 16) = 16 blocks.
    EXPECT_EQ(b.form(50'000'000), (Batch{{x, 100}, {y, 100}}));
    EXPECT_FALSE(b.state().wake().has_value());
    EXPECT_EQ(b.state().blocks().used(), 16);
}

TEST(StaticBatchingPolicy, AFullBatchFormsAtOnceAndRunsToCompletion) {
    Bench b(static_batching(3, 100));
    const std::uint32_t w = b.add(100, 2);
    const std::uint32_t x = b.add(200, 2);
    const std::uint32_t y = b.add(300, 3);
    const std::uint32_t z = b.add(50, 2);
    EXPECT_EQ(b.form(0), (Batch{{w, 100}, {x, 200}, {y, 300}})); // three, no wait
    b.finish_step();
    // The batch decodes; z waits although blocks are free.
    EXPECT_EQ(b.form(1), (Batch{{w, 1}, {x, 1}, {y, 1}}));
    b.finish_step(); // w and x finish
    EXPECT_EQ(b.form(2), (Batch{{y, 1}}));
    b.finish_step(); // y finishes: the next batch starts (z alone, its 50 ms long gone)
    EXPECT_EQ(b.form(100'000'000), (Batch{{z, 50}}));
}

TEST(StaticBatchingPolicy, MembersReserveTheirWholeLengthUpFront) {
    // 20 blocks: two members of ceil((100 + 28) / 16) = 8 blocks fit, a third does not.
    Bench b(static_batching(3, 20));
    const std::uint32_t x = b.add(100, 28);
    const std::uint32_t y = b.add(100, 28);
    (void)b.add(100, 28);
    EXPECT_EQ(b.form(0), (Batch{{x, 100}, {y, 100}}));
    EXPECT_EQ(b.state().blocks().used(), 16);
    EXPECT_EQ(b.state().waiting(), 1);
}

TEST(LlamaCppSlotsPolicy, SlotsReserveTheirContextAndLaterRequestsWait) {
    // Two slots of 1024 tokens = 4 blocks of 256 each; budget 512.
    Bench b(llama_cpp(2, 1024, 8));
    const std::uint32_t x = b.add(300, 10);
    const std::uint32_t y = b.add(400, 10);
    const std::uint32_t z = b.add(100, 10);
    // x and y take the slots (300, then the 212 tokens left); z waits for a slot although
    // the budget is spent anyway.
    EXPECT_EQ(b.form(), (Batch{{x, 300}, {y, 212}}));
    EXPECT_EQ(b.state().blocks().used(), 8); // 2 × 4 blocks, whatever the prompts
    EXPECT_EQ(b.state().waiting(), 1);
    EXPECT_EQ(b.state().front_waiting(), z);
    // Next update: x's sampled token first, then y's prompt goes on (400 − 212 = 188).
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 188}}));
    EXPECT_EQ(b.state().blocks().used(), 8);
    EXPECT_EQ(b.state().waiting(), 1);
}

TEST(LlamaCppSlotsPolicy, AFreedSlotTakesTheNextRequestAndNothingIsPreempted) {
    // One slot of 64 tokens (4 blocks of 16) in a pool of 4 blocks.
    ReplicaConfig c = llama_cpp(1, 64, 4);
    c.block_size = 16;
    Bench b(c);
    const std::uint32_t x = b.add(30, 2);
    const std::uint32_t y = b.add(20, 2);
    EXPECT_EQ(b.form(), (Batch{{x, 30}}));
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}})); // token 2: x is done after this update
    EXPECT_FALSE(b.state().preempted());
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{y, 20}}));
    EXPECT_EQ(b.state().blocks().used(), 4);
    // A slot context larger than the pool could never be taken: no request fits.
    ReplicaConfig small = c;
    small.kv_blocks = 3;
    EXPECT_FALSE(detail::make_scheduler_policy(small)->can_schedule(10, 10, small));
    EXPECT_TRUE(detail::make_scheduler_policy(c)->can_schedule(10, 10, c));
}

TEST(LlamaCppSlotsPolicy, ScenarioEngineKindSelectsIt) {
    // Llama-3-8B under llama.cpp (engine.kind: llama.cpp) with two slots of 1024 tokens and a
    // budget of 512: 600-token prompts are fed in pieces even with chunked prefill off (as
    // llama-server feeds every prompt in n_batch pieces; vLLM's continuous batching would
    // refuse them as never fitting a step), at most two requests run at once,
    // none is ever preempted, and all 40 complete.
    model::Scenario s = test::llama8b_scenario(600, 32, 50.0, 40);
    s.deployment.engine.kind = model::EngineKind::LlamaCpp;
    s.deployment.engine.max_model_len = 1024;
    s.deployment.engine.max_num_seqs = 2;
    s.deployment.engine.max_num_batched_tokens = 512;
    s.deployment.engine.enable_chunked_prefill = false;
    const SimResult r = simulate(s);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.overall.completed, 40);
    EXPECT_EQ(r.preemptions, 0);
    EXPECT_LE(r.mean_running, 2.0);
    // 50 requests/s against a service time of far more than 40 ms per request keep both
    // slots busy but for the last request's tail.
    EXPECT_GT(r.mean_running, 1.0);
}

// Ten blocks of 16 tokens. Under GUARANTEED_NO_EVICT x (31 + 33 = 64 tokens: 4 blocks) is
// admitted; y (31 + 81 = 112 tokens: 7 blocks) does not fit the 6 left and stops admission, so
// z (10 + 10: 2 blocks) waits behind it although it would fit.
TEST(TensorRtLlmPolicy, GuaranteedNoEvictReservesPromptPlusMaxTokensInOrder) {
    Bench b(tensorrt_llm(kNoEvict, 512, 10));
    const std::uint32_t x = b.add(31, 33);
    const std::uint32_t y = b.add(31, 81);
    const std::uint32_t z = b.add(10, 10);
    EXPECT_EQ(b.form(), (Batch{{x, 31}}));
    EXPECT_EQ(b.state().blocks().used(), 4); // the whole lifetime, not ceil(31 / 16) = 2
    EXPECT_EQ(b.state().waiting(), 2);
    EXPECT_EQ(b.state().front_waiting(), y);
    (void)z;
}

// Ten blocks: x (31 + 33: 4 blocks) and y (31 + 65 = 96: 6 blocks) fill the pool at admission;
// z (2 blocks) waits. They decode to the end without a preemption (x never holds more than
// 64 tokens nor y more than 96: the blocks reserved). z is admitted in the step after x's 33rd
// token frees x's 4 blocks.
TEST(TensorRtLlmPolicy, GuaranteedNoEvictNeverPreempts) {
    Bench b(tensorrt_llm(kNoEvict, 512, 10));
    const std::uint32_t x = b.add(31, 33);
    const std::uint32_t y = b.add(31, 65);
    const std::uint32_t z = b.add(10, 10);
    EXPECT_EQ(b.form(), (Batch{{x, 31}, {y, 31}}));
    EXPECT_EQ(b.state().blocks().used(), 10);
    b.finish_step(); // token 1 of each
    for (int step = 2; step <= 33; ++step) {
        EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 1}})) << "step " << step;
        EXPECT_FALSE(b.state().preempted());
        EXPECT_EQ(b.state().blocks().used(), 10);
        b.finish_step();
    }
    EXPECT_EQ(b[x].state, ReqState::Done);
    EXPECT_EQ(b.form(), (Batch{{y, 1}, {z, 10}}));
    EXPECT_EQ(b.state().blocks().used(), 6 + 2);
    EXPECT_EQ(b[y].preemptions, 0);
}

// Four blocks, the same requests as the vLLM case above: MAX_UTILIZATION admits on the blocks
// of the first step (2 each for 31-token prompts); at 33 tokens x needs a third block and the
// most recently started request, y, is paused: its blocks freed, its context to be recomputed,
// and nothing starts in that step. GUARANTEED_NO_EVICT on the same pool admits x alone
// (31 + 10 = 41 tokens: 3 blocks; y would need 3 of the 1 left).
TEST(TensorRtLlmPolicy, MaxUtilizationPausesTheNewestRequest) {
    Bench b(tensorrt_llm(kMaxUtil, 512, 4));
    const std::uint32_t x = b.add(31, 10);
    const std::uint32_t y = b.add(31, 10);
    const std::uint32_t z = b.add(10, 10);
    EXPECT_EQ(b.form(), (Batch{{x, 31}, {y, 31}}));
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 1}}));
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}}));
    EXPECT_EQ(b.state().preempted_count(), 1);
    EXPECT_EQ(b[y].state, ReqState::Waiting);
    EXPECT_EQ(b[y].computed, 0);
    EXPECT_EQ(b.state().front_waiting(), y);
    EXPECT_EQ(b.state().blocks().used(), 3);
    (void)z;

    Bench g(tensorrt_llm(kNoEvict, 512, 4));
    const std::uint32_t gx = g.add(31, 10);
    (void)g.add(31, 10);
    EXPECT_EQ(g.form(), (Batch{{gx, 31}}));
    EXPECT_EQ(g.state().blocks().used(), 3);
}

// Chunked context, budget 100, blocks of 16: generation tokens come first, then a context
// chunk of what is left floored to whole blocks (99 → 96) unless it is the prompt's rest.
TEST(TensorRtLlmPolicy, ChunkedContextComesAfterGenerationInWholeBlocks) {
    ReplicaConfig c = tensorrt_llm(kNoEvict, 100, 1000);
    c.chunked_prefill = true;
    Bench b(c);
    const std::uint32_t x = b.add(31, 5);
    EXPECT_EQ(b.form(), (Batch{{x, 31}}));
    b.finish_step();
    const std::uint32_t y = b.add(200, 5);
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 96}}));
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 96}}));
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 200 - 96 - 96}}));
}

// Without chunked context (TensorRT-LLM's default) a prompt must fit the tokens left whole:
// y (50) waits while x's 60 leave 40; a prompt over max_num_tokens never runs.
TEST(TensorRtLlmPolicy, WithoutChunkedContextAPromptWaitsForAWholeBudget) {
    const ReplicaConfig c = tensorrt_llm(kNoEvict, 100, 1000);
    Bench b(c);
    const std::uint32_t x = b.add(60, 5);
    const std::uint32_t y = b.add(50, 5);
    EXPECT_EQ(b.form(), (Batch{{x, 60}}));
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 50}}));
    EXPECT_FALSE(b.policy().can_schedule(101, 1, c));
    EXPECT_TRUE(b.policy().can_schedule(100, 1, c));
}

// A simulation under engine.kind tensorrt-llm: long outputs in a pool of 512 blocks of 16
// (1 GiB of KV). GUARANTEED_NO_EVICT never preempts; MAX_UTILIZATION and vLLM, which admit on
// the first step's blocks, run out and preempt.
TEST(TensorRtLlmPolicy, ScenarioEngineKindSelectsIt) {
    model::Scenario s = test::llama8b_scenario(256, 1024, 20.0, 60);
    test::set_kv_pool(s, 1.0);
    s.deployment.engine.block_size = 16;
    const SimResult vllm = simulate(s);
    s.deployment.engine.kind = model::EngineKind::TensorRtLlm;
    const SimResult no_evict = simulate(s);
    s.scheduler.capacity_scheduler = kMaxUtil;
    const SimResult max_util = simulate(s);
    ASSERT_TRUE(vllm.ok && no_evict.ok && max_util.ok);
    EXPECT_EQ(no_evict.overall.completed, 60);
    EXPECT_EQ(max_util.overall.completed, 60);
    EXPECT_GT(vllm.preemptions, 0);
    EXPECT_EQ(no_evict.preemptions, 0);
    EXPECT_GT(max_util.preemptions, 0);
    // 512 blocks hold floor(512 / ceil(1280 / 16)) = 6 whole lifetimes of 80 blocks.
    EXPECT_LE(no_evict.mean_running, 6.0);
}

// A pool of 1,000 tokens. Step 1: x's prompt (100) and output (500) are reserved in full
// (600 < 1,000); y's 600 do not fit the 400 left. Step 2: x has generated 1 token and holds
// 100; the 900 free less x's expected writes, 499 × new_token_ratio 0.7 = 349.3, leave 550.7 <
// 600: y still waits and the step decodes. With schedule_conservativeness 0.5 the ratio is 0.35:
// 900 − 174.65 = 725.35 > 600, so step 2 is a prefill batch of y alone (x does not decode in it).
TEST(SglangPolicy, AdmissionReservesRatioTimesTheRunningRequestsRemainingTokens) {
    Bench b(sglang(512, 1000));
    const std::uint32_t x = b.add(100, 500);
    const std::uint32_t y = b.add(100, 500);
    EXPECT_EQ(b.form(), (Batch{{x, 100}}));
    EXPECT_EQ(b.state().waiting(), 1);
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}}));
    EXPECT_EQ(b.state().front_waiting(), y);

    ReplicaConfig c = sglang(512, 1000);
    c.scheduler.schedule_conservativeness = 0.5;
    Bench h(c);
    const std::uint32_t hx = h.add(100, 500);
    const std::uint32_t hy = h.add(100, 500);
    EXPECT_EQ(h.form(), (Batch{{hx, 100}}));
    h.finish_step();
    EXPECT_EQ(h.form(), (Batch{{hy, 100}}));
    EXPECT_EQ(h.state().waiting(), 0);
}

// A pool of 20 tokens and schedule_conservativeness 0 (new_token_ratio 0: running requests
// reserve nothing). Prompts of 4, outputs of 4 (7 KV tokens at most each). Step 1 admits x and
// y (4 + 4 = 8 each against 20, then 12); step 2 admits z (8 < the 12 free); steps 3-4 decode
// the three (15, then 18 tokens held). Step 5 needs 3 more with 2 free: retract z (fewest
// generated, ties by the queue's order from the back), then y, since the rest would need room
// for 20 more tokens each, but never the last; both go to the back of the queue and are
// prefilled again whole (prompt + 3 generated = 7), both fitting the pool x leaves.
TEST(SglangPolicy, DecodeOutOfMemoryRetractsToTheBackOfTheQueue) {
    ReplicaConfig c = sglang(100, 20);
    c.scheduler.schedule_conservativeness = 0.0;
    Bench b(c);
    const std::uint32_t x = b.add(4, 4);
    const std::uint32_t y = b.add(4, 4);
    const std::uint32_t z = b.add(4, 4);
    EXPECT_EQ(b.form(), (Batch{{x, 4}, {y, 4}}));
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{z, 4}})); // a prefill batch: x and y wait
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 1}, {z, 1}}));
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}, {y, 1}, {z, 1}}));
    EXPECT_EQ(b.state().blocks().used(), 18);
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}}));
    EXPECT_EQ(b.state().preempted_count(), 2);
    EXPECT_EQ(b[y].state, ReqState::Waiting);
    EXPECT_EQ(b[y].computed, 0);
    EXPECT_EQ(b[y].generated, 3);
    EXPECT_EQ(b.state().waiting(), 2);
    EXPECT_EQ(b.state().front_waiting(), z); // retracted first
    EXPECT_EQ(b.state().blocks().used(), 7);
    b.finish_step(); // x's 4th token: done
    EXPECT_EQ(b.form(), (Batch{{z, 7}, {y, 7}}));
}

// lpm: u (no cached prefix) arrived before v, whose first 64 tokens a finished request left in
// the cache. Budget 100, blocks of 16: fcfs prefills u's 100 tokens and v waits; lpm takes v
// first (its 36 uncached tokens), then u's first 64 (the budget left, whole blocks).
TEST(SglangPolicy, LpmTakesTheLongestCachedPrefixFirst) {
    for (const auto order : {model::SglangSchedulePolicy::Fcfs, model::SglangSchedulePolicy::Lpm}) {
        ReplicaConfig c = sglang(100, 1000);
        c.block_size = 16;
        c.prefix_caching = true;
        c.scheduler.schedule_policy = order;
        Bench b(c);
        const std::uint32_t a = b.add(100, 1);
        b[a].shared_id = 7;
        b[a].shared_len = 64;
        EXPECT_EQ(b.form(), (Batch{{a, 100}}));
        b.finish_step(); // a is done; its 4 prefix blocks stay cached
        const std::uint32_t u = b.add(100, 2);
        const std::uint32_t v = b.add(100, 2);
        b[v].shared_id = 7;
        b[v].shared_len = 64;
        EXPECT_EQ(b.state().cached_prefix_tokens(b[v]), 64);
        EXPECT_EQ(b.state().cached_prefix_tokens(b[u]), 0);
        if (order == model::SglangSchedulePolicy::Fcfs) {
            EXPECT_EQ(b.form(), (Batch{{u, 100}}));
            EXPECT_EQ(b.state().front_waiting(), v);
        } else {
            EXPECT_EQ(b.form(), (Batch{{v, 36}, {u, 64}}));
            EXPECT_EQ(b.state().waiting(), 0);
        }
    }
}

// A request's blocks past its shared prefix hold its own tokens: lookups skip them until a
// preemption hashes them, and then find them. x (no shared prefix, 40-token prompt, blocks of
// 16) is prefilled and emits a token; preempted by recompute, its two full blocks are cached.
TEST(SchedulerState, OwnBlocksAreFoundOnlyOnceAPreemptionHashedThem) {
    ReplicaConfig c = continuous(512, 100);
    c.block_size = 16;
    c.prefix_caching = true;
    Bench b(c);
    const std::uint32_t x = b.add(40, 10);
    EXPECT_EQ(b.form(), (Batch{{x, 40}}));
    b.finish_step();
    EXPECT_EQ(b.state().cached_prefix_tokens(b[x]), 0);
    b.state().preempt(0, detail::Requeue::Front);
    EXPECT_EQ(b[x].computed, 0);
    EXPECT_EQ(b.state().cached_prefix_tokens(b[x]), 32);
    EXPECT_EQ(b.form(), (Batch{{x, 9}})); // 41 tokens, the first 32 cached
}

// engine.kind vllm runs vLLM's continuous batching whatever the TensorRT-LLM and SGLang knobs
// hold (the loader refuses them on vLLM; a scenario built in code may still carry them): the
// whole result is identical.
TEST(SchedulerPolicy, VllmIgnoresTheOtherEnginesKnobs) {
    model::Scenario s = test::llama8b_scenario(256, 1024, 20.0, 60);
    test::set_kv_pool(s, 1.0);
    const SimResult plain = simulate(s);
    s.scheduler.capacity_scheduler = kMaxUtil;
    s.scheduler.schedule_policy = model::SglangSchedulePolicy::Lpm;
    s.scheduler.schedule_conservativeness = 0.3;
    const SimResult knobs = simulate(s);
    ASSERT_TRUE(plain.ok);
    EXPECT_GT(plain.preemptions, 0); // the run exercises preemption
    EXPECT_TRUE(plain == knobs);
}

// A simulation under engine.kind sglang (page size 1, SGLang's default) with long outputs in
// 8,192 tokens of KV: every request completes, and the run differs from vLLM's.
TEST(SglangPolicy, ScenarioEngineKindSelectsIt) {
    model::Scenario s = test::llama8b_scenario(256, 1024, 20.0, 60);
    test::set_kv_pool(s, 1.0);
    const SimResult vllm = simulate(s);
    s.deployment.engine.kind = model::EngineKind::Sglang;
    const SimResult sgl = simulate(s);
    s.scheduler.schedule_policy = model::SglangSchedulePolicy::Lpm;
    const SimResult lpm = simulate(s);
    ASSERT_TRUE(vllm.ok && sgl.ok && lpm.ok);
    EXPECT_EQ(sgl.overall.completed, 60);
    EXPECT_EQ(lpm.overall.completed, 60);
    EXPECT_FALSE(sgl == vllm);
}

// The scheduler state sums its plain decodes as they are scheduled and takes a preempted one
// out again (the replica adds the sums to the step's cost at once). Three blocks of 16 tokens:
// a (priority 1, 20-token prompt) runs first; b (priority 0, 16 tokens) joins in the next step.
// In the third, a's decode (context 22) is scheduled, then b's (context 17) needs a second
// block: a, the lowest priority, is preempted out of the batch, leaving b's decode alone.
TEST(SchedulerState, DecodeSumsFollowSchedulingAndPreemption) {
    ReplicaConfig c = continuous(512, 3);
    c.scheduler.policy = model::SchedulingPolicy::Priority;
    c.attention_window = 10;
    Bench b(c);
    const std::uint32_t a = b.add(20, 10, 1);
    EXPECT_EQ(b.form(), (Batch{{a, 20}}));
    EXPECT_EQ(b.state().decode_sums().n, 0); // a prefill
    b.finish_step();
    const std::uint32_t x = b.add(16, 10, 0);
    EXPECT_EQ(b.form(), (Batch{{a, 1}, {x, 16}}));
    EXPECT_EQ(b.state().decode_sums().n, 1);
    EXPECT_EQ(b.state().decode_sums().context, 21); // 20 prompt tokens + the new one
    EXPECT_EQ(b.state().decode_sums().windowed, 10);
    EXPECT_EQ(b.state().others(), (std::vector<std::uint32_t>{x}));
    b.finish_step();
    EXPECT_EQ(b.form(), (Batch{{x, 1}}));
    EXPECT_EQ(b[a].state, ReqState::Waiting);
    EXPECT_EQ(b.state().unscheduled(), 1);
    EXPECT_EQ(b.state().decode_sums().n, 1);
    EXPECT_EQ(b.state().decode_sums().context, 17);
    EXPECT_EQ(b.state().decode_sums().windowed, 10);
}

// Adding the sums at once gives the bits of one add() per sequence: contexts 17, 22 and 4000
// sum to 4039, and capped at a 1024-token window to 17 + 22 + 1024 = 1063.
TEST(SchedulerState, DecodeSumsCostLikeOneSequenceAtATime) {
    model::Scenario s = test::llama8b_scenario();
    s.deployment.model.sliding_window = model::SlidingWindowSpec{};
    s.deployment.model.sliding_window->window = 1024;
    s.deployment.model.sliding_window->windowed_layers = 16;
    const model::StepCostModel m(s.deployment, model::default_profile());
    ASSERT_EQ(m.window(), 1024);
    model::BatchStats one_by_one;
    for (const int context : {17, 22, 4000}) {
        m.add(one_by_one, model::DecodeSeq{context});
    }
    model::BatchStats at_once;
    m.add_decode_sums(at_once, 3, 4039, 1063);
    EXPECT_EQ(at_once.decodes, 3.0);
    EXPECT_EQ(at_once.decode_context, 4039.0);
    EXPECT_EQ(at_once.decode_context_windowed, 1063.0);
    EXPECT_EQ(at_once, one_by_one);
}

} // namespace
} // namespace gpuplan::sim
