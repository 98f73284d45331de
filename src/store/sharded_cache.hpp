#pragma once
/// @file
/// A bounded map for cached values under keys of any length (the store's DagTransfer users, keyed
/// by name), in shards under reader-writer locks. Keys of a fixed size small enough for one cache
/// line belong in core/seqlock_cache.hpp, whose reads take no lock.
///
/// Bounded: each shard holds at most capacity / kShards entries (rounded up); putting a new key
/// into a full shard first drops one of its entries at random. A cache, not a store: every caller
/// must be able to fetch what it does not find. Random replacement needs no bookkeeping on a hit
/// (LRU would write under the reader lock) and cannot be steered by the keys chosen.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

namespace barrel {

template <class Key, class Value, class Hasher>
class ShardedCache {
public:
    static constexpr size_t kShards = 32;

    /// Holds at most `capacity` entries, rounded up to a multiple of kShards (at least one per
    /// shard).
    explicit ShardedCache(size_t capacity)
        : m_shard_capacity{std::max<size_t>(1, capacity / kShards + (capacity % kShards != 0))},
          m_shards{std::make_unique<Shard[]>(kShards)} {
        for (size_t i = 0; i < kShards; ++i) m_shards[i].random = 0x9e3779b97f4a7c15ull * (i + 1);
    }

    std::optional<Value> find(const Key& k) const {
        const Shard& s = shard(k);
        std::shared_lock lock{s.mutex};
        const auto it = s.map.find(k);
        if (it == s.map.end()) return std::nullopt;
        return it->second;
    }

    void put(const Key& k, Value v) {
        put_if(k, std::move(v), [] { return true; });
    }

    /// put, but only if `allow()` (called with the shard locked) says so; returns whether it
    /// stored. Lets a caller make "store this unless something changed since I read it" atomic with
    /// respect to other writers of the same key.
    template <class Allow>
    bool put_if(const Key& k, Value v, Allow&& allow) {
        Shard& s = shard(k);
        std::unique_lock lock{s.mutex};
        if (!allow()) return false;
        if (const auto it = s.map.find(k); it != s.map.end()) {
            it->second = std::move(v);
            return true;
        }
        if (s.map.size() >= m_shard_capacity) s.drop_one();
        s.map.emplace(k, std::move(v));
        return true;
    }

    void clear() {
        for (size_t i = 0; i < kShards; ++i) {
            std::unique_lock lock{m_shards[i].mutex};
            m_shards[i].map.clear();
        }
    }

    size_t size() const {
        size_t n = 0;
        for (size_t i = 0; i < kShards; ++i) {
            std::shared_lock lock{m_shards[i].mutex};
            n += m_shards[i].map.size();
        }
        return n;
    }

    size_t capacity() const noexcept { return m_shard_capacity * kShards; }

private:
    struct alignas(64) Shard {
        mutable std::shared_mutex mutex;
        std::unordered_map<Key, Value, Hasher, std::equal_to<>> map;
        uint64_t random{0};  ///< xorshift state, under the unique lock

        /// Erases an entry of a non-empty map: the first of the first non-empty bucket from a
        /// random one (the load factor is at most 1, so a few buckets are looked at).
        void drop_one() {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            const size_t buckets = map.bucket_count();
            size_t b = random % buckets;
            while (map.bucket_size(b) == 0) b = (b + 1) % buckets;
            const Key victim = map.begin(b)->first;
            map.erase(victim);
        }
    };

    const Shard& shard(const Key& k) const { return m_shards[Hasher{}(k) / 7 % kShards]; }
    Shard& shard(const Key& k) { return m_shards[Hasher{}(k) / 7 % kShards]; }

    size_t m_shard_capacity;
    std::unique_ptr<Shard[]> m_shards;
};

}  // namespace barrel
