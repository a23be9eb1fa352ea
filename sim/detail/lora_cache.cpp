#include "sim/detail/lora_cache.hpp"

#include "sim/detail/scheduler_state.hpp"

#include <algorithm>
#include <array>

namespace gpuplan::sim::detail {

int sample_adapter(const LoraSetup& setup, Rng& rng) {
    const double u = rng.uniform() * setup.cdf.back();
    const auto it = std::upper_bound(setup.cdf.begin(), setup.cdf.end(), u);
    const auto i = static_cast<int>(it - setup.cdf.begin());
    return std::min(i, static_cast<int>(setup.cdf.size()) - 1);
}

LoraCache::LoraCache(const LoraSetup& setup) : setup_(setup) {
    gpu_.reserve(static_cast<std::size_t>(setup.max_loras));
    cpu_.reserve(static_cast<std::size_t>(setup.max_cpu_loras));
    distinct_.reserve(static_cast<std::size_t>(setup.max_loras) + 1);
}

bool LoraCache::resident(int a) const noexcept {
    return std::any_of(gpu_.begin(), gpu_.end(), [a](const Slot& s) { return s.adapter == a; });
}

template <class Pinned>
bool LoraCache::touch(std::vector<Slot>& slots, int capacity, int a, std::uint64_t clock,
                      const Pinned& pinned) {
    for (Slot& s : slots) {
        if (s.adapter == a) {
            s.used = clock;
            return true;
        }
    }
    if (static_cast<int>(slots.size()) < capacity) {
        slots.push_back(Slot{a, clock});
        return false;
    }
    // Evict the least recently used adapter no running request names (there is one: the
    // running requests name at most max_loras adapters, `a` among them).
    Slot* victim = nullptr;
    for (Slot& s : slots) {
        if (!pinned(s.adapter) && (victim == nullptr || s.used < victim->used)) {
            victim = &s;
        }
    }
    if (victim == nullptr) {
        victim = &*std::min_element(slots.begin(), slots.end(),
                                    [](const Slot& x, const Slot& y) { return x.used < y.used; });
    }
    *victim = Slot{a, clock};
    return false;
}

double LoraCache::step(const std::vector<std::uint32_t>& batch,
                       const std::vector<std::uint32_t>& running, const RequestPool& pool, Tick now,
                       int& distinct) {
    distinct_.clear();
    loaded_.clear();
    double wait = 0;
    const auto in_use = [&](int a) {
        return std::any_of(running.begin(), running.end(),
                           [&](std::uint32_t s) { return pool[s].adapter == a; });
    };
    for (const std::uint32_t slot : batch) {
        const Request& r = pool[slot];
        if (!r.in_batch || r.adapter < 0) {
            continue;
        }
        const bool first = r.first_scheduled == now && r.generated == 0; // admitted now
        if (std::find(distinct_.begin(), distinct_.end(), r.adapter) != distinct_.end()) {
            counts_.requests += first ? 1 : 0;
            counts_.hits += first ? 1 : 0;
            continue;
        }
        distinct_.push_back(r.adapter);
        ++clock_;
        const bool hit = touch(gpu_, setup_.max_loras, r.adapter, clock_, in_use);
        if (first) {
            ++counts_.requests;
            counts_.hits += hit ? 1 : 0;
        }
        if (hit) {
            continue;
        }
        // Not in a GPU slot: copy it from host memory, reading it from disk first when the host
        // cache does not hold it (vLLM's LRUCacheWorkerLoRAManager: the host cache of
        // max_cpu_loras adapters, max_loras of them activated in GPU slots).
        ++counts_.loads;
        double t = setup_.gpu_load_s;
        const bool disk = !touch(cpu_, setup_.max_cpu_loras, r.adapter, clock_,
                                 [&](int a) { return resident(a); });
        if (disk) {
            ++counts_.disk_loads;
            t += setup_.disk_load_s;
        }
        wait += t;
        loaded_.push_back(Load{r.adapter, disk, t});
    }
    distinct = static_cast<int>(distinct_.size());
    counts_.load_s += wait;
    counts_.adapters_per_step += distinct;
    ++counts_.steps;
    return wait;
}

void LoraCache::report(int replica, Tick now, const FeatureHooks& hooks) const {
    if (loaded_.empty()) {
        return;
    }
    if (hooks.lora_load) {
        Seconds start = to_seconds(now);
        for (const Load& l : loaded_) {
            hooks.lora_load(LoraLoadRecord{replica, l.adapter, l.disk, start, Seconds(l.s)});
            start += Seconds(l.s);
        }
    }
    if (hooks.lora_step) {
        hooks.lora_step(LoraStepRecord{replica, to_seconds(now), static_cast<int>(gpu_.size()),
                                       counts_.loads, counts_.disk_loads, Seconds(counts_.load_s)});
    }
}

bool lora_blocked(const SchedulerState& s, const Request& r) {
    const LoraSetup* setup = s.config().lora;
    if (setup == nullptr || r.adapter < 0) {
        return false;
    }
    // Distinct adapters of the running requests: in a small array up to 64 slots, O(running ×
    // max_loras); above, a request counts its adapter when no earlier running one names it.
    const std::vector<std::uint32_t>& running = s.running();
    constexpr int kSmall = 64;
    std::array<int, kSmall> seen{};
    const bool small = setup->max_loras <= kSmall;
    int n = 0;
    for (std::size_t i = 0; i < running.size(); ++i) {
        const int a = s.request(running[i]).adapter;
        if (a < 0) {
            continue;
        }
        if (a == r.adapter) {
            return false;
        }
        bool earlier = false;
        if (small) {
            const auto end = seen.begin() + n;
            earlier = std::find(seen.begin(), end, a) != end;
            if (!earlier && n < kSmall) {
                seen[static_cast<std::size_t>(n)] = a;
            }
        } else {
            for (std::size_t j = 0; j < i && !earlier; ++j) {
                earlier = s.request(running[j]).adapter == a;
            }
        }
        n += earlier ? 0 : 1;
    }
    return n >= setup->max_loras;
}

std::uint32_t lora_next_admissible(SchedulerState& s) {
    if (s.config().scheduler.policy == model::SchedulingPolicy::Priority) {
        return ~0u;
    }
    std::vector<std::uint32_t> waiting; // only when the head is held back
    s.waiting_slots(waiting);
    for (const std::uint32_t slot : waiting) {
        if (!lora_blocked(s, s.request(slot))) {
            return slot;
        }
    }
    return ~0u;
}

} // namespace gpuplan::sim::detail
