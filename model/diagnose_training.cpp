// Diagnosis of a training job from its step-time log and GPU telemetry (docs/diagnose.md,
// "Training rows"): the log beside model::estimate_training, the one training chain of
// `gpuplan train`, and the rows the numbers support, each fix re-estimated through it.
#include "model/checked_format.hpp"
#include "model/diagnose.hpp"
#include "model/error.hpp"
#include "model/unit_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuplan::model {
namespace {

std::string secs(double s) {
    return s >= 10 ? gpuplan::checked_format("{:.1f} s", s)
                   : gpuplan::checked_format("{:.3g} s", s);
}

std::string layout_text(const TrainingLayout& l) {
    std::string t = gpuplan::checked_format("tp {}, pp {}, dp {}", l.tp, l.pp, l.dp);
    if (l.cp > 1)
        t += gpuplan::checked_format(", cp {}", l.cp);
    if (l.ep > 1)
        t += gpuplan::checked_format(", ep {}", l.ep);
    if (l.virtual_stages > 1)
        t += gpuplan::checked_format(", {} virtual stages", l.virtual_stages);
    return t + gpuplan::checked_format(", ZeRO {}, micro-batch {}, recompute {}", l.zero,
                                       l.micro_batch, to_string(l.recompute));
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
        f.effect = gpuplan::checked_format(
            "predicted step {}{}: {:.0f} tokens/s, MFU {}, {:.1f} GiB per GPU{}",
            secs(r.step.total.si()), seen, r.tokens_per_s, format_percent(r.mfu),
            r.memory.total.si() / 1073741824.0, r.fits ? "" : " (does not fit)");
    } catch (const InputError& err) {
        f.estimated = false;
        f.effect = std::string("not estimated: ") + err.what();
    }
    return f;
}

/// What the training rules read: the inputs of diagnose_training(), the model's step at the
/// scenario's layout and the figures several rules share. The references point at
/// diagnose_training()'s arguments and locals and live as long as the call.
struct TrainingFacts {
    const Deployment& hw;                   ///< the GPUs and links
    const TrainingConfig& cfg;              ///< the job as the scenario describes it
    const EfficiencyProfile& profile;       ///< the efficiency profile every estimate uses
    const TrainingCostInputs& prices;       ///< prices for estimate_training
    const TrainingLog& log;                 ///< the job's step times
    const DiagnosisThresholds& th;          ///< the rules' thresholds
    const TrainingEstimate& est;            ///< the model at the scenario's layout
    const LayoutResult& pr;                 ///< est.result
    const StepBreakdown& b;                 ///< pr.step
    const TrainingLayout& l;                ///< cfg.layout
    const std::optional<GpuTelemetry>& gpu; ///< the GPU telemetry, when given
    std::optional<double> util;             ///< GPU utilization, when the telemetry has it
    bool timed = false;                     ///< the log has step times (not only an OOM)
    double observed = 0;        ///< the observed mean step, s (the model's without step times)
    double shown = 0;           ///< the observed step in the fixes' effects, s (0: none)
    double predicted = 0;       ///< the model's step, s
    double mfu = 0;             ///< MFU at the observed step
    double gpu_step = 0;        ///< the model's step less its input stall, s
    int gpus = 0;               ///< GPUs of the deployment
    double tokens_per_step = 0; ///< the scenario's global batch × sequence length
};

/// The training log of `obs`, checked to have a step time or an out-of-memory line.
const TrainingLog& checked_training_log(const Observations& obs) {
    if (!obs.training) {
        throw InvalidArgument("a training diagnosis needs a training log (step times)");
    }
    const TrainingLog& log = *obs.training;
    const bool timed = log.steps >= 1;
    if ((timed && (!(log.step_mean_s > 0) || !std::isfinite(log.step_mean_s))) ||
        (!timed && log.oom_line == 0)) {
        throw InvalidArgument("the training log has no positive step time");
    }
    return log;
}

// The log's figures beside the model's, and notes where the log lacks or differs.
void add_training_comparisons(const TrainingFacts& s, Diagnosis& out) {
    if (s.timed) {
        out.comparisons.push_back(
            {"step time", "ms", s.observed * 1e3, s.predicted * 1e3, "training log"});
        out.comparisons.push_back({"tokens/s", "tok/s", s.tokens_per_step / s.observed,
                                   s.pr.tokens_per_s, "training log"});
        out.comparisons.push_back({"MFU", "%", s.mfu * 100, s.pr.mfu * 100, "training log"});
    } else {
        out.notes.push_back("the log has no step time (out of memory before the first step): "
                            "only the memory row is judged");
    }
    if (s.timed && s.log.tflops_per_gpu) {
        const double pred_tflops = s.pr.model_flops.si() / s.predicted / s.gpus / 1e12;
        out.comparisons.push_back(
            {"TFLOP/s per GPU", "TFLOP/s", *s.log.tflops_per_gpu, pred_tflops, "training log"});
    }
    if (s.log.tokens_per_step &&
        std::abs(*s.log.tokens_per_step - s.tokens_per_step) > 0.01 * s.tokens_per_step) {
        out.notes.push_back(gpuplan::checked_format(
            "the log's {:.0f} tokens per step differ from the scenario's {} × {} = {:.0f}; the "
            "scenario's batch is what the model predicts",
            *s.log.tokens_per_step, s.cfg.global_batch, s.cfg.seq_len, s.tokens_per_step));
    }
}

// 1. Communication-bound: far above the compute floor with low MFU, and the model puts a
// large share of the step in communication and the pipeline bubble.
void add_comm_bound_evidence(const TrainingFacts& s, double floor, double comm_share,
                             DiagnosisRow& r) {
    r.evidence.push_back(gpuplan::checked_format(
        "step {} observed vs a compute floor of {} (compute {} + optimizer {}): {:.1f}× "
        "(threshold {:g}×)",
        secs(s.observed), secs(floor), secs(s.b.compute.si()), secs(s.b.optimizer.si()),
        s.observed / floor, s.th.train_floor_factor));
    r.evidence.push_back(gpuplan::checked_format("MFU {} (threshold {})", format_percent(s.mfu),
                                                 format_percent(s.th.train_low_mfu)));
    r.evidence.push_back(gpuplan::checked_format(
        "the model puts {} of the step in communication and bubble (threshold {}): exposed "
        "communication {} (tensor parallel {}, pipeline sends {}, data-parallel exposed {}), "
        "bubble {}",
        format_percent(comm_share), format_percent(s.th.train_comm_share),
        secs(s.b.exposed_comm.si()), secs(s.b.tp_comm.si()), secs(s.b.pp_comm.si()),
        secs(s.b.dp_exposed.si()), secs(s.b.bubble.si())));
    if (s.l.tp > s.hw.gpus_per_node) {
        r.evidence.push_back(gpuplan::checked_format(
            "tensor parallelism {} spans nodes of {} GPUs: its all-reduces cross the network",
            s.l.tp, s.hw.gpus_per_node));
    }
    if (s.l.pp > 1 && s.b.bubble.si() > 0) {
        r.evidence.push_back(gpuplan::checked_format(
            "pipeline bubble {} of the step ({} stages, {} "
            "micro-batches per step)",
            format_percent(s.b.bubble.si() / s.predicted), s.l.pp, s.pr.micro_batches));
    }
}

void add_comm_bound_fixes(const TrainingFacts& s, DiagnosisRow& r) {
    // The best layout on the same GPUs, by the same model.
    try {
        SearchOptions so;
        so.top = 1;
        const SearchResult sr = search_layouts(s.hw, s.cfg, s.profile, so, s.prices);
        if (!sr.top.empty() && sr.top.front().layout != s.l &&
            sr.top.front().step.total.si() < s.predicted) {
            TrainingConfig c = s.cfg;
            c.layout = sr.top.front().layout;
            r.fixes.push_back(reestimate(FixLayer::Framework,
                                         "layout " + layout_text(s.l) + " → " +
                                             layout_text(c.layout) + " (gpuplan train --search)",
                                         s.hw, c, s.profile, s.prices, s.observed));
        }
    } catch (const InputError&) {
    }
    if (s.l.pp > 1 && s.l.virtual_stages == 1) {
        TrainingConfig c = s.cfg;
        c.layout.virtual_stages = 2;
        r.fixes.push_back(reestimate(FixLayer::Framework,
                                     "interleaved pipeline: 2 virtual stages per GPU "
                                     "(--num-layers-per-virtual-pipeline-stage)",
                                     s.hw, c, s.profile, s.prices, s.observed));
    }
    if (s.cfg.grad_reduce_overlap.value_or(kDefaultGradReduceOverlap) < 0.8) {
        TrainingConfig c = s.cfg;
        c.grad_reduce_overlap = kDefaultGradReduceOverlap;
        r.fixes.push_back(reestimate(FixLayer::Framework,
                                     "overlap the gradient reduction with backward "
                                     "(--overlap-grad-reduce)",
                                     s.hw, c, s.profile, s.prices, s.observed));
    }
    r.fixes.push_back(advice(FixLayer::Hardware,
                             "a faster interconnect (NVLink within a node, more NIC bandwidth "
                             "between nodes)",
                             "not estimated: give the links in the node and network blocks"));
}

void add_comm_bound(const TrainingFacts& s, Diagnosis& out) {
    const double floor = (s.b.compute + s.b.optimizer).si();
    const double comm = (s.b.exposed_comm + s.b.bubble).si();
    const double comm_share = s.gpu_step > 0 ? comm / s.gpu_step : 0;
    const bool applies = s.timed && floor > 0 && s.observed > s.th.train_floor_factor * floor &&
                         s.mfu < s.th.train_low_mfu && comm_share >= s.th.train_comm_share;
    if (!applies) {
        return;
    }
    DiagnosisRow r;
    r.id = "comm-bound";
    r.symptom = "the step takes far longer than its compute, at a low MFU";
    r.cause = "communication between GPUs and the pipeline bubble take the step";
    add_comm_bound_evidence(s, floor, comm_share, r);
    r.check = "a profile of one step (Nsight Systems or torch.profiler): NCCL kernels and idle "
              "gaps between micro-batches; `nvidia-smi topo -m` and the NIC bandwidth";
    add_comm_bound_fixes(s, r);
    r.severity = s.observed / floor;
    out.rows.push_back(std::move(r));
}

// 2. Input stall: the step is longer than the GPUs need, and they wait.
void add_input_stall(const TrainingFacts& s, Diagnosis& out) {
    TrainingConfig c = s.cfg;
    c.data_loader_tokens_per_s.reset();
    std::optional<TrainingEstimate> gpu_only;
    try {
        gpu_only = estimate_training(s.hw, c, s.profile, s.prices);
    } catch (const InputError&) {
    }
    const double own = gpu_only ? gpu_only->result.step.total.si() : s.gpu_step;
    const double stall_share = s.predicted > 0 ? s.b.input_stall.si() / s.predicted : 0;
    const bool idle = s.util && *s.util < s.th.busy_gpu;
    if (s.timed && own > 0 && s.observed > (1 + s.th.train_input_gap) * own &&
        (stall_share >= s.th.train_input_gap || idle)) {
        DiagnosisRow r;
        r.id = "input-stall";
        r.symptom = "the GPUs wait between steps";
        r.cause = "the input pipeline (data loader) delivers fewer tokens than the GPUs consume";
        r.evidence.push_back(gpuplan::checked_format(
            "step {} observed vs {} the GPUs need on their own: {} longer (threshold {})",
            secs(s.observed), secs(own), format_percent(s.observed / own - 1),
            format_percent(s.th.train_input_gap)));
        if (s.est.loader_tokens_per_s > 0) {
            r.evidence.push_back(gpuplan::checked_format(
                "the data loaders deliver {:.0f} tokens/s; the GPUs could consume {:.0f}: the "
                "model predicts {} of each step waiting for input",
                s.est.loader_tokens_per_s, s.est.consumed_tokens_per_s,
                format_percent(stall_share)));
        }
        if (s.util) {
            r.evidence.push_back(
                gpuplan::checked_format("GPU utilization {} (below {}: idle between "
                                        "kernels)",
                                        format_percent(*s.util), format_percent(s.th.busy_gpu)));
        }
        r.check = "a profile of one step: the gap before the forward pass; the data loader's "
                  "time per batch (DataLoader num_workers, prefetch_factor, pin_memory); CPU "
                  "use of the loader processes";
        r.fixes.push_back(reestimate(FixLayer::Framework,
                                     "more data-loader workers and prefetching (num_workers, "
                                     "prefetch_factor, pin_memory), or pre-tokenized data: "
                                     "the loader no longer limits",
                                     s.hw, c, s.profile, s.prices, s.observed));
        r.severity = s.observed / own;
        out.rows.push_back(std::move(r));
    }
}

// 3. Memory: out of memory, or at the edge of it.
void add_memory_fixes(const TrainingFacts& s, DiagnosisRow& r) {
    if (s.l.recompute != Recompute::Full) {
        TrainingConfig c = s.cfg;
        c.layout.recompute = Recompute::Full;
        r.fixes.push_back(reestimate(
            FixLayer::Framework,
            gpuplan::checked_format("activation recompute {} → full", to_string(s.l.recompute)),
            s.hw, c, s.profile, s.prices, s.shown));
    }
    if (s.l.micro_batch > 1) {
        TrainingConfig c = s.cfg;
        c.layout.micro_batch = s.l.micro_batch / 2;
        r.fixes.push_back(reestimate(
            FixLayer::Framework,
            gpuplan::checked_format("micro-batch {} → {}", s.l.micro_batch, c.layout.micro_batch),
            s.hw, c, s.profile, s.prices, s.shown));
    }
    if (s.l.zero < 3 && s.l.pp == 1 && s.l.dp * s.l.cp > 1) {
        TrainingConfig c = s.cfg;
        c.layout.zero = s.l.zero + 1;
        r.fixes.push_back(
            reestimate(FixLayer::Framework,
                       gpuplan::checked_format("ZeRO stage {} → {}", s.l.zero, s.l.zero + 1), s.hw,
                       c, s.profile, s.prices, s.shown));
    }
}

void add_training_memory(const TrainingFacts& s, Diagnosis& out) {
    const double cap = s.pr.memory.capacity.si();
    const double reserved = s.log.max_reserved_mib ? *s.log.max_reserved_mib * 1048576.0 : 0.0;
    const bool full = cap > 0 && reserved >= s.th.train_memory_share * cap;
    if (!(s.log.oom_line > 0 || full || !s.pr.fits)) {
        return;
    }
    DiagnosisRow r;
    r.id = "training-memory";
    r.symptom = s.log.oom_line > 0 ? "the job ran out of GPU memory"
                                   : "the job is at the edge of the GPU's memory";
    r.cause = "activations and model states do not fit the GPU at this layout";
    if (s.log.oom_line > 0) {
        r.evidence.push_back(
            gpuplan::checked_format("training log line {}: out of memory", s.log.oom_line));
    }
    if (s.log.max_reserved_mib) {
        r.evidence.push_back(gpuplan::checked_format(
            "max reserved {:.1f} GiB of {:.1f} GiB ({}, threshold {})", reserved / 1073741824.0,
            cap / 1073741824.0, format_percent(reserved / cap),
            format_percent(s.th.train_memory_share)));
    }
    r.evidence.push_back(gpuplan::checked_format(
        "the model: {:.1f} GiB per GPU of {:.1f} GiB (activations {:.1f} GiB, model "
        "states {:.1f} GiB){}",
        s.pr.memory.total.si() / 1073741824.0, cap / 1073741824.0,
        s.pr.memory.activations.si() / 1073741824.0,
        (s.pr.memory.weights + s.pr.memory.gradients + s.pr.memory.optimizer_states).si() /
            1073741824.0,
        s.pr.fits ? "" : ": does not fit"));
    r.check = "torch.cuda.memory_summary() or Megatron's memory report after the first "
              "steps; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to rule out "
              "fragmentation";
    add_memory_fixes(s, r);
    r.severity = s.log.oom_line > 0 ? 2.0 : cap > 0 ? std::max(1.0, reserved / cap) : 1.0;
    out.rows.push_back(std::move(r));
}

// 4. Stragglers: some steps far slower than the rest.
void add_stragglers(const TrainingFacts& s, Diagnosis& out) {
    const double cv = s.log.step_stddev_s / s.observed;
    const double worst = s.log.step_max_s / s.observed;
    if (s.log.steps >= 3 && (cv > s.th.train_step_cv || worst > s.th.train_straggler_max)) {
        DiagnosisRow r;
        r.id = "stragglers";
        r.symptom = "step times vary from step to step";
        r.cause = "a slow GPU, node or link holds every synchronous step back when it lags "
                  "(or periodic work: checkpoints, garbage collection, evaluation)";
        r.evidence.push_back(gpuplan::checked_format(
            "step times over {} steps: mean {}, standard deviation {} ({} of the mean, "
            "threshold {})",
            s.log.steps, secs(s.observed), secs(s.log.step_stddev_s), format_percent(cv),
            format_percent(s.th.train_step_cv)));
        r.evidence.push_back(gpuplan::checked_format(
            "slowest step {} at line {}: {:.2f}× the mean (threshold {:g}×)",
            secs(s.log.step_max_s), s.log.step_max_line, worst, s.th.train_straggler_max));
        r.check = "per-rank step times (Megatron --log-straggler, or NCCL_DEBUG=INFO and "
                  "timers per rank); `nvidia-smi -q -d PERFORMANCE` on every node for "
                  "throttled GPUs; whether the slow steps coincide with checkpoint saves";
        r.fixes.push_back(reestimate(FixLayer::Hardware,
                                     "find and replace (or exclude) the slow GPU or node, "
                                     "so that every rank runs at the model's step",
                                     s.hw, s.cfg, s.profile, s.prices, s.observed));
        r.severity = std::max(cv / s.th.train_step_cv, worst / s.th.train_straggler_max);
        out.rows.push_back(std::move(r));
    }
}

// 5. Clocks held down (power cap or heat), re-estimated as a training step at that clock.
void add_training_throttled(const TrainingFacts& s, Diagnosis& out) {
    const bool clocked = s.timed && s.gpu && s.gpu->sm_clock_mhz && s.gpu->max_sm_clock_mhz &&
                         *s.gpu->max_sm_clock_mhz > 0;
    if (!clocked) {
        return;
    }
    const double ratio = std::min(1.0, *s.gpu->sm_clock_mhz / *s.gpu->max_sm_clock_mhz);
    if (ratio < s.th.clock_ratio) {
        const auto& g = *s.gpu;
        DiagnosisRow r;
        r.id = throttle_row_id(g);
        const bool thermal = r.id == "thermal-throttled";
        r.symptom = "the GPUs run below their maximum clock";
        r.cause = thermal                  ? "thermal slowdown: the GPUs are too hot"
                  : r.id == "power-capped" ? "the power limit holds the clock down"
                                           : "the clock is held down (no throttle reason "
                                             "reported)";
        r.evidence.push_back(gpuplan::checked_format(
            "SM clock {:.0f} of {:.0f} MHz ({}, threshold {})", *g.sm_clock_mhz,
            *g.max_sm_clock_mhz, format_percent(ratio), format_percent(s.th.clock_ratio)));
        if (g.has_throttle_reasons) {
            r.evidence.push_back(gpuplan::checked_format(
                "power-cap throttling in {} of samples, thermal in {}",
                format_percent(g.power_cap_share), format_percent(g.thermal_share)));
        }
        if (g.power_draw_w && g.power_limit_w) {
            r.evidence.push_back(gpuplan::checked_format("power draw {:.0f} W of a {:.0f} W limit",
                                                         *g.power_draw_w, *g.power_limit_w));
        }
        Deployment slow = s.hw;
        slow.clocks.compute = ratio;
        try {
            const TrainingEstimate at = estimate_training(slow, s.cfg, s.profile, s.prices);
            r.evidence.push_back(
                gpuplan::checked_format("the model at this clock: step {} (vs {} at full clock)",
                                        secs(at.result.step.total.si()), secs(s.predicted)));
        } catch (const InputError&) {
        }
        r.check = "`nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE` on every node: clock "
                  "event reasons, power limit, temperatures";
        r.fixes.push_back(reestimate(
            FixLayer::Hardware,
            thermal ? "improve cooling (airflow, inlet temperature)"
                    : "raise the power limit (nvidia-smi -pl) or the rack's power budget",
            s.hw, s.cfg, s.profile, s.prices, s.observed));
        r.severity = 1.0 / ratio;
        out.rows.push_back(std::move(r));
    }
}

// Rows by severity, each row's fixes by layer, and a note when there is no GPU telemetry.
void finish_training(const std::optional<GpuTelemetry>& gpu, Diagnosis& out) {
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
}

} // namespace

Diagnosis diagnose_training(const Deployment& hw, const TrainingConfig& cfg,
                            const EfficiencyProfile& profile, const TrainingCostInputs& prices,
                            const Observations& obs, const DiagnosisThresholds& th) {
    const TrainingLog& log = checked_training_log(obs);
    const bool timed = log.steps >= 1;
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
    const TrainingFacts facts{
        .hw = hw,
        .cfg = cfg,
        .profile = profile,
        .prices = prices,
        .log = log,
        .th = th,
        .est = est,
        .pr = pr,
        .b = b,
        .l = cfg.layout,
        .gpu = obs.gpu,
        .util = obs.gpu ? obs.gpu->utilization_gpu : std::nullopt,
        .timed = timed,
        .observed = observed,
        .shown = shown,
        .predicted = predicted,
        .mfu = mfu,
        .gpu_step = predicted - b.input_stall.si(),
        .gpus = gpus,
        .tokens_per_step = tokens_per_step,
    };
    add_training_comparisons(facts, out);
    add_comm_bound(facts, out);
    add_input_stall(facts, out);
    add_training_memory(facts, out);
    add_stragglers(facts, out);
    add_training_throttled(facts, out);
    finish_training(obs.gpu, out);
    return out;
}

} // namespace gpuplan::model
