// `barrel-node run`: every way its options can be wrong, and a port it cannot listen on, is exit
// 2 with one line, before anything is served, with the datadir and the pool's journal exactly as
// they were.

#include <barrel/chain/genesis.hpp>

#include "cli_run.hpp"
#include "store_dump.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

using namespace barrel;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::generate_or_throw;
using barrel::test::read_text;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::write_text;

namespace {

/// An initialised datadir and a journal beside its stores (what a stopped node leaves).
struct Datadir {
    ScratchDir tmp;
    std::string dir = tmp / "data";
    std::string journal = dir + "/transactions.rlp";
    Datadir() {
        const auto w = generate_or_throw({.blocks = 1, .txs = 2, .accounts = 4});
        const std::string genesis = tmp / "genesis.json";
        write_text(genesis, chain::to_json_text(w.genesis));
        EXPECT_EQ(run_cli({"init", "--datadir", dir, "--genesis", genesis}).status, 0);
        // One RLP string: whatever it holds, a failed start must leave it for the next one.
        write_text(journal,
                   "\x83"
                   "abc");
    }
};

/// A listening socket on 127.0.0.1, so that a node asked for its port cannot have it.
struct TakenPort {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    uint16_t port = 0;
    TakenPort() {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        EXPECT_EQ(::listen(fd, 1), 0);
        EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
        port = ntohs(a.sin_port);
    }
    ~TakenPort() { ::close(fd); }
    TakenPort(const TakenPort&) = delete;
    TakenPort& operator=(const TakenPort&) = delete;
};

}  // namespace

TEST(cli_serve, bad_options_are_exit_2_with_one_line_and_change_nothing) {
    Datadir d;
    const auto before = dump_datadir(d.dir);
    struct Case {
        std::vector<std::string> args;
        std::string error;
    };
    const std::vector<Case> cases = {
        {{}, "error: run: missing option --datadir DIR"},
        {{"--http", "8545"}, "error: --http: expected HOST:PORT, got '8545'"},
        {{"--http", ":8545"}, "error: --http: expected HOST:PORT, got ':8545'"},
        {{"--http", "::1:8545"},
         "error: --http: an IPv6 address goes in brackets ([::1]:PORT), got '::1:8545'"},
        {{"--http", "127.0.0.1:65536"},
         "error: --http: the port must be a number from 0 to 65535, got '127.0.0.1:65536'"},
        {{"--http", "127.0.0.1:x"},
         "error: --http: the port must be a number from 0 to 65535, got '127.0.0.1:x'"},
        {{"--block-time", "3153600000001"},
         "error: --block-time: must be at most 3153600000000, got 3153600000001"},
        {{"--rpc-idle-timeout", "18446744073709551615"},
         "error: --rpc-idle-timeout: must be at most 3153600000000, got 18446744073709551615"},
        {{"--rpc-max-batch", "1x"},
         "error: --rpc-max-batch: expected an unsigned 64-bit integer, got '1x'"},
        {{"--block-time", "1s"},
         "error: --block-time: expected an unsigned 64-bit integer, got '1s'"},
        {{"--max-block-txs", "0"}, "error: --max-block-txs: must be at least 1"},
        {{"--txpool-max-pending", "0"}, "error: --txpool-max-pending: must be at least 1"},
        {{"--txpool-max-queued", "0"}, "error: --txpool-max-queued: must be at least 1"},
        {{"--txpool-max-per-sender", "0"}, "error: --txpool-max-per-sender: must be at least 1"},
        {{"--txpool-max-queued-per-sender", "0"},
         "error: --txpool-max-queued-per-sender: must be at least 1"},
        {{"--txpool-lifetime", "0"}, "error: --txpool-lifetime: must be at least 1"},
        {{"--txpool-lifetime", "3153600001"},
         "error: --txpool-lifetime: must be at most 3153600000, got 3153600001"},
        {{"--txpool-lifetime", "3h"},
         "error: --txpool-lifetime: expected an unsigned 64-bit integer, got '3h'"},
        {{"--rpc-max-body", "0"}, "error: --rpc-max-body: must be at least 1"},
        {{"--rpc-max-batch", "0"}, "error: --rpc-max-batch: must be at least 1"},
        {{"--rpc-max-connections", "0"}, "error: --rpc-max-connections: must be at least 1"},
        {{"--rpc-read-timeout", "0"}, "error: --rpc-read-timeout: must be at least 1"},
        {{"--rpc-idle-timeout", "0"}, "error: --rpc-idle-timeout: must be at least 1"},
        {{"--rpc-header-timeout", "0"}, "error: --rpc-header-timeout: must be at least 1"},
        {{"--rpc-max-response", "0"}, "error: --rpc-max-response: must be at least 1"},
        {{"--rpc-max-unsent", "0"}, "error: --rpc-max-unsent: must be at least 1"},
        {{"--rpc-threads", "0"}, "error: --rpc-threads: must be at least 1"},
        {{"--rpc-threads", "1025"}, "error: --rpc-threads: must be at most 1024, got 1025"},
        {{"--rpc-threads", "4294967297"},
         "error: --rpc-threads: must be at most 1024, got 4294967297"},
        {{"--http-cors-origins", "localhost:5173"},
         "error: --http-cors-origins: expected an origin (scheme://host[:port], as a browser "
         "sends it: http://localhost:5173) or *, got 'localhost:5173'"},
        {{"--http-cors-origins", "http://a.example/app"},
         "error: --http-cors-origins: an origin has no path (a browser sends "
         "scheme://host[:port]), got 'http://a.example/app'"},
        {{"--http-cors-origins", "http://*.a.example:*"},
         "error: --http-cors-origins: an origin may hold one * at most, got "
         "'http://*.a.example:*'"},
        {{"--http-cors-origins", "http://a.example,,http://b.example"},
         "error: --http-cors-origins: an empty origin in the list"},
        {{"--http-vhosts", "localhost:8545"},
         "error: --http-vhosts: expected a host name (no scheme, no port: localhost, "
         "node.example) or *, got 'localhost:8545'"},
        {{"--http-vhosts", "http://Node.example"},
         "error: --http-vhosts: expected a host name (no scheme, no port: localhost, "
         "node.example) or *, got 'http://Node.example'"},
        {{"--http-vhosts", ""}, "error: --http-vhosts: an empty host in the list"},
        {{"--coinbase", "0x12"},
         "error: --coinbase: expected an address (20 bytes, 40 hex digits), got '0x12'"},
        {{"--coinbase", "0xzz"}, "error: --coinbase: invalid hex digit 'z' at position 3"},
        {{"--abci", "127.0.0.1:26658"},
         "error: --abci: expected tcp://HOST:PORT or unix://PATH, got '127.0.0.1:26658'"},
        {{"--abci", "unix://"},
         "error: --abci: expected tcp://HOST:PORT or unix://PATH, got 'unix://'"},
        {{"--cometbft-rpc", "127.0.0.1:26657"},
         "error: --cometbft-rpc: expected http://HOST:PORT, got '127.0.0.1:26657'"},
        {{"--cometbft-rpc", "http://127.0.0.1:26657"},
         "error: --cometbft-rpc needs --abci (a node on its own has no CometBFT)"},
        {{"--cometbft-batch", "0"}, "error: --cometbft-batch: must be at least 1"},
        {{"--retain-blocks", "-1"},
         "error: --retain-blocks: expected an unsigned 64-bit integer, got '-1'"},
        {{"--retain-blocks", "100k"},
         "error: --retain-blocks: expected an unsigned 64-bit integer, got '100k'"},
        {{"--retain-blocks", "9223372036854775808"},
         "error: --retain-blocks: must be at most 9223372036854775807, got 9223372036854775808"},
        {{"--snapshot-interval", "-1"},
         "error: --snapshot-interval: expected an unsigned 64-bit integer, got '-1'"},
        {{"--snapshot-interval", "9223372036854775808"},
         "error: --snapshot-interval: must be at most 9223372036854775807, got "
         "9223372036854775808"},
        {{"--snapshot-interval", "100"},
         "error: --snapshot-interval needs --abci (snapshots are served to CometBFT's state "
         "sync)"},
        {{"--snapshot-keep", "0"}, "error: --snapshot-keep: must be at least 1"},
        {{"--snapshot-keep", "1001"}, "error: --snapshot-keep: must be at most 1000, got 1001"},
        {{"--abci", "tcp://127.0.0.1:26658", "--coinbase", "0x" + std::string(40, '1')},
         "error: --coinbase cannot be used with --abci: every node of a network builds the same "
         "blocks (the fee recipient is the genesis coinbase)"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args{"run"};
        if (!c.args.empty()) args.insert(args.end(), {"--datadir", d.dir});
        args.insert(args.end(), c.args.begin(), c.args.end());
        SCOPED_TRACE(testing::PrintToString(args));
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, c.error + "\n");
        EXPECT_EQ(r.out, "");
    }
    EXPECT_EQ(dump_diff(before, dump_datadir(d.dir)), "");
    EXPECT_EQ(read_text(d.journal),
              "\x83"
              "abc");
}

TEST(cli_serve, a_port_in_use_is_exit_2_and_keeps_the_journal) {
    Datadir d;
    const auto before = dump_datadir(d.dir);
    const TakenPort taken;
    const std::string http = "127.0.0.1:" + std::to_string(taken.port);
    const auto r = run_cli({"run", "--datadir", d.dir, "--http", http});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "error: cannot listen on " + http + ": Address already in use\n");
    EXPECT_EQ(dump_diff(before, dump_datadir(d.dir)), "");
    EXPECT_EQ(read_text(d.journal),
              "\x83"
              "abc");
}

TEST(cli_serve, a_missing_datadir_is_exit_2_naming_it) {
    ScratchDir tmp;
    const std::string dir = tmp / "none";
    const auto r = run_cli({"run", "--datadir", dir});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "error: " + dir + " is not a barrel datadir (run init first)\n");
}
