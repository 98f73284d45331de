// The bucket memtable (src/store/memtable.hpp) under a real RocksDB, against a std::map as the
// model: point reads, snapshots, iteration in both directions, seeks, and the flush that reads it
// in order to write a table; with 2^16 buckets and with 1 (every key in one list). And its hash,
// SipHash-2-4, against the reference vectors.

#include "store/memtable.hpp"
#include "store/siphash.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace barrel::store {
namespace {

TEST(StoreMemtable, siphash24_matches_the_reference_vectors) {
    // vectors.h of the reference implementation: key 00..0f, message 00..(n-1), little-endian.
    const SipKey key{0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
    const std::vector<std::pair<size_t, uint64_t>> vectors = {
        {0, 0x726fdb47dd0e0e31ULL},  {1, 0x74f839c593dc67fdULL},  {2, 0x0d6c8009d9a94f5aULL},
        {3, 0x85676696d7fb7e2dULL},  {4, 0xcf2794e0277187b7ULL},  {5, 0x18765564cd99a68dULL},
        {6, 0xcbc9466e58fee3ceULL},  {7, 0xab0200f58b01d137ULL},  {8, 0x93f5f5799a932462ULL},
        {9, 0x9e0082df0ba9e4b0ULL},  {10, 0x7a5dbbc594ddb9f3ULL}, {11, 0xf4b32f46226bada7ULL},
        {15, 0xa129ca6149be45e5ULL},
    };
    for (const auto& [length, expected] : vectors) {
        std::string message;
        for (size_t i = 0; i < length; ++i) message.push_back(static_cast<char>(i));
        EXPECT_EQ(siphash24(key, message), expected) << "length " << length;
    }
}

using Model = std::map<std::string, std::string>;

/// A database whose one column family (the default) uses the bucket memtable and holds every
/// write in memory until the test flushes.
class BucketMemtableDb {
public:
    explicit BucketMemtableDb(size_t buckets) {
        rocksdb::Options options;
        options.create_if_missing = true;
        options.write_buffer_size = 256 << 20;
        options.allow_concurrent_memtable_write = false;
        options.memtable_factory = bucket_memtable_factory(buckets);
        rocksdb::DB* db = nullptr;
        const auto status = rocksdb::DB::Open(options, m_dir.path().string(), &db);
        if (!status.ok()) throw std::runtime_error(status.ToString());
        m_db.reset(db);
    }

    rocksdb::DB& db() { return *m_db; }

    std::optional<std::string> get(const std::string& key,
                                   const rocksdb::Snapshot* snapshot = nullptr) {
        rocksdb::ReadOptions read;
        read.snapshot = snapshot;
        std::string value;
        const auto status = m_db->Get(read, key, &value);
        if (status.IsNotFound()) return std::nullopt;
        if (!status.ok()) throw std::runtime_error(status.ToString());
        return value;
    }

    /// What the database holds, read forwards and backwards with an iterator.
    void expect_iteration(const Model& model) {
        std::unique_ptr<rocksdb::Iterator> it(m_db->NewIterator(rocksdb::ReadOptions{}));
        Model forward;
        for (it->SeekToFirst(); it->Valid(); it->Next())
            forward.emplace(it->key().ToString(), it->value().ToString());
        ASSERT_TRUE(it->status().ok());
        EXPECT_EQ(forward, model);
        std::vector<std::string> backward;
        for (it->SeekToLast(); it->Valid(); it->Prev()) backward.push_back(it->key().ToString());
        std::vector<std::string> expected;
        for (auto k = model.rbegin(); k != model.rend(); ++k) expected.push_back(k->first);
        EXPECT_EQ(backward, expected);
    }

    /// Seek and SeekForPrev to each target land where the model's bounds say.
    void expect_seeks(const Model& model, const std::vector<std::string>& targets) {
        std::unique_ptr<rocksdb::Iterator> it(m_db->NewIterator(rocksdb::ReadOptions{}));
        for (const auto& target : targets) {
            it->Seek(target);
            const auto lower = model.lower_bound(target);
            ASSERT_EQ(it->Valid(), lower != model.end()) << "Seek " << target.size();
            if (it->Valid()) {
                EXPECT_EQ(it->key().ToString(), lower->first);
            }
            it->SeekForPrev(target);
            auto upper = model.upper_bound(target);
            ASSERT_EQ(it->Valid(), upper != model.begin()) << "SeekForPrev " << target.size();
            if (it->Valid()) {
                EXPECT_EQ(it->key().ToString(), (--upper)->first);
            }
        }
    }

private:
    test::ScratchDir m_dir;
    std::unique_ptr<rocksdb::DB> m_db;
};

/// Keys of the shapes the store writes and a few it must also order right: hashes, addresses,
/// names sharing their first 8 bytes ("user000123"), the empty key, single bytes, keys that are
/// prefixes of others, bytes of 0x00 and 0xff.
std::vector<std::string> key_population(std::mt19937_64& rng) {
    std::vector<std::string> keys = {
        "", std::string(1, '\0'), std::string(2, '\0'), std::string(1, '\xff'), "a", "ab", "abc"};
    auto random_bytes = [&](size_t n) {
        std::string s(n, '\0');
        for (auto& c : s) c = static_cast<char>(rng());
        return s;
    };
    for (int i = 0; i < 150; ++i) keys.push_back(random_bytes(32));
    for (int i = 0; i < 150; ++i) keys.push_back(random_bytes(20));
    for (int i = 0; i < 100; ++i) keys.push_back("user" + std::to_string(100000 + i * 7));
    const std::string shared = random_bytes(8);
    for (int i = 0; i < 50; ++i) keys.push_back(shared + random_bytes(static_cast<size_t>(i % 5)));
    return keys;
}

class StoreMemtableModel : public ::testing::TestWithParam<size_t> {};

TEST_P(StoreMemtableModel, reads_iteration_seeks_and_flushes_agree_with_a_map) {
    std::mt19937_64 rng(GetParam() * 7919 + 1);
    const auto keys = key_population(rng);
    BucketMemtableDb store(GetParam());
    Model model;
    Model at_snapshot;
    const rocksdb::Snapshot* snapshot = nullptr;

    auto check = [&](const char* phase) {
        SCOPED_TRACE(phase);
        for (const auto& key : keys) {
            const auto it = model.find(key);
            const auto got = store.get(key);
            ASSERT_EQ(got.has_value(), it != model.end()) << "key of " << key.size() << " bytes";
            if (got) {
                EXPECT_EQ(*got, it->second);
            }
        }
        if (snapshot != nullptr)
            for (const auto& key : keys) {
                const auto it = at_snapshot.find(key);
                const auto got = store.get(key, snapshot);
                ASSERT_EQ(got.has_value(), it != at_snapshot.end());
                if (got) {
                    EXPECT_EQ(*got, it->second);
                }
            }
        store.expect_iteration(model);
        std::vector<std::string> targets = keys;
        for (const auto& key : keys) {
            targets.push_back(key + '\0');
            if (!key.empty()) targets.push_back(key.substr(0, key.size() - 1));
        }
        store.expect_seeks(model, targets);
    };

    // Puts, overwrites (many versions of one key in one bucket) and deletes, in batches.
    auto run_ops = [&](int ops) {
        for (int i = 0; i < ops; ++i) {
            rocksdb::WriteBatch batch;
            for (int j = 0; j < 8; ++j) {
                const auto& key = keys[rng() % keys.size()];
                if (rng() % 5 == 0) {
                    batch.Delete(key);
                    model.erase(key);
                } else {
                    const std::string value = "v" + std::to_string(rng() % 100000);
                    batch.Put(key, value);
                    model[key] = value;
                }
            }
            ASSERT_TRUE(store.db().Write(rocksdb::WriteOptions{}, &batch).ok());
        }
    };

    run_ops(300);
    check("in the memtable");
    snapshot = store.db().GetSnapshot();
    at_snapshot = model;
    run_ops(300);
    check("in the memtable, with a snapshot");
    // The flush reads the memtable in order to write a table (RocksDB checks the order).
    ASSERT_TRUE(store.db().Flush(rocksdb::FlushOptions{}).ok());
    check("flushed to a table");
    run_ops(200);
    check("a table and a new memtable");
    store.db().ReleaseSnapshot(snapshot);
    snapshot = nullptr;
    ASSERT_TRUE(store.db().Flush(rocksdb::FlushOptions{}).ok());
    ASSERT_TRUE(store.db().CompactRange(rocksdb::CompactRangeOptions{}, nullptr, nullptr).ok());
    check("two tables compacted into one");
}

/// RocksDB's internal key order over memtable entries: user keys bytewise, then the newest
/// (highest sequence number) first.
class InternalOrder final : public rocksdb::MemTableRep::KeyComparator {
public:
    DecodedType decode_key(const char* key) const override {
        return rocksdb::GetLengthPrefixedSlice(key);
    }
    int operator()(const char* a, const char* b) const override {
        return compare(decode_key(a), decode_key(b));
    }
    int operator()(const char* a, const rocksdb::Slice& internal_key) const override {
        return compare(decode_key(a), internal_key);
    }

    static int compare(const rocksdb::Slice& a, const rocksdb::Slice& b) {
        const rocksdb::Slice user_a(a.data(), a.size() - 8), user_b(b.data(), b.size() - 8);
        if (const int order = user_a.compare(user_b); order != 0) return order;
        const uint64_t tag_a = tag(a), tag_b = tag(b);
        return tag_a > tag_b ? -1 : tag_a < tag_b ? 1 : 0;
    }

private:
    static uint64_t tag(const rocksdb::Slice& internal_key) {
        uint64_t t = 0;
        for (int i = 7; i >= 0; --i)
            t = (t << 8) |
                static_cast<unsigned char>(
                    internal_key.data()[internal_key.size() - 8 + static_cast<size_t>(i)]);
        return t;
    }
};

std::string internal_key(const std::string& user_key, uint64_t sequence) {
    std::string key = user_key;
    const uint64_t tag = (sequence << 8) | 1;  // kTypeValue
    for (int i = 0; i < 8; ++i) key.push_back(static_cast<char>(tag >> (8 * i)));
    return key;
}

std::string memtable_entry(const std::string& user_key, uint64_t sequence) {
    const std::string key = internal_key(user_key, sequence);
    std::string entry;
    for (uint32_t n = static_cast<uint32_t>(key.size());; n >>= 7) {  // varint32
        if (n < 0x80) {
            entry.push_back(static_cast<char>(n));
            break;
        }
        entry.push_back(static_cast<char>((n & 0x7f) | 0x80));
    }
    return entry + key + "value";
}

TEST(StoreMemtable, the_sorted_iterator_moves_and_seeks_in_internal_key_order) {
    std::mt19937_64 rng(5);
    auto users = key_population(rng);
    std::sort(users.begin(), users.end());  // one entry per user key and sequence number
    users.erase(std::unique(users.begin(), users.end()), users.end());
    std::vector<std::string> storage;
    for (const auto& user : users)
        for (uint64_t sequence : {uint64_t{3}, uint64_t{900}, uint64_t{70000}})
            if (rng() % 2 == 0) storage.push_back(memtable_entry(user, sequence));
    std::vector<const char*> entries;
    for (const auto& entry : storage) entries.push_back(entry.data());
    const InternalOrder order;
    std::vector<const char*> sorted = entries;
    std::sort(sorted.begin(), sorted.end(),
              [&](const char* a, const char* b) { return order(a, b) < 0; });
    std::shuffle(entries.begin(), entries.end(), rng);
    const auto it = sorted_entries_iterator(order, entries);

    std::vector<const char*> forward, backward;
    for (it->SeekToFirst(); it->Valid(); it->Next()) forward.push_back(it->key());
    EXPECT_EQ(forward, sorted);
    for (it->SeekToLast(); it->Valid(); it->Prev()) backward.push_back(it->key());
    EXPECT_EQ(backward, std::vector<const char*>(sorted.rbegin(), sorted.rend()));

    for (const auto& user : users)
        for (const std::string& target_user : {user, user + '\0'})
            for (uint64_t sequence :
                 {uint64_t{0}, uint64_t{3}, uint64_t{500}, uint64_t{70000}, uint64_t{1} << 50}) {
                const std::string target = internal_key(target_user, sequence);
                const rocksdb::Slice slice(target);
                const auto lower =
                    std::partition_point(sorted.begin(), sorted.end(),
                                         [&](const char* e) { return order(e, slice) < 0; });
                it->Seek(slice, nullptr);
                ASSERT_EQ(it->Valid(), lower != sorted.end());
                if (it->Valid()) {
                    EXPECT_EQ(it->key(), *lower);
                }
                const auto upper =
                    std::partition_point(sorted.begin(), sorted.end(),
                                         [&](const char* e) { return order(e, slice) <= 0; });
                it->SeekForPrev(slice, nullptr);
                ASSERT_EQ(it->Valid(), upper != sorted.begin());
                if (it->Valid()) {
                    EXPECT_EQ(it->key(), *(upper - 1));
                }
            }

    const auto empty = sorted_entries_iterator(order, {});
    empty->SeekToFirst();
    EXPECT_FALSE(empty->Valid());
    empty->SeekToLast();
    EXPECT_FALSE(empty->Valid());
    empty->Seek(rocksdb::Slice(internal_key("a", 1)), nullptr);
    EXPECT_FALSE(empty->Valid());
    empty->SeekForPrev(rocksdb::Slice(internal_key("a", 1)), nullptr);
    EXPECT_FALSE(empty->Valid());
}

INSTANTIATE_TEST_SUITE_P(Buckets, StoreMemtableModel, ::testing::Values(size_t{1} << 16, 1),
                         [](const auto& param_info) {
                             return "buckets_" + std::to_string(param_info.param);
                         });

TEST(StoreMemtable, readers_see_every_write_that_returned_while_the_writer_goes_on) {
    // One writer, as RocksDB runs this memtable; readers at the same time must find each key
    // whose Put has returned, whole. Under ThreadSanitizer this checks the links' ordering.
    BucketMemtableDb store(1 << 10);
    constexpr int kKeys = 20000;
    std::atomic<int> written{0};
    auto key_of = [](int i) { return "k" + std::to_string(i * 2654435761u); };
    std::thread writer([&] {
        for (int i = 0; i < kKeys; ++i) {
            if (!store.db().Put(rocksdb::WriteOptions{}, key_of(i), std::to_string(i)).ok()) return;
            written.store(i + 1, std::memory_order_release);
        }
    });
    std::atomic<int> wrong{0};
    std::vector<std::thread> readers;
    for (int r = 0; r < 2; ++r)
        readers.emplace_back([&, r] {
            std::mt19937 rng(static_cast<unsigned>(r));
            int n;
            while ((n = written.load(std::memory_order_acquire)) < kKeys) {
                if (n == 0) continue;
                const int i = static_cast<int>(rng() % static_cast<unsigned>(n));
                if (store.get(key_of(i)) != std::to_string(i)) wrong.fetch_add(1);
            }
        });
    writer.join();
    for (auto& reader : readers) reader.join();
    EXPECT_EQ(written.load(), kKeys);
    EXPECT_EQ(wrong.load(), 0);
}

// The test above reads through RocksDB: its Get passes RocksDB's MemTable (MemTable::Add copies
// the entry in, SaveValue copies the value out, BytewiseComparatorImpl::Compare orders keys), the
// frames test/tsan.supp suppresses for RocksDB's own skip list. Here nothing of RocksDB's runs
// between the two threads: the writer allocates and copies entries itself, readers look them up
// with this test's comparator and callback. So under ThreadSanitizer a link published without
// its release store (or read without acquire) is reported with frames of barrel and this test
// only, which no suppression matches.
struct LookupKeyLayout {  // rocksdb::LookupKey's first member (memtable.cpp reads only that)
    const char* start;
};

struct Lookup {
    rocksdb::Slice user_key;
    std::string value;  ///< the value of the newest entry of user_key, if found
    bool found{false};
};

bool take_value(void* arg, const char* entry) {
    auto* lookup = static_cast<Lookup*>(arg);
    const rocksdb::Slice internal = rocksdb::GetLengthPrefixedSlice(entry);
    const rocksdb::Slice user(internal.data(), internal.size() - 8);
    if (user != lookup->user_key) return false;  // past the key: stop
    const char* value = internal.data() + internal.size();
    lookup->value.assign(value, std::strlen(value));
    lookup->found = true;
    return false;
}

TEST(StoreMemtable, readers_see_every_entry_published_without_rocksdb_in_between) {
    const InternalOrder order;
    const std::unique_ptr<rocksdb::MemTableRep> memtable{
        bucket_memtable_factory(1 << 8)->CreateMemTableRep(order, nullptr, nullptr, nullptr)};
    constexpr int kKeys = 4000;
    auto user_key_of = [](int i) { return "u" + std::to_string(i * 2654435761u); };
    std::atomic<int> written{0};
    std::thread writer([&] {
        for (int i = 0; i < kKeys; ++i) {
            // The entry as RocksDB lays it out, then the value's terminating zero.
            const std::string entry = memtable_entry(user_key_of(i), 7) + std::to_string(i);
            char* buf = nullptr;
            const rocksdb::KeyHandle handle = memtable->Allocate(entry.size() + 1, &buf);
            std::memcpy(buf, entry.c_str(), entry.size() + 1);
            ASSERT_TRUE(memtable->InsertKey(handle));
            written.store(i + 1, std::memory_order_relaxed);  // no edge: the memtable's only
        }
    });
    std::atomic<int> wrong{0};
    std::vector<std::thread> readers;
    for (int r = 0; r < 2; ++r)
        readers.emplace_back([&, r] {
            std::mt19937 rng(static_cast<unsigned>(r));
            int n;
            while ((n = written.load(std::memory_order_relaxed)) < kKeys) {
                if (n == 0) continue;
                const int i = static_cast<int>(rng() % static_cast<unsigned>(n));
                const std::string user = user_key_of(i);
                const std::string target = internal_key(user, uint64_t{1} << 50);
                std::string memtable_key;
                memtable_key.push_back(static_cast<char>(target.size()));  // < 128: one byte
                memtable_key += target;
                const LookupKeyLayout key{memtable_key.data()};
                Lookup lookup{rocksdb::Slice(user), {}, false};
                // The count is relaxed, so an entry counted may not be visible yet (on weakly
                // ordered hardware, or if the compiler moved the count's store up): look again.
                // What this checks is that an entry found is whole.
                for (int tries = 0; !lookup.found && tries < 100000; ++tries) {
                    if (tries > 0) std::this_thread::yield();
                    memtable->Get(*reinterpret_cast<const rocksdb::LookupKey*>(&key), &lookup,
                                  take_value);
                }
                if (!lookup.found || lookup.value != "value" + std::to_string(i))
                    wrong.fetch_add(1);
            }
        });
    writer.join();
    for (auto& reader : readers) reader.join();
    EXPECT_EQ(written.load(), kKeys);
    EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace barrel::store
