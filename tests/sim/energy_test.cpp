// Energy and power in the simulator: energy is the integral of the observed power, a lone
// request's energy is the model's step power × step time summed step by step, and a power cap
// never raises power while it costs prefill-heavy loads more throughput than decode-heavy ones
// (docs/power.md §3: Splitwise's 50 % cap, prefill ≈ 1.3× slower, decode about unchanged).
#include "model/error.hpp"
#include "model/power.hpp"
#include "model/step_cost.hpp"
#include "sim/simulate.hpp"
#include "tests/sim/sim_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace gpuplan::sim {
namespace {

using test::llama8b_scenario;

SimResult run(const model::Scenario& s, SimOptions o = {}) {
    SimResult r = simulate(s, o);
    if (!r.ok || !r.power.modelled) {
        ADD_FAILURE() << "the run failed or did not model power";
    }
    return r;
}

double bin_width(const PowerResult& p, std::size_t i) {
    return std::min(1.0, p.span.si() - static_cast<double>(i));
}

TEST(SimEnergy, EnergyIsTheIntegralOfPowerOverSteps) {
    // Two replicas, both cold-starting (idle first), swapping preemptions on a small KV pool:
    // every power state of the observer occurs.
    model::Scenario s = llama8b_scenario(200, 600, 40.0, 64);
    s.cluster.replicas = 2;
    s.cluster.cold_start.at_start = true;
    s.cluster.cold_start.startup = Seconds(3);
    s.deployment.engine.max_model_len = 2048;
    s.deployment.engine.kv_cache_memory = Bytes(0.25 * kGiB); // 128 blocks: ~2 requests each
    s.scheduler.preemption_mode = model::PreemptionMode::Swap;
    s.scheduler.swap_space = Bytes(4 * kGiB);
    SimOptions o;
    o.keep_steps = true;
    const SimResult r = run(s, o);
    const PowerResult& p = r.power;
    ASSERT_EQ(r.step_log.size(), static_cast<std::size_t>(r.steps));
    EXPECT_GT(r.preemptions, 0);

    // ∫ power dt: steps at their power, resident between steps, idle before the replica is up.
    std::vector<double> busy(2, 0.0);
    double steps_j = 0;
    for (const auto& st : r.step_log) {
        steps_j += st.power.si() * st.duration.si();
        busy[static_cast<std::size_t>(st.replica)] += st.duration.si();
        EXPECT_GE(st.power.si(), p.resident.si() - 1e-9);
        EXPECT_LE(st.power.si(), p.board.si() + 1e-9);
    }
    double floor_j = 0;
    for (std::size_t i = 0; i < 2; ++i) {
        const double up = r.replicas[i].available.si();
        EXPECT_DOUBLE_EQ(up, 3.0);
        floor_j += p.idle.si() * up + p.resident.si() * (p.span.si() - up - busy[i]);
    }
    EXPECT_NEAR(p.gpu_energy.si(), steps_j + floor_j, 1e-9 * p.gpu_energy.si());
    EXPECT_NEAR(p.busy_energy.si(), steps_j, 1e-9 * steps_j);

    // The 1-second series integrate to the same energy, and nodes and racks add up.
    double series_j = 0;
    for (std::size_t i = 0; i < p.total_power.size(); ++i) {
        series_j += p.total_power[i].si() * bin_width(p, i);
        EXPECT_DOUBLE_EQ(r.series[i].power.si(), p.total_power[i].si());
        double nodes = 0;
        for (const auto& n : p.node_power) {
            nodes += n[i].si();
        }
        EXPECT_NEAR(nodes, p.total_power[i].si(), 1e-9 * p.total_power[i].si());
    }
    EXPECT_EQ(p.total_power.size(), r.series.size());
    EXPECT_NEAR(series_j, p.energy.si(), 1e-9 * p.energy.si());
    EXPECT_DOUBLE_EQ(p.energy.si(), p.gpu_energy.si() + p.host_energy.si());
    EXPECT_DOUBLE_EQ(p.host_energy.si(), 0.0); // no node given
    EXPECT_NEAR(p.avg_power.si(), p.energy.si() / p.span.si(), 1e-9);
    EXPECT_EQ(p.peak_power.si(),
              std::max_element(p.total_power.begin(), p.total_power.end())->si());
    EXPECT_GT(p.peak_power.si(), p.avg_power.si());
    EXPECT_DOUBLE_EQ(p.energy_per_token.si(),
                     p.energy.si() / static_cast<double>(r.overall.output_tokens));
    EXPECT_DOUBLE_EQ(p.energy_per_request.si(),
                     p.energy.si() / static_cast<double>(r.overall.completed));
}

TEST(SimEnergy, LoneRequestEnergyIsTheModelsStepPowerTimesStepTime) {
    model::Scenario s = llama8b_scenario(6000, 40, 1.0, 1);
    SimOptions o;
    o.keep_steps = true;
    const SimResult r = run(s, o);
    const model::StepCostModel m(s.deployment, model::default_profile());
    const model::GpuPowerLevels g = model::power_levels(s.deployment.gpu, s.power_model);
    // One prefill step of 6000 tokens, then 39 decode steps.
    double expected = 0;
    double expected_time = 0;
    double peak = 0;
    {
        model::BatchStats b;
        m.add(b, model::PrefillChunk{6000, 0});
        const auto c = m.cost(b);
        expected += model::step_energy(c, m, g, s.power_model).si();
        expected_time += c.time.si();
        peak = std::max(peak, model::step_power(c, m, g, s.power_model).si());
    }
    for (int k = 1; k < 40; ++k) {
        model::BatchStats b;
        m.add(b, model::DecodeSeq{6000 + k});
        const auto c = m.cost(b);
        expected += model::step_energy(c, m, g, s.power_model).si();
        expected_time += c.time.si();
    }
    const PowerResult& p = r.power;
    ASSERT_EQ(r.step_log.size(), 40u);
    // Steps are rounded to the nanosecond.
    EXPECT_NEAR(p.busy_energy.si(), expected, 40 * 1e-9 * g.board.si());
    EXPECT_DOUBLE_EQ(p.gpu_peak_power.si(), peak);
    EXPECT_GT(peak, 600.0); // a 6000-token prefill on one H100 draws near board power
    // The rest of the span is the resident floor (the request arrives at its first arrival).
    EXPECT_NEAR(p.gpu_energy.si(), expected + g.resident.si() * (p.span.si() - expected_time),
                41 * 1e-9 * g.board.si());
    EXPECT_DOUBLE_EQ(p.energy_per_token.si(), p.facility_energy.si() / 40);
    EXPECT_FALSE(p.capped);
    EXPECT_EQ(p.limit_source, "board");
    EXPECT_DOUBLE_EQ(p.mean_clock, 1.0);
}

TEST(SimEnergy, NodesCarryTheirHostShareAndRacksGroupNodes) {
    model::Scenario s = llama8b_scenario(512, 64, 8.0, 60);
    s.cluster.replicas = 3;
    s.rack.nodes_per_rack = 1;
    model::NodePower node;
    node.gpus = 2;
    node.host = Watts(500);
    node.known = true;
    SimOptions o;
    o.node = node;
    const SimResult r = run(s, o);
    const PowerResult& p = r.power;
    EXPECT_EQ(p.gpus, 3);
    EXPECT_EQ(p.nodes, 2);
    EXPECT_EQ(p.racks, 2);
    ASSERT_EQ(p.gpu_power.size(), 3u);
    for (std::size_t i = 0; i < p.total_power.size(); ++i) {
        EXPECT_NEAR(p.node_power[0][i].si(), p.gpu_power[0][i].si() + p.gpu_power[1][i].si() + 500,
                    1e-9);
        EXPECT_NEAR(p.node_power[1][i].si(), p.gpu_power[2][i].si() + 250,
                    1e-9); // half a node: half its host
        EXPECT_DOUBLE_EQ(p.rack_power[1][i].si(), p.node_power[1][i].si());
    }
    EXPECT_NEAR(p.host_energy.si(), 750 * p.span.si(), 1e-9 * p.host_energy.si());
}

TEST(SimEnergy, AcceleratorWithoutBoardPowerIsNotModelledUnlessCapped) {
    model::Scenario s = llama8b_scenario(256, 32, 2.0, 5);
    s.deployment.gpu.board_power.reset();
    const SimResult r = simulate(s);
    EXPECT_TRUE(r.ok);
    EXPECT_FALSE(r.power.modelled);
    ASSERT_FALSE(r.power.notes.empty());
    EXPECT_NE(r.power.notes[0].find("power.board_power"), std::string::npos);
    s.power.gpu_cap = Watts(300);
    EXPECT_THROW((void)simulate(s), InvalidArgument);
    s.power_model.board_power = Watts(700);
    EXPECT_TRUE(simulate(s).power.capped);
}

// A saturated closed loop: `users` clients, each sending its next request when one returns.
model::Scenario saturated(int input, int output, int users, int requests) {
    model::Scenario s = llama8b_scenario(input, output, 1.0, requests);
    s.workload.arrival.kind = model::ArrivalKind::ClosedLoop;
    s.workload.arrival.users = users;
    return s;
}

TEST(SimPowerCap, ACapNeverRaisesPower) {
    for (const auto& [input, output] : {std::pair{3000, 32}, std::pair{200, 400}}) {
        SCOPED_TRACE(input);
        const model::Scenario free = saturated(input, output, 32, 96);
        model::Scenario capped = free;
        capped.power.gpu_cap = Watts(350);
        SimOptions o;
        o.keep_steps = true;
        const SimResult a = run(free, o);
        const SimResult b = run(capped, o);
        EXPECT_TRUE(b.power.capped);
        EXPECT_EQ(b.power.limit_source, "gpu_cap");
        for (const auto& st : b.step_log) {
            ASSERT_LE(st.power.si(), 350.0 + 1e-9);
        }
        EXPECT_LE(b.power.gpu_peak_power.si(), a.power.gpu_peak_power.si());
        EXPECT_LE(b.power.peak_power.si(), a.power.peak_power.si());
        EXPECT_LE(b.power.avg_power.si(), a.power.avg_power.si());
        EXPECT_LE(b.power.gpu_peak_power.si(), 350.0 + 1e-9);
        // Never faster: the same work takes at least as long.
        EXPECT_GE(b.duration.si(), a.duration.si());
    }
    // And the model's capped step for the same batch never draws more than the free one.
    const model::Scenario s = saturated(3000, 32, 1, 1);
    const model::PowerCappedStepCost pc(s.deployment, model::default_profile(), s.power_model,
                                        Watts(350));
    const model::GpuPowerLevels g = model::power_levels(s.deployment.gpu, s.power_model);
    for (int tokens : {1, 64, 512, 2048, 8192}) {
        model::BatchStats b;
        pc.uncapped().add(b, model::PrefillChunk{tokens, 0});
        const auto free_cost = pc.uncapped().cost(b);
        const auto st = pc.cost(b);
        EXPECT_LE(st.power, model::step_power(free_cost, pc.uncapped(), g, s.power_model));
        EXPECT_GE(st.cost.time, free_cost.time);
    }
}

TEST(SimPowerCap, ALimitAtBoardPowerChangesNothing) {
    const model::Scenario free = saturated(1500, 100, 16, 60);
    model::Scenario at_board = free;
    at_board.power.gpu_cap = Watts(700);
    const SimResult a = run(free);
    const SimResult b = run(at_board);
    EXPECT_FALSE(b.power.capped);
    EXPECT_EQ(a.overall, b.overall);
    EXPECT_EQ(a.series, b.series);
    EXPECT_EQ(a.power.energy.si(), b.power.energy.si());
}

TEST(SimPowerCap, CostsPrefillHeavyLoadsMoreThroughputThanDecodeHeavyOnes) {
    struct Load {
        int input, output;
    };
    const auto loss = [](Load l, double* ttft_ratio) {
        const model::Scenario free = saturated(l.input, l.output, 32, 96);
        model::Scenario capped = free;
        capped.power.gpu_cap = Watts(350); // 50 % of the H100's 700 W
        const SimResult a = run(free);
        const SimResult b = run(capped);
        *ttft_ratio = b.overall.ttft.p50.si() / a.overall.ttft.p50.si();
        return 1.0 - b.total_tok_s / a.total_tok_s;
    };
    double prefill_ttft = 0;
    double decode_ttft = 0;
    const double prefill = loss({4000, 16}, &prefill_ttft);
    const double decode = loss({128, 1024}, &decode_ttft);
    // Splitwise's capped H100 rows: prompt ×1.30, token ×1.00 (docs/power.md §3).
    EXPECT_GT(prefill, 0.15);
    EXPECT_LT(prefill, 0.35);
    EXPECT_LT(decode, 0.10);
    EXPECT_GT(prefill, decode + 0.10);
    EXPECT_GT(prefill_ttft, 1.15);
}

TEST(SimPowerCap, CappedRunsAreDeterministic) {
    model::Scenario s = saturated(2000, 64, 24, 80);
    s.power.gpu_cap = Watts(400);
    SimOptions o;
    o.keep_steps = true;
    o.keep_requests = true;
    const SimResult a = run(s, o);
    const SimResult b = run(s, o);
    EXPECT_EQ(a, b);
    EXPECT_LT(a.power.mean_clock, 1.0);
    EXPECT_GT(a.power.capped_time_share, 0.0);
}

} // namespace
} // namespace gpuplan::sim
