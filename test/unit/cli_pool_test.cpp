// `barrel-node run`'s pool options and journal against a real node in a child process: each
// --txpool-* bound reaches the pool, what the pool admits is in the journal before any stop (a
// SIGKILL loses none of it), a stop journals only what is worth keeping (an expired queued
// transaction is not), and a FIFO at the journal's path is refused before anything is served.

#include <barrel/core/hex.hpp>
#include <barrel/pool/pool.hpp>

#include "child_process.hpp"
#include "cli_run.hpp"
#include "http_client.hpp"
#include "pool_fixtures.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

namespace barrel::pool {
namespace {

using namespace barrel::pool::testing;
using barrel::test::read_text;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::spawn_cli;
using barrel::test::wait_child;
using barrel::test::write_text;

/// A datadir whose genesis funds keys 1 to 3 of the pool tests.
struct Datadir {
    ScratchDir tmp;
    std::string dir = tmp / "data";
    std::string journal = dir + "/transactions.rlp";
    Datadir() {
        const std::string genesis = tmp / "genesis.json";
        write_text(genesis, funded_genesis(3));
        EXPECT_EQ(run_cli({"init", "--datadir", dir, "--genesis", genesis}).status, 0);
    }
};

/// A node in a child process, its stderr in a file; stopped (SIGKILL) if the test ends first.
class Node {
public:
    /// `name`: its log's, one per node (a new node must not read an old node's start line).
    Node(const Datadir& d, const std::string& name, std::vector<std::string> options)
        : m_log{d.tmp / (name + ".log")} {
        std::vector<std::string> args{
            "run",         "--datadir",    d.dir,   "--http",
            "127.0.0.1:0", "--block-time", "600000"};  // no block during the test
        args.insert(args.end(), options.begin(), options.end());
        m_pid = spawn_cli(args, m_log);
        // Waits for its start line (a deadline for a hang, not a timing assertion).
        const std::regex served{R"(JSON-RPC on http://127\.0\.0\.1:(\d+))"};
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{60};
        while (std::chrono::steady_clock::now() < deadline) {
            std::smatch m;
            const std::string text = log();
            if (std::regex_search(text, m, served)) {
                m_port = static_cast<uint16_t>(std::stoi(m[1]));
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds{20});
        }
        ADD_FAILURE() << "the node did not start: " << log();
    }
    ~Node() {
        if (m_pid > 0) stop(SIGKILL);
    }
    std::string log() const { return read_text(m_log); }
    int stop(int signal) {
        ::kill(m_pid, signal);
        const int status = wait_child(m_pid);
        m_pid = -1;
        return status;
    }
    /// eth_sendRawTransaction: the hash, or the error's message.
    std::string send(const Spec& spec) {
        test::Client client{m_port};
        const auto body = nlohmann::json{{"jsonrpc", "2.0"},
                                         {"id", 1},
                                         {"method", "eth_sendRawTransaction"},
                                         {"params", {to_hex(signed_tx(spec))}}};
        const auto answer = nlohmann::json::parse(client.post(body.dump()).body());
        return answer.contains("result") ? answer["result"].get<std::string>()
                                         : answer["error"]["message"].get<std::string>();
    }

private:
    std::string m_log;
    pid_t m_pid{-1};
    uint16_t m_port{0};
};

std::vector<Bytes> journaled(const Datadir& d) {
    return read_journal(d.journal, Config{}).value().transactions;
}

TEST(cli_pool, txpool_options_reach_the_node_and_what_it_admits_survives_a_sigkill) {
    Datadir d;
    const Spec queued{.key = 1, .nonce = 5, .fee_cap = 10, .tip = 1};
    const Spec pending{.key = 3, .nonce = 0, .fee_cap = 10, .tip = 1};
    {
        Node node{d, "first", {"--txpool-max-queued", "1"}};
        EXPECT_EQ(node.send(queued), to_hex(hash_of(signed_tx(queued))));
        // One queued slot: a second at the same price would itself be the cheapest.
        EXPECT_EQ(node.send({.key = 2, .nonce = 5, .fee_cap = 10, .tip = 1}), "txpool is full");
        EXPECT_EQ(node.send(pending), to_hex(hash_of(signed_tx(pending))));
        // Journaled as admitted: a SIGKILL loses neither (before, only a stop wrote them).
        EXPECT_EQ(node.stop(SIGKILL), -SIGKILL);
    }
    EXPECT_EQ(journaled(d), (std::vector<Bytes>{signed_tx(queued), signed_tx(pending)}));
    {
        Node node{d, "second", {"--txpool-max-pending", "1", "--txpool-lifetime", "1"}};
        EXPECT_NE(node.log().find("2 of 2 journaled transactions re-admitted"), std::string::npos)
            << node.log();
        // One pending slot, held at the same price.
        EXPECT_EQ(node.send({.key = 2, .nonce = 0, .fee_cap = 10, .tip = 1}), "txpool is full");
        // Past the one-second lifetime, the queued transaction is not worth keeping.
        std::this_thread::sleep_for(std::chrono::milliseconds{1500});
        EXPECT_EQ(node.stop(SIGTERM), 0);
        EXPECT_NE(node.log().find("1 pool transactions journaled"), std::string::npos)
            << node.log();
    }
    EXPECT_EQ(journaled(d), std::vector<Bytes>{signed_tx(pending)});
}

TEST(cli_pool, a_fifo_at_the_journals_path_is_exit_2_before_anything_is_served) {
    Datadir d;
    ASSERT_EQ(::mkfifo(d.journal.c_str(), 0644), 0);
    // Once the node waited in open() for a writer, deaf to SIGTERM.
    const auto r = run_cli({"run", "--datadir", d.dir, "--http", "127.0.0.1:0"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "error: cannot read '" + d.journal + "': not a regular file\n");
}

}  // namespace
}  // namespace barrel::pool
