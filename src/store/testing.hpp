#pragma once
/// @file
/// Hooks into the store for tests and benchmarks, not part of the API a node links (this header
/// is not installed). A node never needs them: commits never wait on background work, and the
/// caches are the store's own business.

#include <barrel/store/store.hpp>

#include <rocksdb/file_system.h>

#include <cstdint>
#include <memory>

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

namespace barrel::store::testing {

/// A file system in front of the real one that fails, as a full disk does, every write past a
/// budget of bytes: the append that crosses it writes what fits and returns ENOSPC, and every
/// append or sync after it fails too until the budget is raised. Counts the bytes of every file
/// RocksDB writes (WAL, table files, MANIFEST, OPTIONS, CURRENT).
class FullDisk {
public:
    explicit FullDisk(uint64_t budget);
    ~FullDisk();
    FullDisk(const FullDisk&) = delete;
    FullDisk& operator=(const FullDisk&) = delete;

    void set_budget(uint64_t budget);
    /// Bytes written so far (at most the budget).
    uint64_t written() const;
    /// Whether a write has failed since the budget was last set.
    bool failed() const;

    struct State;

private:
    std::shared_ptr<State> m_state;
};

/// Stops Store::init after it has written the datadir beside its target and before it renames
/// it into place, as a SIGKILL there would (the sibling stays, nothing is cleaned up): the
/// init returns an internal error "init stopped by a test".
void stop_init_before_rename(bool stop);

namespace detail {
/// The file system the stores opened now use (a FullDisk's while one lives), or nullptr for
/// RocksDB's default.
std::shared_ptr<rocksdb::FileSystem> file_system();
bool stop_init_before_rename();
}  // namespace detail

}  // namespace barrel::store::testing
