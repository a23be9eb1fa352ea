#include "sim/arrival_clock.hpp"

#include "model/error.hpp"

#include <cmath>
#include <numbers>
#include <string>

namespace gpuplan::sim {

ArrivalClock::ArrivalClock(const model::ArrivalProcess& p, double base_rate)
    : kind_(p.kind), curve_(p.curve.kind), rate_(base_rate) {
    if (!(base_rate > 0) || !std::isfinite(base_rate)) {
        throw InvalidArgument("arrival rate must be > 0 requests/s, got " +
                              std::to_string(base_rate));
    }
    if (kind_ == model::ArrivalKind::Gamma) {
        if (!(p.cv > 0)) {
            throw InvalidArgument("gamma arrivals need cv > 0 (1 is Poisson, larger is burstier)");
        }
        shape_ = 1.0 / (p.cv * p.cv);
    }
    if (curve_ == model::RateCurveKind::Step) {
        seg_start_.push_back(0);
        seg_rate_.push_back(base_rate);
        for (const auto& pt : p.curve.steps) {
            const double at = pt.at.si();
            if (at < seg_start_.back() || !(pt.requests_per_s >= 0)) {
                throw InvalidArgument(
                    "step rate curve: steps must be sorted by time with rates >= 0");
            }
            if (at == seg_start_.back()) {
                seg_rate_.back() = pt.requests_per_s;
            } else {
                seg_start_.push_back(at);
                seg_rate_.push_back(pt.requests_per_s);
            }
        }
        seg_lambda_.resize(seg_start_.size());
        seg_lambda_[0] = 0;
        for (std::size_t i = 1; i < seg_start_.size(); ++i) {
            seg_lambda_[i] =
                seg_lambda_[i - 1] + seg_rate_[i - 1] * (seg_start_[i] - seg_start_[i - 1]);
        }
    } else if (curve_ == model::RateCurveKind::Diurnal) {
        amplitude_ = p.curve.amplitude;
        if (!(amplitude_ >= 0 && amplitude_ < 1)) {
            throw InvalidArgument("diurnal rate curve: amplitude must be in [0, 1)");
        }
        if (!(p.curve.period.si() > 0)) {
            throw InvalidArgument("diurnal rate curve: period must be > 0");
        }
        omega_ = 2 * std::numbers::pi / p.curve.period.si();
        peak_ = p.curve.peak_at.si();
    }
}

double ArrivalClock::unit_gap(Rng& rng) const {
    switch (kind_) {
    case model::ArrivalKind::Gamma: return rng.gamma(shape_, 1.0 / shape_);
    case model::ArrivalKind::Constant: return 1.0;
    default: return rng.exponential(1.0);
    }
}

double ArrivalClock::cumulative(double t) const {
    switch (curve_) {
    case model::RateCurveKind::Step: {
        std::size_t i = 0;
        while (i + 1 < seg_start_.size() && seg_start_[i + 1] <= t) {
            ++i;
        }
        return seg_lambda_[i] + seg_rate_[i] * (t - seg_start_[i]);
    }
    case model::RateCurveKind::Diurnal:
        // ∫ λ0 (1 + A cos(ω(u − p))) du from 0 to t.
        return rate_ * (t + amplitude_ / omega_ *
                                (std::sin(omega_ * (t - peak_)) + std::sin(omega_ * peak_)));
    default: return rate_ * t;
    }
}

std::optional<double> ArrivalClock::invert(double s) {
    switch (curve_) {
    case model::RateCurveKind::Step:
        for (;;) {
            const bool last = seg_ + 1 == seg_start_.size();
            if (last || s <= seg_lambda_[seg_ + 1]) {
                if (seg_rate_[seg_] > 0) {
                    return seg_start_[seg_] + (s - seg_lambda_[seg_]) / seg_rate_[seg_];
                }
                if (last) {
                    return std::nullopt;
                }
            }
            ++seg_;
        }
    case model::RateCurveKind::Diurnal: {
        // Λ is increasing with slope ≥ λ0 (1 − A); bracket and refine by safeguarded Newton.
        double lo = t_;
        double hi = t_ + (s - s_) / (rate_ * (1 - amplitude_)) + 1e-12;
        double t = t_ + (s - s_) / rate_;
        if (t < lo || t > hi) {
            t = 0.5 * (lo + hi);
        }
        for (int i = 0; i < 100; ++i) {
            const double f = cumulative(t) - s;
            if (std::abs(f) < 1e-12 * std::max(1.0, s)) {
                break;
            }
            (f > 0 ? hi : lo) = t;
            const double slope = rate_ * (1 + amplitude_ * std::cos(omega_ * (t - peak_)));
            double nt = t - f / slope;
            if (!(nt > lo && nt < hi)) {
                nt = 0.5 * (lo + hi);
            }
            t = nt;
        }
        return std::max(t, t_);
    }
    default: return s / rate_;
    }
}

std::optional<double> ArrivalClock::next(Rng& rng) {
    const double s = s_ + unit_gap(rng);
    const auto t = invert(s);
    if (!t) {
        return std::nullopt;
    }
    s_ = s;
    t_ = std::max(*t, t_);
    return t_;
}

} // namespace gpuplan::sim
