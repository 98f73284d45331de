#include <barrel/core/hex.hpp>
#include <barrel/core/parallel.hpp>
#include "core/seqlock_cache.hpp"
#include "store/sharded_cache.hpp"
#include <barrel/store/documents.hpp>
#include <barrel/store/store.hpp>

#include "block_batch.hpp"

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

namespace barrel::store {

std::string_view to_string(StoreErrorCode code) noexcept {
    switch (code) {
        case StoreErrorCode::not_a_datadir: return "not_a_datadir";
        case StoreErrorCode::already_initialized: return "already_initialized";
        case StoreErrorCode::locked: return "locked";
        case StoreErrorCode::io: return "io";
        case StoreErrorCode::corruption: return "corruption";
    }
    return "unknown";
}

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Column families, in the order they are opened (RocksDB's "default" comes first).
enum Cf : size_t { kDefault, kHeaders, kBlocks, kTxs, kReceipts, kAccounts, kUsers, kMeta, kCfCount };
constexpr const char* kCfNames[kCfCount] = {"default", "headers", "blocks", "transactions",
                                            "receipts", "accounts", "users", "meta"};

constexpr std::string_view kFormatKey = "format";
constexpr std::string_view kFormat = "barrel/1";
constexpr std::string_view kHeadKey = "head";
constexpr std::string_view kGenesisKey = "genesis";
/// meta: "hash:" ‖ block hash → 8-byte big-endian number.
constexpr std::string_view kHashPrefix = "hash:";

rocksdb::Slice slice(std::string_view s) { return {s.data(), s.size()}; }

std::string number_key(uint64_t n) {
    std::string k(8, '\0');
    for (int i = 0; i < 8; ++i) k[static_cast<size_t>(i)] = static_cast<char>(n >> (56 - 8 * i));
    return k;
}

std::string hash_key(const Hash& h) {
    std::string k{kHashPrefix};
    k.append(reinterpret_cast<const char*>(h.data()), Hash::size());
    return k;
}

Unexpected<StoreError> fail(StoreErrorCode code, std::string message) {
    return unexpected(StoreError{code, std::move(message)});
}

Unexpected<StoreError> from_status(const rocksdb::Status& s, std::string_view what) {
    if (s.IsCorruption()) return fail(StoreErrorCode::corruption, std::string{what} + ": " + s.ToString());
    return fail(StoreErrorCode::io, std::string{what} + ": " + s.ToString());
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

json head_document(const Head& h) {
    return {{"number", to_hex_quantity(h.number)}, {"hash", to_hex(h.hash)}, {"state_root", to_hex(h.state_root)}};
}

std::optional<Head> parse_head(std::string_view text) {
    const json doc = json::parse(text, nullptr, false);
    if (!doc.is_object()) return std::nullopt;
    Head h;
    try {
        const auto n = parse_u64(doc.at("number").get<std::string>());
        const auto hash = hash_from_hex(doc.at("hash").get<std::string>());
        const auto root = hash_from_hex(doc.at("state_root").get<std::string>());
        if (!n || !hash || !root) return std::nullopt;
        h.number = *n;
        h.hash = *hash;
        h.state_root = *root;
    } catch (const json::exception&) {
        return std::nullopt;
    }
    return h;
}

constexpr size_t kMemtableBudget = 32 << 20;
/// The largest write-batch buffer a store keeps for the next commit (~20 blocks of 2,500 transfers).
constexpr size_t kMaxKeptBatchBytes = size_t{64} << 20;

/// Options chosen for this workload (docs/benchmarks.md, "Commit"): point lookups by hash or
/// address, values of a few hundred bytes written once per block.
rocksdb::ColumnFamilyOptions cf_options(size_t cf) {
    rocksdb::ColumnFamilyOptions o;
    // A 2,500-transaction block is ~3 MB of documents, 1.3 MB of it transactions; the total
    // across families is capped in DBOptions (kMemtableBudget).
    o.write_buffer_size = 16 << 20;
    o.compression = rocksdb::kLZ4Compression;
    if (cf == kTxs || cf == kReceipts || cf == kAccounts) {
        // Keyed by hashes and addresses (uniformly random bytes), read by point lookups and
        // never iterated in order by the node: a hash-bucketed memtable places each of a
        // block's ~10,000 keys in O(1), where the default skip list spent most of the commit's
        // write time comparing keys (docs/benchmarks.md, "Commit").
        o.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(8));
        o.memtable_factory.reset(rocksdb::NewHashLinkListRepFactory(1 << 16));
    }
    if (cf == kUsers) {
        // DagTransfer names: any length, often alike at the start ("user000123"), so buckets
        // by up to their first 16 bytes, not by a fixed 8, which would put a whole generated
        // population in a few buckets; in the skip list they cost a long compare per level
        // (DagTransfer commit 22-28 -> 15-21 ms per block, docs/benchmarks.md).
        o.prefix_extractor.reset(rocksdb::NewCappedPrefixTransform(16));
        o.memtable_factory.reset(rocksdb::NewHashLinkListRepFactory(1 << 16));
    }
    rocksdb::BlockBasedTableOptions t;
    if (cf != kBlocks) t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));  // point lookups
    t.block_cache = nullptr;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    return o;
}

/// Orders the state caches' read-miss fills against commits. A fill must not put back a value
/// that a commit has just replaced: a reader that fetched a key from RocksDB before a commit's
/// write but stored it after the commit's write-through would leave the old value cached for
/// good. A commit therefore makes the epoch odd from before its write until after its
/// write-through, and a fill stores only if the epoch is still the even value the reader saw
/// before fetching, checked under the lock that the write-through of the same key also takes.
/// One commit at a time (the store's contract).
class CommitEpoch {
public:
    /// What a reader notes before fetching from RocksDB.
    uint64_t now() const noexcept { return m_epoch.load(std::memory_order_acquire); }
    /// Whether a value fetched at `seen` may still be cached: no commit was under way then or since.
    bool unchanged_since(uint64_t seen) const noexcept { return seen % 2 == 0 && now() == seen; }
    void begin() noexcept { m_epoch.fetch_add(1, std::memory_order_acq_rel); }
    void end() noexcept { m_epoch.fetch_add(1, std::memory_order_acq_rel); }

private:
    std::atomic<uint64_t> m_epoch{0};
};

/// DagTransfer user → balance (nullopt: known absent), bounded (Options::user_cache_entries),
/// written through on commit and filled on a read miss (CommitEpoch).
using UserCache = ShardedCache<std::string, std::optional<u256>, state::StringHash>;

/// The store's cache of account values (present or absent), bounded, read without locks
/// (core/seqlock_cache.hpp), written through on commit and filled on a read miss (CommitEpoch).
class AccountCache {
public:
    explicit AccountCache(size_t bytes) : m_cache{bytes} {}

    std::optional<std::optional<state::Account>> find(const Address& a) const noexcept {
        const auto found = m_cache.find(a.bytes, hash(a));
        if (!found) return std::nullopt;
        if (found->flag) return std::optional<state::Account>{};  // cached as absent
        return unpack(found->value);
    }

    /// Caches a value fetched from RocksDB when the epoch was `seen`, unless a commit began since.
    void fill(const Address& a, const std::optional<state::Account>& v, const CommitEpoch& epoch, uint64_t seen) noexcept {
        m_cache.put_if(a.bytes, hash(a), pack(v), !v.has_value(), [&] { return epoch.unchanged_since(seen); });
    }
    void put(const Address& a, const std::optional<state::Account>& v) noexcept {
        m_cache.put(a.bytes, hash(a), pack(v), !v.has_value());
    }
    void clear() noexcept { m_cache.clear(); }

private:
    using Cache = SeqlockCache<20, 40>;  // address → nonce (8 bytes) and balance (32)

    static uint64_t hash(const Address& a) noexcept { return FixedBytesHasher{}(a); }
    static Cache::Value pack(const std::optional<state::Account>& v) noexcept {
        Cache::Value out{};
        if (!v) return out;
        std::memcpy(out.data(), &v->nonce, 8);
        const auto limbs = to_limbs(v->balance);
        std::memcpy(out.data() + 8, limbs.data(), 32);
        return out;
    }
    static state::Account unpack(const Cache::Value& value) noexcept {
        state::Account a;
        std::memcpy(&a.nonce, value.data(), 8);
        std::array<uint64_t, 4> limbs;
        std::memcpy(limbs.data(), value.data() + 8, 32);
        a.balance = from_limbs(limbs);
        return a;
    }

    Cache m_cache;
};

}  // namespace

struct Store::Impl {
    std::unique_ptr<rocksdb::DB> db;
    std::vector<rocksdb::ColumnFamilyHandle*> cfs;
    Options options;
    Head head;
    chain::Genesis genesis;
    std::unique_ptr<AccountCache> accounts;
    std::unique_ptr<UserCache> users;
    CommitEpoch epoch;  ///< orders both caches' fills against commits
    std::string batch_buffer;  ///< the last commit's write batch, reused by the next (encode_block_batch)

    ~Impl() {
        for (auto* cf : cfs)
            if (cf != nullptr) (void)db->DestroyColumnFamilyHandle(cf);
    }

    Expected<std::optional<std::string>, StoreError> get(size_t cf, std::string_view key) const {
        std::string value;
        const auto s = db->Get(rocksdb::ReadOptions{}, cfs[cf], slice(key), &value);
        if (s.IsNotFound()) return std::optional<std::string>{};
        if (!s.ok()) return from_status(s, "read");
        return std::optional<std::string>{std::move(value)};
    }

    Expected<std::optional<json>, StoreError> get_json(size_t cf, std::string_view key) const {
        auto v = get(cf, key);
        if (!v) return unexpected(v.error());
        if (!*v) return std::optional<json>{};
        json doc = json::parse(**v, nullptr, false);
        if (doc.is_discarded()) return fail(StoreErrorCode::corruption, "stored document does not parse");
        return std::optional<json>{std::move(doc)};
    }

    static Expected<std::unique_ptr<Impl>, StoreError> open_db(const fs::path& path, bool create,
                                                               const Options& options) {
        rocksdb::DBOptions db_options;
        db_options.create_if_missing = create;
        db_options.create_missing_column_families = create;
        db_options.error_if_exists = create;
        db_options.max_background_jobs = 2;
        db_options.paranoid_checks = true;
        // All memtables together: past this RocksDB flushes the largest, so a long import's memory
        // levels off (docs/benchmarks.md, "Memory") instead of growing to 7 × write_buffer_size.
        db_options.db_write_buffer_size = kMemtableBudget;
        // Hash-bucketed memtables (cf_options) take one writer at a time; barrel has one.
        db_options.allow_concurrent_memtable_write = false;
        std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
        for (size_t i = 0; i < kCfCount; ++i) descriptors.emplace_back(kCfNames[i], cf_options(i));
        if (options.max_block_bytes > Options::kMaxBlockBytes)
            return fail(StoreErrorCode::io, "max_block_bytes " + std::to_string(options.max_block_bytes) +
                                                " is more than a store can take (" +
                                                std::to_string(Options::kMaxBlockBytes) + ")");
        auto impl = std::make_unique<Impl>();
        impl->options = options;
        // Before RocksDB opens anything: a cache that cannot be had leaves the path untouched.
        try {
            impl->accounts = std::make_unique<AccountCache>(options.account_cache_bytes);
        } catch (const std::bad_alloc&) {
            return fail(StoreErrorCode::io, "cannot allocate an account cache of " +
                                                std::to_string(options.account_cache_bytes) + " bytes");
        }
        impl->users = std::make_unique<UserCache>(options.user_cache_entries);
        // Commits hand RocksDB batches barrel encoded itself (block_batch.hpp): a library that
        // reads them differently must not be written to.
        if (!options.read_only && !put_records_match_rocksdb())
            return fail(StoreErrorCode::io, "the linked RocksDB's write batch format is not the one barrel writes");
        rocksdb::DB* raw = nullptr;
        rocksdb::Status s;
        if (options.read_only)
            s = rocksdb::DB::OpenForReadOnly(db_options, path.string(), descriptors, &impl->cfs, &raw);
        else
            s = rocksdb::DB::Open(db_options, path.string(), descriptors, &impl->cfs, &raw);
        if (!s.ok()) {
            const std::string msg = s.ToString();
            // RocksDB reports a held LOCK file as an I/O error on ".../LOCK": EAGAIN from fcntl when
            // another process holds it, "lock hold by current process" when this one does. Other
            // errors may mention "lock" too ("block checksum mismatch") and are not this.
            const bool lock_file = s.IsIOError() && msg.find("/LOCK") != std::string::npos;
            const bool held = msg.find("Resource temporarily unavailable") != std::string::npos ||
                              msg.find("lock hold by current process") != std::string::npos;
            if (lock_file && held)
                return fail(StoreErrorCode::locked, "datadir " + path.string() + " is in use by another process");
            if (s.IsInvalidArgument() && !create)
                return fail(StoreErrorCode::not_a_datadir, path.string() + " is not a barrel datadir");
            return from_status(s, "opening " + path.string());
        }
        impl->db.reset(raw);
        return impl;
    }
};

Store::Store(std::unique_ptr<Impl> impl) : m_impl{std::move(impl)} {}
Store::~Store() = default;

const Head& Store::head() const noexcept { return m_impl->head; }
const chain::Genesis& Store::genesis() const noexcept { return m_impl->genesis; }

Expected<std::unique_ptr<Store>, StoreError> Store::init(const fs::path& path, const chain::Genesis& genesis,
                                                         const Options& options) {
    std::error_code ec;
    if (fs::exists(path, ec)) {
        if (!fs::is_directory(path, ec)) return fail(StoreErrorCode::already_initialized, path.string() + " exists and is not a directory");
        if (!fs::is_empty(path, ec)) return fail(StoreErrorCode::already_initialized, path.string() + " is not empty");
    }
    auto opened = Impl::open_db(path, true, options);
    if (!opened) return unexpected(opened.error());
    auto impl = std::move(opened).value();

    const block::Header h0 = chain::genesis_header(genesis);
    const Hash hash0 = block::hash_of(h0);
    rocksdb::WriteBatch batch;
    auto put = [&](size_t cf, std::string_view k, std::string_view v) { return batch.Put(impl->cfs[cf], slice(k), slice(v)); };
    std::vector<rocksdb::Status> statuses;
    statuses.push_back(put(kMeta, kFormatKey, kFormat));
    statuses.push_back(put(kMeta, kGenesisKey, chain::to_json_text(genesis)));
    statuses.push_back(put(kHeaders, number_key(0), header_document(h0, hash0, 0)));
    statuses.push_back(put(kMeta, hash_key(hash0), number_key(0)));
    for (const auto& [address, account] : genesis.alloc.accounts)
        statuses.push_back(put(kAccounts, std::string_view{reinterpret_cast<const char*>(address.data()), 20},
                               store::account_document(account)));
    for (const auto& [name, balance] : genesis.alloc.users)
        statuses.push_back(put(kUsers, name, store::user_document(name, balance)));
    const Head head{0, hash0, h0.state_root};
    statuses.push_back(put(kMeta, kHeadKey, head_document(head).dump()));
    for (const auto& s : statuses)
        if (!s.ok()) return from_status(s, "init");
    rocksdb::WriteOptions wo;
    wo.sync = true;  // a datadir that says it exists must survive a crash
    if (auto s = impl->db->Write(wo, &batch); !s.ok()) return from_status(s, "init");
    impl->head = head;
    impl->genesis = genesis;
    for (const auto& [address, account] : genesis.alloc.accounts) impl->accounts->put(address, account);
    for (const auto& [name, balance] : genesis.alloc.users) impl->users->put(name, balance);
    return std::unique_ptr<Store>{new Store{std::move(impl)}};
}

Expected<std::unique_ptr<Store>, StoreError> Store::open(const fs::path& path, const Options& options) {
    std::error_code ec;
    if (!fs::is_directory(path, ec) || !fs::exists(path / "CURRENT", ec))
        return fail(StoreErrorCode::not_a_datadir, path.string() + " is not a barrel datadir (run init first)");
    // Decide whether this is a datadir before RocksDB opens it: DB::Open writes an info LOG into
    // the directory even when it then fails, and reports a directory that merely has a CURRENT
    // file as an I/O error or corruption. Listing the column families only reads.
    std::vector<std::string> families;
    if (const auto listed = rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions{}, path.string(), &families);
        !listed.ok())
        return fail(StoreErrorCode::not_a_datadir, path.string() + " is not a barrel datadir (" + listed.ToString() + ")");
    for (const char* name : kCfNames)
        if (std::find(families.begin(), families.end(), name) == families.end())
            return fail(StoreErrorCode::not_a_datadir,
                        path.string() + " is not a barrel datadir (no column family " + name + ")");
    auto opened = Impl::open_db(path, false, options);
    if (!opened) return unexpected(opened.error());
    auto impl = std::move(opened).value();
    auto format = impl->get(kMeta, kFormatKey);
    if (!format) return unexpected(format.error());
    if (!*format || **format != kFormat)
        return fail(StoreErrorCode::not_a_datadir, path.string() + " is not a barrel datadir (unknown format)");
    auto genesis_text = impl->get(kMeta, kGenesisKey);
    if (!genesis_text) return unexpected(genesis_text.error());
    if (!*genesis_text) return fail(StoreErrorCode::corruption, "datadir has no genesis");
    auto genesis = chain::parse_genesis(**genesis_text);
    if (!genesis) return fail(StoreErrorCode::corruption, "stored genesis: " + genesis.error());
    impl->genesis = *genesis;
    auto head_text = impl->get(kMeta, kHeadKey);
    if (!head_text) return unexpected(head_text.error());
    const auto head = *head_text ? parse_head(**head_text) : std::nullopt;
    if (!head) return fail(StoreErrorCode::corruption, "datadir has no valid head");
    impl->head = *head;
    return std::unique_ptr<Store>{new Store{std::move(impl)}};
}

std::optional<state::Account> Store::account(const Address& address) const {
    if (auto cached = m_impl->accounts->find(address)) return *cached;
    const uint64_t seen = m_impl->epoch.now();
    auto v = m_impl->get(kAccounts, std::string_view{reinterpret_cast<const char*>(address.data()), 20});
    // StateReader cannot fail: a store that cannot be read is not a state to execute against.
    if (!v) throw std::runtime_error{"state read failed: " + v.error().message};
    std::optional<state::Account> a;
    if (*v) {
        a = parse_account_document(**v);
        if (!a) throw std::runtime_error{"corrupt account document for " + to_hex(address)};
    }
    m_impl->accounts->fill(address, a, m_impl->epoch, seen);
    return a;
}

std::optional<u256> Store::user(std::string_view name) const {
    const std::string key{name};
    if (auto cached = m_impl->users->find(key)) return *cached;
    const uint64_t seen = m_impl->epoch.now();
    auto v = m_impl->get(kUsers, key);
    if (!v) throw std::runtime_error{"state read failed: " + v.error().message};
    std::optional<u256> b;
    if (*v) {
        b = parse_user_document(**v);
        if (!b) throw std::runtime_error{"corrupt user document"};
    }
    m_impl->users->put_if(key, b, [&] { return m_impl->epoch.unchanged_since(seen); });
    return b;
}

Expected<CommitStats, StoreError> Store::commit(const block::Block& b, const exec::Outcome& o, bool parallel) {
    if (!b.header) return fail(StoreErrorCode::io, "commit: a bare transaction list is not a block");
    const block::Header& h = *b.header;
    const size_t n_accounts = o.writes.accounts.size();
    const size_t n_users = o.writes.users.size();
    CommitStats stats;

    // Every document's value is at most about twice the block's bytes (hex), and RocksDB takes
    // values shorter than 4 GiB (Options::max_block_bytes).
    if (b.wire.size() > m_impl->options.max_block_bytes)
        return fail(StoreErrorCode::io, "commit: a block of " + std::to_string(b.wire.size()) +
                                            " bytes is more than the store takes (" +
                                            std::to_string(m_impl->options.max_block_bytes) + ")");
    const auto t0 = std::chrono::steady_clock::now();
    const auto family = [this](size_t cf) { return m_impl->cfs[cf]->GetID(); };
    // The records after the documents: the raw block, the block-hash index and the new head.
    const std::string number = number_key(h.number);
    const std::string hk = hash_key(b.hash);
    const Head next{h.number, b.hash, h.state_root};
    const std::string head_doc = head_document(next).dump();
    const PutRecord tail[] = {{family(kBlocks), number, as_chars(b.wire)},
                              {family(kMeta), hk, number},
                              {family(kMeta), kHeadKey, head_doc}};
    const DocumentFamilies families{family(kTxs), family(kReceipts), family(kAccounts), family(kUsers),
                                    family(kHeaders)};
    BlockBatch built = encode_block_batch(b, o, families, number, tail, parallel, std::move(m_impl->batch_buffer));
    stats.encode_ms = ms_since(t0);
    stats.documents = built.records - std::size(tail);
    stats.bytes = built.bytes;

    const auto t1 = std::chrono::steady_clock::now();
    BlockWriteBatch batch{std::move(built.rep)};
    rocksdb::WriteOptions wo;
    wo.sync = m_impl->options.sync;
    // From here until the write-through below, a read-miss fill may have fetched either value.
    m_impl->epoch.begin();
    struct EndCommit {
        CommitEpoch& epoch;
        ~EndCommit() { epoch.end(); }
    } end_commit{m_impl->epoch};
    const auto s = m_impl->db->Write(wo, &batch);
    m_impl->batch_buffer = std::move(batch).release();
    // An outlying block's batch is not kept for the rest of the process (flat memory).
    if (m_impl->batch_buffer.capacity() > kMaxKeptBatchBytes) m_impl->batch_buffer = std::string{};
    if (!s.ok()) return from_status(s, "commit");
    stats.write_ms = ms_since(t1);

    // Only now, with the block durable in the WAL, does the cache move on: in parallel, since
    // each put is a cache miss on a random line and both caches take concurrent writers.
    for_each_index(n_accounts, parallel, [&](size_t i) {
        const auto& [address, account] = o.writes.accounts[i];
        m_impl->accounts->put(address, account);
    });
    for_each_index(n_users, parallel, [&](size_t i) {
        const auto& [name, balance] = o.writes.users[i];
        m_impl->users->put(name, balance);
    });
    m_impl->head = next;
    return stats;
}

Expected<std::optional<Bytes>, StoreError> Store::raw_block(uint64_t number) const {
    auto v = m_impl->get(kBlocks, number_key(number));
    if (!v) return unexpected(v.error());
    if (!*v) return std::optional<Bytes>{};
    return std::optional<Bytes>{Bytes(v->value().begin(), v->value().end())};
}

Expected<std::optional<json>, StoreError> Store::header(uint64_t number) const {
    return m_impl->get_json(kHeaders, number_key(number));
}

Expected<std::optional<uint64_t>, StoreError> Store::block_number(const Hash& block_hash) const {
    auto v = m_impl->get(kMeta, hash_key(block_hash));
    if (!v) return unexpected(v.error());
    if (!*v) return std::optional<uint64_t>{};
    if ((*v)->size() != 8) return fail(StoreErrorCode::corruption, "block hash index entry");
    uint64_t n = 0;
    for (char c : **v) n = (n << 8) | static_cast<uint8_t>(c);
    return std::optional<uint64_t>{n};
}

Expected<std::optional<json>, StoreError> Store::transaction(const Hash& tx_hash) const {
    return m_impl->get_json(kTxs, std::string_view{reinterpret_cast<const char*>(tx_hash.data()), 32});
}

Expected<std::optional<json>, StoreError> Store::receipt(const Hash& tx_hash) const {
    return m_impl->get_json(kReceipts, std::string_view{reinterpret_cast<const char*>(tx_hash.data()), 32});
}

Expected<std::optional<json>, StoreError> Store::account_document(const Address& address) const {
    return m_impl->get_json(kAccounts, std::string_view{reinterpret_cast<const char*>(address.data()), 20});
}

Expected<std::optional<json>, StoreError> Store::user_document(std::string_view name) const {
    return m_impl->get_json(kUsers, name);
}

Expected<void, StoreError> Store::flush() {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    if (auto s = m_impl->db->Flush(fo, m_impl->cfs); !s.ok()) return from_status(s, "flush");
    return {};
}

void Store::wait_for_background_work() const {
    // Summed over the column families: pending flushes and compactions are counted per family.
    const auto count = [this](const std::string& property) {
        uint64_t n = 0;
        return m_impl->db->GetAggregatedIntProperty(property, &n) ? n : 0;
    };
    using p = rocksdb::DB::Properties;
    // A failed flush stops background work with its memtable still pending: no waiting on that.
    while (count(p::kBackgroundErrors) == 0 &&
           count(p::kMemTableFlushPending) + count(p::kNumRunningFlushes) + count(p::kCompactionPending) +
                   count(p::kNumRunningCompactions) >
               0)
        std::this_thread::sleep_for(std::chrono::microseconds{200});
}

void Store::clear_cache() {
    m_impl->accounts->clear();
    m_impl->users->clear();
}

}  // namespace barrel::store
