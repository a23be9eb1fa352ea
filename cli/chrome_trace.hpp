#pragma once
/// A Chrome trace (the Trace Event Format's JSON object form, which Perfetto and
/// chrome://tracing open) written to a stream as the simulation runs, so it never sits in
/// memory: one track per replica, one complete ("X") slice per engine step and a counter ("C")
/// event per step with the replica's running sequences, KV use and GPU power; and, in a
/// "requests" process, one async span per request (arrival to its end) holding its "queued",
/// "prefill" and "decode" phases. Times in microseconds. At most `limit` steps and `limit`
/// requests are written; the rest are counted and the file says so in "otherData".
/// The serving features add their figures (sim/feature_trace.hpp): a "speculative replica N"
/// counter per step (accepted drafts, tokens per verified sequence), a "kv_transfer" span inside
/// each request's span and a "link replica N" counter (busy 0/1, utilisation so far) per
/// prefill replica, a "prefix cache replica N" counter (hit rate so far), a "kv_load" span inside
/// a request's span per load from the KV offload tiers and a "kv tiers replica N" counter (hit
/// shares per tier so far, the step's loads), and a "lora_load" span per adapter load on its
/// replica and a "lora replica N" counter (adapters resident, loads so far); at most `limit` of
/// each.

#include "sim/feature_trace.hpp"
#include "sim/result.hpp"

#include <cstdint>
#include <ostream>
#include <vector>

namespace gpuplan::cli {

class ChromeTraceWriter {
  public:
    /// Writes the header to `out` (which must outlive the writer). `limit` 0: no limit.
    ChromeTraceWriter(std::ostream& out, std::uint64_t limit);
    /// Writes one step (and its replica's track name the first time it appears), unless the
    /// limit has been reached. Allocates nothing once the replicas are known.
    void step(const sim::StepRecord& st);
    /// Writes one finished request's spans, unless the limit has been reached.
    void request(const sim::RequestRecord& q);
    /// Speculative decoding: one step's accepted drafts and tokens per verified sequence.
    void speculative(const sim::SpeculativeStepRecord& r);
    /// Disaggregation: one prompt's KV transfer (its span and its link's counter).
    void kv_transfer(const sim::KvTransferRecord& r);
    /// Prefix cache: a replica's hit rate so far.
    void prefix(const sim::PrefixHitRecord& r);
    /// KV offload tiers: one admission's tier load (its span inside the request's).
    void kv_tier_load(const sim::KvTierLoadRecord& r);
    /// KV offload tiers: a replica's hit shares so far and its step's loads.
    void kv_tier_step(const sim::KvTierStepRecord& r);
    /// Multi-LoRA: one adapter load (its span on the replica).
    void lora_load(const sim::LoraLoadRecord& r);
    /// Multi-LoRA: a replica's resident adapters and loads so far.
    void lora_step(const sim::LoraStepRecord& r);
    /// The hooks that feed the features above into this writer.
    [[nodiscard]] sim::FeatureHooks hooks();
    /// Writes the end of the file; call once, then check the stream.
    void finish();
    /// Steps seen and steps written.
    [[nodiscard]] std::uint64_t steps() const noexcept { return seen_; }
    [[nodiscard]] std::uint64_t written() const noexcept { return written_; }
    /// Requests seen and requests written.
    [[nodiscard]] std::uint64_t requests() const noexcept { return requests_seen_; }
    [[nodiscard]] std::uint64_t requests_written() const noexcept { return requests_written_; }
    /// True when the limit cut steps or requests off.
    [[nodiscard]] bool cut() const noexcept {
        return seen_ > written_ || requests_seen_ > requests_written_;
    }

  private:
    void separator();
    void span(const char* ph, const char* name, std::uint64_t id, Seconds t);
    std::ostream& out_;
    std::uint64_t limit_;
    std::uint64_t seen_ = 0;
    std::uint64_t written_ = 0;
    std::uint64_t requests_seen_ = 0;
    std::uint64_t requests_written_ = 0;
    /// The feature events' count against the limit (each feature its own).
    [[nodiscard]] bool admit(std::uint64_t& written);
    void counter(const char* prefix, int replica, Seconds t);
    bool first_ = true;
    std::vector<bool> named_;
    std::uint64_t speculative_written_ = 0;
    std::uint64_t transfers_written_ = 0;
    std::uint64_t prefix_written_ = 0;
    std::uint64_t tier_loads_written_ = 0;
    std::uint64_t tier_steps_written_ = 0;
    std::uint64_t lora_loads_written_ = 0; ///< also the lora_load spans' ids
    std::uint64_t lora_steps_written_ = 0;
    std::vector<double> link_busy_s_; ///< per prefill replica: Σ transfer time so far
};

} // namespace gpuplan::cli
