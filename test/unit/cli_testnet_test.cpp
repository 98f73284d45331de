// `barrel-node testnet`: the layout, the edits to CometBFT's files, testnet.json, `init` against
// the real `cometbft` (v0.38, from scripts/deps.sh --cometbft; the tests that need it are
// skipped, saying so, where it is not installed), every bad argument with its exact message and
// nothing left behind, and the process helpers `start` and `stop` use. The network itself runs
// in test/network (scripts/test.sh's network test).

#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/store/store.hpp>

#include "cli/testnet.hpp"
#include "cli_run.hpp"
#include "test_files.hpp"
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
#include <thread>

namespace barrel {
namespace {

namespace fs = std::filesystem;
namespace tn = cli::testnet;
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
        auto doc = nlohmann::json::parse(text);
        edit(doc);
        const auto r = tn::parse_testnet(doc.dump());
        return r ? std::string{"accepted"} : r.error();
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

TEST(cli_testnet, configure_node_edits_the_config_cometbft_writes) {
    REQUIRE_COMETBFT(cometbft);
    ScratchDir scratch;
    const auto r = tn::run_program({cometbft, "init", "--home", scratch / "home"});
    ASSERT_TRUE(r) << r.error();
    ASSERT_EQ(r->status, 0) << r->output;
    const std::string original = test::read_text(scratch / "home/config/config.toml");
    const auto node = tn::make_node("/tmp/net", 1, true, 26600, std::string(40, 'a'));
    ASSERT_TRUE(node);
    tn::NodeConfig config{&*node, {"x@127.0.0.1:26600", "y@127.0.0.1:26620"}, 250};
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
    test::write_text(scratch / "home/config/config.toml", *edited);
    const auto shown = tn::run_program({cometbft, "show-node-id", "--home", scratch / "home"});
    ASSERT_TRUE(shown);
    EXPECT_EQ(shown->status, 0) << shown->output;
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
        "error: --validators: expected 1 to 100, got 0\n");
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "101", "--cometbft", fake}, only_fake),
        "error: --validators: expected 1 to 100, got 101\n");
    EXPECT_EQ(init_error(scratch, {"--dir", dir, "--validators", "x"}, only_fake),
              "error: --validators: expected an unsigned 64-bit integer, got 'x'\n");
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "4", "--base-port", "65510"}, only_fake),
        "error: --base-port: the ports of node 3 from base port 65510 run past 65535 (node 3 "
        "needs 65540 to 65543)\n");
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "4", "--base-port", "70000"}, only_fake),
        "error: --base-port: expected a port from 1 to 65535, got 70000\n");
    EXPECT_EQ(
        init_error(scratch, {"--dir", dir, "--validators", "1", "--timeout-commit", "3600001"},
                   only_fake),
        "error: --timeout-commit: expected at most 3600000 ms, got 3600001\n");
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
    EXPECT_EQ(r.err, "error: --timeout: expected 1 to 3600 seconds, got 0\n");
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

TEST(cli_testnet, the_probes_fail_with_a_reason_when_nothing_answers) {
    // Port 1 on loopback: nothing listens there without root.
    const auto r = tn::http_request("http://127.0.0.1:1/status", std::nullopt,
                                    std::chrono::milliseconds(2000));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "Connection refused");
    EXPECT_FALSE(tn::cometbft_height("http://127.0.0.1:1"));
    EXPECT_EQ(tn::barrel_height("http://localhost:1").error(),
              "not a numeric IPv4 host: 'localhost'");
    EXPECT_EQ(tn::http_request("https://x", std::nullopt, std::chrono::milliseconds(1)).error(),
              "not an http:// URL: 'https://x'");
}

}  // namespace
}  // namespace barrel
