// barrel-load --network's pure parts: kvstore's transactions (size, format), the block
// size the genesis is made for, testnet init's arguments, testnet.json's nodes, the readers of
// CometBFT's and barrel's answers (a batch of one answered alone, a height not there yet), the
// catch-up and dip figures, the perturbations' names and report, and the medians of the report.

#include <barrel/core/hex.hpp>

#include "net_load.hpp"
#include "net_report.hpp"
#include "net_run.hpp"
#include "net_shared.hpp"
#include "network.hpp"
#include "responses.hpp"
#include <gtest/gtest.h>

#include <algorithm>

using namespace barrel;
using namespace barrel::load;

TEST(load_network, kv_transactions_are_unique_key_value_pairs_of_the_size_asked) {
    const std::string tx = kv_transaction(42, 110);
    EXPECT_EQ(tx.size(), 110u);
    EXPECT_EQ(tx.substr(0, 18), "k000000000042=abcd");
    // kvstore's rule (abci/example/kvstore isValidTx): one '=', no ':', not first nor last.
    EXPECT_EQ(std::count(tx.begin(), tx.end(), '='), 1);
    EXPECT_EQ(tx.find(':'), std::string::npos);
    EXPECT_NE(tx.back(), '=');
    EXPECT_NE(kv_transaction(1, 110), kv_transaction(2, 110));
    // Shorter than its key: the key and one byte of value.
    EXPECT_EQ(kv_transaction(7, 3), "k000000000007=a");
    EXPECT_EQ(kv_transaction(7, 41).substr(14), "abcdefghijklmnopqrstuvwxyza");
}

TEST(load_network, block_size_counts_each_transactions_tag_and_length) {
    // 110 bytes + tag + 1 length byte: 112 per transaction.
    EXPECT_EQ(block_txs_for(22'020'096, 110), 22'020'096u / 112);
    // 200 bytes need 2 length bytes.
    EXPECT_EQ(block_txs_for(2030, 200), 10u);
    EXPECT_EQ(block_txs_for(100, 110), 0u);
}

TEST(load_network, init_arguments_per_app) {
    TestnetSettings s;
    s.validators = 4;
    s.base_port = 27100;
    s.timeout_commit_ms = 250;
    s.comet_args = {"--recheck", "false"};
    s.genesis_path = "/g.json";
    s.node_args = {"--max-block-txs=9", "--txpool-max-pending=100"};
    const std::vector<std::string> common{"init", "--dir",       "/w/run1", "--validators",
                                          "4",    "--base-port", "27100",   "--timeout-commit",
                                          "250"};
    auto barrel = common;
    barrel.insert(barrel.end(), {"--genesis", "/g.json", "--node-arg=--max-block-txs=9",
                                 "--node-arg=--txpool-max-pending=100", "--recheck", "false"});
    EXPECT_EQ(init_arguments("/w/run1", s), barrel);
    s.app = App::kvstore;
    auto kv = common;
    kv.insert(kv.end(), {"--app", "kvstore", "--recheck", "false"});
    EXPECT_EQ(init_arguments("/w/run1", s), kv);
}

TEST(load_network, testnet_json_nodes) {
    // What `barrel-node testnet init` writes, read by its own reader.
    testnet::Testnet net;
    net.dir = "/n";
    net.chain_id = "c";
    net.base_port = 27000;
    net.nodes.push_back(*testnet::make_node("/n", 0, true, 27000, std::string(40, 'a')));
    const auto barrel = parse_nodes(testnet::to_json_text(net));
    ASSERT_TRUE(barrel) << barrel.error();
    EXPECT_EQ(barrel->at(0).json_rpc->endpoint.port, 27002);
    EXPECT_EQ(barrel->at(0).cometbft_rpc.endpoint.port, 27001);
    EXPECT_EQ(barrel->at(0).layout.barrel_pid_file(), "/n/node0/barrel.pid");
    EXPECT_EQ(barrel->at(0).layout.cometbft_pid_file(), "/n/node0/cometbft.pid");
    net.app = App::kvstore;
    net.nodes = {*testnet::make_node("/n", 0, true, 27000, std::string(40, 'a'), App::kvstore)};
    const auto kv = parse_nodes(testnet::to_json_text(net));
    ASSERT_TRUE(kv) << kv.error();
    EXPECT_FALSE(kv->at(0).json_rpc);
    EXPECT_EQ(kv->at(0).cometbft_rpc.endpoint.port, 27001);
    // The reader's errors, as `barrel-node testnet` says them.
    EXPECT_EQ(parse_nodes("[").error(), "not a JSON object");
    EXPECT_EQ(parse_nodes("{}").error(), "chain_id: missing");
}

TEST(load_network, broadcast_answers_take_the_error_data_and_a_lone_answer) {
    ResponseReader reader;
    const auto batch = reader.broadcast_answers(
        R"([{"jsonrpc":"2.0","id":3,"result":{"code":0,"hash":"AB"}},
            {"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error",
             "data":"tx already exists in cache"}}])",
        2);
    ASSERT_TRUE(batch) << batch.error();
    EXPECT_EQ(batch->at(0).id, 3u);
    EXPECT_FALSE(batch->at(0).error);
    EXPECT_EQ(batch->at(1).error, "tx already exists in cache");
    // A batch of one call is answered as that call's answer (CometBFT v0.38).
    const auto one = reader.broadcast_answers(R"({"jsonrpc":"2.0","id":9,"result":{}})", 1);
    ASSERT_TRUE(one) << one.error();
    EXPECT_EQ(one->at(0).id, 9u);
    EXPECT_EQ(reader.broadcast_answers(R"({"id":9,"result":{}})", 2).error(),
              R"(a batch of 2 was answered by {"id":9,"result":{}})");
    EXPECT_EQ(reader.broadcast_answers(R"([{"id":1}])", 1).error(),
              "an answer has neither result nor error");
}

TEST(load_network, comet_block_reads_hash_and_txs_and_a_height_not_there_yet) {
    ResponseReader reader;
    const auto block = reader.comet_block(
        R"({"jsonrpc":"2.0","id":0,"result":{"block_id":{"hash":"C2AB"},
            "block":{"data":{"txs":["Zm9v","YmFy"]}}}})");
    ASSERT_TRUE(block) << block.error();
    ASSERT_TRUE(*block);
    EXPECT_EQ((*block)->hash, "C2AB");
    EXPECT_EQ((*block)->transactions, (std::vector<std::string>{"Zm9v", "YmFy"}));
    const auto empty = reader.comet_block(
        R"({"result":{"block_id":{"hash":"00"},"block":{"data":{"txs":null}}}})");
    ASSERT_TRUE(empty && *empty);
    EXPECT_TRUE((*empty)->transactions.empty());
    const auto not_yet = reader.comet_block(
        R"({"error":{"code":-32603,"message":"Internal error","data":"height 9 must be less )"
        R"(than or equal to the current blockchain height 8"}})");
    ASSERT_TRUE(not_yet) << not_yet.error();
    EXPECT_FALSE(*not_yet);
    EXPECT_EQ(reader.comet_block(R"({"error":{"message":"Internal error","data":"boom"}})").error(),
              "Internal error: boom");
    EXPECT_EQ(reader.comet_block(R"({"result":{"block":{}}})").error(),
              "a block has no block_id.hash");
}

TEST(load_network, eth_block_reads_the_block_hash_and_its_transactions) {
    ResponseReader reader;
    const std::string h1 = "0x" + std::string(64, '1'), h2 = "0x" + std::string(64, 'a');
    const auto block = reader.eth_block(R"({"jsonrpc":"2.0","id":0,"result":{"hash":")" + h1 +
                                        R"(","transactions":[")" + h2 + R"("]}})");
    ASSERT_TRUE(block) << block.error();
    ASSERT_TRUE(*block);
    EXPECT_EQ(to_hex((*block)->hash), h1);
    ASSERT_EQ((*block)->transactions.size(), 1u);
    EXPECT_EQ(to_hex((*block)->transactions[0]), h2);
    const auto none = reader.eth_block(R"({"jsonrpc":"2.0","id":0,"result":null})");
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
    EXPECT_EQ(reader.eth_block(R"({"result":{"transactions":[]}})").error(), "a block has no hash");
    EXPECT_EQ(reader.eth_block(R"({"error":{"message":"nope"}})").error(), "nope");
}

TEST(load_network, dip_is_the_tps_before_during_and_after_the_outage) {
    NetRunResult r;
    r.txs = 300;
    // 100 mined per second until the kill at 1 s, none while down, 200 per second after 2 s.
    for (int k = 1; k <= 30; ++k) {
        const double t = k / 10.0;
        const double mined = t <= 1 ? 100 * t : t <= 2 ? 100 : 100 + 200 * (t - 2);
        r.timeline.push_back({t, 300, mined, mined});
    }
    EXPECT_TRUE(dip_json(r).is_null());  // no kill
    r.killed_at_s = 1.0;
    r.restarted_at_s = 2.0;
    const auto dip = dip_json(r);
    EXPECT_NEAR(dip["before_kill"].get<double>(), 100, 1e-6);
    EXPECT_NEAR(dip["node_down"].get<double>(), 0, 1e-6);
    EXPECT_NEAR(dip["after_restart"].get<double>(), 200, 1e-6);
}

TEST(load_network, medians_and_the_apps_ratio) {
    std::vector<NetRunResult> barrel(3), kvstore(2);
    for (size_t k = 0; k < 3; ++k) {
        barrel[k].txs = barrel[k].accepted = 10;
        barrel[k].end_to_end_tps = 100.0 * static_cast<double>(k + 1);
        barrel[k].nodes = {NodeUsage{1.0 + static_cast<double>(k), 2.0, 50, 40, 48, 40, 70, 4, 1}};
    }
    kvstore[0].end_to_end_tps = 300;
    kvstore[1].end_to_end_tps = 500;
    const auto m = medians(barrel);
    EXPECT_EQ(m["end_to_end_tps"], 200.0);
    EXPECT_EQ(m["nodes"]["0"]["cpu_s"]["barrel_node"], 2.0);
    EXPECT_EQ(m["nodes"]["0"]["rss_mid_mib"]["barrel_node"], 48.0);
    EXPECT_EQ(m["nodes"]["0"]["watcher"]["asks"], 70.0);
    EXPECT_EQ(m["nodes"]["0"]["watcher"]["subscriptions"], 1.0);
    // barrel-node grew from 48 to 50 MiB over the second half, cometbft not at all.
    EXPECT_EQ(rss_growth_text(m), "+4.2% +0.0%");
    EXPECT_TRUE(m["checks"]["passed"].get<bool>());
    EXPECT_EQ(app_ratio(barrel, kvstore), 0.5);  // 200 / median(300, 500)
    EXPECT_FALSE(app_ratio(barrel, {}));
    barrel[1].hash_mismatches = 1;
    EXPECT_FALSE(medians(barrel)["checks"]["passed"].get<bool>());
    const std::string text = network_text_report("heading", barrel, kvstore);
    EXPECT_NE(text.find("barrel / kvstore end-to-end TPS: 0.50 (medians)"), std::string::npos);
    EXPECT_NE(text.find("BLOCK HASHES DIFFER"), std::string::npos);
}

TEST(load_network, catch_up_ends_when_the_killed_node_has_the_others_height) {
    using net::Clock;
    net::Shared sh{1, 3};
    const auto t0 = Clock::time_point{} + std::chrono::hours{1};
    auto at = [&](double s) {
        return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    };
    // Nodes 0 and 2 reach height h at h/2 s (1 to 10); node 1 is killed after height 2 and,
    // restarted at 3.5 s, block-syncs 3 to 7 from 3.6 s to 3.8 s: behind the others until 7,
    // which it has at 3.8 s, before the others' 8 (at 4 s): caught up 0.3 s after the restart.
    for (const size_t k : {0, 2})
        for (uint64_t h = 1; h <= 10; ++h)
            sh.seen[k]->height_time[h] = at(static_cast<double>(h) / 2);
    sh.seen[1]->height_time = {{1, at(0.5)}, {2, at(1)},    {3, at(3.6)}, {4, at(3.65)},
                               {5, at(3.7)}, {6, at(3.75)}, {7, at(3.8)}};
    NetRunResult r;
    r.killed_node = 1;
    r.restarted_at_s = 3.5;
    net::catch_up(sh, t0, r);
    ASSERT_TRUE(r.catch_up_s);
    EXPECT_NEAR(*r.catch_up_s, 0.3, 1e-6);
    // Never caught up: nothing.
    for (const uint64_t h : {4, 5, 6, 7}) sh.seen[1]->height_time.erase(h);
    r.catch_up_s.reset();
    net::catch_up(sh, t0, r);
    EXPECT_FALSE(r.catch_up_s);
}

TEST(load_network, perturbations_by_name_and_in_the_report) {
    for (const auto p : {Perturbation::kill, Perturbation::pause, Perturbation::disconnect,
                         Perturbation::partition})
        EXPECT_EQ(parse_perturbation(perturbation_name(p)), p);
    EXPECT_EQ(perturbation_name(Perturbation::partition), "partition");
    EXPECT_FALSE(parse_perturbation("bogus"));
    EXPECT_FALSE(parse_perturbation(""));

    NetRunResult r;
    r.txs = r.accepted = 10;
    EXPECT_TRUE(to_json(r)["fault"].is_null());
    r.killed_node = 3;
    r.perturbation = Perturbation::pause;
    r.killed_at_s = 3.0;
    r.restarted_at_s = 13.0;
    r.catch_up_s = 4.25;
    r.timeline = {{1, 10, 1, 1}, {20, 10, 10, 10}};
    const auto fault = to_json(r)["fault"];
    EXPECT_EQ(fault["kind"], "pause");
    EXPECT_EQ(fault["node"], 3);
    const std::string text = network_text_report("heading", {r}, {});
    EXPECT_NE(text.find("pause node 3: 3.0 s, 13.0 s, 4.25 s"), std::string::npos) << text;
}

TEST(load_network, init_is_given_each_validators_host_when_it_has_one) {
    TestnetSettings s;
    s.validators = 2;
    const auto loopback = init_arguments("/w", s);
    EXPECT_EQ(std::count(loopback.begin(), loopback.end(), "--hosts"), 0);
    s.hosts = {"10.77.0.1", "10.77.0.2"};
    const auto args = init_arguments("/w", s);
    const auto at = std::find(args.begin(), args.end(), "--hosts");
    ASSERT_NE(at, args.end());
    EXPECT_EQ(*(at + 1), "10.77.0.1,10.77.0.2");
}
