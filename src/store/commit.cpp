// Stage 4: a block's documents, raw block, hash index and head in one WriteBatch; then the
// caches move on (write-through), with the commit's epoch held odd from before the write until
// after it (state_cache.hpp, CommitEpoch).

#include "block_batch.hpp"
#include "core/parallel.hpp"
#include "crash_points.hpp"
#include "pruner.hpp"
#include "store_impl.hpp"
#include <rocksdb/write_batch.h>

#include <chrono>
#include <span>

namespace barrel::store {

namespace {

/// The largest write-batch buffer a store keeps for the next commit (a few dozen full blocks'
/// worth; an outlying block's buffer is dropped).
constexpr size_t kMaxKeptBatchBytes = size_t{64} << 20;

/// Whether every column family's active memtable is empty.
bool memtables_empty(Store::Impl& impl) {
    for (auto* cf : impl.cfs) {
        uint64_t entries = 0;
        if (!impl.db->GetIntProperty(cf, rocksdb::DB::Properties::kNumEntriesActiveMemTable,
                                     &entries) ||
            entries > 0)
            return false;
    }
    return true;
}

/// The number of the WAL RocksDB writes to now, or 0 if it cannot say.
uint64_t current_wal(Store::Impl& impl) {
    std::unique_ptr<rocksdb::LogFile> wal;
    if (!impl.db->GetCurrentWalFile(&wal).ok() || !wal) return 0;
    return wal->LogNumber();
}

/// Keeps the metadata family's active memtable from being empty when a block is written, so that
/// a write that fails finds something to flush at DB::Resume. RocksDB 7 switches to a new WAL
/// only by flushing a memtable that holds data: with nothing to flush, Resume would leave the
/// failed WAL (whose writer keeps its error, and asserts when used again) in place. A put and a
/// delete of one key, without the WAL: no file is written, so this cannot fail for room, and
/// nothing of it outlives a flush.
void keep_memtable_flushable(Store::Impl& impl) {
    uint64_t entries = 0;
    auto* meta = impl.cfs[kMeta];
    if (impl.db->GetIntProperty(meta, rocksdb::DB::Properties::kNumEntriesActiveMemTable,
                                &entries) &&
        entries > 0)
        return;
    constexpr std::string_view kKey = "resume-anchor";
    rocksdb::WriteBatch anchor;
    (void)anchor.Put(meta, slice(kKey), rocksdb::Slice{});
    (void)anchor.Delete(meta, slice(kKey));
    rocksdb::WriteOptions wo;
    wo.disableWAL = true;
    const std::lock_guard write{impl.write_mutex};
    (void)impl.db->Write(wo, &anchor);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// After a failed write, RocksDB refuses every write until DB::Resume: it flushes every memtable
/// and switches to a new WAL (the failed write may have left a torn record in the old one, which
/// the flush makes obsolete), then takes writes again. The disk has room now, or the flush fails
/// and the store stays in error for the next attempt.
Expected<void, StoreError> resume_after_failure(Store::Impl& impl) {
    if (!impl.failed.load(std::memory_order_relaxed)) return {};
    // Resume could not move off the failed WAL: nothing to flush, and no earlier attempt moved
    // off it (keep_memtable_flushable makes this rare: a write that switched every memtable
    // itself, at the WAL size limit, and then failed).
    if (memtables_empty(impl) && current_wal(impl) == impl.failed_wal)
        return fail(impl.failure.code, "the store is in error since a write failed (" +
                                           impl.failure.message +
                                           "); it cannot resume in place: reopen the datadir");
    // Busy: RocksDB's own recovery is under way, one it was left (resume_listener.hpp: not a
    // full disk's that stopped writes), and this call finds it done later.
    const auto resumed = impl.db->Resume();
    if (!resumed.ok())
        return fail(impl.failure.code,
                    "the store is in error since a write failed (" + impl.failure.message + "); " +
                        (resumed.IsBusy() ? std::string{"RocksDB is recovering on its own"}
                                          : "resuming it: " + resumed.ToString()));
    impl.failed.store(false, std::memory_order_relaxed);
    return {};
}

/// The keys and values of the records after a block's documents: the raw block, the block-hash
/// index, the new head and the state's lattice after the block.
struct BlockTail {
    std::string number;
    std::string hash_index_key;
    Head head;
    std::string head_doc;
    Bytes lattice;
    std::string consensus_key;
    PutRecord all[5];
    /// The consensus engine's hash of the block, when it has one, is the fifth: in the same
    /// batch, so that it is there exactly when the block is.
    std::span<const PutRecord> records;

    BlockTail(Store::Impl& impl, const block::Block& b, const exec::Outcome& o,
              BytesView consensus_hash)
        : number{number_key(b.header->number)},
          hash_index_key{hash_key(b.hash)},
          head{b.header->number, b.hash, b.header->state_root},
          head_doc{head_document(head).dump()},
          lattice{o.lattice.bytes()},
          consensus_key{consensus_hash_key(b.header->number)},
          all{{impl.cfs[kBlocks]->GetID(), number, as_chars(b.wire)},
              {impl.cfs[kMeta]->GetID(), hash_index_key, number},
              {impl.cfs[kMeta]->GetID(), kHeadKey, head_doc},
              {impl.cfs[kMeta]->GetID(), kLatticeKey, as_chars(lattice)},
              {impl.cfs[kMeta]->GetID(), consensus_key, as_chars(consensus_hash)}},
          records{all, consensus_hash.empty() ? 4u : 5u} {}
    BlockTail(const BlockTail&) = delete;  // the records view the strings
    BlockTail& operator=(const BlockTail&) = delete;
};

/// Writes the batch, with the crash tests' kill points (crash_points.hpp; never set outside
/// them) around it; a failure puts the store in error (resume_after_failure).
Expected<void, StoreError> write_block(Store::Impl& impl, std::string rep, uint64_t number) {
    BlockWriteBatch batch{std::move(rep)};
    rocksdb::WriteOptions wo;
    wo.sync = impl.options.sync;
    if (impl.crash_points) [[unlikely]]
        crash_at(CrashPoint::built, number);
    const auto s = [&] {
        const std::lock_guard write{impl.write_mutex};
        return impl.db->Write(wo, &batch);
    }();
    if (impl.crash_points) [[unlikely]]
        crash_at(CrashPoint::written, number);
    impl.batch_buffer = std::move(batch).release();
    // An outlying block's batch is not kept for the rest of the process (flat memory).
    if (impl.batch_buffer.capacity() > kMaxKeptBatchBytes) impl.batch_buffer = std::string{};
    if (!s.ok()) {
        impl.failed.store(true, std::memory_order_relaxed);
        impl.failed_wal = current_wal(impl);
        // The pipeline names the stage ("block 7: commit: ..."); this names what failed in it.
        impl.failure = from_status(s, "writing the block").error;
        return unexpected(impl.failure);
    }
    return {};
}

/// Only with the block durable in the WAL does the cache move on: in parallel, since each put is
/// a cache miss on a random line and both caches take concurrent writers.
void write_through(Store::Impl& impl, const exec::Outcome& o, bool parallel) {
    for_each_index(o.writes.accounts.size(), parallel, [&](size_t i) {
        const auto& [address, account] = o.writes.accounts[i];
        impl.accounts->put(address, account);
    });
    for_each_index(o.writes.users.size(), parallel, [&](size_t i) {
        const auto& [name, balance] = o.writes.users[i];
        impl.users->put(name, balance);
    });
}

}  // namespace

Expected<CommitStats, StoreError> Store::commit(const block::Block& b, const exec::Outcome& o,
                                                bool parallel, BytesView consensus_hash) {
    if (!b.header)
        return fail(StoreErrorCode::invalid_argument,
                    "commit: a bare transaction list is not a block");
    const uint64_t number = b.header->number;
    BARREL_TRY(resume_after_failure(*m_impl));
    // Every document's value is at most about twice the block's bytes (hex), and RocksDB takes
    // values shorter than 4 GiB (Options::max_block_bytes).
    if (b.wire.size() > m_impl->options.max_block_bytes)
        return fail(StoreErrorCode::invalid_argument,
                    "commit: a block of " + std::to_string(b.wire.size()) +
                        " bytes is more than the store takes (" +
                        std::to_string(m_impl->options.max_block_bytes) + ")");
    CommitStats stats;
    const auto t0 = std::chrono::steady_clock::now();
    // The header carries the outcome's root (checked by the pipeline before it commits); a lattice
    // that does not hash to it would make the datadir refuse to open.
    if (o.state_root != b.header->state_root || o.lattice.root() != o.state_root)
        return fail(StoreErrorCode::invalid_argument,
                    "commit: block " + std::to_string(number) +
                        ": the outcome's lattice is not the header's state root");
    const BlockTail tail{*m_impl, b, o, consensus_hash};
    const DocumentFamilies families{m_impl->cfs[kTxs]->GetID(), m_impl->cfs[kReceipts]->GetID(),
                                    m_impl->cfs[kAccounts]->GetID(), m_impl->cfs[kUsers]->GetID(),
                                    m_impl->cfs[kHeaders]->GetID()};
    BlockBatch built = encode_block_batch(b, o, families, tail.number, tail.records, parallel,
                                          std::move(m_impl->batch_buffer));
    stats.encode_ms = ms_since(t0);
    stats.documents = built.records - tail.records.size();
    stats.bytes = built.bytes;

    const auto t1 = std::chrono::steady_clock::now();
    keep_memtable_flushable(*m_impl);
    // From here until the write-through below, a read-miss fill may have fetched either value.
    const CommitInProgress in_progress{m_impl->epoch};
    BARREL_TRY(write_block(*m_impl, std::move(built.rep), number));
    stats.write_ms = ms_since(t1);
    // After the write returned, so that the record never names a block the database lacks. A
    // failed update leaves it lagging, which an open takes (committed.hpp).
    if (m_impl->committed) (void)m_impl->committed->write(tail.head, m_impl->options.sync);
    if (m_impl->crash_points) [[unlikely]]
        crash_at(CrashPoint::marked, number);
    write_through(*m_impl, o, parallel);
    m_impl->head = tail.head;
    m_impl->lattice = o.lattice;
    // Only a signal: the pruner deletes on its own thread (pruner.hpp).
    if (m_impl->pruner) m_impl->pruner->committed(number);
    return stats;
}

bool Store::write_failed() const noexcept { return m_impl->failed.load(std::memory_order_relaxed); }

}  // namespace barrel::store
