#pragma once
/// Which resource binds prefill and decode, with the numbers behind the verdict, and a ranked
/// list of what-ifs (quantize, FP8 KV, shorter context, more or less TP, another GPU, more
/// replicas), each re-estimated by the model. Every sentence is built from computed values.

#include "model/deployment.hpp"
#include "model/efficiency.hpp"
#include "model/serving.hpp"

#include <span>
#include <string>
#include <vector>

namespace gpuplan::model {

/// The resources that can bind (docs/domain.md §1).
enum class Resource { MemoryCapacity, MemoryBandwidth, Compute, Interconnect, StepOverhead };

/// "memory-capacity", "memory-bandwidth", "compute", "interconnect", "step-overhead".
[[nodiscard]] const char* to_string(Resource r);

/// The verdict for one phase: its time split by what limits each operator.
struct PhaseBottleneck {
    Resource binding = Resource::Compute;
    Seconds time;         ///< the phase's time (TTFT, or the decode step)
    Seconds compute;      ///< time in compute-bound operators
    Seconds bandwidth;    ///< time in memory-bandwidth-bound operators
    Seconds interconnect; ///< time in communication
    Seconds overhead;     ///< kernel launches and the per-step engine overhead
    double share = 0.0;   ///< the binding resource's share of the time (capacity: 1)
    std::string detail;   ///< one sentence with the numbers
    friend bool operator==(const PhaseBottleneck&, const PhaseBottleneck&) = default;
};

/// Bottlenecks of a deployment for a workload.
struct BottleneckReport {
    PhaseBottleneck prefill;
    PhaseBottleneck decode;
    /// Memory capacity limits the deployment: it does not fit, or the KV cache runs fewer
    /// sequences than the workload asks for.
    bool capacity_binds = false;
    std::string capacity_detail;
    ServingEstimate estimate; ///< the estimate the verdict is drawn from
    friend bool operator==(const BottleneckReport&, const BottleneckReport&) = default;
};

/// Finds the binding resource of prefill (the TTFT steps) and decode (the steady decode step).
/// A phase is capacity-bound when memory capacity binds, else bound by the resource with the
/// largest share of its time. `cached_prefix` as in estimate_serving.
[[nodiscard]] BottleneckReport find_bottleneck(const Deployment& d, const Workload& w,
                                               const EfficiencyProfile& profile,
                                               int cached_prefix = 0);

/// One re-estimated change to the deployment.
struct WhatIf {
    std::string name;       ///< short key: "weights-int8", "kv-fp8", "tp-x2", "gpu:h200-sxm", ...
    std::string change;     ///< what changes, with the old and new values
    bool applicable = true; ///< false: the change is impossible here (see note)
    std::string note;       ///< why not applicable, or what else changes (e.g. more GPUs)
    bool fits = false;
    int gpus = 0;
    double max_concurrency = 0.0;
    Seconds ttft;
    Seconds tpot;
    double throughput = 0.0; ///< output tokens/s at the workload's concurrency
    double throughput_per_gpu = 0.0;
    double throughput_gain =
        0.0; ///< throughput / the baseline's (∞-free: 0 when baseline is 0 and this is 0)
    double ttft_ratio = 0.0; ///< ttft / the baseline's
    double tpot_ratio = 0.0; ///< tpot / the baseline's
    friend bool operator==(const WhatIf&, const WhatIf&) = default;
};

/// Another GPU to try as a what-if, with the efficiency profile that GPU's own estimate uses
/// (the front end's profile rule), so the what-if answers what estimating on that GPU answers.
struct GpuCandidate {
    AcceleratorSpec gpu;
    EfficiencyProfile profile;
};

/// The what-ifs, ranked by effect: changes that make a non-fitting deployment fit first, then by
/// throughput gain (ties: lower TPOT); inapplicable ones last. `candidates` are other GPUs to try
/// with the same layout (same-named GPUs are skipped). `cached_prefix` as in estimate_serving.
[[nodiscard]] std::vector<WhatIf> what_ifs(const Deployment& d, const Workload& w,
                                           const EfficiencyProfile& profile,
                                           std::span<const GpuCandidate> candidates = {},
                                           int cached_prefix = 0);

} // namespace gpuplan::model
