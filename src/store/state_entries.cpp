// The state as entries: every account and DagTransfer user at a snapshot, in key order (0x01 ‖
// address, then 0x02 ‖ name: the accounts family, then the users family), as their canonical
// encodings. What `barrel-node verify` sums into a lattice and what a state-sync snapshot carries.

#include <barrel/core/hex.hpp>
#include <barrel/store/documents.hpp>

#include "store_impl.hpp"
#include <rocksdb/iterator.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <memory>

namespace barrel::store {

namespace {

/// Entries per batch of the parallel sum: enough that a batch's lattice (2 KiB) and its hand-off
/// cost nothing beside its expansions (about a microsecond each).
constexpr size_t kBatchEntries = 2048;

/// Walks the accounts family, then the users family, at a snapshot: one encoded entry per next().
class EntryCursor {
public:
    EntryCursor(const Store::Impl& impl, const rocksdb::Snapshot* at) : m_impl{impl} {
        m_options.snapshot = at;
        m_options.fill_cache = false;  // a full scan would evict what the node reads
        open(kAccounts);
    }

    /// The next entry appended to `out`: true; false at the end; or the error of a document that
    /// does not decode or a read that failed.
    Expected<bool, StoreError> next(Bytes& out) {
        while (!m_it->Valid()) {
            if (!m_it->status().ok()) return from_status(m_it->status(), "reading the state");
            if (m_cf == kUsers) return false;
            open(kUsers);
        }
        const std::string_view key{m_it->key().data(), m_it->key().size()};
        const std::string_view value{m_it->value().data(), m_it->value().size()};
        if (m_cf == kAccounts) {
            const auto account = parse_account_document(value);
            if (key.size() != Address::size() || !account)
                return fail(
                    StoreErrorCode::corruption,
                    "the stored account document of " + to_hex(as_bytes(key)) + " does not parse");
            state::encode_entry(out, Address::from_view(as_bytes(key)), *account);
        } else {
            const auto balance = parse_user_document(value);
            if (!balance)
                return fail(
                    StoreErrorCode::corruption,
                    "the stored document of user " + to_hex(as_bytes(key)) + " does not parse");
            state::encode_entry(out, key, *balance);
        }
        m_it->Next();
        return true;
    }

private:
    void open(size_t cf) {
        m_cf = cf;
        m_it.reset(m_impl.db->NewIterator(m_options, m_impl.cfs[cf]));
        m_it->SeekToFirst();
    }
    const Store::Impl& m_impl;
    rocksdb::ReadOptions m_options;
    size_t m_cf{kAccounts};
    std::unique_ptr<rocksdb::Iterator> m_it;
};

/// A run of encoded entries, back to back.
struct Batch {
    Bytes bytes;
    std::vector<size_t> ends;  ///< each entry's end in `bytes`
};

}  // namespace

Expected<void, StoreError> Snapshot::for_each_entry(
    const std::function<bool(BytesView)>& visit) const {
    EntryCursor cursor{m_impl, m_handle->snapshot};
    Bytes entry;
    for (;;) {
        entry.clear();
        auto more = cursor.next(entry);
        if (!more) return unexpected(more.error());
        if (!*more || !visit(entry)) return {};
    }
}

Expected<Snapshot::StateSum, StoreError> Snapshot::recompute_lattice(bool parallel) const {
    // One reader (RocksDB's iterator is serial) hands batches of encodings to summers on every
    // thread; each batch's partial lattice is added as it comes (the sum commutes). Tokens bound
    // the batches in flight, so memory stays flat whatever the state's size.
    EntryCursor cursor{m_impl, m_handle->snapshot};
    std::optional<StoreError> failed;
    StateSum total;
    const size_t tokens =
        parallel ? 2 * static_cast<size_t>(tbb::this_task_arena::max_concurrency()) : 1;
    tbb::parallel_pipeline(
        tokens, tbb::make_filter<void, std::shared_ptr<Batch>>(
                    tbb::filter_mode::serial_in_order,
                    [&](tbb::flow_control& fc) -> std::shared_ptr<Batch> {
                        auto batch = std::make_shared<Batch>();
                        while (batch->ends.size() < kBatchEntries) {
                            auto more = cursor.next(batch->bytes);
                            if (!more) {
                                failed = more.error();
                                break;
                            }
                            if (!*more) break;
                            batch->ends.push_back(batch->bytes.size());
                        }
                        total.entries += batch->ends.size();
                        if (batch->ends.empty() || failed) {
                            fc.stop();
                            return nullptr;
                        }
                        return batch;
                    }) &
                    tbb::make_filter<std::shared_ptr<Batch>, state::Lattice>(
                        tbb::filter_mode::parallel,
                        [](const std::shared_ptr<Batch>& batch) {
                            state::Lattice partial;
                            size_t begin = 0;
                            for (size_t end : batch->ends) {
                                partial.add(BytesView{batch->bytes}.subspan(begin, end - begin));
                                begin = end;
                            }
                            return partial;
                        }) &
                    tbb::make_filter<state::Lattice, void>(
                        tbb::filter_mode::serial_out_of_order,
                        [&](const state::Lattice& partial) { total.lattice += partial; }));
    if (failed) return unexpected(*failed);
    return total;
}

Expected<StateCheck, StoreError> verify_state(const Store& store, bool parallel) {
    auto snapshot = store.snapshot();
    if (!snapshot) return unexpected(snapshot.error());
    auto sum = (*snapshot)->recompute_lattice(parallel);
    if (!sum) return unexpected(sum.error());
    return StateCheck{(*snapshot)->head(), sum->lattice.root(), sum->entries};
}

}  // namespace barrel::store
