#pragma once
/// @file
/// Hooks into the store for tests and benchmarks, not part of the API a node links (this header
/// is not installed). A node never needs them: commits never wait on background work, and the
/// caches are the store's own business.

#include <barrel/store/store.hpp>

#include <rocksdb/file_system.h>

#include <cstdint>
#include <functional>
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

/// Where the pruner (pruner.hpp) stops while a PausedPruner lives.
enum class PruneStep : uint8_t {
    marked,  ///< `meta/earliest` written, nothing below it deleted yet
    chunk,   ///< one chunk of blocks deleted (a WriteBatch), perhaps more to go
};

/// Holds every store's pruner at each PruneStep until the test releases it: the interleavings of
/// pruning with reads, commits and a close, forced without sleeps. Destroying it lets every
/// pruner run on; a pruner whose store closes stops waiting and ends its round there.
class PausedPruner {
public:
    PausedPruner();
    ~PausedPruner();
    PausedPruner(const PausedPruner&) = delete;
    PausedPruner& operator=(const PausedPruner&) = delete;

    /// Until a pruner waits at a step; which one.
    PruneStep wait();
    /// Lets the waiting pruner go on to its next step.
    void release();
};

/// Until the store's pruner has done every round its commits asked for (at once without one).
void wait_for_pruner(const Store& store);

/// The most blocks one WriteBatch of the pruner deletes (default 64), so that a test sees a
/// round in several chunks. 0 restores the default.
void set_prune_chunk_blocks(uint64_t blocks);

namespace detail {
/// The pruner's side of PausedPruner: waits at `step` while one lives, until released or until
/// `stopping()` (its store is closing).
void pause_pruner(PruneStep step, const std::function<bool()>& stopping);
/// Wakes the pruners waiting in pause_pruner, so that one whose store closes sees `stopping`.
void wake_paused_pruners();
uint64_t prune_chunk_blocks();
/// The file system the stores opened now use (a FullDisk's while one lives), or nullptr for
/// RocksDB's default.
std::shared_ptr<rocksdb::FileSystem> file_system();
bool stop_init_before_rename();
}  // namespace detail

}  // namespace barrel::store::testing
