#pragma once
/// Money with a currency, and prices per unit of something (hour, kWh, month, ...).
/// Currencies are never converted implicitly: adding USD to CNY is an error.

#include <compare>
#include <string>

namespace gpuplan::model {

/// An amount in one ISO-4217-like currency code ("USD", "CNY", "EUR").
struct Money {
    double amount = 0.0;
    std::string currency = "USD";
    friend bool operator==(const Money&, const Money&) = default;
};

/// What a price is charged per.
enum class PriceBasis { Once, Hour, KilowattHour, Month, KilowattMonth, MillionTokens };

/// A price: money per basis unit, e.g. $2.10/h is {2.10 USD, Hour}.
struct Price {
    Money money;
    PriceBasis per = PriceBasis::Once;
    friend bool operator==(const Price&, const Price&) = default;
};

/// Adds two amounts; throws InvalidArgument when the currencies differ.
[[nodiscard]] Money operator+(const Money& a, const Money& b);
[[nodiscard]] inline Money operator*(const Money& m, double k) {
    return {m.amount * k, m.currency};
}

/// "$2.10/h", "0.6 CNY/kWh", "25000 USD".
[[nodiscard]] std::string to_string(const Price& p);
[[nodiscard]] std::string to_string(const Money& m);
[[nodiscard]] const char* to_string(PriceBasis basis);

} // namespace gpuplan::model
