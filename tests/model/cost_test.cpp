// Cost of ownership against renting: docs/domain.md §2's electricity example, the break-even month
// against a hand calculation, utilization, currencies, and the scenario resolution.
#include "model/cost.hpp"

#include "fixtures.hpp"
#include "model/error.hpp"
#include "model/power.hpp"
#include "model/scenario.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

namespace {

Price price(double amount, const char* currency, PriceBasis per) {
    return Price{Money{amount, currency}, per};
}

/// capex $100,000; rent $2/h for 8 GPUs; 5 kW at $0.10/kWh; 5 %/year maintenance.
CostInputs hand_case() {
    CostInputs in;
    in.gpus = 8;
    in.capex = Money{100000, "USD"};
    in.capex_source = "test";
    in.rent = price(2, "USD", PriceBasis::Hour);
    in.rent_source = "test";
    in.electricity = price(0.10, "USD", PriceBasis::KilowattHour);
    in.load_power = Watts(5000);
    in.off_power = Watts(1000);
    in.provisioned_power = Watts(8000);
    in.throughput_tok_s = 1000;
    in.config.maintenance_fraction = 0.05;
    return in;
}

} // namespace

TEST(Cost, DomainElectricityExample) {
    // docs/domain.md §2: 8 kW × 24 h × 30 days × 0.6 CNY/kWh = 3,456 CNY; ten servers 34,560.
    const Price cny = price(0.6, "CNY", PriceBasis::KilowattHour);
    const Money one = energy_cost(Watts(8000), 24 * 30, cny);
    EXPECT_DOUBLE_EQ(one.amount, 3456.0);
    EXPECT_EQ(one.currency, "CNY");
    CostInputs in;
    in.electricity = cny;
    in.load_power = Watts(80000);
    const CostEstimate ten = estimate_cost(in);
    ASSERT_TRUE(ten.energy_monthly);
    EXPECT_NEAR(ten.energy_monthly->amount, 34560.0, 1e-6);
    EXPECT_EQ(ten.currency, "CNY");
    EXPECT_DOUBLE_EQ(energy_cost(Watts(8000), 720, cny, 1.5).amount, 3456.0 * 1.5); // × PUE
    EXPECT_THROW((void)energy_cost(Watts(8000), 720, price(0.6, "CNY", PriceBasis::Hour)),
                 InvalidArgument);
}

TEST(Cost, BreakEvenMatchesAHandCalculation) {
    const CostEstimate c = estimate_cost(hand_case());
    // rent 8 × $2 × 720 h = $11,520/month; energy 5 kW × 720 h × $0.10 = $360; maintenance
    // $100,000 × 5 % / 12 = $416.67; saving $10,743.33/month → 100,000 / 10,743.33 = 9.31:
    // month 9 rent $103,680 < own $106,990; month 10 rent $115,200 > own $107,767.
    EXPECT_DOUBLE_EQ(c.rent_monthly->amount, 11520.0);
    EXPECT_NEAR(c.energy_monthly->amount, 360.0, 1e-9);
    EXPECT_NEAR(c.maintenance_monthly->amount, 416.6667, 1e-3);
    EXPECT_NEAR(c.capex_monthly->amount, 100000.0 / 48, 1e-9); // 4 years, no residual
    EXPECT_EQ(c.break_even_month, 10);
    EXPECT_EQ(c.cheaper, "own");
    // Tokens: 1000 tok/s × 720 h × 3600 s = 2.592e9 per month.
    EXPECT_DOUBLE_EQ(c.tokens, 2.592e9);
    EXPECT_NEAR(c.rent_per_million_tokens->amount, 11520.0 / 2592.0, 1e-9);
    EXPECT_NEAR(c.own_per_million_tokens->amount, c.own_monthly->amount / 2592.0, 1e-9);
}

TEST(Cost, ResidualColocationAndPue) {
    CostInputs in = hand_case();
    in.config.residual_fraction = 0.1;
    in.config.colocation = price(150, "USD", PriceBasis::KilowattMonth);
    in.pue = 1.5;
    const CostEstimate c = estimate_cost(in);
    EXPECT_NEAR(c.capex_monthly->amount, 90000.0 / 48, 1e-9);
    EXPECT_NEAR(c.colocation_monthly->amount, 8 * 150.0, 1e-9); // on the provisioned 8 kW
    EXPECT_NEAR(c.energy_monthly->amount, 360.0 * 1.5, 1e-9);
    EXPECT_NEAR(c.opex_monthly->amount, 540 + 416.6667 + 1200, 1e-3);
}

TEST(Cost, PeakyUseFavoursRentingAndOffHoursStillDrawPower) {
    CostInputs in = hand_case();
    in.config.utilization = {8.0, 20.0}; // 160 h of 720
    const CostEstimate c = estimate_cost(in);
    EXPECT_DOUBLE_EQ(c.hours_serving, 160.0);
    EXPECT_DOUBLE_EQ(c.hours_off, 560.0);
    EXPECT_DOUBLE_EQ(c.rent_monthly->amount, 8 * 2.0 * 160);
    // Owned GPUs draw 1 kW off-hours (model resident): 5 × 160 + 1 × 560 = 1,360 kWh.
    EXPECT_DOUBLE_EQ(c.energy_kwh, 1360.0);
    EXPECT_EQ(c.cheaper, "rent");
    in.config.off_hours = OffHours::Off;
    EXPECT_DOUBLE_EQ(estimate_cost(in).energy_kwh, 800.0);
}

TEST(Cost, NeverBreaksEvenWhenRentIsBelowOpex) {
    CostInputs in = hand_case();
    in.rent = price(0.01, "USD", PriceBasis::Hour);
    const CostEstimate c = estimate_cost(in);
    EXPECT_FALSE(c.break_even_month);
    EXPECT_EQ(c.cheaper, "rent");
}

TEST(Cost, MixedCurrenciesAreAnErrorNamingBoth) {
    CostInputs in = hand_case();
    in.electricity = price(0.6, "CNY", PriceBasis::KilowattHour);
    try {
        (void)estimate_cost(in);
        FAIL() << "USD and CNY must not mix";
    } catch (const InvalidArgument& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("CNY"), std::string::npos) << m;
        EXPECT_NE(m.find("USD"), std::string::npos) << m;
    }
    EXPECT_THROW((void)(Money{1, "USD"} + Money{1, "CNY"}), InvalidArgument);
}

TEST(Cost, ScenarioResolutionPrefersTheScenarioAndSkipsOtherCurrencies) {
    Scenario s;
    s.deployment = deploy(llama31_70b(), h100(), 4);
    s.deployment.gpu.prices.push_back(
        {price(30000, "USD", PriceBasis::Once), "2024-02", "S46", ""});
    s.deployment.gpu.prices.push_back({price(2.99, "USD", PriceBasis::Hour), "2026-05", "S51", ""});
    s.workload.input_tokens = 1024;
    s.workload.output_tokens = 256;
    s.workload.concurrency = 32;
    const PowerModel pm;
    NodePower node;
    node.gpus = 8;
    node.host = Watts(2800);
    node.known = true;
    const PowerEstimate p =
        estimate_power(s.deployment, s.workload, default_profile(), pm, s.power, node);

    CostInputs in = cost_inputs(s, nullptr, p);
    EXPECT_EQ(in.capex->amount, 4 * 30000.0); // hwdb GPU price × GPUs
    EXPECT_EQ(in.rent->money.amount, 2.99);
    EXPECT_DOUBLE_EQ(in.load_power.si(), p.deployment_average.si());
    EXPECT_DOUBLE_EQ(in.throughput_tok_s, p.capped.throughput);

    s.prices.node_purchase = price(1900000, "CNY", PriceBasis::Once);
    s.prices.electricity = price(0.6, "CNY", PriceBasis::KilowattHour);
    in = cost_inputs(s, nullptr, p);
    EXPECT_EQ(in.capex->currency, "CNY");
    EXPECT_DOUBLE_EQ(in.capex->amount, 1900000.0 / 2); // 4 of 8 GPUs: half a node
    EXPECT_FALSE(in.rent);                             // hwdb's USD rent is skipped, with a note
    bool noted = false;
    for (const auto& n : in.notes) {
        noted = noted || n.find("not in CNY") != std::string::npos;
    }
    EXPECT_TRUE(noted);
    EXPECT_NO_THROW((void)estimate_cost(in));
}
