// Diagnosis of a training job from its step-time log and GPU telemetry (docs/diagnose.md,
// "Training rows"): the log beside model::estimate_training, the one training chain of
// `gpuplan train`, and the rows the numbers support, each fix re-estimated through it.
#include "model/diagnose.hpp"
#include "model/error.hpp"
#include "model/unit_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuplan::model {
namespace {

std::string secs(double s) {
    return s >= 10 ? fmt::format("{:.1f} s", s) : fmt::format("{:.3g} s", s);
}

std::string layout_text(const TrainingLayout& l) {
    std::string t = fmt::format("tp {}, pp {}, dp {}", l.tp, l.pp, l.dp);
    if (l.cp > 1)
        t += fmt::format(", cp {}", l.cp);
    if (l.ep > 1)
        t += fmt::format(", ep {}", l.ep);
    if (l.virtual_stages > 1)
        t += fmt::format(", {} virtual stages", l.virtual_stages);
    return t + fmt::format(", ZeRO {}, micro-batch {}, recompute {}", l.zero, l.micro_batch,
                           to_string(l.recompute));
}

/// A fix re-estimated through estimate_training: its step time, tokens/s and memory verdict
/// beside the observed step.
DiagnosisFix reestimate(FixLayer layer, std::string change, const Deployment& hw,
                        const TrainingConfig& cfg, const EfficiencyProfile& profile,
                        const TrainingCostInputs& prices, double observed_step_s) {
    DiagnosisFix f;
    f.layer = layer;
    f.change = std::move(change);
    try {
        const TrainingEstimate e = estimate_training(hw, cfg, profile, prices);
        const LayoutResult& r = e.result;
        f.estimated = true;
        f.fits = r.fits;
        f.gpus = hw.gpus();
        f.step = r.step.total;
        f.throughput = r.tokens_per_s;
        const std::string seen =
            observed_step_s > 0 ? " (observed " + secs(observed_step_s) + ")" : std::string();
        f.effect = fmt::format("predicted step {}{}: {:.0f} tokens/s, MFU {}, {:.1f} GiB per GPU{}",
                               secs(r.step.total.si()), seen, r.tokens_per_s, format_percent(r.mfu),
                               r.memory.total.si() / 1073741824.0, r.fits ? "" : " (does not fit)");
    } catch (const InputError& err) {
        f.estimated = false;
        f.effect = std::string("not estimated: ") + err.what();
    }
    return f;
}

} // namespace

Diagnosis diagnose_training(const Deployment& hw, const TrainingConfig& cfg,
                            const EfficiencyProfile& profile, const TrainingCostInputs& prices,
                            const Observations& obs, const DiagnosisThresholds& th) {
    if (!obs.training) {
        throw InvalidArgument("a training diagnosis needs a training log (step times)");
    }
    const TrainingLog& log = *obs.training;
    const bool timed = log.steps >= 1;
    if ((timed && (!(log.step_mean_s > 0) || !std::isfinite(log.step_mean_s))) ||
        (!timed && log.oom_line == 0)) {
        throw InvalidArgument("the training log has no positive step time");
    }
    const TrainingEstimate est = estimate_training(hw, cfg, profile, prices);
    const LayoutResult& pr = est.result;
    const StepBreakdown& b = pr.step;
    // Out of memory before the first step: the model's step stands in for the observed one, so
    // that only the memory row can fire.
    const double observed = timed ? log.step_mean_s : b.total.si();
    const double shown = timed ? observed : 0.0; // the observed step in the fixes' effects
    const double predicted = b.total.si();
    const int gpus = hw.gpus();
    const double tokens_per_step = static_cast<double>(cfg.global_batch) * cfg.seq_len;

    Diagnosis out;
    out.training = true;
    out.predicted_step = b.total;
    // MFU from the step time: the model's FLOPs of the step over the observed time.
    const double mfu = pr.mfu * predicted / observed;
    if (timed) {
        out.comparisons.push_back(
            {"step time", "ms", observed * 1e3, predicted * 1e3, "training log"});
        out.comparisons.push_back(
            {"tokens/s", "tok/s", tokens_per_step / observed, pr.tokens_per_s, "training log"});
        out.comparisons.push_back({"MFU", "%", mfu * 100, pr.mfu * 100, "training log"});
    } else {
        out.notes.push_back("the log has no step time (out of memory before the first step): "
                            "only the memory row is judged");
    }
    if (timed && log.tflops_per_gpu) {
        const double pred_tflops = pr.model_flops.si() / predicted / gpus / 1e12;
        out.comparisons.push_back(
            {"TFLOP/s per GPU", "TFLOP/s", *log.tflops_per_gpu, pred_tflops, "training log"});
    }
    if (log.tokens_per_step &&
        std::abs(*log.tokens_per_step - tokens_per_step) > 0.01 * tokens_per_step) {
        out.notes.push_back(fmt::format(
            "the log's {:.0f} tokens per step differ from the scenario's {} × {} = {:.0f}; the "
            "scenario's batch is what the model predicts",
            *log.tokens_per_step, cfg.global_batch, cfg.seq_len, tokens_per_step));
    }

    const auto& gpu = obs.gpu;
    std::optional<double> util;
    if (gpu)
        util = gpu->utilization_gpu;

    // 1. Communication-bound: far above the compute floor with low MFU, and the model puts a
    // large share of the step in communication and the pipeline bubble.
    const double floor = (b.compute + b.optimizer).si();
    const double comm = (b.exposed_comm + b.bubble).si();
    const double gpu_step = predicted - b.input_stall.si();
    const double comm_share = gpu_step > 0 ? comm / gpu_step : 0;
    const auto& l = cfg.layout;
    if (timed && floor > 0 && observed > th.train_floor_factor * floor && mfu < th.train_low_mfu &&
        comm_share >= th.train_comm_share) {
        DiagnosisRow r;
        r.id = "comm-bound";
        r.symptom = "the step takes far longer than its compute, at a low MFU";
        r.cause = "communication between GPUs and the pipeline bubble take the step";
        r.evidence.push_back(fmt::format(
            "step {} observed vs a compute floor of {} (compute {} + optimizer {}): {:.1f}× "
            "(threshold {:g}×)",
            secs(observed), secs(floor), secs(b.compute.si()), secs(b.optimizer.si()),
            observed / floor, th.train_floor_factor));
        r.evidence.push_back(fmt::format("MFU {} (threshold {})", format_percent(mfu),
                                         format_percent(th.train_low_mfu)));
        r.evidence.push_back(fmt::format(
            "the model puts {} of the step in communication and bubble (threshold {}): exposed "
            "communication {} (tensor parallel {}, pipeline sends {}, data-parallel exposed {}), "
            "bubble {}",
            format_percent(comm_share), format_percent(th.train_comm_share),
            secs(b.exposed_comm.si()), secs(b.tp_comm.si()), secs(b.pp_comm.si()),
            secs(b.dp_exposed.si()), secs(b.bubble.si())));
        if (l.tp > hw.gpus_per_node) {
            r.evidence.push_back(fmt::format(
                "tensor parallelism {} spans nodes of {} GPUs: its all-reduces cross the network",
                l.tp, hw.gpus_per_node));
        }
        if (l.pp > 1 && b.bubble.si() > 0) {
            r.evidence.push_back(fmt::format("pipeline bubble {} of the step ({} stages, {} "
                                             "micro-batches per step)",
                                             format_percent(b.bubble.si() / predicted), l.pp,
                                             pr.micro_batches));
        }
        r.check = "a profile of one step (Nsight Systems or torch.profiler): NCCL kernels and idle "
                  "gaps between micro-batches; `nvidia-smi topo -m` and the NIC bandwidth";
        // The best layout on the same GPUs, by the same model.
        try {
            SearchOptions so;
            so.top = 1;
            const SearchResult sr = search_layouts(hw, cfg, profile, so, prices);
            if (!sr.top.empty() && sr.top.front().layout != l &&
                sr.top.front().step.total.si() < predicted) {
                TrainingConfig c = cfg;
                c.layout = sr.top.front().layout;
                r.fixes.push_back(reestimate(FixLayer::Framework,
                                             "layout " + layout_text(l) + " → " +
                                                 layout_text(c.layout) +
                                                 " (gpuplan train --search)",
                                             hw, c, profile, prices, observed));
            }
        } catch (const InputError&) {
        }
        if (l.pp > 1 && l.virtual_stages == 1) {
            TrainingConfig c = cfg;
            c.layout.virtual_stages = 2;
            r.fixes.push_back(reestimate(FixLayer::Framework,
                                         "interleaved pipeline: 2 virtual stages per GPU "
                                         "(--num-layers-per-virtual-pipeline-stage)",
                                         hw, c, profile, prices, observed));
        }
        if (cfg.grad_reduce_overlap.value_or(kDefaultGradReduceOverlap) < 0.8) {
            TrainingConfig c = cfg;
            c.grad_reduce_overlap = kDefaultGradReduceOverlap;
            r.fixes.push_back(reestimate(FixLayer::Framework,
                                         "overlap the gradient reduction with backward "
                                         "(--overlap-grad-reduce)",
                                         hw, c, profile, prices, observed));
        }
        r.fixes.push_back(advice(FixLayer::Hardware,
                                 "a faster interconnect (NVLink within a node, more NIC bandwidth "
                                 "between nodes)",
                                 "not estimated: give the links in the node and network blocks"));
        r.severity = observed / floor;
        out.rows.push_back(std::move(r));
    }

    // 2. Input stall: the step is longer than the GPUs need, and they wait.
    {
        TrainingConfig c = cfg;
        c.data_loader_tokens_per_s.reset();
        std::optional<TrainingEstimate> gpu_only;
        try {
            gpu_only = estimate_training(hw, c, profile, prices);
        } catch (const InputError&) {
        }
        const double own = gpu_only ? gpu_only->result.step.total.si() : gpu_step;
        const double stall_share = predicted > 0 ? b.input_stall.si() / predicted : 0;
        const bool idle = util && *util < th.busy_gpu;
        if (timed && own > 0 && observed > (1 + th.train_input_gap) * own &&
            (stall_share >= th.train_input_gap || idle)) {
            DiagnosisRow r;
            r.id = "input-stall";
            r.symptom = "the GPUs wait between steps";
            r.cause =
                "the input pipeline (data loader) delivers fewer tokens than the GPUs consume";
            r.evidence.push_back(fmt::format(
                "step {} observed vs {} the GPUs need on their own: {} longer (threshold {})",
                secs(observed), secs(own), format_percent(observed / own - 1),
                format_percent(th.train_input_gap)));
            if (est.loader_tokens_per_s > 0) {
                r.evidence.push_back(fmt::format(
                    "the data loaders deliver {:.0f} tokens/s; the GPUs could consume {:.0f}: the "
                    "model predicts {} of each step waiting for input",
                    est.loader_tokens_per_s, est.consumed_tokens_per_s,
                    format_percent(stall_share)));
            }
            if (util) {
                r.evidence.push_back(fmt::format("GPU utilization {} (below {}: idle between "
                                                 "kernels)",
                                                 format_percent(*util),
                                                 format_percent(th.busy_gpu)));
            }
            r.check = "a profile of one step: the gap before the forward pass; the data loader's "
                      "time per batch (DataLoader num_workers, prefetch_factor, pin_memory); CPU "
                      "use of the loader processes";
            r.fixes.push_back(reestimate(FixLayer::Framework,
                                         "more data-loader workers and prefetching (num_workers, "
                                         "prefetch_factor, pin_memory), or pre-tokenized data: "
                                         "the loader no longer limits",
                                         hw, c, profile, prices, observed));
            r.severity = observed / own;
            out.rows.push_back(std::move(r));
        }
    }

    // 3. Memory: out of memory, or at the edge of it.
    {
        const double cap = pr.memory.capacity.si();
        const double reserved = log.max_reserved_mib ? *log.max_reserved_mib * 1048576.0 : 0.0;
        const bool full = cap > 0 && reserved >= th.train_memory_share * cap;
        if (log.oom_line > 0 || full || !pr.fits) {
            DiagnosisRow r;
            r.id = "training-memory";
            r.symptom = log.oom_line > 0 ? "the job ran out of GPU memory"
                                         : "the job is at the edge of the GPU's memory";
            r.cause = "activations and model states do not fit the GPU at this layout";
            if (log.oom_line > 0) {
                r.evidence.push_back(
                    fmt::format("training log line {}: out of memory", log.oom_line));
            }
            if (log.max_reserved_mib) {
                r.evidence.push_back(fmt::format(
                    "max reserved {:.1f} GiB of {:.1f} GiB ({}, threshold {})",
                    reserved / 1073741824.0, cap / 1073741824.0, format_percent(reserved / cap),
                    format_percent(th.train_memory_share)));
            }
            r.evidence.push_back(fmt::format(
                "the model: {:.1f} GiB per GPU of {:.1f} GiB (activations {:.1f} GiB, model "
                "states {:.1f} GiB){}",
                pr.memory.total.si() / 1073741824.0, cap / 1073741824.0,
                pr.memory.activations.si() / 1073741824.0,
                (pr.memory.weights + pr.memory.gradients + pr.memory.optimizer_states).si() /
                    1073741824.0,
                pr.fits ? "" : ": does not fit"));
            r.check = "torch.cuda.memory_summary() or Megatron's memory report after the first "
                      "steps; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to rule out "
                      "fragmentation";
            if (l.recompute != Recompute::Full) {
                TrainingConfig c = cfg;
                c.layout.recompute = Recompute::Full;
                r.fixes.push_back(reestimate(
                    FixLayer::Framework,
                    fmt::format("activation recompute {} → full", to_string(l.recompute)), hw, c,
                    profile, prices, shown));
            }
            if (l.micro_batch > 1) {
                TrainingConfig c = cfg;
                c.layout.micro_batch = l.micro_batch / 2;
                r.fixes.push_back(reestimate(
                    FixLayer::Framework,
                    fmt::format("micro-batch {} → {}", l.micro_batch, c.layout.micro_batch), hw, c,
                    profile, prices, shown));
            }
            if (l.zero < 3 && l.pp == 1 && l.dp * l.cp > 1) {
                TrainingConfig c = cfg;
                c.layout.zero = l.zero + 1;
                r.fixes.push_back(reestimate(FixLayer::Framework,
                                             fmt::format("ZeRO stage {} → {}", l.zero, l.zero + 1),
                                             hw, c, profile, prices, shown));
            }
            r.severity = log.oom_line > 0 ? 2.0 : cap > 0 ? std::max(1.0, reserved / cap) : 1.0;
            out.rows.push_back(std::move(r));
        }
    }

    // 4. Stragglers: some steps far slower than the rest.
    {
        const double cv = log.step_stddev_s / observed;
        const double worst = log.step_max_s / observed;
        if (log.steps >= 3 && (cv > th.train_step_cv || worst > th.train_straggler_max)) {
            DiagnosisRow r;
            r.id = "stragglers";
            r.symptom = "step times vary from step to step";
            r.cause = "a slow GPU, node or link holds every synchronous step back when it lags "
                      "(or periodic work: checkpoints, garbage collection, evaluation)";
            r.evidence.push_back(fmt::format(
                "step times over {} steps: mean {}, standard deviation {} ({} of the mean, "
                "threshold {})",
                log.steps, secs(observed), secs(log.step_stddev_s), format_percent(cv),
                format_percent(th.train_step_cv)));
            r.evidence.push_back(fmt::format(
                "slowest step {} at line {}: {:.2f}× the mean (threshold {:g}×)",
                secs(log.step_max_s), log.step_max_line, worst, th.train_straggler_max));
            r.check = "per-rank step times (Megatron --log-straggler, or NCCL_DEBUG=INFO and "
                      "timers per rank); `nvidia-smi -q -d PERFORMANCE` on every node for "
                      "throttled GPUs; whether the slow steps coincide with checkpoint saves";
            r.fixes.push_back(reestimate(FixLayer::Hardware,
                                         "find and replace (or exclude) the slow GPU or node, "
                                         "so that every rank runs at the model's step",
                                         hw, cfg, profile, prices, observed));
            r.severity = std::max(cv / th.train_step_cv, worst / th.train_straggler_max);
            out.rows.push_back(std::move(r));
        }
    }

    // 5. Clocks held down (power cap or heat), re-estimated as a training step at that clock.
    if (timed && gpu && gpu->sm_clock_mhz && gpu->max_sm_clock_mhz && *gpu->max_sm_clock_mhz > 0) {
        const double ratio = std::min(1.0, *gpu->sm_clock_mhz / *gpu->max_sm_clock_mhz);
        if (ratio < th.clock_ratio) {
            const auto& g = *gpu;
            DiagnosisRow r;
            r.id = throttle_row_id(g);
            const bool thermal = r.id == "thermal-throttled";
            r.symptom = "the GPUs run below their maximum clock";
            r.cause = thermal                  ? "thermal slowdown: the GPUs are too hot"
                      : r.id == "power-capped" ? "the power limit holds the clock down"
                                               : "the clock is held down (no throttle reason "
                                                 "reported)";
            r.evidence.push_back(fmt::format(
                "SM clock {:.0f} of {:.0f} MHz ({}, threshold {})", *g.sm_clock_mhz,
                *g.max_sm_clock_mhz, format_percent(ratio), format_percent(th.clock_ratio)));
            if (g.has_throttle_reasons) {
                r.evidence.push_back(fmt::format(
                    "power-cap throttling in {} of samples, thermal in {}",
                    format_percent(g.power_cap_share), format_percent(g.thermal_share)));
            }
            if (g.power_draw_w && g.power_limit_w) {
                r.evidence.push_back(fmt::format("power draw {:.0f} W of a {:.0f} W limit",
                                                 *g.power_draw_w, *g.power_limit_w));
            }
            Deployment slow = hw;
            slow.clocks.compute = ratio;
            try {
                const TrainingEstimate at = estimate_training(slow, cfg, profile, prices);
                r.evidence.push_back(
                    fmt::format("the model at this clock: step {} (vs {} at full clock)",
                                secs(at.result.step.total.si()), secs(predicted)));
            } catch (const InputError&) {
            }
            r.check = "`nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE` on every node: clock "
                      "event reasons, power limit, temperatures";
            r.fixes.push_back(reestimate(
                FixLayer::Hardware,
                thermal ? "improve cooling (airflow, inlet temperature)"
                        : "raise the power limit (nvidia-smi -pl) or the rack's power budget",
                hw, cfg, profile, prices, observed));
            r.severity = 1.0 / ratio;
            out.rows.push_back(std::move(r));
        }
    }

    for (auto& r : out.rows) {
        std::stable_sort(
            r.fixes.begin(), r.fixes.end(),
            [](const DiagnosisFix& a, const DiagnosisFix& c) { return a.layer < c.layer; });
    }
    std::stable_sort(
        out.rows.begin(), out.rows.end(),
        [](const DiagnosisRow& a, const DiagnosisRow& c) { return a.severity > c.severity; });
    if (!gpu) {
        out.notes.push_back("no GPU telemetry (--smi, --dmon or --dcgm): clocks, power and "
                            "utilization rows cannot be judged");
    }
    return out;
}

} // namespace gpuplan::model
