// Crash safety of the commit: a child process imports a generated chain (30 blocks of 200 mixed
// transactions) into a datadir and is SIGKILLed after a random delay, twenty times on the same
// datadir, each child resuming the import where the last one was killed. After every kill the
// datadir opens and its head is a block boundary (the header at head.number is there and carries
// head's hash and state root, and nothing lies beyond it). Finally the import is finished, and
// the datadir is byte for byte (every column family) the one an uninterrupted import gives.
//
// The child is this test binary in child mode (child_process.hpp), running barrel::cli::run.

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

#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <thread>

using namespace barrel;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::generate_or_throw;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::write_file;
using barrel::test::write_text;

namespace {

std::unique_ptr<store::Store> open_store(const std::string& datadir) {
    auto s = store::Store::open(datadir);
    if (!s) ADD_FAILURE() << s.error().message;
    return s ? std::move(s).value() : nullptr;
}

/// The datadir opens and its head is a whole block.
void check_block_boundary(const std::string& datadir, uint64_t blocks) {
    const auto s = open_store(datadir);
    ASSERT_TRUE(s);
    const store::Head head = s->head();
    ASSERT_LE(head.number, blocks);
    const auto header = s->header(head.number);
    ASSERT_TRUE(header && *header) << "no header at the head, block " << head.number;
    EXPECT_EQ((**header)["hash"], to_hex(head.hash));
    EXPECT_EQ((**header)["state_root"], to_hex(head.state_root));
    EXPECT_EQ(**s->block_number(head.hash), head.number);
    if (head.number > 0) {
        EXPECT_TRUE(*s->raw_block(head.number));
    }
    EXPECT_FALSE(*s->header(head.number + 1));
    EXPECT_FALSE(*s->raw_block(head.number + 1));
}

}  // namespace

TEST(store_crash, killed_imports_resume_to_the_uninterrupted_result) {
#if defined(__SANITIZE_THREAD__)
#define BARREL_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BARREL_UNDER_TSAN 1
#endif
#endif
#ifdef BARREL_UNDER_TSAN
    GTEST_SKIP() << "twenty imports under ThreadSanitizer take minutes";
#endif
    const gen::Options o{.seed = 11,
                         .blocks = 30,
                         .txs = 200,
                         .accounts = 400,
                         .hot_accounts = 4,
                         .hot_ratio = 0.1,
                         .mix = gen::Mix::mixed};
    const auto w = generate_or_throw(o);

    ScratchDir tmp;
    const std::string genesis = tmp / "genesis.json";
    const std::string chain_file = tmp / "chain.rlp";
    write_text(genesis, chain::to_json_text(w.genesis));
    Bytes chain_bytes;
    for (const auto& b : w.blocks) chain_bytes.insert(chain_bytes.end(), b.begin(), b.end());
    write_file(chain_file, chain_bytes);

    // The uninterrupted import first: its duration scales the kill delays, so that on a fast, a
    // slow or a busy machine alike the kills land all through the import.
    const std::string reference = tmp / "reference";
    ASSERT_EQ(run_cli({"init", "--datadir", reference, "--genesis", genesis}).status, 0);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(run_cli({"import", "--datadir", reference, chain_file}).status, 0);
    const auto import_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();

    const std::string datadir = tmp / "crashed";
    ASSERT_EQ(run_cli({"init", "--datadir", datadir, "--genesis", genesis}).status, 0);

    std::mt19937 rng{20240607};
    // Up to a quarter of the import: each child gets a slice of it (less its start-up), so the
    // twenty kills spread over the whole chain.
    std::uniform_int_distribution<int> delay_ms{
        2, std::clamp(static_cast<int>(import_ms) / 4, 40, 1000)};
    std::vector<uint64_t> heads;
    size_t finished = 0;
    for (int round = 0; round < 20; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        const pid_t child = test::spawn_cli({"import", "--datadir", datadir, chain_file});
        ASSERT_GT(child, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
        ::kill(child, SIGKILL);
        const int status = test::wait_child(child);
        if (status >= 0) {
            EXPECT_EQ(status, 0);  // the import ended before the kill: it must have succeeded
            ++finished;
        } else {
            EXPECT_EQ(status, -SIGKILL);
        }
        ASSERT_NO_FATAL_FAILURE(check_block_boundary(datadir, o.blocks));
        heads.push_back(open_store(datadir)->head().number);
        if (heads.size() >= 2) {
            EXPECT_GE(heads.back(), heads[heads.size() - 2]);  // never goes back
        }
    }
    std::string progress;
    for (auto h : heads) progress += std::to_string(h) + " ";
    std::cout << "[          ] import alone " << import_ms
              << " ms; heads after each kill: " << progress << "(" << finished << " finished)\n";

    const auto rest = run_cli({"import", "--datadir", datadir, chain_file});
    ASSERT_EQ(rest.status, 0) << rest.err;

    {
        const auto a = open_store(datadir);
        const auto b = open_store(reference);
        ASSERT_TRUE(a && b);
        EXPECT_EQ(a->head().number, o.blocks);
        EXPECT_EQ(a->head().hash, b->head().hash);
        EXPECT_EQ(a->head().state_root, b->head().state_root);
    }
    EXPECT_EQ(dump_diff(dump_datadir(reference), dump_datadir(datadir)), "");
}
