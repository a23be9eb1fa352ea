// SGLang's scheduler (docs/engines.md §4.2-4.3):
// - Each iteration runs either a prefill batch, if the PrefillAdder admits anything (the
//   chunked request in progress first), or one decode step of every running request; the two
//   mix only with enable_mixed_chunk, which is off by default and not modelled
//   (sgl-project/sglang@d51c1c21d1ac07cd5d1de9ead6c99087d8428e79:
//   python/sglang/srt/managers/scheduler.py, run_step;
//   @ad0119fdde519598c25f5c48b95dacaa2b85d607:python/sglang/srt/managers/schedule_policy.py,
//   PrefillAdder).
// - Admission reserves future decode tokens: a waiting request is admitted while its
//   uncached prompt + min(max new tokens, 4096) is below the free and evictable KV less what
//   the running requests are expected to still write, min(remaining tokens, 4096) ×
//   new_token_ratio each, and less what was admitted before it in this batch; the first that
//   does not fit ends the batch. A prompt longer than the chunk budget left
//   (chunked_prefill_size) is cut there and continues as the chunked request.
// - new_token_ratio starts at min(0.7 × schedule_conservativeness, 1), decays by
//   (init − init × 0.14) / 600 per decode step down to init × 0.14, resets to init when the
//   server is idle, and after a retraction is set to
//   min(1, (Σ generated + 20 × requests) ÷ Σ max new tokens) over the requests left
//   (sgl-project/sglang@21ff4b08a19649d55c59ed4bd8383ab9a19e6430:python/sglang/srt/environ.py:
//   SGLANG_INIT_NEW_TOKEN_RATIO 0.7, SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.14,
//   SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600, SGLANG_RETRACT_DECODE_STEPS 20).
// - A decode step that lacks KV retracts requests, fewest generated tokens first (ties: the
//   longest prompt), at least one and until the rest have room for 20 more tokens each, but
//   never the last; they go to the back of the waiting queue and are prefilled again
//   (ScheduleBatch.retract_decode).
// - schedule_policy fcfs keeps the queue order; lpm takes the longest cached prefix first,
//   and falls back to fcfs when more than 128 requests wait (schedule_policy.py).
//
// Approximations: the radix cache is the pool's block-hash prefix cache (one token per block
// at SGLang's page size 1); a retracted request's blocks stay findable for its own resume;
// max_prefill_tokens (16,384 by default, above the chunk budget) and lpm's in-batch
// de-duplication are not modelled; without chunked prefill a prompt over the budget runs
// alone in its prefill batch; one batch at a time with pp > 1.
#include "sim/detail/scheduler_policy.hpp"

#include <algorithm>
#include <utility>

namespace gpuplan::sim::detail {
namespace {

constexpr double kInitNewTokenRatio = 0.7;
constexpr double kMinNewTokenRatioFactor = 0.14;
constexpr int kNewTokenRatioDecaySteps = 600;
constexpr int kRetractDecodeSteps = 20;
constexpr int kClipMaxNewTokens = 4096; // SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
constexpr int kLpmMaxWaiting = 128;     // lpm falls back to fcfs above this queue length

class Sglang final : public SchedulerPolicy {
  public:
    explicit Sglang(const model::SchedulerConfig& c)
        : init_(std::min(kInitNewTokenRatio * c.schedule_conservativeness, 1.0)),
          min_(init_ * kMinNewTokenRatioFactor), decay_((init_ - min_) / kNewTokenRatioDecaySteps),
          ratio_(init_), lpm_(c.schedule_policy == model::SglangSchedulePolicy::Lpm) {}
    void form(SchedulerState& s) override;
    [[nodiscard]] bool can_schedule(int prompt, int output,
                                    const ReplicaConfig& config) const override {
        // Admission needs prompt + clipped output below the whole pool.
        return prompt + std::int64_t{std::min(output, kClipMaxNewTokens)} <
               config.kv_blocks * config.block_size;
    }
    [[nodiscard]] bool pipelines() const noexcept override { return false; }
    [[nodiscard]] bool uses_prefix_cache() const noexcept override { return true; }
    [[nodiscard]] const char* name() const noexcept override {
        return lpm_ ? "sglang-lpm" : "sglang";
    }

  private:
    [[nodiscard]] static int remaining_output(const Request& r) {
        return std::min(r.output - r.generated, kClipMaxNewTokens);
    }
    [[nodiscard]] static int chunk(const SchedulerState& s, int tokens);
    [[nodiscard]] double rem_total(const SchedulerState& s) const;
    [[nodiscard]] static bool continue_chunked(SchedulerState& s);
    [[nodiscard]] bool admit_one(SchedulerState& s, std::uint32_t slot, double& rem,
                                 bool& stop) const;
    [[nodiscard]] bool prefill(SchedulerState& s);
    void decode(SchedulerState& s);
    void retract(SchedulerState& s);

    double init_;
    double min_;
    double decay_;
    double ratio_; ///< new_token_ratio: the share of their remaining tokens running requests
                   ///< are expected to still write
    bool lpm_;
    std::vector<std::uint32_t> order_;                 // scratch: the queue, retraction order
    std::vector<std::pair<int, std::uint32_t>> keyed_; // scratch: lpm's (cached tokens, slot)
};

// The prefill tokens of a request with `tokens` left that the chunk budget gives it: all of
// them, or (chunked prefill) what the budget has left floored to whole pages; 0: wait.
int Sglang::chunk(const SchedulerState& s, int tokens) {
    if (tokens <= s.budget() || !s.config().chunked_prefill) {
        return tokens;
    }
    const int page = s.config().block_size;
    return std::max(s.budget(), 0) / page * page;
}

// Free and evictable KV tokens less the running requests' expected writes (PrefillAdder's
// rem_total_tokens before anything is added).
double Sglang::rem_total(const SchedulerState& s) const {
    double rem = static_cast<double>(s.blocks().free()) * s.config().block_size;
    for (const std::uint32_t slot : s.running()) {
        const Request& r = s.request(slot);
        if (SchedulerState::is_decode(r)) {
            rem -= remaining_output(r) * ratio_;
        } else { // the chunked request: its prompt's rest and outputs in full
            rem -= (r.num_tokens() - r.computed) + remaining_output(r);
        }
    }
    return rem;
}

// The chunked request in progress gets its next chunk first (add_chunked_req).
bool Sglang::continue_chunked(SchedulerState& s) {
    for (const std::uint32_t slot : s.running()) {
        Request& r = s.request(slot);
        if (r.in_batch || SchedulerState::is_decode(r)) {
            continue;
        }
        const int n = chunk(s, r.num_tokens() - r.computed);
        if (n <= 0 || !s.grow(r, r.computed + n)) {
            return false;
        }
        s.schedule(slot, r, n); // rem_total counted it already
        return true;
    }
    return false;
}

// PrefillAdder.add_one_req for waiting request `slot`: admitted when its uncached prompt and
// clipped output fit `rem`; `stop` ends the batch (no room, or it became the chunked request).
bool Sglang::admit_one(SchedulerState& s, std::uint32_t slot, double& rem, bool& stop) const {
    const Request& r = s.request(slot);
    const PrefixHit hit = s.lookup_prefix(r);
    const int computed0 = r.computed + hit.tokens;
    const int extend = r.num_tokens() - computed0;
    const double total = extend + remaining_output(r);
    const bool first = s.batch().empty();
    int n = chunk(s, extend);
    stop = true;
    // A request alone on an idle replica always starts (a retracted request's prompt +
    // generated + clipped output can exceed the pool; SGLang caps max_new_tokens by the context).
    const bool alone = first && s.running().empty();
    if ((total >= rem && !alone) || n <= 0 || (n > s.budget() && !first)) {
        return false;
    }
    const std::int64_t need = s.blocks_for(computed0 + n) - hit.blocks + hit.free_blocks;
    if (need > s.blocks().free()) {
        return false;
    }
    s.admit(slot, hit, n, computed0 + n);
    rem -= total;
    stop = n < extend || s.budget() <= 0;
    return true;
}

// A prefill batch: the chunked request, then waiting requests in the policy's order while
// they fit. False when it admitted nothing (then the step decodes).
bool Sglang::prefill(SchedulerState& s) {
    double rem = rem_total(s);
    bool any = continue_chunked(s);
    const int max_seqs = s.config().max_num_seqs;
    bool stop = any && s.budget() <= 0;
    const bool lpm = lpm_ && s.waiting() <= kLpmMaxWaiting &&
                     s.config().scheduler.policy == model::SchedulingPolicy::Fcfs;
    if (lpm) {
        s.waiting_slots(order_);
        keyed_.clear();
        for (const std::uint32_t slot : order_) {
            keyed_.emplace_back(s.cached_prefix_tokens(s.request(slot)), slot);
        }
        // Longest cached prefix first; ties keep the queue order.
        std::stable_sort(keyed_.begin(), keyed_.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        for (std::size_t i = 0; i < keyed_.size() && !stop; ++i) {
            if (static_cast<int>(s.running().size()) >= max_seqs) {
                break;
            }
            any = admit_one(s, keyed_[i].second, rem, stop) || any;
        }
        return any;
    }
    while (!stop && static_cast<int>(s.running().size()) < max_seqs) {
        const std::uint32_t slot = s.front_waiting();
        if (slot == ~0u) {
            break;
        }
        any = admit_one(s, slot, rem, stop) || any;
    }
    return any;
}

// Retracts decoding requests, fewest generated tokens first (ties: longest prompt), at least
// one and until the others have blocks for kRetractDecodeSteps more tokens each; never the
// last. Then new_token_ratio = min(1, (Σ generated + 20 n) ÷ Σ max new tokens) over the rest.
void Sglang::retract(SchedulerState& s) {
    order_.clear();
    for (const std::uint32_t slot : s.running()) {
        if (SchedulerState::is_decode(s.request(slot))) {
            order_.push_back(slot);
        }
    }
    std::stable_sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
        const Request& ra = s.request(a);
        const Request& rb = s.request(b);
        return ra.generated != rb.generated ? ra.generated > rb.generated : ra.prompt < rb.prompt;
    });
    const auto room = [&] {
        std::int64_t need = 0;
        for (const std::uint32_t slot : order_) {
            const Request& r = s.request(slot);
            need += std::max(0, s.blocks_for(r.computed + kRetractDecodeSteps) - r.blocks_held);
        }
        return need <= s.blocks().free();
    };
    bool first = true;
    while (order_.size() > 1 && (first || !room())) {
        first = false;
        const std::uint32_t victim = order_.back();
        order_.pop_back();
        const auto& running = s.running();
        const auto at = std::find(running.begin(), running.end(), victim) - running.begin();
        s.preempt(static_cast<std::size_t>(at), Requeue::Back);
    }
    double generated = 0;
    double max_new = 0;
    for (const std::uint32_t slot : order_) {
        generated += s.request(slot).generated;
        max_new += s.request(slot).output;
    }
    ratio_ = std::min(1.0, (generated + kRetractDecodeSteps * static_cast<double>(order_.size())) /
                               std::max(max_new, 1.0));
}

// One decode step of every running request, retracting first when their next tokens' blocks
// do not fit.
void Sglang::decode(SchedulerState& s) {
    std::int64_t need = 0;
    for (const std::uint32_t slot : s.running()) {
        const Request& r = s.request(slot);
        if (SchedulerState::is_decode(r)) {
            need += std::max(0, s.blocks_for(r.computed + s.decode_tokens(r)) - r.blocks_held);
        }
    }
    if (need > s.blocks().free()) {
        retract(s);
    } else {
        ratio_ = std::max(ratio_ - decay_, min_);
    }
    for (const std::uint32_t slot : s.running()) {
        Request& r = s.request(slot);
        if (!SchedulerState::is_decode(r)) {
            continue;
        }
        const int n = s.decode_tokens(r);
        if (s.grow(r, r.computed + n)) {
            s.schedule(slot, r, n);
        }
    }
}

void Sglang::form(SchedulerState& s) {
    if (prefill(s)) {
        return;
    }
    if (s.running().empty()) {
        ratio_ = init_; // the server is idle
        return;
    }
    decode(s);
}

} // namespace

std::unique_ptr<SchedulerPolicy> make_sglang(const model::SchedulerConfig& config) {
    return std::make_unique<Sglang>(config);
}

} // namespace gpuplan::sim::detail
