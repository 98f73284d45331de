// The restore of one offered snapshot: the offer checked against the trusted root, then each
// chunk checked as it arrives before anything of it is written (docs/formats.md, "State sync
// snapshots", "The checks").

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/sync/snapshot.hpp>

#include <algorithm>

namespace barrel::sync {

namespace {

bool less(BytesView a, BytesView b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

bool same(BytesView a, BytesView b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

/// The chunk's bytes are not the ones committed to (by the offer's hash for chunk 0, by the
/// index's digest for the others): the sender's fault, fetched again from another peer.
ChunkResult retry_elsewhere(uint32_t index, std::string reason) {
    return ChunkResult{ChunkVerdict::retry,
                       {index},
                       "chunk " + std::to_string(index) + ": " + std::move(reason),
                       false,
                       true};
}

/// The snapshot itself is wrong: bytes every honest peer serves alike (they hash to what the
/// offer commits to) do not hold what they must. CometBFT moves on to another snapshot.
ChunkResult reject_snapshot(uint32_t index, std::string reason) {
    return ChunkResult{ChunkVerdict::reject_snapshot,
                       {},
                       "chunk " + std::to_string(index) + ": " + std::move(reason)};
}

ChunkResult abort_restore(const store::StoreError& e) {
    return ChunkResult{ChunkVerdict::abort, {}, "restore: " + e.message};
}

}  // namespace

Restorer::Restorer(store::Store& store, Descriptor offered, Metadata metadata)
    : m_store{store}, m_offered{std::move(offered)}, m_metadata{std::move(metadata)} {}

Restorer::Offer Restorer::offer(store::Store& store, const Descriptor& offered,
                                const Hash& trusted_root) {
    Offer offer;
    const auto refuse = [&](OfferVerdict verdict, std::string reason) {
        offer.verdict = verdict;
        offer.reason =
            "snapshot of block " + std::to_string(offered.height) + ": " + std::move(reason);
        return std::move(offer);
    };
    if (offered.format != kFormat)
        return refuse(OfferVerdict::reject_format, "format " + std::to_string(offered.format) +
                                                       ", this node restores format " +
                                                       std::to_string(kFormat));
    if (store.head().number != 0 || store.earliest() != 0)
        return refuse(OfferVerdict::abort, "this datadir holds blocks (head " +
                                               std::to_string(store.head().number) +
                                               "); only a new datadir restores a snapshot");
    auto metadata = decode_metadata(offered.metadata);
    if (!metadata) return refuse(OfferVerdict::reject, metadata.error().message);
    if (metadata->header.number != offered.height || offered.height == 0)
        return refuse(OfferVerdict::reject,
                      "its header is of block " + std::to_string(metadata->header.number));
    if (metadata->header.chain_id != store.genesis().config.chain_id)
        return refuse(OfferVerdict::reject,
                      "its header is of chain " + std::to_string(metadata->header.chain_id) +
                          ", this datadir's is " + std::to_string(store.genesis().config.chain_id));
    if (metadata->header.state_root != trusted_root)
        return refuse(OfferVerdict::reject,
                      "its state root " + to_hex(metadata->header.state_root) +
                          " is not the trusted app hash " + to_hex(trusted_root));
    if (offered.chunks == 0 || offered.chunks > kMaxChunks + 1)
        return refuse(OfferVerdict::reject, std::to_string(offered.chunks) + " chunks");
    if (auto begun = store.begin_restore(offered.height); !begun)
        return refuse(OfferVerdict::abort, begun.error().message);
    offer.restorer.reset(new Restorer{store, offered, std::move(metadata).value()});
    return offer;
}

ChunkResult Restorer::apply(uint32_t index, BytesView chunk) {
    // CometBFT applies the chunks in order; one already applied (a repeated delivery) changes
    // nothing, one ahead of the next is fetched again in its turn.
    if (index < m_next) return ChunkResult{};
    if (index > m_next)
        return ChunkResult{
            ChunkVerdict::retry,
            {m_next},
            "chunk " + std::to_string(index) + " before chunk " + std::to_string(m_next)};
    if (index == 0) return apply_index(chunk);
    return apply_data(index, chunk);
}

ChunkResult Restorer::apply_index(BytesView chunk) {
    // A chunk 0 that is not the offered one is its sender's fault; one that is, but is wrong,
    // is the snapshot's.
    if (keccak256(chunk) != m_offered.hash)
        return retry_elsewhere(0, "not the offered snapshot's index");
    auto index = decode_index(chunk);
    if (!index) return reject_snapshot(0, index.error().message);
    if (index->chunks.size() + 1 != m_offered.chunks)
        return reject_snapshot(0, "lists " + std::to_string(index->chunks.size()) +
                                      " data chunks, the snapshot has " +
                                      std::to_string(m_offered.chunks - 1));
    state::Lattice sum;
    const ChunkInfo* previous = nullptr;
    for (const ChunkInfo& c : index->chunks) {
        if (previous && !less(previous->last_key, c.last_key))
            return reject_snapshot(0, "its last keys do not ascend");
        sum += c.partial;
        previous = &c;
    }
    if (sum.root() != m_metadata.header.state_root)
        return reject_snapshot(0, "its partial lattices sum to root " + to_hex(sum.root()) +
                                      ", not the trusted " + to_hex(m_metadata.header.state_root));
    m_index = std::move(index).value();
    m_next = 1;
    if (m_index->chunks.empty()) return apply_data(1, {});  // an empty state: nothing follows
    return ChunkResult{};
}

ChunkResult Restorer::apply_data(uint32_t index, BytesView chunk) {
    const bool empty_state = m_index->chunks.empty();
    if (!empty_state) {
        const ChunkInfo& expected = m_index->chunks[index - 1];
        if (keccak256(chunk) != expected.digest)
            return retry_elsewhere(index, "its digest is not the index's");
        // From here the bytes are the ones the index commits to: a fault is the snapshot's.
        auto entries = decode_chunk(chunk);
        if (!entries) return reject_snapshot(index, entries.error().message);
        if (entries->size() != expected.entries)
            return reject_snapshot(index, std::to_string(entries->size()) +
                                              " entries, the index says " +
                                              std::to_string(expected.entries));
        state::Lattice partial;
        state::WriteSet writes;
        BytesView last = m_last_key;
        for (const Entry& e : *entries) {
            if (!last.empty() && !less(last, e.key))
                return reject_snapshot(index,
                                       "key " + to_hex(e.key) + " does not follow " + to_hex(last));
            last = e.key;
            partial.add(e.encoding);
            if (e.account) writes.accounts.push_back(*e.account);
            if (e.user) writes.users.push_back(*e.user);
        }
        if (!same(last, expected.last_key))
            return reject_snapshot(index, "its last key is not the index's");
        if (partial != expected.partial)
            return reject_snapshot(index, "its entries do not sum to the index's partial lattice");
        if (auto written = m_store.restore_entries(writes); !written)
            return abort_restore(written.error());
        m_last_key.assign(last.begin(), last.end());
        m_next = index + 1;
    }
    ChunkResult result;
    if (empty_state || m_next == m_offered.chunks) {
        state::Lattice lattice;
        for (const ChunkInfo& c : m_index->chunks) lattice += c.partial;
        auto finished = m_store.finish_restore(store::RestoredHead{
            m_metadata.header, m_metadata.transaction_count, lattice, m_metadata.consensus_hash});
        if (!finished) return abort_restore(finished.error());
        m_next = m_offered.chunks;
        result.done = true;
    }
    return result;
}

}  // namespace barrel::sync
