#pragma once
/// @file
/// What the store's files share: the column families, the keys of the meta family, and
/// Store::Impl, the open database with its caches. Internal to the store; the files split it by
/// concern: options.cpp (RocksDB options, opening the database), open.cpp (init, open, close),
/// state_reads.cpp (the StateReader over the caches), commit.cpp (stage 4), queries.cpp.

#include <barrel/store/store.hpp>

#include "committed.hpp"
#include "errors.hpp"
#include "state_cache.hpp"
#include <nlohmann/json.hpp>
#include <rocksdb/db.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::store {

class Pruner;

/// Column families, in the order they are opened (RocksDB's "default" comes first).
enum Cf : size_t {
    kDefault,
    kHeaders,
    kBlocks,
    kTxs,
    kReceipts,
    kAccounts,
    kUsers,
    kMeta,
    kCfCount
};
inline constexpr const char* kCfNames[kCfCount] = {"default",  "headers",  "blocks", "transactions",
                                                   "receipts", "accounts", "users",  "meta"};

/// meta: the format marker, the head, the genesis and its chain parameters (docs/formats.md).
inline constexpr std::string_view kFormatKey = "format";
inline constexpr std::string_view kFormat = "barrel/2";
/// The format before the state commitment: its state root chained write-set hashes, so nothing
/// in it can be checked against the lattice. Named when refused.
inline constexpr std::string_view kChainedRootFormat = "barrel/1";
inline constexpr std::string_view kHeadKey = "head";
/// meta: the head's state lattice, 2,048 bytes (state::Lattice::to_bytes), in the head's batch.
inline constexpr std::string_view kLatticeKey = "lattice";
inline constexpr std::string_view kGenesisKey = "genesis";
inline constexpr std::string_view kChainKey = "chain";
/// meta: the first block held after the genesis (Store::earliest), 8 bytes big-endian; absent
/// until a block is pruned. Written before any of the blocks below it is deleted (pruner.hpp).
inline constexpr std::string_view kEarliestKey = "earliest";
/// meta: the height a state-sync restore is restoring (8 bytes big-endian), from
/// Store::begin_restore to Store::finish_restore, which removes it in the batch that makes the
/// restored head; found by a writer's open, it means a restore was interrupted (restore.cpp).
inline constexpr std::string_view kRestoringKey = "restoring";
/// meta: "hash:" ‖ block hash → 8-byte big-endian number.
inline constexpr std::string_view kHashPrefix = "hash:";
/// meta: "cometbft:" ‖ 8-byte big-endian number → CometBFT's hash of that block, as it sent it
/// (Store::commit's consensus_hash); absent for blocks not decided by CometBFT.
inline constexpr std::string_view kConsensusHashPrefix = "cometbft:";

inline rocksdb::Slice slice(std::string_view s) { return {s.data(), s.size()}; }

/// Block numbers as keys: 8 bytes big-endian, so that the headers and blocks sort by number.
std::string number_key(uint64_t n);
/// The number an 8-byte big-endian key or value holds, or nullopt for any other size.
std::optional<uint64_t> number_of(std::string_view bytes);
std::string hash_key(const Hash& h);
inline std::string consensus_hash_key(uint64_t n) {
    return std::string{kConsensusHashPrefix} + number_key(n);
}
inline std::string_view address_key(const Address& a) {
    return {reinterpret_cast<const char*>(a.data()), Address::size()};
}
inline std::string_view hash_bytes_key(const Hash& h) {
    return {reinterpret_cast<const char*>(h.data()), Hash::size()};
}

/// `meta/head`: the head's number, hash and state root.
nlohmann::json head_document(const Head& h);
/// The head a `meta/head` document names, or nullopt if it does not parse.
std::optional<Head> parse_head(std::string_view text);

struct Store::Impl {
    std::unique_ptr<rocksdb::Env> env;  ///< a test's file system (testing.hpp); before db, which
                                        ///< uses it until it is closed
    std::unique_ptr<rocksdb::DB> db;
    std::vector<rocksdb::ColumnFamilyHandle*> cfs;
    Options options;
    Head head;
    state::Lattice lattice;  ///< the head's; its root() is head.state_root
    chain::Genesis genesis;  ///< the chain parameters; alloc stays empty
    std::unique_ptr<AccountCache> accounts;
    std::unique_ptr<UserCache> users;
    CommitEpoch epoch;  ///< orders both caches' fills against commits
    /// A writer's COMMITTED record (committed.hpp), rewritten after every commit.
    std::optional<CommittedFile> committed;
    /// A write failed: RocksDB now holds a background error and refuses every write until
    /// DB::Resume succeeds (the next commit tries it; closing does not flush). Atomic: /metrics
    /// reads it (Store::write_failed) while the sealer commits; `failure` is the writer's alone.
    std::atomic<bool> failed{false};
    StoreError failure;
    uint64_t failed_wal{0};  ///< the WAL the failed write went to (commit.cpp)
    std::string
        batch_buffer;  ///< the last commit's write batch, reused by the next (encode_block_batch)
    std::filesystem::path path;  ///< the datadir
    /// Store::earliest: `meta/earliest` as read at open, then as the pruner moves it. The pruner
    /// stores it after writing the entry and before deleting anything below it, so a read that
    /// finds a block and then sees the block still held found it whole.
    std::atomic<uint64_t> earliest{0};
    /// A writer's with Options::retain_blocks, or with a prune a crash interrupted: deletes old
    /// blocks on its own thread. Stopped by ~Store, before anything else is closed.
    std::unique_ptr<Pruner> pruner;
    /// Held around every RocksDB write the commit path and the pruner make (their two threads'
    /// writes). RocksDB orders concurrent writes itself (its write thread), but with atomics in
    /// its uninstrumented code, which ThreadSanitizer cannot see; this mutex makes the order
    /// barrel's own and visible. It costs nothing RocksDB's own ordering did not: the pruner's
    /// reads and batch building stay off it, only its short write waits for a commit's.
    std::mutex write_mutex;
    std::optional<uint64_t> restoring;  ///< the marker's height (Store::begin_restore)
    bool crash_points{false};  ///< BARREL_TEST_CRASH_AT names a commit point (crash_points.hpp)

    ~Impl();

    /// Whether block `number` is held as of `earliest`: the genesis always, else from earliest on.
    static bool held(uint64_t number, uint64_t earliest) noexcept {
        return number == 0 || number >= earliest;
    }

    /// A point read, at `at` (a snapshot) or of the newest value.
    Expected<std::optional<std::string>, StoreError> get(
        size_t cf, std::string_view key, const rocksdb::Snapshot* at = nullptr) const;
    Expected<std::optional<nlohmann::json>, StoreError> get_json(
        size_t cf, std::string_view key, const rocksdb::Snapshot* at = nullptr) const;

    /// Opens (or with `create`, creates) the database at `path` with the store's options
    /// (options.cpp) and allocates the caches, before RocksDB touches the path.
    static Expected<std::unique_ptr<Impl>, StoreError> open_db(const std::filesystem::path& path,
                                                               bool create, const Options& options);
};

/// A writer's open of a datadir whose restore was interrupted (`meta/restoring`): deletes every
/// account and user, puts the genesis state (`meta/genesis`) back and removes the marker, in one
/// synced batch. Nothing to do without the marker.
Expected<void, StoreError> abandon_interrupted_restore(Store::Impl& impl);

/// A Snapshot's RocksDB snapshot, released with it (queries.cpp, state_entries.cpp).
struct Snapshot::Handle {
    rocksdb::DB& db;
    const rocksdb::Snapshot* snapshot;
    Handle(rocksdb::DB& d, const rocksdb::Snapshot* s) noexcept : db{d}, snapshot{s} {}
    ~Handle() { db.ReleaseSnapshot(snapshot); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
};

/// The one way in for the hooks of testing.hpp.
struct StoreTesting {
    static Store::Impl& impl(const Store& store) noexcept { return *store.m_impl; }
};

}  // namespace barrel::store
