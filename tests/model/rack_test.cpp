// Rack planning: PDU arithmetic (docs/domain.md §2), the four limits and which binds.
#include "model/rack.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace gpuplan;
using namespace gpuplan::model;

namespace {

PduSpec single_phase_16a() {
    PduSpec p;
    p.current_a = 16;
    p.voltage_v = 230;
    p.phases = 1;
    return p;
}

RackConfig roomy() {
    RackConfig c;
    c.pdu.count = 4;
    c.cooling.kind = CoolingKind::Liquid;
    c.rack_units = 48;
    return c;
}

} // namespace

TEST(Pdu, DomainExamples) {
    // docs/domain.md §2: 16 A × 230 V single phase = 3.68 kW, about 2.9 kW continuous after 80 %.
    EXPECT_DOUBLE_EQ(pdu_nameplate(single_phase_16a()).si(), 3680.0);
    EXPECT_DOUBLE_EQ(pdu_usable(single_phase_16a()).si(), 2944.0);
    // Three-phase 32 A at 400 V ≈ 22 kW, ≈ 17.7 kW derated (HP's tables [S63]: 22.08 / 17.66 kVA
    // with 230 V per phase; √3 × 400 V gives 22.17 / 17.74 kW).
    const PduSpec three;
    EXPECT_NEAR(pdu_nameplate(three).si(), 22170, 1);
    EXPECT_NEAR(pdu_usable(three).si(), 17736, 1);
    EXPECT_NEAR(pdu_usable(three).si() / 1e3, 17.7, 0.05);
    // 208 V 3-ph 30 A = 10.8 kVA, 8.65 kVA at 80 % ([S63]).
    PduSpec us{30, 208, 3, 0.8, 1, false};
    EXPECT_NEAR(pdu_usable(us).si(), 8646, 1);
}

TEST(Pdu, RedundantFeedsCountOnce) {
    PduSpec p;
    p.count = 2;
    EXPECT_DOUBLE_EQ(rack_pdu_capacity(p).si(), 2 * pdu_usable(p).si());
    p.redundant = true;
    EXPECT_DOUBLE_EQ(rack_pdu_capacity(p).si(), pdu_usable(p).si());
}

TEST(RackPlan, SixteenAmpFeedTripsAnEightGpuServer) {
    RackConfig c;
    c.pdu = single_phase_16a();
    // DGX H100: 8 × 700 W + 2.8 kW host = 8.4 kW at peak (10.2 kW nameplate).
    const RackPlan r = plan_racks(Watts(8400), 8, 4, c, std::nullopt);
    EXPECT_TRUE(r.node_exceeds_one_pdu);
    EXPECT_FALSE(r.feasible);
    EXPECT_EQ(r.nodes_per_rack, 0);
    EXPECT_EQ(r.racks, 0);
    EXPECT_EQ(r.binding, RackLimit::Pdu);
    ASSERT_FALSE(r.warnings.empty());
    EXPECT_NE(r.warnings.front().find("trips the breaker"), std::string::npos)
        << r.warnings.front();
    // A 4-GPU workstation at 2.8 kW fits under 2.94 kW.
    EXPECT_FALSE(plan_racks(Watts(2800), 4, 1, c, std::nullopt).node_exceeds_one_pdu);
}

TEST(RackPlan, EachLimitCanBind) {
    // Budget: 40 kW / 8.4 kW = 4.
    RackPlan r = plan_racks(Watts(8400), 8, 16, roomy(), Watts(40000));
    EXPECT_EQ(r.binding, RackLimit::Budget);
    EXPECT_EQ(r.nodes_per_rack, 4);
    EXPECT_EQ(r.racks, 4);
    // PDU: one 17.74 kW feed carries 2.
    RackConfig c = roomy();
    c.pdu.count = 1;
    r = plan_racks(Watts(8400), 8, 16, c, Watts(40000));
    EXPECT_EQ(r.binding, RackLimit::Pdu);
    EXPECT_EQ(r.nodes_per_rack, 2);
    EXPECT_EQ(r.racks, 8);
    EXPECT_NEAR(r.limits[1].headroom, 17736 - 16800, 1);
    // Cooling: 20 kW of air cools 2.
    c = roomy();
    c.cooling.kind = CoolingKind::Air;
    r = plan_racks(Watts(8400), 8, 16, c, std::nullopt);
    EXPECT_EQ(r.binding, RackLimit::Cooling);
    EXPECT_EQ(r.nodes_per_rack, 2);
    // Rack units: 48 U of 10 U nodes = 4 although power allows 7.
    r = plan_racks(Watts(5600), 10, 9, roomy(), Watts(40000));
    EXPECT_EQ(r.binding, RackLimit::RackUnits);
    EXPECT_EQ(r.nodes_per_rack, 4);
    EXPECT_EQ(r.racks, 3);
}

TEST(RackPlan, ExactFitIsNotLostToRounding) {
    RackConfig c = roomy();
    const RackPlan r = plan_racks(Watts(10200), 0, 2, c, Watts(20400));
    EXPECT_EQ(r.nodes_per_rack, 2);
    EXPECT_EQ(r.limits.size(), 3u); // unknown node size: rack units do not bind
}

TEST(RackPlan, CoolingDefaultsAndBadInput) {
    EXPECT_DOUBLE_EQ(cooling_limit(CoolingSpec{}).si(), 20e3);
    EXPECT_DOUBLE_EQ(cooling_limit(CoolingSpec{CoolingKind::Liquid, std::nullopt}).si(), 130e3);
    EXPECT_THROW((void)plan_racks(Watts(0), 8, 1, RackConfig{}, std::nullopt), InvalidArgument);
    RackConfig c;
    c.pdu.phases = 2;
    EXPECT_THROW((void)plan_racks(Watts(1000), 8, 1, c, std::nullopt), InvalidArgument);
    c = RackConfig{};
    c.pdu.redundant = true; // one PDU cannot be A+B
    EXPECT_THROW((void)plan_racks(Watts(1000), 8, 1, c, std::nullopt), InvalidArgument);
}
