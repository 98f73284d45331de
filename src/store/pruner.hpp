#pragma once
/// @file
/// The pruner (docs/architecture.md, "Pruning"; docs/formats.md, "Pruning"): a writer's thread
/// that deletes the blocks below head - retain_blocks + 1 after the commits, so that a commit
/// only signals it and never waits for a deletion. Internal to the store.
///
/// A round: `meta/earliest` is written first (and Store::earliest moves), so that from then on
/// every read answers the blocks below it as absent; then the blocks are deleted in chunks of
/// consecutive blocks, one WriteBatch each: their transactions and receipts (keyed by hash, read
/// from the raw blocks), their `hash:` and `cometbft:` entries, and the headers and raw blocks by
/// DeleteRange. A chunk's headers go in the batch that deletes the rest of it, so the first
/// header left after block 0 is where a round stopped by a crash resumes at the next open.

#include <barrel/store/store.hpp>

#include <rocksdb/status.h>
#include <rocksdb/write_batch.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

namespace barrel::store {

class Pruner {
public:
    /// Starts the thread; it first finishes what a round before a crash left (blocks below
    /// Store::earliest still stored), then waits for commits.
    Pruner(Store::Impl& impl, uint64_t retain_blocks);
    /// Stops the thread at its next step (a chunk is written whole or not at all).
    ~Pruner();
    Pruner(const Pruner&) = delete;
    Pruner& operator=(const Pruner&) = delete;

    /// A block was committed: `head` is the new head. Moves the target by rounds of at least
    /// round_blocks(), so that the number-keyed families get one range tombstone per round, not
    /// one per block.
    void committed(uint64_t head);

    /// Until the thread has nothing left to do (or has failed, or is stopping).
    void wait_idle();

    /// Blocks a round deletes at least: 1/16 of the retained blocks (a round per block would
    /// leave a range tombstone per block in the headers' memtable, which every read checks).
    static uint64_t round_blocks(uint64_t retain_blocks) noexcept {
        return retain_blocks / 16 > 0 ? retain_blocks / 16 : 1;
    }

private:
    void run();
    /// Writes `meta/earliest` = target if it moves, then deletes what is below it and below
    /// `head` (a restored head sits below earliest, and open needs its header).
    Expected<void, StoreError> prune_to(uint64_t target, uint64_t head);
    /// Deletes one chunk of the held blocks below `below`, from the first one stored after
    /// block 0; false when there was none.
    Expected<bool, StoreError> delete_chunk(uint64_t below);
    bool stopping() const;
    /// One of the pruner's writes, under the store's write mutex (store_impl.hpp), held for the
    /// write alone: never across a test's pause.
    rocksdb::Status write(rocksdb::WriteBatch& batch);

    Store::Impl& m_impl;
    uint64_t m_retain;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;  ///< a new target, or stop
    std::condition_variable m_idle;  ///< wait_idle's
    uint64_t m_target{0};            ///< the earliest block the last commit asks for
    uint64_t m_head{0};              ///< the head the last commit made (never deleted)
    uint64_t m_done{UINT64_MAX};     ///< the target of the last round finished (none yet)
    bool m_busy{true};               ///< a round is running (the first starts with the thread)
    bool m_stop{false};
    std::thread m_thread;
};

}  // namespace barrel::store
