#include "sim/detail/power_observer.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::sim::detail {

PowerObserver::PowerObserver(PowerSetup setup) : s_(std::move(setup)) {
    s_.replica_gpus = std::max(1, s_.replica_gpus);
    s_.nodes_per_rack = std::max(1, s_.nodes_per_rack);
}

PowerObserver::Replica& PowerObserver::at(int replica) {
    const auto i = static_cast<std::size_t>(replica);
    if (replicas_.size() <= i) {
        replicas_.resize(i + 1);
    }
    return replicas_[i];
}

void PowerObserver::replica_up(int replica, Tick at_tick) {
    at(replica).up = at_tick;
}

void PowerObserver::add_extra(Replica& r, Tick a, Tick b, double watts) {
    if (b <= a || watts == 0) {
        return;
    }
    const auto first = static_cast<std::size_t>(a / bin_);
    const auto last = static_cast<std::size_t>((b - 1) / bin_);
    if (r.extra.size() <= last) {
        r.extra.resize(last + 1, 0.0);
    }
    for (std::size_t i = first; i <= last; ++i) {
        const Tick lo = std::max<Tick>(a, static_cast<Tick>(i) * bin_);
        const Tick hi = std::min<Tick>(b, static_cast<Tick>(i + 1) * bin_);
        r.extra[i] += watts * tick_s(hi - lo);
    }
}

void PowerObserver::coarsen() {
    for (Replica& r : replicas_) {
        auto& v = r.extra;
        for (std::size_t i = 0; 2 * i < v.size(); ++i) {
            v[i] = v[2 * i] + (2 * i + 1 < v.size() ? v[2 * i + 1] : 0.0);
        }
        v.resize((v.size() + 1) / 2);
    }
    bin_ *= 2;
}

double PowerObserver::step(int replica, Tick start, Tick compute_end, Tick end,
                           const model::StepCost* cost, double clock) {
    Replica& r = at(replica);
    compute_end = cost ? std::clamp(compute_end, start, end) : start;
    const double resident = s_.levels.resident.si();
    double p = resident;
    if (cost) {
        // The activity is measured against the datasheet rates on the step as costed at this
        // clock (model/power.hpp); the clock enters through the energy per operation.
        const model::StepActivity a = model::step_activity(*cost, s_.peak, s_.bandwidth);
        p = model::step_power(a, s_.levels, s_.model, clock).si();
    }
    const double compute_s = tick_s(compute_end - start);
    const double total_s = tick_s(end - start);
    add_extra(r, start, compute_end, p - resident);
    const double energy = p * compute_s + resident * (total_s - compute_s);
    r.busy += end - start;
    r.busy_energy += energy;
    peak_step_ = std::max(peak_step_, p);
    clock_time_ += clock * compute_s;
    compute_time_ += compute_s;
    if (clock < 1.0) {
        capped_time_ += compute_s;
    }
    return total_s > 0 ? energy / total_s : p;
}

void PowerObserver::finish(Tick end, std::int64_t output_tokens, std::int64_t completed,
                           SimResult& out) const {
    PowerResult& pr = out.power;
    pr = PowerResult{};
    pr.modelled = true;
    pr.notes = s_.notes;
    pr.limit = s_.limit.per_gpu;
    pr.limit_source = model::to_string(s_.limit.source);
    pr.capped = s_.limit.per_gpu < s_.levels.board;
    pr.idle = s_.levels.idle;
    pr.resident = s_.levels.resident;
    pr.board = s_.levels.board;
    pr.pue = s_.pue;
    pr.span = to_seconds(std::max<Tick>(end, 0));
    const int rg = s_.replica_gpus;
    const int per_node = std::max(1, s_.node.gpus);
    pr.gpus = static_cast<int>(replicas_.size()) * rg;
    pr.nodes = (pr.gpus + per_node - 1) / per_node;
    pr.nodes_per_rack = s_.nodes_per_rack;
    pr.racks = (pr.nodes + s_.nodes_per_rack - 1) / s_.nodes_per_rack;
    const double psu = model::psu_efficiency(s_.model);
    const Watts host = s_.node.host;

    // Per replica: baseline (idle before up, resident after) plus the steps' extra energy.
    const auto nbins = static_cast<std::size_t>((std::max<Tick>(end, 0) + bin_ - 1) / bin_);
    const auto overlap = [](Tick a, Tick b, Tick lo, Tick hi) {
        return tick_s(std::max<Tick>(0, std::min(b, hi) - std::max(a, lo)));
    };
    pr.gpu_power.assign(replicas_.size(), std::vector<Watts>(nbins, Watts(0.0)));
    double gpu_energy = 0;
    for (std::size_t r = 0; r < replicas_.size(); ++r) {
        const Replica& rep = replicas_[r];
        const Tick up = std::clamp<Tick>(rep.up, 0, std::max<Tick>(end, 0));
        for (std::size_t i = 0; i < nbins; ++i) {
            const Tick lo = static_cast<Tick>(i) * bin_;
            const Tick hi = std::min<Tick>(end, lo + bin_);
            const double joules = pr.idle.si() * overlap(0, up, lo, hi) +
                                  pr.resident.si() * overlap(up, end, lo, hi) +
                                  (i < rep.extra.size() ? rep.extra[i] : 0.0);
            gpu_energy += joules * rg;
            pr.gpu_power[r][i] = Watts(joules / tick_s(hi - lo));
        }
        pr.busy_energy += Joules(rep.busy_energy * rg);
    }
    pr.gpu_energy = Joules(gpu_energy);
    pr.host_energy = host * (static_cast<double>(pr.gpus) / per_node) * pr.span;
    pr.energy = pr.gpu_energy / psu + pr.host_energy;
    pr.facility_energy = pr.energy * pr.pue;
    if (pr.span > Seconds(0.0)) {
        pr.avg_power = pr.energy / pr.span;
        if (pr.gpus > 0) {
            pr.gpu_avg_power = pr.gpu_energy / (pr.span * pr.gpus);
        }
    }
    pr.gpu_peak_power = Watts(peak_step_);
    if (output_tokens > 0) {
        pr.energy_per_token = pr.facility_energy / static_cast<double>(output_tokens);
    }
    if (completed > 0) {
        pr.energy_per_request = pr.facility_energy / static_cast<double>(completed);
    }
    if (compute_time_ > 0) {
        pr.mean_clock = clock_time_ / compute_time_;
        pr.capped_time_share = capped_time_ / compute_time_;
    }

    // Nodes are filled with GPUs in replica order; a partly used node carries its host share.
    pr.node_power.assign(static_cast<std::size_t>(pr.nodes), std::vector<Watts>(nbins, Watts(0.0)));
    for (int g = 0; g < pr.gpus; ++g) {
        const auto& src = pr.gpu_power[static_cast<std::size_t>(g / rg)];
        auto& dst = pr.node_power[static_cast<std::size_t>(g / per_node)];
        for (std::size_t i = 0; i < nbins; ++i) {
            dst[i] += src[i] / psu + host / per_node;
        }
    }
    pr.rack_power.assign(static_cast<std::size_t>(pr.racks), std::vector<Watts>(nbins, Watts(0.0)));
    pr.total_power.assign(nbins, Watts(0.0));
    for (int n = 0; n < pr.nodes; ++n) {
        auto& rack = pr.rack_power[static_cast<std::size_t>(n / s_.nodes_per_rack)];
        const auto& node = pr.node_power[static_cast<std::size_t>(n)];
        for (std::size_t i = 0; i < nbins; ++i) {
            rack[i] += node[i];
            pr.total_power[i] += node[i];
        }
    }
    for (std::size_t i = 0; i < nbins; ++i) {
        pr.peak_power = std::max(pr.peak_power, pr.total_power[i]);
        if (i < out.series.size()) {
            out.series[i].power = pr.total_power[i];
        }
    }
}

} // namespace gpuplan::sim::detail
