// A datadir's life: init builds it beside its target and renames it into place; open validates
// what RocksDB recovered against the head and the COMMITTED record before a writer may touch it;
// recover accepts a rollback the user asked for; closing a writer flushes its memtables
// (docs/architecture.md, "Store").

#include <barrel/core/hex.hpp>
#include <barrel/io/files.hpp>
#include <barrel/store/documents.hpp>

#include "committed.hpp"
#include "info_log.hpp"
#include "pruner.hpp"
#include "store_impl.hpp"
#include "testing.hpp"
#include <fcntl.h>
#include <rocksdb/write_batch.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace barrel::store {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The genesis without its allocation: what `meta/chain` holds and what an open reads, so that
/// opening never parses the account list (a genesis may hold millions of accounts).
chain::Genesis chain_parameters(const chain::Genesis& genesis) {
    chain::Genesis params = genesis;
    params.alloc = {};
    return params;
}

/// The chain parameters of an opened datadir: `meta/chain`, or for a datadir written before that
/// document existed, the whole `meta/genesis` (which a writer then splits, once; `split`).
Expected<chain::Genesis, StoreError> read_chain_parameters(Store::Impl& impl, bool* split) {
    auto chain_text = impl.get(kMeta, kChainKey);
    if (!chain_text) return unexpected(chain_text.error());
    if (*chain_text) {
        auto params = chain::parse_genesis(**chain_text);
        if (!params)
            return fail(StoreErrorCode::corruption, "stored chain parameters: " + params.error());
        return *params;
    }
    auto genesis_text = impl.get(kMeta, kGenesisKey);
    if (!genesis_text) return unexpected(genesis_text.error());
    if (!*genesis_text) return fail(StoreErrorCode::corruption, "datadir has no genesis");
    auto genesis = chain::parse_genesis(**genesis_text);
    if (!genesis) return fail(StoreErrorCode::corruption, "stored genesis: " + genesis.error());
    if (split != nullptr) *split = true;
    return chain_parameters(*genesis);
}

Expected<void, StoreError> write_chain_parameters(Store::Impl& impl) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    const std::string text = chain::to_json_text(impl.genesis);
    if (auto s = impl.db->Put(wo, impl.cfs[kMeta], slice(kChainKey), slice(text)); !s.ok())
        return from_status(s, "writing the chain parameters");
    return {};
}

/// "datadir D is damaged: WHAT; nothing was changed": every refusal of a damaged datadir.
Unexpected<StoreError> damaged(const fs::path& path, const std::string& what) {
    return fail(StoreErrorCode::corruption,
                "datadir " + path.string() + " is damaged: " + what + "; nothing was changed");
}

/// Whether `path` holds a barrel datadir at all, decided before RocksDB opens it: DB::Open
/// writes into the directory even when it then fails, and reports a directory that merely has
/// a CURRENT file as an I/O error or corruption. Listing the column families only reads.
Expected<void, StoreError> check_is_datadir(const fs::path& path) {
    std::error_code ec;
    if (!fs::is_directory(path, ec) || !fs::exists(path / "CURRENT", ec))
        return fail(StoreErrorCode::not_a_datadir,
                    path.string() + " is not a barrel datadir (run init first)");
    std::vector<std::string> families;
    if (const auto listed =
            rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions{}, path.string(), &families);
        !listed.ok()) {
        // A CURRENT that names no MANIFEST (or one that cannot be read) is a damaged datadir
        // when the rest of one is there; a stray CURRENT alone is not a datadir.
        if (fs::exists(path / kCommittedFile, ec) || fs::exists(path / "IDENTITY", ec))
            return damaged(path, listed.ToString());
        return fail(StoreErrorCode::not_a_datadir,
                    path.string() + " is not a barrel datadir (" + listed.ToString() + ")");
    }
    for (const char* name : kCfNames)
        if (std::find(families.begin(), families.end(), name) == families.end())
            return fail(StoreErrorCode::not_a_datadir,
                        path.string() + " is not a barrel datadir (no column family " + name + ")");
    return {};
}

/// The head document of an opened datadir, after its format marker.
Expected<Head, StoreError> read_head(Store::Impl& impl, const fs::path& path) {
    auto format = impl.get(kMeta, kFormatKey);
    if (!format) return unexpected(format.error());
    if (*format && **format == kChainedRootFormat)
        return fail(StoreErrorCode::unsupported,
                    path.string() + " is a datadir of format " + std::string{kChainedRootFormat} +
                        " (its state root chains hashes of history); this barrel reads format " +
                        std::string{kFormat} +
                        " (a state root that commits to the state): init a new datadir and "
                        "import or sync the chain again");
    if (!*format || **format != kFormat)
        return fail(StoreErrorCode::not_a_datadir,
                    path.string() + " is not a barrel datadir (unknown format)");
    auto head_text = impl.get(kMeta, kHeadKey);
    if (!head_text) return unexpected(head_text.error());
    const auto head = *head_text ? parse_head(**head_text) : std::nullopt;
    if (!head) return fail(StoreErrorCode::corruption, "datadir has no valid head");
    // Written in the head's own batch: one without the other is damage, never a torn write.
    auto lattice_bytes = impl.get(kMeta, kLatticeKey);
    if (!lattice_bytes) return unexpected(lattice_bytes.error());
    const auto lattice =
        *lattice_bytes ? state::Lattice::from_bytes(as_bytes(**lattice_bytes)) : std::nullopt;
    if (!lattice)
        return damaged(path, "its state lattice (meta/lattice) is missing or not 2048 bytes");
    if (lattice->root() != head->state_root)
        return damaged(path, "its state lattice does not hash to the head's state root " +
                                 to_hex(head->state_root));
    impl.lattice = *lattice;
    return *head;
}

/// `meta/earliest` of an opened datadir: 0 when absent (nothing was ever pruned).
Expected<uint64_t, StoreError> read_earliest(Store::Impl& impl) {
    auto text = impl.get(kMeta, kEarliestKey);
    if (!text) return unexpected(text.error());
    if (!*text) return uint64_t{0};
    const auto n = number_of(**text);
    if (!n)
        return fail(StoreErrorCode::corruption, "the datadir's earliest block entry is damaged");
    return *n;
}

/// Whether what the head names is all there: its header, its hash index entry, and for a block
/// past the genesis its raw block and the documents of its first and last transactions. A
/// block is one atomic write, so a part of it missing means files were lost, not a torn write.
Expected<void, StoreError> check_head_is_whole(Store::Impl& impl, const Head& head,
                                               const fs::path& path) {
    const std::string block = "block " + std::to_string(head.number);
    const auto missing = [&](const std::string& what) {
        return damaged(path, "its head is " + block + " but " + what + " is missing");
    };
    auto header = impl.get(kHeaders, number_key(head.number));
    if (!header) return unexpected(header.error());
    if (!*header) return missing("the block's header");
    auto index = impl.get(kMeta, hash_key(head.hash));
    if (!index) return unexpected(index.error());
    if (!*index || **index != number_key(head.number))
        return missing("the block's hash index entry");
    // A head restored from a state-sync snapshot has its header and hash index, never its raw
    // block or transactions: the node holds blocks from earliest = head + 1 on.
    if (head.number == 0 || impl.earliest.load() > head.number) return {};
    auto raw = impl.get(kBlocks, number_key(head.number));
    if (!raw) return unexpected(raw.error());
    if (!*raw) return missing("the raw block");
    auto decoded = block::decode_block(Bytes(raw->value().begin(), raw->value().end()), false);
    if (!decoded || decoded->hash != head.hash)
        return damaged(path, "the raw block of its head, " + block + ", is not that block");
    if (decoded->size() == 0) return {};
    for (const size_t i : {size_t{0}, decoded->size() - 1}) {
        const std::string_view key = hash_bytes_key(decoded->tx_hashes[i]);
        auto tx = impl.get(kTxs, key);
        if (!tx) return unexpected(tx.error());
        auto receipt = impl.get(kReceipts, key);
        if (!receipt) return unexpected(receipt.error());
        if (!*tx || !*receipt)
            return missing("transaction " + to_hex(decoded->tx_hashes[i]) + " or its receipt");
    }
    return {};
}

/// Why RocksDB recovered to an older state than was committed: with the write-ahead log
/// replayed strictly (kAbsoluteConsistency), a damaged log fails the open; otherwise the loss is
/// in the MANIFEST or the table files. A read-only open, which changes nothing.
std::string why_rolled_back(const fs::path& path) {
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (size_t i = 0; i < kCfCount; ++i)
        descriptors.emplace_back(kCfNames[i], rocksdb::ColumnFamilyOptions{});
    rocksdb::DBOptions o;
    o.info_log = null_info_log();
    o.wal_recovery_mode = rocksdb::WALRecoveryMode::kAbsoluteConsistency;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    const auto s = rocksdb::DB::OpenForReadOnly(o, path.string(), descriptors, &handles, &raw);
    if (raw != nullptr) {
        for (auto* h : handles) (void)raw->DestroyColumnFamilyHandle(h);
        delete raw;
    }
    if (!s.ok()) return "write-ahead log damaged, RocksDB point-in-time recovery";
    return "MANIFEST or table files damaged";
}

/// Whether another process holds RocksDB's lock on the datadir (an fcntl lock on `LOCK`, which
/// F_GETLK tests without taking; this process's own locks never show).
bool locked_by_another_process(const fs::path& path) {
    const int fd = ::open((path / "LOCK").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    const bool held = ::fcntl(fd, F_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
    ::close(fd);
    return held;
}

/// A read-only look at the datadir, which deletes and writes nothing: RocksDB's recovery (with
/// paranoid checks), the head and whether it is whole, and the head against the COMMITTED
/// record. Unless `accept_rollback`, a head older than the record is refused. The returned
/// store is open read-only.
struct Inspected {
    std::unique_ptr<Store::Impl> impl;
    Head head;
    std::optional<Committed> committed;
    bool committed_damaged{false};
    bool needs_chain_document{false};
};

Expected<Inspected, StoreError> inspect(const fs::path& path, Options options,
                                        bool accept_rollback) {
    if (auto shape = check_is_datadir(path); !shape) return unexpected(shape.error());
    const bool reader = options.read_only;
    options.read_only = true;
    Inspected r;
    // Read before the database: a writer in another process updates it only after its commit
    // is in the WAL, so a head recovered after it is never older than it names.
    auto committed = read_committed(path);
    if (!committed) {
        if (!accept_rollback) return unexpected(committed.error());
        r.committed_damaged = true;
    } else {
        r.committed = *committed;
    }
    auto opened = Store::Impl::open_db(path, false, options);
    if (!opened) {
        // An open that failed on a datadir (a table file the MANIFEST lists is missing, a
        // checksum mismatch): RocksDB's own words.
        const StoreError& e = opened.error();
        if (e.code == StoreErrorCode::corruption) {
            const std::string prefix = "opening " + path.string() + ": ";
            return damaged(
                path, e.message.starts_with(prefix) ? e.message.substr(prefix.size()) : e.message);
        }
        return unexpected(e);
    }
    r.impl = std::move(opened).value();
    auto head = read_head(*r.impl, path);
    if (!head) return unexpected(head.error());
    r.head = *head;
    auto earliest = read_earliest(*r.impl);
    if (!earliest) return unexpected(earliest.error());
    r.impl->earliest.store(*earliest);
    auto params = read_chain_parameters(*r.impl, &r.needs_chain_document);
    if (!params) return unexpected(params.error());
    r.impl->genesis = std::move(params).value();
    r.impl->head = r.head;
    if (auto whole = check_head_is_whole(*r.impl, r.head, path); !whole)
        return unexpected(whole.error());
    if (!accept_rollback && r.committed && r.committed->number > r.head.number) {
        // Unless a writer in another process holds the datadir: a read-only open racing its
        // flush can miss a WAL the flush just retired. That writer validated the datadir when
        // it opened; a reader takes what it sees (as before), a second writer is refused as
        // locked, which it is.
        if (locked_by_another_process(path)) {
            if (reader) return r;
            return fail(StoreErrorCode::locked,
                        "datadir " + path.string() + " is in use by another process");
        }
        const std::string n = std::to_string(r.head.number);
        StoreError e = damaged(path, "it recovered to block " + n + " but block " +
                                         std::to_string(r.committed->number) +
                                         " had been committed (" + why_rolled_back(path) + ")")
                           .error;
        e.message += "; `barrel-node recover --datadir " + path.string() + "` accepts block " + n +
                     " as the head";
        return unexpected(std::move(e));
    }
    return r;
}

/// The rest of a writer's open, after inspect: the read-only database closed, the COMMITTED
/// record opened (before RocksDB, so that an unwritable directory is refused with nothing
/// changed), the database opened for writing, and the record brought up to the head.
Expected<std::unique_ptr<Store::Impl>, StoreError> open_writer(const fs::path& path,
                                                               const Options& options,
                                                               Inspected seen) {
    chain::Genesis genesis = std::move(seen.impl->genesis);
    seen.impl.reset();
    auto marker = CommittedFile::open(path);
    if (!marker) return unexpected(marker.error());
    auto opened = Store::Impl::open_db(path, false, options);
    if (!opened) return unexpected(opened.error());
    auto impl = std::move(opened).value();
    auto head = read_head(*impl, path);
    if (!head) return unexpected(head.error());
    impl->head = *head;
    impl->genesis = std::move(genesis);
    auto earliest = read_earliest(*impl);
    if (!earliest) return unexpected(earliest.error());
    impl->earliest.store(*earliest);
    if (seen.needs_chain_document)
        if (auto w = write_chain_parameters(*impl); !w) return unexpected(w.error());
    if (auto abandoned = abandon_interrupted_restore(*impl); !abandoned)
        return unexpected(abandoned.error());
    const bool current = seen.committed && !seen.committed_damaged &&
                         seen.committed->number == impl->head.number &&
                         seen.committed->hash == impl->head.hash;
    if (!current)
        if (auto w = marker->write(impl->head, true); !w) return unexpected(w.error());
    impl->committed.emplace(std::move(marker).value());
    return impl;
}

/// `D` as given, without a trailing separator, so that its name and parent are its own.
fs::path without_trailing_separator(const fs::path& path) {
    return path.has_filename() ? path : path.parent_path();
}

constexpr std::string_view kInitInfix = ".init-";

/// Removes what interrupted inits of the same target left: `.<name>.init-<pid>` siblings whose
/// process is gone (kill(pid, 0) says ESRCH), or this process's own. A live other process's
/// sibling may be an init running now and is left alone; none is ever the target, so nothing
/// a command reads is removed.
void remove_abandoned_inits(const fs::path& parent, const std::string& name) {
    const std::string prefix = "." + name + std::string{kInitInfix};
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
        const std::string file = entry.path().filename().string();
        if (!file.starts_with(prefix)) continue;
        const std::string_view digits = std::string_view{file}.substr(prefix.size());
        pid_t pid = 0;
        const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
        if (err != std::errc{} || end != digits.data() + digits.size() || pid <= 0) continue;
        if (pid == ::getpid() || (::kill(pid, 0) != 0 && errno == ESRCH)) {
            std::error_code ignored;
            fs::remove_all(entry.path(), ignored);
        }
    }
}

/// Writes the whole datadir at `dir` (a new directory): the genesis documents and the head in
/// one synced batch, the COMMITTED record, then the memtables flushed into table files, and the
/// database closed. Any failure (a full disk) is returned.
Expected<void, StoreError> build_datadir(const fs::path& dir, const chain::Genesis& genesis,
                                         const Options& options, const std::string& what) {
    auto opened = Store::Impl::open_db(dir, true, options);
    if (!opened) {
        // Named by the target: the hidden directory is gone when the user reads this.
        StoreError e = opened.error();
        const std::string prefix = "opening " + dir.string() + ": ";
        if (e.message.starts_with(prefix))
            e.message = what + ": " + e.message.substr(prefix.size());
        return unexpected(std::move(e));
    }
    auto impl = std::move(opened).value();
    const block::Header h0 = chain::genesis_header(genesis);
    const Hash hash0 = block::hash_of(h0);
    rocksdb::WriteBatch batch;
    auto put = [&](size_t cf, std::string_view k, std::string_view v) {
        return batch.Put(impl->cfs[cf], slice(k), slice(v));
    };
    std::vector<rocksdb::Status> statuses;
    statuses.push_back(put(kMeta, kFormatKey, kFormat));
    statuses.push_back(put(kMeta, kGenesisKey, chain::to_json_text(genesis)));
    statuses.push_back(put(kMeta, kChainKey, chain::to_json_text(chain_parameters(genesis))));
    statuses.push_back(put(kHeaders, number_key(0), header_document(h0, hash0, 0)));
    statuses.push_back(put(kMeta, hash_key(hash0), number_key(0)));
    for (const auto& [address, account] : genesis.alloc.accounts)
        statuses.push_back(put(kAccounts, address_key(address), store::account_document(account)));
    for (const auto& [name, balance] : genesis.alloc.users)
        statuses.push_back(put(kUsers, name, store::user_document(name, balance)));
    const Head head{0, hash0, h0.state_root};
    statuses.push_back(put(kMeta, kHeadKey, head_document(head).dump()));
    const Bytes lattice = chain::genesis_lattice(genesis, true).bytes();
    statuses.push_back(put(kMeta, kLatticeKey, as_chars(lattice)));
    for (const auto& s : statuses)
        if (!s.ok()) return from_status(s, what);
    rocksdb::WriteOptions wo;
    wo.sync = true;  // a datadir that says it exists must survive a crash
    if (auto s = impl->db->Write(wo, &batch); !s.ok()) return from_status(s, what);
    auto marker = CommittedFile::open(dir);
    if (!marker) return unexpected(marker.error());
    if (auto w = marker->write(head, true); !w) return unexpected(w.error());
    // Flushed here, where a failure is still the init's, so that the datadir renamed into place
    // needs no recovery write to open.
    rocksdb::FlushOptions fo;
    fo.wait = true;
    if (auto s = impl->db->Flush(fo, impl->cfs); !s.ok()) return from_status(s, what);
    impl.reset();
    return {};
}

/// A writer's pruner: with Options::retain_blocks, or to finish a round a crash interrupted
/// (a header still stored between block 0 and earliest), which it does first.
Expected<void, StoreError> start_pruner(Store::Impl& impl) {
    bool unfinished = false;
    // Below the head only: a restored head sits below earliest, and its header stays.
    if (const uint64_t earliest =
            std::min(impl.earliest.load(), std::max<uint64_t>(impl.head.number, 1));
        earliest > 1) {
        const std::string end = number_key(earliest);
        const rocksdb::Slice upper{end};
        rocksdb::ReadOptions ro;
        ro.iterate_upper_bound = &upper;
        std::unique_ptr<rocksdb::Iterator> it{impl.db->NewIterator(ro, impl.cfs[kHeaders])};
        it->Seek(slice(number_key(1)));
        if (!it->status().ok()) return from_status(it->status(), "reading the headers");
        unfinished = it->Valid();
    }
    if (impl.options.retain_blocks > 0 || unfinished)
        impl.pruner = std::make_unique<Pruner>(impl, impl.options.retain_blocks);
    if (impl.pruner) impl.pruner->committed(impl.head.number);
    return {};
}

}  // namespace

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

json head_document(const Head& h) {
    return {{"number", to_hex_quantity(h.number)},
            {"hash", to_hex(h.hash)},
            {"state_root", to_hex(h.state_root)}};
}

std::string number_key(uint64_t n) {
    std::string k(8, '\0');
    for (int i = 0; i < 8; ++i) k[static_cast<size_t>(i)] = static_cast<char>(n >> (56 - 8 * i));
    return k;
}

std::optional<uint64_t> number_of(std::string_view bytes) {
    if (bytes.size() != 8) return std::nullopt;
    uint64_t n = 0;
    for (const char c : bytes) n = (n << 8) | static_cast<uint8_t>(c);
    return n;
}

std::string hash_key(const Hash& h) {
    std::string k{kHashPrefix};
    k.append(hash_bytes_key(h));
    return k;
}

Store::Store(std::unique_ptr<Impl> impl) : m_impl{std::move(impl)} {}

Store::~Store() {
    // First: its thread reads and writes the database closed below.
    m_impl->pruner.reset();
    // The next open (a `get`, a restart) would otherwise replay every block still only in the
    // WAL. Nothing to report to: a failed flush leaves the WAL, which still recovers everything.
    // After a failed write RocksDB holds a background error and refuses every write, a flush too.
    if (!m_impl->options.read_only && !m_impl->failed) (void)flush();
}

Expected<void, StoreError> Store::flush() {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    if (auto s = m_impl->db->Flush(fo, m_impl->cfs); !s.ok()) return from_status(s, "flush");
    return {};
}

const Head& Store::head() const noexcept { return m_impl->head; }
const state::Lattice& Store::lattice() const noexcept { return m_impl->lattice; }
uint64_t Store::earliest() const noexcept { return m_impl->earliest.load(); }
const chain::Genesis& Store::genesis() const noexcept { return m_impl->genesis; }

Expected<std::unique_ptr<Store>, StoreError> Store::init(const fs::path& path,
                                                         const chain::Genesis& genesis,
                                                         const Options& options) {
    // A genesis built in code skipped parse_genesis: the supply rule holds for every datadir.
    if (auto supply = chain::check_supply(genesis); !supply)
        return fail(StoreErrorCode::invalid_argument, supply.error());
    const fs::path target = without_trailing_separator(path);
    std::error_code ec;
    if (fs::exists(target, ec)) {
        if (!fs::is_directory(target, ec))
            return fail(StoreErrorCode::already_initialized,
                        path.string() + " exists and is not a directory");
        if (!fs::is_empty(target, ec))
            return fail(StoreErrorCode::already_initialized, path.string() + " is not empty");
    }
    // Built beside the target and renamed into place, so that an init that fails or is killed
    // leaves no target, only a hidden sibling, which the next init of the target removes.
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path{"."};
    const std::string name = target.filename().string();
    remove_abandoned_inits(parent, name);
    const fs::path building =
        parent / ("." + name + std::string{kInitInfix} + std::to_string(::getpid()));
    if (!fs::create_directory(building, ec) || ec)
        return fail(StoreErrorCode::io, "cannot create " + building.string() + ": " +
                                            (ec ? ec.message() : "it exists"));
    const auto abandon = [&](StoreError e) {
        std::error_code ignored;
        fs::remove_all(building, ignored);
        return unexpected(std::move(e));
    };
    if (auto built = build_datadir(building, genesis, options, "init " + path.string()); !built)
        return abandon(built.error());
    // Its entries (RocksDB's files) durable before the rename makes it the datadir.
    if (auto synced = io::sync_directory(building.string()); !synced)
        return abandon(
            {StoreErrorCode::io, "init " + path.string() + ": " + synced.error().message});
    if (testing::detail::stop_init_before_rename())
        return fail(StoreErrorCode::internal, "init stopped by a test");
    // rename(2) replaces an empty directory, and fails if one with files appeared meanwhile. A
    // failed sync of the parent after it is not an error: the datadir is whole where it is, and
    // a power loss that undid the rename leaves the hidden sibling the next init removes.
    if (auto moved = io::rename_durably(building.string(), target.string());
        !moved && !moved.error().renamed) {
        const int e = moved.error().code;
        return abandon(
            {e == ENOTEMPTY || e == EEXIST ? StoreErrorCode::already_initialized
                                           : StoreErrorCode::io,
             "cannot move the new datadir to " + path.string() + ": " + std::strerror(e)});
    }
    auto opened = open(target, options);
    if (!opened) {
        // The datadir this call made a moment ago, which nothing else knows of yet: a failed
        // init leaves no directory that init then refuses.
        fs::remove_all(target, ec);
        return unexpected(opened.error());
    }
    return opened;
}

Expected<std::unique_ptr<Store>, StoreError> Store::open(const fs::path& path,
                                                         const Options& options) {
    auto seen = inspect(path, options, false);
    if (!seen) return unexpected(seen.error());
    if (options.read_only) {
        seen->impl->options = options;
        return std::unique_ptr<Store>{new Store{std::move(seen->impl)}};
    }
    auto impl = open_writer(path, options, std::move(seen).value());
    if (!impl) return unexpected(impl.error());
    if (auto pruning = start_pruner(**impl); !pruning) return unexpected(pruning.error());
    return std::unique_ptr<Store>{new Store{std::move(impl).value()}};
}

Expected<Recovery, StoreError> Store::recover(const fs::path& path, const Options& options) {
    auto seen = inspect(path, options, true);
    if (!seen) return unexpected(seen.error());
    Recovery r;
    r.head = seen->head;
    r.committed_damaged = seen->committed_damaged;
    if (seen->committed) r.committed = seen->committed->number;
    // A record that lags the head, or none (a datadir older than it), is no damage.
    const bool rolled_back = seen->committed && seen->committed->number > seen->head.number;
    if (!rolled_back && !seen->committed_damaged) return r;
    Options writer = options;
    writer.read_only = false;
    // The writable open may drop what the rollback left unreachable: the user asked for it.
    auto impl = open_writer(path, writer, std::move(seen).value());
    if (!impl) return unexpected(impl.error());
    r.changed = true;
    return r;
}

}  // namespace barrel::store
