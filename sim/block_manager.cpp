#include "sim/block_manager.hpp"

#include "model/error.hpp"

#include <cassert>
#include <string>

namespace gpuplan::sim {

BlockManager::BlockManager(std::int64_t blocks, bool caching)
    : total_(blocks), free_(blocks), caching_(caching) {
    GPUPLAN_CHECK(blocks >= 0, "negative block count");
    if (!caching_) {
        return;
    }
    GPUPLAN_CHECK(blocks < (std::int64_t{1} << 30), "too many KV blocks for the prefix cache: " +
                                                         std::to_string(blocks));
    const auto n = static_cast<std::size_t>(blocks);
    ref_.assign(n, 0);
    hash_.assign(n, 0);
    prev_.resize(n);
    next_.resize(n);
    // Initially every block is free, in id order.
    for (std::size_t i = 0; i < n; ++i) {
        prev_[i] = static_cast<std::int32_t>(i) - 1;
        next_[i] = i + 1 < n ? static_cast<std::int32_t>(i + 1) : -1;
    }
    head_ = n > 0 ? 0 : -1;
    tail_ = static_cast<std::int32_t>(n) - 1;
    std::size_t cap = 16;
    while (cap < 2 * n) {
        cap <<= 1;
    }
    keys_.assign(cap, 0);
    vals_.assign(cap, -1);
    mask_ = cap - 1;
}

void BlockManager::unlink(std::int32_t b) noexcept {
    const auto i = static_cast<std::size_t>(b);
    if (prev_[i] >= 0) {
        next_[static_cast<std::size_t>(prev_[i])] = next_[i];
    } else {
        head_ = next_[i];
    }
    if (next_[i] >= 0) {
        prev_[static_cast<std::size_t>(next_[i])] = prev_[i];
    } else {
        tail_ = prev_[i];
    }
    prev_[i] = next_[i] = -1;
}

void BlockManager::push_tail(std::int32_t b) noexcept {
    const auto i = static_cast<std::size_t>(b);
    prev_[i] = tail_;
    next_[i] = -1;
    if (tail_ >= 0) {
        next_[static_cast<std::size_t>(tail_)] = b;
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
    const std::int32_t b = head_;
    const auto i = static_cast<std::size_t>(b);
    unlink(b);
    if (hash_[i] != 0) {
        erase_hash(hash_[i]);
        hash_[i] = 0;
        --cached_;
        ++evictions_;
    }
    ref_[i] = 1;
    return b;
}

void BlockManager::release_count(std::int64_t n) noexcept {
    assert(!caching_);
    free_ += n;
    assert(free_ <= total_);
}

void BlockManager::touch(std::int32_t block) {
    const auto i = static_cast<std::size_t>(block);
    if (ref_[i] == 0) {
        unlink(block);
        --free_;
    }
    ++ref_[i];
}

void BlockManager::release(std::int32_t block) {
    const auto i = static_cast<std::size_t>(block);
    assert(ref_[i] > 0);
    if (--ref_[i] == 0) {
        push_tail(block);
        ++free_;
    }
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
        if (keys_[s] == hash) {
            return vals_[s];
        }
        if (keys_[s] == 0) {
            return -1;
        }
    }
}

void BlockManager::insert(std::uint64_t hash, std::int32_t block) {
    if (!caching_ || hash == 0 || hash_[static_cast<std::size_t>(block)] != 0) {
        return;
    }
    std::size_t s = slot_of(hash);
    for (; keys_[s] != 0; s = (s + 1) & mask_) {
        if (keys_[s] == hash) {
            return;
        }
    }
    keys_[s] = hash;
    vals_[s] = block;
    hash_[static_cast<std::size_t>(block)] = hash;
    ++cached_;
}

// Backward-shift deletion (Knuth 6.4, Algorithm R) keeps linear probing free of tombstones.
void BlockManager::erase_hash(std::uint64_t hash) noexcept {
    std::size_t s = slot_of(hash);
    while (keys_[s] != hash) {
        if (keys_[s] == 0) {
            return;
        }
        s = (s + 1) & mask_;
    }
    std::size_t hole = s;
    for (std::size_t j = (hole + 1) & mask_; keys_[j] != 0; j = (j + 1) & mask_) {
        const std::size_t home = slot_of(keys_[j]);
        // Move j into the hole unless its home lies cyclically in (hole, j].
        const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!stays) {
            keys_[hole] = keys_[j];
            vals_[hole] = vals_[j];
            hole = j;
        }
    }
    keys_[hole] = 0;
    vals_[hole] = -1;
}

}  // namespace gpuplan::sim
