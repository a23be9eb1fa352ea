#include "model/autoscaler.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::model {

int desired_replicas(const Autoscaler& a, int current, double metric) {
    const double ratio = metric / a.target;
    int desired = current;
    if (std::abs(ratio - 1.0) > a.tolerance) {
        // A tiny epsilon keeps 2 × 0.7 / 0.7 from rounding up to 3.
        desired = static_cast<int>(std::ceil(current * ratio - 1e-9));
    }
    return std::clamp(desired, a.min_replicas, a.max_replicas);
}

} // namespace gpuplan::model
