// The fleet over a long horizon (model/fleet.hpp): the hourly traffic factor, time-of-day prices,
// and the owned-against-rented cost on profiles whose answer is worked out by hand.
#include "model/fleet.hpp"

#include "model/availability.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace gpuplan;
using namespace gpuplan::model;

namespace {

constexpr double kHour = 3600.0;
constexpr double kDay = 86400.0;

Price usd(double amount, PriceBasis per) {
    return Price{Money{amount, "USD"}, per};
}

/// 10 requests/s, 2.5 per replica (a need of 4), owned $4/h, rented $10/h, no energy price.
FleetInputs flat_day() {
    FleetInputs in;
    in.config.span = FleetSpan::Day;
    in.base_rps = 10;
    in.replica_rps = 2.5;
    in.currency = "USD";
    in.owned_per_hour = 4;
    in.rent_per_hour = 10;
    return in;
}

TEST(FleetTraffic, GrowthOfFiftyPercentAYearGivesOneAndAHalfTimesTheRateAfterAYear) {
    FleetConfig c;
    c.annual_growth = 0.5;
    // Day 365 is a Tuesday (52 weeks and a day after Monday 00:00): no weekend factor.
    EXPECT_NEAR(fleet_rate_factor(c, Seconds(365 * kDay)), 1.5, 1e-12);
    EXPECT_NEAR(fleet_rate_factor(c, Seconds(365 * kDay / 2)), std::sqrt(1.5), 1e-12);
    EXPECT_DOUBLE_EQ(fleet_rate_factor(c, Seconds(0)), 1.0);
}

TEST(FleetTraffic, TheDiurnalCyclePeaksAtThePeakHourAndBottomsTwelveHoursLater) {
    FleetConfig c;
    c.diurnal_amplitude = 0.5;
    c.peak_hour = 14;
    EXPECT_NEAR(fleet_rate_factor(c, Seconds(14 * kHour)), 1.5, 1e-12);
    EXPECT_NEAR(fleet_rate_factor(c, Seconds(2 * kHour)), 0.5, 1e-12);
    EXPECT_NEAR(fleet_rate_factor(c, Seconds(20 * kHour)), 1.0, 1e-12); // cos(π/2)
    // The same hour a day later (a Tuesday) is the same.
    EXPECT_NEAR(fleet_rate_factor(c, Seconds(kDay + 14 * kHour)), 1.5, 1e-12);
}

TEST(FleetTraffic, SaturdaysAndSundaysCarryTheWeekendFactor) {
    FleetConfig c;
    c.weekend_factor = 0.6;
    EXPECT_DOUBLE_EQ(fleet_rate_factor(c, Seconds(4 * kDay + 23 * kHour)), 1.0); // Friday
    EXPECT_DOUBLE_EQ(fleet_rate_factor(c, Seconds(5 * kDay)), 0.6);              // Saturday
    EXPECT_DOUBLE_EQ(fleet_rate_factor(c, Seconds(6 * kDay + 23 * kHour)), 0.6); // Sunday
    EXPECT_DOUBLE_EQ(fleet_rate_factor(c, Seconds(7 * kDay)), 1.0);              // Monday
}

TEST(FleetTraffic, TimeOfDayPricesApplyFromPeakStartUntilPeakEndAndMayWrapMidnight) {
    FleetConfig c;
    const std::optional<Price> flat = usd(0.15, PriceBasis::KilowattHour);
    EXPECT_EQ(fleet_electricity(c, 3, flat), flat);
    c.electricity =
        TimeOfDayPrices{usd(0.2, PriceBasis::KilowattHour), usd(0.1, PriceBasis::KilowattHour)};
    EXPECT_EQ(fleet_electricity(c, 7, flat)->money.amount, 0.1);
    EXPECT_EQ(fleet_electricity(c, 8, flat)->money.amount, 0.2);
    EXPECT_EQ(fleet_electricity(c, 19, flat)->money.amount, 0.2);
    EXPECT_EQ(fleet_electricity(c, 20, flat)->money.amount, 0.1);
    c.electricity->peak_start = 22;
    c.electricity->peak_end = 6;
    EXPECT_EQ(fleet_electricity(c, 23, flat)->money.amount, 0.2);
    EXPECT_EQ(fleet_electricity(c, 5, flat)->money.amount, 0.2);
    EXPECT_EQ(fleet_electricity(c, 6, flat)->money.amount, 0.1);
}

TEST(FleetCost, ConstantTrafficBuysEveryReplicaWhenRentCostsMoreThanOwning) {
    const FleetPlan p = plan_fleet(flat_day());
    EXPECT_EQ(p.peak_need, 4);
    ASSERT_TRUE(p.best);
    EXPECT_EQ(*p.best, 4);
    // 24 h × 4 replicas × $4/h; renting all: 24 × 4 × $10.
    EXPECT_DOUBLE_EQ(p.run.total.total(), 384.0);
    EXPECT_DOUBLE_EQ(p.all_rented.total.total(), 960.0);
    // Cost(B) = 24 (4B + 10 (4 − B)).
    for (const auto& pt : p.curve) {
        EXPECT_DOUBLE_EQ(pt.total, 24.0 * (4.0 * pt.owned + 10.0 * (4 - pt.owned)));
    }
    EXPECT_DOUBLE_EQ(p.run.total.rent_hours, 0.0);
    EXPECT_DOUBLE_EQ(*p.break_even_utilisation, 0.4); // $4 ÷ $10
}

TEST(FleetCost, ConstantTrafficRentsEverythingWhenOwningCostsMoreThanTheRent) {
    FleetInputs in = flat_day();
    in.owned_per_hour = 12;
    const FleetPlan p = plan_fleet(in);
    ASSERT_TRUE(p.best);
    EXPECT_EQ(*p.best, 0);
    EXPECT_DOUBLE_EQ(p.run.total.total(), 960.0);
    EXPECT_DOUBLE_EQ(p.run.total.rented_replica_hours, 96.0);
    EXPECT_DOUBLE_EQ(p.run.total.rent_hours, 24.0);
}

TEST(FleetCost, ATwoLevelWeekOwnsOnlyTheReplicasUsedAboveTheBreakEvenShareOfHours) {
    // A week: weekdays need 4 replicas (120 h), the weekend 2 (48 h). Owned $8/h against $10/h
    // rented: break-even at 80 % of the hours. Replicas 1-2 serve 100 % of the hours, 3-4 only
    // 120/168 = 71 %: own 2, rent 2 on weekdays.
    FleetInputs in = flat_day();
    in.config.span = FleetSpan::Week;
    in.config.weekend_factor = 0.5;
    in.owned_per_hour = 8;
    const FleetPlan p = plan_fleet(in);
    ASSERT_TRUE(p.best);
    EXPECT_EQ(*p.best, 2);
    EXPECT_DOUBLE_EQ(*p.break_even_utilisation, 0.8);
    EXPECT_NEAR(p.share_at_least[3], 120.0 / 168.0, 1e-12);
    EXPECT_DOUBLE_EQ(p.share_at_least[2], 1.0);
    // 2 owned × $8 × 168 h + 2 rented × $10 × 120 h.
    EXPECT_DOUBLE_EQ(p.run.total.total(), 2 * 8 * 168.0 + 2 * 10 * 120.0);
    EXPECT_DOUBLE_EQ(p.run.total.rent_hours, 120.0);
    EXPECT_EQ(p.run.days.size(), 7u);
    EXPECT_EQ(p.run.days[5].peak_need, 2);
    // At $6/h the weekday replicas pay too (71 % > 60 %).
    in.owned_per_hour = 6;
    EXPECT_EQ(*plan_fleet(in).best, 4);
}

TEST(FleetCost, EnergyFollowsTheLoadAndTheHoursPrice) {
    // 5 requests/s at 2 per replica: 2.5 replicas of load on 3 owned. Each draws 1 kW resident
    // and 2 kW more at full load: 3 × 1 + 2.5 × 2 = 8 kW.
    FleetInputs in = flat_day();
    in.base_rps = 5;
    in.replica_rps = 2;
    in.idle_power = Watts(1000);
    in.load_power = Watts(3000);
    in.pue = 1.5;
    in.electricity = usd(0.10, PriceBasis::KilowattHour);
    FleetRun r = run_fleet(in, 3);
    EXPECT_DOUBLE_EQ(r.total.energy_kwh, 8 * 24.0);
    EXPECT_NEAR(r.total.energy_cost, 8 * 24.0 * 0.10 * 1.5, 1e-9);
    // Peak $0.20 for 12 h, off-peak $0.10 for 12 h.
    in.config.electricity =
        TimeOfDayPrices{usd(0.2, PriceBasis::KilowattHour), usd(0.1, PriceBasis::KilowattHour)};
    r = run_fleet(in, 3);
    EXPECT_NEAR(r.total.energy_cost, 8 * (12 * 0.2 + 12 * 0.1) * 1.5, 1e-9);
    // One owned replica: fully loaded (1 + 2 kW), the other 2 rented (their energy is in the rent).
    r = run_fleet(in, 1);
    EXPECT_DOUBLE_EQ(r.total.energy_kwh, 3 * 24.0);
    EXPECT_DOUBLE_EQ(r.total.rented_replica_hours, 2 * 24.0);
}

TEST(FleetCost, BeyondTheRentedCapTheCloudTakesTheRestOrTheSloIsMissed) {
    FleetInputs in = flat_day();
    in.config.rented_cap = 2;
    // One owned + two rented carry 7.5 of the 10 requests/s; 2.5/s go elsewhere.
    FleetRun r = run_fleet(in, 1);
    EXPECT_FALSE(r.meets);
    EXPECT_NEAR(r.total.unserved_requests, 2.5 * kDay, 1e-6);
    EXPECT_NE(r.why.find("unserved"), std::string::npos);
    in.cloud_per_request = 0.001;
    r = run_fleet(in, 1);
    EXPECT_TRUE(r.meets);
    EXPECT_NEAR(r.total.cloud_requests, 2.5 * kDay, 1e-6);
    EXPECT_NEAR(r.total.cloud_cost, 2.5 * kDay * 0.001, 1e-6);
    EXPECT_DOUBLE_EQ(r.total.rented_cost, 2 * 10 * 24.0);
    // Without the cloud only B ≥ 2 serves everything.
    in.cloud_per_request.reset();
    const FleetPlan p = plan_fleet(in);
    EXPECT_FALSE(p.curve[1].meets);
    EXPECT_TRUE(p.curve[2].meets);
}

TEST(FleetCost, OwnedReplicasCarryTheSparesOfTheAvailabilityRule) {
    FleetInputs in = flat_day();
    in.unit_up = 0.99;
    in.availability_target = 0.999;
    // A(4, 0) = 0.99^4 = 0.9606; A(4, 1) = 0.99^5 + 5 × 0.99^4 × 0.01 = 0.99902 ≥ 0.999.
    const FleetRun r = run_fleet(in, 4);
    EXPECT_EQ(r.spares, 1);
    EXPECT_EQ(r.spares, *spares_for_availability(4, 0.99, 0.999));
    EXPECT_DOUBLE_EQ(r.total.owned_cost, 5 * 4 * 24.0);
    EXPECT_EQ(run_fleet(in, 0).spares, 0);
}

TEST(FleetHorizon, AYearOfHourlyStepsKeepsDaysAndMonthsNotSteps) {
    FleetInputs in = flat_day();
    in.config.span = FleetSpan::Year;
    in.config.annual_growth = 0.5;
    in.config.diurnal_amplitude = 0.3;
    const FleetRun r = run_fleet(in, 2, true);
    EXPECT_EQ(r.steps, 8760);
    EXPECT_EQ(r.days.size(), 365u);
    ASSERT_EQ(r.months.size(), 12u);
    EXPECT_DOUBLE_EQ(r.months[0].hours, 31 * 24.0);
    EXPECT_DOUBLE_EQ(r.months[1].hours, 28 * 24.0);
    EXPECT_DOUBLE_EQ(r.months[11].hours, 31 * 24.0);
    EXPECT_DOUBLE_EQ(r.total.hours, 8760.0);
    double by_hour = 0;
    for (const auto& h : r.by_hour) {
        EXPECT_DOUBLE_EQ(h.hours, 365.0);
        by_hour += h.requests;
    }
    EXPECT_NEAR(by_hour / r.total.requests, 1.0, 1e-12);
    // The need histogram is bounded by the peak need, not by the steps.
    EXPECT_EQ(r.need_hours.size(), static_cast<std::size_t>(r.total.peak_need) + 1);
}

TEST(FleetHorizon, TheYearsRequestsAreTheGeometricSumOfTheHourlyGrowth) {
    // Σ_{i<8760} 10 × 3600 × 1.5^(i/8760) = 36000 × (1.5 − 1) / (1.5^(1/8760) − 1).
    FleetInputs in = flat_day();
    in.config.span = FleetSpan::Year;
    in.config.annual_growth = 0.5;
    in.config.weekend_factor = 1.0;
    const double ratio = std::pow(1.5, 1.0 / 8760.0);
    const FleetRun r = run_fleet(in, 0);
    EXPECT_NEAR(r.total.requests / (36000.0 * 0.5 / (ratio - 1.0)), 1.0, 1e-9);
}

TEST(FleetConfigCheck, AStepThatDoesNotDivideADayIsRejectedNamingTheKey) {
    FleetConfig c;
    c.step = Seconds(7 * kHour);
    try {
        validate(c);
        FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("fleet.step must divide a day"), std::string::npos);
    }
    c.step = Seconds(kHour);
    c.diurnal_amplitude = 1.0;
    EXPECT_THROW(validate(c), InvalidArgument);
}

TEST(FleetConfigCheck, AnAbsurdNeedIsAnErrorNotAnOverflow) {
    FleetInputs in = flat_day();
    in.base_rps = 1e12;
    EXPECT_THROW((void)run_fleet(in, 0), InvalidArgument);
}

TEST(FleetConfigCheck, ElectricityInAnotherCurrencyIsAnError) {
    FleetInputs in = flat_day();
    in.electricity = Price{Money{0.6, "CNY"}, PriceBasis::KilowattHour};
    EXPECT_THROW((void)run_fleet(in, 1), InvalidArgument);
}

} // namespace
