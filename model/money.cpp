#include "model/money.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"

#include <cstdio>

namespace gpuplan::model {

Money operator+(const Money& a, const Money& b) {
    if (a.currency != b.currency) {
        throw InvalidArgument("cannot add " + a.currency + " to " + b.currency +
                              "; give every price in one currency");
    }
    return {a.amount + b.amount, a.currency};
}

const char* to_string(PriceBasis basis) {
    switch (basis) {
    case PriceBasis::Once: return "";
    case PriceBasis::Hour: return "/h";
    case PriceBasis::KilowattHour: return "/kWh";
    case PriceBasis::Month: return "/month";
    case PriceBasis::KilowattMonth: return "/kW-month";
    case PriceBasis::MillionTokens: return "/Mtok";
    }
    return "";
}

std::string to_string(const Money& m) {
    char buf[64];
    if (m.currency == "USD") {
        std::snprintf(buf, sizeof buf, "$%.2f", m.amount);
    } else {
        std::snprintf(buf, sizeof buf, "%.2f %s", m.amount, m.currency.c_str());
    }
    return mark_non_finite(m.amount, buf);
}

std::string to_string(const Price& p) {
    return to_string(p.money) + to_string(p.per);
}

} // namespace gpuplan::model
