#include "sim/quantile_sketch.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::sim {
namespace {

// DDSketch's mapping (Masson et al., VLDB 2019, §2): γ = (1 + α) / (1 − α); bucket i holds
// (γ^(i−1), γ^i] and reports 2γ^i / (γ + 1).
const double kGamma = (1 + QuantileSketch::kRelativeError) / (1 - QuantileSketch::kRelativeError);
const double kLogGamma = std::log(kGamma);
const double kInvLogGamma = 1 / kLogGamma;

int bucket_of(double x) {
    return static_cast<int>(std::ceil(std::log(x) * kInvLogGamma));
}

double representative(int i) {
    return 2 * std::exp(i * kLogGamma) / (kGamma + 1);
}

// numpy.percentile's default ("linear"): rank (n − 1) p, interpolated between neighbours;
// `at` gives the value of rank k (0-based) of the sorted samples.
template <class At> double percentile(std::int64_t n, double p, const At& at) {
    const double pos = static_cast<double>(n - 1) * p;
    const auto lo = static_cast<std::int64_t>(std::floor(pos));
    const std::int64_t hi = std::min(lo + 1, n - 1);
    const double a = at(lo);
    return a + (pos - static_cast<double>(lo)) * (at(hi) - a);
}

} // namespace

QuantileSketch::QuantileSketch(std::size_t exact_limit) : exact_limit_(exact_limit) {}

void QuantileSketch::add(double x) {
    if (count_ == 0) {
        min_ = max_ = x;
    } else {
        min_ = std::min(min_, x);
        max_ = std::max(max_, x);
    }
    ++count_;
    sum_ += x;
    if (histogram_) {
        bucket_add(x, 1);
        return;
    }
    sorted_ = false;
    values_.push_back(x);
    if (entries() > exact_limit_) {
        to_histogram();
    }
}

void QuantileSketch::add(double x, std::int64_t count) {
    if (count <= 0) {
        return;
    }
    if (count_ == 0) {
        min_ = max_ = x;
    } else {
        min_ = std::min(min_, x);
        max_ = std::max(max_, x);
    }
    count_ += count;
    sum_ += x * static_cast<double>(count);
    if (histogram_) {
        bucket_add(x, count);
        return;
    }
    sorted_ = false;
    // Steps of a steady batch repeat one gap; runs of equal values merge as they come.
    if (!runs_.empty() && runs_.back().first == x) {
        runs_.back().second += count;
        return;
    }
    runs_.emplace_back(x, count);
    if (entries() > exact_limit_) {
        to_histogram();
    }
}

void QuantileSketch::merge(const QuantileSketch& other) {
    if (other.count_ == 0) {
        return;
    }
    if (count_ == 0) {
        min_ = other.min_;
        max_ = other.max_;
    } else {
        min_ = std::min(min_, other.min_);
        max_ = std::max(max_, other.max_);
    }
    count_ += other.count_;
    sum_ += other.sum_;
    if (!histogram_ && !other.histogram_ && entries() + other.entries() <= exact_limit_) {
        // Concatenated in order, as if the other's samples had been added here.
        sorted_ = false;
        values_.insert(values_.end(), other.values_.begin(), other.values_.end());
        runs_.insert(runs_.end(), other.runs_.begin(), other.runs_.end());
        return;
    }
    if (!histogram_) {
        to_histogram();
    }
    for (const double x : other.values_) {
        bucket_add(x, 1);
    }
    for (const auto& [x, c] : other.runs_) {
        bucket_add(x, c);
    }
    if (other.histogram_) {
        zero_ += other.zero_;
        for (std::size_t j = 0; j < other.buckets_.size(); ++j) {
            if (other.buckets_[j] == 0) {
                continue;
            }
            const int i = other.offset_ + static_cast<int>(j);
            if (buckets_.empty()) {
                offset_ = i;
            }
            if (i < offset_) {
                buckets_.insert(buckets_.begin(), static_cast<std::size_t>(offset_ - i), 0);
                offset_ = i;
            }
            const auto k = static_cast<std::size_t>(i - offset_);
            if (k >= buckets_.size()) {
                buckets_.resize(k + 1, 0);
            }
            buckets_[k] += other.buckets_[j];
        }
    }
}

void QuantileSketch::bucket_add(double x, std::int64_t count) {
    if (!(x > 0)) {
        zero_ += count;
        return;
    }
    const int i = bucket_of(x);
    if (buckets_.empty()) {
        offset_ = i;
        buckets_.assign(1, 0);
    } else if (i < offset_) {
        buckets_.insert(buckets_.begin(), static_cast<std::size_t>(offset_ - i), 0);
        offset_ = i;
    } else if (static_cast<std::size_t>(i - offset_) >= buckets_.size()) {
        buckets_.resize(static_cast<std::size_t>(i - offset_) + 1, 0);
    }
    buckets_[static_cast<std::size_t>(i - offset_)] += count;
}

void QuantileSketch::to_histogram() {
    histogram_ = true;
    for (const double x : values_) {
        bucket_add(x, 1);
    }
    for (const auto& [x, c] : runs_) {
        bucket_add(x, c);
    }
    std::vector<double>().swap(values_);
    std::vector<std::pair<double, std::int64_t>>().swap(runs_);
}

double QuantileSketch::value_at_rank(std::int64_t k) const {
    // Histogram mode: the extremes are exact, the rest the representative of their bucket
    // (clamped to [min, max], which only brings it closer).
    if (k <= 0) {
        return min_;
    }
    if (k >= count_ - 1) {
        return max_;
    }
    std::int64_t c = zero_;
    if (k < c) {
        return std::clamp(0.0, min_, max_);
    }
    for (std::size_t j = 0; j < buckets_.size(); ++j) {
        c += buckets_[j];
        if (k < c) {
            return std::clamp(representative(offset_ + static_cast<int>(j)), min_, max_);
        }
    }
    return max_;
}

LatencyStats QuantileSketch::stats() {
    LatencyStats s;
    s.count = count_;
    if (count_ == 0) {
        return s;
    }
    if (histogram_) {
        s.mean = Seconds(sum_ / static_cast<double>(count_));
        s.max = Seconds(max_);
        const auto at = [&](std::int64_t k) { return value_at_rank(k); };
        s.p50 = Seconds(percentile(count_, 0.50, at));
        s.p90 = Seconds(percentile(count_, 0.90, at));
        s.p95 = Seconds(percentile(count_, 0.95, at));
        s.p99 = Seconds(percentile(count_, 0.99, at));
        return s;
    }
    if (runs_.empty()) {
        // Unit samples: sorted, summed in sorted order.
        if (!sorted_) {
            std::sort(values_.begin(), values_.end());
            sorted_ = true;
        }
        double sum = 0;
        for (const double x : values_) {
            sum += x;
        }
        s.mean = Seconds(sum / static_cast<double>(values_.size()));
        const auto at = [&](std::int64_t k) { return values_[static_cast<std::size_t>(k)]; };
        s.p50 = Seconds(percentile(count_, 0.50, at));
        s.p90 = Seconds(percentile(count_, 0.90, at));
        s.p95 = Seconds(percentile(count_, 0.95, at));
        s.p99 = Seconds(percentile(count_, 0.99, at));
        s.max = Seconds(values_.back());
        return s;
    }
    if (!values_.empty()) {
        for (const double x : values_) {
            runs_.emplace_back(x, 1);
        }
        std::vector<double>().swap(values_);
    }
    // Weighted runs: ordered by value (runs of equal values in any order give the same
    // statistics), the value at rank k of the expanded list.
    if (!sorted_) {
        std::sort(runs_.begin(), runs_.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        sorted_ = true;
    }
    double sum = 0;
    for (const auto& [x, c] : runs_) {
        sum += x * static_cast<double>(c);
    }
    s.mean = Seconds(sum / static_cast<double>(count_));
    s.max = Seconds(runs_.back().first);
    // Ranks asked for in increasing order: one pass with a cursor.
    std::size_t j = 0;
    std::int64_t below = 0; // samples in runs_[0, j)
    const auto at = [&](std::int64_t k) {
        if (k < below) {
            j = 0;
            below = 0;
        }
        while (j < runs_.size() && k >= below + runs_[j].second) {
            below += runs_[j].second;
            ++j;
        }
        return j < runs_.size() ? runs_[j].first : runs_.back().first;
    };
    s.p50 = Seconds(percentile(count_, 0.50, at));
    s.p90 = Seconds(percentile(count_, 0.90, at));
    s.p95 = Seconds(percentile(count_, 0.95, at));
    s.p99 = Seconds(percentile(count_, 0.99, at));
    return s;
}

std::size_t QuantileSketch::memory_bytes() const noexcept {
    return values_.capacity() * sizeof(double) + runs_.capacity() * sizeof(runs_[0]) +
           buckets_.capacity() * sizeof(std::int64_t);
}

} // namespace gpuplan::sim
