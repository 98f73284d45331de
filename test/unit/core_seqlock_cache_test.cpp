// SeqlockCache: what is put is found with its flag, a key lives in one way only, a full set
// replaces entries without ever returning another key's value, clear empties it, put_if honours
// its guard; and under concurrent writers every read is some whole value that was written for
// that key, never a torn mix (on x86; TSan in CI checks the accesses are all atomic, not the
// ordering argument, which is in the header). ZeroedPages: a table moves to huge pages only once
// in use, and no lookup maps a page no entry was written to (the kernel's own accounting:
// mincore, the thread's minor faults), also beside the first writes into fresh pages.

#include "core/seqlock_cache.hpp"
#include "page_faults.hpp"
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <latch>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace barrel;

namespace {

using Cache = SeqlockCache<20, 40>;  // the store's account entries

std::array<uint8_t, 20> key_of(uint32_t k) {
    std::array<uint8_t, 20> key{};
    for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(k >> (8 * (i % 4)));
    return key;
}

/// A value that names its key and a version in every byte, so a torn read cannot pass as whole.
Cache::Value value_of(uint32_t k, uint8_t version) {
    Cache::Value v{};
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>((k * 31 + i) ^ version);
    return v;
}

/// The version a value was made with, or -1 if it is not value_of(k, version) for any version.
int version_in(const Cache::Value& v, uint32_t k) {
    const auto version = static_cast<uint8_t>(v[0] ^ static_cast<uint8_t>(k * 31));
    return v == value_of(k, version) ? version : -1;
}

// Every key collides in the same set when the cache has only one.
constexpr size_t kOneSet = Cache::kWays * Cache::kEntryBytes;

}  // namespace

namespace {

/// The kernel's count of memory it has mapped for the mapping that holds `address`: resident
/// KiB and, of those, KiB on transparent huge pages (/proc/self/smaps).
struct Mapped {
    size_t rss_kib{0}, huge_kib{0};
};
Mapped mapped_at(const void* address) {
    std::ifstream smaps{"/proc/self/smaps"};
    const auto at = reinterpret_cast<uintptr_t>(address);
    Mapped m;
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        uintptr_t begin = 0, end = 0;
        char dash = 0;
        std::istringstream head{line};
        if (head >> std::hex >> begin >> dash >> end && dash == '-') {
            inside = begin <= at && at < end;
            continue;
        }
        if (!inside) continue;
        std::istringstream field{line};
        std::string name;
        size_t kib = 0;
        field >> name >> kib;
        if (name == "Rss:") m.rss_kib = kib;
        if (name == "AnonHugePages:") m.huge_kib = kib;
    }
    return m;
}

/// How many of the `pages` 4 KiB pages from `address` (page-aligned) the kernel has mapped
/// (mincore): a page a load has mapped to the shared zero page counts, one never touched does not.
size_t mapped_pages(const void* address, size_t pages) {
    std::vector<unsigned char> resident(pages);
    if (::mincore(const_cast<void*>(address), pages * 4096, resident.data()) != 0) return SIZE_MAX;
    size_t n = 0;
    for (const unsigned char r : resident) n += r & 1;
    return n;
}

/// A well-mixed hash for key k, as the store's keyed_hash gives.
uint64_t spread(uint32_t k) { return (uint64_t{k} + 1) * 0x9e3779b97f4a7c15ull; }

bool huge_pages_possible() {
    std::ifstream f{"/sys/kernel/mm/transparent_hugepage/enabled"};
    std::string modes;
    std::getline(f, modes);
    return modes.find("[never]") == std::string::npos && !modes.empty();
}

}  // namespace

TEST(core_zeroed_pages, a_table_moves_to_huge_pages_only_once_it_is_in_use) {
    // 32 MiB, the account cache's default: 8,192 pages of 4 KiB, so 1,024 fills are "in use".
    ZeroedPages table{32u << 20};
    ASSERT_EQ(table.fill_threshold(), 1024u);
    auto* bytes = static_cast<uint8_t*>(table.data());
    // A few hundred entries scattered over the table, as a fresh node's accounts are: one byte
    // in each of 400 pages spread over all 16 huge-page regions.
    const size_t pages = table.size() / 4096;
    for (size_t i = 0; i < 400; ++i) {
        bytes[(i * (pages / 400)) * 4096] = 1;
        table.count_fill();
    }
    EXPECT_FALSE(table.huge_pages_asked());
    const Mapped fresh = mapped_at(bytes);
    EXPECT_EQ(fresh.huge_kib, 0u);
    // 400 pages of 4 KiB, not the 32 MiB that huge pages would have zeroed (a little slack for
    // the kernel's own choices).
    EXPECT_LE(fresh.rss_kib, 2048u);
    for (size_t i = 400; i < table.fill_threshold(); ++i) table.count_fill();
    EXPECT_TRUE(table.huge_pages_asked());
    for (size_t i = 0; i < 400; ++i) EXPECT_EQ(bytes[(i * (pages / 400)) * 4096], 1);  // kept
    if (!huge_pages_possible()) GTEST_SKIP() << "transparent huge pages are off on this system";
    // The move runs on a thread of its own; once it is done the table is on huge pages (the
    // kernel may decline a region it cannot allocate a huge page for, hence not all of them).
    table.wait_for_huge_pages();
    EXPECT_GT(mapped_at(bytes).huge_kib, 0u);
}

// The premise of the written-page bits: a load from a page never written maps it (to the zero
// page, which mincore counts), so a lookup must not load from such a page. And the bits: set
// for the page that was marked only, whichever word of the bitmap it is in; reset clears them
// and hands the pages back.
TEST(core_zeroed_pages, a_page_counts_as_written_once_marked_until_reset) {
    ASSERT_EQ(::sysconf(_SC_PAGESIZE), 4096);
    ZeroedPages table{1u << 20};  // 256 pages: four words of bits
    auto* bytes = static_cast<uint8_t*>(table.data());
    constexpr size_t kPages = 256;
    EXPECT_EQ(mapped_pages(bytes, kPages), 0u);
    for (size_t p = 0; p < kPages; ++p) EXPECT_FALSE(table.written(bytes + p * 4096)) << p;
    EXPECT_EQ(static_cast<volatile uint8_t*>(bytes)[7 * 4096], 0);  // a load: the zero page
    EXPECT_EQ(mapped_pages(bytes, kPages), 1u);
    for (const size_t p : {size_t{3}, size_t{200}}) {
        bytes[p * 4096 + 100] = 1;
        table.mark_written(bytes + p * 4096 + 100);
    }
    table.mark_written(bytes + 3 * 4096 + 4000);  // again: no change
    for (size_t p = 0; p < kPages; ++p) {
        const bool marked = p == 3 || p == 200;
        EXPECT_EQ(table.written(bytes + p * 4096), marked) << p;
        EXPECT_EQ(table.written(bytes + p * 4096 + 4095), marked) << p;
    }
    EXPECT_EQ(mapped_pages(bytes, kPages), 3u);
    table.reset();
    for (size_t p = 0; p < kPages; ++p) EXPECT_FALSE(table.written(bytes + p * 4096)) << p;
    EXPECT_EQ(mapped_pages(bytes, kPages), 0u);  // MADV_DONTNEED gave them back
    EXPECT_EQ(bytes[3 * 4096 + 100], 0);
}

// A fresh 32 MiB table (the account cache's default): misses all over it load nothing from it,
// so they map no page; a miss then a put, as a read-miss fill does, costs the one fault of a
// fresh page, not a zero-page mapping and then its copy-on-write (two faults, and the copy
// flushes every core's TLB); and clear() reads only the sets of pages that were written.
TEST(core_seqlock_cache, lookups_in_pages_never_written_map_nothing) {
    Cache cache{32u << 20};
    const uint64_t before = test::minor_faults_of_this_thread();
    size_t hits = 0;
    for (uint32_t k = 0; k < 2'000; ++k) hits += cache.find(key_of(k), spread(k)).has_value();
    const uint64_t miss_faults = test::minor_faults_of_this_thread() - before;
    EXPECT_EQ(hits, 0u);

    Cache fresh{32u << 20};
    constexpr uint32_t kFills = 500;  // under the move to huge pages (1,024 fills)
    const uint64_t before_fills = test::minor_faults_of_this_thread();
    for (uint32_t k = 0; k < kFills; ++k) {
        EXPECT_FALSE(fresh.find(key_of(k), spread(k)));
        fresh.put(key_of(k), spread(k), value_of(k, 1), k % 2 == 0);
    }
    const uint64_t fill_faults = test::minor_faults_of_this_thread() - before_fills;
    EXPECT_FALSE(fresh.on_huge_pages());
    for (uint32_t k = 0; k < kFills; ++k) {
        const auto f = fresh.find(key_of(k), spread(k));
        ASSERT_TRUE(f) << k;
        EXPECT_EQ(f->value, value_of(k, 1));
        EXPECT_EQ(f->flag, k % 2 == 0);
    }
    const uint64_t before_clear = test::minor_faults_of_this_thread();
    fresh.clear();
    const uint64_t clear_faults = test::minor_faults_of_this_thread() - before_clear;
    for (uint32_t k = 0; k < kFills; ++k) EXPECT_FALSE(fresh.find(key_of(k), spread(k))) << k;
    if (test::kShadowFaults) GTEST_SKIP() << "a sanitizer's shadow memory faults on its own";
    EXPECT_LE(miss_faults, 16u) << "2,000 lookups on 2,000 pages: one fault each if they load";
    EXPECT_LE(fill_faults, kFills + 16) << "one fault per page written, not two";
    EXPECT_LE(clear_faults, 16u) << "clear() loaded from pages never written";
}

TEST(core_seqlock_cache, put_then_find_with_flag_and_miss_for_others) {
    Cache cache{1 << 16};
    EXPECT_EQ(cache.capacity(), (1u << 16) / Cache::kEntryBytes);
    const auto a = key_of(1), b = key_of(2);
    EXPECT_FALSE(cache.find(a, 11));
    cache.put(a, 11, value_of(1, 0), false);
    cache.put(b, 11, value_of(2, 0), true);  // same set on purpose
    const auto fa = cache.find(a, 11);
    ASSERT_TRUE(fa);
    EXPECT_EQ(fa->value, value_of(1, 0));
    EXPECT_FALSE(fa->flag);
    const auto fb = cache.find(b, 11);
    ASSERT_TRUE(fb);
    EXPECT_EQ(fb->value, value_of(2, 0));
    EXPECT_TRUE(fb->flag);
    EXPECT_FALSE(cache.find(key_of(3), 11));
    EXPECT_FALSE(cache.find(a, 12));  // another set
}

TEST(core_seqlock_cache, a_key_is_rewritten_in_place_not_duplicated) {
    Cache cache{kOneSet};
    ASSERT_EQ(cache.capacity(), Cache::kWays);
    for (uint32_t k = 0; k < 4; ++k) cache.put(key_of(k), 0, value_of(k, 0), false);
    cache.put(key_of(0), 0, value_of(0, 1), false);
    // The set was full: had the update gone to another way, an older copy would be evicted
    // instead of a neighbour, and the four keys would not all be found.
    for (uint32_t k = 0; k < 4; ++k) {
        const auto f = cache.find(key_of(k), 0);
        ASSERT_TRUE(f) << k;
        EXPECT_EQ(f->value, value_of(k, k == 0 ? 1 : 0));
    }
}

TEST(core_seqlock_cache, a_full_set_replaces_entries_and_stays_exact) {
    Cache cache{kOneSet};
    for (uint32_t k = 0; k < 100; ++k) cache.put(key_of(k), 0, value_of(k, 7), false);
    size_t found = 0;
    for (uint32_t k = 0; k < 100; ++k) {
        const auto f = cache.find(key_of(k), 0);
        if (!f) continue;
        ++found;
        EXPECT_EQ(f->value, value_of(k, 7)) << k;
    }
    EXPECT_EQ(found, Cache::kWays);
    EXPECT_TRUE(cache.find(key_of(99), 0));  // the newest is always in
}

TEST(core_seqlock_cache, clear_empties_and_the_cache_refills) {
    Cache cache{1 << 12};
    for (uint32_t k = 0; k < 16; ++k) cache.put(key_of(k), k, value_of(k, 0), false);
    cache.clear();
    for (uint32_t k = 0; k < 16; ++k) EXPECT_FALSE(cache.find(key_of(k), k));
    cache.put(key_of(5), 5, value_of(5, 2), true);
    ASSERT_TRUE(cache.find(key_of(5), 5));
    EXPECT_EQ(cache.find(key_of(5), 5)->value, value_of(5, 2));
}

TEST(core_seqlock_cache, put_if_stores_only_when_its_guard_allows) {
    Cache cache{1 << 12};
    EXPECT_FALSE(cache.put_if(key_of(1), 1, value_of(1, 0), false, [] { return false; }));
    EXPECT_FALSE(cache.find(key_of(1), 1));
    EXPECT_TRUE(cache.put_if(key_of(1), 1, value_of(1, 0), false, [] { return true; }));
    EXPECT_TRUE(cache.find(key_of(1), 1));
}

TEST(core_seqlock_cache, concurrent_readers_see_whole_values_only) {
    // Two sets, 24 keys: both writers keep replacing and evicting in both sets while readers
    // look up; everyone starts together. The writers go on until the readers have seen kWanted
    // values, so the reads overlap the writes however the threads are scheduled (a busy machine
    // may run the readers only after 20,000 rounds); the round cap only stops a broken cache
    // from hanging the test.
    constexpr uint64_t kWanted = 10'000;
    Cache cache{2 * kOneSet};
    constexpr uint32_t kKeys = 24;
    auto hash = [](uint32_t k) { return uint64_t{k >> 1}; };  // each writer's keys span both sets
    std::latch start{4};
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> hits{0}, torn{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < 2; ++w)
        threads.emplace_back([&, w] {
            start.arrive_and_wait();
            uint8_t version = 0;
            for (int round = 0; round < 20'000 || (hits.load(std::memory_order_relaxed) < kWanted &&
                                                   round < 50'000'000);
                 ++round)
                for (uint32_t k = static_cast<uint32_t>(w); k < kKeys; k += 2) {
                    cache.put(key_of(k), hash(k), value_of(k, version), k % 3 == 0);
                    ++version;
                }
        });
    for (int r = 0; r < 2; ++r)
        threads.emplace_back([&] {
            start.arrive_and_wait();
            while (!stop.load(std::memory_order_relaxed))
                for (uint32_t k = 0; k < kKeys; ++k)
                    if (const auto f = cache.find(key_of(k), hash(k))) {
                        hits.fetch_add(1, std::memory_order_relaxed);
                        if (version_in(f->value, k) < 0 || f->flag != (k % 3 == 0))
                            torn.fetch_add(1);
                    }
        });
    threads[0].join();
    threads[1].join();
    stop = true;
    threads[2].join();
    threads[3].join();
    EXPECT_EQ(torn.load(), 0u);
    EXPECT_GE(hits.load(), kWanted);
}

// Readers beside the first write into each page: every key on a page of its own, fresh when
// the key is put. A key a writer has published (a release store the reader's acquire load
// reads) is found whole every time: the page's bit is set before the put returns, so a reader
// that comes after never takes the page for unwritten. A key still being put may be missed, or
// found whole. A fresh table each round, so every round writes into fresh pages.
TEST(core_seqlock_cache, readers_beside_the_first_writes_into_fresh_pages) {
    constexpr uint32_t kKeys = 256;  // 1 MiB: 256 pages of 16 sets, one key each
    constexpr int kRounds = 20;
    const auto hash = [](uint32_t k) { return uint64_t{k} * 16; };  // page k's first set
    std::atomic<uint64_t> missed{0}, torn{0}, checked{0};
    for (int round = 0; round < kRounds; ++round) {
        Cache cache{1u << 20};
        const auto version = static_cast<uint8_t>(round);
        std::atomic<uint32_t> published[2]{};  // writer w's first n keys (w, w + 2, …) are in
        std::latch start{4};
        std::vector<std::thread> threads;
        for (uint32_t w = 0; w < 2; ++w)
            threads.emplace_back([&, w] {
                start.arrive_and_wait();
                for (uint32_t i = 0; i < kKeys / 2; ++i) {
                    const uint32_t k = 2 * i + w;
                    cache.put(key_of(k), hash(k), value_of(k, version), k % 3 == 0);
                    published[w].store(i + 1, std::memory_order_release);
                }
            });
        for (uint32_t r = 0; r < 2; ++r)
            threads.emplace_back([&, r] {
                std::minstd_rand pick{r + 1};
                start.arrive_and_wait();
                for (bool done = false; !done;) {
                    done = true;
                    for (uint32_t w = 0; w < 2; ++w) {
                        const uint32_t n = published[w].load(std::memory_order_acquire);
                        done = done && n == kKeys / 2;
                        if (n > 0) {  // published: must be found, whole
                            const uint32_t k = 2 * static_cast<uint32_t>(pick() % n) + w;
                            const auto f = cache.find(key_of(k), hash(k));
                            checked.fetch_add(1, std::memory_order_relaxed);
                            if (!f)
                                missed.fetch_add(1);
                            else if (f->value != value_of(k, version) || f->flag != (k % 3 == 0))
                                torn.fetch_add(1);
                        }
                        if (n < kKeys / 2) {  // being put, perhaps: a miss or the whole value
                            const uint32_t k = 2 * n + w;
                            const auto f = cache.find(key_of(k), hash(k));
                            if (f && (f->value != value_of(k, version) || f->flag != (k % 3 == 0)))
                                torn.fetch_add(1);
                        }
                    }
                }
            });
        for (auto& t : threads) t.join();
        for (uint32_t k = 0; k < kKeys; ++k) ASSERT_TRUE(cache.find(key_of(k), hash(k))) << k;
    }
    EXPECT_EQ(missed.load(), 0u) << "of " << checked.load() << " lookups of published keys";
    EXPECT_EQ(torn.load(), 0u);
    EXPECT_GT(checked.load(), 0u);
}
