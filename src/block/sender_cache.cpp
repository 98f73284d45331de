#include <barrel/block/sender_cache.hpp>

#include "core/keyed_hash.hpp"
#include "core/zeroed_pages.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <new>

namespace barrel::block {

namespace {
constexpr size_t kShards = 64;  // enough that 16 threads rarely meet on one lock

uint64_t load64(const uint8_t* p) noexcept {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

/// Keys are keccak outputs; bytes 8..16 pick the shard, bytes 0..8 the slot within it.
size_t shard_index(const Hash& h) noexcept { return load64(h.data() + 8) % kShards; }

/// The slot a key starts probing from (a multiply-xorshift mix of bytes 0..8 and the process
/// seed). Transaction hashes are keccak outputs, but their sender picks the bytes: without a
/// secret, grinding a few thousand signatures would put every transaction of a block on one
/// probe chain.
size_t home_slot(const Hash& h, size_t mask) noexcept {
    uint64_t x = load64(h.data()) ^ process_seed();
    x *= 0x9e3779b97f4a7c15ull;
    x ^= x >> 32;
    return static_cast<size_t>(x) & mask;
}

// One slot of the open-addressing table is one 64-byte line of eight words, so a lookup costs one
// memory access where a node-based map costs three (bucket, previous node, node): words 0..3 the
// key, 4..5 sender bytes 0..15, the low half of word 6 sender bytes 16..19, bit 32 of word 6
// "used". All-zero words are an unused slot, so the table starts as fresh zero pages. Lookups read
// the words while a writer may be changing them, so every access is atomic (plain moves on x86).
constexpr size_t kSlotWords = 8;
constexpr size_t kTailWord = 6;
constexpr uint64_t kUsed = uint64_t{1} << 32;
static_assert(std::atomic_ref<uint64_t>::is_always_lock_free, "lookups must be plain loads");
static_assert(std::endian::native == std::endian::little,
              "the slot layout assumes little-endian words");

std::atomic_ref<uint64_t> word(uint64_t* slot, size_t w) noexcept {
    return std::atomic_ref<uint64_t>{slot[w]};
}

/// A slot's contents as plain values.
struct SlotCopy {
    uint64_t words[kTailWord + 1];

    bool used() const noexcept { return (words[kTailWord] & kUsed) != 0; }
    bool holds(const Hash& key) const noexcept {
        return std::memcmp(words, key.data(), sizeof(Hash)) == 0;
    }
    Address sender() const noexcept {
        Address a;
        std::memcpy(a.data(), &words[4], sizeof(Address));
        return a;
    }
    static SlotCopy of(const Hash& key, const Address& sender) noexcept {
        SlotCopy c{};
        std::memcpy(c.words, key.data(), sizeof(Hash));
        std::memcpy(&c.words[4], sender.data(), sizeof(Address));
        c.words[kTailWord] |= kUsed;
        return c;
    }
};

/// Slots per shard: a power of two, at least twice the shard's capacity (load factor ≤ 1/2).
size_t slots_per_shard(size_t shard_capacity) {
    // Far beyond any memory, and it keeps the arithmetic below from overflowing.
    if (shard_capacity > (size_t{1} << 40)) throw std::bad_alloc{};
    return std::bit_ceil(std::max<size_t>(16, 2 * shard_capacity));
}

/// Lookups count their hits and misses here, in the stripe of the calling thread, so that a
/// lookup writes nothing another thread reads (a shared counter's line would bounce between
/// cores on every lookup). Relaxed increments of a line only this thread usually touches.
constexpr size_t kCounterStripes = 64;
struct alignas(64) LookupCounter {
    std::atomic<uint64_t> hits{0};
    std::atomic<uint64_t> misses{0};
};

size_t this_thread_stripe() noexcept {
    static std::atomic<size_t> next{0};
    thread_local const size_t stripe =
        next.fetch_add(1, std::memory_order_relaxed) % kCounterStripes;
    return stripe;
}
}  // namespace

struct SenderCache::LookupCounters {
    LookupCounter stripes[kCounterStripes];
};

/// A shard's linear-probing table is a fixed region of the cache's one mapping, so there is no
/// growth, no rehash, and prefetch() can compute a slot's address without reading the shard.
/// Deletes shift entries back, so no tombstones accumulate under FIFO eviction.
///
/// Writers hold the mutex; lookups take no lock. `version` is a seqlock over the whole shard: odd
/// while a writer changes its table. A lookup notes an even version, probes, and trusts what it
/// read only if the version is still the same afterwards; otherwise (a write was under way: rare,
/// inserts come ~50 µs of recovery apart and spread over 64 shards) it probes again under the
/// mutex. So a lookup never returns a torn or moved entry, and never misses a key that was in the
/// table throughout.
///
/// Memory order (as in core/seqlock_cache.hpp): writers store `version` odd, then the slots with
/// release stores, then `version` even with a release store; lookups load `version` with acquire,
/// the slots with acquire loads, and `version` again. A lookup that read any word of a write in
/// progress synchronises with that release store, so its second load sees the odd version (or a
/// later one) and the copy is discarded. ThreadSanitizer follows this; it does not follow fences.
///
/// No slot of a page never written is loaded, by lookups or by writers (ZeroedPages::written:
/// such a slot is unused, and the load would map the zero page, making the insert's first store
/// a copy-on-write fault; core/zeroed_pages.hpp). write() marks the page after its stores and
/// before end_write, so a lookup whose first `version` load reads that end_write sees the mark.
struct alignas(64) SenderCache::Shard {
    // What a lookup reads first, together in the line prefetch() fetches (a 40-byte mutex in
    // front of them would push `pages` or `mask` into the next line, one more miss per lookup
    // after a commit has swept the caches).
    std::atomic<uint64_t> version{0};
    uint64_t* table{nullptr};     ///< (mask + 1) * kSlotWords words
    ZeroedPages* pages{nullptr};  ///< the mapping `table` lies in
    size_t mask{0};
    std::mutex mutex;  ///< serialises writers
    size_t count{0};
    std::vector<Hash> fifo;  ///< ring of keys in insertion order
    size_t next{0};          ///< ring slot to overwrite next
    uint64_t insertions{0}, evictions{0};

    uint64_t* slot(size_t i) const noexcept { return table + i * kSlotWords; }

    /// A copy of slot i. Lookups without the mutex load with acquire (see above); a writer under
    /// the mutex, which no other thread changes the table against, may load relaxed.
    SlotCopy read(size_t i, std::memory_order order) const noexcept {
        uint64_t* s = slot(i);
        if (!pages->written(s)) return SlotCopy{};  // unused, and left unmapped
        SlotCopy c;
        // The tail first: an unused slot ends the probe without reading the rest.
        c.words[kTailWord] = word(s, kTailWord).load(order);
        if (!c.used()) return c;
        for (size_t w = 0; w < kTailWord; ++w) c.words[w] = word(s, w).load(order);
        return c;
    }

    void write(size_t i, const SlotCopy& c) noexcept {
        uint64_t* s = slot(i);
        for (size_t w = 0; w <= kTailWord; ++w)
            word(s, w).store(c.words[w], std::memory_order_release);
        pages->mark_written(s);
    }

    /// The slot holding `key`, or the empty slot where it would go. Under the mutex only.
    size_t probe(const Hash& key) const noexcept {
        for (size_t i = home_slot(key, mask);; i = (i + 1) & mask) {
            const SlotCopy c = read(i, std::memory_order_relaxed);
            if (!c.used() || c.holds(key)) return i;
        }
    }

    /// The lookup without the mutex: true with `found` set when nothing changed the shard during
    /// the probe, false when the caller must look again under the mutex.
    bool find_unlocked(const Hash& key, std::optional<Address>& found) const noexcept {
        const uint64_t before = version.load(std::memory_order_acquire);
        if ((before & 1) != 0) return false;
        found.reset();
        bool ended = false;
        // A probe run is at most half the table; a longer one means the table changed under us.
        for (size_t i = home_slot(key, mask), n = 0; n <= mask && !ended; i = (i + 1) & mask, ++n) {
            const SlotCopy c = read(i, std::memory_order_acquire);
            if (!c.used()) {
                ended = true;
            } else if (c.holds(key)) {
                found = c.sender();
                ended = true;
            }
        }
        return ended && version.load(std::memory_order_relaxed) == before;
    }

    std::optional<Address> find_locked(const Hash& key) const noexcept {
        const SlotCopy c = read(probe(key), std::memory_order_relaxed);
        if (!c.used()) return std::nullopt;
        return c.sender();
    }

    /// Brackets a change of the table (under the mutex; only writers store `version`).
    void begin_write() noexcept {
        version.store(version.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    void end_write() noexcept {
        version.store(version.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }

    void erase(const Hash& key) noexcept {
        size_t hole = probe(key);
        if (!read(hole, std::memory_order_relaxed).used()) return;
        // Backward shift: pull later entries of the probe run into the hole unless that would
        // move one before its home slot.
        for (size_t j = (hole + 1) & mask;; j = (j + 1) & mask) {
            const SlotCopy c = read(j, std::memory_order_relaxed);
            if (!c.used()) break;
            Hash k;
            std::memcpy(k.data(), c.words, sizeof k);
            const size_t home = home_slot(k, mask);
            const bool movable =
                hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                write(hole, c);
                hole = j;
            }
        }
        write(hole, SlotCopy{});
        --count;
    }
};

SenderCache::SenderCache(size_t capacity)
    : m_shards{std::make_unique<Shard[]>(kShards)},
      m_shard_capacity{std::max<size_t>(1, capacity / kShards + (capacity % kShards != 0))},
      m_slot_mask{slots_per_shard(m_shard_capacity) - 1},
      m_table{std::make_unique<ZeroedPages>(kShards * (m_slot_mask + 1) * kSlotWords *
                                            sizeof(uint64_t))},
      m_lookups{std::make_unique<LookupCounters>()} {
    // The mapping's zero words are unused slots.
    auto* words = static_cast<uint64_t*>(m_table->data());
    for (size_t i = 0; i < kShards; ++i) {
        m_shards[i].table = words + i * (m_slot_mask + 1) * kSlotWords;
        m_shards[i].mask = m_slot_mask;
        m_shards[i].pages = m_table.get();
    }
}

SenderCache::~SenderCache() = default;

SenderCache::Shard& SenderCache::shard_of(const Hash& tx_hash) noexcept {
    return m_shards[shard_index(tx_hash)];
}

void SenderCache::prefetch(const Hash& tx_hash) const noexcept {
    const size_t shard = shard_index(tx_hash);
    __builtin_prefetch(&m_shards[shard].version);
    const size_t slot = shard * (m_slot_mask + 1) + home_slot(tx_hash, m_slot_mask);
    __builtin_prefetch(static_cast<const uint64_t*>(m_table->data()) + slot * kSlotWords);
}

std::optional<Address> SenderCache::peek(const Hash& tx_hash) const noexcept {
    Shard& s = m_shards[shard_index(tx_hash)];
    std::optional<Address> found;
    if (!s.find_unlocked(tx_hash, found)) {
        std::lock_guard lock{s.mutex};
        found = s.find_locked(tx_hash);
    }
    return found;
}

std::optional<Address> SenderCache::find(const Hash& tx_hash) noexcept {
    const std::optional<Address> found = peek(tx_hash);
    LookupCounter& c = m_lookups->stripes[this_thread_stripe()];
    (found ? c.hits : c.misses).fetch_add(1, std::memory_order_relaxed);
    return found;
}

void SenderCache::insert(const Hash& tx_hash, const Address& sender) {
    Shard& s = shard_of(tx_hash);
    std::lock_guard lock{s.mutex};
    const size_t target = s.probe(tx_hash);
    if (s.read(target, std::memory_order_relaxed).used())
        return;  // same hash means same bytes, hence the same sender
    if (s.fifo.size() < m_shard_capacity) {
        s.fifo.push_back(tx_hash);  // before the table changes: if it throws, nothing did
        m_table->count_fill();      // one more slot in use (core/zeroed_pages.hpp)
        s.begin_write();
    } else {
        s.begin_write();
        s.erase(s.fifo[s.next]);  // the ring slot to overwrite holds the oldest key
        ++s.evictions;
        s.fifo[s.next] = tx_hash;
        s.next = (s.next + 1) % m_shard_capacity;
    }
    ++s.insertions;
    s.write(s.probe(tx_hash), SlotCopy::of(tx_hash, sender));
    ++s.count;
    s.end_write();
}

void SenderCache::clear() {
    // Every shard is locked at once (in index order; other calls hold one lock at a time), so the
    // whole mapping can be handed back to the system in one call. Each shard's version is odd
    // meanwhile: a lookup racing the reset discards what it read and waits for the lock.
    for (size_t i = 0; i < kShards; ++i) {
        m_shards[i].mutex.lock();
        m_shards[i].begin_write();
    }
    m_table->reset();
    for (size_t i = 0; i < kShards; ++i) {
        Shard& s = m_shards[i];
        s.count = 0;
        s.fifo.clear();
        s.fifo.shrink_to_fit();
        s.next = 0;
    }
    for (size_t i = kShards; i-- > 0;) {
        m_shards[i].end_write();
        m_shards[i].mutex.unlock();
    }
}

SenderCache::Stats SenderCache::stats() const {
    Stats out;
    for (const LookupCounter& c : m_lookups->stripes) {
        out.hits += c.hits.load(std::memory_order_relaxed);
        out.misses += c.misses.load(std::memory_order_relaxed);
    }
    for (size_t i = 0; i < kShards; ++i) {
        Shard& s = m_shards[i];
        std::lock_guard lock{s.mutex};
        out.insertions += s.insertions;
        out.evictions += s.evictions;
        out.size += s.count;
    }
    return out;
}

size_t SenderCache::capacity() const noexcept { return m_shard_capacity * kShards; }

}  // namespace barrel::block
