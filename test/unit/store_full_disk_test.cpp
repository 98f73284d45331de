// A full disk at every write position of an init and three small blocks (issue 20, finding 1).
// testing::FullDisk fails RocksDB's writes past a budget of bytes with ENOSPC, as a full disk
// does, the crossing write partially. For each budget: no abort (RocksDB's info logger asserted
// on the line after a failed append), an io error naming "No space left on device", an init
// that failed leaves nothing (no target, no hidden sibling), a commit that failed leaves the
// datadir at a whole block, and once the budget is lifted the import goes on to the same datadir
// an unfaulted run gives.

#include <barrel/exec/execute.hpp>
#include <barrel/store/store.hpp>

#include "store/resume_listener.hpp"
#include "store/testing.hpp"
#include "store_commit.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

using namespace barrel;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::generate_or_throw;
using barrel::test::ScratchDir;

namespace {

namespace fs = std::filesystem;
constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();

const gen::Workload& full_disk_workload() {
    static const gen::Workload w =
        generate_or_throw({.blocks = 3, .txs = 20, .accounts = 8, .mix = gen::Mix::mixed});
    return w;
}

void expect_no_space(const store::StoreError& e) {
    EXPECT_EQ(e.code, store::StoreErrorCode::io) << e.message;
    EXPECT_NE(e.message.find("No space left on device"), std::string::npos) << e.message;
}

/// One run under `budget`: init, then the import; after a failure the budget is lifted and the
/// run goes on, in the same store (`resume`: it resumes once space returns) or after a reopen.
/// Returns the datadir's dump at the end.
test::Dump run_with_budget(store::testing::FullDisk& disk, uint64_t budget, bool* failed,
                           uint64_t* faulted_bytes = nullptr, bool resume = false) {
    const auto& w = full_disk_workload();
    ScratchDir tmp;
    const fs::path dir = tmp.path() / "data";
    disk.set_budget(budget);
    auto s = store::Store::init(dir, w.genesis);
    if (!s) {
        expect_no_space(s.error());
        EXPECT_EQ(test::directory_entries(tmp.path()), std::vector<std::string>{})
            << "budget " << budget;
        *failed = true;
        disk.set_budget(kNoLimit);
        s = store::Store::init(dir, w.genesis);
        EXPECT_TRUE(s) << s.error().message;
        if (!s) return {};
    }
    uint64_t committed = (*s)->head().number;
    if (auto e = test::commit_blocks(**s, w, w.blocks.size())) {
        expect_no_space(*e);
        *failed = true;
        committed = (*s)->head().number;
        EXPECT_TRUE((*s)->write_failed());
        // Refused again while the disk stays full, however often it is asked: each commit tries
        // to resume the store, whose flush finds no room either.
        const auto again = test::commit_blocks(**s, w, w.blocks.size());
        EXPECT_TRUE(again.has_value());
        if (again) {
            expect_no_space(*again);
            EXPECT_NE(again->message.find("the store is in error since a write failed"),
                      std::string::npos)
                << again->message;
        }
        EXPECT_TRUE((*s)->write_failed());
        if (resume) {
            // Issue 29, finding 8: once space returns, the same store resumes and goes on
            // (a node's sealer never had to restart).
            disk.set_budget(kNoLimit);
            const auto resumed = test::commit_blocks(**s, w, w.blocks.size());
            EXPECT_FALSE(resumed.has_value()) << resumed->message;
            EXPECT_FALSE((*s)->write_failed());
            EXPECT_EQ((*s)->head().number, w.blocks.size());
            committed = (*s)->head().number;
        }
    }
    s->reset();  // the close after a failed write must not abort either
    if (faulted_bytes != nullptr) *faulted_bytes = disk.written();
    // A flush that fails at close is not reported (the WAL still holds every block): the disk
    // filled all the same.
    *failed = *failed || disk.failed();
    disk.set_budget(kNoLimit);
    auto reopened = store::Store::open(dir);
    EXPECT_TRUE(reopened) << "budget " << budget << ": " << reopened.error().message;
    if (!reopened) return {};
    // Whole blocks only: the head is at least the last block whose commit returned (its
    // documents all there, which open checks), and a failed commit is there whole or not at all.
    EXPECT_GE((*reopened)->head().number, committed);
    EXPECT_FALSE(test::commit_blocks(**reopened, w, w.blocks.size()).has_value());
    EXPECT_EQ((*reopened)->head().number, w.blocks.size());
    reopened->reset();
    return dump_datadir(dir);
}

}  // namespace

TEST(store_full_disk, every_failing_write_position_is_an_error_and_the_import_goes_on) {
    // The unfaulted run, and how many bytes it writes until the writer has closed.
    bool failed = false;
    uint64_t total = 0;
    test::Dump expected;
    {
        store::testing::FullDisk disk{kNoLimit};
        expected = run_with_budget(disk, kNoLimit, &failed, &total);
        ASSERT_FALSE(failed);
    }
    ASSERT_GT(total, 0u);
    // Budgets spread over the whole run, denser at the start, where init's small writes are
    // (each run syncs, so a few dozen of them).
    std::vector<uint64_t> budgets;
    for (uint64_t b = 0; b < 4096; b += 331) budgets.push_back(b);
    for (uint64_t b = 4096; b < total; b += total / 20 + 1) budgets.push_back(b);
    size_t failures = 0;
    for (size_t k = 0; k < budgets.size(); ++k) {
        const uint64_t budget = budgets[k];
        SCOPED_TRACE("budget " + std::to_string(budget) + " of " + std::to_string(total));
        failed = false;
        store::testing::FullDisk disk{budget};
        // Every other budget goes on in the same store once space returns, the others reopen.
        const test::Dump dump = run_with_budget(disk, budget, &failed, nullptr, k % 2 == 1);
        failures += failed ? 1 : 0;
        EXPECT_EQ(dump_diff(expected, dump), "");
        if (HasFailure()) break;
    }
    EXPECT_EQ(failures, budgets.size());
}

TEST(store_full_disk, a_real_tiny_tmpfs_fills_and_the_import_goes_on_once_it_grows) {
    ScratchDir tmp;
    const fs::path mnt = tmp.path() / "tmpfs";
    fs::create_directory(mnt);
    if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m") != 0)
        GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << ")";
    struct Unmount {
        const fs::path& dir;
        ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
    } unmount{mnt};
    const auto w =
        generate_or_throw({.blocks = 8, .txs = 200, .accounts = 1000, .mix = gen::Mix::transfer});
    const fs::path dir = mnt / "data";
    ASSERT_TRUE(store::Store::init(dir, w.genesis));
    // One writer per block, as one `import` per block would: each open writes RocksDB's info
    // log, whose failed append made the next log line abort.
    std::optional<store::StoreError> error;
    for (size_t k = 0; k < w.blocks.size() && !error; ++k) {
        auto s = store::Store::open(dir);
        if (!s) {
            error = s.error();
            break;
        }
        error = test::commit_blocks(**s, w, (*s)->head().number + 1);
    }
    ASSERT_TRUE(error.has_value()) << "8 blocks fit in the tmpfs: make them larger";
    expect_no_space(*error);
    ASSERT_EQ(::mount("tmpfs", mnt.c_str(), "tmpfs", MS_REMOUNT, "size=16m"), 0)
        << std::strerror(errno);
    auto s = store::Store::open(dir);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_FALSE(test::commit_blocks(**s, w, w.blocks.size()).has_value());
    EXPECT_EQ((*s)->head().number, w.blocks.size());
}

namespace {

/// A tmpfs of `size` mounted under a scratch directory for the test's life, or nullopt where
/// mount is refused (not root, no CAP_SYS_ADMIN).
class Tmpfs {
public:
    static std::unique_ptr<Tmpfs> mount(const char* size, std::string* why) {
        auto t = std::unique_ptr<Tmpfs>{new Tmpfs};
        fs::create_directory(t->m_dir);
        const std::string data = std::string{"size="} + size;
        if (::mount("tmpfs", t->m_dir.c_str(), "tmpfs", 0, data.c_str()) != 0) {
            *why = std::strerror(errno);
            t->m_dir.clear();
            return nullptr;
        }
        return t;
    }
    ~Tmpfs() {
        if (!m_dir.empty()) ::umount2(m_dir.c_str(), MNT_DETACH);
    }
    Tmpfs(const Tmpfs&) = delete;
    Tmpfs& operator=(const Tmpfs&) = delete;
    const fs::path& dir() const { return m_dir; }

private:
    Tmpfs() : m_dir{m_scratch.path() / "tmpfs"} {}
    ScratchDir m_scratch;
    fs::path m_dir;
};

/// Fills the file system of `dir` with a file `dir/filler` until `free_bytes` are left.
void fill(const fs::path& dir, uint64_t free_bytes) {
    const auto space = fs::space(dir);
    ASSERT_GT(space.available, free_bytes);
    std::ofstream filler{dir / "filler", std::ios::binary};
    const std::string chunk(1 << 20, '\xff');
    for (uint64_t left = space.available - free_bytes; left > 0;) {
        const uint64_t n = std::min<uint64_t>(left, chunk.size());
        filler.write(chunk.data(), static_cast<std::streamsize>(n));
        left -= n;
    }
    filler.close();
    ASSERT_FALSE(filler.fail());
}

/// The hashes of blocks 0..head, as the store's headers give them.
std::vector<Hash> block_hashes(const store::Store& s) {
    std::vector<Hash> hashes;
    for (uint64_t n = 0; n <= s.head().number; ++n) {
        const auto h = s.header_record(n);
        if (!h || !*h) {
            ADD_FAILURE() << "no header of block " << n;
            break;
        }
        hashes.push_back((*h)->hash);
    }
    return hashes;
}

}  // namespace

TEST(store_resume_listener, turns_off_only_a_full_disks_recovery_that_stops_writes) {
    using Severity = rocksdb::Status::Severity;
    const auto no_space = rocksdb::Status::NoSpace("While appending to file: 000032.log");
    const auto io = rocksdb::Status::IOError("While appending to file: 000032.log");
    struct Case {
        rocksdb::Status status;
        bool store_resumes;
    };
    const Case cases[] = {
        {{no_space, Severity::kHardError}, true},
        {{no_space, Severity::kSoftError}, false},  // a compaction's: writes go on
        {{no_space, Severity::kFatalError}, false},
        {{no_space, Severity::kUnrecoverableError}, false},
        {{io, Severity::kHardError}, false},
        {{rocksdb::Status::Corruption("block checksum mismatch"), Severity::kHardError}, false},
    };
    for (const Case& c : cases)
        EXPECT_EQ(store::store_resumes(c.status), c.store_resumes)
            << c.status.ToString() << ", severity " << static_cast<int>(c.status.severity());
}

// Issue 40: on a real disk RocksDB recovered from a full disk on its own, but only once as much
// space as its largest write buffer (16 MiB) was free again; until then every DB::Resume answered
// Busy, and on a smaller disk the store never resumed. Here a 16 MiB tmpfs is filled, the filler
// deleted, and the same store must go on with every block whole.
TEST(store_full_disk, a_real_full_tmpfs_empties_and_the_same_store_goes_on) {
    std::string why;
    const auto tmpfs = Tmpfs::mount("16m", &why);
    if (!tmpfs) GTEST_SKIP() << "cannot mount a tmpfs here (" << why << ")";
    const auto w =
        generate_or_throw({.blocks = 12, .txs = 200, .accounts = 1000, .mix = gen::Mix::transfer});
    const fs::path dir = tmpfs->dir() / "data";
    auto s = store::Store::init(dir, w.genesis);
    ASSERT_TRUE(s) << s.error().message;
    ASSERT_FALSE(test::commit_blocks(**s, w, 2).has_value());
    const std::vector<Hash> before = block_hashes(**s);
    fill(tmpfs->dir(), 64 << 10);
    const auto failed = test::commit_blocks(**s, w, w.blocks.size());
    ASSERT_TRUE(failed.has_value()) << "12 blocks fit in 64 KiB: make them larger";
    expect_no_space(*failed);
    EXPECT_TRUE((*s)->write_failed());
    const uint64_t committed = (*s)->head().number;
    // Still full: the resume's flush finds no room, and the store says so (not that RocksDB is
    // recovering on its own, which it never did).
    const auto again = test::commit_block(**s, w, committed);
    ASSERT_FALSE(again.has_value());
    expect_no_space(again.error());
    EXPECT_EQ(again.error().message.rfind("the store is in error since a write failed (writing the "
                                          "block: IO error: No space left on device",
                                          0),
              0u)
        << again.error().message;
    EXPECT_NE(again.error().message.find("); resuming it: IO error: No space left on device"),
              std::string::npos)
        << again.error().message;

    fs::remove(tmpfs->dir() / "filler");
    EXPECT_FALSE(test::commit_blocks(**s, w, w.blocks.size()).has_value());
    EXPECT_FALSE((*s)->write_failed());
    EXPECT_EQ((*s)->head().number, w.blocks.size());
    s->reset();

    auto reopened = store::Store::open(dir);
    ASSERT_TRUE(reopened) << reopened.error().message;
    EXPECT_EQ((*reopened)->head().number, w.blocks.size());
    auto after = block_hashes(**reopened);
    ASSERT_GE(after.size(), before.size());
    after.resize(before.size());
    EXPECT_EQ(after, before) << "a block committed before the disk filled changed";
}
