#include "sim/length_sampler.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace gpuplan::sim {

LengthSampler::LengthSampler(const model::LengthDistribution& d) : d_(d) {
    if (d.min > d.max) {
        throw InvalidArgument("length distribution: min " + std::to_string(d.min) + " > max " +
                              std::to_string(d.max) + "; swap them");
    }
    if (d.stddev < 0 || !std::isfinite(d.stddev) || !std::isfinite(d.mean)) {
        throw InvalidArgument("length distribution: mean and stddev must be finite, stddev >= 0");
    }
    switch (d.kind) {
    case model::LengthKind::LogNormal: {
        if (d.mean <= 0) {
            throw InvalidArgument("lognormal length distribution: mean must be > 0");
        }
        // Moments of a log-normal: mean = exp(mu + σ²/2), var = (exp(σ²) − 1) mean².
        const double cv2 = (d.stddev / d.mean) * (d.stddev / d.mean);
        sigma_ = std::sqrt(std::log1p(cv2));
        mu_ = std::log(d.mean) - 0.5 * sigma_ * sigma_;
        break;
    }
    case model::LengthKind::Empirical: {
        if (d.values.empty()) {
            throw InvalidArgument("empirical length distribution: no values; give at least one");
        }
        if (!d.weights.empty() && d.weights.size() != d.values.size()) {
            throw InvalidArgument(
                "empirical length distribution: " + std::to_string(d.weights.size()) +
                " weights for " + std::to_string(d.values.size()) +
                " values; give one weight per value or none");
        }
        cdf_.resize(d.values.size());
        double sum = 0;
        for (std::size_t i = 0; i < d.values.size(); ++i) {
            const double w = d.weights.empty() ? 1.0 : d.weights[i];
            if (!(w >= 0) || !std::isfinite(w)) {
                throw InvalidArgument("empirical length distribution: weights must be >= 0");
            }
            sum += w;
            cdf_[i] = sum;
        }
        if (!(sum > 0)) {
            throw InvalidArgument("empirical length distribution: the weights sum to 0");
        }
        break;
    }
    default: break;
    }
}

int LengthSampler::sample(Rng& rng) const {
    double x = d_.mean;
    switch (d_.kind) {
    case model::LengthKind::Fixed: break;
    case model::LengthKind::Uniform:
        return d_.min +
               static_cast<int>(rng.below(static_cast<std::uint64_t>(d_.max - d_.min) + 1));
    case model::LengthKind::Normal: x = rng.normal(d_.mean, d_.stddev); break;
    case model::LengthKind::LogNormal: x = rng.lognormal(mu_, sigma_); break;
    case model::LengthKind::Empirical: {
        const double u = rng.uniform() * cdf_.back();
        const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
        const auto i = static_cast<std::size_t>(std::min<std::ptrdiff_t>(
            it - cdf_.begin(), static_cast<std::ptrdiff_t>(cdf_.size()) - 1));
        x = d_.values[i];
        break;
    }
    }
    const double r = std::round(x);
    if (!(r >= d_.min)) {
        return d_.min;
    }
    if (r >= d_.max) {
        return d_.max;
    }
    return static_cast<int>(r);
}

} // namespace gpuplan::sim
