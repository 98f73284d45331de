#pragma once
// The memtable of the column families that the node reads only by key (transactions, receipts,
// accounts, DagTransfer users): hash buckets for the writes and reads, sorted once when RocksDB
// iterates it, which it does to flush it (memtable.cpp).

#include <rocksdb/memtablerep.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace barrel::store {

/// A factory of bucket memtables: `bucket_count` buckets (rounded up to a power of two) chosen by
/// a keyed hash (SipHash-2-4, a key drawn at random per factory) of the whole user key, each a
/// sorted list. Iterating one sorts its entries by the bytewise order of their keys: a column
/// family that uses it must keep RocksDB's default bytewise comparator, and is best left without
/// a prefix extractor (none is needed; with one, RocksDB would ask for prefix iterators, which
/// this memtable serves in total order too).
/// Its CreateMemTableRep also takes a null allocator (RocksDB always passes its arena): the
/// memtable then allocates its entries itself and frees them with it, so that a test can drive
/// it without RocksDB's MemTable.
std::shared_ptr<rocksdb::MemTableRepFactory> bucket_memtable_factory(size_t bucket_count);

/// The iterator a bucket memtable gives RocksDB (to flush it): `entries` (memtable entries, each
/// a varint32-prefixed internal key then its value, in any order) sorted by `compare`. RocksDB's
/// own iterators over a memtable use only some of its moves (SeekForPrev, for one, becomes
/// Seek and Prev), so the tests drive it directly as well.
std::unique_ptr<rocksdb::MemTableRep::Iterator> sorted_entries_iterator(
    const rocksdb::MemTableRep::KeyComparator& compare, const std::vector<const char*>& entries);

}  // namespace barrel::store
