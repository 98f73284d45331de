#pragma once
/// @file
/// A bounded, thread-safe map from transaction hash to recovered sender, filled when a
/// transaction is verified (and by a transaction pool when it admits one), consulted before the
/// ~50 µs secp256k1 recovery.
///
/// Exactness: the key is keccak256 of the transaction's complete signed encoding, so a hit is only
/// possible for identical bytes; any change to any field, the signature included, is a new key.
///
/// Eviction is first-in first-out per shard. Blocks arrive in order and a transaction is included
/// at most once, so the entries least likely to be needed again are the oldest ones; FIFO needs no
/// bookkeeping on lookup (unlike LRU), which keeps hits cheap under contention.

#include <barrel/core/bytes.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace barrel {
class ZeroedPages;
}

namespace barrel::block {

class SenderCache {
public:
    struct Stats {
        uint64_t hits{0};
        uint64_t misses{0};
        uint64_t insertions{0};
        uint64_t evictions{0};
        size_t size{0};
    };

    /// A transaction pool's worth (and about 26 blocks of 2,500 transactions).
    static constexpr size_t kDefaultCapacity = size_t{1} << 16;

    /// Holds at most `capacity` entries (rounded up to a multiple of the shard count). The table
    /// is sized for that capacity at construction, two to four 64-byte slots per entry (two for a
    /// power of two of at least 1,024: 8 MiB for the default); its pages are mapped when first
    /// written, on huge pages once it is in use (core/zeroed_pages.hpp). Throws std::bad_alloc if
    /// the system will not map that much.
    explicit SenderCache(size_t capacity = kDefaultCapacity);
    ~SenderCache();
    SenderCache(const SenderCache&) = delete;
    SenderCache& operator=(const SenderCache&) = delete;

    /// The cached sender of the transaction with this hash; counts a hit or a miss. Takes no lock
    /// and writes nothing another thread reads, so lookups from many threads scale; one that
    /// overlaps a write to its shard looks again under the shard's lock (never a torn entry, never
    /// a miss of a key that stayed cached).
    std::optional<Address> find(const Hash& tx_hash) noexcept;

    /// find, counted as neither a hit nor a miss: a transaction pool's look before it recovers a
    /// sender itself (a block's verify stage may have recovered it first, when the block came
    /// before the transaction's gossip), so that the hit counts stay the verify stage's alone.
    std::optional<Address> peek(const Hash& tx_hash) const noexcept;

    /// Starts loading the memory that find(tx_hash) will read, without waiting for it. A cache
    /// the size of a transaction pool is out of the CPU caches when a block arrives (the previous
    /// commit evicted it), and each lookup then waits on memory; a loop that prefetches
    /// a few hashes ahead overlaps those waits. Thread-safe; changes nothing.
    void prefetch(const Hash& tx_hash) const noexcept;

    /// Records a verified sender; evicts the shard's oldest entry when the shard is full.
    void insert(const Hash& tx_hash, const Address& sender);

    /// Drops every entry and gives the table's pages back to the system (counters are kept).
    void clear();

    Stats stats() const;
    size_t capacity() const noexcept;

private:
    struct Shard;
    struct LookupCounters;
    Shard& shard_of(const Hash& tx_hash) noexcept;

    std::unique_ptr<Shard[]> m_shards;
    size_t m_shard_capacity;
    size_t m_slot_mask;                         ///< slots per shard - 1
    std::unique_ptr<ZeroedPages> m_table;       ///< the shards' tables, one after the other
    std::unique_ptr<LookupCounters> m_lookups;  ///< hits and misses, striped by thread
};

}  // namespace barrel::block
