// The fleet's inputs from a scenario (plan/fleet.hpp): one replica's capacity within the SLO is
// the largest batch whose steady state meets it (checked against model::estimate_power directly),
// and the owned and rented prices follow the cost model's figures.
#include "plan/fleet.hpp"

#include "model/cost.hpp"
#include "model/error.hpp"
#include "model/power.hpp"
#include "model/workload_mix.hpp"
#include "plan/analysis.hpp"
#include "plan/load_curve.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

namespace gpuplan::plan {
namespace {

model::Scenario scenario() {
    model::Scenario s = sim::test::llama8b_scenario(1024, 128, 20.0, 200);
    s.slo.tpot = Seconds(0.02);
    s.prices.gpu_hour = model::Price{model::Money{2.0, "USD"}, model::PriceBasis::Hour};
    s.prices.gpu_purchase = model::Price{model::Money{30000, "USD"}, model::PriceBasis::Once};
    return s;
}

// The capped TPOT of one replica in a closed loop of `running` sequences.
double tpot_at(const model::Scenario& s, int running) {
    model::Workload w = model::analytic_request(s.workload);
    model::set_closed_loop(w, running);
    model::Deployment d = s.deployment;
    d.par.dp = 1;
    const model::PowerEstimate p =
        model::estimate_power(d, w, model::default_profile(), s.power_model, s.power,
                              model::unknown_node(d.gpus_per_node, s.power_model), s.slo, s.rack);
    return p.capped.tpot.si();
}

TEST(FleetSetup, TheReplicaCapacityIsTheLargestBatchWithinTheTpotSlo) {
    const model::Scenario s = scenario();
    const ReplicaCapacity c = replica_capacity_within_slo(s, nullptr, model::default_profile());
    ASSERT_EQ(c.bound, "tpot");
    ASSERT_GT(c.running, 1);
    EXPECT_LE(tpot_at(s, c.running), 0.02);
    EXPECT_GT(tpot_at(s, c.running + 1), 0.02);
    EXPECT_NEAR(c.rps * 128, c.output_tok_s, 1e-9);
}

// One question, one answer: "the most sequences one replica runs within the SLO" is asked by
// `plan --fleet` and by `gpuplan curve` (and the app's Curves tab). Without a power limit the
// capped and uncapped figures are the same, so both searches must land on the same batch.
TEST(FleetSetup, TheReplicaCapacityIsTheCurvesHighestLoadWithoutAPowerLimit) {
    for (const double tpot : {0.015, 0.02, 0.04}) {
        model::Scenario s = scenario();
        s.slo.tpot = Seconds(tpot);
        const ReplicaCapacity c = replica_capacity_within_slo(s, nullptr, model::default_profile());
        model::Scenario one = s;
        one.deployment.par.dp = 1;
        const auto most =
            max_load_meeting_slo(one, model::default_profile(), LoadAxis::Concurrency);
        ASSERT_TRUE(most) << tpot;
        EXPECT_EQ(c.running, static_cast<int>(*most)) << "TPOT SLO " << tpot << " s";
    }
}

TEST(FleetSetup, ALoneRequestMissingTheSloIsAnError) {
    model::Scenario s = scenario();
    s.slo.tpot = Seconds(1e-4);
    EXPECT_THROW((void)replica_capacity_within_slo(s, nullptr, model::default_profile()),
                 InvalidArgument);
}

TEST(FleetSetup, OwnedAndRentedPricesPerReplicaHour) {
    const model::Scenario s = scenario();
    const FleetSetup f = fleet_setup(s, model::FleetConfig{}, nullptr, model::default_profile());
    // One GPU per replica: $30,000 over the default 4 years, per hour of a 365-day year.
    EXPECT_NEAR(f.inputs.owned_per_hour, 30000.0 / 4 / 8760.0, 1e-9);
    EXPECT_DOUBLE_EQ(*f.inputs.rent_per_hour, 2.0);
    EXPECT_DOUBLE_EQ(f.inputs.base_rps, 20.0);
    EXPECT_DOUBLE_EQ(f.inputs.replica_rps, f.capacity.rps);
    EXPECT_LT(f.inputs.idle_power, f.inputs.load_power);
    EXPECT_FALSE(f.inputs.unit_up); // no availability block
    // Without an offered rate there is no traffic to plan.
    model::Scenario closed = s;
    closed.workload.requests_per_s.reset();
    closed.workload.concurrency = 8;
    EXPECT_THROW((void)fleet_setup(closed, model::FleetConfig{}, nullptr, model::default_profile()),
                 InvalidArgument);
}

} // namespace
} // namespace gpuplan::plan
