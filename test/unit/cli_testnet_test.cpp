// `barrel-node testnet`: the layout, the edits to CometBFT's files, testnet.json, `init` against
// the real `cometbft` (v0.38, from scripts/deps.sh --cometbft; the tests that need it are
// skipped, saying so, where it is not installed), every bad argument with its exact message and
// nothing left behind, and the process helpers `start` and `stop` use. The network itself runs
// in test/network (scripts/test.sh's network test).

#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/store/store.hpp>

#include "cli_run.hpp"
#include "test_files.hpp"
#include "testnet/testnet.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace barrel {
namespace {

namespace fs = std::filesystem;
namespace tn = testnet;
using test::run_cli;
using test::ScratchDir;

// ---- A minimal reader of the values the tests check ---------------------------------------------

/// The value text of `key` in `[section]` of a TOML file, or nullopt.
std::optional<std::string> toml_value(const std::string& text, const std::string& section,
                                      const std::string& key) {
    std::istringstream in{text};
    std::string current;
    for (std::string line; std::getline(in, line);) {
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#') continue;
        if (line[first] == '[') {
            current = line.substr(first + 1, line.find(']') - first - 1);
            continue;
        }
        const auto eq = line.find('=');
        if (current != section || eq == std::string::npos) continue;
        std::string k = line.substr(first, eq - first);
        while (!k.empty() && k.back() == ' ') k.pop_back();
        if (k == key) return line.substr(line.find_first_not_of(' ', eq + 1));
    }
    return std::nullopt;
}

/// cometbft as `testnet` finds it, or "" (the tests needing it are skipped).
std::string find_cometbft() {
    std::vector<std::string> dirs;
    if (const char* path = std::getenv("PATH")) {
        std::istringstream in{path};
        for (std::string d; std::getline(in, d, ':');) dirs.push_back(d);
    }
    if (const char* home = std::getenv("HOME")) dirs.push_back(std::string{home} + "/go/bin");
    for (const auto& d : dirs)
        if (::access((d + "/cometbft").c_str(), X_OK) == 0) return d + "/cometbft";
    return "";
}

#define REQUIRE_COMETBFT(var)                \
    const std::string var = find_cometbft(); \
    if (var.empty()) GTEST_SKIP() << "no cometbft (scripts/deps.sh --cometbft builds it)"

/// A shell script standing in for cometbft: `version` prints `version`, anything else fails.
std::string fake_cometbft(const ScratchDir& scratch, const std::string& version,
                          const std::string& name = "cometbft") {
    const std::string path =
        scratch.write(name, as_bytes("#!/bin/sh\n"
                                     "if [ \"$1\" = version ]; then echo " +
                                     version +
                                     "; exit 0; fi\n"
                                     "echo \"ERROR: this fake cometbft does not '$1'\" >&2\n"
                                     "exit 3\n"));
    ::chmod(path.c_str(), 0755);
    return path;
}

/// A genesis with integers written three ways, a balance past 2^64 and odd spacing: the
/// app_state must carry the text as it is.
const std::string kGenesis =
    "{\"chain_id\": 77,  \"gas_limit\": \"0x1c9c380\", \"base_fee\": \"7\",\n"
    " \"accounts\": {\"0x1111111111111111111111111111111111111111\": "
    "{\"balance\": \"100000000000000000000000000\"}}}";

/// What parse_testnet says of testnet.json's `text` edited by `edit` ("accepted" if nothing).
std::string parse_error_after(const std::string& text,
                              const std::function<void(nlohmann::json&)>& edit) {
    auto doc = nlohmann::json::parse(text);
    edit(doc);
    const auto r = tn::parse_testnet(doc.dump());
    return r ? std::string{"accepted"} : r.error();
}

// ---- Layout ------------------------------------------------------------------------------------

TEST(cli_testnet, ports_follow_the_base_port_and_stop_at_65535) {
    const auto p = tn::node_ports(26600, 3);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->p2p, 26630);
    EXPECT_EQ(p->cometbft_rpc, 26631);
    EXPECT_EQ(p->json_rpc, 26632);
    EXPECT_EQ(p->abci, 26633);
    EXPECT_TRUE(tn::node_ports(65532, 0));
    const auto past = tn::node_ports(65500, 4);
    ASSERT_FALSE(past);
    EXPECT_EQ(past.error(),
              "the ports of node 4 from base port 65500 run past 65535 (node 4 needs 65540 to "
              "65543)");
}

TEST(cli_testnet, a_node_uses_a_unix_socket_unless_its_path_is_too_long) {
    const auto short_node = tn::make_node("/tmp/net", 2, true, 26600, "ab");
    ASSERT_TRUE(short_node);
    EXPECT_EQ(short_node->home, "/tmp/net/node2");
    EXPECT_EQ(short_node->datadir, "/tmp/net/node2/barrel");
    EXPECT_EQ(short_node->abci, "unix:///tmp/net/node2/abci.sock");
    EXPECT_EQ(short_node->json_rpc_url(), "http://127.0.0.1:26622");
    EXPECT_EQ(short_node->cometbft_rpc_url(), "http://127.0.0.1:26621");
    EXPECT_EQ(short_node->p2p_address(), "ab@127.0.0.1:26620");
    const std::string long_dir = "/tmp/" + std::string(100, 'x');
    const auto long_node = tn::make_node(long_dir, 2, true, 26600, "ab");
    ASSERT_TRUE(long_node);
    EXPECT_EQ(long_node->abci, "tcp://127.0.0.1:26623");
}

TEST(cli_testnet, a_node_with_a_host_of_its_own_listens_and_is_dialled_there) {
    const auto node = tn::make_node("/tmp/net", 2, true, 26600, "ab", tn::App::barrel, "10.77.0.3");
    ASSERT_TRUE(node);
    EXPECT_EQ(node->json_rpc_url(), "http://10.77.0.3:26622");
    EXPECT_EQ(node->cometbft_rpc_url(), "http://10.77.0.3:26621");
    EXPECT_EQ(node->p2p_address(), "ab@10.77.0.3:26620");
    EXPECT_EQ(node->abci, "unix:///tmp/net/node2/abci.sock");
    EXPECT_EQ(tn::make_node("/tmp/net", 2, true, 26600, "ab", tn::App::barrel, "host").error(),
              "node 2: host 'host' is not a numeric IPv4 address");

    // testnet.json names the host (a loopback node's entry has none, as before), and its URLs
    // must be the host's.
    tn::Testnet net;
    net.dir = "/tmp/net";
    net.chain_id = "c";
    net.nodes.push_back(*tn::make_node(net.dir, 0, true, net.base_port, std::string(40, 'a')));
    net.nodes.push_back(*tn::make_node(net.dir, 1, true, net.base_port, std::string(40, 'b'),
                                       tn::App::barrel, "10.77.0.2"));
    const std::string text = tn::to_json_text(net);
    const auto doc = nlohmann::json::parse(text);
    EXPECT_FALSE(doc["nodes"][0].contains("host"));
    EXPECT_EQ(doc["nodes"][1]["host"], "10.77.0.2");
    const auto back = tn::parse_testnet(text);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(back->nodes[1].host, "10.77.0.2");
    EXPECT_EQ(tn::to_json_text(*back), text);
    EXPECT_EQ(parse_error_after(text, [](auto& d) { d["nodes"][1]["host"] = "10.77.0.9"; }),
              "nodes.1.p2p: expected ID@10.77.0.9:26610, got '" + std::string(40, 'b') +
                  "@10.77.0.2:26610'");
    EXPECT_EQ(parse_error_after(text, [](auto& d) { d["nodes"][1]["host"] = "x"; }),
              "nodes.1.host: not a numeric IPv4 address: 'x'");

    // The command prefix of testnet start: words, "{node}" the node's index.
    EXPECT_EQ(tn::exec_prefix("/usr/sbin/ip netns exec ns-{node}", 3),
              (std::vector<std::string>{"/usr/sbin/ip", "netns", "exec", "ns-3"}));
    EXPECT_TRUE(tn::exec_prefix("", 3).empty());
}

TEST(cli_testnet, testnet_json_round_trips_and_names_what_is_wrong) {
    tn::Testnet net;
    net.dir = "/tmp/net";
    net.chain_id = "chain-x";
    net.base_port = 30000;
    net.timeout_commit_ms = 250;
    for (size_t i = 0; i < 3; ++i)
        net.nodes.push_back(*tn::make_node(net.dir, i, i < 2, 30000, std::string(40, 'a' + i)));
    const std::string text = tn::to_json_text(net);
    const auto back = tn::parse_testnet(text);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(tn::to_json_text(*back), text);
    EXPECT_FALSE(back->nodes[2].validator);
    EXPECT_EQ(back->nodes[1].node_id, std::string(40, 'b'));

    auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
        return parse_error_after(text, edit);
    };
    EXPECT_EQ(tn::parse_testnet("[1]").error(), "not a JSON object");
    EXPECT_EQ(edited([](auto& d) { d.erase("chain_id"); }), "chain_id: missing");
    EXPECT_EQ(edited([](auto& d) { d["base_port"] = "x"; }), "base_port: not an unsigned integer");
    EXPECT_EQ(edited([](auto& d) { d["nodes"][1].erase("home"); }), "nodes.1.home: missing");
    EXPECT_EQ(edited([](auto& d) { d["nodes"][1]["home"] = "/elsewhere"; }),
              "nodes.1.home: expected '/tmp/net/node1'");
    EXPECT_EQ(edited([](auto& d) { d["nodes"][0]["p2p"] = "x@127.0.0.1:1"; }),
              "nodes.0.p2p: expected ID@127.0.0.1:30000, got 'x@127.0.0.1:1'");
    EXPECT_EQ(edited([](auto& d) { d["nodes"][2]["index"] = 5; }), "nodes.2.index: expected 2");
    EXPECT_EQ(edited([](auto& d) { d["nodes"] = nlohmann::json::array(); }),
              "nodes: expected an array of at least one node");
}

TEST(cli_testnet, testnet_json_keeps_the_app_the_settings_the_node_args_and_the_pid_files) {
    tn::Testnet net;
    net.dir = "/tmp/net";
    net.chain_id = "chain-x";
    net.settings.timeout_propose_ms = 500;
    net.settings.mempool_size = 20000;
    net.settings.mempool_max_txs_bytes = 1 << 30;
    net.settings.recheck = false;
    net.settings.max_block_bytes = 2'000'000;
    net.settings.create_empty_blocks = true;
    net.node_args = {"--txpool-max-pending", "40000"};
    net.nodes.push_back(*tn::make_node(net.dir, 0, true, net.base_port, std::string(40, 'a')));
    const std::string text = tn::to_json_text(net);
    const auto back = tn::parse_testnet(text);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(tn::to_json_text(*back), text);
    EXPECT_EQ(back->app, tn::App::barrel);
    EXPECT_EQ(back->settings, net.settings);
    EXPECT_EQ(back->node_args, net.node_args);
    // The members a program reads (barrel-load finds each process's pid by them).
    const auto doc = nlohmann::json::parse(text);
    EXPECT_EQ(doc["app"], "barrel");
    EXPECT_EQ(doc["dir"], "/tmp/net");
    EXPECT_EQ(doc["genesis"], "/tmp/net/genesis.json");
    EXPECT_EQ(doc["settings"],
              nlohmann::json::parse(R"({"timeout_propose_ms": 500, "mempool_size": 20000,
                  "mempool_max_txs_bytes": 1073741824, "max_block_bytes": 2000000,
                  "recheck": false, "create_empty_blocks": true})"));
    EXPECT_EQ(doc["node_args"], nlohmann::json::parse(R"(["--txpool-max-pending", "40000"])"));
    const auto& node = doc["nodes"][0];
    EXPECT_EQ(node["pid_files"]["barrel"], "/tmp/net/node0/barrel.pid");
    EXPECT_EQ(node["pid_files"]["cometbft"], "/tmp/net/node0/cometbft.pid");
    EXPECT_EQ(node["logs"]["barrel"], "/tmp/net/node0/barrel.log");
    EXPECT_EQ(node["json_rpc"], "http://127.0.0.1:26602");
    EXPECT_EQ(node["datadir"], "/tmp/net/node0/barrel");

    // Settings not given are not written: CometBFT's defaults.
    net.settings = {};
    EXPECT_EQ(nlohmann::json::parse(tn::to_json_text(net))["settings"], nlohmann::json::object());

    auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
        return parse_error_after(text, edit);
    };
    EXPECT_EQ(edited([](auto& d) { d["app"] = "geth"; }),
              "app: expected \"barrel\" or \"kvstore\"");
    EXPECT_EQ(edited([](auto& d) { d["settings"]["mempool_size"] = 0; }),
              "settings.mempool_size: expected 1 to 100000000, got 0");
    EXPECT_EQ(edited([](auto& d) { d["settings"]["max_block_bytes"] = 104857601; }),
              "settings.max_block_bytes: expected 1048576 to 104857600, got 104857601");
    EXPECT_EQ(edited([](auto& d) { d["settings"]["recheck"] = "no"; }),
              "settings.recheck: not true or false");
    EXPECT_EQ(edited([](auto& d) { d["settings"] = 1; }), "settings: not an object");
    EXPECT_EQ(edited([](auto& d) { d["node_args"] = nlohmann::json::array({1}); }),
              "node_args: not an array of strings");
    EXPECT_EQ(edited([](auto& d) { d["dir"] = "/elsewhere"; }),
              "genesis: expected DIR/genesis.json, got '/tmp/net/genesis.json'");
    EXPECT_EQ(edited([](auto& d) { d["dir"] = "net"; }),
              "genesis: expected DIR/genesis.json, got '/tmp/net/genesis.json'");
}

TEST(cli_testnet, a_kvstore_testnet_json_has_no_barrel_files) {
    tn::Testnet net;
    net.dir = "/tmp/kv";
    net.chain_id = "chain-k";
    net.app = tn::App::kvstore;
    net.settings.recheck = false;
    for (size_t i = 0; i < 2; ++i)
        net.nodes.push_back(*tn::make_node(net.dir, i, i == 0, net.base_port,
                                           std::string(40, 'a' + i), tn::App::kvstore));
    EXPECT_EQ(net.nodes[1].abci, "kvstore");
    EXPECT_EQ(net.nodes[1].datadir, "");
    const std::string text = tn::to_json_text(net);
    const auto back = tn::parse_testnet(text);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(tn::to_json_text(*back), text);
    EXPECT_EQ(back->app, tn::App::kvstore);
    EXPECT_EQ(back->dir, "/tmp/kv");
    EXPECT_EQ(back->nodes[1].app, tn::App::kvstore);
    const auto doc = nlohmann::json::parse(text);
    EXPECT_EQ(doc["app"], "kvstore");
    EXPECT_FALSE(doc.contains("genesis"));
    EXPECT_FALSE(doc.contains("node_args"));
    const auto& node = doc["nodes"][1];
    EXPECT_EQ(node, nlohmann::json::parse(R"({
        "index": 1, "validator": false, "cometbft_rpc": "http://127.0.0.1:26611",
        "p2p": ")" + std::string(40, 'b') +
                                          R"(@127.0.0.1:26610", "abci": "kvstore",
        "home": "/tmp/kv/node1", "logs": {"cometbft": "/tmp/kv/node1/cometbft.log"},
        "pid_files": {"cometbft": "/tmp/kv/node1/cometbft.pid"}})"));

    auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
        return parse_error_after(text, edit);
    };
    EXPECT_EQ(edited([](auto& d) { d["node_args"] = nlohmann::json::array({"--x"}); }),
              "node_args: a kvstore network runs no barrel-node");
    EXPECT_EQ(edited([](auto& d) { d["nodes"][0]["abci"] = "unix:///tmp/kv/node0/abci.sock"; }),
              "nodes.0.abci: expected 'kvstore'");
    EXPECT_EQ(edited([](auto& d) { d.erase("dir"); }), "dir: expected an absolute path");
    EXPECT_EQ(edited([](auto& d) { d["app"] = "barrel"; }), "genesis: missing");
}

TEST(cli_testnet, an_old_testnet_json_is_a_barrel_network_with_cometbfts_defaults) {
    // As testnet init wrote it before "app", "dir", "settings", "node_args" and "pid_files".
    const std::string id(40, 'c');
    const std::string old = R"({
  "chain_id": "chain-5aqF0P", "genesis": "/tmp/net/genesis.json", "base_port": 26600,
  "timeout_commit_ms": 1000,
  "nodes": [{"index": 0, "validator": true, "json_rpc": "http://127.0.0.1:26602",
      "cometbft_rpc": "http://127.0.0.1:26601", "p2p": ")" +
                            id + R"(@127.0.0.1:26600",
      "abci": "unix:///tmp/net/node0/abci.sock", "home": "/tmp/net/node0",
      "datadir": "/tmp/net/node0/barrel",
      "logs": {"barrel": "/tmp/net/node0/barrel.log", "cometbft": "/tmp/net/node0/cometbft.log"}}]
})";
    const auto net = tn::parse_testnet(old);
    ASSERT_TRUE(net) << net.error();
    EXPECT_EQ(net->app, tn::App::barrel);
    EXPECT_EQ(net->dir, "/tmp/net");
    EXPECT_EQ(net->settings, tn::CometSettings{});
    EXPECT_TRUE(net->node_args.empty());
    EXPECT_EQ(net->nodes[0].datadir, "/tmp/net/node0/barrel");
    EXPECT_EQ(net->nodes[0].barrel_pid_file(), "/tmp/net/node0/barrel.pid");
}

// ---- CometBFT's files
// ----------------------------------------------------------------------------

TEST(cli_testnet, toml_edits_replace_one_value_in_its_section_and_keep_the_rest) {
    const std::string toml =
        "# top comment\nproxy_app = \"tcp://127.0.0.1:26658\"\n\n[rpc]\n# laddr = \"no\"\n"
        "laddr = \"tcp://127.0.0.1:26657\"\n\n[p2p]\n  laddr = \"tcp://0.0.0.0:26656\"\n"
        "allow_duplicate_ip = false\n";
    auto r = tn::set_toml_value(toml, "p2p", "laddr", "\"tcp://127.0.0.1:1\"");
    ASSERT_TRUE(r);
    EXPECT_EQ(*r,
              "# top comment\nproxy_app = \"tcp://127.0.0.1:26658\"\n\n[rpc]\n# laddr = \"no\"\n"
              "laddr = \"tcp://127.0.0.1:26657\"\n\n[p2p]\n  laddr = \"tcp://127.0.0.1:1\"\n"
              "allow_duplicate_ip = false\n");
    r = tn::set_toml_value(toml, "", "proxy_app", tn::toml_string("unix:///a \"b\"\\c"));
    ASSERT_TRUE(r);
    EXPECT_EQ(toml_value(*r, "", "proxy_app"), "\"unix:///a \\\"b\\\"\\\\c\"");
    EXPECT_EQ(tn::set_toml_value(toml, "rpc", "allow_duplicate_ip", "true").error(),
              "config.toml: no key 'allow_duplicate_ip' in [rpc]");
    EXPECT_EQ(tn::set_toml_value(toml, "", "laddr", "true").error(),
              "config.toml: no key 'laddr' in the top table");
}

TEST(cli_testnet, app_state_is_barrels_genesis_text_as_given) {
    const std::string comet = R"({"genesis_time": "x", "chain_id": "c", "app_state": {"old": 1}})";
    const auto g = tn::with_app_state(comet, "  " + kGenesis + "\n\n");
    ASSERT_TRUE(g) << g.error();
    EXPECT_NE(g->find("\"app_state\": " + kGenesis + "\n}"), std::string::npos) << *g;
    const auto doc = nlohmann::ordered_json::parse(*g);
    EXPECT_EQ(doc["chain_id"], "c");
    EXPECT_EQ(doc["genesis_time"], "x");
    EXPECT_EQ(doc["app_state"]["chain_id"], 77);
    EXPECT_FALSE(doc["app_state"].contains("old"));
    EXPECT_EQ(*tn::cometbft_chain_id(*g), "c");
    EXPECT_EQ(tn::with_app_state("[]", kGenesis).error(),
              "CometBFT's genesis.json: not a JSON object");
    EXPECT_EQ(tn::cometbft_chain_id("{}").error(), "CometBFT's genesis.json: no chain_id");
}

TEST(cli_testnet, the_default_genesis_funds_the_dev_account) {
    const auto g = chain::parse_genesis(tn::default_genesis_text());
    ASSERT_TRUE(g) << g.error();
    EXPECT_EQ(g->config.chain_id, 1337u);
    const auto text = tn::default_genesis_text();
    EXPECT_NE(text.find("\"0xd3c21bcecceda1000000\""), std::string::npos);
    EXPECT_EQ(*parse_u256("0xd3c21bcecceda1000000"), *parse_u256("1000000000000000000000000"));
}

/// The config.toml `cometbft init` writes into SCRATCH/home ("" if it fails).
std::string cometbft_init_config(const std::string& cometbft, const ScratchDir& scratch) {
    const auto r = tn::run_program({cometbft, "init", "--home", scratch / "home"});
    if (!r || r->status != 0) {
        ADD_FAILURE() << "cometbft init: " << (r ? r->output : r.error());
        return "";
    }
    return test::read_text(scratch / "home/config/config.toml");
}

/// cometbft reads `toml` as SCRATCH/home's config.toml (its own parser, its own checks).
void expect_cometbft_reads(const std::string& cometbft, const ScratchDir& scratch,
                           const std::string& toml) {
    test::write_text(scratch / "home/config/config.toml", toml);
    const auto shown = tn::run_program({cometbft, "show-node-id", "--home", scratch / "home"});
    ASSERT_TRUE(shown);
    EXPECT_EQ(shown->status, 0) << shown->output;
}

TEST(cli_testnet, configure_node_edits_the_config_cometbft_writes) {
    REQUIRE_COMETBFT(cometbft);
    ScratchDir scratch;
    const std::string original = cometbft_init_config(cometbft, scratch);
    ASSERT_FALSE(original.empty());
    const auto node = tn::make_node("/tmp/net", 1, true, 26600, std::string(40, 'a'));
    ASSERT_TRUE(node);
    tn::NodeConfig config{&*node, {"x@127.0.0.1:26600", "y@127.0.0.1:26620"}, 250, {}, {}};
    const auto edited = tn::configure_node(original, config);
    ASSERT_TRUE(edited) << edited.error();
    EXPECT_EQ(toml_value(*edited, "", "moniker"), "\"node1\"");
    EXPECT_EQ(toml_value(*edited, "", "proxy_app"), "\"unix:///tmp/net/node1/abci.sock\"");
    EXPECT_EQ(toml_value(*edited, "", "abci"), "\"socket\"");
    EXPECT_EQ(toml_value(*edited, "rpc", "laddr"), "\"tcp://127.0.0.1:26611\"");
    EXPECT_EQ(toml_value(*edited, "rpc", "max_request_batch_size"), "100");
    EXPECT_EQ(toml_value(*edited, "p2p", "laddr"), "\"tcp://127.0.0.1:26610\"");
    EXPECT_EQ(toml_value(*edited, "p2p", "persistent_peers"),
              "\"x@127.0.0.1:26600,y@127.0.0.1:26620\"");
    EXPECT_EQ(toml_value(*edited, "p2p", "allow_duplicate_ip"), "true");
    EXPECT_EQ(toml_value(*edited, "p2p", "addr_book_strict"), "false");
    EXPECT_EQ(toml_value(*edited, "consensus", "timeout_commit"), "\"250ms\"");
    EXPECT_EQ(toml_value(*edited, "instrumentation", "prometheus"), "false");
    // Nothing else changed: the same lines but the edited ones.
    std::istringstream a{original}, b{*edited};
    size_t changed = 0, lines = 0;
    for (std::string x, y; std::getline(a, x) && std::getline(b, y); ++lines) changed += x != y;
    EXPECT_GT(lines, 400u);
    EXPECT_LE(changed, 12u);
    // And cometbft itself reads the result (its own parser, its own checks).
    expect_cometbft_reads(cometbft, scratch, *edited);
}

TEST(cli_testnet, configure_node_sets_the_settings_given_and_leaves_the_others_as_cometbft_wrote) {
    REQUIRE_COMETBFT(cometbft);
    ScratchDir scratch;
    const std::string original = cometbft_init_config(cometbft, scratch);
    ASSERT_FALSE(original.empty());
    // v0.38's defaults, which a setting not given keeps.
    EXPECT_EQ(toml_value(original, "consensus", "timeout_propose"), "\"3s\"");
    EXPECT_EQ(toml_value(original, "consensus", "create_empty_blocks"), "true");
    EXPECT_EQ(toml_value(original, "mempool", "size"), "5000");
    EXPECT_EQ(toml_value(original, "mempool", "max_txs_bytes"), "1073741824");
    EXPECT_EQ(toml_value(original, "mempool", "recheck"), "true");
    const auto node = tn::make_node("/tmp/net", 0, true, 26600, std::string(40, 'a'));
    ASSERT_TRUE(node);
    tn::NodeConfig config{&*node, {}, 250, {}, {}};
    const auto plain = tn::configure_node(original, config);
    ASSERT_TRUE(plain) << plain.error();
    for (const auto& [section, key] :
         std::vector<std::pair<std::string, std::string>>{{"consensus", "timeout_propose"},
                                                          {"consensus", "create_empty_blocks"},
                                                          {"mempool", "size"},
                                                          {"mempool", "max_txs_bytes"},
                                                          {"mempool", "recheck"}})
        EXPECT_EQ(toml_value(*plain, section, key), toml_value(original, section, key)) << key;

    config.settings.timeout_propose_ms = 500;
    config.settings.create_empty_blocks = false;
    config.settings.mempool_size = 20000;
    config.settings.mempool_max_txs_bytes = 100'000'000;
    config.settings.recheck = false;
    config.settings.max_block_bytes = 2'000'000;  // genesis.json's: no config.toml key
    const auto edited = tn::configure_node(original, config);
    ASSERT_TRUE(edited) << edited.error();
    EXPECT_EQ(toml_value(*edited, "consensus", "timeout_propose"), "\"500ms\"");
    EXPECT_EQ(toml_value(*edited, "consensus", "create_empty_blocks"), "false");
    EXPECT_EQ(toml_value(*edited, "mempool", "size"), "20000");
    EXPECT_EQ(toml_value(*edited, "mempool", "max_txs_bytes"), "100000000");
    EXPECT_EQ(toml_value(*edited, "mempool", "recheck"), "false");
    EXPECT_EQ(toml_value(*edited, "consensus", "timeout_commit"), "\"250ms\"");
    // A kvstore node: CometBFT's built-in application instead of the node's socket.
    const auto kv =
        tn::make_node("/tmp/net", 0, true, 26600, std::string(40, 'a'), tn::App::kvstore);
    ASSERT_TRUE(kv);
    config.node = &*kv;
    const auto kv_toml = tn::configure_node(*edited, config);
    ASSERT_TRUE(kv_toml) << kv_toml.error();
    EXPECT_EQ(toml_value(*kv_toml, "", "proxy_app"), "\"kvstore\"");
    // cometbft reads the result.
    expect_cometbft_reads(cometbft, scratch, *kv_toml);
}

/// consensus_params as `cometbft testnet` v0.38.26 writes them.
const std::string kCometGenesis = R"({
  "genesis_time": "2026-11-27T07:18:30.041746807Z",
  "chain_id": "chain-3jCTe0",
  "initial_height": "0",
  "consensus_params": {
    "block": {"max_bytes": "22020096", "max_gas": "-1"},
    "evidence": {"max_age_num_blocks": "100000", "max_age_duration": "172800000000000",
                 "max_bytes": "1048576"},
    "validator": {"pub_key_types": ["ed25519"]},
    "version": {"app": "0"},
    "abci": {"vote_extensions_enable_height": "0"}
  },
  "validators": [],
  "app_hash": ""
})";

TEST(cli_testnet, max_block_bytes_sets_the_genesis_block_size_as_a_string) {
    const auto g = tn::with_max_block_bytes(kCometGenesis, 2'000'000);
    ASSERT_TRUE(g) << g.error();
    auto doc = nlohmann::ordered_json::parse(*g);
    EXPECT_EQ(doc["consensus_params"]["block"]["max_bytes"], "2000000");
    // Nothing else changed.
    auto expected = nlohmann::ordered_json::parse(kCometGenesis);
    expected["consensus_params"]["block"]["max_bytes"] = "2000000";
    EXPECT_EQ(doc, expected);
    // The evidence must fit (CometBFT's Validate); as small as it is fits.
    EXPECT_TRUE(tn::with_max_block_bytes(kCometGenesis, 1'048'576));
    EXPECT_EQ(tn::with_max_block_bytes(kCometGenesis, 1'048'575).error(),
              "CometBFT's genesis.json: consensus_params.evidence.max_bytes 1048576 does not fit "
              "a block of 1048575");
    EXPECT_EQ(tn::with_max_block_bytes("[]", 2'000'000).error(),
              "CometBFT's genesis.json: not a JSON object");
    EXPECT_EQ(
        tn::with_max_block_bytes(R"({"consensus_params": {"block": {"max_bytes": 5}}})", 2'000'000)
            .error(),
        "CometBFT's genesis.json: no consensus_params.block.max_bytes string");
}

// ---- init ------------------------------------------------------------------------------------

TEST(cli_testnet, init_writes_a_network_of_n_validators) {
    REQUIRE_COMETBFT(cometbft);
    ScratchDir scratch;
    const std::string genesis = scratch.write("g.json", as_bytes(kGenesis));
    const std::string dir = scratch / "net";
    const auto r =
        run_cli({"testnet", "init", "--dir", dir, "--validators", "4", "--genesis", genesis,
                 "--base-port", "31000", "--timeout-commit", "200", "--cometbft", cometbft});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("testnet of 4 validators in " + dir + ": CometBFT chain chain-"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("3     http://127.0.0.1:31032  http://127.0.0.1:31031  127.0.0.1:31030"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(scratch.entries(), (std::vector<std::string>{"g.json", "net"}));  // no leftovers

    const auto net = tn::parse_testnet(test::read_text(dir + "/testnet.json"));
    ASSERT_TRUE(net) << net.error();
    ASSERT_EQ(net->nodes.size(), 4u);
    EXPECT_EQ(net->dir, dir);
    EXPECT_EQ(net->timeout_commit_ms, 200u);
    EXPECT_EQ(test::read_text(dir + "/genesis.json"), kGenesis);
    const auto parsed = chain::parse_genesis(kGenesis);
    ASSERT_TRUE(parsed);
    const std::string network_genesis = test::read_text(dir + "/node0/config/genesis.json");
    std::set<uint16_t> ports;
    std::set<std::string> ids;
    for (const auto& n : net->nodes) {
        EXPECT_TRUE(n.validator);
        const std::string toml = test::read_text(n.home + "/config/config.toml");
        EXPECT_EQ(toml_value(toml, "", "proxy_app"), "\"" + n.abci + "\"");
        EXPECT_EQ(toml_value(toml, "p2p", "laddr"),
                  "\"tcp://127.0.0.1:" + std::to_string(n.ports.p2p) + "\"");
        EXPECT_EQ(toml_value(toml, "rpc", "laddr"),
                  "\"tcp://127.0.0.1:" + std::to_string(n.ports.cometbft_rpc) + "\"");
        EXPECT_EQ(toml_value(toml, "consensus", "timeout_commit"), "\"200ms\"");
        // Its peers: every other node, at its own port.
        std::string peers;
        for (const auto& p : net->nodes)
            if (p.index != n.index) peers += (peers.empty() ? "" : ",") + p.p2p_address();
        EXPECT_EQ(toml_value(toml, "p2p", "persistent_peers"), "\"" + peers + "\"");
        // Its node ID is the one its key gives.
        const auto id = tn::run_program({cometbft, "show-node-id", "--home", n.home});
        ASSERT_TRUE(id);
        EXPECT_EQ(id->output, n.node_id + "\n");
        ids.insert(n.node_id);
        for (uint16_t p : {n.ports.p2p, n.ports.cometbft_rpc, n.ports.json_rpc, n.ports.abci})
            ports.insert(p);
        // The same genesis.json everywhere, carrying barrel's genesis as app_state.
        EXPECT_EQ(test::read_text(n.home + "/config/genesis.json"), network_genesis);
        // barrel's datadir, made from that genesis.
        auto store = store::Store::open(n.datadir, store::Options{.read_only = true});
        ASSERT_TRUE(store) << store.error().message;
        EXPECT_EQ((*store)->head().number, 0u);
        EXPECT_EQ((*store)->head().hash, block::hash_of(chain::genesis_header(*parsed)));
    }
    EXPECT_EQ(ids.size(), 4u);
    EXPECT_EQ(ports.size(), 16u);
    const auto doc = nlohmann::json::parse(network_genesis);
    EXPECT_EQ(doc["validators"].size(), 4u);
    EXPECT_EQ(doc["app_state"], nlohmann::json::parse(kGenesis));
    EXPECT_NE(network_genesis.find(kGenesis), std::string::npos);
}

TEST(cli_testnet, init_without_a_genesis_uses_the_dev_genesis_and_accepts_an_empty_dir) {
    REQUIRE_COMETBFT(cometbft);
    ScratchDir scratch;
    fs::create_directory(scratch / "net");
    const auto r = run_cli(
        {"testnet", "init", "--dir", scratch / "net", "--validators", "1", "--cometbft", cometbft});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("validator in "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("barrel chain id 1337"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(std::string{tn::kDevKey}), std::string::npos) << r.out;
    EXPECT_EQ(test::read_text(scratch / "net/genesis.json"), tn::default_genesis_text());
    EXPECT_EQ(scratch.entries(), std::vector<std::string>{"net"});
}

/// Runs `testnet init` expecting a failure: its one error line, and nothing left in `scratch`
/// but `keep`.
std::string init_error(const ScratchDir& scratch, std::vector<std::string> args,
                       const std::vector<std::string>& keep) {
    std::vector<std::string> cmd{"testnet", "init"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    const auto r = run_cli(cmd);
    EXPECT_EQ(r.status, cli::kExitBadInput) << r.out;
    EXPECT_EQ(scratch.entries(), keep);
    return r.err;
}

TEST(cli_testnet, init_refuses_every_bad_argument_leaving_nothing) {
    ScratchDir scratch;
    const std::string fake = fake_cometbft(scratch, "0.38.26");
    const std::string dir = scratch / "net";
    const std::vector<std::string> only_fake{"cometbft"};
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "0", "--cometbft", fake}, only_fake),
        "error: --validators: must be at least 1\n");
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "101", "--cometbft", fake}, only_fake),
        "error: --validators: must be at most 100, got 101\n");
    EXPECT_EQ(init_error(scratch, {"--dir", dir, "--validators", "x"}, only_fake),
              "error: --validators: expected an unsigned 64-bit integer, got 'x'\n");
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "4", "--base-port", "65510"}, only_fake),
        "error: --base-port: the ports of node 3 from base port 65510 run past 65535 (node 3 "
        "needs 65540 to 65543)\n");
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "4", "--base-port", "70000"}, only_fake),
        "error: --base-port: must be at most 65535, got 70000\n");
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "2", "--hosts", "10.0.0.1"}, only_fake),
        "error: --hosts: expected one address per validator (2), got 1\n");
    EXPECT_EQ(init_error(scratch, {"--dir", dir, "--validators", "2", "--hosts", "10.0.0.1,x"},
                         only_fake),
              "error: --hosts: 'x' is not a numeric IPv4 address\n");
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "1", "--timeout-commit", "3600001"},
                   only_fake),
        "error: --timeout-commit: must be at most 3600000, got 3600001\n");
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "1", "--genesis", scratch / "none.json"},
                   only_fake),
        "error: cannot read genesis '" + scratch / "none.json" + "': No such file or directory\n");
    const std::string bad = scratch.write("bad.json", as_bytes("{\"chain_id\": 1}"));
    EXPECT_EQ(init_error(scratch, {"--dir", dir, "--validators", "1", "--genesis", bad},
                         {"bad.json", "cometbft"}),
              "error: genesis '" + bad + "': gas_limit: missing\n");
    fs::remove(bad);
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "1", "--cometbft", dir}, only_fake),
        "error: --cometbft '" + dir + "': not an executable file\n");
    const std::string old = fake_cometbft(scratch, "0.37.4", "old-cometbft");
    EXPECT_EQ(init_error(scratch, {"--dir", dir, "--validators", "1", "--cometbft", old},
                         {"cometbft", "old-cometbft"}),
              "error: cometbft '" + old +
                  "' is version '0.37.4'; barrel speaks CometBFT v0.38 (scripts/deps.sh "
                  "--cometbft builds v0.38.26)\n");
    fs::remove(old);
    // cometbft failing half way: the temporary folder goes with it.
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "2", "--cometbft", fake}, only_fake),
        "error: cometbft testnet failed (exit status 3): ERROR: this fake cometbft does not "
        "'testnet'\n");
    // Parents made for DIR go too.
    EXPECT_EQ(
        init_error(scratch, {"--dir", scratch / "a/b/net", "--validators", "2", "--cometbft", fake},
                   only_fake),
        "error: cometbft testnet failed (exit status 3): ERROR: this fake cometbft does not "
        "'testnet'\n");
    // DIR in use.
    test::write_text(scratch / "file", "x");
    EXPECT_EQ(
        init_error(scratch, {"--dir", scratch / "file", "--validators", "1", "--cometbft", fake},
                   {"cometbft", "file"}),
        "error: --dir '" + scratch / "file" + "': exists and is not a directory\n");
    fs::remove(scratch / "file");
    fs::create_directories(dir + "/x");
    EXPECT_EQ(init_error(scratch, {"--dir", dir, "--validators", "1", "--cometbft", fake},
                         {"cometbft", "net"}),
              "error: --dir '" + dir + "': exists and is not empty\n");
    EXPECT_EQ(scratch.entries(), (std::vector<std::string>{"cometbft", "net"}));
    EXPECT_TRUE(fs::is_directory(dir + "/x"));  // untouched
}

TEST(cli_testnet, init_refuses_a_bad_app_setting_or_node_arg_leaving_nothing) {
    ScratchDir scratch;
    const std::string fake = fake_cometbft(scratch, "0.38.26");
    const std::vector<std::string> only_fake{"cometbft"};
    auto error_of = [&](std::vector<std::string> more) {
        std::vector<std::string> args{"--dir", scratch / "net", "--validators",
                                      "2",     "--cometbft",    fake};
        args.insert(args.end(), more.begin(), more.end());
        return init_error(scratch, args, only_fake);
    };
    EXPECT_EQ(error_of({"--app", "geth"}),
              "error: --app: expected barrel or kvstore, got 'geth'\n");
    EXPECT_EQ(error_of({"--timeout-propose", "0"}),
              "error: --timeout-propose: must be at least 1\n");
    EXPECT_EQ(error_of({"--timeout-propose", "3600001"}),
              "error: --timeout-propose: must be at most 3600000, got 3600001\n");
    EXPECT_EQ(error_of({"--mempool-size", "0"}), "error: --mempool-size: must be at least 1\n");
    EXPECT_EQ(error_of({"--mempool-size", "100000001"}),
              "error: --mempool-size: must be at most 100000000, got 100000001\n");
    EXPECT_EQ(error_of({"--mempool-size", "-1"}),
              "error: --mempool-size: expected an unsigned 64-bit integer, got '-1'\n");
    EXPECT_EQ(error_of({"--mempool-max-txs-bytes", "0"}),
              "error: --mempool-max-txs-bytes: must be at least 1\n");
    EXPECT_EQ(error_of({"--mempool-max-txs-bytes", "1099511627777"}),
              "error: --mempool-max-txs-bytes: must be at most 1099511627776, got 1099511627777\n");
    EXPECT_EQ(error_of({"--max-block-bytes", "1048575"}),
              "error: --max-block-bytes: must be at least 1048576\n");
    EXPECT_EQ(error_of({"--max-block-bytes", "104857601"}),
              "error: --max-block-bytes: must be at most 104857600, got 104857601\n");
    EXPECT_EQ(error_of({"--recheck", "no"}),
              "error: --recheck: expected true or false, got 'no'\n");
    EXPECT_EQ(error_of({"--create-empty-blocks", "1"}),
              "error: --create-empty-blocks: expected true or false, got '1'\n");
    EXPECT_EQ(error_of({"--recheck", "true", "--recheck", "false"}),
              "error: testnet init: option --recheck given twice\n");
    // What only a barrel network has.
    EXPECT_EQ(error_of({"--app", "kvstore", "--genesis", "g.json"}),
              "error: --genesis: a kvstore network has no barrel genesis (--app kvstore)\n");
    EXPECT_EQ(error_of({"--app", "kvstore", "--node-arg", "--txpool-max-pending"}),
              "error: --node-arg: a kvstore network runs no barrel-node\n");
    // What testnet start gives each node itself (run would refuse it given twice).
    EXPECT_EQ(error_of({"--node-arg", "--txpool-max-pending", "--node-arg", "--http"}),
              "error: --node-arg '--http': testnet start gives each node its own --http\n");
    EXPECT_EQ(error_of({"--node-arg", "--datadir=/x"}),
              "error: --node-arg '--datadir=/x': testnet start gives each node its own "
              "--datadir\n");
    EXPECT_EQ(error_of({"--node-arg"}),
              "error: testnet init: option --node-arg needs a value ARG\n");
    EXPECT_EQ(error_of({"--node-arg", "--snapshot-interval"}),
              "error: --node-arg '--snapshot-interval': testnet start gives each node its own "
              "--snapshot-interval\n");
    EXPECT_EQ(error_of({"--snapshot-interval", "1000000001"}),
              "error: --snapshot-interval: must be at most 1000000000, got 1000000001\n");
    EXPECT_EQ(error_of({"--snapshot-interval", "-5"}),
              "error: --snapshot-interval: expected an unsigned 64-bit integer, got '-5'\n");
    EXPECT_EQ(error_of({"--app", "kvstore", "--snapshot-interval", "10"}),
              "error: --snapshot-interval: a kvstore network runs no barrel-node (--app "
              "kvstore)\n");
}

TEST(cli_testnet, every_command_names_a_bad_option_before_anything_is_read) {
    ScratchDir scratch;
    const std::string dir = scratch / "none";  // no testnet there: the options are checked first
    const std::vector<std::string> init{"testnet", "init", "--dir", dir, "--validators", "1"};
    auto with = [](std::vector<std::string> args, const std::vector<std::string>& more) {
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {with(init, {"--bogus"}), "error: testnet init: unknown option '--bogus'\n"},
        {{"testnet", "init", "--validators", "1"},
         "error: testnet init: missing option --dir DIR\n"},
        {{"testnet", "init", "--dir", dir}, "error: testnet init: missing option --validators N\n"},
        {with(init, {"--validators", "2"}),
         "error: testnet init: option --validators given twice\n"},
        {with(init, {"--base-port"}), "error: testnet init: option --base-port needs a value P\n"},
        {with(init, {"--base-port", "0"}), "error: --base-port: must be at least 1\n"},
        {with(init, {"--base-port", "x"}),
         "error: --base-port: expected an unsigned 64-bit integer, got 'x'\n"},
        {with(init, {"--timeout-commit", "1ms"}),
         "error: --timeout-commit: expected an unsigned 64-bit integer, got '1ms'\n"},
        {with(init, {"--snapshot-interval", "x"}),
         "error: --snapshot-interval: expected an unsigned 64-bit integer, got 'x'\n"},
        {with(init, {"--hosts", ""}),
         "error: --hosts: expected one address per validator (1), got 0\n"},
        {with(init, {"--app", ""}), "error: --app: expected barrel or kvstore, got ''\n"},
        {{"testnet", "start", "--dir", dir, "--timeout", "3601"},
         "error: --timeout: must be at most 3600, got 3601\n"},
        {{"testnet", "start", "--dir", dir, "--timeout", "x"},
         "error: --timeout: expected an unsigned 64-bit integer, got 'x'\n"},
        {{"testnet", "start", "--dir", dir, "--node", "100"},
         "error: --node: must be at most 99, got 100\n"},
        {{"testnet", "stop", "--dir", dir, "--node", "-1"},
         "error: --node: expected an unsigned 64-bit integer, got '-1'\n"},
        {{"testnet", "stop", "--dir", dir, "--timeout", "5"},
         "error: testnet stop: unknown option '--timeout'\n"},
        {{"testnet", "join", "--dir", dir, "--node", "1"},
         "error: testnet join: unknown option '--node'\n"},
        {{"testnet", "join", "--dir", dir, "--timeout", "0"},
         "error: --timeout: must be at least 1\n"},
        {{"testnet", "start", "--dir"}, "error: testnet start: option --dir needs a value DIR\n"},
        {{"testnet", "start", "--dir", dir, "--dir", dir},
         "error: testnet start: option --dir given twice\n"},
        {{"testnet", "stop"}, "error: testnet stop: missing option --dir DIR\n"},
    };
    for (const auto& [args, expected] : cases) {
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, cli::kExitBadInput) << args.back();
        EXPECT_EQ(r.err, expected);
        EXPECT_EQ(r.out, "");
    }
    EXPECT_FALSE(fs::exists(dir));
}

TEST(cli_testnet, help_lists_each_option_once_with_its_default_and_range) {
    for (const char* cmd : {"init", "start", "stop", "join"}) {
        const auto r = run_cli({"testnet", cmd, "--help"});
        ASSERT_EQ(r.status, 0) << r.err;
        std::set<std::string> names;
        std::istringstream lines{r.out};
        for (std::string line; std::getline(lines, line);) {
            if (!line.starts_with("  --")) continue;
            const std::string name = line.substr(2, line.find(' ', 2) - 2);
            EXPECT_TRUE(names.insert(name).second) << cmd << ": " << name << " listed twice";
            const auto first = line.find("(default ");
            EXPECT_EQ(line.find("(default ", first + 1), std::string::npos) << line;
        }
    }
    const std::string init = run_cli({"testnet", "init", "--help"}).out;
    for (const char* line :
         {"  --validators N                     How many validators (1 to 100)\n",
          "(JSON-RPC) (1 to 65535) (default 26600)\n",
          "  --timeout-commit MS                CometBFT's pause after each block, in ms (0 to "
          "3600000) (default 1000)\n",
          "  --mempool-size N                   [mempool] size, in transactions (1 to 100000000) "
          "(default CometBFT's, 5000)\n",
          "0: none (0 to 1000000000) (default 100)\n"})
        EXPECT_NE(init.find(line), std::string::npos) << line << init;
    EXPECT_NE(run_cli({"testnet", "start", "--help"})
                  .out.find("  --timeout S       Seconds to wait for the nodes to answer (1 to "
                            "3600) (default 60)\n"),
              std::string::npos);
}

TEST(cli_testnet, init_kvstore_writes_the_same_network_running_cometbfts_kvstore) {
    REQUIRE_COMETBFT(cometbft);
    ScratchDir scratch;
    const std::string dir = scratch / "kv";
    const auto r = run_cli(
        {"testnet",        "init",    "--dir",       dir,     "--validators",      "3",
         "--app",          "kvstore", "--base-port", "31200", "--timeout-commit",  "200",
         "--mempool-size", "20000",   "--recheck",   "false", "--max-block-bytes", "2000000",
         "--cometbft",     cometbft});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("testnet of 3 validators in " + dir + ": CometBFT chain chain-"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(", application CometBFT's built-in kvstore (no barrel-node)\n"
                         "CometBFT settings: timeout_commit 200 ms, mempool_size 20000, "
                         "max_block_bytes 2000000, recheck false (the rest: CometBFT's defaults)\n"
                         "node  CometBFT RPC            P2P\n"
                         "0     http://127.0.0.1:31201  127.0.0.1:31200\n"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("31202"), std::string::npos) << r.out;  // no JSON-RPC port
    EXPECT_EQ(r.out.find("default genesis"), std::string::npos) << r.out;
    EXPECT_EQ(scratch.entries(), std::vector<std::string>{"kv"});
    EXPECT_FALSE(fs::exists(dir + "/genesis.json"));

    const auto net = tn::parse_testnet(test::read_text(dir + "/testnet.json"));
    ASSERT_TRUE(net) << net.error();
    EXPECT_EQ(net->app, tn::App::kvstore);
    EXPECT_EQ(net->settings.mempool_size, 20000u);
    EXPECT_EQ(net->settings.recheck, false);
    EXPECT_EQ(net->settings.max_block_bytes, 2'000'000u);
    EXPECT_EQ(net->settings.timeout_propose_ms, std::nullopt);
    ASSERT_EQ(net->nodes.size(), 3u);
    const std::string network_genesis = test::read_text(dir + "/node0/config/genesis.json");
    const auto doc = nlohmann::json::parse(network_genesis);
    EXPECT_FALSE(doc.contains("app_state"));
    EXPECT_EQ(doc["consensus_params"]["block"]["max_bytes"], "2000000");
    EXPECT_EQ(doc["validators"].size(), 3u);
    for (const auto& n : net->nodes) {
        const std::string toml = test::read_text(n.home + "/config/config.toml");
        EXPECT_EQ(toml_value(toml, "", "proxy_app"), "\"kvstore\"");
        EXPECT_EQ(toml_value(toml, "mempool", "size"), "20000");
        EXPECT_EQ(toml_value(toml, "mempool", "recheck"), "false");
        EXPECT_EQ(toml_value(toml, "mempool", "max_txs_bytes"), "1073741824");  // CometBFT's
        EXPECT_EQ(toml_value(toml, "consensus", "timeout_propose"), "\"3s\"");  // CometBFT's
        EXPECT_EQ(toml_value(toml, "consensus", "timeout_commit"), "\"200ms\"");
        EXPECT_EQ(toml_value(toml, "p2p", "laddr"),
                  "\"tcp://127.0.0.1:" + std::to_string(n.ports.p2p) + "\"");
        EXPECT_EQ(test::read_text(n.home + "/config/genesis.json"), network_genesis);
        EXPECT_FALSE(fs::exists(n.home + "/barrel"));
    }
}

TEST(cli_testnet, init_gives_every_node_the_settings_and_node_args) {
    REQUIRE_COMETBFT(cometbft);
    ScratchDir scratch;
    const std::string dir = scratch / "net";
    const auto r = run_cli({"testnet",
                            "init",
                            "--dir",
                            dir,
                            "--validators",
                            "2",
                            "--base-port",
                            "31300",
                            "--timeout-propose",
                            "500",
                            "--create-empty-blocks",
                            "false",
                            "--mempool-max-txs-bytes",
                            "100000000",
                            "--node-arg",
                            "--txpool-max-pending",
                            "--node-arg",
                            "40000",
                            "--cometbft",
                            cometbft});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("CometBFT settings: timeout_commit 1000 ms, timeout_propose 500 ms, "
                         "mempool_max_txs_bytes 100000000, create_empty_blocks false (the rest: "
                         "CometBFT's defaults)\n"
                         "each barrel-node run also gets: --txpool-max-pending 40000\n"
                         "state snapshots every 100 heights (a late node joins with: barrel-node "
                         "testnet join --dir " +
                         dir +
                         " --state-sync)\n"
                         "node  JSON-RPC                CometBFT RPC            P2P\n"),
              std::string::npos)
        << r.out;
    const auto net = tn::parse_testnet(test::read_text(dir + "/testnet.json"));
    ASSERT_TRUE(net) << net.error();
    EXPECT_EQ(net->app, tn::App::barrel);
    EXPECT_EQ(net->node_args, (std::vector<std::string>{"--txpool-max-pending", "40000"}));
    EXPECT_EQ(net->snapshot_interval, tn::kDefaultSnapshotInterval);
    EXPECT_EQ(net->settings.timeout_propose_ms, 500u);
    const auto doc = nlohmann::json::parse(test::read_text(dir + "/node1/config/genesis.json"));
    EXPECT_EQ(doc["consensus_params"]["block"]["max_bytes"], "22020096");  // CometBFT's
    const std::string toml = test::read_text(dir + "/node1/config/config.toml");
    EXPECT_EQ(toml_value(toml, "consensus", "timeout_propose"), "\"500ms\"");
    EXPECT_EQ(toml_value(toml, "consensus", "create_empty_blocks"), "false");
    EXPECT_EQ(toml_value(toml, "mempool", "max_txs_bytes"), "100000000");
    EXPECT_EQ(toml_value(toml, "mempool", "size"), "5000");  // CometBFT's
    EXPECT_EQ(toml_value(toml, "", "proxy_app"), "\"" + net->nodes[1].abci + "\"");
}

/// Sets an environment variable for a scope (the tests in this binary run one at a time).
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::optional<std::string>& value) : m_name{name} {
        if (const char* old = std::getenv(name)) m_old = old;
        if (value)
            ::setenv(name, value->c_str(), 1);
        else
            ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (m_old)
            ::setenv(m_name, m_old->c_str(), 1);
        else
            ::unsetenv(m_name);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

TEST(cli_testnet, init_finds_cometbft_on_path_or_says_how_to_get_it) {
    ScratchDir scratch;
    fs::create_directory(scratch / "bin");
    fs::create_directory(scratch / "home");
    const std::string dir = scratch / "net";
    {
        ScopedEnv path{"PATH", scratch / "bin"};
        ScopedEnv gopath{"GOPATH", std::nullopt};
        ScopedEnv home{"HOME", scratch / "home"};
        EXPECT_EQ(init_error(scratch, {"--dir", dir, "--validators", "1"}, {"bin", "home"}),
                  "error: no cometbft found (not on PATH, nor in $(go env GOPATH)/bin or "
                  "~/go/bin): build it with scripts/deps.sh --cometbft, or give --cometbft PATH\n");
        // On PATH: found (and run: the fake fails at `testnet`, which shows it was the one).
        ScratchDir bin_scratch;
        const std::string fake = fake_cometbft(bin_scratch, "0.38.26");
        {
            ScopedEnv on_path{"PATH", bin_scratch.path().string()};
            EXPECT_EQ(init_error(scratch, {"--dir", dir, "--validators", "1"}, {"bin", "home"}),
                      "error: cometbft testnet failed (exit status 3): ERROR: this fake cometbft "
                      "does not 'testnet'\n");
        }
        // In ~/go/bin, as `go install` puts it by default.
        fs::create_directories(scratch / "home/go/bin");
        fs::copy_file(fake, scratch / "home/go/bin/cometbft");
        EXPECT_EQ(init_error(scratch, {"--dir", dir, "--validators", "1"}, {"bin", "home"}),
                  "error: cometbft testnet failed (exit status 3): ERROR: this fake cometbft does "
                  "not 'testnet'\n");
    }
}

// ---- start, stop, join: their argument errors --------------------------------------------------

TEST(cli_testnet, start_stop_and_join_need_a_testnet_and_a_node_it_has) {
    ScratchDir scratch;
    const std::string dir = scratch / "none";
    for (const char* cmd : {"start", "stop", "join"}) {
        const auto r = run_cli({"testnet", cmd, "--dir", dir});
        EXPECT_EQ(r.status, cli::kExitBadInput);
        EXPECT_EQ(r.err, "error: no testnet in '" + dir +
                             "' (no testnet.json): make one with barrel-node testnet init --dir " +
                             dir + "\n");
    }
    // A testnet.json written here by hand: two nodes, nothing running.
    tn::Testnet net;
    net.dir = scratch.path().string();
    net.chain_id = "c";
    for (size_t i = 0; i < 2; ++i)
        net.nodes.push_back(*tn::make_node(net.dir, i, true, 26600, std::string(40, 'a')));
    test::write_text(scratch / "testnet.json", tn::to_json_text(net));
    auto r = run_cli({"testnet", "stop", "--dir", net.dir, "--node", "2"});
    EXPECT_EQ(r.status, cli::kExitBadInput);
    EXPECT_EQ(r.err, "error: --node 2: the testnet has 2 nodes (0 to 1)\n");
    r = run_cli({"testnet", "stop", "--dir", net.dir});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "node 0 is not running\nnode 1 is not running\n");
    r = run_cli({"testnet", "start", "--dir", net.dir, "--timeout", "0"});
    EXPECT_EQ(r.status, cli::kExitBadInput);
    EXPECT_EQ(r.err, "error: --timeout: must be at least 1\n");
    // join --state-sync: two running validators to trust, asked before anything is made.
    r = run_cli({"testnet", "join", "--dir", net.dir, "--state-sync"});
    EXPECT_EQ(r.status, cli::kExitBadInput);
    EXPECT_TRUE(
        r.err.starts_with("error: --state-sync: CometBFT's light client needs two running "
                          "validators' RPC, and 0 answered; node 0: "))
        << r.err;
    EXPECT_TRUE(r.err.ends_with(" (start the network first: barrel-node testnet start)\n"))
        << r.err;
    EXPECT_FALSE(fs::exists(net.dir + "/node2"));
    // join: the new node's ports must fit.
    tn::Testnet high = net;
    high.dir = scratch / "high";
    high.base_port = 65500;
    high.nodes.clear();
    for (size_t i = 0; i < 4; ++i)
        high.nodes.push_back(*tn::make_node(high.dir, i, true, 65500, std::string(40, 'a')));
    fs::create_directories(high.dir);
    test::write_text(high.dir + "/testnet.json", tn::to_json_text(high));
    r = run_cli({"testnet", "join", "--dir", high.dir});
    EXPECT_EQ(r.status, cli::kExitBadInput);
    EXPECT_EQ(r.err,
              "error: the ports of node 4 from base port 65500 run past 65535 (node 4 needs 65540 "
              "to 65543)\n");
    EXPECT_EQ(std::distance(fs::directory_iterator(high.dir), fs::directory_iterator{}),
              1);  // testnet.json alone
    // A testnet.json moved from where it was made.
    fs::create_directories(scratch / "moved");
    test::write_text(scratch / "moved/testnet.json", tn::to_json_text(net));
    r = run_cli({"testnet", "stop", "--dir", scratch / "moved"});
    EXPECT_EQ(r.status, cli::kExitBadInput);
    EXPECT_EQ(r.err, "error: '" + scratch / "moved/testnet.json" + "': made for '" + net.dir +
                         "' (the paths in its nodes' config.toml are absolute: make the testnet "
                         "again there)\n");
}

TEST(cli_testnet, stop_knows_a_kvstore_node_has_only_its_cometbft) {
    ScratchDir scratch;
    tn::Testnet net;
    net.dir = scratch.path().string();
    net.chain_id = "c";
    net.app = tn::App::kvstore;
    for (size_t i = 0; i < 2; ++i)
        net.nodes.push_back(
            *tn::make_node(net.dir, i, true, 26600, std::string(40, 'a'), tn::App::kvstore));
    test::write_text(scratch / "testnet.json", tn::to_json_text(net));
    // A pid file naming this test's own process, which does not have the node's home among
    // its arguments: not taken for the node's cometbft.
    fs::create_directories(net.nodes[1].home);
    test::write_text(net.nodes[1].cometbft_pid_file(), std::to_string(::getpid()) + "\n");
    const auto r = run_cli({"testnet", "stop", "--dir", net.dir});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "node 0 is not running\nnode 1 is not running\n");
    EXPECT_FALSE(fs::exists(net.nodes[1].cometbft_pid_file()));  // a stale pid file goes
}

// ---- Processes -------------------------------------------------------------------------------

TEST(cli_testnet, run_program_reports_output_status_and_a_missing_program) {
    const auto ok = tn::run_program({"/bin/sh", "-c", "echo out; echo err >&2; exit 4"});
    ASSERT_TRUE(ok) << ok.error();
    EXPECT_EQ(ok->status, 4);
    EXPECT_EQ(ok->output, "out\nerr\n");
    const auto missing = tn::run_program({"/nonexistent/cometbft", "version"});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), "cannot run '/nonexistent/cometbft': No such file or directory");
}

TEST(cli_testnet, a_detached_process_is_found_by_its_pid_file_and_stopped_with_its_group) {
    ScratchDir scratch;
    const std::string log = scratch / "x.log";
    const std::string marker = scratch / "marker";
    // A shell (the group leader) with a child of its own: signalling the group stops both.
    const auto pid =
        tn::spawn_detached({"/bin/sh", "-c", "echo started; sleep 60 & wait", marker}, log);
    ASSERT_TRUE(pid) << pid.error();
    EXPECT_TRUE(tn::process_running(*pid, marker));
    EXPECT_FALSE(tn::process_running(*pid, "another marker"));  // a reused pid is not taken
    test::write_text(scratch / "x.pid", std::to_string(*pid) + "\n");
    EXPECT_EQ(tn::running_pid(scratch / "x.pid", marker), *pid);
    EXPECT_EQ(::getpgid(*pid), *pid);
    EXPECT_NE(::getsid(*pid), ::getsid(0));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (tn::tail_of_file(log, 5) != "started\n" && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(tn::tail_of_file(log, 5), "started\n");
    tn::signal_group(*pid, SIGTERM);
    while (tn::process_running(*pid, marker) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(tn::process_running(*pid, marker));
    EXPECT_EQ(tn::running_pid(scratch / "x.pid", marker), std::nullopt);
    const auto missing = tn::spawn_detached({"/nonexistent/barrel-node", "run"}, log);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(),
              "cannot start '/nonexistent/barrel-node': No such file or directory");
    const auto no_log = tn::spawn_detached({"/bin/true"}, scratch / "no/such/dir/x.log");
    ASSERT_FALSE(no_log);
    EXPECT_EQ(no_log.error(), "cannot open the log '" + scratch / "no/such/dir/x.log" +
                                  "': No such file or directory");
}

TEST(cli_testnet, a_program_starts_with_no_signal_blocked_or_ignored_whatever_its_parent_had) {
    // barrel-node blocks SIGTERM in a thread that runs a node (sigwait) and ignores SIGXFSZ;
    // a masked or ignored signal is inherited across fork and exec, so a cometbft started from
    // such a thread would not stop on SIGTERM (stop would wait 20 s and SIGKILL it).
    sigset_t term, old_mask;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &term, &old_mask), 0);
    const auto old_xfsz = ::signal(SIGXFSZ, SIG_IGN);
    const std::vector<std::string> status{"/bin/grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"};
    const auto ran = tn::run_program(status);
    ScratchDir scratch;
    const auto spawned = tn::spawn_detached(status, scratch / "status.log");
    ::signal(SIGXFSZ, old_xfsz);
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    const std::string clean = "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n";
    ASSERT_TRUE(ran) << ran.error();
    EXPECT_EQ(ran->output, clean);
    ASSERT_TRUE(spawned) << spawned.error();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (tn::tail_of_file(scratch / "status.log", 5).size() < clean.size() &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(tn::tail_of_file(scratch / "status.log", 5), clean);
}

TEST(cli_testnet, the_probes_fail_with_a_reason_when_nothing_answers) {
    // Port 1 on loopback: nothing listens there without root.
    EXPECT_EQ(tn::cometbft_height("http://127.0.0.1:1").error(),
              "http://127.0.0.1:1/status: cannot connect: Connection refused");
    EXPECT_EQ(tn::barrel_height("http://127.0.0.1:1").error(),
              "http://127.0.0.1:1: cannot connect: Connection refused");
    EXPECT_EQ(tn::barrel_height("https://x").error(), "expected http://HOST:PORT, got 'https://x'");
}

}  // namespace
}  // namespace barrel
