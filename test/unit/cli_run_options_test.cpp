// `barrel-node run`'s options reach the node: each test starts a real node (this test binary in
// child mode, child_process.hpp) with one option set and observes what it changes through the
// JSON-RPC endpoint, where the default would behave differently (cli_serve_test.cpp has the bad
// values). What is asserted is the bound each option sets, not the exact way the node keeps it
// (a refused request, a closed connection), so that it holds for any way of keeping the bound.
// Timing: a timeout is asserted only with a generous upper bound (10 s for 300 ms); a block
// time only as "not sealed within 3 s" under a 10-minute block time, where the default is 1 s.

#include <barrel/block/block.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>

#include "child_process.hpp"
#include "cli_run.hpp"
#include "http/client.hpp"
#include "http_client.hpp"
#include "test_files.hpp"
#include "testnet/testnet.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace barrel;
using namespace std::chrono_literals;
using barrel::test::Client;
using barrel::test::generate_or_throw;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::write_text;
using nlohmann::json;
namespace http = boost::beast::http;

namespace {

/// A datadir at genesis and the signed transactions of a generated block 1, valid on top of it
/// (raw encodings in block order, so each sender's nonces follow each other), with their senders.
struct Chain {
    ScratchDir tmp;
    std::string datadir = tmp / "data";
    std::vector<std::string> raw;  ///< 0x-hex
    std::vector<std::string> hashes;
    std::vector<Address> senders;

    Chain() {
        const auto w = generate_or_throw(
            {.seed = 5, .blocks = 1, .txs = 12, .accounts = 3, .hot_accounts = 1});
        const std::string genesis = tmp / "genesis.json";
        write_text(genesis, chain::to_json_text(w.genesis));
        EXPECT_EQ(run_cli({"init", "--datadir", datadir, "--genesis", genesis}).status, 0);
        auto b = block::decode_block(w.blocks.at(0));
        if (!b) throw std::runtime_error("generated block does not decode");
        for (size_t i = 0; i < b->size(); ++i) {
            raw.push_back(to_hex(b->tx_encodings[i]));
            hashes.push_back(to_hex(b->tx_hashes[i]));
        }
        senders = w.senders.at(0);
    }
};

/// `barrel-node run --datadir D --http 127.0.0.1:0 ARGS` in a child process, until destroyed
/// (SIGTERM, as an operator stops it).
class Node {
public:
    Node(const std::string& datadir, std::vector<std::string> args) {
        std::vector<std::string> all{"run", "--datadir", datadir, "--http", "127.0.0.1:0"};
        all.insert(all.end(), args.begin(), args.end());
        m_log = datadir + "/../node-" + std::to_string(++s_started) + ".log";
        m_pid = test::spawn_cli(all, m_log);
        // Its port, from the line it logs once it serves (generous: a sanitized build is slow).
        const std::regex serving{"JSON-RPC on http://127\\.0\\.0\\.1:([0-9]+)"};
        for (auto deadline = std::chrono::steady_clock::now() + 60s;
             std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(20ms)) {
            std::smatch m;
            const std::string text = log();
            if (std::regex_search(text, m, serving)) {
                m_port = static_cast<uint16_t>(std::stoi(m[1]));
                return;
            }
        }
        ADD_FAILURE() << "barrel-node run did not serve within 60 s:\n" << log();
    }
    ~Node() {
        ::kill(m_pid, SIGTERM);
        EXPECT_EQ(test::wait_child(m_pid), 0) << log();
    }
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    uint16_t port() const { return m_port; }
    const std::string& log_path() const { return m_log; }
    std::string log() const {
        std::ifstream in{m_log};
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

    /// The reply to one request body on a new connection.
    json post(const json& body) const {
        Client c{m_port};
        const auto res = c.post(body.dump());
        return json::parse(res.body());
    }
    json call(const std::string& method, json params) const {
        return post({{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}});
    }
    uint64_t block_number() const {
        return std::stoull(call("eth_blockNumber", json::array()).at("result").get<std::string>(),
                           nullptr, 16);
    }
    /// Waits (up to 30 s) until the head is at least `n`.
    bool wait_for_block(uint64_t n) const {
        for (auto deadline = std::chrono::steady_clock::now() + 30s;
             std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(20ms))
            if (block_number() >= n) return true;
        return false;
    }
    /// Whether the node knows the transaction (pooled or mined).
    bool knows(const std::string& hash) const {
        return !call("eth_getTransactionByHash", {hash}).at("result").is_null();
    }

private:
    pid_t m_pid{-1};
    uint16_t m_port{0};
    std::string m_log;
    static inline int s_started = 0;
};

json chain_id_call(int id) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "eth_chainId"}, {"params", json::array()}};
}

/// Whether any reply of a batch (or the single reply to it) carries a result.
size_t results_in(const json& reply) {
    if (!reply.is_array()) return reply.contains("result") ? 1 : 0;
    size_t n = 0;
    for (const auto& r : reply) n += r.contains("result") ? 1 : 0;
    return n;
}

/// How long until the server closes `c` (or 60 s, the read's own limit here, when it does not).
std::chrono::steady_clock::duration time_to_close(Client& c) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(c.closed_by_server());
    return std::chrono::steady_clock::now() - t0;
}

}  // namespace

TEST(cli_run_options, http_serves_on_ipv6_loopback_in_brackets) {
    // `--http [::1]:0` as an operator writes it (the brackets of a URL); the node says where it
    // serves in the same form, and a client reaches it over IPv6 (the project's HTTP client).
    Chain chain;
    const std::string log = chain.tmp / "ipv6.log";
    const pid_t pid =
        test::spawn_cli({"run", "--datadir", chain.datadir, "--http", "[::1]:0"}, log);
    const std::regex serving{R"(JSON-RPC on (http://\[::1\]:[0-9]+))"};
    std::string url;
    for (auto deadline = std::chrono::steady_clock::now() + 60s;
         url.empty() && std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(20ms)) {
        std::ifstream in{log};
        const std::string text{std::istreambuf_iterator<char>{in}, {}};
        if (std::smatch m; std::regex_search(text, m, serving)) url = m[1];
    }
    ASSERT_FALSE(url.empty()) << "no IPv6 JSON-RPC line";
    const auto answer = barrel::http::Client{parse_http_url(url).value(), {.timeout = 10s}}.post(
        chain_id_call(1).dump());
    ::kill(pid, SIGTERM);
    EXPECT_EQ(test::wait_child(pid), 0);
    ASSERT_TRUE(answer) << answer.error();
    EXPECT_EQ(answer->status, 200);
    EXPECT_EQ(json::parse(answer->body).at("result"), "0x1");
}

TEST(cli_run_options, get_slash_is_the_embedded_status_page_and_no_status_page_turns_it_off) {
    Chain chain;
    {
        Node node{chain.datadir, {}};
        Client c{node.port()};
        c.send(test::http::verb::get, "/", "", "");
        const auto res = c.receive();
        EXPECT_EQ(res.result_int(), 200u);
        EXPECT_EQ(res[test::http::field::content_type], "text/html; charset=utf-8");
        EXPECT_NE(res.body().find("<title>barrel node</title>"), std::string::npos);
        EXPECT_NE(res["Content-Security-Policy"].find("default-src 'none'"), std::string::npos);
    }
    Node node{chain.datadir, {"--no-status-page"}};
    Client c{node.port()};
    c.send(test::http::verb::get, "/", "", "");
    const auto res = c.receive();
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(res.body(), "");
}

TEST(cli_run_options, http_cors_origins_and_vhosts_reach_the_server) {
    Chain chain;
    Node node{chain.datadir,
              {"--http-cors-origins", "http://localhost:5173", "--http-vhosts", "node.example"}};
    const auto post = [&](const std::string& host, const std::string& origin) {
        Client c{node.port()};
        c.send_raw("POST / HTTP/1.1\r\nHost: " + host + "\r\nOrigin: " + origin +
                   "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
        return c.receive();
    };
    auto res = post("node.example:8545", "http://localhost:5173");
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(res[test::http::field::access_control_allow_origin], "http://localhost:5173");
    res = post("node.example:8545", "http://localhost:5174");
    EXPECT_EQ(res.find(test::http::field::access_control_allow_origin), res.end());
    EXPECT_EQ(post("localhost:8545", "http://localhost:5173").result_int(), 403u);
}

TEST(cli_run_options, rpc_max_batch_bounds_a_batch) {
    Chain c;
    const Node node{c.datadir, {"--rpc-max-batch", "2"}};
    ASSERT_NE(node.port(), 0);
    EXPECT_EQ(results_in(node.post(json::array({chain_id_call(1), chain_id_call(2)}))), 2u);
    // The default (1,000) would answer all three.
    const json over =
        node.post(json::array({chain_id_call(1), chain_id_call(2), chain_id_call(3)}));
    EXPECT_EQ(results_in(over), 0u) << over.dump();
}

TEST(cli_run_options, rpc_max_body_bounds_a_request_body) {
    Chain c;
    const Node node{c.datadir, {"--rpc-max-body", "200"}};
    ASSERT_NE(node.port(), 0);
    Client ok{node.port()};
    EXPECT_EQ(ok.post(chain_id_call(1).dump()).result_int(), 200u);
    // A valid call padded past 200 bytes (whitespace): the default (5 MB) would take it.
    Client big{node.port()};
    const auto res = big.post(chain_id_call(2).dump() + std::string(300, ' '));
    EXPECT_EQ(res.result_int(), 413u) << res.body();
}

TEST(cli_run_options, rpc_max_connections_bounds_the_connections_served) {
    Chain c;
    const Node node{c.datadir, {"--rpc-max-connections", "2"}};
    ASSERT_NE(node.port(), 0);
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 2; ++i) {
        clients.push_back(std::make_unique<Client>(node.port()));
        EXPECT_EQ(clients.back()->post(chain_id_call(i).dump()).result_int(), 200u);
    }
    // A third, with two open: refused, or served in place of one of the others. Either way no
    // more than two of the three are served now (the default, 512, would serve all three).
    clients.push_back(std::make_unique<Client>(node.port()));
    size_t served = 0;
    for (int round = 0; round < 2; ++round) {
        served = 0;
        for (auto& client : clients) {
            try {
                served += client->post(chain_id_call(9).dump()).result_int() == 200u ? 1 : 0;
            } catch (const std::exception&) {  // closed by the server
            }
        }
    }
    EXPECT_LE(served, 2u);
    EXPECT_GE(served, 1u);
}

TEST(cli_run_options, rpc_read_timeout_cuts_off_half_a_request) {
    Chain c;
    const Node node{c.datadir, {"--rpc-read-timeout", "300"}};
    ASSERT_NE(node.port(), 0);
    Client half{node.port()};
    half.send_raw(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n{\"jsonrpc\"");
    // The default is 30 s.
    EXPECT_LT(time_to_close(half), 10s);
}

TEST(cli_run_options, rpc_idle_timeout_closes_an_idle_connection) {
    Chain c;
    const Node node{c.datadir, {"--rpc-idle-timeout", "300"}};
    ASSERT_NE(node.port(), 0);
    Client idle{node.port()};
    EXPECT_EQ(idle.post(chain_id_call(1).dump()).result_int(), 200u);
    // The default is 120 s.
    EXPECT_LT(time_to_close(idle), 10s);
}

TEST(cli_run_options, txpool_max_pending_bounds_the_pool) {
    Chain c;
    // A block time of ten minutes: nothing leaves the pool while the test runs.
    const Node node{c.datadir, {"--txpool-max-pending", "2", "--block-time", "600000"}};
    ASSERT_NE(node.port(), 0);
    for (int i = 0; i < 4; ++i) (void)node.call("eth_sendRawTransaction", {c.raw[i]});
    size_t known = 0;
    for (int i = 0; i < 4; ++i) known += node.knows(c.hashes[i]) ? 1 : 0;
    EXPECT_GE(known, 1u);
    EXPECT_LE(known, 2u);  // the default (65,536) would hold all four
}

TEST(cli_run_options, txpool_max_per_sender_bounds_one_sender) {
    Chain c;
    // The sender with the most transactions in the block (12 among 3 accounts: at least 4).
    std::map<Address, std::vector<size_t>> by_sender;
    for (size_t i = 0; i < c.senders.size(); ++i) by_sender[c.senders[i]].push_back(i);
    const auto& [sender, mine] = *std::max_element(
        by_sender.begin(), by_sender.end(),
        [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    ASSERT_GE(mine.size(), 3u);
    const Node node{c.datadir, {"--txpool-max-per-sender", "2", "--block-time", "600000"}};
    ASSERT_NE(node.port(), 0);
    for (size_t i : mine) (void)node.call("eth_sendRawTransaction", {c.raw[i]});
    size_t known = 0;
    for (size_t i : mine) known += node.knows(c.hashes[i]) ? 1 : 0;
    EXPECT_GE(known, 1u);
    EXPECT_LE(known, 2u) << "sender " << to_hex(sender);  // the default is 4,096
}

TEST(cli_run_options, coinbase_is_the_sealed_blocks_miner) {
    Chain c;
    const std::string coinbase = "0x" + std::string(40, 'c');
    const Node node{c.datadir, {"--coinbase", coinbase, "--block-time", "100"}};
    ASSERT_NE(node.port(), 0);
    ASSERT_TRUE(node.call("eth_sendRawTransaction", {c.raw[0]}).contains("result"));
    ASSERT_TRUE(node.wait_for_block(1));
    const json block = node.call("eth_getBlockByNumber", {"0x1", false}).at("result");
    EXPECT_EQ(block.at("miner"), coinbase);
}

TEST(cli_run_options, block_time_is_how_long_a_transaction_waits_for_a_block) {
    Chain c;
    const Node node{c.datadir, {"--block-time", "600000"}};
    ASSERT_NE(node.port(), 0);
    ASSERT_TRUE(node.call("eth_sendRawTransaction", {c.raw[0]}).contains("result"));
    // Under the default (1 s) the block would be sealed by now.
    std::this_thread::sleep_for(3s);
    EXPECT_EQ(node.block_number(), 0u);
    EXPECT_TRUE(node.knows(c.hashes[0]));
}

TEST(cli_run_options, max_block_txs_bounds_a_block_and_a_full_one_is_sealed_at_once) {
    Chain c;
    // Ten minutes of block time: the blocks below are sealed because they are full.
    const Node node{c.datadir, {"--max-block-txs", "2", "--block-time", "600000"}};
    ASSERT_NE(node.port(), 0);
    for (int i = 0; i < 5; ++i)
        ASSERT_TRUE(node.call("eth_sendRawTransaction", {c.raw[i]}).contains("result")) << i;
    ASSERT_TRUE(node.wait_for_block(2)) << node.log();
    for (const char* n : {"0x1", "0x2"}) {
        const json block = node.call("eth_getBlockByNumber", {n, false}).at("result");
        EXPECT_EQ(block.at("transactions").size(), 2u) << n;
    }
}

namespace {

/// The lines of a file.
std::vector<std::string> lines_in(const std::string& path) {
    std::ifstream in{path};
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

}  // namespace

TEST(cli_run_options, log_format_json_writes_every_line_as_one_object) {
    Chain chain;
    std::string log_path;
    {
        Node node{chain.datadir, {"--log-format", "json", "--log-level", "debug"}};
        log_path = node.log_path();
        EXPECT_TRUE(node.call("eth_sendRawTransaction", {chain.raw.at(0)}).contains("result"));
        ASSERT_TRUE(node.wait_for_block(1)) << node.log();
    }  // stopped: its stop lines are written too
    const auto lines = lines_in(log_path);
    ASSERT_GE(lines.size(), 5u);
    std::set<std::string> levels;
    std::optional<json> block;
    for (const std::string& line : lines) {
        const json record = json::parse(line, nullptr, false);
        ASSERT_TRUE(record.is_object()) << line;
        for (const char* member : {"t", "lvl", "module", "msg"})
            EXPECT_TRUE(record.contains(member)) << member << " in " << line;
        levels.insert(record.value("lvl", ""));
        if (record.value("msg", "").starts_with("sealed block 1:")) block = record;
    }
    EXPECT_TRUE(levels.contains("debug"));  // the pool's admission line
    ASSERT_TRUE(block) << "no line of block 1";
    EXPECT_EQ(block->at("module"), "node");
    EXPECT_EQ(block->at("height"), 1);
    EXPECT_EQ(block->at("txs"), 1);
    for (const char* stage : {"decode_ms", "verify_ms", "execute_ms", "commit_ms"})
        EXPECT_TRUE(block->at(stage).is_number()) << stage;
    const std::string hash = block->at("hash").get<std::string>();
    EXPECT_EQ(hash.size(), 66u);
    const json mined = Node{chain.datadir, {}}.call("eth_getBlockByNumber", {"0x1", false});
    EXPECT_EQ(hash, mined.at("result").at("hash"));
}

TEST(cli_run_options, log_lines_have_a_time_a_level_and_a_module_and_info_leaves_out_debug) {
    Chain chain;
    std::string log_path;
    {
        Node node{chain.datadir, {}};
        log_path = node.log_path();
        EXPECT_TRUE(node.call("eth_sendRawTransaction", {chain.raw.at(0)}).contains("result"));
        ASSERT_TRUE(node.wait_for_block(1)) << node.log();
    }
    const std::regex shape{
        "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z (ERROR|WARN |INFO ) "
        "[a-z-]+: .+"};
    const auto lines = lines_in(log_path);
    ASSERT_GE(lines.size(), 4u);
    for (const std::string& line : lines) EXPECT_TRUE(std::regex_match(line, shape)) << line;
}
