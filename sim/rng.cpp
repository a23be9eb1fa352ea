#include "sim/rng.hpp"

#include <cmath>

namespace gpuplan::sim {
namespace {

// splitmix64 (Steele, Lea, Flood 2014), the seeding function recommended for xoshiro.
std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// GCC's 128-bit integer; __extension__ keeps -Wpedantic quiet about it.
__extension__ using U128 = unsigned __int128;

constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
}

} // namespace

Rng::Rng(std::uint64_t seed) noexcept {
    std::uint64_t x = seed;
    for (auto& s : s_) {
        s = splitmix64(x);
    }
}

Rng Rng::fork(std::uint64_t stream) const noexcept {
    // Mix the original state words with the stream id; the result is a fresh seed.
    std::uint64_t x = s_[0] ^ rotl(s_[1], 17) ^ (stream * 0xd1342543de82ef95ULL);
    return Rng(splitmix64(x));
}

// xoshiro256** 1.0 (Blackman and Vigna, https://prng.di.unimi.it/xoshiro256starstar.c).
std::uint64_t Rng::next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

double Rng::uniform() noexcept {
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

std::uint64_t Rng::below(std::uint64_t n) noexcept {
    if (n == 0) {
        return 0;
    }
    // Lemire 2019, "Fast random integer generation in an interval".
    U128 m = static_cast<U128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
        const std::uint64_t threshold = (0 - n) % n;
        while (low < threshold) {
            m = static_cast<U128>(next()) * n;
            low = static_cast<std::uint64_t>(m);
        }
    }
    return static_cast<std::uint64_t>(m >> 64);
}

double Rng::exponential(double mean) noexcept {
    return -mean * std::log1p(-uniform());
}

double Rng::normal(double mean, double stddev) noexcept {
    if (has_spare_) {
        has_spare_ = false;
        return mean + stddev * spare_;
    }
    double u = 0.0;
    double v = 0.0;
    double s = 0.0;
    do {
        u = 2.0 * uniform() - 1.0;
        v = 2.0 * uniform() - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return mean + stddev * u * f;
}

double Rng::lognormal(double mu, double sigma) noexcept {
    return std::exp(normal(mu, sigma));
}

double Rng::gamma(double shape, double scale) noexcept {
    if (shape < 1.0) {
        // Boost: Gamma(k) = Gamma(k + 1) × U^(1/k) (Marsaglia and Tsang, §6).
        const double u = uniform();
        return gamma(shape + 1.0, scale) * std::pow(u > 0.0 ? u : 0x1.0p-53, 1.0 / shape);
    }
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
        double x = 0.0;
        double v = 0.0;
        do {
            x = normal(0.0, 1.0);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        const double u = uniform();
        if (u < 1.0 - 0.0331 * x * x * x * x) {
            return d * v * scale;
        }
        if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) {
            return d * v * scale;
        }
    }
}

} // namespace gpuplan::sim
