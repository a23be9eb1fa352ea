// Fleet availability with hot spares: the binomial (k-out-of-n) closed form of availability.hpp.
#include "model/availability.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace gpuplan::model {

namespace {

// The shortest readable form of a figure in a message (printf's %.6g).
std::string num(double v) {
    return gpuplan::checked_format("{:.6g}", v);
}

} // namespace

double unit_availability(Seconds mtbf, Seconds mttr) {
    if (!(mtbf.si() > 0) || !std::isfinite(mtbf.si())) {
        throw InvalidArgument("mtbf " + num(mtbf.si()) +
                              " s is not a positive finite time; give the mean time between "
                              "failures, e.g. '50000 h'");
    }
    if (!(mttr.si() >= 0) || !std::isfinite(mttr.si())) {
        throw InvalidArgument("mttr " + num(mttr.si()) +
                              " s is not a finite time of zero or more; give the mean time to "
                              "repair, e.g. '24 h'");
    }
    return mtbf.si() / (mtbf.si() + mttr.si());
}

double fleet_availability(int needed, int spares, double p_up) {
    if (needed < 1 || spares < 0) {
        throw InvalidArgument("availability needs at least one unit and no negative spares, got " +
                              std::to_string(needed) + " needed and " + std::to_string(spares) +
                              " spares");
    }
    if (!(p_up >= 0.0 && p_up <= 1.0)) {
        throw InvalidArgument("a unit's probability of being up must lie in [0, 1], got " +
                              num(p_up));
    }
    if (p_up == 1.0) {
        return 1.0;
    }
    if (p_up == 0.0) {
        return 0.0;
    }
    // Sum over j = 0..k units down of C(n, j) q^j p^(n−j), n = N + k, in log space: the first
    // term p^n underflows for large fleets. Term ratio: t(j+1)/t(j) = (n − j)/(j + 1) · q/p.
    const double n = static_cast<double>(needed) + spares;
    const double log_ratio = std::log1p(-p_up) - std::log(p_up);
    double log_term = n * std::log(p_up);
    double log_sum = log_term;
    for (int j = 0; j < spares; ++j) {
        log_term += std::log((n - j) / (j + 1.0)) + log_ratio;
        const double hi = std::max(log_sum, log_term);
        log_sum = hi + std::log(std::exp(log_sum - hi) + std::exp(log_term - hi));
    }
    return std::min(1.0, std::exp(log_sum));
}

std::optional<int> spares_for_availability(int needed, double p_up, double target, int max_spares) {
    if (!(target > 0.0 && target < 1.0)) {
        throw InvalidArgument("availability target " + num(target) +
                              " must lie strictly between 0 and 1 (e.g. 0.999); no finite number "
                              "of spares reaches 1");
    }
    max_spares = std::clamp(max_spares, 0, std::numeric_limits<int>::max() - needed);
    const auto reaches = [&](int k) { return fleet_availability(needed, k, p_up) >= target; };
    if (reaches(0)) {
        return 0;
    }
    // A(N, k) rises with k: double until the target is reached, then bisect (lo fails, hi meets).
    int lo = 0;
    int hi = 1;
    while (!reaches(hi)) {
        if (hi >= max_spares) {
            return std::nullopt;
        }
        lo = hi;
        hi = hi > max_spares / 2 ? max_spares : hi * 2;
    }
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        (reaches(mid) ? hi : lo) = mid;
    }
    return hi;
}

AvailabilityResult plan_availability(const AvailabilityInputs& in) {
    AvailabilityResult r;
    r.unit_up = unit_availability(in.mtbf, in.mttr);
    r.without_spares = fleet_availability(in.needed, 0, r.unit_up);
    constexpr int kMaxSpares = 1'000'000;
    r.spares = spares_for_availability(in.needed, r.unit_up, in.target, kMaxSpares);
    const int k = r.spares.value_or(kMaxSpares);
    r.with_spares = fleet_availability(in.needed, k, r.unit_up);
    r.expected_down = (static_cast<double>(in.needed) + k) * (1.0 - r.unit_up);
    return r;
}

} // namespace gpuplan::model
