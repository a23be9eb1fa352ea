// Issue 11 item 2: rules that used to be written two to four times, now one function each.
// Expected values are worked out by hand from the rule's definition.
#include "model/cost_config.hpp"
#include "model/deployment.hpp"
#include "model/error.hpp"
#include "model/hardware_spec.hpp"
#include "model/model_spec.hpp"
#include "model/plan_config.hpp"
#include "model/power.hpp"
#include "model/rack.hpp"
#include "model/speculative_config.hpp"
#include "model/training_config.hpp"
#include "model/workload.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace gpuplan;
using namespace gpuplan::model;

// ---- tp × pp divides the GPU count (scenario count, --gpus, the app's GPU count) ----

TEST(ReplicasOf, DividesTheCountByTpTimesPp) {
    EXPECT_EQ(replicas_of(16, Parallelism{2, 2, 1, 1}, "count 16", "fix"), 4); // 16 / (2 × 2)
    EXPECT_EQ(replicas_of(8, Parallelism{8, 1, 1, 1}, "count 8", "fix"), 1);
    EXPECT_EQ(replicas_of(3, Parallelism{1, 1, 1, 1}, "count 3", "fix"), 3);
}

TEST(ReplicasOf, ANonMultipleNamesTheCountTheProductAndTheFix) {
    try {
        (void)replicas_of(6, Parallelism{2, 2, 1, 1}, "count 6", "use a multiple or change tp/pp");
        FAIL() << "6 GPUs are not replicas of 4";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "count 6 is not a multiple of tp × pp = 4; use a multiple or change tp/pp");
    }
}

// ---- Wall power of a deployment (average, peak, idle, off-hours) ----

TEST(DeploymentWallPower, GpusOverPsuPlusTheirShareOfTheHosts) {
    NodePower node;
    node.gpus = 8;
    node.host = Watts(1000.0);
    PowerModel m;
    m.psu_efficiency = 0.9;
    // 4 GPUs of an 8-GPU node at 700 W: 4 × 700 / 0.9 + 1000 × 4 / 8 = 3111.1 + 500 W.
    EXPECT_NEAR(deployment_wall_power(Watts(700.0), 4, node, m).si(), 2800.0 / 0.9 + 500.0, 1e-9);
    // A whole node is the node's wall power.
    EXPECT_DOUBLE_EQ(deployment_wall_power(Watts(700.0), 8, node, m).si(),
                     node_wall_power(Watts(700.0), 8, node, m).si());
    // Two nodes' worth: both hosts.
    m.psu_efficiency = 0.0; // not positive: 1 (hwdb host power is already at the wall)
    EXPECT_DOUBLE_EQ(deployment_wall_power(Watts(500.0), 16, node, m).si(), 16 * 500.0 + 2000.0);
}

// ---- Each enum's spelling: one table, read and written ----

namespace {

// Every value spelled once as its canonical name, the name reads back as the value, and no two
// values share a name.
template <class E> void expect_round_trip() {
    std::set<std::string> names;
    for (const auto& [name, value] : enum_names(E{})) {
        const auto back = value_of<E>(name);
        ASSERT_TRUE(back.has_value()) << name;
        EXPECT_EQ(*back, value) << name;
        EXPECT_TRUE(names.insert(name).second) << "duplicate spelling " << name;
        EXPECT_NE(std::string(name_of(value)), "?") << name;
        EXPECT_EQ(value_of<E>(name_of(value)), value) << name;
    }
    EXPECT_FALSE(value_of<E>("no-such-value").has_value());
}

} // namespace

TEST(EnumNames, EveryTableRoundTrips) {
    expect_round_trip<LengthKind>();
    expect_round_trip<RateCurveKind>();
    expect_round_trip<ArrivalKind>();
    expect_round_trip<RouteTarget>();
    expect_round_trip<BatchingMode>();
    expect_round_trip<SchedulingPolicy>();
    expect_round_trip<PreemptionMode>();
    expect_round_trip<RouterPolicy>();
    expect_round_trip<AllReduceAlgorithm>();
    expect_round_trip<CoolingKind>();
    expect_round_trip<OffHours>();
    expect_round_trip<AttentionKind>();
    expect_round_trip<NormKind>();
    expect_round_trip<MlpKind>();
    expect_round_trip<PositionKind>();
    expect_round_trip<LinkKind>();
    expect_round_trip<Recompute>();
    expect_round_trip<TrainOptimizer>();
    expect_round_trip<FinetuneMethod>();
    expect_round_trip<SpeculativeMethod>();
    expect_round_trip<PlanPricing>();
}

TEST(EnumNames, TheDocumentedSpellings) {
    // docs/scenario-schema.md and docs/hwdb-schema.md spell these values so.
    EXPECT_STREQ(name_of(ArrivalKind::ClosedLoop), "closed_loop");
    EXPECT_STREQ(name_of(LengthKind::LogNormal), "lognormal");
    EXPECT_STREQ(name_of(RouterPolicy::LeastKv), "least_kv");
    EXPECT_STREQ(name_of(LinkKind::InfinityFabric), "infinity-fabric");
    EXPECT_STREQ(name_of(TrainOptimizer::Adam8bit), "adam-8bit");
    EXPECT_EQ(names_list<AttentionKind>(), "mha, gqa, mqa, mla");
    // Aliases read, the canonical name is written.
    EXPECT_EQ(value_of<TrainOptimizer>("adamw"), TrainOptimizer::Adam);
    EXPECT_EQ(value_of<Recompute>("off"), Recompute::None);
    EXPECT_STREQ(name_of(Recompute::None), "none");
    // model::to_string is the same table.
    EXPECT_STREQ(to_string(RouterPolicy::PrefixAffinity), "prefix_affinity");
    EXPECT_STREQ(to_string(CoolingKind::Liquid), "liquid");
    EXPECT_STREQ(to_string(OffHours::Idle), "idle");
    EXPECT_STREQ(to_string(SpeculativeMethod::DraftModel), "draft_model");
    EXPECT_EQ(find_speculative_method("mtp"), SpeculativeMethod::Mtp);
    EXPECT_EQ(names_list<SpeculativeMethod>(), "draft_model, eagle, mtp, ngram");
    EXPECT_STREQ(to_string(PlanPricing::Rent), "rent");
    EXPECT_EQ(names_list<PlanPricing>(), "own, rent");
}
