// A node that holds no blocks below its earliest (pruned with --retain-blocks, or state-synced):
// the blocks, transactions and receipts it does not hold are answered null, `earliest` is the
// first block it holds, and a log query that needs older blocks gets go-ethereum's pruned-history
// error (code 4444, "pruned history unavailable": core/history/historymode.go).

#include <barrel/block/block.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/store/store.hpp>

#include "http_client.hpp"
#include "node_parts.hpp"
#include "rpc/service.hpp"
#include "store/testing.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

namespace barrel::rpc {
namespace {

class RpcPruned : public ::testing::Test {
protected:
    RpcPruned()
        : workload{test::generate_or_throw(
              {.seed = 7, .blocks = 6, .txs = 5, .accounts = 10, .mix = gen::Mix::transfer})},
          parts{store::Store::init(dir.path() / "d", workload.genesis, {.retain_blocks = 2})
                    .value()} {
        parts.import(workload.blocks);
        store::testing::wait_for_pruner(*parts.store);
        EXPECT_EQ(parts.store->earliest(), 5u);  // head 6, 2 kept
        node.emplace(Node{*parts.store, parts.pool, "barrel/test"});
        service.emplace(*node, Limits{}, HttpOptions{.port = 0});
        EXPECT_TRUE(service->start().has_value());
        client.emplace(service->port());
    }

    json call(std::string_view method, json params) {
        const json request = {
            {"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}};
        return json::parse(client->post(request.dump()).body());
    }
    json result(std::string_view method, json params) {
        const json r = call(method, params);
        EXPECT_TRUE(r.contains("result")) << method << ": " << r.dump();
        return r.value("result", json{});
    }
    std::pair<int, std::string> error(std::string_view method, json params) {
        const json r = call(method, params);
        EXPECT_TRUE(r.contains("error")) << method << ": " << r.dump();
        if (!r.contains("error")) return {};
        return {r["error"]["code"].get<int>(), r["error"]["message"].get<std::string>()};
    }

    /// Block `n` (1-based) as generated.
    block::Block block(size_t n) const {
        return block::decode_block(workload.blocks[n - 1]).value();
    }

    test::ScratchDir dir;
    gen::Workload workload;
    test::NodeParts parts;
    std::optional<Node> node;
    std::optional<Service> service;
    std::optional<test::Client> client;
};

const std::pair<int, std::string> kPruned{4444, "pruned history unavailable"};

TEST_F(RpcPruned, blocks_transactions_and_receipts_not_held_are_null) {
    const block::Block pruned = block(3), kept = block(5);
    const std::string pruned_tx = to_hex(pruned.tx_hashes.at(0)),
                      kept_tx = to_hex(kept.tx_hashes.at(0));
    EXPECT_TRUE(result("eth_getBlockByNumber", {"0x3", false}).is_null());
    EXPECT_TRUE(result("eth_getBlockByNumber", {"0x4", true}).is_null());
    EXPECT_TRUE(result("eth_getBlockByHash", {to_hex(pruned.hash), false}).is_null());
    EXPECT_TRUE(result("eth_getBlockTransactionCountByNumber", {"0x3"}).is_null());
    EXPECT_TRUE(result("eth_getBlockTransactionCountByHash", {to_hex(pruned.hash)}).is_null());
    EXPECT_TRUE(result("eth_getTransactionByBlockNumberAndIndex", {"0x3", "0x0"}).is_null());
    EXPECT_TRUE(result("eth_getTransactionByHash", {pruned_tx}).is_null());
    EXPECT_TRUE(result("eth_getTransactionReceipt", {pruned_tx}).is_null());
    // Held: the kept blocks, whole, and the genesis.
    EXPECT_EQ(result("eth_getBlockByNumber", {"0x5", false})["hash"], to_hex(kept.hash));
    EXPECT_EQ(result("eth_getBlockByHash", {to_hex(kept.hash), true})["transactions"].size(),
              kept.size());
    EXPECT_EQ(result("eth_getTransactionByHash", {kept_tx})["blockNumber"], "0x5");
    EXPECT_EQ(result("eth_getTransactionReceipt", {kept_tx})["blockNumber"], "0x5");
    EXPECT_EQ(result("eth_getBlockByNumber", {"0x0", false})["number"], "0x0");
}

TEST_F(RpcPruned, earliest_is_the_first_block_held) {
    EXPECT_EQ(result("eth_getBlockByNumber", {"earliest", false})["number"], "0x5");
    EXPECT_EQ(result("eth_getBlockTransactionCountByNumber", {"earliest"}),
              to_hex_quantity(uint64_t{block(5).size()}));
    // eth_feeHistory reaches back to it, no further.
    EXPECT_EQ(result("eth_feeHistory", {"0x400", "latest", json::array()})["oldestBlock"], "0x5");
}

TEST_F(RpcPruned, log_ranges_that_need_pruned_blocks_get_go_ethereums_pruned_history_error) {
    EXPECT_EQ(error("eth_getLogs", {{{"fromBlock", "0x4"}}}), kPruned);
    EXPECT_EQ(error("eth_getLogs", {{{"fromBlock", "0x0"}, {"toBlock", "0x6"}}}), kPruned);
    EXPECT_EQ(error("eth_newFilter", {{{"fromBlock", "0x1"}}}), kPruned);
    EXPECT_EQ(result("eth_getLogs", {{{"fromBlock", "earliest"}}}), json::array());
    EXPECT_EQ(result("eth_getLogs", {{{"fromBlock", "0x5"}, {"toBlock", "latest"}}}),
              json::array());
    EXPECT_EQ(result("eth_getLogs", json::array({json::object()})), json::array());
    EXPECT_TRUE(result("eth_newFilter", {{{"fromBlock", "0x5"}}}).is_string());
    EXPECT_TRUE(result("eth_newFilter", {{{"fromBlock", "earliest"}}}).is_string());
}

}  // namespace
}  // namespace barrel::rpc
