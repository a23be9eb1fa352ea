#include "model/operating_point.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"
#include "model/scenario.hpp"
#include "model/serving.hpp"
#include "model/workload_mix.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuplan::model {

const char* to_string(LoadKind k) {
    switch (k) {
    case LoadKind::ClosedLoop: return "closed_loop";
    case LoadKind::OfferedRate: return "offered_rate";
    case LoadKind::OfflineBatch: return "offline_batch";
    }
    return "?";
}

int deployment_capacity(const MemoryEstimate& mem, const Workload& w, int dp) {
    // The mean request of the classes or the replayed trace (their lengths, not the defaults).
    const long long total =
        static_cast<long long>(replica_capacity(mem, analytic_request(w))) * std::max(1, dp);
    return static_cast<int>(std::min<long long>(total, 1 << 30));
}

std::optional<int> offline_batch_size(const Workload& w) {
    if (w.batch_requests) {
        return w.batch_requests;
    }
    if (w.arrival.kind != ArrivalKind::Trace || w.trace.empty()) {
        return std::nullopt;
    }
    const auto [first, last] = std::minmax_element(
        w.trace.begin(), w.trace.end(),
        [](const TraceRecord& a, const TraceRecord& b) { return a.arrival < b.arrival; });
    if (last->arrival != first->arrival) {
        return std::nullopt;
    }
    return static_cast<int>(std::min<std::size_t>(w.trace.size(), 1U << 30));
}

std::optional<double> offered_rate(const Workload& w) {
    // Arrivals of agent sessions bring several requests each.
    const auto mix = mean_request(w);
    const double per_arrival = mix ? mix->requests_per_arrival : 1.0;
    const auto rate = arrival_rate(w);
    return rate ? std::optional<double>(*rate * per_arrival) : std::nullopt;
}

std::optional<double> arrival_rate(const Workload& w) {
    const ArrivalProcess& a = w.arrival;
    switch (a.kind) {
    case ArrivalKind::ClosedLoop: return std::nullopt;
    case ArrivalKind::Trace: {
        if (w.trace.size() < 2) {
            return std::nullopt;
        }
        const double span = (w.trace.back().arrival - w.trace.front().arrival).si();
        const double speed = a.trace_speedup > 0 ? a.trace_speedup : 1.0;
        if (span <= 0) {
            return std::nullopt;
        }
        return static_cast<double>(w.trace.size() - 1) / span * speed;
    }
    case ArrivalKind::Poisson:
    case ArrivalKind::Gamma:
    case ArrivalKind::Constant:
        if (a.requests_per_s) {
            return a.requests_per_s;
        }
        return w.requests_per_s;
    }
    return std::nullopt;
}

namespace {

/// Why the default closed loop runs this many sequences.
std::string default_reason(const MemoryEstimate& mem, const Workload& w, int dp, int capacity) {
    if (capacity < 1) {
        return "default: the deployment does not fit, so one sequence";
    }
    const int per_replica = capacity / std::max(1, dp);
    const bool by_seqs = per_replica >= mem.engine.max_num_seqs;
    const Workload r = analytic_request(w);
    return gpuplan::checked_format(
        "default: the most sequences the engine runs at once at {} + {} tokens "
        "({} per replica, bound by {}); set workload.concurrency or "
        "requests_per_s for another load",
        r.input_tokens, r.output_tokens, per_replica, by_seqs ? "max_num_seqs" : "the kv-cache");
}

// The offline batch's load: all `n` requests queued at once, as many running as fit.
OperatingPoint offline_batch(const Workload& w, int n, int capacity) {
    const bool from_trace = !w.batch_requests;
    if (w.concurrency || w.requests_per_s || w.arrival.requests_per_s) {
        throw InvalidArgument(gpuplan::checked_format(
            "workload: an offline batch of {} requests ({}) and {} are both given; keep one load",
            n, from_trace ? "a trace whose arrivals are all at one instant" : "batch_requests",
            w.concurrency ? "concurrency" : "requests_per_s"));
    }
    if (!from_trace &&
        (w.arrival.kind == ArrivalKind::ClosedLoop || w.arrival.kind == ArrivalKind::Trace)) {
        throw InvalidArgument(gpuplan::checked_format(
            "workload: batch_requests {} and an arrival process '{}' are both given; keep one "
            "load",
            n, name_of(w.arrival.kind)));
    }
    if (w.requests && *w.requests != n) {
        throw InvalidArgument(gpuplan::checked_format(
            "workload: requests {} and an offline batch of {} requests are both given; the batch "
            "sends exactly its requests, so drop requests",
            *w.requests, n));
    }
    OperatingPoint op;
    op.kind = LoadKind::OfflineBatch;
    op.batch_requests = n;
    op.concurrency = std::clamp(capacity, 1, n);
    op.why = gpuplan::checked_format(
        "all arriving at t = 0, {}; {} run at once{}",
        from_trace ? "the trace's rows" : "workload.batch_requests", op.concurrency,
        op.concurrency < n ? ", the most the deployment holds" : ": all of them");
    return op;
}

} // namespace

OperatingPoint resolve_operating_point(const MemoryEstimate& mem, const Workload& w, int dp) {
    OperatingPoint op;
    const int capacity = deployment_capacity(mem, w, dp);
    const bool closed_arrival = w.arrival.kind == ArrivalKind::ClosedLoop;
    if (const auto n = offline_batch_size(w)) {
        return offline_batch(w, *n, capacity);
    }
    if (const auto rate = offered_rate(w)) {
        if (w.concurrency) {
            throw InvalidArgument(gpuplan::checked_format(
                "workload: concurrency {} and an offered rate of {} requests/s are both given; "
                "keep concurrency for a closed loop or requests_per_s for an open one",
                *w.concurrency, *rate));
        }
        op.kind = LoadKind::OfferedRate;
        op.requests_per_s = rate;
        op.concurrency = std::max(1, capacity);
        op.why = gpuplan::checked_format("offered: {:g} requests/s", *rate);
        return op;
    }
    if (closed_arrival && w.concurrency && *w.concurrency != w.arrival.users) {
        throw InvalidArgument(gpuplan::checked_format(
            "workload: concurrency {} and a closed loop of {} users are both given; keep one",
            *w.concurrency, w.arrival.users));
    }
    if (w.concurrency) {
        op.concurrency = *w.concurrency;
        op.why = "given: workload.concurrency";
    } else if (closed_arrival) {
        op.concurrency = w.arrival.users;
        op.why = "given: workload.arrival.users of a closed loop";
    } else {
        op.concurrency = std::max(1, capacity);
        op.defaulted = true;
        op.why = default_reason(mem, w, dp, capacity);
    }
    return op;
}

void set_closed_loop(Workload& w, int concurrency) {
    w.batch_requests.reset();
    w.concurrency = concurrency;
    w.requests_per_s.reset();
    w.arrival.requests_per_s.reset();
    if (w.arrival.kind == ArrivalKind::Trace) {
        w.arrival.kind = ArrivalKind::Poisson;
    }
    if (w.arrival.kind == ArrivalKind::ClosedLoop) {
        w.arrival.users = concurrency;
    }
}

void set_offered_rate(Workload& w, double rate) {
    w.batch_requests.reset();
    w.concurrency.reset();
    w.requests_per_s = rate;
    w.arrival.requests_per_s = rate;
    if (w.arrival.kind == ArrivalKind::ClosedLoop) {
        w.arrival.kind = ArrivalKind::Poisson;
    }
}

void set_offline_batch(Workload& w, int requests) {
    if (w.arrival.kind == ArrivalKind::Trace) {
        throw InvalidArgument(
            "workload: the scenario replays a trace, whose rows are the requests; an offline "
            "batch of them is a trace with every arrival at 0, or drop the trace");
    }
    w.concurrency.reset();
    w.requests_per_s.reset();
    w.arrival.requests_per_s.reset();
    w.requests.reset();
    if (w.arrival.kind == ArrivalKind::ClosedLoop) {
        w.arrival.kind = ArrivalKind::Poisson;
    }
    w.batch_requests = requests;
}

} // namespace gpuplan::model
