#include <barrel/block/sender_cache.hpp>
#include <barrel/core/keyed_hash.hpp>
#include <barrel/core/zeroed_pages.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <type_traits>

namespace barrel::block {

namespace {
constexpr size_t kShards = 64;  // enough that 16 threads rarely meet on one lock

uint64_t load64(const Hash& h, size_t offset) noexcept {
    uint64_t v;
    std::memcpy(&v, h.data() + offset, sizeof v);
    return v;
}

/// Keys are keccak outputs; bytes 8..16 pick the shard, bytes 0..8 the slot within it.
size_t shard_index(const Hash& h) noexcept { return load64(h, 8) % kShards; }

/// The slot a key starts probing from (a multiply-xorshift mix of bytes 0..8 and the process
/// seed). Transaction hashes are keccak outputs, but their sender picks the bytes: without a
/// secret, grinding a few thousand signatures would put every transaction of a block on one
/// probe chain.
size_t home_slot(const Hash& h, size_t mask) noexcept {
    uint64_t x = load64(h, 0) ^ process_seed();
    x *= 0x9e3779b97f4a7c15ull;
    x ^= x >> 32;
    return static_cast<size_t>(x) & mask;
}

/// One slot of the open-addressing table: key and value in one cache line, so a lookup costs
/// one memory access where a node-based map costs three (bucket, previous node, node). All-zero
/// bytes are an unused slot, so the table starts as fresh zero pages.
struct alignas(64) Entry {
    Hash key;
    Address sender;
    bool used;
};
static_assert(sizeof(Entry) == 64 && std::is_trivially_copyable_v<Entry>);

/// Slots per shard: a power of two, at least twice the shard's capacity (load factor ≤ 1/2).
size_t slots_per_shard(size_t shard_capacity) {
    // Far beyond any memory, and it keeps the arithmetic below from overflowing.
    if (shard_capacity > (size_t{1} << 40)) throw std::bad_alloc{};
    return std::bit_ceil(std::max<size_t>(16, 2 * shard_capacity));
}
}  // namespace

/// A shard's linear-probing table is a fixed region of the cache's one mapping, so there is no
/// growth, no rehash, and prefetch() can compute a slot's address without reading the shard.
/// Deletes shift entries back, so no tombstones accumulate under FIFO eviction.
struct alignas(64) SenderCache::Shard {
    std::mutex mutex;
    Entry* table{nullptr};  ///< mask + 1 slots
    size_t mask{0};
    size_t count{0};
    std::vector<Hash> fifo;  ///< ring of keys in insertion order
    size_t next{0};          ///< ring slot to overwrite next
    uint64_t hits{0}, misses{0}, insertions{0}, evictions{0};

    /// The slot holding `key`, or the empty slot where it would go.
    size_t probe(const Hash& key) const noexcept {
        for (size_t i = home_slot(key, mask);; i = (i + 1) & mask)
            if (!table[i].used || table[i].key == key) return i;
    }

    const Entry* find(const Hash& key) const noexcept {
        const Entry& e = table[probe(key)];
        return e.used ? &e : nullptr;
    }

    void erase(const Hash& key) noexcept {
        size_t hole = probe(key);
        if (!table[hole].used) return;
        // Backward shift: pull later entries of the probe run into the hole unless that would
        // move one before its home slot.
        for (size_t j = (hole + 1) & mask; table[j].used; j = (j + 1) & mask) {
            const size_t home = home_slot(table[j].key, mask);
            const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                table[hole] = table[j];
                hole = j;
            }
        }
        table[hole].used = false;
        --count;
    }
};

SenderCache::SenderCache(size_t capacity)
    : m_shards{std::make_unique<Shard[]>(kShards)},
      m_shard_capacity{std::max<size_t>(1, capacity / kShards + (capacity % kShards != 0))},
      m_slot_mask{slots_per_shard(m_shard_capacity) - 1},
      m_table{std::make_unique<ZeroedPages>(kShards * (m_slot_mask + 1) * sizeof(Entry))} {
    // The mapping's zero bytes are unused slots (Entry is an implicit-lifetime type).
    auto* slots = static_cast<Entry*>(m_table->data());
    for (size_t i = 0; i < kShards; ++i) {
        m_shards[i].table = slots + i * (m_slot_mask + 1);
        m_shards[i].mask = m_slot_mask;
    }
}

SenderCache::~SenderCache() = default;

SenderCache::Shard& SenderCache::shard_of(const Hash& tx_hash) noexcept {
    return m_shards[shard_index(tx_hash)];
}

void SenderCache::prefetch(const Hash& tx_hash) const noexcept {
    const size_t shard = shard_index(tx_hash);
    __builtin_prefetch(&m_shards[shard].mutex, 1);  // find() will write it: ask for the line exclusive
    const size_t slot = shard * (m_slot_mask + 1) + home_slot(tx_hash, m_slot_mask);
    __builtin_prefetch(static_cast<const Entry*>(m_table->data()) + slot);
}

std::optional<Address> SenderCache::find(const Hash& tx_hash) noexcept {
    Shard& s = shard_of(tx_hash);
    std::lock_guard lock{s.mutex};
    const Entry* e = s.find(tx_hash);
    if (e == nullptr) {
        ++s.misses;
        return std::nullopt;
    }
    ++s.hits;
    return e->sender;
}

void SenderCache::insert(const Hash& tx_hash, const Address& sender) {
    Shard& s = shard_of(tx_hash);
    std::lock_guard lock{s.mutex};
    if (s.find(tx_hash) != nullptr) return;  // same hash means same bytes, hence the same sender
    ++s.insertions;
    if (s.fifo.size() < m_shard_capacity) {
        s.fifo.push_back(tx_hash);
    } else {
        s.erase(s.fifo[s.next]);
        ++s.evictions;
        s.fifo[s.next] = tx_hash;
        s.next = (s.next + 1) % m_shard_capacity;
    }
    Entry& e = s.table[s.probe(tx_hash)];
    e.key = tx_hash;
    e.sender = sender;
    e.used = true;
    ++s.count;
}

void SenderCache::clear() {
    // Every shard is locked at once (in index order; other calls hold one lock at a time), so the
    // whole mapping can be handed back to the system in one call.
    for (size_t i = 0; i < kShards; ++i) m_shards[i].mutex.lock();
    m_table->reset();
    for (size_t i = 0; i < kShards; ++i) {
        Shard& s = m_shards[i];
        s.count = 0;
        s.fifo.clear();
        s.fifo.shrink_to_fit();
        s.next = 0;
    }
    for (size_t i = kShards; i-- > 0;) m_shards[i].mutex.unlock();
}

SenderCache::Stats SenderCache::stats() const {
    Stats out;
    for (size_t i = 0; i < kShards; ++i) {
        Shard& s = m_shards[i];
        std::lock_guard lock{s.mutex};
        out.hits += s.hits;
        out.misses += s.misses;
        out.insertions += s.insertions;
        out.evictions += s.evictions;
        out.size += s.count;
    }
    return out;
}

size_t SenderCache::capacity() const noexcept { return m_shard_capacity * kShards; }

}  // namespace barrel::block
