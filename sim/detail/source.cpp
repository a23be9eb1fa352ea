#include "sim/detail/source.hpp"

#include "model/error.hpp"

#include <algorithm>

namespace gpuplan::sim::detail {
namespace {

// Content ids: shared prefixes and streams live in disjoint ranges so they never collide.
constexpr std::uint64_t kSharedTag = 0x5100000000000000ULL;
constexpr std::uint64_t kStreamTag = 0x7200000000000000ULL;

} // namespace

WorkloadSource::WorkloadSource(Simulation& sim, RequestPool& pool, Cluster& cluster,
                               const model::Workload& w, std::vector<model::RequestClass> classes,
                               SourceLimits limits, Rng rng)
    : sim_(sim), pool_(pool), cluster_(cluster), w_(w), classes_(std::move(classes)),
      limits_(limits), rng_arrivals_(rng.fork(1)), rng_class_(rng.fork(2)), rng_len_(rng.fork(3)),
      rng_think_(rng.fork(4)), rng_adapter_(rng.fork(5)) {
    double sum = 0;
    for (const auto& c : classes_) {
        input_.emplace_back(c.input);
        output_.emplace_back(c.output);
        step_input_.emplace_back(c.agent ? c.agent->step_input
                                         : model::LengthDistribution::fixed(1));
        sum += std::max(0.0, c.share);
        share_cdf_.push_back(sum);
    }
    const auto kind = w.arrival.kind;
    if (kind == model::ArrivalKind::Poisson || kind == model::ArrivalKind::Gamma ||
        kind == model::ArrivalKind::Constant) {
        clock_.emplace(w.arrival,
                       w.arrival.requests_per_s.value_or(w.requests_per_s.value_or(1.0)));
    }
    if (kind == model::ArrivalKind::Trace) {
        trace_ = w.trace;
        std::stable_sort(trace_.begin(), trace_.end(),
                         [](const auto& a, const auto& b) { return a.arrival < b.arrival; });
    }
}

bool WorkloadSource::may_arrive() const {
    return arrivals_ < limits_.max_arrivals && sim_.now() < limits_.end;
}

int WorkloadSource::pick_class() {
    if (classes_.size() == 1) {
        return 0;
    }
    const double u = rng_class_.uniform() * share_cdf_.back();
    const auto it = std::upper_bound(share_cdf_.begin(), share_cdf_.end(), u);
    return static_cast<int>(std::min<std::ptrdiff_t>(
        it - share_cdf_.begin(), static_cast<std::ptrdiff_t>(classes_.size()) - 1));
}

std::uint64_t WorkloadSource::shared_id(int cls) {
    const auto& c = classes_[static_cast<std::size_t>(cls)];
    if (c.shared_prefix <= 0) {
        return 0;
    }
    const std::uint64_t group =
        c.prefix_groups > 1 ? rng_class_.below(static_cast<std::uint64_t>(c.prefix_groups)) : 0;
    return kSharedTag | (static_cast<std::uint64_t>(cls) << 32) | group;
}

void WorkloadSource::start() {
    if (w_.batch_requests) {
        // An offline batch: every request arrives at time 0, one event after another.
        sim_.schedule_at(0, *this, kBatchArrival);
        return;
    }
    switch (w_.arrival.kind) {
    case model::ArrivalKind::ClosedLoop: {
        const int users = std::max(1, w_.arrival.users);
        for (int u = 0; u < users; ++u) {
            sim_.schedule_at(0, *this, kUserSend, static_cast<std::uint64_t>(u));
        }
        break;
    }
    case model::ArrivalKind::Trace:
        if (!trace_.empty()) {
            const double speed = w_.arrival.trace_speedup > 0 ? w_.arrival.trace_speedup : 1.0;
            const double t0 = trace_.front().arrival.si();
            sim_.schedule_at(
                to_tick(Seconds(std::max(0.0, (trace_.front().arrival.si() - t0) / speed)),
                        "workload.trace arrival"),
                *this, kTraceArrival);
        }
        break;
    default:
        // An arrival after the end of the arrival window is never scheduled (nor converted to
        // ticks: at a vanishing rate it may lie beyond the clock).
        if (const auto t = clock_->next(rng_arrivals_);
            t && (limits_.end == kNever || *t < tick_s(limits_.end))) {
            sim_.schedule_at(to_tick(Seconds(*t), "workload arrival time"), *this, kOpenArrival);
        }
        break;
    }
}

void WorkloadSource::send(int cls, int user, int prompt_own, int output, std::int64_t session,
                          int shared_cap) {
    const auto& c = classes_[static_cast<std::size_t>(cls)];
    const std::uint32_t slot = pool_.acquire();
    Request& r = pool_[slot];
    r.id = next_id_++;
    r.cls = cls;
    r.user = user;
    r.priority = c.priority;
    r.output = std::max(1, output);
    if (session >= 0) {
        const Session& s = sessions_[static_cast<std::size_t>(session)];
        r.session = static_cast<std::uint64_t>(session);
        r.step = s.steps_done;
        r.shared_id = s.shared_id;
        r.shared_len = s.shared_id != 0 ? c.shared_prefix : 0;
        r.stream_id = s.stream_id;
        r.prompt = r.shared_len + static_cast<int>(s.history) + prompt_own;
    } else {
        r.shared_id = shared_cap > 0 ? shared_id(cls) : 0;
        r.shared_len = r.shared_id != 0 ? std::min(c.shared_prefix, shared_cap) : 0;
        r.stream_id = kStreamTag | next_stream_++;
        r.prompt = r.shared_len + prompt_own;
    }
    r.prompt = std::max(1, r.prompt);
    if (lora_ != nullptr) {
        r.adapter = sample_adapter(*lora_, rng_adapter_);
    }
    cluster_.submit(slot);
}

void WorkloadSource::top_level(int cls, int user) {
    ++arrivals_;
    const auto& c = classes_[static_cast<std::size_t>(cls)];
    const int prompt_own = input_[static_cast<std::size_t>(cls)].sample(rng_len_);
    const int output = output_[static_cast<std::size_t>(cls)].sample(rng_len_);
    if (c.agent) {
        Session s;
        s.cls = cls;
        s.user = user;
        s.shared_id = shared_id(cls);
        s.stream_id = kStreamTag | next_stream_++;
        sessions_.push_back(s);
        send(cls, user, prompt_own, output, static_cast<std::int64_t>(sessions_.size() - 1));
        return;
    }
    send(cls, user, prompt_own, output, -1);
}

void WorkloadSource::send_agent_step(std::uint64_t session) {
    const Session& s = sessions_[static_cast<std::size_t>(session)];
    const auto cls = static_cast<std::size_t>(s.cls);
    const int own = step_input_[cls].sample(rng_len_);
    const int output = output_[cls].sample(rng_len_);
    send(s.cls, s.user, own, output, static_cast<std::int64_t>(session));
}

void WorkloadSource::user_next(int user) {
    const double think = w_.arrival.think_time.si();
    const Tick delay =
        think > 0 ? to_tick(Seconds(rng_think_.exponential(think)), "workload.arrival.think_time")
                  : 0;
    sim_.schedule_in(delay, *this, kUserSend, static_cast<std::uint64_t>(user));
}

void WorkloadSource::request_ended(const Request& r, Outcome outcome) {
    const bool ok = outcome == Outcome::Completed || outcome == Outcome::Cloud;
    if (r.session != kNoSession) {
        Session& s = sessions_[static_cast<std::size_t>(r.session)];
        const auto& c = classes_[static_cast<std::size_t>(s.cls)];
        ++s.steps_done;
        // The next step re-sends everything after the shared prefix, this step's output included.
        s.history = r.prompt - r.shared_len + r.output;
        if (ok && c.agent && s.steps_done < c.agent->steps) {
            sim_.schedule_in(to_tick(c.agent->think_time, "workload.classes.agent.think_time"),
                             *this, kAgentStep, r.session);
            return;
        }
    }
    if (r.user >= 0) {
        user_next(r.user);
    }
}

void WorkloadSource::on_event(std::uint32_t kind, std::uint64_t data) {
    switch (kind) {
    case kOpenArrival: {
        if (!may_arrive()) {
            break;
        }
        // Schedule the next arrival first so arrivals at one tick keep their order.
        if (arrivals_ + 1 < limits_.max_arrivals) {
            if (const auto t = clock_->next(rng_arrivals_);
                t && (limits_.end == kNever || *t < tick_s(limits_.end))) {
                const Tick at = std::max(sim_.now(), to_tick(Seconds(*t), "workload arrival time"));
                if (at < limits_.end) {
                    sim_.schedule_at(at, *this, kOpenArrival);
                }
            }
        }
        top_level(pick_class(), -1);
        break;
    }
    case kUserSend:
        if (may_arrive()) {
            top_level(pick_class(), static_cast<int>(data));
        }
        break;
    case kTraceArrival: {
        if (!may_arrive() || trace_next_ >= trace_.size()) {
            break;
        }
        const model::TraceRecord rec = trace_[trace_next_++];
        if (trace_next_ < trace_.size()) {
            const double speed = w_.arrival.trace_speedup > 0 ? w_.arrival.trace_speedup : 1.0;
            const double t0 = trace_.front().arrival.si();
            const Tick at = std::max(
                sim_.now(),
                to_tick(Seconds(std::max(0.0, (trace_[trace_next_].arrival.si() - t0) / speed)),
                        "workload.trace arrival"));
            sim_.schedule_at(at, *this, kTraceArrival);
        }
        const int cls = pick_class();
        const auto& c = classes_[static_cast<std::size_t>(cls)];
        ++arrivals_;
        // The trace gives the whole prompt; the class's shared prefix is its first tokens.
        const int input = std::max(1, rec.input_tokens);
        const int shared = std::max(0, std::min(c.shared_prefix, input - 1));
        send(cls, -1, input - shared, rec.output_tokens, -1, shared);
        break;
    }
    case kAgentStep: send_agent_step(data); break;
    case kBatchArrival:
        if (!may_arrive()) {
            break;
        }
        // The next one first, at the same tick, so the whole batch is queued before a step.
        if (arrivals_ + 1 < limits_.max_arrivals) {
            sim_.schedule_at(sim_.now(), *this, kBatchArrival);
        }
        top_level(pick_class(), -1);
        break;
    default: break;
    }
}

} // namespace gpuplan::sim::detail
