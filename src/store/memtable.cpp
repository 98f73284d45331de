// The bucket memtable (memtable.hpp). Why not RocksDB's own: its hash-linked-list memtable, which
// barrel used before, makes its full-order iterator (what a flush reads) by inserting every entry
// into a new skip list, one cache miss per level for keys that are hashes; under load that was
// the largest part of RocksDB's work (docs/benchmarks.md, "Commit: a memtable sorted once").
// Here the flush's iterator sorts an array of (first 8 key bytes as an integer, entry): most
// comparisons are between integers already in the array.
//
// Concurrency is RocksDB's memtable contract: one writer at a time (allow_concurrent_memtable_write
// is off), any number of readers at once. A node is published whole by a release store into its
// predecessor's link; readers follow links with acquire loads; nothing is ever unlinked.

#include "memtable.hpp"

#include "siphash.hpp"
#include <rocksdb/slice.h>
#include <rocksdb/version.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

// Get reads the memtable key out of rocksdb::LookupKey, whose definition (db/lookup_key.h) is not
// installed: its first member is `const char* start_`, the varint32-prefixed internal key, as it
// has been since LevelDB. The store's tests read through this memtable on every Get, so a change
// of that layout fails them all; this check makes a new major version a deliberate review.
#if ROCKSDB_MAJOR < 6 || ROCKSDB_MAJOR > 9
#error "bucket memtable: check rocksdb::LookupKey's layout (db/lookup_key.h) for this RocksDB"
#endif

namespace barrel::store {

namespace {

using rocksdb::Slice;
using KeyComparator = rocksdb::MemTableRep::KeyComparator;

/// An entry of a bucket: the link to the next, then the bytes RocksDB encodes into it (the
/// varint32-prefixed internal key, then the value).
struct Node {
    std::atomic<Node*> next{nullptr};

    char* entry() { return reinterpret_cast<char*>(this + 1); }
    const char* entry() const { return reinterpret_cast<const char*>(this + 1); }
};

Slice user_key_of_internal(const Slice& internal_key) {
    return {internal_key.data(), internal_key.size() - 8};  // sequence number and type
}

Slice user_key_of_entry(const char* entry) {
    return user_key_of_internal(rocksdb::GetLengthPrefixedSlice(entry));
}

/// The first 8 bytes of a user key as a big-endian integer, zero-padded. For bytewise order,
/// a < b implies prefix(a) <= prefix(b): sorting by the prefix, then by the comparator where the
/// prefixes are equal, is the comparator's order.
uint64_t order_prefix(const Slice& user_key) {
    unsigned char bytes[8] = {};
    std::memcpy(bytes, user_key.data(), std::min<size_t>(8, user_key.size()));
    uint64_t v = 0;
    for (unsigned char b : bytes) v = (v << 8) | b;
    return v;
}

const char* memtable_key_of(const rocksdb::LookupKey& k) {
    const char* start = nullptr;
    std::memcpy(&start, static_cast<const void*>(&k), sizeof start);
    return start;
}

struct SortedEntry {
    uint64_t prefix;
    const char* entry;
};

/// A full-order iterator over a copy of the entries taken when it was made, like RocksDB's own
/// hash memtables' (a flush iterates an immutable memtable, so the copy is all of it).
class SortedIterator final : public rocksdb::MemTableRep::Iterator {
public:
    SortedIterator(const KeyComparator& compare, const std::vector<const char*>& entries)
        : m_compare(compare), m_pos(entries.size()) {
        m_entries.reserve(entries.size());
        for (const char* entry : entries)
            m_entries.push_back({order_prefix(user_key_of_entry(entry)), entry});
        std::sort(
            m_entries.begin(), m_entries.end(), [&](const SortedEntry& a, const SortedEntry& b) {
                return a.prefix != b.prefix ? a.prefix < b.prefix : m_compare(a.entry, b.entry) < 0;
            });
    }

    bool Valid() const override { return m_pos < m_entries.size(); }
    const char* key() const override { return m_entries[m_pos].entry; }
    void Next() override { ++m_pos; }
    void Prev() override { m_pos = m_pos == 0 ? m_entries.size() : m_pos - 1; }
    void Seek(const Slice& internal_key, const char*) override {
        m_pos = first_not_before(internal_key);
    }
    void SeekForPrev(const Slice& internal_key, const char*) override {
        const size_t after = first_after(internal_key);
        m_pos = after == 0 ? m_entries.size() : after - 1;
    }
    void SeekToFirst() override { m_pos = 0; }
    void SeekToLast() override { m_pos = m_entries.empty() ? 0 : m_entries.size() - 1; }

private:
    size_t first_not_before(const Slice& internal_key) const {
        const uint64_t prefix = order_prefix(user_key_of_internal(internal_key));
        const auto it =
            std::partition_point(m_entries.begin(), m_entries.end(), [&](const SortedEntry& e) {
                return e.prefix < prefix ||
                       (e.prefix == prefix && m_compare(e.entry, internal_key) < 0);
            });
        return static_cast<size_t>(it - m_entries.begin());
    }
    size_t first_after(const Slice& internal_key) const {
        const uint64_t prefix = order_prefix(user_key_of_internal(internal_key));
        const auto it =
            std::partition_point(m_entries.begin(), m_entries.end(), [&](const SortedEntry& e) {
                return e.prefix < prefix ||
                       (e.prefix == prefix && m_compare(e.entry, internal_key) <= 0);
            });
        return static_cast<size_t>(it - m_entries.begin());
    }

    const KeyComparator& m_compare;
    std::vector<SortedEntry> m_entries;
    size_t m_pos;
};

class BucketMemtable final : public rocksdb::MemTableRep {
public:
    BucketMemtable(const KeyComparator& compare, rocksdb::Allocator* allocator, size_t bucket_count,
                   const SipKey& key)
        : MemTableRep(allocator),
          m_compare(compare),
          m_mask(bucket_count - 1),
          m_buckets(new std::atomic<Node*>[bucket_count]()),
          m_key(key) {}

    ~BucketMemtable() override {
        for (void* memory : m_arena_iterators) ::operator delete(memory);
        for (void* memory : m_own_nodes) ::operator delete(memory);
    }

    rocksdb::KeyHandle Allocate(const size_t len, char** buf) override {
        // The memtable's arena (the base class's Allocate), with room to align the link.
        char* raw = nullptr;
        const size_t size = sizeof(Node) + alignof(Node) - 1 + len;
        if (allocator_ != nullptr) {
            MemTableRep::Allocate(size, &raw);
        } else {
            // No arena: a memtable driven without RocksDB's MemTable around it (the tests that
            // check its publication under ThreadSanitizer through their own comparator and
            // copies, with no RocksDB frame a suppression could match). The writer alone
            // allocates (one at a time), so the list needs no lock.
            if (m_own_nodes.size() == m_own_nodes.capacity())  // so push_back cannot throw
                m_own_nodes.reserve(std::max<size_t>(64, 2 * m_own_nodes.capacity()));
            raw = static_cast<char*>(::operator new(size));
            m_own_nodes.push_back(raw);
        }
        const auto at =
            (reinterpret_cast<uintptr_t>(raw) + alignof(Node) - 1) & ~uintptr_t{alignof(Node) - 1};
        auto* node = new (reinterpret_cast<void*>(at)) Node;
        *buf = node->entry();
        return node;
    }

    void Insert(rocksdb::KeyHandle handle) override { InsertKey(handle); }
    // The base class's hinted insert would drop InsertKey's answer about a duplicate.
    bool InsertKeyWithHint(rocksdb::KeyHandle handle, void**) override { return InsertKey(handle); }

    bool InsertKey(rocksdb::KeyHandle handle) override {
        auto* node = static_cast<Node*>(handle);
        std::atomic<Node*>* link = &bucket(user_key_of_entry(node->entry()));
        // One writer at a time, ordered after the previous one by RocksDB's write queue: relaxed
        // loads suffice on this side.
        Node* next = link->load(std::memory_order_relaxed);
        while (next != nullptr) {
            const int order = m_compare(next->entry(), node->entry());
            if (order == 0) return false;  // the same key and sequence number
            if (order > 0) break;
            link = &next->next;
            next = link->load(std::memory_order_relaxed);
        }
        node->next.store(next, std::memory_order_relaxed);
        link->store(node, std::memory_order_release);
        m_entries.store(m_entries.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return true;
    }

    bool Contains(const char* key) const override {
        const Slice internal_key = rocksdb::GetLengthPrefixedSlice(key);
        const Node* node = first_not_before(internal_key);
        return node != nullptr && m_compare(node->entry(), internal_key) == 0;
    }

    void Get(const rocksdb::LookupKey& k, void* callback_args,
             bool (*callback_func)(void* arg, const char* entry)) override {
        // From the newest entry of the user key on; RocksDB's callback stops at another key.
        const Slice internal_key = rocksdb::GetLengthPrefixedSlice(memtable_key_of(k));
        for (const Node* node = first_not_before(internal_key);
             node != nullptr && callback_func(callback_args, node->entry());
             node = node->next.load(std::memory_order_acquire)) {
        }
    }

    size_t ApproximateMemoryUsage() override {
        // The nodes are in the memtable's arena, which RocksDB counts itself.
        return (m_mask + 1) * sizeof(std::atomic<Node*>);
    }

    Iterator* GetIterator(rocksdb::Arena* arena) override {
        std::vector<const char*> entries;
        entries.reserve(m_entries.load(std::memory_order_relaxed));
        for (size_t i = 0; i <= m_mask; ++i)
            for (const Node* node = m_buckets[i].load(std::memory_order_acquire); node != nullptr;
                 node = node->next.load(std::memory_order_acquire))
                entries.push_back(node->entry());
        if (arena == nullptr) return new SortedIterator(m_compare, entries);
        // Given an arena, RocksDB destroys the iterator in place and leaves its memory to the
        // arena, whose class the public headers do not define: the memory is this memtable's
        // instead, freed with it (a memtable outlives its iterators; a flush makes one).
        void* memory = nullptr;
        {
            const std::lock_guard lock(m_arena_iterators_mutex);
            m_arena_iterators.reserve(m_arena_iterators.size() + 1);  // no throw once allocated
            memory = ::operator new(sizeof(SortedIterator));
            m_arena_iterators.push_back(memory);
        }
        return new (memory) SortedIterator(m_compare, entries);
    }

private:
    std::atomic<Node*>& bucket(const Slice& user_key) const {
        const uint64_t hash = siphash24(m_key, {user_key.data(), user_key.size()});
        return m_buckets[hash & m_mask];
    }

    /// The first node of the key's bucket that is not before it: its newest entry if it has one.
    const Node* first_not_before(const Slice& internal_key) const {
        const Node* node =
            bucket(user_key_of_internal(internal_key)).load(std::memory_order_acquire);
        while (node != nullptr && m_compare(node->entry(), internal_key) < 0)
            node = node->next.load(std::memory_order_acquire);
        return node;
    }

    const KeyComparator& m_compare;
    const size_t m_mask;
    const std::unique_ptr<std::atomic<Node*>[]> m_buckets;
    const SipKey m_key;
    std::atomic<size_t> m_entries{0};
    std::mutex m_arena_iterators_mutex;
    std::vector<void*> m_arena_iterators;
    /// The nodes allocated without an arena (Allocate), freed with the memtable.
    std::vector<void*> m_own_nodes;
};

class BucketMemtableFactory final : public rocksdb::MemTableRepFactory {
public:
    explicit BucketMemtableFactory(size_t bucket_count)
        : m_bucket_count(std::bit_ceil(std::max<size_t>(bucket_count, 1))), m_key(random_key()) {}

    using MemTableRepFactory::CreateMemTableRep;
    rocksdb::MemTableRep* CreateMemTableRep(const KeyComparator& compare,
                                            rocksdb::Allocator* allocator,
                                            const rocksdb::SliceTransform*,
                                            rocksdb::Logger*) override {
        return new BucketMemtable(compare, allocator, m_bucket_count, m_key);
    }

    const char* Name() const override { return "BarrelBucketMemtable"; }
    bool CanHandleDuplicatedKey() const override { return true; }  // InsertKey says false

private:
    static SipKey random_key() {
        uint64_t words[2] = {};
        // getrandom(2) blocks only before the kernel's pool is first seeded, at boot.
        if (getrandom(words, sizeof words, 0) != static_cast<ssize_t>(sizeof words)) {
            // No randomness to be had: the time, so that at least no fixed key is known.
            const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
            words[0] = static_cast<uint64_t>(now) * 0x9e3779b97f4a7c15ULL;
            words[1] = ~words[0] ^ static_cast<uint64_t>(getpid());
        }
        return {words[0], words[1]};
    }

    size_t m_bucket_count;
    SipKey m_key;
};

}  // namespace

std::unique_ptr<rocksdb::MemTableRep::Iterator> sorted_entries_iterator(
    const rocksdb::MemTableRep::KeyComparator& compare, const std::vector<const char*>& entries) {
    return std::make_unique<SortedIterator>(compare, entries);
}

std::shared_ptr<rocksdb::MemTableRepFactory> bucket_memtable_factory(size_t bucket_count) {
    return std::make_shared<BucketMemtableFactory>(bucket_count);
}

}  // namespace barrel::store
