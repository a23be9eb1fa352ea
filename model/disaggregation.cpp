#include "model/disaggregation.hpp"

#include "model/error.hpp"
#include "model/kv_cache.hpp"
#include "model/memory.hpp"
#include "model/serving.hpp"
#include "model/step_cost.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuplan::model {

Link transfer_link(const Disaggregation& g) {
    const int lanes = std::max(1, std::min(g.prefill.tp, g.decode.tp));
    return Link{BytesPerSecond(g.link.bandwidth_per_direction.si() * lanes), g.link.latency, true};
}

Bytes kv_transfer_bytes(const Deployment& d, int prompt) {
    return kv_bytes_per_sequence(d.model, d.prec.kv_cache, std::max(0, prompt));
}

Seconds kv_transfer_time(Bytes bytes, const Link& link) {
    return p2p_time(bytes, link);
}

Seconds exposed_transfer_time(Seconds transfer, Seconds prefill, int layers, KvTransferMode mode) {
    if (mode == KvTransferMode::Whole) {
        return transfer;
    }
    const double l = std::max(1, layers);
    const double t = transfer.si();
    return Seconds(std::max(t / l, t - prefill.si() * (l - 1) / l));
}

namespace {

/// Seconds of prefill per prompt of `prompt` tokens on one replica running full-budget steps:
/// floor(budget / prompt) whole prompts per step while they fit, else the prompt alone (its
/// chunked prefill, ttft).
double prefill_seconds_per_prompt(const StepCostModel& m, int prompt) {
    const int budget = std::max(1, m.engine().max_num_batched_tokens);
    const int k = prompt <= budget ? std::max(1, budget / prompt) : 1;
    if (k == 1) {
        return ttft(m, prompt).si();
    }
    BatchStats s;
    for (int i = 0; i < k; ++i) {
        m.add(s, PrefillChunk{prompt, 0});
    }
    return m.cost(s).time.si() / k;
}

Deployment checked_pool(const Deployment& base, const ReplicaPool& p, const char* role) {
    Deployment d = pool_deployment(base, p);
    const MemoryEstimate mem = estimate_memory(d);
    if (!mem.fits || mem.kv_blocks < 1) {
        throw InvalidArgument(std::string("cluster.disaggregation.") + role +
                              ": the model does not fit " + std::to_string(p.tp) + " " +
                              d.gpu.name +
                              (mem.reasons.empty() ? "" : " (" + mem.reasons[0] + ")") +
                              "; raise its tp or use a larger accelerator");
    }
    return d;
}

} // namespace

DisaggregatedEstimate estimate_disaggregated(const Deployment& base, const Workload& w,
                                             const EfficiencyProfile& profile,
                                             const Disaggregation& g, double rate) {
    if (w.input_tokens < 1 || w.output_tokens < 1) {
        throw InvalidArgument("disaggregation: the workload needs at least one prompt and one "
                              "output token");
    }
    const Deployment pd = checked_pool(base, g.prefill, "prefill");
    const Deployment dd = checked_pool(base, g.decode, "decode");
    const StepCostModel pm(pd, profile);
    const StepCostModel dm(dd, profile);
    DisaggregatedEstimate e;
    e.prefill_gpus = g.prefill.replicas * g.prefill.tp;
    e.decode_gpus = g.decode.replicas * g.decode.tp;
    const int prompt = w.input_tokens;
    const int out = w.output_tokens;

    // Transfer.
    e.kv_bytes = kv_transfer_bytes(base, prompt);
    e.transfer = kv_transfer_time(e.kv_bytes, transfer_link(g));
    e.prefill_ttft = ttft(pm, prompt);
    e.exposed = exposed_transfer_time(e.transfer, e.prefill_ttft, base.model.layers, g.transfer);
    e.ttft = e.prefill_ttft + e.exposed;

    // Capacities, requests/s.
    e.prefill_rps = g.prefill.replicas / prefill_seconds_per_prompt(pm, prompt);
    const double occupancy = e.transfer.si();
    e.link_rps =
        occupancy > 0 ? g.prefill.replicas / occupancy : std::numeric_limits<double>::infinity();
    const MemoryEstimate dmem = estimate_memory(dd);
    e.decode_cap = std::max(1, replica_capacity(dmem, w));
    const int context = prompt + out / 2;
    const int steps = std::max(1, out - 1); // the decode pool's steps per request
    const double cap_tpot = tpot(dm, e.decode_cap, context).si();
    e.decode_rps = g.decode.replicas * e.decode_cap / (steps * cap_tpot);
    e.capacity_rps = std::min({e.prefill_rps, e.decode_rps, e.link_rps});
    e.bottleneck = e.capacity_rps == e.prefill_rps  ? "prefill"
                   : e.capacity_rps == e.decode_rps ? "decode"
                                                    : "link";

    // At the load: the decode batch by Little's law, n = rate/D × steps × tpot(n).
    const double load = rate > 0 ? std::min(rate, e.capacity_rps) : e.capacity_rps;
    const double per_replica = load / g.decode.replicas;
    int n = e.decode_cap;
    for (int k = 1; k <= e.decode_cap; ++k) {
        if (k >= per_replica * steps * tpot(dm, k, context).si()) {
            n = k;
            break;
        }
    }
    e.decode_running = n;
    e.tpot = tpot(dm, n, context);
    e.prefill_utilisation = load / e.prefill_rps;
    e.decode_utilisation = static_cast<double>(n) / e.decode_cap;
    e.link_utilisation = std::isfinite(e.link_rps) ? load / e.link_rps : 0.0;
    e.output_tok_s = load * out;
    return e;
}

} // namespace gpuplan::model
