// The power model: levels, per-step power and energy, the clock derating of the step-cost
// model, power caps (fitted to Splitwise's capped H100 rows), limits and oversubscription.
#include "model/power.hpp"

#include "fixtures.hpp"
#include "model/error.hpp"
#include "model/serving.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

namespace {

/// meta-llama/Llama-2-70b-hf, the model behind Splitwise's profiles.
ModelSpec llama2_70b() {
    return llama_like("llama-2-70b", 80, 8192, 64, 8, 28672, 32000, 4096);
}

/// A100 SXM4 80GB: 312 TFLOPS bf16 dense, 2.039 TB/s, 400 W (NVIDIA A100 datasheet, S1-S3).
AcceleratorSpec a100() {
    AcceleratorSpec g;
    g.name = "a100-sxm-80gb";
    g.vendor = "nvidia";
    g.memory = Bytes(80.0 * kGiB);
    g.memory_bandwidth = BytesPerSecond(2.039e12);
    g.dense.bf16 = FlopsPerSecond(312e12);
    g.dense.fp16 = FlopsPerSecond(312e12);
    g.board_power = Watts(400);
    return g;
}

/// DGX H100's power figures (hwdb/servers/servers.yaml).
NodePower dgx_h100() {
    NodePower n;
    n.gpus = 8;
    n.host = Watts(2800);
    n.nameplate = Watts(10200);
    n.rack_units = 8;
    n.known = true;
    return n;
}

StepCost prefill_step(const StepCostModel& m, int tokens) {
    BatchStats s;
    m.add(s, PrefillChunk{tokens, 0});
    return m.cost(s);
}

StepCost decode_step(const StepCostModel& m, int batch, int context) {
    BatchStats s;
    m.add_decodes(s, batch, context);
    return m.cost(s);
}

Workload workload(int in, int out, int concurrency) {
    Workload w;
    w.input_tokens = in;
    w.output_tokens = out;
    w.concurrency = concurrency;
    return w;
}

PowerBudget gpu_cap(double w) {
    PowerBudget b;
    b.gpu_cap = Watts(w);
    return b;
}

} // namespace

TEST(PowerLevels, MeasuredIdleAndFittedResidentFraction) {
    AcceleratorSpec g = h100();
    g.idle_power = Watts(72.5);
    const GpuPowerLevels l = power_levels(g, PowerModel{});
    EXPECT_DOUBLE_EQ(l.idle.si(), 72.5);
    EXPECT_DOUBLE_EQ(l.resident.si(), 0.198 * 700); // 138.6 W, S74 measured 121.7-145.5 W
    EXPECT_DOUBLE_EQ(l.board.si(), 700);
    g.idle_power.reset();
    EXPECT_DOUBLE_EQ(power_levels(g, PowerModel{}).idle.si(), 0.113 * 700);
}

TEST(PowerLevels, OverridesWinAndNoBoardPowerIsAnError) {
    PowerModel m;
    m.resident_power = Watts(121.7);
    m.board_power = Watts(500);
    const GpuPowerLevels l = power_levels(h100(), m);
    EXPECT_DOUBLE_EQ(l.resident.si(), 121.7);
    EXPECT_DOUBLE_EQ(l.board.si(), 500);
    AcceleratorSpec tpu = round_gpu();
    try {
        (void)power_levels(tpu, PowerModel{});
        FAIL() << "no board power must throw";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("power.board_power"), std::string::npos) << e.what();
    }
}

TEST(StepPower, StaysBetweenResidentAndBoard) {
    const GpuPowerLevels l = power_levels(h100(), PowerModel{});
    for (double c = 0; c <= 1.0; c += 0.25) {
        for (double mem = 0; mem <= 1.0; mem += 0.25) {
            for (double k : {1.0, 0.7, 0.3}) {
                const Watts p = step_power(StepActivity{c, mem}, l, PowerModel{}, k);
                EXPECT_GE(p, l.resident);
                EXPECT_LE(p, l.board);
            }
        }
    }
    EXPECT_EQ(step_power(StepActivity{}, l, PowerModel{}), l.resident);
}

TEST(StepPower, PrefillNearBoardDecodeAboutHalf) {
    // docs/power.md: prefill ≈ 90-100 % of TDP; decode ≈ 50-70 % at moderate load ([S69][S72]).
    const StepCostModel m(deploy(llama2_70b(), h100(), 2), default_profile());
    const GpuPowerLevels l = power_levels(h100(), PowerModel{});
    const double prefill = step_power(prefill_step(m, 2048), m, l, PowerModel{}) / l.board;
    const double decode = step_power(decode_step(m, 16, 576), m, l, PowerModel{}) / l.board;
    EXPECT_GT(prefill, 0.9);
    EXPECT_GT(decode, 0.45);
    EXPECT_LT(decode, 0.7);
}

TEST(StepPower, EnergyIsPowerTimesTime) {
    const StepCostModel m(deploy(llama3_8b(), h100()), default_profile());
    const GpuPowerLevels l = power_levels(h100(), PowerModel{});
    for (const StepCost& c : {prefill_step(m, 1000), decode_step(m, 32, 2000)}) {
        const Joules e = step_energy(c, m, l, PowerModel{});
        EXPECT_DOUBLE_EQ(e.si(), step_power(c, m, l, PowerModel{}).si() * c.time.si());
        EXPECT_GT(e.si(), 0);
    }
}

// The fit of compute_weight and memory_weight (docs/power.md, "Fit"): the defaults reproduce
// Splitwise's per-phase levels and NLR's saturated node within the documented RMS, and are a
// least-squares minimum on the 0.05 grid around them.
TEST(PowerFit, DefaultsReproduceThePublishedLevels) {
    struct Point {
        StepActivity a;
        GpuPowerLevels l;
        double target;
    };
    std::vector<Point> pts;
    const PowerModel base;
    for (const AcceleratorSpec& g : {h100(), a100()}) {
        const GpuPowerLevels l = power_levels(g, base);
        const double token = g.name == "h100-sxm" ? 380 : 250; // constant.yaml [S69]
        for (int tp : {2, 4, 8}) {
            const StepCostModel m(deploy(llama2_70b(), g, tp), default_profile());
            for (int p : {512, 2048}) {
                pts.push_back({step_activity(prefill_step(m, p), m), l, l.board.si()});
            }
            for (int b : {1, 16, 64}) {
                pts.push_back({step_activity(decode_step(m, b, 576), m), l, token});
            }
        }
    }
    for (const auto& [in, out] : {std::pair{1024, 1024}, {512, 512}}) {
        // NLR: 4x H100, Llama-3-70B, saturated: ~575 W per GPU after the host [S72].
        const PowerEstimate e =
            estimate_power(deploy(llama31_70b(), h100(), 4), workload(in, out, 512),
                           default_profile(), base, PowerBudget{}, unknown_node(8, base));
        pts.push_back({e.steady.activity, power_levels(h100(), base), 575});
    }
    ASSERT_EQ(pts.size(), 32u);
    const auto sse = [&](double ac, double am) {
        PowerModel m = base;
        m.compute_weight = ac;
        m.memory_weight = am;
        double s = 0;
        for (const Point& p : pts) {
            const double r = step_power(p.a, p.l, m).si() - p.target;
            s += r * r;
        }
        return s;
    };
    const double best = sse(base.compute_weight, base.memory_weight);
    EXPECT_LT(std::sqrt(best / pts.size()), 63.0); // docs/power.md: 62 W
    for (double dc : {-0.05, 0.05}) {
        EXPECT_GT(sse(base.compute_weight + dc, base.memory_weight), best);
        EXPECT_GT(sse(base.compute_weight, base.memory_weight + dc), best);
    }
}

TEST(ClockFactors, DefaultIsIdentityAndDeratingScalesComputeOnly) {
    Deployment d = deploy(llama3_8b(), h100());
    EXPECT_EQ(d.clocks, (ClockFactors{1.0, 1.0}));
    const StepCostModel full(d, default_profile());
    d.clocks = {0.5, 1.0};
    const StepCostModel half(d, default_profile());
    const StepCost a = prefill_step(full, 4096);
    const StepCost b = prefill_step(half, 4096);
    EXPECT_DOUBLE_EQ(b.op(Op::Mlp).compute_time / a.op(Op::Mlp).compute_time, 2.0);
    EXPECT_DOUBLE_EQ(b.op(Op::Mlp).memory_time.si(), a.op(Op::Mlp).memory_time.si());
    EXPECT_EQ(half.peak_flops(), full.peak_flops()); // MFU keeps the datasheet denominator
    EXPECT_EQ(half.bandwidth(), full.bandwidth());
    d.clocks = {0.0, 1.0};
    EXPECT_THROW(validate(d), InvalidArgument);
}

TEST(PowerCap, NeverRaisesPowerAndNeverSpeedsUp) {
    const Deployment d = deploy(llama31_70b(), h100(), 4);
    const PowerModel pm;
    for (double cap : {250.0, 350.0, 450.0, 600.0, 800.0}) {
        const PowerCappedStepCost capped(d, default_profile(), pm, Watts(cap));
        const GpuPowerLevels& l = capped.levels();
        for (int tokens : {0, 256, 2048, 8192}) {
            for (int batch : {0, 1, 64, 256}) {
                BatchStats s;
                capped.uncapped().add(s, PrefillChunk{tokens, 0});
                capped.uncapped().add_decodes(s, batch, 1500);
                const StepCost u = capped.uncapped().cost(s);
                const auto c = capped.cost(s);
                const Watts p0 = step_power(u, capped.uncapped(), l, pm);
                EXPECT_LE(c.power.si(), p0.si() + 1e-9) << cap << " " << tokens << " " << batch;
                EXPECT_LE(c.power.si(), std::max(cap, l.resident.si()) + 1e-9);
                EXPECT_GE(c.cost.time.si(), u.time.si() - 1e-15);
                EXPECT_DOUBLE_EQ(c.energy.si(), c.power.si() * c.cost.time.si());
            }
        }
    }
}

// Splitwise's capped H100 rows: prompt time 1.30x, token time 1.00x at 350 W of 700 (facts
// §7.3 [S69][S70]); the exponent is fitted to the mean over its TP 2/4/8 prompt grid.
TEST(PowerCap, HalfCapSlowsPrefillAboutThirtyPercentAndDecodeBarely) {
    const PowerModel pm;
    double sum = 0;
    int n = 0;
    for (int tp : {2, 4, 8}) {
        const PowerCappedStepCost capped(deploy(llama2_70b(), h100(), tp), default_profile(), pm,
                                         Watts(350), 161);
        for (int p : {512, 1024, 2048, 4096}) {
            BatchStats s;
            capped.uncapped().add(s, PrefillChunk{p, 0});
            const double slow = capped.cost(s).cost.time / capped.uncapped().cost(s).time;
            EXPECT_GT(slow, 1.1) << tp << " " << p;
            EXPECT_LT(slow, 1.5) << tp << " " << p;
            sum += slow;
            ++n;
        }
        if (tp == 8) {
            for (int b : {1, 16, 64}) {
                BatchStats s;
                capped.uncapped().add_decodes(s, b, 576);
                EXPECT_LT(capped.cost(s).cost.time / capped.uncapped().cost(s).time, 1.03) << b;
            }
        }
    }
    EXPECT_NEAR(sum / n, 1.30, 0.02);
    // The analytic estimate: a decode-heavy load keeps its throughput within a few %.
    const PowerEstimate e =
        estimate_power(deploy(llama31_70b(), h100(), 4), workload(256, 2048, 64), default_profile(),
                       pm, gpu_cap(350), unknown_node(8, pm));
    EXPECT_NEAR(e.prefill.slowdown, 1.3, 0.05);
    EXPECT_LT(e.throughput_loss, 0.06);
}

TEST(PowerCap, CostsPrefillHeavyLoadsMoreThroughputThanDecodeHeavyOnes) {
    const PowerModel pm;
    const Deployment d = deploy(llama31_70b(), h100(), 4);
    const auto loss = [&](int in, int out) {
        return estimate_power(d, workload(in, out, 64), default_profile(), pm, gpu_cap(350),
                              unknown_node(8, pm))
            .throughput_loss;
    };
    const double prefill_heavy = loss(4096, 64);
    const double decode_heavy = loss(256, 2048);
    EXPECT_GT(prefill_heavy, 0.15);
    EXPECT_GT(prefill_heavy, 2.0 * decode_heavy);
    EXPECT_GE(decode_heavy, 0.0);
}

TEST(PowerCap, NoLimitLeavesTheEstimateUnchanged) {
    const PowerModel pm;
    const Deployment d = deploy(llama31_70b(), h100(), 4);
    const Workload w = workload(1024, 256, 32);
    const PowerEstimate e =
        estimate_power(d, w, default_profile(), pm, PowerBudget{}, unknown_node(8, pm));
    EXPECT_FALSE(e.limited);
    EXPECT_EQ(e.capped, e.uncapped);
    EXPECT_EQ(e.uncapped, estimate_serving(d, w, default_profile()));
    EXPECT_DOUBLE_EQ(e.throughput_loss, 0.0);
}

TEST(PowerLimit, NodeCapAndRackBudgetBecomePerGpuLimits) {
    const GpuPowerLevels l = power_levels(h100(), PowerModel{});
    PowerBudget b;
    b.node_cap = Watts(8000);
    GpuPowerLimit r = gpu_power_limit(b, l, dgx_h100(), PowerModel{});
    EXPECT_DOUBLE_EQ(r.per_gpu.si(), (8000.0 - 2800.0) / 8); // 650 W
    EXPECT_EQ(r.source, LimitSource::NodeCap);
    b.gpu_cap = Watts(350);
    EXPECT_EQ(gpu_power_limit(b, l, dgx_h100(), PowerModel{}).source, LimitSource::GpuCap);

    PowerBudget rack;
    rack.rack_budget = Watts(40000);
    r = gpu_power_limit(rack, l, dgx_h100(), PowerModel{});
    EXPECT_EQ(r.source, LimitSource::Board); // without nodes_per_rack it only sizes racks
    r = gpu_power_limit(rack, l, dgx_h100(), PowerModel{}, 5);
    EXPECT_EQ(r.source, LimitSource::RackBudget);
    EXPECT_DOUBLE_EQ(r.per_gpu.si(), (8000.0 - 2800.0) / 8);

    PowerModel psu;
    psu.psu_efficiency = 0.9; // the host figure is at the wall, the GPUs' budget is DC
    PowerBudget node;
    node.node_cap = Watts(8000);
    EXPECT_DOUBLE_EQ(gpu_power_limit(node, l, dgx_h100(), psu).per_gpu.si(),
                     (8000.0 - 2800.0) * 0.9 / 8);
    EXPECT_TRUE(gpu_power_limit(gpu_cap(100), l, dgx_h100(), PowerModel{}).below_resident);
}

TEST(PowerLimit, NodesPerRackComeFromTheRackModelWhereThePduBinds) {
    // The default rack: one 32 A, 400 V three-phase PDU derated to 80 %:
    // 32 × 400 × √3 × 0.8 = 17,734 W, which binds before a 40 kW budget.
    PowerBudget b = gpu_cap(350);
    b.rack_budget = Watts(40000);
    const PowerModel pm;
    const PowerEstimate e =
        estimate_power(deploy(llama31_70b(), h100(), 8), workload(1024, 512, 64), default_profile(),
                       pm, b, dgx_h100());
    const double pdu = 32.0 * 400.0 * std::sqrt(3.0) * 0.8;
    EXPECT_EQ(e.racks_uncapped.nodes_per_rack, static_cast<int>(pdu / 8400.0)); // 2
    EXPECT_EQ(e.racks_capped.nodes_per_rack, static_cast<int>(pdu / 5600.0));   // 3
    EXPECT_EQ(e.racks_capped.binding, RackLimit::Pdu);
}

TEST(PowerLimit, CapOversubscribesARackBudget) {
    const PowerModel pm;
    PowerBudget b = gpu_cap(350);
    b.rack_budget = Watts(40000);
    // A rack where only the budget binds: two 63 A three-phase feeds, liquid cooling, 80 U.
    RackConfig rack;
    rack.pdu.current_a = 63;
    rack.pdu.count = 2;
    rack.cooling.limit = Watts(100000);
    rack.rack_units = 80;
    const PowerEstimate e =
        estimate_power(deploy(llama31_70b(), h100(), 8), workload(1024, 512, 64), default_profile(),
                       pm, b, dgx_h100(), {}, rack);
    EXPECT_DOUBLE_EQ(e.node_peak_uncapped.si(), 8 * 700.0 + 2800); // 8.4 kW, NLR's measured peak
    EXPECT_DOUBLE_EQ(e.node_peak.si(), 8 * 350.0 + 2800);          // 5.6 kW
    EXPECT_DOUBLE_EQ(e.oversubscription, 8400.0 / 5600.0 - 1.0);
    EXPECT_EQ(e.racks_uncapped.nodes_per_rack, 4); // ⌊40 / 8.4⌋
    EXPECT_EQ(e.racks_capped.nodes_per_rack, 7);   // ⌊40 / 5.6⌋
    EXPECT_EQ(e.racks_capped.binding, RackLimit::Budget);
    EXPECT_LE(e.gpu_average.si(), 350.0 + 1e-6);
    EXPECT_GT(e.energy_per_token_j, e.gpu_energy_per_token_j); // the host counts at the wall
}
