#include "model/moe.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gpuplan::model {

double expected_max_std_normal(int n) {
    if (n <= 1) {
        return 0.0;
    }
    const double nd = static_cast<double>(n);
    if (n > kQuadratureMaxN) {
        // The extreme-value expansion (Cramér 1946 §28.6; David & Nagaraja 2003 §10.5):
        // a_n − (ln ln n + ln 4π − 2γ) / (2 a_n), a_n = sqrt(2 ln n); within 0.7 % of the
        // integral above n = 4096.
        const double a = std::sqrt(2.0 * std::log(nd));
        return a - (std::log(std::log(nd)) + std::log(4.0 * std::numbers::pi) -
                    2.0 * std::numbers::egamma) /
                       (2.0 * a);
    }
    // Trapezoid rule on [−8, 10] (the integrand n φ(x) Φ(x)^(n−1) x is below 1e-9 outside it
    // for n up to 4096; the rule converges fast on such smooth, decaying integrands).
    constexpr double kLo = -8.0;
    constexpr double kHi = 10.0;
    constexpr int kSteps = 900;
    const double step = (kHi - kLo) / kSteps;
    const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * std::numbers::pi);
    double sum = 0.0;
    for (int i = 0; i <= kSteps; ++i) {
        const double x = kLo + step * i;
        const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
        const double f = x * nd * inv_sqrt_2pi * std::exp(-0.5 * x * x) * std::pow(cdf, nd - 1.0);
        sum += (i == 0 || i == kSteps) ? 0.5 * f : f;
    }
    return sum * step;
}

double moe_rank_imbalance(double tokens, double experts, double top_k, int ep, double z) {
    if (ep <= 1 || tokens <= 0 || top_k <= 0 || experts <= 1) {
        return 1.0;
    }
    const double e = static_cast<double>(ep);
    const double k = std::min(top_k, experts);
    const double spread = (experts - k) / (experts - 1.0); // hypergeometric correction
    const double ratio = 1.0 + z * std::sqrt(e * spread / (tokens * k));
    // A rank receives at most min(k, its experts) copies of each token.
    const double cap = e * std::min(k, experts / e) / k;
    return std::clamp(ratio, 1.0, std::max(1.0, cap));
}

double fused_moe_block_m(double rows_per_expert) {
    if (rows_per_expert <= 8.0) {
        return 16.0;
    }
    if (rows_per_expert <= 24.0) {
        return 32.0;
    }
    return rows_per_expert <= 128.0 ? 64.0 : 128.0;
}

double moe_tiles_per_expert(double rows_per_expert, double block_m) {
    if (rows_per_expert <= 0) {
        return 0.0;
    }
    if (block_m <= 0) {
        return rows_per_expert;
    }
    return std::max(1.0, rows_per_expert / block_m + (block_m - 1.0) / (2.0 * block_m));
}

double moe_padded_rows(double rows, double groups, double block_m) {
    if (block_m <= 0 || rows <= 0 || groups <= 0) {
        return rows;
    }
    return groups * block_m * moe_tiles_per_expert(rows / groups, block_m);
}

} // namespace gpuplan::model
