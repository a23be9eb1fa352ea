// The paged KV pool and its prefix cache.
#include "sim/block_manager.hpp"
#include "sim/rng.hpp"

#include <gtest/gtest.h>

#include <map>

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
    EXPECT_EQ(m.lookup(103), c);  // still referenced
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

}  // namespace
}  // namespace gpuplan::sim
