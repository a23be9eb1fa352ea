#pragma once
/// KV offload tiers behind a replica's prefix cache (engine.kv_offload; model/kv_offload.hpp):
/// host DRAM, then local NVMe, each an LRU of block hashes. A block the GPU's pool evicts is
/// demoted to host memory (BlockManager calls demote()); when host memory is full its least
/// recently used block moves to NVMe, and NVMe drops its own least recently used. A lookup that
/// runs past the GPU's cached blocks continues here (find()); admitting the request loads each
/// block found (load()): it leaves its tier for the GPU, so the GPU, host and NVMe hold
/// disjoint blocks and together act as one LRU stack. A load costs block bytes ÷ the tier's
/// bandwidth, added to the step that admits the request (not overlapped with its compute).
///
/// Exists only when the block is set: a replica without it has no tiers and BlockManager's
/// eviction path only tests a null pointer.

#include "sim/result.hpp"

#include <cstdint>
#include <list>
#include <unordered_map>

namespace gpuplan::sim {

class KvTierCache {
  public:
    /// Where a block is.
    enum class Where : std::uint8_t { None, Host, Nvme };
    /// One tier: capacity in blocks (0: none) and load bandwidth in bytes/s per GPU.
    struct Tier {
        std::int64_t blocks = 0;
        double bandwidth = 0;
    };
    /// `block_bytes`: KV bytes of one block on one GPU. `stats` (not owned, outlives the tiers)
    /// collects the counters.
    KvTierCache(Tier host, Tier nvme, double block_bytes, KvOffloadResult& stats);

    /// A block the GPU evicted, holding content `hash`: to the host tier's most recently used
    /// end (or NVMe's when there is no host tier), pushing that tier's least recently used down.
    void demote(std::uint64_t hash);
    /// The tier holding `hash`. O(1) expected.
    [[nodiscard]] Where find(std::uint64_t hash) const;
    /// Takes `hash` out of its tier for the GPU and returns the seconds the copy takes
    /// (block bytes ÷ the tier's bandwidth); 0 when no tier holds it.
    double load(std::uint64_t hash);
    /// Blocks held now.
    [[nodiscard]] std::int64_t host_blocks() const noexcept { return host_.size(); }
    [[nodiscard]] std::int64_t nvme_blocks() const noexcept { return nvme_.size(); }

  private:
    class Lru {
      public:
        explicit Lru(Tier t) : tier_(t) {}
        [[nodiscard]] bool contains(std::uint64_t h) const { return where_.count(h) != 0; }
        [[nodiscard]] bool full() const { return size() >= tier_.blocks; }
        [[nodiscard]] std::int64_t size() const { return static_cast<std::int64_t>(where_.size()); }
        [[nodiscard]] const Tier& tier() const noexcept { return tier_; }
        /// Inserts `h` (or moves it) at the most recently used end.
        void push(std::uint64_t h);
        /// Removes and returns the least recently used hash. Precondition: size() > 0.
        std::uint64_t pop_lru();
        void erase(std::uint64_t h);

      private:
        Tier tier_;
        std::list<std::uint64_t> order_; // least recently used first
        std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
    };
    /// Puts `h` into `lru`, pushing its LRU block into `below` (nullptr: dropped) first.
    void store(Lru& lru, Lru* below, std::uint64_t h);

    Lru host_;
    Lru nvme_;
    double block_bytes_ = 0;
    KvOffloadResult& stats_;
};

} // namespace gpuplan::sim
