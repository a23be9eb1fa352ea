#pragma once
/// The scheduler policy of a replica (layer-private): the engine's choice of what runs next.
/// Once per step the replica hands the policy its SchedulerState (waiting, running and swapped
/// sequences, the KV pool, the token budget); the policy decides which running sequences get
/// tokens and how many, which to preempt when blocks run out, and which waiting or swapped
/// requests to admit, and carries each decision out through the state's mechanics
/// (SchedulerState::schedule, preempt, admit, swap_in). Step times, events and metrics stay
/// with the replica (sim/detail/replica.hpp), so a policy is a pure function of the state.
///
/// One policy per file under sim/detail/policies/, chosen once per replica by
/// make_scheduler_policy from the scenario's engine settings. One virtual call per step
/// (form); nothing per token.

#include "sim/detail/scheduler_state.hpp"

#include <memory>

namespace gpuplan::sim::detail {

class SchedulerPolicy {
  public:
    virtual ~SchedulerPolicy() = default;
    SchedulerPolicy(const SchedulerPolicy&) = delete;
    SchedulerPolicy& operator=(const SchedulerPolicy&) = delete;

    /// Forms the next step's batch on `s`, which begin_step/begin_attempt have reset: the
    /// batch is empty and the budget full. May leave the batch empty (nothing to run, or wait:
    /// SchedulerState::wake_at). A step that preempted its only sequence is formed again (up
    /// to four attempts), so a policy need not retry itself.
    virtual void form(SchedulerState& s) = 0;
    /// Whether a request of `prompt` + `output` tokens can ever be scheduled under this policy's
    /// own limits (the replica checks max_model_len and the KV pool). True by default.
    [[nodiscard]] virtual bool can_schedule(int prompt, int output,
                                            const ReplicaConfig& config) const;
    /// Whether up to pp micro-batches may be in flight with pipeline parallelism (false: one
    /// batch at a time).
    [[nodiscard]] virtual bool pipelines() const noexcept = 0;
    /// Whether admissions look up the prefix cache (the pool hashes blocks only then).
    [[nodiscard]] virtual bool uses_prefix_cache() const noexcept = 0;
    /// The policy's name, as in docs/simulator.md.
    [[nodiscard]] virtual const char* name() const noexcept = 0;

  protected:
    SchedulerPolicy() = default;
};

/// vLLM v1's continuous batching (sim/detail/policies/continuous_batching.cpp): running
/// sequences first (decodes, then unfinished prefills), preempting by the queue order when
/// blocks run out; then swapped, then waiting requests, only if nothing was preempted.
[[nodiscard]] std::unique_ptr<SchedulerPolicy> make_continuous_batching();
/// Static batching (sim/detail/policies/static_batching.cpp): a batch of up to
/// static_batch_size requests, formed when that many wait or the head has waited
/// static_max_wait, runs to completion before the next is formed.
[[nodiscard]] std::unique_ptr<SchedulerPolicy> make_static_batching();

/// llama.cpp server's fixed slots (sim/detail/policies/llama_cpp_slots.cpp): max_num_seqs
/// slots of max_model_len tokens of KV each, reserved when a request takes a slot; generating
/// slots add a token each, then pending prompts fill the token budget slot by slot; requests
/// wait for a free slot and nothing is preempted.
[[nodiscard]] std::unique_ptr<SchedulerPolicy> make_llama_cpp_slots();

/// TensorRT-LLM's in-flight batching (sim/detail/policies/tensorrt_llm.cpp): the capacity
/// scheduler `capacity` (GUARANTEED_NO_EVICT reserves prompt + max new tokens at admission and
/// never evicts; MAX_UTILIZATION admits on next-step blocks and pauses the newest request when
/// they run out), then generation tokens before context chunks within max_num_tokens.
[[nodiscard]] std::unique_ptr<SchedulerPolicy> make_tensorrt_llm(model::CapacityScheduler capacity);

/// SGLang's scheduler (sim/detail/policies/sglang.cpp): each step either a prefill batch of
/// waiting requests admitted against the KV left after the running requests' expected
/// writes (new_token_ratio × their remaining tokens), in `config.schedule_policy` order (fcfs,
/// lpm), or one decode step of every running request, retracting the fewest-generated ones
/// when KV runs out.
[[nodiscard]] std::unique_ptr<SchedulerPolicy> make_sglang(const model::SchedulerConfig& config);

/// The policy a replica with `config` runs: static batching when config.scheduler.batching
/// asks for it, else the engine's own scheduler (llama.cpp: fixed slots; TensorRT-LLM: its
/// capacity and micro-batch schedulers; SGLang: its prefill-or-decode scheduler; vLLM: its
/// continuous batching).
[[nodiscard]] std::unique_ptr<SchedulerPolicy> make_scheduler_policy(const ReplicaConfig& config);

} // namespace gpuplan::sim::detail
