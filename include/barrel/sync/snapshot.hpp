#pragma once
/// @file
/// State-sync snapshots, format 1 (docs/formats.md, "State sync snapshots"): the whole state of
/// a height as chunks of canonical entries in strict key order, with an index (chunk 0) of each
/// chunk's entry count, last key, digest and partial lattice, and metadata carrying the header
/// of that height. What consensus or sync code needs to take one (write_snapshot, Snapshots),
/// serve it (Snapshots::list, Snapshots::chunk) and restore it chunk by chunk, each checked as
/// it arrives (Restorer), with or without CometBFT: its ABCI calls map onto these one to one.

#include <barrel/block/header.hpp>
#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/state/lattice.hpp>
#include <barrel/state/state.hpp>
#include <barrel/store/store.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace barrel::sync {

/// The one snapshot format barrel writes and restores.
inline constexpr uint32_t kFormat = 1;
/// A data chunk ends after the entry that takes it to this many bytes or more (a rule of the
/// format: every node cuts the same state into the same chunks).
inline constexpr size_t kChunkTargetBytes = size_t{4} << 20;
/// The most bytes a chunk (data or index) or the metadata may have: CometBFT's p2p message limit
/// for a chunk is 16 MB, and a reader refuses more before looking inside.
inline constexpr size_t kMaxChunkBytes = size_t{16} << 20;
/// The most data chunks an index may list (a 64 GiB state at the target size): bounds what a
/// hostile index makes the reader allocate.
inline constexpr size_t kMaxChunks = 16384;
/// The longest key an entry has: the kind byte and a user name (DagTransfer's bound is far
/// below it); an index's last key longer than this is malformed.
inline constexpr size_t kMaxKeyBytes = 4096;

enum class [[nodiscard]] SnapshotErrorCode : uint8_t{
    malformed_index,     ///< chunk 0 does not decode as an index (or is over kMaxChunkBytes)
    malformed_metadata,  ///< the metadata does not decode
    malformed_chunk,     ///< a data chunk does not decode as canonical entries
    not_found,           ///< no such snapshot or chunk
    io,                  ///< the snapshot's files could not be written or read
    store,               ///< the store failed (reading the state, writing the restore)
};

struct SnapshotError {
    SnapshotErrorCode code{SnapshotErrorCode::io};
    std::string message;  ///< one line for the user
};

std::string_view to_string(SnapshotErrorCode code) noexcept;

/// One data chunk as the index describes it.
struct ChunkInfo {
    uint64_t entries{0};
    Bytes last_key;          ///< the key (kind ‖ address or kind ‖ name) of its last entry
    Hash digest;             ///< keccak256 of the chunk's bytes
    state::Lattice partial;  ///< the sum of its entries' elements

    friend bool operator==(const ChunkInfo&, const ChunkInfo&) = default;
};

/// Chunk 0: RLP([[entries, last_key, digest, partial], ...]).
struct Index {
    std::vector<ChunkInfo> chunks;
    friend bool operator==(const Index&, const Index&) = default;
};
Bytes encode(const Index& index);
/// Canonical RLP only, every length bounded (kMaxChunks, kMaxKeyBytes, 2,048-byte partials),
/// nothing left over; any other input is a malformed_index error naming what is wrong.
Expected<Index, SnapshotError> decode_index(BytesView bytes);

/// What CometBFT carries as Snapshot.metadata: RLP([header RLP, transaction_count,
/// consensus_hash]). Block H's header carries the state root the snapshot must sum to.
struct Metadata {
    block::Header header;
    uint64_t transaction_count{0};  ///< block H's, for the restored header document
    Bytes consensus_hash;           ///< CometBFT's hash of block H, or empty (at most 64 bytes)
    friend bool operator==(const Metadata&, const Metadata&) = default;
};
Bytes encode(const Metadata& metadata);
Expected<Metadata, SnapshotError> decode_metadata(BytesView bytes);

/// One entry of a data chunk, decoded: its key (kind ‖ address or kind ‖ name) and value.
struct Entry {
    BytesView encoding;  ///< the canonical encoding, a view into the chunk
    BytesView key;       ///< kind ‖ address / kind ‖ name, a view into the chunk
    std::optional<std::pair<Address, state::Account>> account;
    std::optional<std::pair<std::string, u256>> user;
};
/// The entries of a data chunk, each canonical (state::encode_entry of its decoded value gives
/// its bytes back): a malformed_chunk error otherwise. Key order is the Restorer's to check.
Expected<std::vector<Entry>, SnapshotError> decode_chunk(BytesView chunk);

/// A snapshot as it is offered and listed (CometBFT's abci.Snapshot).
struct Descriptor {
    uint64_t height{0};
    uint32_t format{kFormat};
    uint32_t chunks{0};  ///< the index and the data chunks
    Hash hash;           ///< keccak256 of chunk 0
    Bytes metadata;      ///< encode(Metadata)
    friend bool operator==(const Descriptor&, const Descriptor&) = default;
};

/// A whole snapshot in memory: chunk 0 (the index), then the data chunks.
struct Built {
    Descriptor descriptor;
    std::vector<Bytes> chunks;
};
/// Takes each data chunk as it is cut (index 1, 2, …), so that a snapshot is never whole in
/// memory: a writer puts it in a file and forgets it. An error stops the snapshot.
using ChunkSink = std::function<Expected<void, SnapshotError>(uint32_t index, BytesView chunk)>;
/// The snapshot of `at` (its head's height): every entry in key order, cut into chunks by
/// kChunkTargetBytes, each handed to `sink` as it closes; returns the descriptor and chunk 0
/// (the index). Byte-identical for the same state and header on every node. A test may cut
/// smaller chunks (`chunk_target`): the Restorer checks a snapshot against its own index,
/// whatever its cut.
Expected<std::pair<Descriptor, Bytes>, SnapshotError> build_snapshot(
    const store::Snapshot& at, const ChunkSink& sink, size_t chunk_target = kChunkTargetBytes);
/// The same, every chunk kept in memory (tests, small states).
Expected<Built, SnapshotError> build_snapshot(const store::Snapshot& at,
                                              size_t chunk_target = kChunkTargetBytes);

/// A datadir's `snapshots/` folder: the complete snapshots, newest last. A snapshot is written
/// under a hidden name and renamed into place whole, so a listed one is always complete; the
/// newest `keep` are kept. Thread-safe: the node writes on a background thread while the ABCI
/// snapshot connection lists and serves.
class Snapshots {
public:
    /// Opens (creates) `dir`, removes what an interrupted write left, and lists what is there.
    static Expected<std::unique_ptr<Snapshots>, SnapshotError> open(std::filesystem::path dir,
                                                                    size_t keep);

    /// Writes the snapshot of `at` (build_snapshot) as `<height>/`, each chunk to its file as it
    /// is cut (memory stays flat whatever the state's size), and removes the oldest ones past
    /// `keep`. A snapshot of a height already there is left as it is. `stop` set: the write is
    /// abandoned between two chunks (an io error "stopped"), nothing listed.
    Expected<Descriptor, SnapshotError> take(const store::Snapshot& at,
                                             const std::atomic<bool>* stop = nullptr);

    std::vector<Descriptor> list() const;
    /// Chunk `index` of the snapshot of `height` in `format`, read from its file.
    Expected<Bytes, SnapshotError> chunk(uint64_t height, uint32_t format, uint32_t index) const;
    /// The height of the oldest snapshot kept (what CometBFT must keep blocks from).
    std::optional<uint64_t> oldest() const;

    const std::filesystem::path& dir() const noexcept { return m_dir; }

private:
    Snapshots(std::filesystem::path dir, size_t keep) : m_dir{std::move(dir)}, m_keep{keep} {}
    std::filesystem::path m_dir;
    size_t m_keep;
    mutable std::mutex m_mutex;
    std::vector<Descriptor> m_listed;  ///< by height
};

/// What a BackgroundWriter calls, for the node's log and for tests.
struct WriterHooks {
    /// Called on the writer's thread before each snapshot is written (a test holds it here
    /// to show that the caller goes on meanwhile).
    std::function<void(uint64_t height)> before_write{};
    /// Called after each snapshot, with what it made or why it failed.
    std::function<void(const Expected<Descriptor, SnapshotError>&)> written{};
};

/// Takes snapshots on a thread of its own, so that the caller (Commit) never waits: request()
/// hands over a store snapshot and returns. A request that arrives while one is written is
/// dropped (the next interval takes the next). Destroy it before the store.
class BackgroundWriter {
public:
    BackgroundWriter(Snapshots& snapshots, WriterHooks hooks = {});
    ~BackgroundWriter();
    BackgroundWriter(const BackgroundWriter&) = delete;
    BackgroundWriter& operator=(const BackgroundWriter&) = delete;

    /// Hands `at` to the thread: false (and `at` released) if one is still being written.
    bool request(std::unique_ptr<store::Snapshot> at);
    /// Until the thread has written what it was handed.
    void wait_idle();

private:
    void run();
    Snapshots& m_snapshots;
    WriterHooks m_hooks;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_idle;
    std::unique_ptr<store::Snapshot> m_pending;
    bool m_busy{false};
    bool m_stop{false};
    std::atomic<bool> m_abandon{false};  ///< set by the destructor: a write in progress stops
    std::thread m_thread;
};

/// What a restore says about an offer (CometBFT's OfferSnapshot results).
enum class OfferVerdict : uint8_t {
    accept,
    reject,         ///< this snapshot is not the trusted state (its root, its height)
    reject_format,  ///< a format other than kFormat
    abort,          ///< this datadir takes no snapshot (it holds blocks)
};

/// What a restore says about a chunk (CometBFT's ApplySnapshotChunk results).
enum class ChunkVerdict : uint8_t {
    accept,
    retry,            ///< this chunk is bad: fetch it again from another sender
    reject_snapshot,  ///< the snapshot itself is bad (its index): try another one
    abort,            ///< the store failed: stop
};

struct ChunkResult {
    ChunkVerdict verdict{ChunkVerdict::accept};
    std::vector<uint32_t> refetch;  ///< retry: the chunks to fetch again
    std::string reason;             ///< why not accepted, one line
    bool done{false};               ///< accepted, and it was the last: the head is now H
    /// retry: the bytes are not what the offer or the index commits to, so the peer that sent
    /// them is at fault (reject_senders); a chunk merely out of turn blames nobody.
    bool sender_at_fault{false};
};

/// Restores one offered snapshot into a store, checking each chunk as it arrives, in order:
/// chunk 0 must hash to the offer's hash and its partials must sum to the lattice of the
/// trusted root; each data chunk must hash to the index's digest, hold strictly ascending keys
/// above the previous chunk's last, end at the index's last key, and sum to the index's partial.
/// Entries are written under the store's restore marker; the last chunk moves the head to H.
class Restorer {
public:
    struct Offer {
        OfferVerdict verdict{OfferVerdict::accept};
        std::string reason;
        std::unique_ptr<Restorer> restorer;  ///< when accepted
    };
    /// Checks `offered` against `trusted_root` (the app hash the light client verified for its
    /// height) and, when accepted, begins the restore in `store` (Store::begin_restore).
    static Offer offer(store::Store& store, const Descriptor& offered, const Hash& trusted_root);

    ChunkResult apply(uint32_t index, BytesView chunk);

    uint64_t height() const noexcept { return m_metadata.header.number; }
    const Descriptor& descriptor() const noexcept { return m_offered; }
    /// The data chunks applied so far (eth_syncing's progress).
    uint32_t applied() const noexcept { return m_next; }

private:
    Restorer(store::Store& store, Descriptor offered, Metadata metadata);
    ChunkResult apply_index(BytesView chunk);
    ChunkResult apply_data(uint32_t index, BytesView chunk);

    store::Store& m_store;
    Descriptor m_offered;
    Metadata m_metadata;
    std::optional<Index> m_index;
    uint32_t m_next{0};  ///< the chunk expected next
    Bytes m_last_key;    ///< the last key accepted
};

}  // namespace barrel::sync
