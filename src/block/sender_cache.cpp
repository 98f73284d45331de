#include <barrel/block/sender_cache.hpp>

#include <algorithm>
#include <cstring>

namespace barrel::block {

namespace {
constexpr size_t kShards = 64;  // enough that 16 threads rarely meet on one lock

/// Keys are keccak outputs; bytes 8..16 pick the shard so the map's hash (bytes 0..8) stays
/// independent of the shard choice.
size_t shard_index(const Hash& h) noexcept {
    uint64_t v;
    std::memcpy(&v, h.data() + 8, sizeof v);
    return v % kShards;
}
}  // namespace

struct SenderCache::Shard {
    std::mutex mutex;
    std::unordered_map<Hash, Address, FixedBytesHasher> map;
    std::vector<Hash> fifo;  ///< ring of keys in insertion order
    size_t next{0};          ///< ring slot to overwrite next
    uint64_t hits{0}, misses{0}, insertions{0}, evictions{0};
};

SenderCache::SenderCache(size_t capacity)
    : m_shards{std::make_unique<Shard[]>(kShards)},
      m_shard_capacity{std::max<size_t>(1, (capacity + kShards - 1) / kShards)} {}

SenderCache::~SenderCache() = default;

SenderCache::Shard& SenderCache::shard_of(const Hash& tx_hash) noexcept {
    return m_shards[shard_index(tx_hash)];
}

std::optional<Address> SenderCache::find(const Hash& tx_hash) noexcept {
    Shard& s = shard_of(tx_hash);
    std::lock_guard lock{s.mutex};
    const auto it = s.map.find(tx_hash);
    if (it == s.map.end()) {
        ++s.misses;
        return std::nullopt;
    }
    ++s.hits;
    return it->second;
}

void SenderCache::insert(const Hash& tx_hash, const Address& sender) {
    Shard& s = shard_of(tx_hash);
    std::lock_guard lock{s.mutex};
    const auto [it, inserted] = s.map.try_emplace(tx_hash, sender);
    if (!inserted) return;  // same hash means same bytes, hence the same sender
    ++s.insertions;
    if (s.fifo.size() < m_shard_capacity) {
        s.fifo.push_back(tx_hash);
        return;
    }
    s.map.erase(s.fifo[s.next]);
    ++s.evictions;
    s.fifo[s.next] = tx_hash;
    s.next = (s.next + 1) % m_shard_capacity;
}

void SenderCache::clear() {
    for (size_t i = 0; i < kShards; ++i) {
        Shard& s = m_shards[i];
        std::lock_guard lock{s.mutex};
        s.map.clear();
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
        out.size += s.map.size();
    }
    return out;
}

size_t SenderCache::capacity() const noexcept { return m_shard_capacity * kShards; }

}  // namespace barrel::block
