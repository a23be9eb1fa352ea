#pragma once
/// Strong quantity types. Each stores a double in SI base units (bytes, seconds, FLOP, watts,
/// joules, hertz); only physically meaningful operators exist. `.si()` is the one way out.

#include <compare>

namespace gpuplan {

/// A physical quantity of one dimension, stored in SI base units.
template <class Tag> class Quantity {
  public:
    constexpr Quantity() = default;
    constexpr explicit Quantity(double si) : si_(si) {}
    /// The value in SI base units.
    [[nodiscard]] constexpr double si() const { return si_; }

    friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.si_ + b.si_); }
    friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.si_ - b.si_); }
    friend constexpr Quantity operator-(Quantity a) { return Quantity(-a.si_); }
    friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.si_ * k); }
    friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.si_ * k); }
    friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.si_ / k); }
    /// The ratio of two values of one dimension is a plain number.
    friend constexpr double operator/(Quantity a, Quantity b) { return a.si_ / b.si_; }
    constexpr Quantity& operator+=(Quantity o) {
        si_ += o.si_;
        return *this;
    }
    constexpr Quantity& operator-=(Quantity o) {
        si_ -= o.si_;
        return *this;
    }
    constexpr Quantity& operator*=(double k) {
        si_ *= k;
        return *this;
    }
    friend constexpr auto operator<=>(const Quantity&, const Quantity&) = default;

  private:
    double si_ = 0.0;
};

using Bytes = Quantity<struct BytesTag>;
using Seconds = Quantity<struct SecondsTag>;
using Flops = Quantity<struct FlopsTag>;
using FlopsPerSecond = Quantity<struct FlopsPerSecondTag>;
using BytesPerSecond = Quantity<struct BytesPerSecondTag>;
using Watts = Quantity<struct WattsTag>;
using Joules = Quantity<struct JoulesTag>;
using Hertz = Quantity<struct HertzTag>;

// Cross-dimension operators: only the ones with a physical meaning.
constexpr Seconds operator/(Bytes b, BytesPerSecond r) {
    return Seconds(b.si() / r.si());
}
constexpr Seconds operator/(Flops f, FlopsPerSecond r) {
    return Seconds(f.si() / r.si());
}
constexpr BytesPerSecond operator/(Bytes b, Seconds t) {
    return BytesPerSecond(b.si() / t.si());
}
constexpr FlopsPerSecond operator/(Flops f, Seconds t) {
    return FlopsPerSecond(f.si() / t.si());
}
constexpr Bytes operator*(BytesPerSecond r, Seconds t) {
    return Bytes(r.si() * t.si());
}
constexpr Flops operator*(FlopsPerSecond r, Seconds t) {
    return Flops(r.si() * t.si());
}
constexpr Joules operator*(Watts p, Seconds t) {
    return Joules(p.si() * t.si());
}
constexpr Joules operator*(Seconds t, Watts p) {
    return Joules(p.si() * t.si());
}
constexpr Watts operator/(Joules e, Seconds t) {
    return Watts(e.si() / t.si());
}
constexpr Seconds operator/(Joules e, Watts p) {
    return Seconds(e.si() / p.si());
}

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kTiB = 1024.0 * kGiB;

namespace literals {
// Binary (GiB) and decimal (GB) prefixes are different units.
constexpr Bytes operator""_B(long double v) {
    return Bytes(double(v));
}
constexpr Bytes operator""_B(unsigned long long v) {
    return Bytes(double(v));
}
constexpr Bytes operator""_KiB(unsigned long long v) {
    return Bytes(double(v) * kKiB);
}
constexpr Bytes operator""_MiB(unsigned long long v) {
    return Bytes(double(v) * kMiB);
}
constexpr Bytes operator""_GiB(long double v) {
    return Bytes(double(v) * kGiB);
}
constexpr Bytes operator""_GiB(unsigned long long v) {
    return Bytes(double(v) * kGiB);
}
constexpr Bytes operator""_GB(long double v) {
    return Bytes(double(v) * 1e9);
}
constexpr Bytes operator""_GB(unsigned long long v) {
    return Bytes(double(v) * 1e9);
}
constexpr BytesPerSecond operator""_TBps(long double v) {
    return BytesPerSecond(double(v) * 1e12);
}
constexpr BytesPerSecond operator""_GBps(long double v) {
    return BytesPerSecond(double(v) * 1e9);
}
constexpr BytesPerSecond operator""_GBps(unsigned long long v) {
    return BytesPerSecond(double(v) * 1e9);
}
constexpr FlopsPerSecond operator""_TFLOPS(long double v) {
    return FlopsPerSecond(double(v) * 1e12);
}
constexpr FlopsPerSecond operator""_TFLOPS(unsigned long long v) {
    return FlopsPerSecond(double(v) * 1e12);
}
constexpr Seconds operator""_s(long double v) {
    return Seconds(double(v));
}
constexpr Seconds operator""_s(unsigned long long v) {
    return Seconds(double(v));
}
constexpr Seconds operator""_ms(long double v) {
    return Seconds(double(v) * 1e-3);
}
constexpr Seconds operator""_ms(unsigned long long v) {
    return Seconds(double(v) * 1e-3);
}
constexpr Seconds operator""_us(long double v) {
    return Seconds(double(v) * 1e-6);
}
constexpr Seconds operator""_us(unsigned long long v) {
    return Seconds(double(v) * 1e-6);
}
constexpr Watts operator""_W(long double v) {
    return Watts(double(v));
}
constexpr Watts operator""_W(unsigned long long v) {
    return Watts(double(v));
}
constexpr Watts operator""_kW(long double v) {
    return Watts(double(v) * 1e3);
}
constexpr Watts operator""_kW(unsigned long long v) {
    return Watts(double(v) * 1e3);
}
} // namespace literals

} // namespace gpuplan
