// cli::Node, the object `barrel-node run` is (src/cli/node.hpp), in-process: it opens, serves and
// stops without its local sealer (the part issue 31's ABCI node leaves out), sealing nothing; and
// at the next start the local sealer seals what the journal re-admitted at once, with block time 0
// and no admission to wake it.

#include <barrel/pool/pool.hpp>

#include "cli/node.hpp"
#include "cli_run.hpp"
#include "pool_fixtures.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>

namespace barrel::cli {
namespace {

using pool::testing::signed_tx;

/// A datadir whose genesis funds keys 1 to 3 of the pool tests.
struct Datadir {
    test::ScratchDir tmp;
    std::string dir = tmp / "data";
    Datadir() {
        const std::string genesis = tmp / "genesis.json";
        test::write_text(genesis, pool::testing::funded_genesis(3));
        EXPECT_EQ(test::run_cli({"init", "--datadir", dir, "--genesis", genesis}).status, 0);
    }
};

/// Runs `body` on a thread of its own: Node::open blocks SIGINT and SIGTERM in its caller's
/// thread, which must not be the test runner's.
template <class F>
void on_own_thread(F body) {
    std::thread t{body};
    t.join();
}

NodeConfig config_of(const Datadir& d, bool local_sealer) {
    NodeConfig c;
    c.datadir = d.dir;
    c.http.port = 0;
    c.http.threads = c.http.workers = 1;
    c.local_sealer = local_sealer;
    return c;
}

TEST(cli_node_object, without_its_sealer_it_seals_nothing_and_with_it_the_journal_at_once) {
    Datadir d;
    std::ostringstream first_log;
    on_own_thread([&] {
        auto node = Node::open(config_of(d, false), first_log);
        ASSERT_TRUE(node) << node.error();
        ASSERT_TRUE((*node)->start());
        for (uint8_t k = 1; k <= 3; ++k) {
            const auto admitted = (*node)->pool().admit_one(signed_tx({.key = k}));
            EXPECT_TRUE(admitted) << admitted.error().message;
        }
        EXPECT_EQ((*node)->pool().status().pending, 3u);
        ASSERT_TRUE((*node)->stop());
    });
    EXPECT_NE(first_log.str().find("stopped at block 0; 3 pool transactions journaled"),
              std::string::npos)
        << first_log.str();
    // The journal as a SIGKILL after block 1 would leave it: appended to, not rewritten.
    const std::string journal = d.dir + "/transactions.rlp";
    const std::string journal_of_block_0 = test::read_text(journal);
    ASSERT_FALSE(journal_of_block_0.empty());

    std::ostringstream second_log;
    on_own_thread([&] {
        auto node = Node::open(config_of(d, true), second_log);
        ASSERT_TRUE(node) << node.error();
        ASSERT_TRUE((*node)->start());
        // Done when the pool is empty: wait on it, not on time (the bound only keeps a failure
        // from hanging the suite).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{60};
        while ((*node)->pool().status().pending > 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds{5});
        ASSERT_TRUE((*node)->stop());
    });
    EXPECT_NE(second_log.str().find("3 of 3 journaled transactions re-admitted"), std::string::npos)
        << second_log.str();
    EXPECT_NE(second_log.str().find("sealed block 1: 3 txs"), std::string::npos)
        << second_log.str();
    EXPECT_NE(second_log.str().find("stopped at block 1; 0 pool transactions journaled"),
              std::string::npos)
        << second_log.str();

    // Block 1 took the journal's three: each is known by its hash at the next start, not
    // recovered again to be refused by its nonce.
    test::write_text(journal, journal_of_block_0);
    std::ostringstream third_log;
    on_own_thread([&] {
        auto node = Node::open(config_of(d, true), third_log);
        ASSERT_TRUE(node) << node.error();
        EXPECT_EQ((*node)->pool().status().pending, 0u);
        ASSERT_TRUE((*node)->start());
        ASSERT_TRUE((*node)->stop());
    });
    EXPECT_NE(
        third_log.str().find("0 of 3 journaled transactions re-admitted (3 already in blocks)"),
        std::string::npos)
        << third_log.str();
}

}  // namespace
}  // namespace barrel::cli
