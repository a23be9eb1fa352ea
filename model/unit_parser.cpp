#include "model/unit_parser.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <span>

namespace gpuplan::model {
namespace {

struct UnitDef {
    std::string_view symbol; // matched case-sensitively: "Gb/s" (bits) is not "GB/s"
    double to_si;
};

// Decimal prefixes are powers of 10, binary prefixes powers of 2 (IEC 80000-13).
constexpr std::array kBytes = {UnitDef{"B", 1},
                               UnitDef{"bytes", 1},
                               UnitDef{"kB", 1e3},
                               UnitDef{"KB", 1e3},
                               UnitDef{"MB", 1e6},
                               UnitDef{"GB", 1e9},
                               UnitDef{"TB", 1e12},
                               UnitDef{"PB", 1e15},
                               UnitDef{"KiB", kKiB},
                               UnitDef{"MiB", kMiB},
                               UnitDef{"GiB", kGiB},
                               UnitDef{"TiB", kTiB},
                               UnitDef{"PiB", kTiB * 1024}};
constexpr std::array kSeconds = {
    UnitDef{"ns", 1e-9}, UnitDef{"us", 1e-6}, UnitDef{"\xC2\xB5s", 1e-6}, UnitDef{"ms", 1e-3},
    UnitDef{"s", 1},     UnitDef{"min", 60},  UnitDef{"h", 3600},         UnitDef{"d", 86400}};
constexpr std::array kFlops = {UnitDef{"FLOP", 1},
                               UnitDef{"GFLOP", 1e9},
                               UnitDef{"TFLOP", 1e12},
                               UnitDef{"PFLOP", 1e15},
                               UnitDef{"EFLOP", 1e18},
                               UnitDef{"ZFLOP", 1e21},
                               UnitDef{"PF-days", 1e15 * 86400}};
constexpr std::array kFlopsRate = {
    UnitDef{"FLOPS", 1},     UnitDef{"GFLOPS", 1e9},   UnitDef{"TFLOPS", 1e12},
    UnitDef{"PFLOPS", 1e15}, UnitDef{"EFLOPS", 1e18},  UnitDef{"FLOP/s", 1},
    UnitDef{"GFLOP/s", 1e9}, UnitDef{"TFLOP/s", 1e12}, UnitDef{"PFLOP/s", 1e15},
    UnitDef{"OPS", 1},       UnitDef{"GOPS", 1e9},     UnitDef{"TOPS", 1e12},
    UnitDef{"POPS", 1e15}};
constexpr std::array kBytesRate = {
    UnitDef{"B/s", 1}, UnitDef{"KB/s", 1e3}, UnitDef{"kB/s", 1e3}, UnitDef{"MB/s", 1e6},
    UnitDef{"GB/s", 1e9}, UnitDef{"TB/s", 1e12}, UnitDef{"KiB/s", kKiB}, UnitDef{"MiB/s", kMiB},
    UnitDef{"GiB/s", kGiB}, UnitDef{"TiB/s", kTiB}, UnitDef{"GBps", 1e9}, UnitDef{"TBps", 1e12},
    // Network rates are quoted in bits per second: 400 Gb/s = 50 GB/s.
    UnitDef{"Mb/s", 1e6 / 8}, UnitDef{"Gb/s", 1e9 / 8}, UnitDef{"Tb/s", 1e12 / 8},
    UnitDef{"Mbps", 1e6 / 8}, UnitDef{"Gbps", 1e9 / 8}, UnitDef{"Tbps", 1e12 / 8}};
constexpr std::array kWatts = {UnitDef{"W", 1}, UnitDef{"kW", 1e3}, UnitDef{"MW", 1e6}};
constexpr std::array kJoules = {UnitDef{"J", 1},     UnitDef{"kJ", 1e3},    UnitDef{"MJ", 1e6},
                                UnitDef{"Wh", 3600}, UnitDef{"kWh", 3.6e6}, UnitDef{"MWh", 3.6e9}};
constexpr std::array kHertz = {UnitDef{"Hz", 1}, UnitDef{"kHz", 1e3}, UnitDef{"MHz", 1e6},
                               UnitDef{"GHz", 1e9}};

std::span<const UnitDef> units_of(Dimension dim) {
    switch (dim) {
    case Dimension::Bytes: return kBytes;
    case Dimension::Seconds: return kSeconds;
    case Dimension::Flops: return kFlops;
    case Dimension::FlopsPerSecond: return kFlopsRate;
    case Dimension::BytesPerSecond: return kBytesRate;
    case Dimension::Watts: return kWatts;
    case Dimension::Joules: return kJoules;
    case Dimension::Hertz: return kHertz;
    }
    return {};
}

const char* dimension_name(Dimension dim) {
    switch (dim) {
    case Dimension::Bytes: return "a size";
    case Dimension::Seconds: return "a time";
    case Dimension::Flops: return "an amount of compute";
    case Dimension::FlopsPerSecond: return "a compute rate";
    case Dimension::BytesPerSecond: return "a bandwidth";
    case Dimension::Watts: return "a power";
    case Dimension::Joules: return "an energy";
    case Dimension::Hertz: return "a frequency";
    }
    return "a value";
}

const char* example_of(Dimension dim) {
    switch (dim) {
    case Dimension::Bytes: return "'80 GiB' (binary) or '80 GB' (decimal)";
    case Dimension::Seconds: return "'200 ms'";
    case Dimension::Flops: return "'3.14e23 FLOP'";
    case Dimension::FlopsPerSecond: return "'989 TFLOPS'";
    case Dimension::BytesPerSecond: return "'3.35 TB/s' or '400 Gb/s'";
    case Dimension::Watts: return "'700 W' or '10.2 kW'";
    case Dimension::Joules: return "'1.5 kWh'";
    case Dimension::Hertz: return "'1980 MHz'";
    }
    return "";
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

// Splits a leading decimal number (optionally signed, with exponent) from the rest.
// Thousands separators are not accepted: "1,000" would be ambiguous across locales.
bool split_number(std::string_view s, double& value, std::string_view& rest) {
    const char* first = s.data();
    const char* last = s.data() + s.size();
    if (first != last && *first == '+') {
        ++first;
    }
    const auto [ptr, ec] = std::from_chars(first, last, value, std::chars_format::general);
    if (ec != std::errc() || ptr == first || !std::isfinite(value)) {
        return false;
    }
    rest = trim(std::string_view(ptr, static_cast<std::size_t>(last - ptr)));
    return true;
}

constexpr double kLargestMagnitude = 1e40; // far above any real quantity (1e30 FLOP ~ all of AI)

constexpr double kSlowestBandwidth = 1e3; // 1 kB/s: slower than any link or memory
constexpr double kSlowestCompute = 1e9;   // 1 GFLOPS: slower than any accelerator
constexpr double kLargestBytes = 1e21;    // 1 ZB: KV blocks of a larger memory pass 2^53

std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

} // namespace

std::string accepted_units(Dimension dim) {
    std::string out;
    for (const auto& u : units_of(dim)) {
        out += (out.empty() ? "" : ", ") + std::string(u.symbol);
    }
    return out;
}

ParsedQuantity parse_quantity(std::string_view text, Dimension dim) {
    const std::string_view s = trim(text);
    if (s.empty()) {
        return {std::nullopt, std::string("empty value; expected ") + dimension_name(dim) +
                                  " such as " + example_of(dim)};
    }
    double value = 0;
    std::string_view unit;
    if (!split_number(s, value, unit)) {
        return {std::nullopt, quoted(s) + " is not a number with a unit; write " +
                                  dimension_name(dim) + " such as " + example_of(dim)};
    }
    if (unit.empty()) {
        return {std::nullopt, quoted(s) + " has no unit; write " + example_of(dim)};
    }
    for (const auto& u : units_of(dim)) {
        if (unit == u.symbol) {
            const double si = value * u.to_si;
            if (!std::isfinite(si) || std::fabs(si) > kLargestMagnitude) {
                return {std::nullopt, quoted(s) + " is out of range"};
            }
            // Physical minimums for rates: a positive rate below them is a typo (a unit off by
            // orders of magnitude) and would make every time derived from it overflow.
            if (dim == Dimension::BytesPerSecond && si > 0 && si < kSlowestBandwidth) {
                return {std::nullopt, quoted(s) + " is below any real bandwidth; give at least " +
                                          "1 kB/s (check the unit)"};
            }
            if (dim == Dimension::Bytes && si > kLargestBytes) {
                return {std::nullopt, quoted(s) + " is beyond any real size; give at most 1e21 B " +
                                          "(check the unit)"};
            }
            if (dim == Dimension::FlopsPerSecond && si > 0 && si < kSlowestCompute) {
                return {std::nullopt, quoted(s) + " is below any real compute rate; give at " +
                                          "least 1 GFLOPS (check the unit)"};
            }
            return {si, {}};
        }
    }
    return {std::nullopt, "unknown unit '" + std::string(unit) + "' in " + quoted(s) + " for " +
                              dimension_name(dim) + "; use one of " + accepted_units(dim)};
}

double parse_quantity_or_throw(std::string_view text, Dimension dim, std::string_view what) {
    const ParsedQuantity p = parse_quantity(text, dim);
    if (!p.si) {
        throw InputError(std::string(what) + ": " + p.error);
    }
    return *p.si;
}

Bytes parse_bytes(std::string_view text, std::string_view what) {
    return parse_as<Bytes>(text, Dimension::Bytes, what);
}
Seconds parse_seconds(std::string_view text, std::string_view what) {
    return parse_as<Seconds>(text, Dimension::Seconds, what);
}
BytesPerSecond parse_bandwidth(std::string_view text, std::string_view what) {
    return parse_as<BytesPerSecond>(text, Dimension::BytesPerSecond, what);
}
FlopsPerSecond parse_flops_rate(std::string_view text, std::string_view what) {
    return parse_as<FlopsPerSecond>(text, Dimension::FlopsPerSecond, what);
}
Watts parse_watts(std::string_view text, std::string_view what) {
    return parse_as<Watts>(text, Dimension::Watts, what);
}

namespace {

struct SymbolCurrency {
    std::string_view symbol;
    std::string_view code;
};
constexpr std::array kCurrencySymbols = {
    SymbolCurrency{"$", "USD"}, SymbolCurrency{"\xE2\x82\xAC", "EUR"},
    SymbolCurrency{"\xC2\xA5", "CNY"}, SymbolCurrency{"\xEF\xBF\xA5", "CNY"},
    SymbolCurrency{"\xC2\xA3", "GBP"}};

struct BasisName {
    std::string_view name;
    PriceBasis basis;
};
constexpr std::array kBases = {BasisName{"h", PriceBasis::Hour},
                               BasisName{"hr", PriceBasis::Hour},
                               BasisName{"hour", PriceBasis::Hour},
                               BasisName{"GPU-hour", PriceBasis::Hour},
                               BasisName{"kWh", PriceBasis::KilowattHour},
                               BasisName{"month", PriceBasis::Month},
                               BasisName{"mo", PriceBasis::Month},
                               BasisName{"kW-month", PriceBasis::KilowattMonth},
                               BasisName{"Mtok", PriceBasis::MillionTokens},
                               BasisName{"M tokens", PriceBasis::MillionTokens}};

bool is_currency_code(std::string_view s) {
    if (s.size() != 3) {
        return false;
    }
    for (char c : s) {
        if (c < 'A' || c > 'Z') {
            return false;
        }
    }
    return true;
}

} // namespace

ParsedPrice parse_price(std::string_view text) {
    std::string_view s = trim(text);
    const std::string hint =
        "; write e.g. '$25000', '$2.10/h', '0.6 CNY/kWh' or '180 USD/kW-month'";
    std::string currency;
    for (const auto& c : kCurrencySymbols) {
        if (s.starts_with(c.symbol)) {
            currency = c.code;
            s.remove_prefix(c.symbol.size());
            break;
        }
    }
    double value = 0;
    std::string_view rest;
    if (!split_number(s, value, rest)) {
        return {std::nullopt, quoted(trim(text)) + " is not a price" + hint};
    }
    if (value < 0 || value > kLargestMagnitude) {
        return {std::nullopt, quoted(trim(text)) + " is out of range" + hint};
    }
    std::string_view basis_text;
    if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
        basis_text = trim(rest.substr(slash + 1));
        rest = trim(rest.substr(0, slash));
    }
    if (!rest.empty()) {
        if (!currency.empty() || !is_currency_code(rest)) {
            return {std::nullopt,
                    "unknown currency '" + std::string(rest) + "' in " + quoted(trim(text)) + hint};
        }
        currency = rest;
    }
    if (currency.empty()) {
        return {std::nullopt, quoted(trim(text)) + " has no currency" + hint};
    }
    PriceBasis basis = PriceBasis::Once;
    if (!basis_text.empty()) {
        bool found = false;
        for (const auto& b : kBases) {
            if (basis_text == b.name) {
                basis = b.basis;
                found = true;
            }
        }
        if (!found) {
            return {std::nullopt, "unknown price unit '/" + std::string(basis_text) + "' in " +
                                      quoted(trim(text)) +
                                      "; use /h, /kWh, /month, /kW-month or /Mtok"};
        }
    }
    return {Price{Money{value, currency}, basis}, {}};
}

Price parse_price_or_throw(std::string_view text, std::string_view what) {
    ParsedPrice p = parse_price(text);
    if (!p.price) {
        throw InputError(std::string(what) + ": " + p.error);
    }
    return *p.price;
}

namespace {
std::string printf_string(const char* fmt, double v, const char* unit) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v, unit);
    return mark_non_finite(v, buf);
}
} // namespace

std::string format_in_gib(Bytes b) {
    return gpuplan::checked_format("{:.2f} GiB", b.si() / kGiB);
}

std::string format_fixed(double v, int decimals) {
    return gpuplan::checked_format("{:.{}f}", v, decimals);
}

std::string format_percent(double fraction) {
    return gpuplan::checked_format("{:.0f} %", fraction * 100.0);
}

std::string format_gib(Bytes b, int decimals) {
    char fmt[16];
    std::snprintf(fmt, sizeof fmt, "%%.%df %%s", decimals);
    const double v = b.si();
    if (std::fabs(v) >= kGiB) {
        return printf_string(fmt, v / kGiB, "GiB");
    }
    if (std::fabs(v) >= kMiB) {
        return printf_string(fmt, v / kMiB, "MiB");
    }
    return printf_string(fmt, v / kKiB, "KiB");
}

std::string format_gb(Bytes b, int decimals) {
    char fmt[16];
    std::snprintf(fmt, sizeof fmt, "%%.%df %%s", decimals);
    const double v = b.si();
    if (std::fabs(v) >= 1e12) {
        return printf_string(fmt, v / 1e12, "TB");
    }
    if (std::fabs(v) >= 1e9) {
        return printf_string(fmt, v / 1e9, "GB");
    }
    return printf_string(fmt, v / 1e6, "MB");
}

std::string format_seconds(Seconds s) {
    const double v = s.si();
    if (std::fabs(v) >= 86400 * 2) {
        return printf_string("%.1f %s", v / 86400, "days");
    }
    if (std::fabs(v) >= 7200) {
        return printf_string("%.2f %s", v / 3600, "h");
    }
    if (std::fabs(v) >= 1) {
        return printf_string("%.3f %s", v, "s");
    }
    if (std::fabs(v) >= 1e-3) {
        return printf_string("%.2f %s", v * 1e3, "ms");
    }
    return printf_string("%.1f %s", v * 1e6, "us");
}

std::string format_rate(BytesPerSecond r) {
    const double v = r.si();
    return v >= 1e12 ? printf_string("%.2f %s", v / 1e12, "TB/s")
                     : printf_string("%.1f %s", v / 1e9, "GB/s");
}

std::string format_flops_rate(FlopsPerSecond r) {
    const double v = r.si();
    return v >= 1e15 ? printf_string("%.2f %s", v / 1e15, "PFLOPS")
                     : printf_string("%.1f %s", v / 1e12, "TFLOPS");
}

} // namespace gpuplan::model
