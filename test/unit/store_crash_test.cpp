// Crash safety of the commit, at chosen points rather than after a random sleep: a child process
// imports a generated chain (12 blocks of 40 mixed transactions) into a datadir and SIGKILLs
// itself at the point BARREL_TEST_CRASH_AT names (src/store/crash_points.hpp), again and again on
// the same datadir, each child resuming the import where the last one was killed. After every
// kill the datadir opens, its head is a block boundary (the header at head.number is there and
// carries head's hash and state root, and nothing lies beyond it), and the head is the block the
// kill point says it must be:
//
//   - at the commit's own points: block N's WriteBatch built but not written → head N-1; written
//     but COMMITTED not yet updated → head N (the lagging record is accepted); COMMITTED updated
//     → head N;
//   - after the K-th write to the write-ahead log → head h+K, whatever the store does between its
//     writes: each block is one write, so a block's records split over two writes (its head record
//     outside the block's batch, say) leaves a datadir whose head is not its last block.
//
// Finally the import is finished, and the datadir is byte for byte (every column family) the one
// an uninterrupted import gives. The child is this test binary in child mode (child_process.hpp),
// running barrel::cli::run.

#include <barrel/chain/genesis.hpp>
#include <barrel/cli/cli.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/store/store.hpp>

#include "child_process.hpp"
#include "cli_run.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <stdlib.h>

#include <optional>
#include <string>
#include <vector>

using namespace barrel;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::generate_or_throw;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::write_file;
using barrel::test::write_text;

namespace {

constexpr uint64_t kBlocks = 12;

std::unique_ptr<store::Store> open_store(const std::string& datadir) {
    auto s = store::Store::open(datadir);
    if (!s) ADD_FAILURE() << s.error().message;
    return s ? std::move(s).value() : nullptr;
}

/// The datadir opens and its head is a whole block; returns the head's number.
std::optional<uint64_t> block_boundary(const std::string& datadir) {
    const auto s = open_store(datadir);
    if (!s) return std::nullopt;
    const store::Head head = s->head();
    EXPECT_LE(head.number, kBlocks);
    const auto header = s->header(head.number);
    if (!header || !*header) {
        ADD_FAILURE() << "no header at the head, block " << head.number;
        return std::nullopt;
    }
    EXPECT_EQ((**header)["hash"], to_hex(head.hash));
    EXPECT_EQ((**header)["state_root"], to_hex(head.state_root));
    EXPECT_EQ(**s->block_number(head.hash), head.number);
    if (head.number > 0) {
        EXPECT_TRUE(*s->raw_block(head.number));
    }
    EXPECT_FALSE(*s->header(head.number + 1)) << "a header beyond the head " << head.number;
    EXPECT_FALSE(*s->raw_block(head.number + 1)) << "a block beyond the head " << head.number;
    return head.number;
}

/// The chain, its genesis and the datadir an uninterrupted import leaves: made once.
class store_crash : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        const gen::Options o{.seed = 11,
                             .blocks = kBlocks,
                             .txs = 40,
                             .accounts = 200,
                             .hot_accounts = 4,
                             .hot_ratio = 0.1,
                             .mix = gen::Mix::mixed};
        const auto w = generate_or_throw(o);
        tmp = new ScratchDir;
        write_text(genesis(), chain::to_json_text(w.genesis));
        Bytes chain_bytes;
        for (const auto& b : w.blocks) chain_bytes.insert(chain_bytes.end(), b.begin(), b.end());
        write_file(chain(), chain_bytes);
        ASSERT_EQ(run_cli({"init", "--datadir", reference(), "--genesis", genesis()}).status, 0);
        ASSERT_EQ(run_cli({"import", "--datadir", reference(), chain()}).status, 0);
    }
    static void TearDownTestSuite() {
        delete tmp;
        tmp = nullptr;
    }
    static std::string genesis() { return *tmp / "genesis.json"; }
    static std::string chain() { return *tmp / "chain.rlp"; }
    static std::string reference() { return *tmp / "reference"; }

    std::string fresh_datadir(const std::string& name) {
        const std::string datadir = *tmp / name;
        EXPECT_EQ(run_cli({"init", "--datadir", datadir, "--genesis", genesis()}).status, 0);
        return datadir;
    }

    /// Imports the chain into `datadir` in a child that kills itself at `crash_at`; the child's
    /// exit status (-SIGKILL when the point was reached).
    static int import_until(const std::string& datadir, const std::string& crash_at) {
        // Set for the child alone: the parent opens no store while it is set.
        ::setenv("BARREL_TEST_CRASH_AT", crash_at.c_str(), 1);
        const pid_t child = test::spawn_cli({"import", "--datadir", datadir, chain()});
        ::unsetenv("BARREL_TEST_CRASH_AT");
        if (child <= 0) return -1000;
        return test::wait_child(child);
    }

    /// The rest of the import, uninterrupted, gives the reference datadir byte for byte.
    static void finish_and_compare(const std::string& datadir) {
        const auto rest = run_cli({"import", "--datadir", datadir, chain()});
        ASSERT_EQ(rest.status, 0) << rest.err;
        {
            const auto a = open_store(datadir);
            const auto b = open_store(reference());
            ASSERT_TRUE(a && b);
            EXPECT_EQ(a->head().number, kBlocks);
            EXPECT_EQ(a->head().hash, b->head().hash);
            EXPECT_EQ(a->head().state_root, b->head().state_root);
        }
        EXPECT_EQ(dump_diff(dump_datadir(reference()), dump_datadir(datadir)), "");
    }

    static inline ScratchDir* tmp = nullptr;
};

}  // namespace

TEST_F(store_crash, kills_at_each_commit_point_land_where_chosen) {
    const std::string datadir = fresh_datadir("commit-points");
    struct Kill {
        std::string at;
        uint64_t head;  ///< the head the kill must leave
    };
    std::vector<Kill> kills;
    // Each child resumes from the last head: block n killed before its write, then at the same
    // block after it, then the next block after its COMMITTED update.
    for (uint64_t n = 1; n < kBlocks; n += 3) {
        kills.push_back({"built:" + std::to_string(n), n - 1});
        kills.push_back({"written:" + std::to_string(n), n});
        kills.push_back({"marked:" + std::to_string(n + 1), n + 1});
    }
    kills.push_back({"built:" + std::to_string(kBlocks), kBlocks - 1});
    kills.push_back({"written:" + std::to_string(kBlocks), kBlocks});
    for (const auto& kill : kills) {
        SCOPED_TRACE("BARREL_TEST_CRASH_AT=" + kill.at);
        ASSERT_EQ(import_until(datadir, kill.at), -SIGKILL) << "the crash point was not reached";
        const auto head = block_boundary(datadir);
        ASSERT_TRUE(head);
        ASSERT_EQ(*head, kill.head);
    }
    finish_and_compare(datadir);
}

TEST_F(store_crash, a_kill_after_any_log_write_leaves_whole_blocks) {
    const std::string datadir = fresh_datadir("log-writes");
    uint64_t head = 0;
    // 1 + 2 + 3 + 1 + 2 + 3 = 12 blocks: the kill comes after the first, second or third write of
    // a child, and each write is one whole block, its head record included.
    for (uint64_t k = 1; head < kBlocks; k = k % 3 + 1) {
        const std::string at = "wal:" + std::to_string(k);
        SCOPED_TRACE("from head " + std::to_string(head) + ", BARREL_TEST_CRASH_AT=" + at);
        ASSERT_EQ(import_until(datadir, at), -SIGKILL) << "the crash point was not reached";
        const auto now = block_boundary(datadir);
        ASSERT_TRUE(now);
        ASSERT_EQ(*now, head + k) << "each write to the log is one whole block";
        head = *now;
    }
    // Nothing left to import: no log write, no kill.
    EXPECT_EQ(import_until(datadir, "wal:1"), 0);
    finish_and_compare(datadir);
}

TEST_F(store_crash, a_crash_point_that_does_not_parse_stops_the_child) {
    const std::string datadir = fresh_datadir("bad-point");
    EXPECT_EQ(import_until(datadir, "written"), -SIGABRT);
    EXPECT_EQ(import_until(datadir, "sealed:3"), -SIGABRT);
    EXPECT_EQ(import_until(datadir, "wal:x"), -SIGABRT);
    const auto head = block_boundary(datadir);
    ASSERT_TRUE(head);
    EXPECT_EQ(*head, 0u);
}
