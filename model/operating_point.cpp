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
    }
    return "?";
}

int deployment_capacity(const MemoryEstimate& mem, const Workload& w, int dp) {
    const Workload request = w.classes.empty() ? Workload{} : analytic_request(w);
    const Workload& lengths = w.classes.empty() ? w : request;
    const long long total =
        static_cast<long long>(replica_capacity(mem, lengths)) * std::max(1, dp);
    return static_cast<int>(std::min<long long>(total, 1 << 30));
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

} // namespace

OperatingPoint resolve_operating_point(const MemoryEstimate& mem, const Workload& w, int dp) {
    OperatingPoint op;
    const int capacity = deployment_capacity(mem, w, dp);
    const bool closed_arrival = w.arrival.kind == ArrivalKind::ClosedLoop;
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
    w.concurrency.reset();
    w.requests_per_s = rate;
    w.arrival.requests_per_s = rate;
    if (w.arrival.kind == ArrivalKind::ClosedLoop) {
        w.arrival.kind = ArrivalKind::Poisson;
    }
}

} // namespace gpuplan::model
