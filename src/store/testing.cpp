#include "testing.hpp"

#include "pruner.hpp"
#include "store_impl.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace barrel::store::testing {

void clear_cache(Store& store) {
    Store::Impl& impl = StoreTesting::impl(store);
    impl.accounts->clear();
    impl.users->clear();
}

void wait_for_background_work(const Store& store) {
    const Store::Impl& impl = StoreTesting::impl(store);
    // Summed over the column families: pending flushes and compactions are counted per family.
    const auto count = [&impl](const std::string& property) {
        uint64_t n = 0;
        return impl.db->GetAggregatedIntProperty(property, &n) ? n : 0;
    };
    using p = rocksdb::DB::Properties;
    // A failed flush stops background work with its memtable still pending: no waiting on that.
    while (count(p::kBackgroundErrors) == 0 &&
           count(p::kMemTableFlushPending) + count(p::kNumRunningFlushes) +
                   count(p::kCompactionPending) + count(p::kNumRunningCompactions) >
               0)
        std::this_thread::sleep_for(std::chrono::microseconds{200});
}

uint64_t memtable_entries(const Store& store) {
    const Store::Impl& impl = StoreTesting::impl(store);
    uint64_t active = 0, immutable = 0;
    (void)impl.db->GetAggregatedIntProperty(rocksdb::DB::Properties::kNumEntriesActiveMemTable,
                                            &active);
    (void)impl.db->GetAggregatedIntProperty(rocksdb::DB::Properties::kNumEntriesImmMemTables,
                                            &immutable);
    return active + immutable;
}

}  // namespace barrel::store::testing

namespace barrel::store::testing {

struct FullDisk::State {
    std::mutex mutex;
    uint64_t budget{0};
    uint64_t written{0};
    bool failed{false};

    /// How many of `size` bytes may be written; marks the disk full when not all of them.
    size_t take(size_t size) {
        const std::lock_guard lock{mutex};
        const uint64_t room = budget > written ? budget - written : 0;
        const size_t n = static_cast<size_t>(std::min<uint64_t>(room, size));
        written += n;
        if (n < size) failed = true;
        return n;
    }
    bool full() {
        const std::lock_guard lock{mutex};
        return failed;
    }
};

namespace {

std::mutex g_mutex;
std::weak_ptr<FullDisk::State> g_disk;  // the FullDisk alive now, if any
bool g_stop_init = false;

rocksdb::IOStatus no_space(const std::string& file) {
    return rocksdb::IOStatus::NoSpace("While appending to file: " + file,
                                      "No space left on device");
}

class FullDiskFile final : public rocksdb::FSWritableFileOwnerWrapper {
public:
    FullDiskFile(std::unique_ptr<rocksdb::FSWritableFile> file, std::string name,
                 std::shared_ptr<FullDisk::State> disk)
        : FSWritableFileOwnerWrapper{std::move(file)},
          m_name{std::move(name)},
          m_disk{std::move(disk)} {}

    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
        const size_t n = m_disk->take(data.size());
        if (n > 0)
            if (auto s = target()->Append(rocksdb::Slice{data.data(), n}, options, dbg); !s.ok())
                return s;
        return n < data.size() ? no_space(m_name) : rocksdb::IOStatus::OK();
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo&,
                             rocksdb::IODebugContext* dbg) override {
        return Append(data, options, dbg);
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                       const rocksdb::IOOptions& options,
                                       rocksdb::IODebugContext* dbg) override {
        const size_t n = m_disk->take(data.size());
        if (n > 0)
            if (auto s = target()->PositionedAppend(rocksdb::Slice{data.data(), n}, offset, options,
                                                    dbg);
                !s.ok())
                return s;
        return n < data.size() ? no_space(m_name) : rocksdb::IOStatus::OK();
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                       const rocksdb::IOOptions& options,
                                       const rocksdb::DataVerificationInfo&,
                                       rocksdb::IODebugContext* dbg) override {
        return PositionedAppend(data, offset, options, dbg);
    }
    // A kernel reports a failed write-back again at fsync.
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
        return m_disk->full() ? no_space(m_name) : target()->Sync(options, dbg);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                            rocksdb::IODebugContext* dbg) override {
        return m_disk->full() ? no_space(m_name) : target()->Fsync(options, dbg);
    }
    rocksdb::IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const rocksdb::IOOptions& options,
                                rocksdb::IODebugContext* dbg) override {
        return m_disk->full() ? no_space(m_name)
                              : target()->RangeSync(offset, nbytes, options, dbg);
    }

private:
    std::string m_name;
    std::shared_ptr<FullDisk::State> m_disk;
};

class FullDiskFileSystem final : public rocksdb::FileSystemWrapper {
public:
    explicit FullDiskFileSystem(std::shared_ptr<FullDisk::State> disk)
        : FileSystemWrapper{rocksdb::FileSystem::Default()}, m_disk{std::move(disk)} {}
    const char* Name() const override { return "FullDisk"; }

    rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* dbg) override {
        return wrap(target()->NewWritableFile(name, o, result, dbg), name, result);
    }
    rocksdb::IOStatus ReopenWritableFile(const std::string& name, const rocksdb::FileOptions& o,
                                         std::unique_ptr<rocksdb::FSWritableFile>* result,
                                         rocksdb::IODebugContext* dbg) override {
        return wrap(target()->ReopenWritableFile(name, o, result, dbg), name, result);
    }
    rocksdb::IOStatus ReuseWritableFile(const std::string& name, const std::string& old,
                                        const rocksdb::FileOptions& o,
                                        std::unique_ptr<rocksdb::FSWritableFile>* result,
                                        rocksdb::IODebugContext* dbg) override {
        return wrap(target()->ReuseWritableFile(name, old, o, result, dbg), name, result);
    }

private:
    rocksdb::IOStatus wrap(rocksdb::IOStatus s, const std::string& name,
                           std::unique_ptr<rocksdb::FSWritableFile>* result) {
        if (s.ok()) *result = std::make_unique<FullDiskFile>(std::move(*result), name, m_disk);
        return s;
    }
    std::shared_ptr<FullDisk::State> m_disk;
};

}  // namespace

FullDisk::FullDisk(uint64_t budget) : m_state{std::make_shared<State>()} {
    m_state->budget = budget;
    const std::lock_guard lock{g_mutex};
    g_disk = m_state;
}

FullDisk::~FullDisk() {
    const std::lock_guard lock{g_mutex};
    g_disk.reset();
}

void FullDisk::set_budget(uint64_t budget) {
    const std::lock_guard lock{m_state->mutex};
    m_state->budget = budget;
    m_state->failed = false;
}

uint64_t FullDisk::written() const {
    const std::lock_guard lock{m_state->mutex};
    return m_state->written;
}

bool FullDisk::failed() const { return m_state->full(); }

void stop_init_before_rename(bool stop) {
    const std::lock_guard lock{g_mutex};
    g_stop_init = stop;
}

namespace detail {

std::shared_ptr<rocksdb::FileSystem> file_system() {
    const std::lock_guard lock{g_mutex};
    auto disk = g_disk.lock();
    if (!disk) return nullptr;
    return std::make_shared<FullDiskFileSystem>(std::move(disk));
}

bool stop_init_before_rename() {
    const std::lock_guard lock{g_mutex};
    return g_stop_init;
}

}  // namespace detail

}  // namespace barrel::store::testing

namespace barrel::store::testing {

namespace {

struct PauseState {
    std::mutex mutex;
    std::condition_variable changed;
    bool armed{false};
    std::optional<PruneStep> waiting;  ///< the step a pruner waits at
    bool released{false};
};

PauseState& pause_state() {
    static PauseState state;
    return state;
}

std::atomic<uint64_t> g_chunk_blocks{0};
constexpr uint64_t kDefaultChunkBlocks = 64;

}  // namespace

PausedPruner::PausedPruner() {
    PauseState& p = pause_state();
    const std::lock_guard lock{p.mutex};
    p.armed = true;
    p.waiting.reset();
    p.released = false;
}

PausedPruner::~PausedPruner() {
    PauseState& p = pause_state();
    {
        const std::lock_guard lock{p.mutex};
        p.armed = false;
    }
    p.changed.notify_all();
}

PruneStep PausedPruner::wait() {
    PauseState& p = pause_state();
    std::unique_lock lock{p.mutex};
    p.changed.wait(lock, [&] { return p.waiting.has_value(); });
    return *p.waiting;
}

void PausedPruner::release() {
    PauseState& p = pause_state();
    {
        const std::lock_guard lock{p.mutex};
        p.released = true;
        p.waiting.reset();  // so that the next wait() waits for the next step
    }
    p.changed.notify_all();
}

void wait_for_pruner(const Store& store) {
    const Store::Impl& impl = StoreTesting::impl(store);
    if (impl.pruner) impl.pruner->wait_idle();
}

void set_prune_chunk_blocks(uint64_t blocks) { g_chunk_blocks.store(blocks); }

namespace detail {

void pause_pruner(PruneStep step, const std::function<bool()>& stopping) {
    PauseState& p = pause_state();
    std::unique_lock lock{p.mutex};
    if (!p.armed) return;
    p.waiting = step;
    p.released = false;
    p.changed.notify_all();
    p.changed.wait(lock, [&] { return p.released || !p.armed || stopping(); });
    p.waiting.reset();
}

void wake_paused_pruners() {
    PauseState& p = pause_state();
    { const std::lock_guard lock{p.mutex}; }
    p.changed.notify_all();
}

uint64_t prune_chunk_blocks() {
    const uint64_t blocks = g_chunk_blocks.load();
    return blocks == 0 ? kDefaultChunkBlocks : blocks;
}

}  // namespace detail

}  // namespace barrel::store::testing
