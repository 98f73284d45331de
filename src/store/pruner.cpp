// The pruner's thread (pruner.hpp): rounds of deletions behind the commits.

#include "pruner.hpp"

#include <barrel/block/block.hpp>

#include "store_impl.hpp"
#include "testing.hpp"
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <vector>

namespace barrel::store {

namespace {

/// A chunk's transactions at most (two deletes each): about 20 full blocks' worth, a batch of a
/// few MiB. A chunk also ends at testing::prune_chunk_blocks() blocks.
constexpr size_t kChunkTransactions = 50'000;

}  // namespace

Pruner::Pruner(Store::Impl& impl, uint64_t retain_blocks)
    : m_impl{impl},
      m_retain{retain_blocks},
      m_target{impl.earliest.load()},
      m_head{impl.head.number} {
    m_thread = std::thread{[this] { run(); }};
}

Pruner::~Pruner() {
    {
        const std::lock_guard lock{m_mutex};
        m_stop = true;
    }
    m_wake.notify_all();
    testing::detail::wake_paused_pruners();
    m_thread.join();
}

bool Pruner::stopping() const {
    const std::lock_guard lock{m_mutex};
    return m_stop;
}

void Pruner::committed(uint64_t head) {
    {
        const std::lock_guard lock{m_mutex};
        m_head = head;
    }
    // Blocks 1 to head are no more than retained: nothing to prune (and no entry to write).
    if (m_retain == 0 || head <= m_retain) return;
    const uint64_t target = head - m_retain + 1;
    {
        const std::lock_guard lock{m_mutex};
        if (target < m_target + round_blocks(m_retain)) return;
        m_target = target;
    }
    m_wake.notify_one();
}

void Pruner::wait_idle() {
    std::unique_lock lock{m_mutex};
    m_idle.wait(lock, [this] { return (!m_busy && m_done == m_target) || m_stop; });
}

void Pruner::run() {
    std::unique_lock lock{m_mutex};
    // The first round resumes what a crash interrupted: blocks still stored below earliest.
    while (!m_stop) {
        const uint64_t target = m_target;
        const uint64_t head = m_head;
        m_busy = true;
        lock.unlock();
        // A failed round (a full disk) is tried again at the next target: the commits, which
        // share RocksDB's error state, report the disk.
        (void)prune_to(target, head);
        lock.lock();
        m_done = target;
        m_busy = false;
        m_idle.notify_all();
        m_wake.wait(lock, [&] { return m_stop || m_target != m_done; });
    }
    m_busy = false;
    m_idle.notify_all();
}

Expected<void, StoreError> Pruner::prune_to(uint64_t target, uint64_t head) {
    if (target > m_impl.earliest.load()) {
        rocksdb::WriteBatch mark;
        const std::string value = number_key(target);
        if (auto s = mark.Put(m_impl.cfs[kMeta], slice(kEarliestKey), slice(value)); !s.ok())
            return from_status(s, "pruning");
        // No sync of its own: the WAL is one sequence, so a deletion below that survives a crash
        // implies this entry did.
        if (auto s = write(mark); !s.ok())
            return from_status(s, "pruning: writing the earliest block");
        m_impl.earliest.store(target);
        testing::detail::pause_pruner(testing::PruneStep::marked, [this] { return stopping(); });
    }
    // A state-synced datadir's head (its restore height) is below earliest, and stays whole.
    const uint64_t below = std::min(m_impl.earliest.load(), std::max<uint64_t>(head, 1));
    while (!stopping()) {
        auto deleted = delete_chunk(below);
        if (!deleted) return unexpected(deleted.error());
        if (!*deleted) break;
        testing::detail::pause_pruner(testing::PruneStep::chunk, [this] { return stopping(); });
    }
    return {};
}

Expected<bool, StoreError> Pruner::delete_chunk(uint64_t below) {
    // The first stored header after block 0: where the last round (or a crash) stopped. The
    // range tombstones of earlier rounds are skipped by the seek.
    const std::string first_key = number_key(1), end_key = number_key(below);
    const rocksdb::Slice upper{end_key};
    rocksdb::ReadOptions ro;
    ro.iterate_upper_bound = &upper;
    std::unique_ptr<rocksdb::Iterator> headers{m_impl.db->NewIterator(ro, m_impl.cfs[kHeaders])};
    headers->Seek(slice(first_key));
    if (!headers->Valid()) {
        if (!headers->status().ok()) return from_status(headers->status(), "pruning: reading");
        return false;
    }
    rocksdb::WriteBatch batch;
    const auto check = [](const rocksdb::Status& s) -> Expected<void, StoreError> {
        if (!s.ok()) return from_status(s, "pruning");
        return {};
    };
    const auto first = number_of(headers->key().ToStringView());
    if (!first) return fail(StoreErrorCode::corruption, "pruning: a header key is not a number");
    uint64_t last = *first;
    size_t transactions = 0;
    const uint64_t most_blocks = testing::detail::prune_chunk_blocks();
    for (uint64_t blocks = 0;
         headers->Valid() && blocks < most_blocks && transactions < kChunkTransactions;
         headers->Next(), ++blocks) {
        const auto number = number_of(headers->key().ToStringView());
        if (!number)
            return fail(StoreErrorCode::corruption, "pruning: a header key is not a number");
        last = *number;
        auto header = parse_header_document(headers->value().ToStringView());
        if (!header)
            return fail(StoreErrorCode::corruption,
                        "pruning: the header of block " + std::to_string(last) + " is damaged");
        BARREL_TRY(check(batch.Delete(m_impl.cfs[kMeta], slice(hash_key(header->hash)))));
        BARREL_TRY(check(batch.Delete(m_impl.cfs[kMeta], slice(consensus_hash_key(last)))));
        auto raw = m_impl.get(kBlocks, number_key(last));
        if (!raw) return unexpected(raw.error());
        if (!*raw) continue;  // a block without transactions' record: nothing keyed by hash
        auto hashes = block::transaction_hashes(as_bytes(**raw));
        if (!hashes)
            return fail(StoreErrorCode::corruption,
                        "pruning: the raw block " + std::to_string(last) + " is damaged");
        for (const Hash& h : *hashes) {
            BARREL_TRY(check(batch.Delete(m_impl.cfs[kTxs], slice(hash_bytes_key(h)))));
            BARREL_TRY(check(batch.Delete(m_impl.cfs[kReceipts], slice(hash_bytes_key(h)))));
        }
        transactions += hashes->size();
    }
    if (!headers->status().ok()) return from_status(headers->status(), "pruning: reading");
    const std::string from = number_key(*first), to = number_key(last + 1);
    BARREL_TRY(check(batch.DeleteRange(m_impl.cfs[kHeaders], slice(from), slice(to))));
    BARREL_TRY(check(batch.DeleteRange(m_impl.cfs[kBlocks], slice(from), slice(to))));
    if (auto s = write(batch); !s.ok())
        return from_status(s, "pruning: deleting blocks " + std::to_string(*first) + " to " +
                                  std::to_string(last));
    return true;
}

rocksdb::Status Pruner::write(rocksdb::WriteBatch& batch) {
    const std::lock_guard lock{m_impl.write_mutex};
    return m_impl.db->Write(rocksdb::WriteOptions{}, &batch);
}

}  // namespace barrel::store
