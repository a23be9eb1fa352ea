#pragma once
/// Parses unit strings as they appear in YAML and on the command line: "80 GiB", "141 GB",
/// "3.35 TB/s", "400 Gb/s", "989 TFLOPS", "700 W", "10.2 kW", "2 us", "1980 MHz",
/// "$2.10/h", "0.6 CNY/kWh". A dimensional value without a unit is an error.

#include "model/money.hpp"
#include "model/units.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace gpuplan::model {

/// The dimension a parsed value must have.
enum class Dimension {
    Bytes,
    Seconds,
    Flops,
    FlopsPerSecond,
    BytesPerSecond,
    Watts,
    Joules,
    Hertz
};

/// A parse result: the SI value or a message saying what was wrong and how to fix it.
struct ParsedQuantity {
    std::optional<double> si;
    std::string error; ///< lowercase sentence, empty on success
};

/// Parses `text` as a value of `dim`. Never throws; the error names the accepted units.
[[nodiscard]] ParsedQuantity parse_quantity(std::string_view text, Dimension dim);

/// Parses or throws InputError with `what` (e.g. a flag or key name) in the message.
[[nodiscard]] double parse_quantity_or_throw(std::string_view text, Dimension dim,
                                             std::string_view what);

template <class Q>
[[nodiscard]] Q parse_as(std::string_view text, Dimension dim, std::string_view what) {
    return Q(parse_quantity_or_throw(text, dim, what));
}

/// Typed shorthands, throwing InputError.
[[nodiscard]] Bytes parse_bytes(std::string_view text, std::string_view what = "value");
[[nodiscard]] Seconds parse_seconds(std::string_view text, std::string_view what = "value");
[[nodiscard]] BytesPerSecond parse_bandwidth(std::string_view text,
                                             std::string_view what = "value");
[[nodiscard]] FlopsPerSecond parse_flops_rate(std::string_view text,
                                              std::string_view what = "value");
[[nodiscard]] Watts parse_watts(std::string_view text, std::string_view what = "value");

/// Parses a price: "$25000", "25000 USD", "$2.10/h", "0.6 CNY/kWh", "¥0.6/kWh", "€150/month",
/// "$180/kW-month", "$0.60/Mtok". Never throws.
struct ParsedPrice {
    std::optional<Price> price;
    std::string error;
};
[[nodiscard]] ParsedPrice parse_price(std::string_view text);
[[nodiscard]] Price parse_price_or_throw(std::string_view text, std::string_view what);

/// Accepted unit spellings of a dimension, for messages ("B, KB, KiB, MB, MiB, GB, GiB, ...").
[[nodiscard]] std::string accepted_units(Dimension dim);

/// Human-readable formatting: bytes in GiB/MiB ("12.55 GiB"), decimal variants, rates, times.
[[nodiscard]] std::string format_gib(Bytes b, int decimals = 2);
/// Bytes always in GiB with two decimals ("0.50 GiB"), as memory reports compare with a GPU.
[[nodiscard]] std::string format_in_gib(Bytes b);
/// `v` with `decimals` digits after the point (printf "%.*f"): the one fixed-point formatter of
/// messages and tables.
[[nodiscard]] std::string format_fixed(double v, int decimals);
/// A fraction as a whole percentage with a space: 0.374 -> "37 %".
[[nodiscard]] std::string format_percent(double fraction);
[[nodiscard]] std::string format_gb(Bytes b, int decimals = 2);
[[nodiscard]] std::string format_seconds(Seconds s);
[[nodiscard]] std::string format_rate(BytesPerSecond r);
[[nodiscard]] std::string format_flops_rate(FlopsPerSecond r);

} // namespace gpuplan::model
