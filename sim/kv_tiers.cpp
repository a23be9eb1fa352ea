#include "sim/kv_tiers.hpp"

#include <cassert>

namespace gpuplan::sim {

void KvTierCache::Lru::push(std::uint64_t h) {
    if (const auto it = where_.find(h); it != where_.end()) {
        order_.splice(order_.end(), order_, it->second);
        return;
    }
    order_.push_back(h);
    where_.emplace(h, std::prev(order_.end()));
}

std::uint64_t KvTierCache::Lru::pop_lru() {
    assert(!order_.empty());
    const std::uint64_t h = order_.front();
    order_.pop_front();
    where_.erase(h);
    return h;
}

void KvTierCache::Lru::erase(std::uint64_t h) {
    if (const auto it = where_.find(h); it != where_.end()) {
        order_.erase(it->second);
        where_.erase(it);
    }
}

KvTierCache::KvTierCache(Tier host, Tier nvme, double block_bytes, KvOffloadResult& stats)
    : host_(host), nvme_(nvme), block_bytes_(block_bytes), stats_(stats) {
    stats_.host_capacity_blocks = host.blocks;
    stats_.nvme_capacity_blocks = nvme.blocks;
    stats_.block_bytes = block_bytes;
}

void KvTierCache::store(Lru& lru, Lru* below, std::uint64_t h) {
    if (lru.contains(h)) {
        lru.push(h); // already there: now the most recently used
        return;
    }
    if (lru.full()) {
        const std::uint64_t victim = lru.pop_lru();
        if (below != nullptr && below->tier().blocks > 0) {
            ++stats_.demoted_to_nvme;
            store(*below, nullptr, victim);
        } else {
            ++stats_.dropped;
        }
    }
    lru.push(h);
}

void KvTierCache::demote(std::uint64_t hash) {
    if (host_.contains(hash) || nvme_.contains(hash)) {
        // A copy is already there (recomputed on the GPU past a gap in the chain): keep it, as
        // the most recently used of its tier.
        (host_.contains(hash) ? host_ : nvme_).push(hash);
        return;
    }
    if (host_.tier().blocks > 0) {
        ++stats_.demoted_to_host;
        store(host_, &nvme_, hash);
    } else if (nvme_.tier().blocks > 0) {
        ++stats_.demoted_to_nvme;
        store(nvme_, nullptr, hash);
    }
}

KvTierCache::Where KvTierCache::find(std::uint64_t hash) const {
    if (host_.contains(hash)) {
        return Where::Host;
    }
    return nvme_.contains(hash) ? Where::Nvme : Where::None;
}

double KvTierCache::load(std::uint64_t hash) {
    switch (find(hash)) {
    case Where::Host: {
        host_.erase(hash);
        const double t = block_bytes_ / host_.tier().bandwidth;
        ++stats_.host_loaded_blocks;
        stats_.host_load_time += Seconds(t);
        return t;
    }
    case Where::Nvme: {
        nvme_.erase(hash);
        const double t = block_bytes_ / nvme_.tier().bandwidth;
        ++stats_.nvme_loaded_blocks;
        stats_.nvme_load_time += Seconds(t);
        return t;
    }
    case Where::None: break;
    }
    return 0.0;
}

} // namespace gpuplan::sim
