#pragma once
/// A paged KV block pool with vLLM's prefix cache (vllm/v1/core/block_pool.py and
/// kv_cache_manager.py; docs/engines.md §2.3, §2.4): fixed-size blocks; full blocks are
/// content-addressed by a hash chained over the blocks before them; freed blocks keep their hash
/// and sit in an LRU free queue until a new allocation evicts them; a cache hit takes a block back
/// out of the free queue.
///
/// The manager knows blocks, not sequences: callers keep each sequence's block table and free
/// it tail first (so a sequence's deepest blocks are evicted first, as vLLM does). Without
/// prefix caching only the free count is kept and block ids are not tracked.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuplan::sim {

class KvTierCache;

/// The KV block pool of one replica.
class BlockManager {
  public:
    /// A pool of `blocks` blocks (>= 0). With `caching` false, allocate() returns -1 and only
    /// the counts are kept.
    BlockManager(std::int64_t blocks, bool caching);

    /// Blocks in the pool.
    [[nodiscard]] std::int64_t total() const noexcept { return total_; }
    /// Blocks that can be allocated now: never used, or freed (cached ones are evictable).
    [[nodiscard]] std::int64_t free() const noexcept { return free_; }
    /// Blocks referenced by at least one sequence.
    [[nodiscard]] std::int64_t used() const noexcept { return total_ - free_; }
    [[nodiscard]] bool caching() const noexcept { return caching_; }

    /// Takes a block from the head of the free queue (least recently freed), evicting its hash.
    /// Precondition: free() > 0. Returns the block id (-1 without caching). O(1).
    std::int32_t allocate();
    /// What `n` calls of allocate() do, appending the ids to `out` (caching only). Precondition:
    /// free() >= n. The unhashed blocks ahead of the next cached one are taken as one run.
    void allocate_run(std::int64_t n, std::vector<std::int32_t>& out);
    /// Returns `n` blocks to the pool without ids (only when caching is off).
    void release_count(std::int64_t n) noexcept;
    /// Adds a reference to a block found by lookup(); a free block leaves the free queue. O(1).
    void touch(std::int32_t block);
    /// Drops a reference; at zero the block goes to the tail of the free queue, keeping its hash.
    void release(std::int32_t block);
    /// release() on each of blocks [first, last), last first (a sequence's hashed blocks, most
    /// of them a shared prefix still held by other sequences).
    void release_run(const std::int32_t* first, const std::int32_t* last);
    /// Releases blocks [first, last), each held by exactly one reference and without a hash,
    /// last first: what release() on each in that order does, without its branches.
    void release_unshared(const std::int32_t* first, const std::int32_t* last);
    /// References to the block (0 when it is free).
    [[nodiscard]] int ref_count(std::int32_t block) const {
        return ref_[static_cast<std::size_t>(block)] >> 1;
    }

    /// The block holding content `hash`, or -1. O(1) expected.
    [[nodiscard]] std::int32_t lookup(std::uint64_t hash) const noexcept;
    /// Records that `block` now holds content `hash`; no-op when the hash is already cached
    /// (identical blocks are not de-duplicated) or the block already has a hash.
    void insert(std::uint64_t hash, std::int32_t block);
    /// The chain memo: runs of consecutive lookups that found blocks, under a caller's `key`
    /// (a chain whose hashes depend on the key alone, such as the full blocks of a shared
    /// prefix). A run stays valid while nothing is evicted: lookups of its hashes would find
    /// the same blocks, since only an eviction removes a hash and insert() never remaps one.
    /// recall_chain() appends up to `max` blocks of the run for `key` to `out`, sets `last_hash`
    /// to the hash of the last one, and returns how many (0, resetting the run, when stale).
    /// Without caching there is no memo: recall_chain() returns 0.
    std::size_t recall_chain(std::uint64_t key, std::size_t max, std::vector<std::int32_t>& out,
                             std::uint64_t& last_hash);
    /// Extends the run for `key` by the lookup of its block `index` (ignored unless the run is
    /// valid and holds exactly `index` blocks).
    void remember_chain(std::uint64_t key, std::size_t index, std::uint64_t hash,
                        std::int32_t block);

    /// KV offload (sim/kv_tiers.hpp): every cached block evicted from now on is demoted to
    /// `tiers` (not owned; outlives the pool). Null (the default): evictions drop the block.
    void set_lower_tiers(KvTierCache* tiers) noexcept { lower_ = tiers; }

    /// Cached blocks (blocks with a hash).
    [[nodiscard]] std::int64_t cached() const noexcept { return cached_; }
    /// Cached blocks evicted so far.
    [[nodiscard]] std::int64_t evictions() const noexcept { return evictions_; }

  private:
    void unlink(std::int32_t b) noexcept;
    void push_tail(std::int32_t b) noexcept;
    void erase_hash(std::uint64_t hash) noexcept;
    /// Doubles the hash table and re-inserts every key.
    void grow_table();
    [[nodiscard]] std::size_t slot_of(std::uint64_t hash) const noexcept;

    std::int64_t total_ = 0;
    std::int64_t free_ = 0;
    bool caching_ = false;
    // The free queue in LRU order holds hashed and unhashed blocks. Unhashed blocks are
    // interchangeable, so the queue is kept as the list of free hashed blocks, each with the
    // number of unhashed blocks freed just before it (`gap`), plus the unhashed blocks freed
    // after the last one (`tail_gap_`); the unhashed blocks themselves sit on a stack and are
    // reused most recently freed first (cache-warm). Evictions happen exactly as with one queue.
    struct Block {
        std::uint64_t hash = 0; // 0: none
        std::int32_t prev = -1; // free hashed list links (-1: none)
        std::int32_t next = -1;
        std::int32_t gap = 0;
    };
    std::vector<Block> b_;
    // Per block: 2 × references + 1 if it has a hash. Every allocation and release reads it;
    // kept apart from Block (4 bytes, not 24, a block) so the pool's hot part stays in cache.
    std::vector<std::int32_t> ref_;
    std::int32_t head_ = -1, tail_ = -1; // free hashed blocks, least recently freed first
    std::vector<std::int32_t> unhashed_; // free unhashed blocks
    std::int64_t tail_gap_ = 0;
    // Open-addressing hash → block table with linear probing, at most half full. It grows
    // with the cached blocks (doubling), not with the pool: most blocks never get a hash, and
    // a small table stays in cache for the lookups of every admission.
    struct Slot {
        std::uint64_t key = 0; // 0: empty
        std::int32_t val = -1;
    };
    std::vector<Slot> table_;
    std::size_t mask_ = 0;
    std::int64_t cached_ = 0;
    std::int64_t evictions_ = 0;
    // The chain memo, direct-mapped by key.
    struct Chain {
        std::uint64_t key = 0;
        std::int64_t stamp = -1; // evictions_ when the run was started
        std::vector<std::uint64_t> hashes;
        std::vector<std::int32_t> blocks;
    };
    [[nodiscard]] Chain& chain_of(std::uint64_t key) noexcept {
        return chains_[static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> 58)];
    }
    std::vector<Chain> chains_;    // 64 entries with caching, none without
    KvTierCache* lower_ = nullptr; // KV offload tiers (engine.kv_offload), else null
};

} // namespace gpuplan::sim
