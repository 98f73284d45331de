#pragma once
/// @file
/// The RocksDB store and stage 4 (commit). One datadir, column families for headers, raw blocks,
/// transactions, receipts, accounts, DagTransfer users and metadata; every value but raw blocks
/// is a JSON document (docs/formats.md, "Storage"). A block's documents are encoded in parallel
/// and written with the new head in one WriteBatch, so after a crash a block is there completely
/// or not at all. Every RocksDB status becomes a StoreError here, at the boundary.

#include <barrel/block/block.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/state/lattice.hpp>
#include <barrel/state/state.hpp>
#include <barrel/store/records.hpp>

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace barrel::store {

struct StoreTesting;

enum class [[nodiscard]] StoreErrorCode : uint8_t{
    not_a_datadir,        ///< the path does not hold a barrel datadir
    already_initialized,  ///< init on a path that already holds data
    locked,               ///< another process has the datadir open
    io,          ///< the filesystem or the disk failed (RocksDB IOError: no space, a failed read)
    corruption,  ///< stored data does not decode, or a file the datadir lists is missing
    invalid_argument,  ///< the request is beyond what the store takes (an option, a block too
                       ///< large)
    unsupported,       ///< the linked RocksDB cannot do what barrel needs of it, or the datadir
                       ///< is of a format this barrel does not read (barrel/1)
    out_of_memory,     ///< a cache or RocksDB could not have the memory asked for
    internal,          ///< a RocksDB status barrel never provokes (Busy, TimedOut, Aborted, …)
};

struct StoreError {
    StoreErrorCode code{StoreErrorCode::io};
    std::string message;  ///< one line for the user
};

std::string_view to_string(StoreErrorCode code) noexcept;

/// The chain's tip as the store knows it.
struct Head {
    uint64_t number{0};
    Hash hash;
    Hash state_root;
};

struct Options {
    bool sync{false};       ///< fsync the WAL at every block commit (--sync)
    bool read_only{false};  ///< open for queries only (export, get)
    /// Memory for the cache of account values in front of RocksDB: 64-byte entries, so the
    /// default holds ~524,000 accounts. Fixed at open; pages are used as entries fill them.
    size_t account_cache_bytes{32u << 20};
    /// Entries in the cache of DagTransfer user balances in front of RocksDB (~100 bytes each
    /// with the name; ~13 MiB when full at the default). Past it, a random entry makes room.
    size_t user_cache_entries{size_t{1} << 17};
    static constexpr size_t kMaxBlockBytes = size_t{1} << 30;
    /// The largest block, in wire bytes, that commit takes. At most kMaxBlockBytes (every
    /// document must stay under RocksDB's 4 GiB value limit, and hex doubles a block's bytes):
    /// init and open return an invalid_argument error for more.
    size_t max_block_bytes{kMaxBlockBytes};
    /// Blocks kept (`run --retain-blocks`): a writer deletes blocks, their transactions and
    /// receipts below head - retain_blocks + 1 in the background after its commits (the
    /// pruner, pruner.hpp), never on a commit's own write path. 0 keeps every block. Account
    /// and user state is never pruned; nor is block 0's header (docs/formats.md, "Pruning").
    uint64_t retain_blocks{0};
};

/// What Store::recover found and did.
struct Recovery {
    Head head;                          ///< the head the datadir recovered to, now accepted
    std::optional<uint64_t> committed;  ///< the head its COMMITTED record named, if readable
    bool committed_damaged{false};      ///< the COMMITTED record did not check out
    bool changed{false};                ///< the record was rewritten (false: nothing to recover)
};

/// What one commit did, for the pipeline's timings.
struct CommitStats {
    double encode_ms{0};  ///< the documents encoded into the write batch
    double write_ms{0};   ///< RocksDB's write of the batch (WAL and memtables)
    size_t documents{0};  ///< JSON documents written (not counting the raw block, index and head)
    size_t bytes{0};      ///< key and value bytes of every record in the batch
};

class Snapshot;

/// The head a state-sync restore ends at (Store::finish_restore): block H's header as the
/// snapshot's metadata carries it, and the state's lattice, which must hash to its state root.
struct RestoredHead {
    block::Header header;
    uint64_t transaction_count{0};  ///< block H's, for its header document
    state::Lattice lattice;
    Bytes consensus_hash;  ///< CometBFT's hash of block H, when the snapshot carries it
};

class Store final : public Reader {
public:
    /// Creates a datadir at `path` (which must not exist or be an empty directory) holding the
    /// genesis state and block 0.
    static Expected<std::unique_ptr<Store>, StoreError> init(const std::filesystem::path& path,
                                                             const chain::Genesis& genesis,
                                                             const Options& options = {});
    /// Opens an existing datadir; restores the head and the chain parameters (not the genesis
    /// allocation, which it never reads: docs/formats.md, "Storage"). First, read-only (which
    /// deletes nothing), checks that the head's documents are all there and that the head is not
    /// older than the COMMITTED record: a damaged datadir is refused as corruption, unchanged.
    static Expected<std::unique_ptr<Store>, StoreError> open(const std::filesystem::path& path,
                                                             const Options& options = {});
    /// Accepts the state RocksDB recovers a damaged datadir to as its head (when its head is
    /// whole): rewrites the COMMITTED record. Changes nothing on a datadir that needs nothing.
    static Expected<Recovery, StoreError> recover(const std::filesystem::path& path,
                                                  const Options& options = {});
    /// A writer flushes its memtables before closing, so that the next open has no WAL to replay
    /// (a failed flush loses nothing: the WAL still holds every committed block).
    ~Store() override;
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    const Head& head() const noexcept;
    /// The head's state lattice (state::Lattice): its root() is head().state_root. The parent
    /// lattice of the next block's execution.
    const state::Lattice& lattice() const noexcept;
    /// The first block held after the genesis: every block from it to the head is whole, none
    /// between block 0 and it is answered (pruned, or never held by a state-synced node). 0 on
    /// a datadir that never pruned. Thread-safe.
    uint64_t earliest() const noexcept;
    /// The genesis' chain parameters (config, gas limit, timestamp, coinbase). Its `alloc` is
    /// empty: the initial state is in the accounts and users the store reads.
    const chain::Genesis& genesis() const noexcept;

    // StateReader: thread-safe, with an in-memory cache in front of RocksDB. A failed read is an
    // io error, a stored document that does not decode a corruption error; never an exception.
    state::ReadResult<state::Account> account(const Address& address) const override;
    state::ReadResult<u256> user(std::string_view name) const override;

    /// Stage 4: encodes the block's documents (header, raw block, transactions, receipts, changed
    /// accounts and users) in parallel and writes them with the new head in one WriteBatch. The
    /// block must be the head's child; its header must carry the outcome's roots.
    /// After a failed write (write_failed()), a commit first resumes the store (RocksDB's
    /// DB::Resume, which flushes every memtable and starts a new WAL, so the failed write's torn
    /// record is never replayed): once space has returned it goes on; else it fails again, naming
    /// the first failure and the resume's.
    /// `consensus_hash`: the consensus engine's hash of the block (CometBFT's, as FinalizeBlock
    /// names it), written in the same batch under the block's number (consensus_hash()); none
    /// when empty.
    Expected<CommitStats, StoreError> commit(const block::Block& block,
                                             const exec::Outcome& outcome, bool parallel = true,
                                             BytesView consensus_hash = {});

    // Queries (JSON documents as stored; nullopt when absent).
    ReadOutcome<Bytes> raw_block(uint64_t number) const override;
    /// CometBFT's hash of block `number`, stored beside barrel's by the commit that wrote the
    /// block; none for a block no consensus engine decided (imported, sealed, block 0).
    ReadOutcome<Bytes> consensus_hash(uint64_t number) const;
    Expected<std::optional<nlohmann::json>, StoreError> header(uint64_t number) const;
    ReadOutcome<uint64_t> block_number(const Hash& block_hash) const override;
    ReadOutcome<HeaderRecord> header_record(uint64_t number) const override;
    ReadOutcome<TransactionRecord> transaction_record(const Hash& tx_hash) const override;
    ReadOutcome<ReceiptRecord> receipt_record(const Hash& tx_hash) const override;
    Expected<std::optional<nlohmann::json>, StoreError> transaction(const Hash& tx_hash) const;
    /// Whether a committed block took the transaction: its document is stored (a pruned block's
    /// are deleted with it, so of those, only until the pruner gets to them). One point read;
    /// nothing parsed.
    Expected<bool, StoreError> took_transaction(const Hash& tx_hash) const;
    Expected<std::optional<nlohmann::json>, StoreError> receipt(const Hash& tx_hash) const;
    Expected<std::optional<nlohmann::json>, StoreError> account_document(
        const Address& address) const;
    Expected<std::optional<nlohmann::json>, StoreError> user_document(std::string_view name) const;

    /// A consistent view of what is committed now, for a query that reads several things (a
    /// node's request): every read through it sees the same blocks and the same state, whatever
    /// commits land meanwhile. Thread-safe; cheap to take (a RocksDB snapshot).
    Expected<std::unique_ptr<Snapshot>, StoreError> snapshot() const;

    /// Whether the last write failed (a full disk) and the store has not resumed since: RocksDB
    /// holds a background error and refuses every write until DB::Resume succeeds. Thread-safe
    /// (a node's /metrics reads it while the sealer commits).
    bool write_failed() const noexcept;

    // ---- Restoring a state-sync snapshot (sync::Restorer; docs/formats.md, "State sync
    // snapshots"). The writer's thread only, with nothing committing meanwhile.

    /// Starts restoring the state of block `height` into a datadir that holds only its genesis
    /// (head 0, nothing pruned): in one synced batch, the genesis state is deleted and the
    /// marker `meta/restoring` written. From here until finish_restore, a writer's open (after a
    /// crash) deletes the restored entries and the marker and puts the genesis state back: a
    /// restore starts over, never resumes half-checked. Called again during a restore, it
    /// starts over (another snapshot). invalid_argument on any other datadir.
    Expected<void, StoreError> begin_restore(uint64_t height);
    /// Writes checked entries of the snapshot (account and user documents). Not synced: the
    /// final batch's synced write makes every earlier one durable (one WAL, in order).
    Expected<void, StoreError> restore_entries(const state::WriteSet& entries);
    /// Ends the restore in one synced batch: block H's header document and hash index (its
    /// CometBFT hash when given), `meta/head` = H, `meta/lattice`, `meta/earliest` = H + 1 (the
    /// first block held whole: H's raw block and transactions never are), the marker removed.
    /// invalid_argument unless a restore of that height is under way and the lattice hashes to
    /// the header's state root.
    Expected<void, StoreError> finish_restore(const RestoredHead& restored);
    /// The height a restore under way is restoring (begin_restore), if any.
    std::optional<uint64_t> restoring() const noexcept;

    /// Writes every memtable to table files and waits for it. Not needed for durability (the WAL
    /// has every committed block); it shortens the next open's WAL replay. Closing a writer does
    /// it.
    Expected<void, StoreError> flush();

    struct Impl;

private:
    friend struct StoreTesting;  ///< the hooks of src/store/testing.hpp, not installed
    explicit Store(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

/// Store::snapshot(): the store's queries and state reads at one moment. Its state reads go to
/// RocksDB, not to the store's cache, which holds the newest state. Must not outlive its Store.
class Snapshot final : public Reader {
public:
    ~Snapshot() override;
    Snapshot(const Snapshot&) = delete;
    Snapshot& operator=(const Snapshot&) = delete;

    /// The head as of the snapshot.
    const Head& head() const noexcept { return m_head; }
    /// Calls `visit` with every state entry's canonical encoding (state::encode_entry), in key
    /// order: the accounts by address, then the DagTransfer users by name (their keys 0x01 ‖
    /// address and 0x02 ‖ name sort so). Stops early when `visit` returns false. A stored
    /// document that does not decode is a corruption error naming its key.
    Expected<void, StoreError> for_each_entry(const std::function<bool(BytesView)>& visit) const;
    /// The lattice of every entry at the snapshot, summed from scratch (`barrel-node verify`): on
    /// every thread when `parallel`, with memory bounded whatever the state's size.
    struct StateSum {
        state::Lattice lattice;
        uint64_t entries{0};
    };
    Expected<StateSum, StoreError> recompute_lattice(bool parallel = true) const;
    /// Store::earliest() as of the snapshot: blocks 1 to earliest - 1 read as absent.
    uint64_t earliest() const noexcept { return m_earliest; }

    state::ReadResult<state::Account> account(const Address& address) const override;
    state::ReadResult<u256> user(std::string_view name) const override;

    ReadOutcome<Bytes> raw_block(uint64_t number) const override;
    ReadOutcome<Bytes> consensus_hash(uint64_t number) const;
    ReadOutcome<uint64_t> block_number(const Hash& block_hash) const override;
    ReadOutcome<HeaderRecord> header_record(uint64_t number) const override;
    ReadOutcome<TransactionRecord> transaction_record(const Hash& tx_hash) const override;
    ReadOutcome<ReceiptRecord> receipt_record(const Hash& tx_hash) const override;

private:
    friend class Store;
    struct Handle;  // the RocksDB snapshot
    Snapshot(const Store::Impl& impl, std::unique_ptr<Handle> handle, const Head& head,
             uint64_t earliest) noexcept;
    const Store::Impl& m_impl;
    std::unique_ptr<Handle> m_handle;
    Head m_head;
    uint64_t m_earliest{0};
};

/// What verify_state found: the head it checked, and the root of the lattice summed from every
/// stored entry.
struct StateCheck {
    Head head;
    Hash recomputed_root;
    uint64_t entries{0};
    bool matches() const noexcept { return recomputed_root == head.state_root; }
};

/// Sums the lattice of every stored account and user afresh (one RocksDB snapshot, on every
/// thread when `parallel`) and compares its root with the head's state root: `barrel-node
/// verify`, `run --verify-state`. A mismatch is a result, not an error; an error is a read that
/// failed or a document that does not decode.
Expected<StateCheck, StoreError> verify_state(const Store& store, bool parallel = true);

}  // namespace barrel::store
