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
    put(out_, st.start.si() * 1e6);
    out_ << R"(,"dur":)";
    put(out_, st.duration.si() * 1e6);
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
    put(out_, st.power.si());
    if (st.draft > Seconds(0.0)) {
        out_ << R"(,"draft_ms":)"; // speculative decoding: the proposer's part of the step
        put(out_, st.draft.si() * 1e3);
    }
    out_ << "}}";
    // The replica's levels as counters (a "C" event per step: running set, KV use, power).
    separator();
    out_ << R"({"name":"replica )" << st.replica << R"(","ph":"C","pid":0,"ts":)";
    put(out_, st.start.si() * 1e6);
    out_ << R"(,"args":{"running":)";
    put(out_, static_cast<long long>(st.running));
    out_ << R"(,"kv_use":)";
    put(out_, st.kv_use);
    out_ << R"(,"gpu_power_w":)";
    put(out_, st.power.si());
    out_ << "}}";
}

// One async event of a request (pid 1, the "requests" process): "b" opens a span, "e" closes
// the innermost open span of that name; spans of one id nest in Perfetto.
void ChromeTraceWriter::span(const char* ph, const char* name, std::uint64_t id, Seconds t) {
    separator();
    out_ << R"({"name":")" << name << R"(","cat":"request","ph":")" << ph << R"(","id":)" << id
         << R"(,"pid":1,"tid":0,"ts":)";
    put(out_, t.si() * 1e6);
    out_ << '}';
}

void ChromeTraceWriter::request(const sim::RequestRecord& q) {
    ++requests_seen_;
    if (limit_ != 0 && requests_written_ >= limit_) {
        return;
    }
    if (requests_written_++ == 0) {
        separator();
        out_ << R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"requests"}})";
    }
    const Seconds start = q.arrival;
    const Seconds end = start + q.e2e.value_or(q.queue.value_or(Seconds(0.0)));
    // The outer span carries what the request was; its phases nest inside it.
    separator();
    out_ << R"({"name":"request","cat":"request","ph":"b","id":)" << q.id
         << R"(,"pid":1,"tid":0,"ts":)";
    put(out_, start.si() * 1e6);
    out_ << R"(,"args":{"outcome":")" << sim::to_string(q.outcome) << R"(","replica":)";
    put(out_, static_cast<long long>(q.replica.value_or(-1))); // -1: none or the cloud
    out_ << R"(,"input_tokens":)";
    put(out_, static_cast<long long>(q.input_tokens));
    out_ << R"(,"output_tokens":)";
    put(out_, static_cast<long long>(q.output_tokens));
    out_ << R"(,"cached_tokens":)";
    put(out_, static_cast<long long>(q.cached_tokens));
    out_ << R"(,"preemptions":)";
    put(out_, static_cast<long long>(q.preemptions));
    out_ << "}}";
    if (q.queue) {
        span("b", "queued", q.id, start);
        span("e", "queued", q.id, start + *q.queue);
        if (q.ttft) {
            span("b", "prefill", q.id, start + *q.queue);
            span("e", "prefill", q.id, start + *q.ttft);
            if (q.e2e) {
                span("b", "decode", q.id, start + *q.ttft);
                span("e", "decode", q.id, start + *q.e2e);
            }
        }
    }
    span("e", "request", q.id, end);
}

bool ChromeTraceWriter::admit(std::uint64_t& written) {
    if (limit_ != 0 && written >= limit_) {
        return false;
    }
    ++written;
    return true;
}

// The head of a counter event of a replica's feature: {"name":"<prefix> N","ph":"C",... "args":{
void ChromeTraceWriter::counter(const char* prefix, int replica, Seconds t) {
    separator();
    out_ << R"({"name":")" << prefix << ' ' << replica << R"(","ph":"C","pid":0,"ts":)";
    put(out_, t.si() * 1e6);
    out_ << R"(,"args":{)";
}

void ChromeTraceWriter::speculative(const sim::SpeculativeStepRecord& r) {
    if (r.sequences <= 0 || !admit(speculative_written_)) {
        return;
    }
    counter("speculative replica", r.replica, r.end);
    out_ << R"("accepted":)";
    put(out_, static_cast<long long>(r.accepted));
    out_ << R"(,"tokens_per_seq":)";
    put(out_, static_cast<double>(r.accepted + r.sequences) / static_cast<double>(r.sequences));
    out_ << "}}";
}

void ChromeTraceWriter::kv_transfer(const sim::KvTransferRecord& r) {
    if (!admit(transfers_written_)) {
        return;
    }
    // Inside the request's span (same id): from the prefill's end to the KV's arrival.
    separator();
    out_ << R"({"name":"kv_transfer","cat":"request","ph":"b","id":)" << r.request
         << R"(,"pid":1,"tid":0,"ts":)";
    put(out_, r.ready.si() * 1e6);
    out_ << R"(,"args":{"replica":)";
    put(out_, static_cast<long long>(r.replica));
    out_ << R"(,"bytes":)";
    put(out_, r.bytes);
    out_ << R"(,"transfer_ms":)";
    put(out_, r.transfer.si() * 1e3);
    out_ << "}}";
    span("e", "kv_transfer", r.request, r.arrival);
    // The link: busy while it carries the KV; utilisation = Σ transfer time ÷ time so far.
    const auto link = static_cast<std::size_t>(std::max(0, r.replica));
    if (link >= link_busy_s_.size()) {
        link_busy_s_.resize(link + 1, 0.0);
    }
    const double before = link_busy_s_[link];
    link_busy_s_[link] += r.transfer.si();
    counter("link replica", r.replica, r.link_start);
    out_ << R"("busy":1,"utilisation":)";
    put(out_, r.link_start.si() > 0 ? before / r.link_start.si() : 0.0);
    out_ << "}}";
    counter("link replica", r.replica, r.arrival);
    out_ << R"("busy":0,"utilisation":)";
    put(out_, r.arrival.si() > 0 ? link_busy_s_[link] / r.arrival.si() : 0.0);
    out_ << "}}";
}

void ChromeTraceWriter::prefix(const sim::PrefixHitRecord& r) {
    if (r.queried_tokens <= 0 || !admit(prefix_written_)) {
        return;
    }
    counter("prefix cache replica", r.replica, r.time);
    out_ << R"("hit_rate":)";
    put(out_, static_cast<double>(r.hit_tokens) / static_cast<double>(r.queried_tokens));
    out_ << "}}";
}

void ChromeTraceWriter::kv_tier_load(const sim::KvTierLoadRecord& r) {
    if (!admit(tier_loads_written_)) {
        return;
    }
    // Inside the request's span (same id): from its admission (after the step's earlier tier
    // loads) for the blocks' load time.
    separator();
    out_ << R"({"name":"kv_load","cat":"request","ph":"b","id":)" << r.request
         << R"(,"pid":1,"tid":0,"ts":)";
    put(out_, r.start.si() * 1e6);
    out_ << R"(,"args":{"replica":)";
    put(out_, static_cast<long long>(r.replica));
    out_ << R"(,"host_blocks":)";
    put(out_, static_cast<long long>(r.host_blocks));
    out_ << R"(,"nvme_blocks":)";
    put(out_, static_cast<long long>(r.nvme_blocks));
    out_ << R"(,"bytes":)";
    put(out_, r.bytes);
    out_ << R"(,"load_ms":)";
    put(out_, r.time.si() * 1e3);
    out_ << "}}";
    span("e", "kv_load", r.request, r.start + r.time);
}

void ChromeTraceWriter::kv_tier_step(const sim::KvTierStepRecord& r) {
    if (!admit(tier_steps_written_)) {
        return;
    }
    const auto share = [&](std::int64_t tokens) {
        return r.looked_up_tokens > 0
                   ? static_cast<double>(tokens) / static_cast<double>(r.looked_up_tokens)
                   : 0.0;
    };
    counter("kv tiers replica", r.replica, r.time);
    out_ << R"("gpu_hit_share":)";
    put(out_, share(r.gpu_hit_tokens));
    out_ << R"(,"host_hit_share":)";
    put(out_, share(r.host_hit_tokens));
    out_ << R"(,"nvme_hit_share":)";
    put(out_, share(r.nvme_hit_tokens));
    out_ << R"(,"loaded_blocks":)";
    put(out_, static_cast<long long>(r.host_blocks + r.nvme_blocks));
    out_ << R"(,"load_ms":)";
    put(out_, r.load.si() * 1e3);
    out_ << "}}";
}

void ChromeTraceWriter::lora_load(const sim::LoraLoadRecord& r) {
    if (!admit(lora_loads_written_)) {
        return;
    }
    // An async span on the replica (its own track in Perfetto): the step waits for it.
    const std::uint64_t id = lora_loads_written_;
    separator();
    out_ << R"({"name":"lora_load","cat":"lora","ph":"b","id":)" << id << R"(,"pid":0,"tid":)";
    put(out_, static_cast<long long>(r.replica));
    out_ << R"(,"ts":)";
    put(out_, r.start.si() * 1e6);
    out_ << R"(,"args":{"adapter":)";
    put(out_, static_cast<long long>(r.adapter));
    out_ << R"(,"from":")" << (r.from_disk ? "disk" : "host") << R"(","load_ms":)";
    put(out_, r.time.si() * 1e3);
    out_ << "}}";
    separator();
    out_ << R"({"name":"lora_load","cat":"lora","ph":"e","id":)" << id << R"(,"pid":0,"tid":)";
    put(out_, static_cast<long long>(r.replica));
    out_ << R"(,"ts":)";
    put(out_, (r.start + r.time).si() * 1e6);
    out_ << '}';
}

void ChromeTraceWriter::lora_step(const sim::LoraStepRecord& r) {
    if (!admit(lora_steps_written_)) {
        return;
    }
    counter("lora replica", r.replica, r.time);
    out_ << R"("resident":)";
    put(out_, static_cast<long long>(r.resident));
    out_ << R"(,"loads":)";
    put(out_, static_cast<long long>(r.loads));
    out_ << R"(,"disk_loads":)";
    put(out_, static_cast<long long>(r.disk_loads));
    out_ << R"(,"load_ms":)";
    put(out_, r.load_time.si() * 1e3);
    out_ << "}}";
}

sim::FeatureHooks ChromeTraceWriter::hooks() {
    sim::FeatureHooks h;
    h.speculative = [this](const sim::SpeculativeStepRecord& r) { speculative(r); };
    h.kv_transfer = [this](const sim::KvTransferRecord& r) { kv_transfer(r); };
    h.prefix = [this](const sim::PrefixHitRecord& r) { prefix(r); };
    h.kv_tier_load = [this](const sim::KvTierLoadRecord& r) { kv_tier_load(r); };
    h.kv_tier_step = [this](const sim::KvTierStepRecord& r) { kv_tier_step(r); };
    h.lora_load = [this](const sim::LoraLoadRecord& r) { lora_load(r); };
    h.lora_step = [this](const sim::LoraStepRecord& r) { lora_step(r); };
    return h;
}

void ChromeTraceWriter::finish() {
    // "otherData" is the format's place for metadata about the trace itself.
    out_ << "\n],\"otherData\":{\"steps\":" << seen_ << ",\"steps_written\":" << written_
         << ",\"requests\":" << requests_seen_ << ",\"requests_written\":" << requests_written_
         << ",\"truncated\":" << (cut() ? "true" : "false") << "}}\n";
}

} // namespace gpuplan::cli
