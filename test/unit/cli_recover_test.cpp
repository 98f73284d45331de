// A damaged or unwritable datadir through the command line (issue 20, findings 5 and 6): every
// command refuses a datadir that recovered to an older block than was committed (exit 2, the
// store's one line, nothing changed) until `recover` accepts it and says what was lost; a
// corrupt account under an import is exit 2 naming the corrupt state, with nothing written; and
// a read-only datadir is exit 2 with the system's reason.

#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/store/store.hpp>

#include "cli_run.hpp"
#include "store/testing.hpp"
#include "store_commit.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

using namespace barrel;
using barrel::test::Dump;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::generate_or_throw;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::write_file;
using barrel::test::write_text;

namespace {

namespace fs = std::filesystem;

const gen::Workload& recover_workload() {
    static const gen::Workload w =
        generate_or_throw({.blocks = 5, .txs = 20, .accounts = 8, .mix = gen::Mix::mixed});
    return w;
}

/// The genesis and the chain file of blocks [0, count) in `tmp`.
struct Files {
    std::string genesis, chain;
};
Files write_files(const ScratchDir& tmp, size_t count = 5) {
    const auto& w = recover_workload();
    Files f{tmp / "genesis.json", tmp / ("chain" + std::to_string(count) + ".rlp")};
    write_text(f.genesis, chain::to_json_text(w.genesis));
    Bytes chain;
    for (size_t k = 0; k < count; ++k)
        chain.insert(chain.end(), w.blocks[k].begin(), w.blocks[k].end());
    write_file(f.chain, chain);
    return f;
}

/// A datadir with blocks 1-2 in table files and 3-5 only in the write-ahead log, and a byte of
/// the log flipped: RocksDB recovers it to block 3.
std::string damaged_datadir(const ScratchDir& tmp, const Files& f) {
    const std::string live = tmp / "live";
    const std::string dir = tmp / "data";
    EXPECT_EQ(run_cli({"init", "--datadir", live, "--genesis", f.genesis}).status, 0);
    const ScratchDir part;
    const Files two = write_files(part, 2);
    EXPECT_EQ(run_cli({"import", "--datadir", live, two.chain}).status, 0);
    {
        auto s = store::Store::open(live);
        EXPECT_TRUE(s);
        EXPECT_FALSE(test::commit_blocks(**s, recover_workload(), 5));
        fs::copy(live, dir);  // as a crash leaves it: blocks 3-5 only in the log
    }
    fs::path wal;
    for (const auto& e : fs::directory_iterator{dir})
        if (e.path().extension() == ".log" && (wal.empty() || e.path() > wal)) wal = e.path();
    std::fstream io{wal, std::ios::in | std::ios::out | std::ios::binary};
    const auto at = static_cast<std::streamoff>(fs::file_size(wal) / 3);
    io.seekg(at);
    char c = 0;
    io.get(c);
    io.seekp(at);
    io.put(static_cast<char>(c ^ 0x40));
    return dir;
}

}  // namespace

TEST(cli_recover, a_rolled_back_datadir_is_refused_by_every_command_until_recover_accepts_it) {
    ScratchDir tmp;
    const Files f = write_files(tmp);
    const std::string dir = damaged_datadir(tmp, f);
    const Dump before = dump_datadir(dir);
    const std::string refused =
        "error: datadir " + dir +
        " is damaged: it recovered to block 3 but block 5 had been committed (write-ahead log "
        "damaged, RocksDB point-in-time recovery); nothing was changed; `barrel-node recover "
        "--datadir " +
        dir + "` accepts block 3 as the head\n";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"get", "block", "1", "--datadir", dir},
          {"import", "--datadir", dir, f.chain},
          {"export", "--datadir", dir, "--out", tmp / "out.rlp"}}) {
        SCOPED_TRACE(args[0]);
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, refused);
        EXPECT_EQ(r.out, "");
    }
    EXPECT_EQ(dump_diff(before, dump_datadir(dir)), "");

    const auto r = run_cli({"recover", "--datadir", dir});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out,
              "recovered " + dir + " to block 3 (blocks 4..5 were lost: import them again)\n");
    EXPECT_EQ(run_cli({"get", "block", "3", "--datadir", dir}).status, 0);
    const auto imported = run_cli({"import", "--datadir", dir, f.chain});
    EXPECT_EQ(imported.status, 0) << imported.err;
    EXPECT_NE(imported.out.find("imported 2 blocks"), std::string::npos) << imported.out;

    const auto again = run_cli({"recover", "--datadir", dir});
    EXPECT_EQ(again.status, 0);
    EXPECT_EQ(again.out, dir + " needs no recovery: its head is block 5\n");
}

TEST(cli_recover, recover_of_what_is_not_a_datadir_is_exit_2) {
    ScratchDir tmp;
    const auto r = run_cli({"recover", "--datadir", tmp / "none"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "error: " + tmp / "none" + " is not a barrel datadir (run init first)\n");
}

// Finding 6: the execute stage's typed state reads make a corrupt account the datadir's fault.
TEST(cli_recover, an_import_over_a_corrupt_account_is_exit_2_and_writes_nothing) {
    ScratchDir tmp;
    const Files f = write_files(tmp);
    const std::string dir = tmp / "data";
    ASSERT_EQ(run_cli({"init", "--datadir", dir, "--genesis", f.genesis}).status, 0);
    const Address sender = recover_workload().senders[0].front();
    test::write_raw(dir, "accounts",
                    std::string{reinterpret_cast<const char*>(sender.data()), Address::size()},
                    "{\"balance\":");
    const Dump before = dump_datadir(dir);
    const auto r = run_cli({"import", "--datadir", dir, f.chain});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "error: block 1: execute: parent state: state_corrupt\n");
    EXPECT_EQ(dump_diff(before, dump_datadir(dir)), "");
    const auto get = run_cli({"get", "account", to_hex(sender), "--datadir", dir});
    EXPECT_EQ(get.status, 2);
    EXPECT_EQ(get.err, "error: stored document does not parse\n");
}

// As root, permissions are not checked: a read-only bind mount makes the datadir unwritable.
TEST(cli_recover, an_unwritable_datadir_is_exit_2_with_the_reason_and_queries_still_work) {
    ScratchDir tmp;
    const Files f = write_files(tmp);
    const std::string dir = tmp / "data";
    ASSERT_EQ(run_cli({"init", "--datadir", dir, "--genesis", f.genesis}).status, 0);
    if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0)
        GTEST_SKIP() << "cannot bind-mount here (" << std::strerror(errno) << ")";
    struct Unmount {
        const std::string& dir;
        ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
    } unmount{dir};
    ASSERT_EQ(::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr), 0)
        << std::strerror(errno);
    const auto r = run_cli({"import", "--datadir", dir, f.chain});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "error: cannot write " + dir + "/COMMITTED: Read-only file system\n");
    const auto get = run_cli({"get", "block", "0", "--datadir", dir});
    EXPECT_EQ(get.status, 0) << get.err;
}

// Finding 1 through the command line: a full disk is exit 2 with the reason, never an abort.
TEST(cli_recover, a_full_disk_is_exit_2_with_the_reason_and_the_import_goes_on_with_space) {
    ScratchDir tmp;
    const Files f = write_files(tmp);
    const std::string dir = tmp / "data";
    store::testing::FullDisk disk{0};
    const auto init = run_cli({"init", "--datadir", dir, "--genesis", f.genesis});
    EXPECT_EQ(init.status, 2);
    const std::string sibling = tmp / (".data.init-" + std::to_string(::getpid()));
    EXPECT_EQ(init.err, "error: init " + dir +
                            ": IO error: No space left on device: While appending to file: " +
                            sibling + "/000000.dbtmp: No space left on device\n");
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_FALSE(fs::exists(sibling));

    disk.set_budget(std::numeric_limits<uint64_t>::max());
    ASSERT_EQ(run_cli({"init", "--datadir", dir, "--genesis", f.genesis}).status, 0);
    disk.set_budget(disk.written() + 20'000);
    const auto full = run_cli({"import", "--datadir", dir, f.chain});
    EXPECT_EQ(full.status, 2);
    EXPECT_TRUE(full.err.starts_with("error: block ")) << full.err;
    EXPECT_TRUE(full.err.ends_with(": No space left on device\n")) << full.err;
    // The stage is named once, then what failed in it.
    EXPECT_NE(full.err.find(": commit: writing the block: IO error: "), std::string::npos)
        << full.err;
    EXPECT_NE(full.err.find("IO error: No space left on device: While appending to file: " + dir),
              std::string::npos)
        << full.err;

    disk.set_budget(std::numeric_limits<uint64_t>::max());
    const auto resumed = run_cli({"import", "--datadir", dir, f.chain});
    EXPECT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_NE(resumed.out.find("head: block 5 "), std::string::npos) << resumed.out;
}

// Finding 8 through the command line: an init stopped after writing everything (where a
// SIGKILL would land) leaves no datadir that the next init refuses. The seam's error is a
// store `internal` error, which the command line reports as barrel's own fault (exit 1).
TEST(cli_recover, an_interrupted_init_leaves_nothing_the_next_init_refuses) {
    ScratchDir tmp;
    const Files f = write_files(tmp);
    const std::string dir = tmp / "data";
    store::testing::stop_init_before_rename(true);
    const auto stopped = run_cli({"init", "--datadir", dir, "--genesis", f.genesis});
    store::testing::stop_init_before_rename(false);
    EXPECT_EQ(stopped.status, 1);
    EXPECT_EQ(stopped.err, "error: internal: init stopped by a test\n");
    const auto get = run_cli({"get", "block", "0", "--datadir", dir});
    EXPECT_EQ(get.status, 2);
    EXPECT_EQ(get.err, "error: " + dir + " is not a barrel datadir (run init first)\n");
    const auto init = run_cli({"init", "--datadir", dir, "--genesis", f.genesis});
    EXPECT_EQ(init.status, 0) << init.err;
    EXPECT_FALSE(fs::exists(tmp / (".data.init-" + std::to_string(::getpid()))));
}
