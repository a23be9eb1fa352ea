// The time of one optimizer step of a training layout: the slowest pipeline stage paces 1F1B
// (Narayanan et al. 2021), data-parallel gradient traffic hides behind the backward (ZeRO §7),
// the optimizer streams its shard; then throughput, MFU and HFU, time to train, energy on the
// power model of model/power.hpp, and cost.

#include "model/comm.hpp"
#include "model/detail/training_parts.hpp"
#include "model/kernel_time.hpp"
#include "model/power.hpp"
#include "model/training.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace gpuplan::model {

namespace {

using detail::d;
using detail::StageShape;

} // namespace

TrainingModel::StageTime TrainingModel::stage_time(const TrainingLayout& l, const Geometry& g,
                                                   int stage, bool with_comm) const noexcept {
    const StageShape st = detail::stage_shape(g.pp, g.base, g.extra, g.first_moe, stage);
    const double dense = st.layers - st.moe;
    const double moe = st.moe;
    StageTime t;
    t.fwd = dense * g.fwd_dense + moe * g.fwd_moe + (st.first ? g.fwd_first : 0.0) +
            (st.last ? g.fwd_last : 0.0);
    t.bwd = dense * (g.bwd_dense + g.rec_dense) + moe * (g.bwd_moe + g.rec_moe) +
            (st.first ? g.bwd_first : 0.0) + (st.last ? g.bwd_last + g.rec_last : 0.0);
    t.compute = t.fwd + t.bwd;
    t.mem = dense * g.mem_dense + moe * g.mem_moe + (st.first ? g.mem_first : 0.0) +
            (st.last ? g.mem_last : 0.0);
    if (with_comm) {
        t.tp =
            d(st.layers) * g.tp_layer + (st.first ? g.tp_first : 0.0) + (st.last ? g.tp_last : 0.0);
        // Expert all-to-all overlapped with compute (DualPipe, Megatron-Core's MoE overlap): a
        // share ep_overlap of it hides behind the stage's compute of the same micro-batch slot.
        t.ep = moe * g.ep_layer;
        t.ep -= std::min(ep_overlap_ * t.ep, t.compute);
        t.cp = d(st.layers) * g.cp_layer;
        t.pp = g.pp_mb;
    }
    (void)l;
    return t;
}

// The slowest stage paces the pipeline: first and last stages have the embedding and the LM
// head; middle stages at most one layer more than the last.
TrainingModel::StageTime TrainingModel::slowest_stage(const TrainingLayout& l,
                                                      const Geometry& g) const noexcept {
    StageTime ts = stage_time(l, g, 0, true);
    const auto consider = [&](int k) {
        const StageTime t = stage_time(l, g, k, true);
        if (t.total() > ts.total()) {
            ts = t;
        }
    };
    if (g.pp > 1) {
        consider(g.pp - 1);
        if (g.pp > 2) {
            consider(g.extra > 0 ? g.pp - 2 : 1);
        }
    }
    return ts;
}

// Data-parallel gradient traffic of the fullest stage (the first, or the last with the LM
// head). ZeRO §7: stages 0–2 move 2Ψ per rank (reduce-scatter + all-gather = all-reduce);
// stage 3 moves 3Ψ (an all-gather in the forward and one in the backward, a reduce-scatter).
// DeepSpeed reduces ZeRO-2/3 gradients in every micro-batch's backward; stages 0–1 once per
// step after accumulation.
//
// Overlap. Gradients are reduced in buckets launched as their backward finishes (PyTorch DDP,
// Li et al. 2020 §3.2.3; Megatron-LM --overlap-grad-reduce; FSDP per unit, Zhao et al. 2023
// §3.3): a share `overlap` of everything but the last bucket may hide behind the backward that
// produces it,
//   exposed = comm − min(overlap × (comm − last bucket), backward compute),
// with the last bucket = comm × min(1, bucket / gradient bytes). ZeRO-3 / FSDP gathers each
// unit's (layer's) weights just before it runs; with prefetch the next unit's gather runs under
// this unit's compute (FSDP backward_prefetch BACKWARD_PRE and forward prefetch, Zhao et al.
// 2023 §3.3.2; DeepSpeed's prefetch bucket), so only the first unit's gather of each pass and
// what exceeds the pass's compute is exposed. The per-layer collectives' extra latency is not
// added: the volume is the same as one collective per pass.
void TrainingModel::set_dp_comm(StepBreakdown& b, const TrainingLayout& l, const Geometry& g,
                                const StageTime& ts) const noexcept {
    const double m = d(g.m);
    double dp_comm = 0, exposed = 0;
    if (g.nd > 1) {
        const StageMemory first = memory_of(l, g, 0);
        const StageMemory last = g.pp > 1 ? memory_of(l, g, g.pp - 1) : first;
        const double grad = std::max(first.gradients.si() * (l.zero >= 2 ? g.nd : 1.0),
                                     last.gradients.si() * (l.zero >= 2 ? g.nd : 1.0));
        const double weights = std::max(first.weights.si() * (l.zero >= 3 ? g.nd : 1.0),
                                        last.weights.si() * (l.zero >= 3 ? g.nd : 1.0));
        const double ov = prof_.comm.collective_overhead.si();
        const auto link = [&](double bytes) {
            return Link{BytesPerSecond(link_bw(g.nd, g.tp, bytes)), Seconds(link_lat(g.nd, g.tp)),
                        false};
        };
        const auto ar = [&](double bytes) {
            return all_reduce_time(Bytes(bytes), g.nd, link(bytes), AllReduceAlgorithm::Ring).si() +
                   ov;
        };
        const auto half = [&](double bytes) { // reduce-scatter or all-gather
            return all_gather_time(Bytes(bytes), g.nd, link(bytes)).si() + ov;
        };
        // The share of a gradient reduction in its last bucket.
        const double last_share = grad > 0 ? std::min(1.0, bucket_ / grad) : 1.0;
        // What a reduction of `comm` leaves exposed behind `compute`.
        const auto reduce_exposed = [&](double comm, double compute) {
            return comm - std::min(overlap_ * comm * (1.0 - last_share), compute);
        };
        if (l.zero <= 1) {
            // Only the last micro-batch's backward can hide it (after gradient accumulation).
            dp_comm = ar(grad);
            exposed = reduce_exposed(dp_comm, ts.bwd);
        } else if (l.zero == 2) {
            // A reduce-scatter in every micro-batch's backward; the weights all-gathered once
            // after the optimizer step, not hidden.
            const double rs = half(grad);
            dp_comm = m * rs + half(weights);
            exposed = m * reduce_exposed(rs, ts.bwd) + half(weights);
        } else {
            // Two gathers per micro-batch: the forward's, and the backward's, which also serves
            // the recomputed forward (FSDP unshards in its pre-backward hook before the
            // checkpointed region reruns, Zhao et al. 2023 §3.3; DeepSpeed keeps the gathered
            // parameters for reuse within stage3_max_reuse_distance).
            const double gathers = 2.0;
            const double ag = half(weights); // one pass's gathers
            const double rs = half(grad);
            const double units = std::max(1.0, d(g.base) + (g.extra > 0 ? 1.0 : 0.0));
            const double pre = cfg_.fsdp_prefetch ? 1.0 : 0.0;
            // Forward: one gather; backward: the others and the reduce-scatter.
            const double exp_f = ag - std::min(pre * ag * (1.0 - 1.0 / units), ts.fwd);
            const double bwd_gathers = (gathers - 1.0) * ag;
            const double exp_b = bwd_gathers + rs -
                                 std::min(pre * bwd_gathers * (1.0 - 1.0 / units) +
                                              overlap_ * rs * (1.0 - 1.0 / units),
                                          ts.bwd);
            dp_comm = m * (gathers * ag + rs);
            exposed = m * (exp_f + exp_b);
        }
    }
    b.dp_comm = Seconds(dp_comm);
    b.dp_exposed = Seconds(std::max(0.0, exposed));
}

void TrainingModel::finish(LayoutResult& r, const TrainingLayout& l,
                           const Geometry& g) const noexcept {
    const StageTime ts = slowest_stage(l, g);
    const double m = d(g.m);
    const double slot = ts.total();
    StepBreakdown& b = r.step;
    b.compute = Seconds(m * ts.compute);
    b.tp_comm = Seconds(m * ts.tp);
    b.ep_comm = Seconds(m * ts.ep);
    b.cp_comm = Seconds(m * ts.cp);
    // Interleaving sends v times as often (Narayanan et al. 2021 §2.2.2).
    const double v = d(l.virtual_stages);
    b.pp_comm = Seconds(m * ts.pp * v);
    // 1F1B: (m + p − 1) slots, p − 1 of them fill and drain (Narayanan et al. 2021 §2.2.1);
    // interleaving shrinks the fill and drain to (p − 1)/v slots (§2.2.2).
    b.bubble = Seconds((g.pp - 1.0) / v * (slot + (v - 1.0) * ts.pp));
    set_dp_comm(b, l, g, ts);
    b.exposed_comm = b.tp_comm + b.ep_comm + b.cp_comm + b.pp_comm + b.dp_exposed;

    // Optimizer step: a streaming pass over this rank's shard of the trained parameters.
    const double trained_per_rank = r.memory.optimizer_states.si() / std::max(k_, 1e-9);
    b.optimizer =
        stream_kernel_time(trained_per_rank * opt_rw_bytes_, BytesPerSecond(bw_), prof_).time +
        prof_.launch_overhead * 4.0;

    // Input stall: a prefetching loader overlaps loading with the step; the GPUs wait only when
    // the loaders deliver fewer tokens per second than the step consumes.
    const double busy = (b.compute + b.exposed_comm + b.bubble + b.optimizer).si();
    if (loader_ > 0) {
        const double tokens_step = d(cfg_.global_batch) * d(cfg_.seq_len);
        const double nodes = std::ceil(d(gpus_) / d(std::max(1, gpus_per_node_)));
        const double load = tokens_step / (loader_ * nodes);
        b.input_stall = Seconds(std::max(0.0, load - busy));
    }
    b.total = Seconds(busy) + b.input_stall;
    set_throughput(r, l, g);
    set_energy(r, g, ts);
}

// Tokens per second, model and hardware FLOPs, MFU and HFU, steps and time to train.
void TrainingModel::set_throughput(LayoutResult& r, const TrainingLayout& l,
                                   const Geometry& g) const noexcept {
    const double total = r.step.total.si();
    const double tokens_step = d(cfg_.global_batch) * d(cfg_.seq_len);
    const double n = d(gpus_);
    r.micro_batches = g.m;
    r.tokens_per_s = total > 0 ? tokens_step / total : 0.0;
    r.tokens_per_s_per_gpu = r.tokens_per_s / n;
    r.model_flops = Flops(model_flops_token_ * tokens_step);
    const double rec =
        l.recompute == Recompute::Full
            ? recompute_flops_token_full_
            : (l.recompute == Recompute::Selective ? recompute_flops_token_sel_ : 0.0);
    r.hardware_flops = Flops((hardware_flops_token_ + rec) * tokens_step);
    r.mfu = total > 0 ? r.model_flops.si() / (total * n * nominal_peak_) : 0.0;
    r.hfu = total > 0 ? r.hardware_flops.si() / (total * n * nominal_peak_) : 0.0;
    // Every kernel runs at most at the peak, so a utilization above 1 is a FLOP counted twice
    // (evaluate() is noexcept and runs in the search loop: an assert, and a test over layouts).
    assert(r.hfu <= 1.0 + 1e-9 && r.mfu <= r.hfu + 1e-12);
    r.steps = cfg_.tokens / tokens_step;
    r.time_to_train = Seconds(r.steps * total);
    r.gpu_hours = r.time_to_train.si() * n / 3600.0;
}

// Energy: a given average, else the power model (model/power.hpp) at the step's time-averaged
// activity: hardware FLOPs over the datasheet peak (the HFU) and device bytes over the
// datasheet bandwidth, at the clock the derating leaves. Waiting (bubble, exposed
// communication, input stalls) lowers both, so it is charged near the resident power.
void TrainingModel::set_energy(LayoutResult& r, const Geometry& g,
                               const StageTime& ts) const noexcept {
    const StepBreakdown& b = r.step;
    const double total = b.total.si();
    const double n = d(gpus_);
    double watts = avg_power_;
    if (has_power_ && total > 0) {
        const double bytes_per_gpu = (d(g.m) * ts.mem + b.optimizer.si()) * bw_ * prof_.memory.max;
        StepActivity a;
        a.compute = std::min(1.0, r.hfu);
        a.memory = std::min(1.0, bytes_per_gpu / (hw_.gpu.memory_bandwidth.si() * total));
        GpuPowerLevels levels;
        levels.resident = Watts(resident_power_);
        levels.board = Watts(board_power_);
        levels.idle = levels.resident;
        if (watts <= 0) {
            watts = step_power(a, levels, power_model_, hw_.clocks.compute).si();
        }
        // While kernels run the activity is the step's divided by the busy share.
        const double busy = (b.compute + b.optimizer).si();
        if (busy > 0) {
            StepActivity k;
            k.compute = std::min(1.0, a.compute * total / busy);
            k.memory = std::min(1.0, a.memory * total / busy);
            r.busy_gpu_power = step_power(k, levels, power_model_, hw_.clocks.compute);
        }
    }
    r.average_gpu_power = Watts(watts);
    r.energy = Joules(watts * n * r.time_to_train.si());
    r.cost =
        rent_per_gpu_s_ * n * r.time_to_train.si() + energy_price_per_j_ * r.energy.si() * pue_;
}

Seconds TrainingModel::single_gpu_step(const TrainingLayout& layout) const noexcept {
    TrainingLayout one;
    one.micro_batch = layout.micro_batch;
    one.recompute = layout.recompute;
    one.sequence_parallel = false;
    const Geometry g = geometry(one);
    const StageTime t = stage_time(one, g, 0, false);
    const double m = d(std::max(1, cfg_.global_batch / std::max(1, one.micro_batch)));
    // Every parameter's optimizer update on the one GPU.
    const double bytes = trainable_ * opt_rw_bytes_;
    double step = m * t.compute + stream_kernel_time(bytes, BytesPerSecond(bw_), prof_).time.si();
    if (loader_ > 0) {
        const double load = d(cfg_.global_batch) * d(cfg_.seq_len) / loader_;
        step = std::max(step, load);
    }
    return Seconds(step);
}

} // namespace gpuplan::model
