// ShardedCache: what is put is found, a put of a present key replaces it without evicting, the
// bound holds whatever is inserted (a full shard drops one entry per new key), put_if honours its
// guard, clear empties it; under concurrent readers and writers (TSan) every hit is a value that
// was put for its key.

#include "store/sharded_cache.hpp"
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace barrel;

namespace {

struct Hasher {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
        return std::hash<std::string_view>{}(s);
    }
};

using Cache = ShardedCache<std::string, std::optional<int>, Hasher>;

std::string name(size_t i) { return "user-" + std::to_string(i); }

}  // namespace

TEST(store_sharded_cache, put_find_replace_and_absent_values) {
    Cache cache{1000};
    EXPECT_EQ(cache.find("alice"), std::nullopt);
    cache.put("alice", 5);
    cache.put("bob", std::nullopt);  // cached as known absent
    EXPECT_EQ(cache.find("alice"), std::optional<std::optional<int>>{5});
    EXPECT_EQ(cache.find("bob"), std::optional<std::optional<int>>(std::in_place, std::nullopt));
    cache.put("alice", 7);
    EXPECT_EQ(cache.find("alice"), std::optional<std::optional<int>>{7});
    EXPECT_EQ(cache.size(), 2u);
    cache.clear();
    EXPECT_EQ(cache.find("alice"), std::nullopt);
    EXPECT_EQ(cache.size(), 0u);
}

TEST(store_sharded_cache, capacity_rounds_up_to_shards) {
    EXPECT_EQ(Cache{0}.capacity(), Cache::kShards);
    EXPECT_EQ(Cache{Cache::kShards}.capacity(), Cache::kShards);
    EXPECT_EQ(Cache{Cache::kShards + 1}.capacity(), 2 * Cache::kShards);
    EXPECT_EQ(Cache{size_t{1} << 17}.capacity(), size_t{1} << 17);
    Cache unbounded_in_practice{std::numeric_limits<size_t>::max()};  // allocates nothing up front
    unbounded_in_practice.put("x", 1);
    EXPECT_EQ(unbounded_in_practice.size(), 1u);
}

TEST(store_sharded_cache, the_bound_holds_and_every_hit_is_right) {
    Cache cache{10 * Cache::kShards};
    constexpr size_t n = 20'000;
    for (size_t i = 0; i < n; ++i) {
        cache.put(name(i), static_cast<int>(i));
        ASSERT_LE(cache.size(), cache.capacity());
        // The key just put is always there: a full shard drops another entry, not the new one.
        ASSERT_EQ(cache.find(name(i)), std::optional<std::optional<int>>{static_cast<int>(i)}) << i;
    }
    // 20,000 keys fill every shard of 10.
    EXPECT_EQ(cache.size(), cache.capacity());
    size_t found = 0;
    for (size_t i = 0; i < n; ++i) {
        if (const auto v = cache.find(name(i))) {
            EXPECT_EQ(*v, std::optional<int>{static_cast<int>(i)});
            ++found;
        }
    }
    EXPECT_EQ(found, cache.capacity());
    // Rewriting present keys evicts nothing.
    std::vector<size_t> present;
    for (size_t i = 0; i < n; ++i)
        if (cache.find(name(i))) present.push_back(i);
    for (size_t i : present) cache.put(name(i), -1);
    for (size_t i : present) EXPECT_EQ(cache.find(name(i)), std::optional<std::optional<int>>{-1});
}

TEST(store_sharded_cache, put_if_stores_only_when_allowed) {
    Cache cache{64};
    EXPECT_FALSE(cache.put_if("a", 1, [] { return false; }));
    EXPECT_EQ(cache.find("a"), std::nullopt);
    EXPECT_TRUE(cache.put_if("a", 2, [] { return true; }));
    EXPECT_FALSE(cache.put_if("a", 3, [] { return false; }));
    EXPECT_EQ(cache.find("a"), std::optional<std::optional<int>>{2});
}

// Readers and writers on a cache much smaller than the key set, so evictions run all the time:
// no race (TSan), and a hit is always the value written for that key (values encode their key).
TEST(store_sharded_cache, concurrent_readers_and_evicting_writers) {
    Cache cache{2 * Cache::kShards};
    constexpr size_t keys = 500;
    std::atomic<size_t> wrong{0};
    std::vector<std::thread> threads;
    for (size_t t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (size_t round = 0; round < 4'000; ++round) {
                const size_t i = (round * 7 + t * 131) % keys;
                if (t % 2 == 0) {
                    cache.put(name(i), static_cast<int>(i));
                    if (round % 997 == 0 && t == 0) cache.clear();
                } else if (const auto v = cache.find(name(i));
                           v && *v != std::optional<int>{static_cast<int>(i)}) {
                    wrong.fetch_add(1);
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_LE(cache.size(), cache.capacity());
}
