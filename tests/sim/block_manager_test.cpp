// The paged KV pool and its prefix cache.
#include "sim/block_manager.hpp"
#include "sim/rng.hpp"

#include <gtest/gtest.h>

#include <list>
#include <map>
#include <unordered_map>

namespace gpuplan::sim {
namespace {

TEST(BlockManager, CountsWithoutCaching) {
    BlockManager m(10, false);
    EXPECT_EQ(m.free(), 10);
    EXPECT_EQ(m.allocate(), -1);
    EXPECT_EQ(m.allocate(), -1);
    EXPECT_EQ(m.used(), 2);
    m.release_count(2);
    EXPECT_EQ(m.free(), 10);
}

TEST(BlockManager, FreedBlocksKeepTheirHashUntilEvictedLeastRecentlyFreedFirst) {
    BlockManager m(3, true);
    const auto a = m.allocate();
    const auto b = m.allocate();
    const auto c = m.allocate();
    EXPECT_EQ(m.free(), 0);
    m.insert(101, a);
    m.insert(102, b);
    m.insert(103, c);
    // Free b, then a, then c: the free queue is b, a, c.
    m.release(b);
    m.release(a);
    m.release(c);
    EXPECT_EQ(m.free(), 3);
    EXPECT_EQ(m.lookup(101), a);
    EXPECT_EQ(m.lookup(102), b);
    // A hit takes the block out of the free queue.
    m.touch(m.lookup(103));
    EXPECT_EQ(m.free(), 2);
    // The next allocation evicts the least recently freed block: b.
    EXPECT_EQ(m.allocate(), b);
    EXPECT_EQ(m.lookup(102), -1);
    EXPECT_EQ(m.lookup(101), a);
    EXPECT_EQ(m.evictions(), 1);
    EXPECT_EQ(m.allocate(), a);
    EXPECT_EQ(m.lookup(101), -1);
    EXPECT_EQ(m.lookup(103), c); // still referenced
}

TEST(BlockManager, AllocateRunTakesTheUnhashedRunThenEvicts) {
    // Ids are handed out 0, 1, 2, ... at first; freed unhashed blocks are reused most recently
    // freed first. Free 0 (unhashed), 1 (hashed), 2 (unhashed): the free queue is the 3 never
    // used and 0, then 1, then 2. Five allocations take the four unhashed blocks ahead of 1
    // (2, 0, 3, 4: the unhashed stack's top first), then evict 1.
    BlockManager m(6, true);
    std::vector<std::int32_t> got;
    m.allocate_run(3, got);
    ASSERT_EQ(got, (std::vector<std::int32_t>{0, 1, 2}));
    m.insert(42, 1);
    m.release(0);
    m.release(1);
    m.release(2);
    got.clear();
    m.allocate_run(5, got);
    EXPECT_EQ(got, (std::vector<std::int32_t>{2, 0, 3, 4, 1}));
    EXPECT_EQ(m.evictions(), 1);
    EXPECT_EQ(m.lookup(42), -1);
    EXPECT_EQ(m.free(), 1);
    for (const std::int32_t b : got) {
        EXPECT_EQ(m.ref_count(b), 1);
    }
}

TEST(BlockManager, AllocateRunIsThatManyAllocations) {
    // Two pools under the same random churn, one allocating runs, the other one block at a
    // time: the same ids in the same order, the same evictions.
    constexpr int n = 64;
    BlockManager runs(n, true);
    BlockManager single(n, true);
    Rng rng(5);
    std::vector<std::int32_t> held;
    std::uint64_t next = 1;
    for (int step = 0; step < 20000; ++step) {
        const double u = rng.uniform();
        if (u < 0.4 && runs.free() > 0) {
            const auto k =
                1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(runs.free())));
            std::vector<std::int32_t> a;
            runs.allocate_run(k, a);
            for (std::int64_t i = 0; i < k; ++i) {
                ASSERT_EQ(single.allocate(), a[static_cast<std::size_t>(i)]) << "step " << step;
            }
            held.insert(held.end(), a.begin(), a.end());
        } else if (u < 0.6 && !held.empty()) {
            const std::int32_t b = held[static_cast<std::size_t>(rng.below(held.size()))];
            const std::uint64_t key = (next++) * 0x9e3779b97f4a7c15ULL;
            runs.insert(key, b);
            single.insert(key, b);
        } else if (!held.empty()) {
            const auto k = static_cast<std::size_t>(rng.below(held.size()));
            runs.release(held[k]);
            single.release(held[k]);
            held[k] = held.back();
            held.pop_back();
        }
        ASSERT_EQ(runs.free(), single.free()) << "step " << step;
        ASSERT_EQ(runs.evictions(), single.evictions()) << "step " << step;
    }
    EXPECT_GT(runs.evictions(), 0);
}

TEST(BlockManager, SharedBlocksStayUntilTheLastReferenceGoes) {
    BlockManager m(2, true);
    const auto a = m.allocate();
    m.insert(7, a);
    m.touch(a);
    EXPECT_EQ(m.ref_count(a), 2);
    m.release(a);
    EXPECT_EQ(m.free(), 1);
    m.release(a);
    EXPECT_EQ(m.free(), 2);
    EXPECT_EQ(m.lookup(7), a);
}

TEST(BlockManager, HashTableGrowsWithTheCachedBlocksUpToTheWholePool) {
    // The table starts small and doubles as blocks get hashes: every block of a 1000-block
    // pool hashed at once (several doublings) is still found, and evicting them all empties it.
    constexpr int n = 1000;
    BlockManager m(n, true);
    std::vector<std::int32_t> blocks;
    for (int i = 0; i < n; ++i) {
        blocks.push_back(m.allocate());
        m.insert(1000 + static_cast<std::uint64_t>(i), blocks.back());
    }
    EXPECT_EQ(m.cached(), n);
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(m.lookup(1000 + static_cast<std::uint64_t>(i)),
                  blocks[static_cast<std::size_t>(i)]);
    }
    EXPECT_EQ(m.lookup(999), -1);
    for (const std::int32_t b : blocks) {
        m.release(b);
    }
    for (int i = 0; i < n; ++i) {
        (void)m.allocate(); // evicts the least recently freed: block i
        EXPECT_EQ(m.lookup(1000 + static_cast<std::uint64_t>(i)), -1);
        if (i + 1 < n) {
            EXPECT_EQ(m.lookup(1000 + static_cast<std::uint64_t>(i + 1)),
                      blocks[static_cast<std::size_t>(i + 1)]);
        }
    }
    EXPECT_EQ(m.cached(), 0);
    EXPECT_EQ(m.evictions(), n);
}

TEST(BlockManager, ChainMemoRecallsARunUntilSomethingIsEvicted) {
    BlockManager m(4, true);
    const auto a = m.allocate();
    const auto b = m.allocate();
    m.insert(11, a);
    m.insert(12, b);
    std::vector<std::int32_t> out;
    std::uint64_t last = 0;
    // Nothing remembered yet: the first recall starts the run.
    EXPECT_EQ(m.recall_chain(7, 2, out, last), 0U);
    m.remember_chain(7, 0, 11, a);
    m.remember_chain(7, 5, 99, b); // not the next index: ignored
    m.remember_chain(7, 1, 12, b);
    EXPECT_EQ(m.recall_chain(7, 5, out, last), 2U);
    EXPECT_EQ(out, (std::vector<std::int32_t>{a, b}));
    EXPECT_EQ(last, 12U);
    out.clear();
    EXPECT_EQ(m.recall_chain(7, 1, out, last), 1U); // at most `max`
    EXPECT_EQ(out, (std::vector<std::int32_t>{a}));
    EXPECT_EQ(last, 11U);
    // Allocations that evict nothing keep the run; an eviction makes it stale.
    m.release(b);
    m.release(a);
    (void)m.allocate(); // an unhashed block
    (void)m.allocate(); // the last unhashed block
    out.clear();
    EXPECT_EQ(m.recall_chain(7, 2, out, last), 2U);
    out.clear();
    EXPECT_EQ(m.allocate(), b); // evicts hash 12, the least recently freed
    EXPECT_EQ(m.recall_chain(7, 2, out, last), 0U);
    EXPECT_TRUE(out.empty());
    // Without caching there is no memo.
    BlockManager counts(4, false);
    counts.remember_chain(7, 0, 11, 0);
    EXPECT_EQ(counts.recall_chain(7, 1, out, last), 0U);
    EXPECT_TRUE(out.empty());
}

TEST(BlockManager, HashTableSurvivesChurn) {
    // Random inserts and evictions against a reference map.
    constexpr int n = 512;
    BlockManager m(n, true);
    std::map<std::uint64_t, std::int32_t> ref;
    std::vector<std::int32_t> held;
    Rng rng(5);
    std::uint64_t next_hash = 1;
    for (int i = 0; i < 20000; ++i) {
        if (m.free() > 0 && (held.empty() || rng.uniform() < 0.55)) {
            const std::int32_t b = m.allocate();
            for (auto it = ref.begin(); it != ref.end(); ++it) {
                if (it->second == b) {
                    ref.erase(it);
                    break;
                }
            }
            const std::uint64_t h = (next_hash++) * 0x9e3779b97f4a7c15ULL;
            m.insert(h, b);
            ref[h] = b;
            held.push_back(b);
        } else {
            const auto k = static_cast<std::size_t>(rng.below(held.size()));
            m.release(held[k]);
            held[k] = held.back();
            held.pop_back();
        }
        if (i % 1000 == 0) {
            for (const auto& [h, b] : ref) {
                ASSERT_EQ(m.lookup(h), b);
            }
        }
    }
    EXPECT_EQ(m.cached(), static_cast<std::int64_t>(ref.size()));
}

// vLLM's block pool as literally described (docs/engines.md §2.4): one LRU free queue of all
// blocks, allocation pops the head and evicts its hash, freed blocks go to the tail.
class ReferencePool {
  public:
    explicit ReferencePool(int n)
        : ref_(static_cast<std::size_t>(n), 0), hash_(static_cast<std::size_t>(n), 0) {
        for (int i = 0; i < n; ++i) {
            free_.push_back(i);
        }
    }
    int allocate() {
        const int b = free_.front();
        free_.pop_front();
        if (hash_[static_cast<std::size_t>(b)] != 0) {
            table_.erase(hash_[static_cast<std::size_t>(b)]);
            hash_[static_cast<std::size_t>(b)] = 0;
        }
        ref_[static_cast<std::size_t>(b)] = 1;
        return b;
    }
    void insert(std::uint64_t h, int b) {
        if (hash_[static_cast<std::size_t>(b)] == 0 && !table_.count(h)) {
            table_[h] = b;
            hash_[static_cast<std::size_t>(b)] = h;
        }
    }
    int lookup(std::uint64_t h) const {
        const auto it = table_.find(h);
        return it == table_.end() ? -1 : it->second;
    }
    void touch(int b) {
        if (ref_[static_cast<std::size_t>(b)]++ == 0) {
            free_.remove(b);
        }
    }
    void release(int b) {
        if (--ref_[static_cast<std::size_t>(b)] == 0) {
            free_.push_back(b);
        }
    }
    [[nodiscard]] std::size_t free() const { return free_.size(); }
    [[nodiscard]] std::size_t cached() const { return table_.size(); }

  private:
    std::vector<int> ref_;
    std::vector<std::uint64_t> hash_;
    std::list<int> free_;
    std::unordered_map<std::uint64_t, int> table_;
};

TEST(BlockManager, EvictsExactlyLikeASingleLruQueue) {
    // Random allocations, hash inserts, releases and cache hits on both pools: the cached
    // contents and free counts must agree at every step (block ids of unhashed blocks may not).
    constexpr int n = 64;
    BlockManager m(n, true);
    ReferencePool ref(n);
    Rng rng(17);
    struct Held {
        std::int32_t mine;
        int theirs;
        bool hashed;
    };
    std::vector<Held> held;
    std::vector<std::uint64_t> hashes;
    std::uint64_t next = 1;
    for (int step = 0; step < 50000; ++step) {
        const double u = rng.uniform();
        if (u < 0.35 && m.free() > 0) {
            held.push_back({m.allocate(), ref.allocate(), false});
        } else if (u < 0.55 && !held.empty()) {
            auto& h = held[static_cast<std::size_t>(rng.below(held.size()))];
            if (!h.hashed) {
                const std::uint64_t key = (next++) * 0x9e3779b97f4a7c15ULL;
                m.insert(key, h.mine);
                ref.insert(key, h.theirs);
                hashes.push_back(key);
                h.hashed = true;
            }
        } else if (u < 0.85 && !held.empty()) {
            const auto k = static_cast<std::size_t>(rng.below(held.size()));
            m.release(held[k].mine);
            ref.release(held[k].theirs);
            held[k] = held.back();
            held.pop_back();
        } else if (!hashes.empty()) {
            const std::uint64_t key = hashes[static_cast<std::size_t>(rng.below(hashes.size()))];
            const std::int32_t a = m.lookup(key);
            const int b = ref.lookup(key);
            ASSERT_EQ(a >= 0, b >= 0) << "step " << step;
            if (a >= 0) {
                m.touch(a);
                ref.touch(b);
                held.push_back({a, b, true});
            }
        }
        ASSERT_EQ(static_cast<std::size_t>(m.free()), ref.free()) << "step " << step;
        ASSERT_EQ(static_cast<std::size_t>(m.cached()), ref.cached()) << "step " << step;
        if (step % 97 == 0) {
            for (const std::uint64_t key : hashes) {
                ASSERT_EQ(m.lookup(key) >= 0, ref.lookup(key) >= 0) << "step " << step;
            }
        }
    }
}

} // namespace
} // namespace gpuplan::sim
