// Format 1's bytes (docs/formats.md, "State sync snapshots"): the index, the metadata and the
// data chunks, encoded with RLP and decoded strictly, every length bounded before anything is
// allocated; and a store snapshot cut into chunks by the format's rule.

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/sync/snapshot.hpp>

#include <algorithm>

namespace barrel::sync {

namespace {

/// The kind bytes of an entry's key (docs/formats.md, "Write set").
constexpr uint8_t kAccountKind = 0x01;
constexpr uint8_t kUserKind = 0x02;
/// The longest consensus hash the metadata carries (CometBFT's are 32 bytes).
constexpr size_t kMaxConsensusHashBytes = 64;

Unexpected<SnapshotError> malformed(SnapshotErrorCode code, std::string what) {
    return unexpected(SnapshotError{code, std::move(what)});
}

std::string rlp_reason(std::string_view field, rlp::DecodingError e) {
    return std::string{field} + ": " + std::string{rlp::to_string(e)};
}

/// Decodes the index's one chunk record from the front of `from`.
Expected<ChunkInfo, std::string> decode_chunk_info(BytesView& from) {
    auto list = rlp::decode_list(from);
    if (!list) return unexpected(rlp_reason("chunk record", list.error()));
    BytesView in = *list;
    ChunkInfo info;
    auto entries = rlp::decode_u64(in);
    if (!entries) return unexpected(rlp_reason("entries", entries.error()));
    if (*entries == 0) return unexpected(std::string{"entries: a chunk holds at least one"});
    info.entries = *entries;
    auto key = rlp::decode_string(in);
    if (!key) return unexpected(rlp_reason("last_key", key.error()));
    if (key->empty() || key->size() > kMaxKeyBytes)
        return unexpected("last_key: " + std::to_string(key->size()) + " bytes");
    info.last_key.assign(key->begin(), key->end());
    auto digest = rlp::decode_fixed<32>(in);
    if (!digest) return unexpected(rlp_reason("digest", digest.error()));
    info.digest = *digest;
    auto partial_bytes = rlp::decode_string(in);
    if (!partial_bytes) return unexpected(rlp_reason("partial", partial_bytes.error()));
    auto partial = state::Lattice::from_bytes(*partial_bytes);
    if (!partial)
        return unexpected("partial: " + std::to_string(partial_bytes->size()) + " bytes, not 2048");
    info.partial = *partial;
    if (!in.empty()) return unexpected(std::string{"chunk record: trailing bytes"});
    return info;
}

/// Decodes one entry from the front of `from`: its key and value, and its bytes checked to be
/// the canonical encoding of what they decode to.
Expected<Entry, std::string> decode_entry(BytesView& from) {
    const BytesView start = from;
    auto list = rlp::decode_list(from);
    if (!list) return unexpected(rlp_reason("entry", list.error()));
    Entry entry;
    entry.encoding = start.first(start.size() - from.size());
    BytesView in = *list;
    auto key = rlp::decode_string(in);
    if (!key) return unexpected(rlp_reason("key", key.error()));
    if (key->empty()) return unexpected(std::string{"key: empty"});
    entry.key = *key;
    Bytes canonical;
    if ((*key)[0] == kAccountKind) {
        if (key->size() != 1 + Address::size())
            return unexpected("key: an account key of " + std::to_string(key->size()) + " bytes");
        auto value = rlp::decode_list(in);
        if (!value) return unexpected(rlp_reason("account", value.error()));
        state::Account account;
        auto nonce = rlp::decode_u64(*value);
        if (!nonce) return unexpected(rlp_reason("nonce", nonce.error()));
        auto balance = rlp::decode_u256(*value);
        if (!balance) return unexpected(rlp_reason("balance", balance.error()));
        if (!value->empty()) return unexpected(std::string{"account: trailing bytes"});
        account.nonce = *nonce;
        account.balance = *balance;
        const Address address = Address::from_view(key->subspan(1));
        state::encode_entry(canonical, address, account);
        entry.account.emplace(address, account);
    } else if ((*key)[0] == kUserKind) {
        if (key->size() == 1) return unexpected(std::string{"key: a user without a name"});
        auto balance = rlp::decode_u256(in);
        if (!balance) return unexpected(rlp_reason("balance", balance.error()));
        std::string name{as_chars(key->subspan(1))};
        state::encode_entry(canonical, name, *balance);
        entry.user.emplace(std::move(name), *balance);
    } else {
        return unexpected("key: kind " + std::to_string((*key)[0]) + " is neither 1 nor 2");
    }
    if (!in.empty()) return unexpected(std::string{"entry: trailing bytes"});
    if (!std::equal(canonical.begin(), canonical.end(), entry.encoding.begin(),
                    entry.encoding.end()))
        return unexpected(std::string{"entry: not its canonical encoding"});
    return entry;
}

}  // namespace

std::string_view to_string(SnapshotErrorCode code) noexcept {
    switch (code) {
        case SnapshotErrorCode::malformed_index: return "malformed_index";
        case SnapshotErrorCode::malformed_metadata: return "malformed_metadata";
        case SnapshotErrorCode::malformed_chunk: return "malformed_chunk";
        case SnapshotErrorCode::not_found: return "not_found";
        case SnapshotErrorCode::io: return "io";
        case SnapshotErrorCode::store: return "store";
    }
    return "unknown";
}

Bytes encode(const Index& index) {
    Bytes records;
    for (const ChunkInfo& c : index.chunks) {
        Bytes record;
        rlp::encode(record, c.entries);
        rlp::encode(record, c.last_key);
        rlp::encode(record, c.digest);
        rlp::encode(record, c.partial.bytes());
        rlp::encode_list(records, record);
    }
    Bytes out;
    rlp::encode_list(out, records);
    return out;
}

Expected<Index, SnapshotError> decode_index(BytesView bytes) {
    const auto bad = [](const std::string& what) {
        return malformed(SnapshotErrorCode::malformed_index, "snapshot index: " + what);
    };
    if (bytes.size() > kMaxChunkBytes)
        return bad(std::to_string(bytes.size()) + " bytes, more than a chunk may have");
    auto list = rlp::decode_list(bytes);
    if (!list) return bad(rlp_reason("list", list.error()));
    if (!bytes.empty()) return bad("trailing bytes");
    Index index;
    BytesView in = *list;
    while (!in.empty()) {
        if (index.chunks.size() == kMaxChunks)
            return bad("more than " + std::to_string(kMaxChunks) + " chunks");
        auto info = decode_chunk_info(in);
        if (!info)
            return bad("chunk " + std::to_string(index.chunks.size() + 1) + ": " + info.error());
        index.chunks.push_back(std::move(info).value());
    }
    return index;
}

Bytes encode(const Metadata& metadata) {
    Bytes payload;
    rlp::encode(payload, block::encode(metadata.header));
    rlp::encode(payload, metadata.transaction_count);
    rlp::encode(payload, metadata.consensus_hash);
    Bytes out;
    rlp::encode_list(out, payload);
    return out;
}

Expected<Metadata, SnapshotError> decode_metadata(BytesView bytes) {
    const auto bad = [](const std::string& what) {
        return malformed(SnapshotErrorCode::malformed_metadata, "snapshot metadata: " + what);
    };
    if (bytes.size() > kMaxChunkBytes) return bad(std::to_string(bytes.size()) + " bytes");
    auto list = rlp::decode_list(bytes);
    if (!list) return bad(rlp_reason("list", list.error()));
    if (!bytes.empty()) return bad("trailing bytes");
    BytesView in = *list;
    Metadata m;
    auto header_bytes = rlp::decode_string(in);
    if (!header_bytes) return bad(rlp_reason("header", header_bytes.error()));
    BytesView header_in = *header_bytes;
    auto header = block::decode_header(header_in);
    if (!header)
        return bad("header: " + std::string{block::to_string(header.error().field)} + ": " +
                   std::string{rlp::to_string(header.error().rlp)});
    if (!header_in.empty()) return bad("header: trailing bytes");
    m.header = *header;
    auto count = rlp::decode_u64(in);
    if (!count) return bad(rlp_reason("transaction_count", count.error()));
    m.transaction_count = *count;
    auto consensus = rlp::decode_string(in);
    if (!consensus) return bad(rlp_reason("consensus_hash", consensus.error()));
    if (consensus->size() > kMaxConsensusHashBytes)
        return bad("consensus_hash: " + std::to_string(consensus->size()) + " bytes");
    m.consensus_hash.assign(consensus->begin(), consensus->end());
    if (!in.empty()) return bad("trailing bytes");
    return m;
}

Expected<std::vector<Entry>, SnapshotError> decode_chunk(BytesView chunk) {
    if (chunk.size() > kMaxChunkBytes)
        return malformed(SnapshotErrorCode::malformed_chunk,
                         "snapshot chunk: " + std::to_string(chunk.size()) + " bytes");
    std::vector<Entry> entries;
    while (!chunk.empty()) {
        auto entry = decode_entry(chunk);
        if (!entry)
            return malformed(
                SnapshotErrorCode::malformed_chunk,
                "snapshot chunk: entry " + std::to_string(entries.size()) + ": " + entry.error());
        entries.push_back(std::move(entry).value());
    }
    return entries;
}

Expected<std::pair<Descriptor, Bytes>, SnapshotError> build_snapshot(const store::Snapshot& at,
                                                                     const ChunkSink& sink,
                                                                     size_t chunk_target) {
    const uint64_t height = at.head().number;
    auto record = at.header_record(height);
    if (!record)
        return malformed(SnapshotErrorCode::store, "snapshot of block " + std::to_string(height) +
                                                       ": " + record.error().message);
    if (!*record)
        return malformed(SnapshotErrorCode::store,
                         "snapshot of block " + std::to_string(height) + ": no header stored");
    Metadata metadata{(*record)->header, (*record)->transaction_count, {}};
    if (auto consensus = at.consensus_hash(height); consensus && *consensus)
        metadata.consensus_hash = **consensus;

    // The format's cut: a chunk ends after the entry that takes it to the target or past it.
    // Each closed chunk goes to the sink at once; only its index record stays.
    Index index;
    Bytes chunk;
    ChunkInfo info;
    std::optional<SnapshotError> failed;
    const auto close_chunk = [&] {
        info.digest = keccak256(chunk);
        if (index.chunks.size() >= kMaxChunks) {
            failed = SnapshotError{SnapshotErrorCode::store,
                                   "snapshot of block " + std::to_string(height) + ": more than " +
                                       std::to_string(kMaxChunks) + " chunks, more than format " +
                                       std::to_string(kFormat) + " lists"};
            return false;
        }
        if (auto taken = sink(static_cast<uint32_t>(index.chunks.size() + 1), chunk); !taken) {
            failed = taken.error();
            return false;
        }
        index.chunks.push_back(std::move(info));
        chunk.clear();
        info = {};
        return true;
    };
    std::string undecodable;
    auto walked = at.for_each_entry([&](BytesView entry) {
        BytesView rest = entry;
        auto decoded = decode_entry(rest);
        if (!decoded) {  // never: the store encoded it; said rather than cut short
            undecodable = decoded.error();
            return false;
        }
        chunk.insert(chunk.end(), entry.begin(), entry.end());
        info.partial.add(entry);
        info.entries += 1;
        info.last_key.assign(decoded->key.begin(), decoded->key.end());
        return chunk.size() < chunk_target || close_chunk();
    });
    if (!walked)
        return malformed(SnapshotErrorCode::store, "snapshot of block " + std::to_string(height) +
                                                       ": " + walked.error().message);
    if (!undecodable.empty())
        return malformed(SnapshotErrorCode::store, "snapshot of block " + std::to_string(height) +
                                                       ": a stored entry: " + undecodable);
    if (!failed && info.entries > 0) close_chunk();
    if (failed) return unexpected(*failed);
    Bytes encoded_index = encode(index);
    // Chunk 0 is served whole, under CometBFT's limit like every other chunk.
    if (encoded_index.size() > kMaxChunkBytes)
        return malformed(SnapshotErrorCode::store,
                         "snapshot of block " + std::to_string(height) + ": its index of " +
                             std::to_string(index.chunks.size()) + " chunks takes " +
                             std::to_string(encoded_index.size()) + " bytes, more than a chunk's " +
                             std::to_string(kMaxChunkBytes));
    Descriptor descriptor{height, kFormat, static_cast<uint32_t>(index.chunks.size() + 1),
                          keccak256(encoded_index), encode(metadata)};
    return std::pair{std::move(descriptor), std::move(encoded_index)};
}

Expected<Built, SnapshotError> build_snapshot(const store::Snapshot& at, size_t chunk_target) {
    Built built;
    built.chunks.emplace_back();  // chunk 0, the index, once the rest is cut
    auto made = build_snapshot(
        at,
        [&](uint32_t, BytesView chunk) -> Expected<void, SnapshotError> {
            built.chunks.emplace_back(chunk.begin(), chunk.end());
            return {};
        },
        chunk_target);
    if (!made) return unexpected(made.error());
    built.descriptor = std::move(made->first);
    built.chunks[0] = std::move(made->second);
    return built;
}

}  // namespace barrel::sync
