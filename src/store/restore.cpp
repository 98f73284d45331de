// Restoring a state-sync snapshot into a datadir (sync::Restorer drives it): the genesis state
// deleted under a marker, the snapshot's checked entries written, then the head moved to the
// snapshot's height in one batch that removes the marker. A writer's open that finds the marker
// undoes what an interrupted restore wrote (docs/formats.md, "State sync snapshots").

#include <barrel/block/block.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/store/documents.hpp>

#include "state_cache.hpp"
#include "store_impl.hpp"
#include <rocksdb/write_batch.h>

#include <memory>

namespace barrel::store {

namespace {

/// Deletes every key of column family `cf` in `batch`: a range from its first key to its last,
/// and the last (a user's name has no bound above it, so the range's end is a key it holds).
Expected<void, StoreError> delete_all(Store::Impl& impl, size_t cf, rocksdb::WriteBatch& batch) {
    std::unique_ptr<rocksdb::Iterator> it{impl.db->NewIterator({}, impl.cfs[cf])};
    it->SeekToFirst();
    if (!it->Valid()) {
        if (!it->status().ok()) return from_status(it->status(), "reading the state");
        return {};
    }
    const std::string first = it->key().ToString();
    it->SeekToLast();
    if (!it->Valid()) return from_status(it->status(), "reading the state");
    const std::string last = it->key().ToString();
    if (auto s = batch.DeleteRange(impl.cfs[cf], slice(first), slice(last)); !s.ok())
        return from_status(s, "deleting the state");
    if (auto s = batch.Delete(impl.cfs[cf], slice(last)); !s.ok())
        return from_status(s, "deleting the state");
    return {};
}

/// Every account and user deleted in `batch`.
Expected<void, StoreError> delete_state(Store::Impl& impl, rocksdb::WriteBatch& batch) {
    BARREL_TRY(delete_all(impl, kAccounts, batch));
    return delete_all(impl, kUsers, batch);
}

Expected<void, StoreError> write_synced(Store::Impl& impl, rocksdb::WriteBatch& batch,
                                        std::string_view what) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    if (auto s = impl.db->Write(wo, &batch); !s.ok()) return from_status(s, what);
    return {};
}

/// Both caches emptied while the epoch is odd, so that no read that began before the state
/// changed fills them with what it fetched (state_cache.hpp, CommitEpoch).
void forget_cached_state(Store::Impl& impl) {
    impl.accounts->clear();
    impl.users->clear();
}

}  // namespace

Expected<void, StoreError> abandon_interrupted_restore(Store::Impl& impl) {
    auto marker = impl.get(kMeta, kRestoringKey);
    if (!marker) return unexpected(marker.error());
    if (!*marker) return {};
    auto genesis_text = impl.get(kMeta, kGenesisKey);
    if (!genesis_text) return unexpected(genesis_text.error());
    if (!*genesis_text)
        return fail(StoreErrorCode::corruption,
                    "an interrupted restore cannot be undone: the datadir has no genesis");
    auto genesis = chain::parse_genesis(**genesis_text);
    if (!genesis)
        return fail(StoreErrorCode::corruption,
                    "an interrupted restore cannot be undone: " + genesis.error());
    rocksdb::WriteBatch batch;
    BARREL_TRY(delete_state(impl, batch));
    std::vector<rocksdb::Status> statuses;
    for (const auto& [address, account] : genesis->alloc.accounts)
        statuses.push_back(batch.Put(impl.cfs[kAccounts], slice(address_key(address)),
                                     slice(store::account_document(account))));
    for (const auto& [name, balance] : genesis->alloc.users)
        statuses.push_back(
            batch.Put(impl.cfs[kUsers], slice(name), slice(store::user_document(name, balance))));
    statuses.push_back(batch.Delete(impl.cfs[kMeta], slice(kRestoringKey)));
    for (const auto& s : statuses)
        if (!s.ok()) return from_status(s, "undoing an interrupted restore");
    return write_synced(impl, batch, "undoing an interrupted restore");
}

Expected<void, StoreError> Store::begin_restore(uint64_t height) {
    Impl& impl = *m_impl;
    if (impl.options.read_only)
        return fail(StoreErrorCode::invalid_argument, "restore: the store is open read-only");
    // A restore under way may begin again (another snapshot offered after one was rejected):
    // its entries are deleted with the rest.
    if (impl.head.number != 0 || impl.earliest.load() != 0)
        return fail(StoreErrorCode::invalid_argument,
                    "restore: the datadir holds blocks (head " + std::to_string(impl.head.number) +
                        "); a snapshot is restored only into a new datadir");
    if (height == 0)
        return fail(StoreErrorCode::invalid_argument, "restore: block 0 is the genesis");
    rocksdb::WriteBatch batch;
    BARREL_TRY(delete_state(impl, batch));
    const std::string value = number_key(height);
    if (auto s = batch.Put(impl.cfs[kMeta], slice(kRestoringKey), slice(value)); !s.ok())
        return from_status(s, "restore: writing the marker");
    const CommitInProgress in_progress{impl.epoch};
    BARREL_TRY(write_synced(impl, batch, "restore: starting"));
    forget_cached_state(impl);
    impl.restoring = height;
    return {};
}

Expected<void, StoreError> Store::restore_entries(const state::WriteSet& entries) {
    Impl& impl = *m_impl;
    if (!impl.restoring)
        return fail(StoreErrorCode::invalid_argument, "restore: no restore is under way");
    rocksdb::WriteBatch batch;
    std::vector<rocksdb::Status> statuses;
    statuses.reserve(entries.size());
    for (const auto& [address, account] : entries.accounts)
        statuses.push_back(batch.Put(impl.cfs[kAccounts], slice(address_key(address)),
                                     slice(store::account_document(account))));
    for (const auto& [name, balance] : entries.users)
        statuses.push_back(
            batch.Put(impl.cfs[kUsers], slice(name), slice(store::user_document(name, balance))));
    for (const auto& s : statuses)
        if (!s.ok()) return from_status(s, "restore: writing entries");
    if (auto s = impl.db->Write(rocksdb::WriteOptions{}, &batch); !s.ok())
        return from_status(s, "restore: writing entries");
    return {};
}

Expected<void, StoreError> Store::finish_restore(const RestoredHead& restored) {
    Impl& impl = *m_impl;
    const uint64_t number = restored.header.number;
    if (!impl.restoring || *impl.restoring != number)
        return fail(StoreErrorCode::invalid_argument,
                    "restore: no restore of block " + std::to_string(number) + " is under way");
    if (restored.lattice.root() != restored.header.state_root)
        return fail(StoreErrorCode::invalid_argument,
                    "restore: the restored lattice does not hash to block " +
                        std::to_string(number) + "'s state root " +
                        to_hex(restored.header.state_root));
    const Hash hash = block::hash_of(restored.header);
    const Head head{number, hash, restored.header.state_root};
    const std::string key = number_key(number);
    const std::string earliest = number_key(number + 1);
    const std::string header = header_document(restored.header, hash, restored.transaction_count);
    const std::string head_doc = head_document(head).dump();
    const Bytes lattice = restored.lattice.bytes();
    rocksdb::WriteBatch batch;
    std::vector<rocksdb::Status> statuses;
    statuses.push_back(batch.Put(impl.cfs[kHeaders], slice(key), slice(header)));
    statuses.push_back(batch.Put(impl.cfs[kMeta], slice(hash_key(hash)), slice(key)));
    if (!restored.consensus_hash.empty())
        statuses.push_back(batch.Put(impl.cfs[kMeta], slice(consensus_hash_key(number)),
                                     slice(as_chars(restored.consensus_hash))));
    statuses.push_back(batch.Put(impl.cfs[kMeta], slice(kHeadKey), slice(head_doc)));
    statuses.push_back(batch.Put(impl.cfs[kMeta], slice(kLatticeKey), slice(as_chars(lattice))));
    statuses.push_back(batch.Put(impl.cfs[kMeta], slice(kEarliestKey), slice(earliest)));
    statuses.push_back(batch.Delete(impl.cfs[kMeta], slice(kRestoringKey)));
    for (const auto& s : statuses)
        if (!s.ok()) return from_status(s, "restore: finishing");
    {
        const CommitInProgress in_progress{impl.epoch};
        BARREL_TRY(write_synced(impl, batch, "restore: finishing"));
        forget_cached_state(impl);
    }
    if (impl.committed) (void)impl.committed->write(head, true);
    impl.head = head;
    impl.lattice = restored.lattice;
    impl.earliest.store(number + 1);
    impl.restoring.reset();
    return {};
}

std::optional<uint64_t> Store::restoring() const noexcept { return m_impl->restoring; }

}  // namespace barrel::store
