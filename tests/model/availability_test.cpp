// Fleet availability with hot spares against hand-computed binomial sums, and the spares search.
#include "model/availability.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuplan::model {
namespace {

TEST(Availability, UnitIsMtbfOverMtbfPlusMttr) {
    // 90 h up, 10 h in repair: up 90 % of the time.
    EXPECT_DOUBLE_EQ(unit_availability(Seconds(90 * 3600.0), Seconds(10 * 3600.0)), 0.9);
    EXPECT_DOUBLE_EQ(unit_availability(Seconds(5.0), Seconds(0.0)), 1.0);
}

TEST(Availability, TwoNeededOneSpareMatchesTheBinomialSum) {
    // P(at least 2 of 3 up), p = 0.9: p^3 + 3 p^2 (1 − p) = 0.729 + 0.243 = 0.972.
    EXPECT_NEAR(fleet_availability(2, 1, 0.9), 0.972, 1e-12);
    // No spares: all N up, p^N.
    EXPECT_NEAR(fleet_availability(2, 0, 0.9), 0.81, 1e-12);
    // N = 1, k = 2: 1 − (1 − p)^3 = 0.999.
    EXPECT_NEAR(fleet_availability(1, 2, 0.9), 0.999, 1e-12);
    // N = 3, k = 2, p = 0.8: Σ_{i=3}^{5} C(5, i) 0.8^i 0.2^(5−i) = 0.32768 + 0.4096 + 0.2048.
    EXPECT_NEAR(fleet_availability(3, 2, 0.8), 0.94208, 1e-12);
    EXPECT_DOUBLE_EQ(fleet_availability(4, 3, 1.0), 1.0);
    EXPECT_DOUBLE_EQ(fleet_availability(4, 3, 0.0), 0.0);
}

TEST(Availability, LargeFleetTendsToThePoissonForm) {
    // 10,000 units, 0.01 % down each: down count ≈ Poisson(1); P(≤ 2) = e^-1 (1 + 1 + 1/2).
    const double p = 1.0 - 1e-4;
    const double poisson = std::exp(-1.0) * 2.5;
    EXPECT_NEAR(fleet_availability(10000 - 2, 2, p), poisson, 1e-4);
    // p^N underflows a direct product for a million units; the log-space sum does not.
    EXPECT_GT(fleet_availability(1'000'000, 2000, 0.999), 0.99);
}

TEST(Availability, SparesSearchFindsTheSmallestK) {
    // N = 2, p = 0.9: k = 0 gives 0.81, k = 1 gives 0.972, k = 2 gives 1 − P(≥ 3 of 4 down)
    // = 1 − (4·0.1^3·0.9 + 0.1^4) = 0.9963.
    EXPECT_EQ(spares_for_availability(2, 0.9, 0.8), 0);
    EXPECT_EQ(spares_for_availability(2, 0.9, 0.97), 1);
    EXPECT_EQ(spares_for_availability(2, 0.9, 0.99), 2);
    EXPECT_NEAR(fleet_availability(2, 2, 0.9), 0.9963, 1e-12);
    // The answer is the smallest: k − 1 misses, k meets (a bigger search).
    const auto k = spares_for_availability(500, 0.97, 0.9999);
    ASSERT_TRUE(k);
    EXPECT_GE(fleet_availability(500, *k, 0.97), 0.9999);
    EXPECT_LT(fleet_availability(500, *k - 1, 0.97), 0.9999);
    // Unreachable within the cap.
    EXPECT_FALSE(spares_for_availability(10, 0.01, 0.999, 20));
}

TEST(Availability, PlanAnswersTheWholeQuestion) {
    // 90 h MTBF, 10 h MTTR, 2 needed, target 0.97: p = 0.9, one spare, 0.972.
    const AvailabilityResult r =
        plan_availability({2, Seconds(90 * 3600.0), Seconds(10 * 3600.0), 0.97});
    EXPECT_DOUBLE_EQ(r.unit_up, 0.9);
    EXPECT_NEAR(r.without_spares, 0.81, 1e-12);
    EXPECT_EQ(r.spares, 1);
    EXPECT_NEAR(r.with_spares, 0.972, 1e-12);
    EXPECT_NEAR(r.expected_down, 0.3, 1e-12);
}

TEST(Availability, BadInputIsAnInputError) {
    EXPECT_THROW((void)unit_availability(Seconds(-1.0), Seconds(1.0)), InvalidArgument);
    EXPECT_THROW((void)unit_availability(Seconds(1.0), Seconds(-1.0)), InvalidArgument);
    EXPECT_THROW((void)fleet_availability(0, 1, 0.9), InvalidArgument);
    EXPECT_THROW((void)fleet_availability(2, -1, 0.9), InvalidArgument);
    EXPECT_THROW((void)fleet_availability(2, 1, 1.5), InvalidArgument);
    EXPECT_THROW((void)spares_for_availability(2, 0.9, 1.0), InvalidArgument);
    EXPECT_THROW((void)spares_for_availability(2, 0.9, 0.0), InvalidArgument);
    try {
        (void)spares_for_availability(2, 0.9, 1.0);
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("strictly between 0 and 1"), std::string::npos);
    }
}

} // namespace
} // namespace gpuplan::model
