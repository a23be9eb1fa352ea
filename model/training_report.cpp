// estimate_training: the full report of one layout (per-stage memory, scaling, energy, cost).
#include "model/checked_format.hpp"
#include "model/error.hpp"
#include "model/power.hpp"
#include "model/training.hpp"
#include "model/unit_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuplan::model {

namespace {

std::string layout_text(const TrainingLayout& l) {
    return "tp " + std::to_string(l.tp) + " × pp " + std::to_string(l.pp) + " × dp " +
           std::to_string(l.dp) + (l.cp > 1 ? " × cp " + std::to_string(l.cp) : "") +
           (l.ep > 1 ? " (ep " + std::to_string(l.ep) + ")" : "");
}

// The run under a power limit: the deployment at the clock the limit leaves, and the uncapped
// step time.
struct PowerCapped {
    Deployment run;
    double clock = 1.0;
    Seconds uncapped_step;
};

// A power limit: the highest core clock whose busy power fits (model/power.hpp solve_clock,
// the same limiter as serving); the clocks derate compute and bandwidth.
PowerCapped under_power_limit(const Deployment& hw, const TrainingConfig& cfg,
                              const EfficiencyProfile& profile, const TrainingCostInputs& prices) {
    PowerCapped c{hw, 1.0, Seconds(0)};
    if (prices.gpu_power_limit && !cfg.average_gpu_power &&
        (hw.gpu.board_power || prices.power_model.board_power)) {
        const auto at = [&](double k) {
            Deployment dk = hw;
            const ClockFactors f = clock_factors(k, prices.power_model);
            dk.clocks = {hw.clocks.compute * f.compute, hw.clocks.memory * f.memory};
            return TrainingModel(dk, cfg, profile, prices).evaluate(cfg.layout);
        };
        const LayoutResult full = at(1.0);
        c.uncapped_step = full.step.total;
        if (full.issue == LayoutIssue::None && full.busy_gpu_power > *prices.gpu_power_limit) {
            const double min_clock = std::clamp(prices.power_model.min_clock, 1e-3, 1.0);
            c.clock = solve_clock([&](double k) { return at(k).busy_gpu_power; },
                                  *prices.gpu_power_limit, min_clock);
            const ClockFactors f = clock_factors(c.clock, prices.power_model);
            c.run.clocks = {hw.clocks.compute * f.compute, hw.clocks.memory * f.memory};
        }
    }
    return c;
}

// What the GPUs could consume without waiting, and what the loaders give; scaling from one GPU:
// the same global batch as gradient accumulation on one device, with
// no communication (memory not checked); Amdahl's serial fraction from the speed-up.
void set_throughput_and_scaling(TrainingEstimate& e, const TrainingModel& model,
                                const Deployment& hw, const TrainingConfig& cfg) {
    const LayoutResult& r = e.result;
    const double tokens_step = static_cast<double>(cfg.global_batch) * cfg.seq_len;
    const Seconds busy = r.step.total - r.step.input_stall;
    e.consumed_tokens_per_s = busy.si() > 0 ? tokens_step / busy.si() : 0.0;
    if (cfg.data_loader_tokens_per_s) {
        const double nodes =
            std::ceil(static_cast<double>(hw.gpus()) / std::max(1, hw.gpus_per_node));
        e.loader_tokens_per_s = *cfg.data_loader_tokens_per_s * nodes;
    }
    const double n = hw.gpus();
    e.single_gpu_step = model.single_gpu_step(cfg.layout);
    e.speedup = r.step.total.si() > 0 ? e.single_gpu_step / r.step.total : 0.0;
    e.scaling_efficiency = e.speedup / n;
    e.serial_fraction = amdahl_serial_fraction(e.speedup, n);
    if (e.serial_fraction > 0) {
        e.amdahl_limit = 1.0 / e.serial_fraction;
    }
}

// Energy and cost: GPU energy, facility energy with a PUE, rent and electricity.
void set_energy_and_cost(TrainingEstimate& e, const TrainingCostInputs& prices) {
    const LayoutResult& r = e.result;
    if (r.energy.si() > 0) {
        e.energy_kwh = r.energy.si() / 3.6e6;
        if (prices.pue) {
            e.facility_energy_kwh = *e.energy_kwh * *prices.pue;
        }
    }
    if (prices.gpu_hour) {
        e.rent_cost = prices.gpu_hour->money * r.gpu_hours;
    }
    if (prices.electricity && e.energy_kwh) {
        const double kwh = e.facility_energy_kwh.value_or(*e.energy_kwh);
        e.energy_cost = prices.electricity->money * kwh;
    }
}

// Failures: a checkpoint holds the 16-bit weights and the optimizer states (master copy and
// moments) of the trained parameters, unsharded (ZeRO's 2Ψ + KΨ; gradients are not saved);
// a restart also reads a LoRA run's frozen 16-bit base.
void set_failures(TrainingEstimate& e, const TrainingModel& model, const Deployment& hw,
                  const TrainingConfig& cfg, const TrainingCostInputs& prices) {
    const LayoutResult& r = e.result;
    const ModelStates states =
        zero_model_states(e.trainable_params, model.optimizer_bytes_per_param(), 0, 1);
    FailureInputs in;
    in.solve_time = r.time_to_train;
    in.gpus = hw.gpus();
    in.gpus_per_node = std::max(1, hw.gpus_per_node);
    in.checkpoint_size = states.weights + states.optimizer;
    in.restart_read = in.checkpoint_size + Bytes(2.0 * (e.params - e.trainable_params));
    in.config = *cfg.failures;
    e.failures = estimate_failures(in);
    if (prices.gpu_hour && e.failures->finishes) {
        e.rent_cost_with_failures = prices.gpu_hour->money * e.failures->gpu_hours;
    }
}

// Notes: the verdict per stage, stalls, what was assumed.
void add_notes(TrainingEstimate& e, const Deployment& hw, const TrainingConfig& cfg) {
    const LayoutResult& r = e.result;
    for (const StageMemory& s : e.stages) {
        if (!s.fits) {
            e.notes.push_back("stage " + std::to_string(s.stage) + " needs " +
                              format_in_gib(s.total) + " of " + format_in_gib(s.capacity) + ", " +
                              format_in_gib(-s.free) +
                              " short: try a higher zero stage, full recomputation, a smaller "
                              "micro-batch, more tp/pp, or gpuplan train --search");
        }
    }
    if (r.step.input_stall.si() > 0) {
        e.notes.push_back("input-bound: the data loaders deliver " +
                          std::to_string(static_cast<long long>(e.loader_tokens_per_s)) +
                          " tokens/s but the GPUs could consume " +
                          std::to_string(static_cast<long long>(e.consumed_tokens_per_s)) +
                          "; the GPUs wait " + format_percent(r.step.input_stall / r.step.total) +
                          " of each step (prefetch asynchronously, add loader workers)");
    }
    if (hw.gpus() > 1 && e.scaling_efficiency < 0.6) {
        e.notes.push_back("scaling efficiency " + format_percent(e.scaling_efficiency) +
                          " is below 60 %: look at communication and input stalls first "
                          "(docs/domain.md §5)");
    }
    if (cfg.layout.tp > hw.gpus_per_node) {
        e.notes.push_back("tensor parallelism spans nodes: its per-layer collectives cross the "
                          "network");
    }
    if (e.clock < 1.0) {
        e.notes.push_back(
            gpuplan::checked_format("the {:.0f} W per-GPU power limit holds the core clock at "
                                    "{:.0f} %: each step takes {:.2f}x as long",
                                    e.power_limit->si(), e.clock * 100.0, e.power_slowdown));
    }
    if (e.power_basis == "unknown") {
        e.notes.push_back("no board power for this accelerator and no average_gpu_power given: "
                          "energy and electricity cost are not computed");
    }
}

} // namespace

TrainingEstimate estimate_training(const Deployment& hw, const TrainingConfig& cfg,
                                   const EfficiencyProfile& profile,
                                   const TrainingCostInputs& prices) {
    const PowerCapped capped = under_power_limit(hw, cfg, profile, prices);
    const TrainingModel model(capped.run, cfg, profile, prices);
    TrainingEstimate e;
    e.result = model.evaluate(cfg.layout);
    if (prices.gpu_power_limit) {
        e.power_limit = prices.gpu_power_limit;
        e.clock = capped.clock;
        if (capped.uncapped_step.si() > 0) {
            e.power_slowdown = e.result.step.total / capped.uncapped_step;
        }
    }
    if (e.result.issue != LayoutIssue::None) {
        throw InvalidArgument("training layout " + layout_text(cfg.layout) + " on " +
                              std::to_string(hw.gpus()) + " GPUs with global batch " +
                              std::to_string(cfg.global_batch) + ", micro-batch " +
                              std::to_string(cfg.layout.micro_batch) + ", zero " +
                              std::to_string(cfg.layout.zero) + ": " + to_string(e.result.issue));
    }
    e.stages = model.stage_memory(cfg.layout);
    e.params = model.params();
    e.trainable_params = model.trainable_params();
    e.state_bytes_per_param = 2.0 + 2.0 + model.optimizer_bytes_per_param();
    e.total_flops = Flops(model.model_flops_per_token() * cfg.tokens);
    e.pf_days = pf_days(e.total_flops);
    e.grad_reduce_overlap = model.grad_reduce_overlap();
    e.fragmentation = model.fragmentation();
    e.runtime_overhead = model.runtime_overhead();

    set_throughput_and_scaling(e, model, hw, cfg);
    e.power_basis = model.power_basis();
    set_energy_and_cost(e, prices);
    if (cfg.failures) {
        set_failures(e, model, hw, cfg, prices);
    }
    add_notes(e, hw, cfg);
    return e;
}

} // namespace gpuplan::model
