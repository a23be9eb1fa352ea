#pragma once
/// Multi-LoRA serving in the simulator (layer-private; engine.lora, model/lora.hpp): which
/// adapter each request names (uniform or Zipf, from its own RNG stream), each replica's
/// adapter residency (an LRU over max_loras GPU slots behind an LRU host cache of max_cpu_loras
/// adapters), the load time a step waits for, and vLLM's scheduling limit of max_loras distinct
/// adapters among the running requests. Nothing here runs when engine.lora is absent.

#include "model/lora_config.hpp"
#include "sim/detail/request.hpp"
#include "sim/feature_trace.hpp"
#include "sim/rng.hpp"
#include "sim/tick.hpp"

#include <cstdint>
#include <vector>

namespace gpuplan::sim::detail {

class SchedulerState;

/// A run's fixed LoRA settings, shared by its replicas (owned by simulate()).
struct LoraSetup {
    int adapters = 1;
    int max_loras = 1;
    int max_cpu_loras = 1;
    double gpu_load_s = 0;   ///< host → GPU copy of one adapter (its per-GPU shard)
    double disk_load_s = 0;  ///< disk → host read of one adapter (not in the host cache)
    std::vector<double> cdf; ///< cumulative popularity of adapters 0..N−1
};

/// The adapter a request names: the first i with u < cdf[i], u uniform on [0, cdf.back()).
[[nodiscard]] int sample_adapter(const LoraSetup& setup, Rng& rng);

/// What one replica's adapter caches did.
struct LoraCounts {
    std::int64_t requests = 0;    ///< requests whose first step ran here
    std::int64_t hits = 0;        ///< of those, adapter already in a GPU slot
    std::int64_t loads = 0;       ///< host → GPU loads (re-loads of preempted requests included)
    std::int64_t disk_loads = 0;  ///< of those, read from disk first (not in the host cache)
    double load_s = 0;            ///< Σ load time the steps waited for
    double adapters_per_step = 0; ///< Σ distinct adapters over steps
    std::int64_t steps = 0;
};

/// One replica's adapter residency.
class LoraCache {
  public:
    explicit LoraCache(const LoraSetup& setup);

    /// Whether adapter `a` is in a GPU slot now.
    [[nodiscard]] bool resident(int a) const noexcept;

    /// At the start of a step over `batch` (slots; entries with in_batch false are skipped) at
    /// `now`: counts the distinct adapters (returned in `distinct`), loads those not in a GPU
    /// slot (evicting the least recently used slot whose adapter no running request names) and
    /// returns the seconds the step waits for the loads. `running` lists the running slots.
    [[nodiscard]] double step(const std::vector<std::uint32_t>& batch,
                              const std::vector<std::uint32_t>& running, const RequestPool& pool,
                              Tick now, int& distinct);

    [[nodiscard]] const LoraCounts& counts() const noexcept { return counts_; }

    /// After a step(), if it loaded adapters, at the step's start `now`: each load and the
    /// replica's slots to the features' hooks (FeatureHooks::lora_load, lora_step; null: none).
    void report(int replica, Tick now, const FeatureHooks& hooks) const;

  private:
    struct Slot {
        int adapter = -1;
        std::uint64_t used = 0; // LRU clock
    };
    /// Puts `a` in `slots` of at most `capacity` (LRU); true when it was there. `pinned(a)`:
    /// adapters that may not be evicted.
    template <class Pinned>
    static bool touch(std::vector<Slot>& slots, int capacity, int a, std::uint64_t clock,
                      const Pinned& pinned);

    const LoraSetup& setup_;
    std::vector<Slot> gpu_, cpu_;
    std::uint64_t clock_ = 0;
    std::vector<int> distinct_; // this step's distinct adapters
    struct Load {
        int adapter = 0;
        bool disk = false;
        double s = 0;
    };
    std::vector<Load> loaded_; // this step's loads, in order (for report())
    LoraCounts counts_;
};

/// vLLM's limit (Scheduler.schedule, vllm/v1/core/sched/scheduler.py @a78dc92f): a waiting
/// request whose adapter is not among those of the running requests may not start while they
/// already name max_loras distinct adapters. O(running × max_loras).
[[nodiscard]] bool lora_blocked(const SchedulerState& s, const Request& r);

/// The first waiting request, in queue order, that lora_blocked does not hold back (FCFS: the
/// skipped ones keep their places at the head, as vLLM's skipped_waiting_requests do); ~0u
/// when none or under the priority policy (there the blocked head waits).
[[nodiscard]] std::uint32_t lora_next_admissible(SchedulerState& s);

} // namespace gpuplan::sim::detail
