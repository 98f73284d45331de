// The RocksDB options barrel runs with and the opening of the database (Store::Impl::open_db).

#include "block_batch.hpp"
#include "crash_points.hpp"
#include "info_log.hpp"
#include "memtable.hpp"
#include "pruner.hpp"
#include "resume_listener.hpp"
#include "store_impl.hpp"
#include "testing.hpp"
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

#include <new>

namespace barrel::store {

namespace {

namespace fs = std::filesystem;

constexpr size_t kMemtableBudget = 32 << 20;

/// Options chosen for this workload (docs/benchmarks.md, "Commit"): point lookups by hash or
/// address, values of a few hundred bytes written once per block.
rocksdb::ColumnFamilyOptions cf_options(size_t cf, bool read_only) {
    rocksdb::ColumnFamilyOptions o;
    // A full block's documents fill a good part of one write buffer, transactions the most; the
    // total across families is capped in DBOptions (kMemtableBudget).
    o.write_buffer_size = 16 << 20;
    // ZSTD from level 1: the documents are mostly random hex, which LZ4 (repeats only) left as it
    // was and ZSTD's entropy coder halves (docs/benchmarks.md, "Bytes per transfer"). Level 1 of
    // ZSTD: the same size as its default (3) on these documents, at 0.6 of its CPU. Level 0,
    // what flushes write, stays plain: every level-0 file is read and rewritten by a compaction
    // soon after, and compressing it first too cost a node as much CPU as a third of its
    // signature recoveries ("Compression: what it costs").
    o.compression = rocksdb::kZSTD;
    o.compression_opts.level = 1;
    o.compression_per_level.assign(static_cast<size_t>(o.num_levels), rocksdb::kZSTD);
    o.compression_per_level[0] = rocksdb::kNoCompression;
    if (!read_only && (cf == kTxs || cf == kReceipts || cf == kAccounts || cf == kUsers)) {
        // Keyed by hashes, addresses and DagTransfer names, read by point lookups and never
        // iterated by the node: hash buckets place each of a block's keys in O(1), where the
        // default skip list spent most of the commit's write time comparing keys, and the
        // flush sorts the memtable once instead of rebuilding it as a skip list, as RocksDB's
        // own hash memtables do (memtable.cpp; docs/benchmarks.md, "Commit"). A read-only open
        // writes nothing and keeps the default skip list, which costs nothing to create, where
        // each bucket memtable allocates and zeroes its bucket array (a `get` is mostly open time).
        o.memtable_factory = bucket_memtable_factory(1 << 16);
    }
    rocksdb::BlockBasedTableOptions t;
    if (cf != kBlocks) t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));  // point lookups
    t.block_cache = nullptr;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    return o;
}

rocksdb::DBOptions db_options(const fs::path& path, bool create, bool read_only) {
    rocksdb::DBOptions o;
    // Barrel's own info log (info_log.hpp): RocksDB's aborts the process on a full disk. A
    // read-only open logs nothing, so that a query leaves the datadir as it found it.
    o.info_log = read_only ? null_info_log() : open_info_log(path);
    o.create_if_missing = create;
    o.create_missing_column_families = create;
    o.error_if_exists = create;
    o.max_background_jobs = 2;
    o.paranoid_checks = true;
    // All memtables together: past this RocksDB flushes the largest, so a long import's memory
    // levels off (docs/benchmarks.md, "Memory") instead of growing to 7 × write_buffer_size.
    o.db_write_buffer_size = kMemtableBudget;
    // The write-ahead logs together: past this RocksDB flushes the families that keep the oldest
    // log alive, so it can be deleted. RocksDB's default, 4 x every family's write buffers (1 GiB
    // here), let a running node keep every block since its start twice: `meta` and `headers`
    // take a few hundred bytes a block, are never the largest memtable, so never flushed, and
    // each WAL they have data in stays (docs/benchmarks.md, "Bytes per transfer").
    o.max_total_wal_size = 2 * kMemtableBudget;
    // The bucket memtables (memtable.hpp) take one writer at a time; barrel has one.
    o.allow_concurrent_memtable_write = false;
    // Table files are opened by the opening thread alone. RocksDB 7.8 opens them with up to 16
    // threads of its own (VersionBuilder::LoadTableHandlers), and when one of those cannot be
    // created (a process under a memory limit: `prlimit --as`, a container) it destroys the ones
    // it started while they run, and std::terminate aborts the process; the fault suite's
    // endless-input cases saw it about once in 100 opens. A datadir holds tens of table files,
    // which one thread opens in milliseconds.
    o.max_file_opening_threads = 1;
    if (read_only) {
        // A query opens the datadir for a few point reads: no statistics read from each file
        // for a compaction it never runs.
        o.skip_stats_update_on_db_open = true;
    }
    return o;
}

/// An open that failed, as the StoreError the caller can act on.
Unexpected<StoreError> open_failure(const rocksdb::Status& s, const fs::path& path, bool create) {
    const std::string msg = s.ToString();
    // RocksDB reports a held LOCK file as an I/O error on ".../LOCK": EAGAIN from fcntl when
    // another process holds it, "lock hold by current process" when this one does. Other
    // errors may mention "lock" too ("block checksum mismatch") and are not this.
    const bool lock_file = s.IsIOError() && msg.find("/LOCK") != std::string::npos;
    const bool held = msg.find("Resource temporarily unavailable") != std::string::npos ||
                      msg.find("lock hold by current process") != std::string::npos;
    if (lock_file && held)
        return fail(StoreErrorCode::locked,
                    "datadir " + path.string() + " is in use by another process");
    if (s.IsInvalidArgument() && !create)
        return fail(StoreErrorCode::not_a_datadir, path.string() + " is not a barrel datadir");
    return from_status(s, "opening " + path.string());
}

}  // namespace

namespace {

/// Removes RocksDB's temporary files (`*.dbtmp`: an OPTIONS file or a table being written) that
/// a failed write left in a closed datadir. RocksDB writes them beside their final name and
/// renames them when whole; once the database is closed, one still there is a write that failed
/// (a full disk, a file size limit), which RocksDB does not clean up itself.
void remove_temporaries(const fs::path& path) {
    std::error_code ec;
    for (fs::directory_iterator it{path, ec}, end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".dbtmp") fs::remove(it->path(), ec);
}

}  // namespace

Store::Impl::~Impl() {
    pruner.reset();  // its thread reads the database and the families closed below
    for (auto* cf : cfs)
        if (cf != nullptr) (void)db->DestroyColumnFamilyHandle(cf);
    db.reset();  // closed before its temporaries go, and before `env`, which it uses
    if (!options.read_only && !path.empty()) remove_temporaries(path);
}

Expected<std::unique_ptr<Store::Impl>, StoreError> Store::Impl::open_db(const fs::path& path,
                                                                        bool create,
                                                                        const Options& options) {
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (size_t i = 0; i < kCfCount; ++i)
        descriptors.emplace_back(kCfNames[i], cf_options(i, options.read_only));
    if (options.max_block_bytes > Options::kMaxBlockBytes)
        return fail(StoreErrorCode::invalid_argument,
                    "max_block_bytes " + std::to_string(options.max_block_bytes) +
                        " is more than a store can take (" +
                        std::to_string(Options::kMaxBlockBytes) + ")");
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    // Before RocksDB opens anything: a cache that cannot be had leaves the path untouched.
    try {
        impl->accounts = std::make_unique<AccountCache>(options.account_cache_bytes);
    } catch (const std::bad_alloc&) {
        return fail(StoreErrorCode::out_of_memory, "cannot allocate an account cache of " +
                                                       std::to_string(options.account_cache_bytes) +
                                                       " bytes");
    }
    impl->users = std::make_unique<UserCache>(options.user_cache_entries);
    // Commits hand RocksDB batches barrel encoded itself (block_batch.hpp): a library that
    // reads them differently must not be written to.
    if (!options.read_only && !put_records_match_rocksdb())
        return fail(StoreErrorCode::unsupported,
                    "the linked RocksDB's write batch format is not the one barrel writes");
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s;
    if (create) {
        // RocksDB would create it too, but the info log goes in first.
        std::error_code ec;
        fs::create_directories(path, ec);
        if (ec)
            return fail(StoreErrorCode::io, "cannot create " + path.string() + ": " + ec.message());
    }
    rocksdb::DBOptions db = db_options(path, create, options.read_only);
    if (auto file_system = testing::detail::file_system()) {
        impl->env = rocksdb::NewCompositeEnv(std::move(file_system));
        db.env = impl->env.get();
    }
    if (!options.read_only) {
        db.listeners.push_back(resume_listener(db.info_log));
        // The crash tests' kill points (crash_points.hpp); nothing is installed without them.
        impl->crash_points = commit_crash_points_armed();
        if (auto listener = wal_crash_listener()) db.listeners.push_back(std::move(listener));
    }
    if (options.read_only)
        s = rocksdb::DB::OpenForReadOnly(db, path.string(), descriptors, &impl->cfs, &raw);
    else
        s = rocksdb::DB::Open(db, path.string(), descriptors, &impl->cfs, &raw);
    if (!s.ok()) {
        if (!options.read_only) remove_temporaries(path);
        return open_failure(s, path, create);
    }
    impl->db.reset(raw);
    impl->path = path;
    return impl;
}

}  // namespace barrel::store
