#include <barrel/block/sender_cache.hpp>
#include <barrel/core/keyed_hash.hpp>

#include <algorithm>
#include <cstring>

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
/// one memory access where a node-based map costs three (bucket, previous node, node).
struct alignas(64) Entry {
    Hash key;
    Address sender;
    bool used{false};
};
}  // namespace

/// A linear-probing table that grows up to twice the shard's capacity (load factor ≤ 1/2) and
/// deletes by backward shift, so no tombstones accumulate under FIFO eviction.
struct alignas(64) SenderCache::Shard {
    std::mutex mutex;
    std::vector<Entry> table;  ///< size 0 or a power of two
    size_t count{0};
    std::vector<Hash> fifo;  ///< ring of keys in insertion order
    size_t next{0};          ///< ring slot to overwrite next
    uint64_t hits{0}, misses{0}, insertions{0}, evictions{0};

    /// table.data() and table.size() - 1 for prefetch(), which reads them without the lock; on a
    /// line of their own, so reading them does not pull the line every lookup locks.
    alignas(64) std::atomic<uintptr_t> table_address{0};
    std::atomic<size_t> table_mask{0};

    /// Called with the lock held whenever `table` is replaced.
    void publish_table() noexcept {
        table_address.store(reinterpret_cast<uintptr_t>(table.data()), std::memory_order_relaxed);
        table_mask.store(table.empty() ? 0 : table.size() - 1, std::memory_order_relaxed);
    }

    /// The slot holding `key`, or the empty slot where it would go.
    size_t probe(const Hash& key) const noexcept {
        const size_t mask = table.size() - 1;
        for (size_t i = home_slot(key, mask);; i = (i + 1) & mask)
            if (!table[i].used || table[i].key == key) return i;
    }

    const Entry* find(const Hash& key) const noexcept {
        if (table.empty()) return nullptr;
        const Entry& e = table[probe(key)];
        return e.used ? &e : nullptr;
    }

    /// Makes room for one more entry: doubles the table past a load factor of one half.
    void reserve_one() {
        if (2 * (count + 1) <= table.size()) return;
        std::vector<Entry> old = std::move(table);
        table.assign(std::max<size_t>(16, 2 * old.size()), Entry{});
        for (const Entry& e : old)
            if (e.used) table[probe(e.key)] = e;
        publish_table();
    }

    void erase(const Hash& key) noexcept {
        if (table.empty()) return;
        const size_t mask = table.size() - 1;
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
      m_shard_capacity{std::max<size_t>(1, (capacity + kShards - 1) / kShards)} {}

SenderCache::~SenderCache() = default;

SenderCache::Shard& SenderCache::shard_of(const Hash& tx_hash) noexcept {
    return m_shards[shard_index(tx_hash)];
}

void SenderCache::prefetch(const Hash& tx_hash) const noexcept {
    const Shard& s = m_shards[shard_index(tx_hash)];
    __builtin_prefetch(&s.mutex, 1);  // find() will write it: ask for the line exclusive
    // Read without the lock, address and mask may belong to a table an insert has just
    // replaced; prefetching such an address cannot fault, it only fetches a line for nothing.
    const uintptr_t table = s.table_address.load(std::memory_order_relaxed);
    if (table == 0) return;
    const size_t slot = home_slot(tx_hash, s.table_mask.load(std::memory_order_relaxed));
    __builtin_prefetch(reinterpret_cast<const void*>(table + slot * sizeof(Entry)));
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
    s.reserve_one();
    Entry& e = s.table[s.probe(tx_hash)];
    e.key = tx_hash;
    e.sender = sender;
    e.used = true;
    ++s.count;
}

void SenderCache::clear() {
    for (size_t i = 0; i < kShards; ++i) {
        Shard& s = m_shards[i];
        std::lock_guard lock{s.mutex};
        s.table.clear();
        s.table.shrink_to_fit();
        s.publish_table();
        s.count = 0;
        s.fifo.clear();
        s.next = 0;
    }
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
