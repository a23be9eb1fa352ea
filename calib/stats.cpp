#include "calib/stats.hpp"

#include <algorithm>
#include <utility>

namespace gpuplan::calib {
namespace {

// The rule on (value, weight) pairs sorted by value, `total` being the weights' sum.
double nearest_rank_sorted(const std::vector<std::pair<double, double>>& sorted, double total,
                           double q) {
    double acc = 0;
    for (const auto& [value, weight] : sorted) {
        acc += weight;
        if (acc >= q * total) {
            return value;
        }
    }
    return sorted.back().first; // rounding left the sum just short of q × total
}

double nearest_rank_of(const std::vector<double>& values, const std::vector<double>* weights,
                       double q) {
    if (values.empty()) {
        return 0;
    }
    double total = 0;
    std::vector<std::pair<double, double>> sorted;
    sorted.reserve(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double w = weights ? (*weights)[i] : 1.0;
        total += w;
        sorted.emplace_back(values[i], w);
    }
    std::sort(sorted.begin(), sorted.end());
    return nearest_rank_sorted(sorted, total, q);
}

} // namespace

double nearest_rank(const std::vector<double>& values, double q) {
    return nearest_rank_of(values, nullptr, q);
}

double weighted_nearest_rank(const std::vector<double>& values, const std::vector<double>& weights,
                             double q) {
    return nearest_rank_of(values, &weights, q);
}

} // namespace gpuplan::calib
