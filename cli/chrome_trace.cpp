#include "cli/chrome_trace.hpp"

#include <algorithm>
#include <charconv>

namespace gpuplan::cli {
namespace {

// Shortest text that reads back as the same double (what nlohmann::json printed before).
void put(std::ostream& out, double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.write(buf, r.ptr - buf);
}

void put(std::ostream& out, long long v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.write(buf, r.ptr - buf);
}

} // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, std::uint64_t limit)
    : out_(out), limit_(limit) {
    out_ << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
}

void ChromeTraceWriter::separator() {
    out_ << (first_ ? "\n" : ",\n");
    first_ = false;
}

void ChromeTraceWriter::step(const sim::StepRecord& st) {
    ++seen_;
    if (limit_ != 0 && written_ >= limit_) {
        return;
    }
    ++written_;
    const auto rep = static_cast<std::size_t>(std::max(0, st.replica));
    if (rep >= named_.size()) {
        named_.resize(rep + 1, false);
    }
    if (!named_[rep]) {
        named_[rep] = true;
        separator();
        out_ << R"({"name":"thread_name","ph":"M","pid":0,"tid":)";
        put(out_, static_cast<long long>(st.replica));
        out_ << R"(,"args":{"name":"replica )" << st.replica << "\"}}";
    }
    const char* name =
        st.prefills > 0 && st.decodes > 0 ? "mixed" : (st.prefills > 0 ? "prefill" : "decode");
    separator();
    out_ << R"({"name":")" << name << R"(","ph":"X","pid":0,"tid":)";
    put(out_, static_cast<long long>(st.replica));
    out_ << R"(,"ts":)";
    put(out_, st.start_s * 1e6);
    out_ << R"(,"dur":)";
    put(out_, st.duration_s * 1e6);
    out_ << R"(,"args":{"prefills":)";
    put(out_, static_cast<long long>(st.prefills));
    out_ << R"(,"prefill_tokens":)";
    put(out_, static_cast<long long>(st.prefill_tokens));
    out_ << R"(,"decodes":)";
    put(out_, static_cast<long long>(st.decodes));
    out_ << R"(,"preempted":)";
    put(out_, static_cast<long long>(st.preempted));
    out_ << R"(,"clock":)";
    put(out_, st.clock);
    out_ << R"(,"gpu_power_w":)";
    put(out_, st.power_w);
    if (st.draft_s > 0) {
        out_ << R"(,"draft_ms":)"; // speculative decoding: the proposer's part of the step
        put(out_, st.draft_s * 1e3);
    }
    out_ << "}}";
    // The replica's levels as counters (a "C" event per step: running set, KV use, power).
    separator();
    out_ << R"({"name":"replica )" << st.replica << R"(","ph":"C","pid":0,"ts":)";
    put(out_, st.start_s * 1e6);
    out_ << R"(,"args":{"running":)";
    put(out_, static_cast<long long>(st.running));
    out_ << R"(,"kv_use":)";
    put(out_, st.kv_use);
    out_ << R"(,"gpu_power_w":)";
    put(out_, st.power_w);
    out_ << "}}";
}

void ChromeTraceWriter::finish() {
    // "otherData" is the format's place for metadata about the trace itself.
    out_ << "\n],\"otherData\":{\"steps\":" << seen_ << ",\"steps_written\":" << written_
         << ",\"truncated\":" << (cut() ? "true" : "false") << "}}\n";
}

} // namespace gpuplan::cli
