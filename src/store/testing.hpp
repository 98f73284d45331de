#pragma once
/// @file
/// Hooks into the store for tests and benchmarks, not part of the API a node links (this header
/// is not installed). A node never needs them: commits never wait on background work, and the
/// caches are the store's own business.

#include <barrel/store/store.hpp>

namespace barrel::store::testing {

/// Drops the state caches, so that the reads after it come back from RocksDB.
void clear_cache(Store& store);

/// Blocks until no flush or compaction is pending or running in any column family, or until
/// background work has failed, so that one datadir's background work does not land in another's
/// timings.
void wait_for_background_work(const Store& store);

/// Entries in the memtables of every column family: for a store just opened, what it replayed
/// from the WAL.
uint64_t memtable_entries(const Store& store);

}  // namespace barrel::store::testing
