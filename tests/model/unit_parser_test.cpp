#include "model/unit_parser.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

using namespace gpuplan;
using namespace gpuplan::model;

TEST(UnitParser, BinaryAndDecimalPrefixesAreDifferentUnits) {
    EXPECT_DOUBLE_EQ(parse_bytes("80 GiB").si(), 80.0 * 1024 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(parse_bytes("141 GB").si(), 141e9);
    EXPECT_DOUBLE_EQ(parse_bytes("50 MiB").si(), 50.0 * 1048576);
    EXPECT_DOUBLE_EQ(parse_bytes("2 TiB").si(), 2.0 * 1099511627776.0);
}

TEST(UnitParser, RatesPowerAndTime) {
    EXPECT_DOUBLE_EQ(parse_bandwidth("3.35 TB/s").si(), 3.35e12);
    EXPECT_DOUBLE_EQ(parse_bandwidth("400 Gb/s").si(), 50e9); // bits: 400/8 GB/s
    EXPECT_DOUBLE_EQ(parse_flops_rate("989 TFLOPS").si(), 989e12);
    EXPECT_DOUBLE_EQ(parse_flops_rate("1978.9 TOPS").si(), 1978.9e12);
    EXPECT_DOUBLE_EQ(parse_watts("700 W").si(), 700);
    EXPECT_DOUBLE_EQ(parse_watts("10.2 kW").si(), 10200);
    EXPECT_DOUBLE_EQ(parse_seconds("2 us").si(), 2e-6);
    EXPECT_DOUBLE_EQ(parse_seconds("250ms").si(), 0.25);
    EXPECT_DOUBLE_EQ(*parse_quantity("1980 MHz", Dimension::Hertz).si, 1.98e9);
    EXPECT_DOUBLE_EQ(*parse_quantity("1.5 kWh", Dimension::Joules).si, 5.4e6);
    EXPECT_DOUBLE_EQ(*parse_quantity("3.14e23 FLOP", Dimension::Flops).si, 3.14e23);
}

TEST(UnitParser, BareNumberIsAnErrorThatSuggestsUnits) {
    const auto p = parse_quantity("80", Dimension::Bytes);
    EXPECT_FALSE(p.si);
    EXPECT_EQ(p.error, "'80' has no unit; write '80 GiB' (binary) or '80 GB' (decimal)");
}

TEST(UnitParser, WrongDimensionNamesAcceptedUnits) {
    const auto p = parse_quantity("700 W", Dimension::Bytes);
    EXPECT_FALSE(p.si);
    EXPECT_NE(p.error.find("unknown unit 'W'"), std::string::npos);
    EXPECT_NE(p.error.find("GiB"), std::string::npos);
}

TEST(UnitParser, RejectsGarbageAndOverflow) {
    EXPECT_FALSE(parse_quantity("", Dimension::Bytes).si);
    EXPECT_FALSE(parse_quantity("GiB", Dimension::Bytes).si);
    EXPECT_FALSE(parse_quantity("1e400 GB", Dimension::Bytes).si);
    EXPECT_FALSE(parse_quantity("1e39 PB", Dimension::Bytes).si);
    EXPECT_FALSE(parse_quantity("nan GB", Dimension::Bytes).si);
    EXPECT_FALSE(parse_quantity("1,000 GB", Dimension::Bytes).si);
    EXPECT_THROW((void)parse_bytes("12 parsecs"), InputError);
}

TEST(UnitParser, PricesCarryCurrencyAndBasis) {
    const Price rent = *parse_price("$2.10/h").price;
    EXPECT_DOUBLE_EQ(rent.money.amount, 2.10);
    EXPECT_EQ(rent.money.currency, "USD");
    EXPECT_EQ(rent.per, PriceBasis::Hour);
    const Price power = *parse_price("0.6 CNY/kWh").price;
    EXPECT_DOUBLE_EQ(power.money.amount, 0.6);
    EXPECT_EQ(power.money.currency, "CNY");
    EXPECT_EQ(power.per, PriceBasis::KilowattHour);
    const Price once = *parse_price("25000 USD").price;
    EXPECT_EQ(once.per, PriceBasis::Once);
    EXPECT_EQ(parse_price("\xC2\xA5"
                          "0.6/kWh")
                  .price->money.currency,
              "CNY");
    EXPECT_EQ(parse_price("$180/kW-month").price->per, PriceBasis::KilowattMonth);
    EXPECT_FALSE(parse_price("2.10/h").price);     // no currency
    EXPECT_FALSE(parse_price("$2.10/week").price); // unknown basis
    EXPECT_FALSE(parse_price("-5 USD").price);
}

TEST(Money, AddingDifferentCurrenciesIsAnError) {
    EXPECT_DOUBLE_EQ((Money{1, "USD"} + Money{2, "USD"}).amount, 3);
    EXPECT_THROW((void)(Money{1, "USD"} + Money{2, "CNY"}), InvalidArgument);
}

TEST(Units, CrossDimensionArithmetic) {
    using namespace gpuplan::literals;
    // 1 TB/s reading 14 GB takes 14 ms (docs/domain.md §2 single-stream bound).
    EXPECT_DOUBLE_EQ((14_GB / BytesPerSecond(1e12)).si(), 0.014);
    EXPECT_DOUBLE_EQ((700_W * 2_s).si(), 1400);
    EXPECT_DOUBLE_EQ(80_GiB / 1_GiB, 80.0);
}
