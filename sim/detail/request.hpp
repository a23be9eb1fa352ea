#pragma once
/// A request inside the simulator (layer-private). Requests live in a RequestPool; components
/// refer to them by slot index, and events carry (generation << 32 | slot) so an event for a
/// recycled slot is recognised as stale.

#include "sim/result.hpp"
#include "sim/tick.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace gpuplan::sim::detail {

/// Where a request is.
enum class ReqState : std::uint8_t {
    Free,     ///< slot unused
    Gateway,  ///< queued at the gateway (admission control or no replica up)
    Backoff,  ///< rejected, waiting to retry
    Waiting,  ///< in a replica's waiting queue
    Running,  ///< in a replica's running set
    Swapped,  ///< preempted to host memory
    InCloud,  ///< being served by the cloud endpoint
    Transfer, ///< disaggregation: its KV moving from the prefill to the decode pool
    Done,     ///< finished, failed or cancelled (slot about to be recycled)
};

inline constexpr std::uint64_t kNoSession = ~std::uint64_t{0};

struct alignas(64) Request {
    // The fields a cohort step reads of a member whose block is due or whose last token came
    // (SchedulerState::schedule_cohort, end_cohort_step) lead, in one cache line: such a
    // member costs one cache miss, not three.
    std::vector<std::int32_t> blocks; ///< KV block table (prefix caching; else only the count)
    /// The running-decode cohort (SchedulerState): while `in_cohort`, `computed`, `generated`
    /// and `last_token` are as they were before cohort step `cohort_step`; each cohort step
    /// since added one token to each. `run_seq` orders the running set (admission order).
    std::int64_t cohort_step = 0;
    std::uint64_t run_seq = 0;
    int computed = 0; ///< tokens whose KV is computed
    int blocks_held = 0;
    int cls = 0;
    int replica = -1;
    bool in_cohort = false;

    std::uint64_t id = 0; ///< arrival order
    std::uint64_t session = kNoSession;
    std::uint64_t shared_id = 0; ///< content id of the shared prefix (0: none)
    std::uint64_t stream_id = 0; ///< content id of the rest (per request, or per agent session)
    std::uint32_t generation = 0;
    int step = 0;  ///< agent step
    int user = -1; ///< closed-loop client that sent it (-1: open loop)
    int priority = 0;
    int shared_len = 0; ///< tokens of the shared prefix
    int prompt = 0;     ///< prompt tokens
    int output = 0;     ///< tokens to generate
    int generated = 0;
    int sched = 0;         ///< tokens scheduled in the current step
    int cached_tokens = 0; ///< prefix-cache hit at first scheduling
    int preemptions = 0;
    int retries = 0;
    int adapter = -1; ///< engine.lora: the LoRA adapter it names (-1: the base model)
    ReqState state = ReqState::Free;
    bool started = false;   ///< scheduled in an engine step at least once
    bool in_batch = false;  ///< part of the step being formed / running
    bool in_flight = false; ///< in a running step (a PP replica forms the next meanwhile)
    /// Disaggregation: prefilled on the prefill pool and sent to a decode replica, which
    /// delivers its first token when it admits it (SchedulerState::admit).
    bool transferred = false;
    RejectReason rejected_because = RejectReason::None; ///< set when it is rejected
    Tick arrival = 0;
    Tick enqueued = 0; ///< when it entered its replica's waiting queue
    Tick first_scheduled = -1;
    Tick first_token = -1;
    Tick last_token = -1;
    Tick prefill_end = -1;  ///< disaggregation: its prompt's last prefill step ended
    Tick transfer_end = -1; ///< disaggregation: its KV reached the decode pool
    // KV (the block table and count are above).
    int hashed_blocks = 0;       ///< leading blocks whose hash is known
    std::uint64_t last_hash = 0; ///< hash of block hashed_blocks − 1 (root when none)
    int swapped_blocks = 0;      ///< blocks parked in host memory (swap preemption)
    /// Blocks past its shared prefix were ever hashed (preemption): until then no lookup can
    /// find them, since their hashes hold its own stream id (SchedulerState::lookup_limit).
    bool own_hashed = false;

    /// Prompt plus generated tokens: what must be computed before the next token.
    [[nodiscard]] int num_tokens() const noexcept { return prompt + generated; }
};

/// Request slots with a free list; slots and their block vectors are reused, so steady-state
/// simulation allocates nothing per request. Slots live in fixed chunks of kChunk requests
/// (references stay valid as the pool grows), so indexing is one shift and one mask: every
/// engine step indexes the pool several times per scheduled sequence.
class RequestPool {
  public:
    /// A fresh request in a free slot (its generation bumped, its vectors kept).
    std::uint32_t acquire() {
        std::uint32_t slot = 0;
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
        } else {
            if ((size_ & kMask) == 0) {
                chunks_.push_back(std::make_unique<Request[]>(kChunk));
            }
            slot = size_++;
        }
        Request& r = (*this)[slot];
        const std::uint32_t gen = r.generation + 1;
        std::vector<std::int32_t> blocks = std::move(r.blocks);
        blocks.clear();
        r = Request{};
        r.generation = gen;
        r.blocks = std::move(blocks);
        ++live_;
        return slot;
    }
    void release(std::uint32_t slot) {
        (*this)[slot].state = ReqState::Free;
        free_.push_back(slot);
        --live_;
    }
    [[nodiscard]] Request& operator[](std::uint32_t slot) {
        return chunks_[slot >> kChunkBits][slot & kMask];
    }
    [[nodiscard]] const Request& operator[](std::uint32_t slot) const {
        return chunks_[slot >> kChunkBits][slot & kMask];
    }
    /// Event payload naming this request at its current generation.
    [[nodiscard]] std::uint64_t handle(std::uint32_t slot) const {
        return (std::uint64_t{(*this)[slot].generation} << 32) | slot;
    }
    /// The slot of a handle, or nullopt-like ~0u when the request has been recycled.
    [[nodiscard]] std::uint32_t resolve(std::uint64_t handle) const {
        const auto slot = static_cast<std::uint32_t>(handle & 0xffffffffu);
        const auto gen = static_cast<std::uint32_t>(handle >> 32);
        if (slot >= size_ || (*this)[slot].generation != gen ||
            (*this)[slot].state == ReqState::Free) {
            return ~0u;
        }
        return slot;
    }
    [[nodiscard]] std::size_t live() const noexcept { return live_; }
    /// Calls f(slot) for every request in use, in slot order.
    template <class F> void for_each_live(F&& f) {
        for (std::uint32_t i = 0; i < size_; ++i) {
            if ((*this)[i].state != ReqState::Free) {
                f(i);
            }
        }
    }

  private:
    static constexpr std::uint32_t kChunkBits = 8;
    static constexpr std::uint32_t kChunk = std::uint32_t{1} << kChunkBits;
    static constexpr std::uint32_t kMask = kChunk - 1;
    std::vector<std::unique_ptr<Request[]>> chunks_;
    std::uint32_t size_ = 0; // slots ever handed out
    std::vector<std::uint32_t> free_;
    std::size_t live_ = 0;
};

} // namespace gpuplan::sim::detail
