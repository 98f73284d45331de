#pragma once
/// @file
/// A fixed-size, set-associative cache of small entries (key and value together at most 60
/// bytes) that any number of threads read while others write, with reads that write nothing.
///
/// Why not a map under a reader lock: the store's state cache is read ~5,000 times per block
/// right after a commit has flushed the CPU caches. A node-based map under a shared_mutex paid
/// four dependent cache misses per read there (lock word, bucket, previous node, node; and the
/// lock's atomic read-modify-write stops the core from overlapping one read's misses with the
/// next). Here an entry is one 64-byte line with its own sequence word (a seqlock): a read is
/// plain loads of one set of adjacent lines and a re-check of the sequence word.
///
/// Memory is bounded (the capacity is fixed at construction, pages are touched only when first
/// written) and an insert into a full set replaces one of its entries at random, like a CPU
/// cache: a cache, not a store, so every caller must be able to fetch an entry it does not find.
/// A read that meets a write in progress on its entry reports a miss rather than waiting.
///
/// Writers take a per-set lock (striped), so a key is never in two ways of a set at once.
///
/// Neither reads nor writes load from a page of the table no entry was ever written to
/// (ZeroedPages::written): a set there is empty, and the load would map the zero page, making the
/// first write a copy-on-write fault (core/zeroed_pages.hpp).

#include "core/zeroed_pages.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <span>

namespace barrel {

template <size_t KeyBytes, size_t ValueBytes>
class SeqlockCache {
    static_assert(KeyBytes > 0 && KeyBytes + ValueBytes <= 60,
                  "an entry is one 64-byte line with a 4-byte sequence word");
    // Payload bytes 56..59 share the last word with the sequence word, in its low half.
    static_assert(std::endian::native == std::endian::little,
                  "the line layout assumes little-endian words");
    // Otherwise reads would take libatomic's locks, and a 29-bit sequence count (a reader would
    // have to stall across 2^29 writes to one entry to be fooled) would be the least concern.
    static_assert(std::atomic_ref<uint64_t>::is_always_lock_free, "reads must be plain loads");

public:
    using Key = std::span<const uint8_t, KeyBytes>;
    using Value = std::array<uint8_t, ValueBytes>;
    /// A value and the caller's one-bit flag stored with it (the store marks absent accounts).
    struct Found {
        Value value;
        bool flag;
    };

    static constexpr size_t kWays = 4;
    static constexpr size_t kEntryBytes = 64;

    /// At most `bytes` of entries (at least one set); the table is allocated zeroed and lazily, on
    /// huge pages once it is in use (core/zeroed_pages.hpp: lookups land on random pages, and
    /// with 4 KiB pages each read after a commit also missed the TLB; docs/benchmarks.md,
    /// "Account cache"). Throws std::bad_alloc if the system will not map that much.
    explicit SeqlockCache(size_t bytes) : m_memory{table_bytes(bytes)} {
        m_set_mask = m_memory.size() / (kWays * kEntryBytes) - 1;
        m_words = static_cast<uint64_t*>(m_memory.data());
    }
    SeqlockCache(const SeqlockCache&) = delete;
    SeqlockCache& operator=(const SeqlockCache&) = delete;

    size_t capacity() const noexcept { return (m_set_mask + 1) * kWays; }

    /// Whether the table has been moved to huge pages (core/zeroed_pages.hpp).
    bool on_huge_pages() const noexcept { return m_memory.huge_pages_asked(); }

    /// The entry for `key` (whose well-mixed hash is `hash`), or nullopt: not cached, or being
    /// rewritten at this moment.
    std::optional<Found> find(Key key, uint64_t hash) const noexcept {
        const uint64_t* set = set_of(hash);
        if (!m_memory.written(set)) return std::nullopt;  // a set lies within one page
        for (size_t way = 0; way < kWays; ++way) {
            uint64_t line[kWordsPerEntry];
            if (!read(set + way * kWordsPerEntry, line)) continue;
            if (std::memcmp(line, key.data(), KeyBytes) != 0) continue;
            Found f;
            std::memcpy(f.value.data(), reinterpret_cast<const uint8_t*>(line) + KeyBytes,
                        ValueBytes);
            f.flag = (meta_of(line[kMetaWord]) & kFlag) != 0;
            return f;
        }
        return std::nullopt;
    }

    /// Stores `key` → (value, flag), replacing the key's entry or, in a full set, a random one.
    void put(Key key, uint64_t hash, const Value& value, bool flag) noexcept {
        put_if(key, hash, value, flag, [] { return true; });
    }

    /// put, but only if `allow()` (called with the set locked) says so; returns whether it stored.
    /// Lets a caller make "store this unless something changed since I read it" atomic with
    /// respect to other writers of the same set.
    template <class Allow>
    bool put_if(Key key, uint64_t hash, const Value& value, bool flag, Allow&& allow) noexcept {
        uint64_t* set = set_of(hash);
        std::lock_guard lock{m_locks[(hash & m_set_mask) % kLocks].mutex};
        if (!allow()) return false;
        // Under the set lock no other writer changes these entries: relaxed loads suffice. In a
        // page never written every way is empty, and is not loaded (the first store must find
        // the page unmapped, not mapped to the zero page).
        const bool fresh = !m_memory.written(set);
        uint64_t last_words[kWays] = {};  // each way's sequence word, as write() needs it
        size_t target = kWays;            // the way holding `key`, else the first empty one
        size_t empty = fresh ? 0 : kWays;
        for (size_t way = 0; way < kWays && !fresh; ++way) {
            const uint64_t* e = set + way * kWordsPerEntry;
            last_words[way] = word(e, kMetaWord).load(std::memory_order_relaxed);
            const uint32_t meta = meta_of(last_words[way]);
            if ((meta & kUsed) == 0) {
                empty = std::min(empty, way);
                continue;
            }
            uint64_t line[kWordsPerEntry];
            for (size_t w = 0; w < kWordsPerEntry; ++w)
                line[w] = word(e, w).load(std::memory_order_relaxed);
            if (std::memcmp(line, key.data(), KeyBytes) == 0) {
                target = way;
                break;
            }
        }
        if (target == kWays && empty != kWays) {
            target = empty;
            m_memory.count_fill();
        }
        if (target == kWays) {
            // No empty way and no entry of this key: replace one at random.
            thread_local uint64_t state =
                0x9e3779b97f4a7c15ull ^ reinterpret_cast<uintptr_t>(&state);
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            target = state % kWays;
        }
        write(set + target * kWordsPerEntry, last_words[target], key, value, flag);
        m_memory.mark_written(set);  // after the first store, before the lock's release
        return true;
    }

    /// Empties every entry. Readers meanwhile see entries vanish, never torn ones.
    void clear() noexcept {
        for (size_t s = 0; s <= m_set_mask; ++s) {
            std::lock_guard lock{m_locks[s % kLocks].mutex};
            if (!m_memory.written(m_words + s * kWays * kWordsPerEntry)) continue;  // never used
            for (size_t way = 0; way < kWays; ++way) {
                auto meta_word = word(m_words + (s * kWays + way) * kWordsPerEntry, kMetaWord);
                const uint64_t old = meta_word.load(std::memory_order_relaxed);
                if ((meta_of(old) & kUsed) == 0) continue;
                // A new sequence number with the used bit clear: a reader that copied the old
                // entry sees the sequence change and discards its copy.
                meta_word.store(uint64_t{next_sequence(meta_of(old))} << 32,
                                std::memory_order_release);
            }
        }
    }

private:
    static constexpr size_t kWordsPerEntry = kEntryBytes / sizeof(uint64_t);
    static constexpr size_t kMetaWord = kWordsPerEntry - 1;  ///< low half: payload bytes 56..59
    // The sequence word (the high 32 bits of the last word of a line).
    static constexpr uint32_t kWriting = 1;  ///< a write is in progress: readers miss
    static constexpr uint32_t kUsed = 2;
    static constexpr uint32_t kFlag = 4;
    static constexpr uint32_t kSequenceStep = 8;  ///< the rest counts writes to the entry
    static constexpr size_t kLocks = 256;

    struct alignas(64) Lock {
        std::mutex mutex;
    };

    static std::atomic_ref<uint64_t> word(const uint64_t* entry, size_t w) noexcept {
        return std::atomic_ref<uint64_t>{*const_cast<uint64_t*>(entry + w)};
    }
    static uint32_t meta_of(uint64_t last_word) noexcept {
        return static_cast<uint32_t>(last_word >> 32);
    }
    static uint32_t next_sequence(uint32_t meta) noexcept {
        return (meta & ~(kSequenceStep - 1)) + kSequenceStep;
    }

    uint64_t* set_of(uint64_t hash) const noexcept {
        return m_words + (hash & m_set_mask) * kWays * kWordsPerEntry;
    }

    /// Copies a used entry that no write touched meanwhile into `line`; false otherwise.
    static bool read(const uint64_t* entry, uint64_t (&line)[kWordsPerEntry]) noexcept {
        const uint64_t before = word(entry, kMetaWord).load(std::memory_order_acquire);
        const uint32_t meta = meta_of(before);
        if ((meta & kUsed) == 0 || (meta & kWriting) != 0) return false;
        // Acquire loads (plain loads on x86) instead of the textbook relaxed loads and fence: the
        // re-check below cannot move before them, and a copy that read any word of a newer write
        // synchronises with it, so the re-check sees at least that write's kWriting.
        // ThreadSanitizer follows this; it does not follow fences.
        for (size_t w = 0; w < kMetaWord; ++w)
            line[w] = word(entry, w).load(std::memory_order_acquire);
        line[kMetaWord] = before;
        return word(entry, kMetaWord).load(std::memory_order_relaxed) == before;
    }

    /// Rewrites one entry whose sequence word is `old`; the caller holds its set's lock. Stores
    /// only: the first access to a page never written must be a store.
    static void write(uint64_t* entry, uint64_t old, Key key, const Value& value,
                      bool flag) noexcept {
        auto meta_word = word(entry, kMetaWord);
        meta_word.store(old | (uint64_t{kWriting} << 32), std::memory_order_relaxed);
        uint64_t line[kWordsPerEntry] = {};
        std::memcpy(line, key.data(), KeyBytes);
        std::memcpy(reinterpret_cast<uint8_t*>(line) + KeyBytes, value.data(), ValueBytes);
        // Release stores: a reader whose (acquire) copy reads one of them also sees kWriting.
        for (size_t w = 0; w < kMetaWord; ++w)
            word(entry, w).store(line[w], std::memory_order_release);
        const uint32_t meta = next_sequence(meta_of(old)) | kUsed | (flag ? kFlag : 0);
        meta_word.store((uint64_t{meta} << 32) | static_cast<uint32_t>(line[kMetaWord]),
                        std::memory_order_release);
    }

    /// sets * kWays * kEntryBytes for the largest power-of-two number of sets that fits in `bytes`.
    static size_t table_bytes(size_t bytes) noexcept {
        size_t sets = 1;
        while (sets <= bytes / (2 * kWays * kEntryBytes)) sets *= 2;  // no overflow for any `bytes`
        return sets * kWays * kEntryBytes;
    }

    ZeroedPages m_memory;
    uint64_t* m_words{nullptr};
    size_t m_set_mask{0};
    mutable Lock m_locks[kLocks];
};

}  // namespace barrel
