#include "sim/block_manager.hpp"

#include "model/error.hpp"
#include "sim/kv_tiers.hpp"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <string>

namespace gpuplan::sim {

BlockManager::BlockManager(std::int64_t blocks, bool caching)
    : total_(blocks), free_(blocks), caching_(caching) {
    GPUPLAN_CHECK(blocks >= 0, "negative block count");
    if (!caching_) {
        return;
    }
    GPUPLAN_CHECK(blocks < (std::int64_t{1} << 30),
                  "too many KV blocks for the prefix cache: " + std::to_string(blocks));
    const auto n = static_cast<std::size_t>(blocks);
    b_.assign(n, Block{});
    ref_.assign(n, 0);
    // Initially every block is free and unhashed; they are handed out in id order.
    unhashed_.reserve(n);
    for (std::size_t i = n; i-- > 0;) {
        unhashed_.push_back(static_cast<std::int32_t>(i));
    }
    tail_gap_ = blocks;
    table_.assign(64, Slot{});
    mask_ = table_.size() - 1;
    chains_.resize(64);
}

void BlockManager::grow_table() {
    std::vector<Slot> old(table_.size() * 2);
    old.swap(table_);
    mask_ = table_.size() - 1;
    for (const Slot& e : old) {
        if (e.key != 0) {
            std::size_t s = slot_of(e.key);
            while (table_[s].key != 0) {
                s = (s + 1) & mask_;
            }
            table_[s] = e;
        }
    }
}

void BlockManager::unlink(std::int32_t b) noexcept {
    Block& x = b_[static_cast<std::size_t>(b)];
    if (x.prev >= 0) {
        b_[static_cast<std::size_t>(x.prev)].next = x.next;
    } else {
        head_ = x.next;
    }
    if (x.next >= 0) {
        b_[static_cast<std::size_t>(x.next)].prev = x.prev;
    } else {
        tail_ = x.prev;
    }
    x.prev = x.next = -1;
}

void BlockManager::push_tail(std::int32_t b) noexcept {
    Block& x = b_[static_cast<std::size_t>(b)];
    x.prev = tail_;
    x.next = -1;
    if (tail_ >= 0) {
        b_[static_cast<std::size_t>(tail_)].next = b;
    } else {
        head_ = b;
    }
    tail_ = b;
}

std::int32_t BlockManager::allocate() {
    assert(free_ > 0);
    --free_;
    if (!caching_) {
        return -1;
    }
    if (head_ >= 0 && b_[static_cast<std::size_t>(head_)].gap == 0) {
        // The least recently freed block is a cached one: evict it.
        const std::int32_t b = head_;
        unlink(b);
        Block& x = b_[static_cast<std::size_t>(b)];
        if (lower_ != nullptr) {
            lower_->demote(x.hash);
        }
        erase_hash(x.hash);
        x.hash = 0;
        --cached_;
        ++evictions_;
        ref_[static_cast<std::size_t>(b)] = 2; // one reference, no hash
        return b;
    }
    // The least recently freed block is an unhashed one; any unhashed block will do.
    if (head_ >= 0) {
        --b_[static_cast<std::size_t>(head_)].gap;
    } else {
        --tail_gap_;
    }
    assert(!unhashed_.empty());
    const std::int32_t b = unhashed_.back();
    unhashed_.pop_back();
    ref_[static_cast<std::size_t>(b)] = 2;
    return b;
}

void BlockManager::allocate_run(std::int64_t n, std::vector<std::int32_t>& out) {
    assert(caching_ && n <= free_);
    while (n > 0) {
        // Unhashed blocks freed before the least recently freed cached one (all of them when
        // none is cached): allocate() would take them one by one off the stack's top.
        const std::int64_t run = head_ >= 0 ? b_[static_cast<std::size_t>(head_)].gap : tail_gap_;
        if (run == 0) {
            out.push_back(allocate());
            --n;
            continue;
        }
        const std::int64_t k = std::min(n, run);
        if (head_ >= 0) {
            b_[static_cast<std::size_t>(head_)].gap -= static_cast<std::int32_t>(k);
        } else {
            tail_gap_ -= k;
        }
        free_ -= k;
        n -= k;
        assert(static_cast<std::int64_t>(unhashed_.size()) >= k);
        const auto top = unhashed_.end() - static_cast<std::ptrdiff_t>(k);
        for (auto it = unhashed_.end(); it != top;) {
            --it;
            ref_[static_cast<std::size_t>(*it)] = 2; // one reference, no hash
            out.push_back(*it);
        }
        unhashed_.erase(top, unhashed_.end());
    }
}

void BlockManager::release_count(std::int64_t n) noexcept {
    assert(!caching_);
    free_ += n;
    assert(free_ <= total_);
}

void BlockManager::touch(std::int32_t block) {
    std::int32_t& ref = ref_[static_cast<std::size_t>(block)];
    if (ref >> 1 == 0) {
        Block& x = b_[static_cast<std::size_t>(block)];
        // Only cached (hashed) blocks are found by lookup; the unhashed blocks freed before
        // this one now come before its successor.
        assert(x.hash != 0);
        if (x.next >= 0) {
            b_[static_cast<std::size_t>(x.next)].gap += x.gap;
        } else {
            tail_gap_ += x.gap;
        }
        x.gap = 0;
        unlink(block);
        --free_;
    }
    ref += 2;
}

void BlockManager::release(std::int32_t block) {
    std::int32_t& ref = ref_[static_cast<std::size_t>(block)];
    assert(ref >= 2);
    ref -= 2;
    if (ref >> 1 == 0) {
        ++free_;
        if (ref != 0) { // hashed
            Block& x = b_[static_cast<std::size_t>(block)];
            x.gap = static_cast<std::int32_t>(tail_gap_);
            tail_gap_ = 0;
            push_tail(block);
        } else {
            unhashed_.push_back(block);
            ++tail_gap_;
        }
    }
}

void BlockManager::release_run(const std::int32_t* first, const std::int32_t* last) {
    for (const std::int32_t* it = last; it != first;) {
        release(*--it);
    }
}

void BlockManager::release_unshared(const std::int32_t* first, const std::int32_t* last) {
    assert(caching_);
    for (const std::int32_t* it = first; it != last; ++it) {
        assert(ref_[static_cast<std::size_t>(*it)] == 2); // one reference, no hash
        ref_[static_cast<std::size_t>(*it)] = 0;
    }
    // Onto the stack last first, in one insertion (unhashed_ has room for every block).
    unhashed_.insert(unhashed_.end(), std::make_reverse_iterator(last),
                     std::make_reverse_iterator(first));
    free_ += last - first;
    tail_gap_ += last - first;
}

std::size_t BlockManager::slot_of(std::uint64_t hash) const noexcept {
    // Fibonacci hashing spreads the (already mixed) key over the table.
    return static_cast<std::size_t>((hash * 0x9e3779b97f4a7c15ULL) >> 17) & mask_;
}

std::int32_t BlockManager::lookup(std::uint64_t hash) const noexcept {
    if (!caching_ || hash == 0) {
        return -1;
    }
    for (std::size_t s = slot_of(hash);; s = (s + 1) & mask_) {
        const Slot& e = table_[s];
        if (e.key == hash) {
            return e.val;
        }
        if (e.key == 0) {
            return -1;
        }
    }
}

void BlockManager::insert(std::uint64_t hash, std::int32_t block) {
    if (!caching_ || hash == 0 || (ref_[static_cast<std::size_t>(block)] & 1) != 0) {
        return;
    }
    std::size_t s = slot_of(hash);
    for (; table_[s].key != 0; s = (s + 1) & mask_) {
        if (table_[s].key == hash) {
            return;
        }
    }
    if (2 * static_cast<std::size_t>(cached_ + 1) > table_.size()) {
        grow_table();
        s = slot_of(hash);
        while (table_[s].key != 0) {
            s = (s + 1) & mask_;
        }
    }
    table_[s] = Slot{hash, block};
    b_[static_cast<std::size_t>(block)].hash = hash;
    ref_[static_cast<std::size_t>(block)] |= 1;
    ++cached_;
}

// Backward-shift deletion (Knuth 6.4, Algorithm R) keeps linear probing free of tombstones.
void BlockManager::erase_hash(std::uint64_t hash) noexcept {
    std::size_t s = slot_of(hash);
    while (table_[s].key != hash) {
        if (table_[s].key == 0) {
            return;
        }
        s = (s + 1) & mask_;
    }
    std::size_t hole = s;
    for (std::size_t j = (hole + 1) & mask_; table_[j].key != 0; j = (j + 1) & mask_) {
        const std::size_t home = slot_of(table_[j].key);
        // Move j into the hole unless its home lies cyclically in (hole, j].
        const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!stays) {
            table_[hole] = table_[j];
            hole = j;
        }
    }
    table_[hole] = Slot{};
}

std::size_t BlockManager::recall_chain(std::uint64_t key, std::size_t max,
                                       std::vector<std::int32_t>& out, std::uint64_t& last_hash) {
    if (!caching_) {
        return 0;
    }
    Chain& c = chain_of(key);
    if (c.key != key || c.stamp != evictions_) {
        c.key = key;
        c.stamp = evictions_;
        c.hashes.clear();
        c.blocks.clear();
        return 0;
    }
    const std::size_t n = std::min(max, c.blocks.size());
    out.insert(out.end(), c.blocks.begin(), c.blocks.begin() + static_cast<std::ptrdiff_t>(n));
    if (n > 0) {
        last_hash = c.hashes[n - 1];
    }
    return n;
}

void BlockManager::remember_chain(std::uint64_t key, std::size_t index, std::uint64_t hash,
                                  std::int32_t block) {
    if (!caching_) {
        return;
    }
    Chain& c = chain_of(key);
    if (c.key == key && c.stamp == evictions_ && c.blocks.size() == index) {
        c.hashes.push_back(hash);
        c.blocks.push_back(block);
    }
}

} // namespace gpuplan::sim
