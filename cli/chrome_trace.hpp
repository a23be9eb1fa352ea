#pragma once
/// A Chrome trace (the Trace Event Format's JSON object form, which Perfetto and
/// chrome://tracing open) written to a stream as the simulation runs, so it never sits in
/// memory: one track per replica, one complete ("X") slice per engine step and a counter ("C")
/// event per step with the replica's running sequences, KV use and GPU power; times in
/// microseconds. At most `limit` steps are written; the rest are counted and the file says so
/// in "otherData".

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
    /// Writes the end of the file; call once, then check the stream.
    void finish();
    /// Steps seen and steps written.
    [[nodiscard]] std::uint64_t steps() const noexcept { return seen_; }
    [[nodiscard]] std::uint64_t written() const noexcept { return written_; }
    /// True when the limit cut steps off.
    [[nodiscard]] bool cut() const noexcept { return seen_ > written_; }

  private:
    void separator();
    std::ostream& out_;
    std::uint64_t limit_;
    std::uint64_t seen_ = 0;
    std::uint64_t written_ = 0;
    bool first_ = true;
    std::vector<bool> named_;
};

} // namespace gpuplan::cli
