#include "model/power.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

// Sources of the PowerModel defaults (power_model.hpp); the fit is reproduced in docs/power.md
// and guarded by tests/model/power_test.cpp (PowerFit.*).
//
// idle_fraction 0.113: least squares through the origin of bare-idle power on board power over
//   H100 SXM 72.5/700 W [S72], A100 53.7/400 W [S74], L40S 35.6/350 W [S74], L4 17/72 W, T4
//   12/70 W and A30 27/165 W [S73]. Used only where hwdb has no idle_power.
// resident_fraction 0.198: the same fit over idle-with-a-CUDA-context readings, H100 121.7/700,
//   A100 80.0/400, L40S 102.1/350 W [S74]; H100 fleet telemetry 145.5 W [S74] and the
//   "execution-idle" 105-110 W of [S75] bracket it (15-25 % of TDP with a model resident).
// compute_weight 1.75, memory_weight 0.55: least squares (grid, 0.005 steps) of
//   P = P_resident + (P_board − P_resident) × min(1, a_c·u_c + a_m·u_m) over 32 points: Splitwise's
//   per-phase levels (prompt 700 W / token 380 W on H100, 400 / 250 W on A100;
//   Mutinifni/splitwise-sim@8f99e7dc:configs/power_model/constant.yaml [S69]) on Llama-2-70B at TP
//   2/4/8, prompts 512 and 2048, decode batches 1/16/64 at context 576, plus NLR's saturated 4x
//   H100 Llama-3-70B node (~575 W per GPU after the host [S72]) at 1024/1024 and 512/512 tokens,
//   512 in flight; u_c and u_m from this repository's step-cost model with the default profile.
//   RMS residual 62 W (docs/power.md, "Fit").
// dynamic_exponent 3.16: CMOS dynamic power α·C·V²·f with V roughly proportional to f inside
//   the DVFS range gives P_dyn ∝ f³ (Weste & Harris, "CMOS VLSI Design", 4th ed., §5.2; the cube
//   law GPU DVFS studies use, e.g. Mei et al., "A survey and measurement study of GPU DVFS on
//   energy conservation", Digital Communications and Networks 3(2), 2017). 3.16 is the value at
//   which a 350 W cap on the H100 prefill steps above slows them by Splitwise's 1.30x on average
//   (its capped H100 rows: prompt time 1.30x, token time 1.00x [S69]); γ = 3 gives
//   1.32x.
// memory_core_share 0.5, memory_clock_sensitivity 0.25, min_clock 0.2: assumptions [U], not
//   fitted. The published cap data (decode "almost no latency impact" at a 50 % cap, Splitwise
//   §III, arXiv:2311.18677 [S70]) only bound them: with these values Splitwise's TP8 decode steps
//   slow by < 1 % at 350 W; with β = 0 and μ = 0.5 a decode-heavy load would lose ~13 %
//   (docs/power.md).

namespace gpuplan::model {

namespace {

bool is_comm(std::size_t i) {
    const Op o = static_cast<Op>(i);
    return o == Op::TpAllReduce || o == Op::PpSend || o == Op::EpAllToAll;
}

std::string watts_text(Watts w) {
    const double v = w.si();
    char buf[48];
    if (std::abs(v) >= 10e3) {
        std::snprintf(buf, sizeof buf, "%.1f kW", v / 1e3);
    } else if (std::abs(v) >= 1e3) {
        std::snprintf(buf, sizeof buf, "%.2f kW", v / 1e3);
    } else {
        std::snprintf(buf, sizeof buf, "%.0f W", v);
    }
    return mark_non_finite(v, buf);
}

} // namespace

GpuPowerLevels power_levels(const AcceleratorSpec& gpu, const PowerModel& m) {
    const std::optional<Watts> board = m.board_power ? m.board_power : gpu.board_power;
    if (!board || board->si() <= 0) {
        throw InvalidArgument("accelerator '" + gpu.name +
                              "' has no board power, so its power cannot be modelled; set "
                              "power.board_power in the scenario (e.g. '350 W')");
    }
    GpuPowerLevels g;
    g.board = *board;
    g.idle = m.idle_power ? *m.idle_power
                          : (gpu.idle_power ? *gpu.idle_power : g.board * m.idle_fraction);
    g.resident = m.resident_power ? *m.resident_power : g.board * m.resident_fraction;
    g.resident = std::max(g.resident, g.idle);
    g.idle = std::min(g.idle, g.board);
    g.resident = std::min(g.resident, g.board);
    return g;
}

StepActivity step_activity(const StepCost& c, FlopsPerSecond peak,
                           BytesPerSecond bandwidth) noexcept {
    StepActivity a;
    if (c.time.si() <= 0 || peak.si() <= 0 || bandwidth.si() <= 0) {
        return a;
    }
    // Dynamic energy is spent per operation (per FLOP in the tensor cores, per byte moved from
    // HBM), so power follows the achieved rates, not the busy time: a GEMM with one token row
    // keeps the SMs "busy" but does few FLOPs (docs/power.md).
    Bytes link;
    for (std::size_t i = 0; i < kOpCount; ++i) {
        if (is_comm(i)) {
            link += c.ops[i].bytes; // collectives read and write device memory at link rate
        }
    }
    a.compute = std::clamp(c.flops / (peak * c.time), 0.0, 1.0);
    a.memory = std::clamp((c.bytes + link) / (bandwidth * c.time), 0.0, 1.0);
    return a;
}

StepActivity step_activity(const StepCost& c, const StepCostModel& m) noexcept {
    return step_activity(c, m.peak_flops(), m.bandwidth());
}

Watts step_power(const StepActivity& a, const GpuPowerLevels& g, const PowerModel& m,
                 double clock) noexcept {
    // The activity is measured at this clock, so it already carries the 1/k longer compute
    // time; the energy per operation scales with V² ∝ k^(γ−1) (docs/power.md, "Caps").
    const double k = std::clamp(clock, 0.0, 1.0);
    const double kv = std::pow(k, m.dynamic_exponent - 1.0);
    const double demand =
        m.compute_weight * a.compute * kv +
        m.memory_weight * a.memory * (1.0 - m.memory_core_share + m.memory_core_share * kv);
    const double f = std::clamp(demand, 0.0, 1.0);
    return g.resident + (g.board - g.resident) * f;
}

Watts step_power(const StepCost& c, const StepCostModel& sm, const GpuPowerLevels& g,
                 const PowerModel& m) noexcept {
    return step_power(step_activity(c, sm), g, m, sm.clocks().compute);
}

Joules step_energy(const StepCost& c, const StepCostModel& sm, const GpuPowerLevels& g,
                   const PowerModel& m) noexcept {
    return step_power(c, sm, g, m) * c.time;
}

ClockFactors clock_factors(double clock, const PowerModel& m) noexcept {
    const double k = std::clamp(clock, 1e-6, 1.0);
    return {k, std::clamp(1.0 - m.memory_clock_sensitivity * (1.0 - k), 1e-6, 1.0)};
}

NodePower node_power_of(const ServerSpec& s, const PowerModel& m) {
    NodePower n;
    n.gpus = std::max(1, s.accelerators);
    n.host = m.host_power ? *m.host_power : s.host_power;
    n.idle = s.idle_power;
    if (s.max_power.si() > 0) {
        n.nameplate = s.max_power;
    }
    n.rack_units = s.rack_units;
    n.known = true;
    return n;
}

NodePower unknown_node(int gpus, const PowerModel& m) {
    NodePower n;
    n.gpus = std::max(1, gpus);
    n.host = m.host_power.value_or(Watts(0));
    n.known = false;
    return n;
}

Watts node_wall_power(Watts per_gpu, int gpus_busy, const NodePower& n,
                      const PowerModel& m) noexcept {
    return per_gpu * (static_cast<double>(gpus_busy) / psu_efficiency(m)) + n.host;
}

Watts deployment_wall_power(Watts per_gpu, int gpus, const NodePower& n,
                            const PowerModel& m) noexcept {
    const double share = static_cast<double>(gpus) / n.gpus;
    return per_gpu * (static_cast<double>(gpus) / psu_efficiency(m)) + n.host * share;
}

const char* to_string(LimitSource s) {
    switch (s) {
    case LimitSource::Board: return "board";
    case LimitSource::GpuCap: return "gpu_cap";
    case LimitSource::NodeCap: return "node_cap";
    case LimitSource::RackBudget: return "rack_budget";
    }
    return "board";
}

GpuPowerLimit gpu_power_limit(const PowerBudget& b, const GpuPowerLevels& g, const NodePower& n,
                              const PowerModel& m, std::optional<int> nodes_per_rack) {
    GpuPowerLimit r;
    r.per_gpu = g.board;
    r.source = LimitSource::Board;
    const double psu = psu_efficiency(m);
    const auto take = [&](Watts w, LimitSource s) {
        if (w < r.per_gpu) {
            r.per_gpu = w;
            r.source = s;
        }
    };
    if (b.gpu_cap) {
        take(*b.gpu_cap, LimitSource::GpuCap);
        r.notes.push_back("gpu_cap " + watts_text(*b.gpu_cap) + " per GPU");
    }
    // A node (or rack share) at the wall: the host takes its share first, the rest is the
    // accelerators' DC budget.
    const auto per_gpu_of_node = [&](Watts node_budget) {
        return (node_budget - n.host) * (psu / n.gpus);
    };
    if (b.node_cap) {
        const Watts w = per_gpu_of_node(*b.node_cap);
        take(w, LimitSource::NodeCap);
        r.notes.push_back("node_cap " + watts_text(*b.node_cap) + " - host " + watts_text(n.host) +
                          " over " + std::to_string(n.gpus) + " GPUs = " + watts_text(w) +
                          " per GPU");
    }
    if (b.rack_budget) {
        if (nodes_per_rack && *nodes_per_rack > 0) {
            const Watts share = *b.rack_budget / static_cast<double>(*nodes_per_rack);
            const Watts w = per_gpu_of_node(share);
            take(w, LimitSource::RackBudget);
            r.notes.push_back("rack_budget " + watts_text(*b.rack_budget) + " over " +
                              std::to_string(*nodes_per_rack) + " nodes = " + watts_text(share) +
                              " per node, " + watts_text(w) + " per GPU after the host");
        } else {
            r.notes.push_back("rack_budget " + watts_text(*b.rack_budget) +
                              " sizes racks only; set rack.nodes_per_rack to turn it into a "
                              "per-GPU cap");
        }
    }
    if ((b.node_cap || (b.rack_budget && nodes_per_rack)) && !n.known && !m.host_power) {
        r.notes.push_back("no node given: host power not counted (set hardware.node or "
                          "power.host_power)");
    }
    if (r.per_gpu < g.resident) {
        r.below_resident = true;
        r.notes.push_back("the limit " + watts_text(r.per_gpu) + " is below the resident power " +
                          watts_text(g.resident) + ": a loaded GPU cannot be held under it");
    }
    return r;
}

PowerCappedStepCost::PowerCappedStepCost(const Deployment& d, const EfficiencyProfile& profile,
                                         const PowerModel& m, Watts limit, int levels)
    : model_(m), levels_(power_levels(d.gpu, m)), limit_(limit) {
    if (levels < 2) {
        throw InvalidArgument("power-capped step cost: use at least 2 clock levels, got " +
                              std::to_string(levels));
    }
    const double lo = std::clamp(m.min_clock, 1e-3, 1.0);
    ladder_.reserve(static_cast<std::size_t>(levels));
    clocks_.reserve(static_cast<std::size_t>(levels));
    for (int i = 0; i < levels; ++i) {
        const double k = 1.0 - (1.0 - lo) * i / (levels - 1.0);
        Deployment dk = d;
        const ClockFactors f = clock_factors(k, m);
        dk.clocks = {d.clocks.compute * f.compute, d.clocks.memory * f.memory};
        ladder_.emplace_back(dk, profile);
        clocks_.push_back(k);
    }
}

PowerCappedStepCost::Step PowerCappedStepCost::cost(const BatchStats& s) const noexcept {
    const auto at = [&](std::size_t i) {
        Step st;
        st.cost = ladder_[i].cost(s);
        st.clock = clocks_[i];
        st.power = step_power(st.cost, ladder_[i], levels_, model_);
        st.energy = st.power * st.cost.time;
        return st;
    };
    Step top = at(0);
    if (top.power <= limit_) {
        return top;
    }
    // Power falls with the clock level: find the first level that fits.
    std::size_t lo = 0; // does not fit
    std::size_t hi = ladder_.size() - 1;
    Step best = at(hi);
    if (best.power > limit_) {
        return best;
    }
    while (hi - lo > 1) {
        const std::size_t mid = (lo + hi) / 2;
        Step st = at(mid);
        if (st.power <= limit_) {
            hi = mid;
            best = st;
        } else {
            lo = mid;
        }
    }
    return best;
}

namespace {

/// Per-GPU power of the steady cycle of `e` at clock k: its decode-only step, plus the extra
/// time the riding prompt tokens add at the lone prefill step's activity.
Watts cycle_power(const ServingEstimate& e, const StepCostModel& sm, const GpuPowerLevels& g,
                  const PowerModel& m, double k, StepActivity* activity = nullptr) {
    const double td = e.decode_step.time.si();
    const double extra = std::max(0.0, e.tpot.si() - td);
    const double total = td + extra;
    if (total <= 0) {
        return g.resident;
    }
    const StepActivity ad = step_activity(e.decode_step, sm);
    const StepActivity ap = step_activity(e.prefill_step, sm);
    if (activity) {
        activity->compute = (ad.compute * td + ap.compute * extra) / total;
        activity->memory = (ad.memory * td + ap.memory * extra) / total;
    }
    return (step_power(ad, g, m, k) * td + step_power(ap, g, m, k) * extra) / total;
}

} // namespace

PowerEstimate estimate_power(const Deployment& d, const Workload& w,
                             const EfficiencyProfile& profile, const PowerModel& m,
                             const PowerBudget& budget, const NodePower& node, const Slo& slo,
                             const RackConfig& rack, int cached_prefix) {
    PowerEstimate r;
    r.levels = power_levels(d.gpu, m);
    r.node = node;
    r.limit = gpu_power_limit(budget, r.levels, node, m, rack.nodes_per_rack);
    r.notes = r.limit.notes;
    r.pue = budget.pue.value_or(1.0);
    const double min_clock = std::clamp(m.min_clock, 1e-3, 1.0);
    const auto at = [&](double k) {
        Deployment dk = d;
        const ClockFactors f = clock_factors(k, m);
        dk.clocks = {d.clocks.compute * f.compute, d.clocks.memory * f.memory};
        return estimate_serving(dk, w, profile, cached_prefix);
    };
    const GpuPowerLevels& g = r.levels;
    const StepCostModel nominal(d, profile); // the datasheet peak and bandwidth
    const auto prefill_power = [&](const ServingEstimate& e, double k) {
        return step_power(step_activity(e.prefill_step, nominal), g, m, k);
    };

    r.uncapped = at(1.0);
    r.prefill.activity = step_activity(r.uncapped.prefill_step, nominal);
    r.prefill.uncapped = prefill_power(r.uncapped, 1.0);
    r.steady.uncapped = cycle_power(r.uncapped, nominal, g, m, 1.0, &r.steady.activity);
    const Watts limit = r.limit.per_gpu;

    ServingEstimate ep = r.uncapped;
    ServingEstimate es = r.uncapped;
    if (r.prefill.uncapped > limit) {
        r.prefill.clock =
            solve_clock([&](double k) { return prefill_power(at(k), k); }, limit, min_clock);
        ep = at(r.prefill.clock);
    }
    if (r.steady.uncapped > limit) {
        r.steady.clock = solve_clock([&](double k) { return cycle_power(at(k), nominal, g, m, k); },
                                     limit, min_clock);
        es = at(r.steady.clock);
    }
    r.prefill.capped = prefill_power(ep, r.prefill.clock);
    r.steady.capped = cycle_power(es, nominal, g, m, r.steady.clock);
    r.limited = r.prefill.clock < 1.0 || r.steady.clock < 1.0;
    r.unreachable = r.prefill.capped > limit || r.steady.capped > limit;
    if (r.unreachable) {
        r.notes.push_back("even at the lowest clock (" + std::to_string(min_clock).substr(0, 4) +
                          " of the datasheet clock) this load draws more than the limit");
    }

    r.capped = es;
    r.capped.ttft = ep.ttft;
    r.capped.prefill = ep.prefill;
    r.capped.prefill_step = ep.prefill_step;
    if (r.uncapped.ttft.si() > 0) {
        r.prefill.slowdown = ep.ttft / r.uncapped.ttft;
    }
    if (r.uncapped.tpot.si() > 0) {
        r.steady.slowdown = es.tpot / r.uncapped.tpot;
    }
    if (r.uncapped.throughput > 0) {
        r.throughput_loss = 1.0 - es.throughput / r.uncapped.throughput;
    }
    r.ttft = {slo.ttft, r.uncapped.ttft, r.capped.ttft};
    r.tpot = {slo.tpot, r.uncapped.tpot, r.capped.tpot};

    // Power of the deployment: its GPUs, plus its share of the hosts of the nodes it uses.
    r.nodes = (d.gpus() + node.gpus - 1) / node.gpus;
    r.gpu_average = r.steady.capped;
    // A limit no clock can meet (unreachable) leaves the GPU drawing more than the limit: the
    // peak is then what it draws, so no output shows an average above its peak.
    r.gpu_peak =
        std::min(g.board, std::max({limit, g.resident, r.steady.capped, r.prefill.capped}));
    r.deployment_average = deployment_wall_power(r.gpu_average, d.gpus(), node, m);
    r.deployment_peak = deployment_wall_power(r.gpu_peak, d.gpus(), node, m);
    r.deployment_idle = deployment_wall_power(g.resident, d.gpus(), node, m);
    r.node_peak_uncapped = node_wall_power(g.board, node.gpus, node, m);
    r.node_peak = node_wall_power(r.gpu_peak, node.gpus, node, m);
    r.facility_average = facility_power(r.deployment_average, r.pue);
    if (r.capped.throughput > 0) {
        r.energy_per_token_j = r.facility_average.si() / r.capped.throughput;
        r.gpu_energy_per_token_j = r.gpu_average.si() * d.gpus() / r.capped.throughput;
    }
    if (r.node_peak.si() > 0) {
        r.oversubscription = r.node_peak_uncapped / r.node_peak - 1.0;
    }
    const int nodes = rack.nodes.value_or(r.nodes);
    r.racks_uncapped =
        plan_racks(r.node_peak_uncapped, node.rack_units, nodes, rack, budget.rack_budget);
    r.racks_capped = plan_racks(r.node_peak, node.rack_units, nodes, rack, budget.rack_budget);
    const bool noted = std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
        return n.rfind("no node given", 0) == 0;
    });
    if (!node.known && !noted) {
        r.notes.push_back("no node given: host power (CPUs, switches, fans) not counted; set "
                          "hardware.node or power.host_power");
    }
    return r;
}

} // namespace gpuplan::model
