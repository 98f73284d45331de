// The JSON-RPC methods over a real datadir and pool, each call sent through a real socket to the
// node's service: each method's result in Ethereum's shape, and each error code with its message.

#include <barrel/block/block.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/exec/dag_transfer.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/gen/transfer.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/store/store.hpp>

#include "http_client.hpp"
#include "node_parts.hpp"
#include "rlp_build.hpp"
#include "rpc/eth_json.hpp"
#include "rpc/service.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

namespace barrel::rpc {
namespace {

constexpr uint64_t kSeed = 5;

class RpcMethods : public ::testing::Test {
protected:
    RpcMethods()
        : workload{test::generate_or_throw(
              {.seed = kSeed, .blocks = 2, .txs = 20, .accounts = 10, .mix = gen::Mix::mixed})},
          parts{store::Store::init(dir.path() / "d", workload.genesis).value()} {
        parts.import(workload.blocks);
        node.emplace(Node{*parts.store, parts.pool, "barrel/test"});
        service.emplace(*node, Limits{}, HttpOptions{.port = 0});
        EXPECT_TRUE(service->start().has_value());
        client.emplace(service->port());
    }

    /// The response body of a request body, over HTTP.
    std::string send(const std::string& body) {
        const auto res = client->post(body);
        EXPECT_EQ(res.result_int(), 200u);
        return res.body();
    }

    /// The response object of one call.
    json call(std::string_view method, json params = json::array()) {
        const json request = {
            {"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}};
        return json::parse(send(request.dump()));
    }
    json result(std::string_view method, json params = json::array()) {
        const json r = call(method, std::move(params));
        EXPECT_TRUE(r.contains("result")) << method << ": " << r.dump();
        return r.value("result", json{});
    }
    /// The error of a call: {code, message}.
    std::pair<int, std::string> error(std::string_view method, json params = json::array()) {
        const json r = call(method, std::move(params));
        EXPECT_TRUE(r.contains("error")) << method << ": " << r.dump();
        if (!r.contains("error")) return {};
        return {r["error"]["code"].get<int>(), r["error"]["message"].get<std::string>()};
    }

    Address account(size_t i) const { return *tx::address_of(gen::account_key(kSeed, i)); }

    /// A signed transfer from generated account `i` at its current nonce (+ offset).
    Bytes transfer(size_t i, uint64_t nonce_offset = 0, u256 fee = 2'000'000'000) {
        const uint64_t nonce = parts.store->account(account(i)).value().value().nonce;
        return gen::signed_transfer({.key = gen::account_key(kSeed, i),
                                     .to = account(i + 1),
                                     .nonce = nonce + nonce_offset,
                                     .fee_cap = fee,
                                     .value = 5});
    }

    test::ScratchDir dir;
    gen::Workload workload;
    test::NodeParts parts;
    std::optional<Node> node;
    std::optional<Service> service;
    std::optional<test::Client> client;
};

TEST_F(RpcMethods, chain_and_node_facts) {
    EXPECT_EQ(result("eth_chainId"), "0x1");
    EXPECT_EQ(result("net_version"), "1");
    EXPECT_EQ(result("web3_clientVersion"), "barrel/test");
    EXPECT_EQ(result("eth_syncing"), false);
    EXPECT_EQ(result("eth_accounts"), json::array());
    EXPECT_EQ(result("eth_blockNumber"), "0x2");
    const u256 base_fee = workload.genesis.config.base_fee;
    EXPECT_EQ(result("eth_gasPrice"), to_hex_quantity(u256{base_fee + 1'000'000'000}));
    EXPECT_EQ(result("eth_maxPriorityFeePerGas"), "0x3b9aca00");
    EXPECT_EQ(
        error("eth_chainId", json::array({1})),
        std::make_pair(code::invalid_params, std::string{"too many arguments, want at most 0"}));
}

TEST_F(RpcMethods, balances_and_nonces_of_the_head_state) {
    const auto a = parts.store->account(account(0)).value().value();
    EXPECT_EQ(result("eth_getBalance", {to_hex(account(0)), "latest"}), to_hex_quantity(a.balance));
    EXPECT_EQ(result("eth_getBalance", {to_hex(account(0))}), to_hex_quantity(a.balance));
    EXPECT_EQ(result("eth_getBalance", {to_hex(account(0)), "0x2"}), to_hex_quantity(a.balance));
    EXPECT_EQ(result("eth_getTransactionCount", {to_hex(account(0)), "latest"}),
              to_hex_quantity(a.nonce));
    EXPECT_EQ(result("eth_getBalance", {"0x" + std::string(40, '7'), "latest"}), "0x0");
    EXPECT_EQ(error("eth_getBalance", {to_hex(account(0)), "0x1"}),
              std::make_pair(code::server_error,
                             std::string{"historical state is not available: block 1 (the node "
                                         "keeps the state of its head, block 2)"}));
    EXPECT_EQ(error("eth_getBalance", {to_hex(account(0)), "0x9"}),
              std::make_pair(code::server_error, std::string{"header not found"}));
    EXPECT_EQ(error("eth_getBalance", {"0x1234", "latest"}),
              std::make_pair(code::invalid_params,
                             std::string{"invalid argument 0 (address): hex string has length 4, "
                                         "want 40 for an address"}));
    EXPECT_EQ(
        error("eth_getBalance"),
        std::make_pair(code::invalid_params, std::string{"missing value for required argument 0"}));
    EXPECT_EQ(error("eth_getBalance", {to_hex(account(0)), "newest"}).first, code::invalid_params);
}

TEST_F(RpcMethods, blocks_by_number_and_hash) {
    const json header = parts.store->header(2).value().value();
    const json latest = result("eth_getBlockByNumber", {"latest", false});
    EXPECT_EQ(latest["number"], "0x2");
    EXPECT_EQ(latest["hash"], header["hash"]);
    EXPECT_EQ(latest["parentHash"], header["parent_hash"]);
    EXPECT_EQ(latest["stateRoot"], header["state_root"]);
    EXPECT_EQ(latest["miner"], header["coinbase"]);
    EXPECT_EQ(latest["baseFeePerGas"], to_hex_quantity(workload.genesis.config.base_fee));
    EXPECT_EQ(latest["size"], to_hex_quantity(uint64_t{workload.blocks[1].size()}));
    EXPECT_EQ(latest["uncles"], json::array());
    ASSERT_EQ(latest["transactions"].size(), 20u);
    EXPECT_TRUE(latest["transactions"][0].is_string());

    const json full = result("eth_getBlockByHash", {header["hash"], true});
    ASSERT_EQ(full["transactions"].size(), 20u);
    const json& t0 = full["transactions"][0];
    EXPECT_EQ(t0["hash"], latest["transactions"][0]);
    EXPECT_EQ(t0["blockHash"], header["hash"]);
    EXPECT_EQ(t0["blockNumber"], "0x2");
    EXPECT_EQ(t0["transactionIndex"], "0x0");
    EXPECT_EQ(t0["from"], to_hex(workload.senders[1][0]));

    EXPECT_EQ(result("eth_getBlockByNumber", {"earliest", false})["number"], "0x0");
    EXPECT_EQ(result("eth_getBlockByNumber", {"earliest", false})["transactions"], json::array());
    EXPECT_EQ(result("eth_getBlockByNumber", {"0x3", false}), nullptr);
    EXPECT_EQ(result("eth_getBlockByHash", {"0x" + std::string(64, '0'), false}), nullptr);
    EXPECT_EQ(result("eth_getBlockTransactionCountByNumber", {"0x1"}), "0x14");
    EXPECT_EQ(result("eth_getBlockTransactionCountByHash", json::array({header["hash"]})), "0x14");
    EXPECT_EQ(result("eth_getTransactionByBlockNumberAndIndex", {"0x2", "0x0"})["hash"],
              latest["transactions"][0]);
    EXPECT_EQ(result("eth_getTransactionByBlockNumberAndIndex", {"0x2", "0x14"}), nullptr);
    EXPECT_EQ(error("eth_getBlockByNumber", {"latest", "yes"}),
              std::make_pair(code::invalid_params,
                             std::string{"invalid argument 1 (full): want true or false"}));
}

TEST_F(RpcMethods, transactions_and_receipts_of_committed_blocks) {
    const json block = result("eth_getBlockByNumber", {"0x1", false});
    const std::string hash = block["transactions"][3];
    const json t = result("eth_getTransactionByHash", {hash});
    EXPECT_EQ(t["hash"], hash);
    EXPECT_EQ(t["blockNumber"], "0x1");
    EXPECT_EQ(t["blockHash"], block["hash"]);
    EXPECT_EQ(t["transactionIndex"], "0x3");
    EXPECT_EQ(t["from"], to_hex(workload.senders[0][3]));
    const json r = result("eth_getTransactionReceipt", {hash});
    EXPECT_EQ(r["transactionHash"], hash);
    EXPECT_EQ(r["blockHash"], block["hash"]);
    EXPECT_EQ(r["blockNumber"], "0x1");
    EXPECT_EQ(r["transactionIndex"], "0x3");
    EXPECT_EQ(r["status"], "0x1");
    EXPECT_EQ(r["from"], t["from"]);
    EXPECT_EQ(r["to"], t["to"]);
    EXPECT_EQ(r["type"], t["type"]);
    EXPECT_EQ(r["effectiveGasPrice"], t["gasPrice"]);
    EXPECT_EQ(r["logs"], json::array());
    EXPECT_EQ(r["contractAddress"], nullptr);
    EXPECT_EQ(result("eth_getTransactionReceipt", {"0x" + std::string(64, '0')}), nullptr);
    EXPECT_EQ(result("eth_getTransactionByHash", {"0x" + std::string(64, '0')}), nullptr);
}

TEST_F(RpcMethods, send_raw_transaction_admits_to_the_pool) {
    const Bytes raw = transfer(0);
    const std::string hash = to_hex(tx::hash_of(raw));
    EXPECT_EQ(result("eth_sendRawTransaction", {to_hex(raw)}), hash);
    const json pooled = result("eth_getTransactionByHash", {hash});
    EXPECT_EQ(pooled["hash"], hash);
    EXPECT_EQ(pooled["blockHash"], nullptr);
    EXPECT_EQ(pooled["blockNumber"], nullptr);
    EXPECT_EQ(pooled["from"], to_hex(account(0)));
    EXPECT_EQ(result("eth_getTransactionReceipt", {hash}), nullptr);
    const auto nonce = parts.store->account(account(0)).value().value().nonce;
    EXPECT_EQ(result("eth_getTransactionCount", {to_hex(account(0)), "pending"}),
              to_hex_quantity(nonce + 1));
    EXPECT_EQ(result("eth_getTransactionCount", {to_hex(account(0)), "latest"}),
              to_hex_quantity(nonce));
    EXPECT_EQ(result("txpool_status"), (json{{"pending", "0x1"}, {"queued", "0x0"}}));
    EXPECT_EQ(error("eth_sendRawTransaction", {to_hex(raw)}),
              std::make_pair(code::server_error, std::string{"already known"}));
    EXPECT_EQ(error("eth_sendRawTransaction", {"0x1234"}).first, code::server_error);
    EXPECT_EQ(
        error("eth_sendRawTransaction", {"1234"}),
        std::make_pair(code::invalid_params,
                       std::string{"invalid argument 0 (data): hex string without 0x prefix"}));
}

// An encoding that is not a transaction is answered as go-ethereum answers it
// (core/types/transaction.go UnmarshalBinary, rlp's decode errors), alone or in a batch.
TEST_F(RpcMethods, undecodable_raw_transactions_are_answered_in_go_ethereums_words) {
    using test::list;
    using test::str;
    const Bytes valid = transfer(0);
    const Bytes valid_list{valid.begin() + 1, valid.end()};  // without its type byte
    const Bytes legacy_list = list({str({1}), str({1}), str({0x52, 0x08}), str(Bytes(20, 7)),
                                    str({1}), str({}), str({27}), str({1}), str({1})});
    const std::vector<std::pair<Bytes, std::string>> cases = {
        {{}, "typed transaction too short"},
        {{0x02}, "typed transaction too short"},
        {{0x01}, "typed transaction too short"},
        {{0x03, 0xc0}, "transaction type not supported"},
        {{0x00, 0xc0}, "transaction type not supported"},
        {{0x80}, "rlp: expected input list for types.LegacyTx"},
        {{0x02, 0x80}, "rlp: expected input list for types.DynamicFeeTx"},
        {{0x01, 0x80}, "rlp: expected input list for types.AccessListTx"},
        {{0xc5}, "rlp: value size exceeds available input length"},
        {{0xf8, 0x01, 0xc0}, "rlp: non-canonical size information for types.LegacyTx"},
        {{0xc0}, "rlp: too few elements for types.LegacyTx"},
        {{0x02, 0xc0}, "rlp: too few elements for types.DynamicFeeTx"},
        {{0xc0, 0xc0}, "rlp: too few elements for types.LegacyTx"},  // the first list's error
        {test::cat({{0x02}, valid_list, {0x01}}), "rlp: input contains more than one value"},
        {test::cat({legacy_list, {0x01}}), "rlp: input contains more than one value"},
        {{0xc3, 0x82, 0x00, 0x01},
         "rlp: non-canonical integer (leading zero bytes) for uint64, decoding into "
         "(types.LegacyTx).Nonce"},
        {{0xc2, 0x81, 0x05},
         "rlp: non-canonical size information for uint64, decoding into (types.LegacyTx).Nonce"},
        {{0x02, 0xc1, 0xc0},
         "rlp: expected input string or byte for *big.Int, decoding into "
         "(types.DynamicFeeTx).ChainID"},
        {{0x02, 0xcb, 0x01, 0x89, 1, 2, 3, 4, 5, 6, 7, 8, 9},
         "rlp: input string too long for uint64, decoding into (types.DynamicFeeTx).Nonce"},
        {{0xc2, 0x83, 0x01}, "rlp: element is larger than containing list"},
        // A field longer than the input, but not than its list: go-ethereum's other word.
        {{0xc3, 0x01, 0x82, 0x01}, "rlp: value size exceeds available input length"},
        {{0x01, 0x81, 0x05}, "rlp: expected input list for types.AccessListTx"},
        // A 2-byte `to` cut short, then a byte after the list: its length is checked first.
        {{0xc5, 0x01, 0x01, 0x01, 0x82, 0xff, 0xff},
         "rlp: input string too short for common.Address, decoding into (types.LegacyTx).To"},
        {test::cat({{0xdb, 0x01, 0x01, 0x82, 0x52, 0x08, 0xb8, 0x14}, Bytes(20, 7)}),
         "rlp: non-canonical size information for *common.Address, decoding into "
         "(types.LegacyTx).To"},
        {list({str({1}), str({1}), str({0x52, 0x08}), str(Bytes(20, 7)), str({1}), str({}),
               str({27}), str({1}), str({1}), str({1})}),
         "rlp: input list has too many elements for types.LegacyTx"},
        {list({str({1}), str({1}), str({0x52, 0x08}), str(Bytes(19, 7)), str({1}), str({}),
               str({27}), str({1}), str({1})}),
         "rlp: input string too short for common.Address, decoding into (types.LegacyTx).To"},
        {list({str({1}), str({1}), str({0x52, 0x08}), str(Bytes(21, 7)), str({1}), str({}),
               str({27}), str({1}), str({1})}),
         "rlp: input string too long for common.Address, decoding into (types.LegacyTx).To"},
        {list({str({1}), str({1}), str({0x52, 0x08}), list({}), str({1}), str({}), str({27}),
               str({1}), str({1})}),
         "rlp: wrong kind of empty value (got List, want String) for *common.Address, decoding "
         "into (types.LegacyTx).To"},
        {list({str({1}), str({1}), str({0x52, 0x08}), list({str({1})}), str({1}), str({}),
               str({27}), str({1}), str({1})}),
         "rlp: expected input string or byte for common.Address, decoding into "
         "(types.LegacyTx).To"},
        {list({str({1}), str({1}), str({0x52, 0x08}), {0x81, 0x05}}),
         "rlp: input string too short for common.Address, decoding into (types.LegacyTx).To"},
        {list({str({1}), str({1}), str({0x52, 0x08}), str(Bytes(20, 7)), str({1}), list({}),
               str({27}), str({1}), str({1})}),
         "rlp: expected input string or byte for []uint8, decoding into (types.LegacyTx).Data"},
        {list({str({1}), str({1}), str({0x00, 0x52})}),
         "rlp: non-canonical integer (leading zero bytes) for uint64, decoding into "
         "(types.LegacyTx).Gas"},
        {test::cat({{0x02},
                    list({str({1}), str({}), str({1}), str({2}), str({0x52, 0x08}),
                          str(Bytes(20, 7)), str({5}), str({}), str({})})}),
         "rlp: expected input list for types.AccessList, decoding into "
         "(types.DynamicFeeTx).AccessList"},
        {test::cat({{0x02},
                    list({str({1}), str({}), str({1}), str({2}), str({0x52, 0x08}),
                          str(Bytes(20, 7)), str({5}), str({}), list({}), str({0, 1})})}),
         "rlp: non-canonical integer (leading zero bytes) for *big.Int, decoding into "
         "(types.DynamicFeeTx).V"},
        {list({str({1}), str({0x00, 0x01})}),
         "rlp: non-canonical integer (leading zero bytes) for *big.Int, decoding into "
         "(types.LegacyTx).GasPrice"},
    };
    json batch = json::array();
    for (const auto& [raw, message] : cases) {
        EXPECT_EQ(error("eth_sendRawTransaction", {to_hex(raw)}),
                  std::make_pair(code::server_error, message))
            << to_hex(raw);
        batch.push_back({{"jsonrpc", "2.0"},
                         {"id", batch.size()},
                         {"method", "eth_sendRawTransaction"},
                         {"params", {to_hex(raw)}}});
    }
    const json answers = json::parse(send(batch.dump()));
    ASSERT_EQ(answers.size(), cases.size());
    for (size_t i = 0; i < cases.size(); ++i)
        EXPECT_EQ(answers[i]["error"]["message"], cases[i].second) << i;
    // A legacy list that decodes: the pool's own answer.
    EXPECT_EQ(error("eth_sendRawTransaction", {to_hex(legacy_list)}).second,
              "only replay-protected (EIP-155) transactions allowed over RPC");
}

TEST_F(RpcMethods, code_is_empty_and_storage_zero_at_every_block_that_exists) {
    const std::string a = to_hex(account(0));
    EXPECT_EQ(result("eth_getCode", {a}), "0x");
    EXPECT_EQ(result("eth_getCode", {a, "latest"}), "0x");
    EXPECT_EQ(result("eth_getCode", {a, "0x1"}), "0x");
    const std::string zero = "0x" + std::string(64, '0');
    EXPECT_EQ(result("eth_getStorageAt", {a, "0x0"}), zero);
    EXPECT_EQ(result("eth_getStorageAt", {a, "0x1", "earliest"}), zero);
    EXPECT_EQ(result("eth_getStorageAt", {a, "1", "pending"}), zero);  // go-ethereum: no 0x ok
    EXPECT_EQ(result("eth_getStorageAt", {a, "0x" + std::string(64, 'f')}), zero);
    const std::string head = result("eth_getBlockByNumber", {"latest"})["hash"];
    EXPECT_EQ(result("eth_getStorageAt", {a, "0x0", {{"blockHash", head}}}), zero);
    // An unknown block: eth_getBalance's error.
    const auto not_found = std::make_pair(code::server_error, std::string{"header not found"});
    EXPECT_EQ(error("eth_getBalance", {a, "0x9"}), not_found);
    EXPECT_EQ(error("eth_getCode", {a, "0x9"}), not_found);
    EXPECT_EQ(error("eth_getStorageAt", {a, "0x0", "0x9"}), not_found);
    EXPECT_EQ(error("eth_getCode", {a, {{"blockHash", "0x" + std::string(64, '5')}}}), not_found);
    const auto invalid = [](std::string message) {
        return std::make_pair(code::invalid_params, std::move(message));
    };
    EXPECT_EQ(error("eth_getCode", {"0x12"}),
              invalid("invalid argument 0 (address): hex string has length 2, want 40 for an "
                      "address"));
    EXPECT_EQ(error("eth_getCode", {a, "newest"}),
              invalid("invalid argument 1 (block): unknown block tag \"newest\" (want latest, "
                      "earliest, pending, safe, finalized or a 0x number)"));
    EXPECT_EQ(error("eth_getCode", {a, "latest", 1}),
              invalid("too many arguments, want at most 2"));
    EXPECT_EQ(error("eth_getStorageAt", {a}), invalid("missing value for required argument 1"));
    const std::string long_key = "0x1" + std::string(64, '0');
    EXPECT_EQ(
        error("eth_getStorageAt", {a, long_key}),
        invalid("invalid argument 1 (slot): storage key too long (want at most 32 bytes): \"" +
                long_key + "\""));
    EXPECT_EQ(error("eth_getStorageAt", {a, "0xzz"}),
              invalid("invalid argument 1 (slot): invalid hex in storage key: \"0xzz\""));
    EXPECT_EQ(error("eth_getStorageAt", {a, 5}),
              invalid("invalid argument 1 (slot): want a hex string"));
}

TEST_F(RpcMethods, a_network_node_reports_its_engine_in_syncing_and_peer_count) {
    NetworkStatus status{.peers = 3};
    node->network = [&status] { return status; };
    EXPECT_EQ(result("eth_syncing"), false);
    EXPECT_EQ(result("net_peerCount"), "0x3");
    // Catching up: go-ethereum's progress object; the current block is the node's head (2).
    status = {.peers = 1, .catching_up = true, .starting_height = 1, .highest_height = 40};
    EXPECT_EQ(result("eth_syncing"),
              (json{{"startingBlock", "0x1"}, {"currentBlock", "0x2"}, {"highestBlock", "0x28"}}));
    // The engine behind the node's own head: the highest block is never below the current one.
    status.highest_height = 1;
    EXPECT_EQ(result("eth_syncing")["highestBlock"], "0x2");
    // Restoring a state-sync snapshot of height 50, 1 of its 3 data chunks in.
    status = {.peers = 2, .restoring = NetworkStatus::Restore{50, 3, 1}};
    EXPECT_EQ(result("eth_syncing"), (json{{"startingBlock", "0x0"},
                                           {"currentBlock", "0x2"},
                                           {"highestBlock", "0x2"},
                                           {"stateSyncHeight", "0x32"},
                                           {"stateSyncChunks", "0x3"},
                                           {"stateSyncChunksApplied", "0x1"}}));
}

TEST_F(RpcMethods, the_node_is_handed_exactly_the_encodings_admitted) {
    std::vector<Bytes> handed;
    node->on_admitted = [&handed](std::span<const BytesView> admitted) {
        for (BytesView e : admitted) handed.emplace_back(e.begin(), e.end());
    };
    const Bytes one = transfer(0);
    result("eth_sendRawTransaction", {to_hex(one)});
    ASSERT_EQ(handed, std::vector<Bytes>{one});
    // A batch: what the pool refuses (a duplicate, garbage) is not handed over; the rest is,
    // in the batch's order.
    handed.clear();
    const Bytes two = transfer(1);
    const Bytes three = transfer(2);
    json batch = json::array();
    for (const Bytes* raw : {&two, &one, &three})
        batch.push_back({{"jsonrpc", "2.0"},
                         {"id", batch.size()},
                         {"method", "eth_sendRawTransaction"},
                         {"params", json::array({to_hex(*raw)})}});
    batch.push_back({{"jsonrpc", "2.0"},
                     {"id", 9},
                     {"method", "eth_sendRawTransaction"},
                     {"params", json::array({"0x1234"})}});
    send(batch.dump());
    EXPECT_EQ(handed, (std::vector<Bytes>{two, three}));
    // Nothing admitted: the node is not called.
    handed.clear();
    bool called = false;
    node->on_admitted = [&called](std::span<const BytesView>) { called = true; };
    error("eth_sendRawTransaction", {to_hex(one)});
    EXPECT_FALSE(called);
}

TEST_F(RpcMethods, net_and_web3_facts) {
    EXPECT_EQ(result("net_listening"), true);
    EXPECT_EQ(result("net_peerCount"), "0x0");  // a single sealer
    EXPECT_EQ(result("web3_sha3", {"0x"}),
              "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
    EXPECT_EQ(result("web3_sha3", {"0x68656c6c6f20776f726c64"}),  // "hello world"
              "0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad");
    EXPECT_EQ(error("web3_sha3", {"0x1"}),
              std::make_pair(code::invalid_params,
                             std::string{"invalid argument 0 (data): hex string of odd length"}));
    EXPECT_EQ(
        error("web3_sha3"),
        std::make_pair(code::invalid_params, std::string{"missing value for required argument 0"}));
    EXPECT_EQ(
        error("net_listening", {1}),
        std::make_pair(code::invalid_params, std::string{"too many arguments, want at most 0"}));
}

TEST_F(RpcMethods, a_batch_of_sends_is_admitted_together_and_answered_in_order) {
    json batch = json::array();
    for (uint64_t k = 0; k < 3; ++k)
        batch.push_back({{"jsonrpc", "2.0"},
                         {"id", k},
                         {"method", "eth_sendRawTransaction"},
                         {"params", {to_hex(transfer(2, k))}}});
    batch.push_back({{"jsonrpc", "2.0"},
                     {"id", 3},
                     {"method", "eth_sendRawTransaction"},
                     {"params", {"0xzz"}}});
    batch.push_back({{"jsonrpc", "2.0"}, {"method", "eth_blockNumber"}});  // a notification
    batch.push_back({{"jsonrpc", "2.0"}, {"id", 5}, {"method", "nope"}});
    const json out = json::parse(send(batch.dump()));
    ASSERT_EQ(out.size(), 5u);
    for (uint64_t k = 0; k < 3; ++k) {
        EXPECT_EQ(out[k]["id"], k);
        EXPECT_EQ(out[k]["result"], to_hex(tx::hash_of(transfer(2, k))));
    }
    EXPECT_EQ(out[3]["error"]["code"], code::invalid_params);
    EXPECT_EQ(out[4]["error"]["message"], "the method nope does not exist/is not available");
    EXPECT_EQ(out[4]["error"]["code"], code::method_not_found);
    EXPECT_EQ(parts.pool.status().pending, 3u);
}

TEST_F(RpcMethods, rejections_carry_go_ethereums_messages) {
    const Bytes low = gen::signed_transfer(
        {.key = gen::account_key(kSeed, 0), .to = account(1), .nonce = 0, .tip = 0});
    const auto nonce = parts.store->account(account(0)).value().value().nonce;
    ASSERT_GT(nonce, 0u);
    EXPECT_EQ(error("eth_sendRawTransaction", {to_hex(low)}),
              std::make_pair(code::server_error, "nonce too low: next nonce " +
                                                     std::to_string(nonce) + ", tx nonce 0"));
}

TEST_F(RpcMethods, estimate_gas_and_call) {
    EXPECT_EQ(
        result("eth_estimateGas",
               {{{"from", to_hex(account(0))}, {"to", to_hex(account(1))}, {"value", "0x1"}}}),
        "0x5208");
    // Without a fee cap the funds are checked as the transaction runs (go-ethereum's words).
    EXPECT_EQ(error("eth_estimateGas", {{{"from", "0x" + std::string(40, '7')},
                                         {"to", to_hex(account(1))},
                                         {"value", "0x1"}}}),
              std::make_pair(code::server_error,
                             std::string{"insufficient funds for gas * price + value: address "
                                         "0x7777777777777777777777777777777777777777 have 0 "
                                         "want 1"}));
    EXPECT_EQ(
        result("eth_call", {{{"from", to_hex(account(0))}, {"to", to_hex(account(1))}}, "latest"}),
        "0x");
    // A DagTransfer read: userBalance of a generated user.
    const std::string user = gen::user_name(0);
    const Bytes data = exec::encode_call(
        {.function = exec::DagFunction::user_balance, .user = user, .to = {}, .amount = 0});
    const json out =
        result("eth_call", {{{"to", to_hex(exec::kDagTransferAddress)}, {"data", to_hex(data)}}});
    const auto balance = parts.store->user(user).value();
    ASSERT_TRUE(balance.has_value());
    EXPECT_EQ(out, to_hex(exec::encode_return(exec::DagCode::ok, *balance)));
    EXPECT_EQ(error("eth_call", {{{"to", "0x12"}}}).first, code::invalid_params);
}

// Issue 29, finding 10: eth_estimateGas answered a figure for calls that fail or can never be
// included. It executes now, on the head state, and answers as go-ethereum's estimator does.
TEST_F(RpcMethods, estimate_gas_executes_the_call) {
    const std::string from = to_hex(account(0));
    const std::string dag = to_hex(exec::kDagTransferAddress);
    const Bytes balance_of = exec::encode_call({.function = exec::DagFunction::user_balance,
                                                .user = gen::user_name(0),
                                                .to = {},
                                                .amount = 0});
    tx::Transaction read;  // what a block would charge the read: its intrinsic gas
    read.to = exec::kDagTransferAddress;
    read.data = balance_of;
    EXPECT_EQ(
        result("eth_estimateGas", {{{"from", from}, {"to", dag}, {"input", to_hex(balance_of)}}}),
        to_hex_quantity(tx::intrinsic_gas(read)));
    const auto reverted = std::make_pair(code::server_error, std::string{"execution reverted"});
    // A DagTransfer call carrying value, an unknown selector, a contract creation: each fails.
    EXPECT_EQ(
        error("eth_estimateGas",
              {{{"from", from}, {"to", dag}, {"value", "0x1"}, {"input", to_hex(balance_of)}}}),
        reverted);
    EXPECT_EQ(error("eth_estimateGas", {{{"from", from}, {"to", dag}, {"input", "0xdeadbeef"}}}),
              reverted);
    EXPECT_EQ(error("eth_estimateGas", {{{"from", from}, {"input", "0x6000"}}}), reverted);
    // Calldata whose intrinsic gas is above the block gas limit can never be included.
    const uint64_t block_gas = workload.genesis.gas_limit;
    const std::string too_much = "0x" + std::string(2 * (block_gas / 16 + 1), '1');
    EXPECT_EQ(error("eth_estimateGas",
                    {{{"from", from}, {"to", to_hex(account(1))}, {"input", too_much}}}),
              std::make_pair(code::server_error,
                             "gas required exceeds allowance (" + std::to_string(block_gas) + ")"));
    // The call's own gas is the allowance; more than the block's is cut to it.
    EXPECT_EQ(
        error("eth_estimateGas",
              {{{"from", from}, {"to", dag}, {"gas", "0x5208"}, {"input", to_hex(balance_of)}}}),
        std::make_pair(code::server_error, std::string{"gas required exceeds allowance (21000)"}));
    EXPECT_EQ(result("eth_estimateGas", {{{"from", from},
                                          {"to", to_hex(account(1))},
                                          {"gas", to_hex_quantity(block_gas * 2)}}}),
              "0x5208");
    // With a fee cap, the sender's funds bound the allowance (go-ethereum's words).
    const std::string empty = "0x" + std::string(40, '7');
    const std::string base_fee = to_hex_quantity(workload.genesis.config.base_fee);
    EXPECT_EQ(error("eth_estimateGas", {{{"from", empty},
                                         {"to", to_hex(account(1))},
                                         {"value", "0x1"},
                                         {"gasPrice", base_fee}}}),
              std::make_pair(code::server_error, std::string{"insufficient funds for transfer"}));
    EXPECT_EQ(error("eth_estimateGas",
                    {{{"from", empty}, {"to", to_hex(account(1))}, {"gasPrice", base_fee}}}),
              std::make_pair(code::server_error, std::string{"insufficient funds for transfer"}));
}

// Issue 29, finding 13: eth_call used one of two different "data" and "input", took gas 0, and
// left gasPrice out of the balance check. go-ethereum's rules and words now.
TEST_F(RpcMethods, call_objects_are_read_as_go_ethereum_reads_them) {
    const std::string from = to_hex(account(0));
    const std::string to = to_hex(account(1));
    EXPECT_EQ(
        error("eth_call", {{{"from", from}, {"to", to}, {"data", "0x01"}, {"input", "0x02"}}}),
        std::make_pair(code::server_error,
                       std::string{R"(both "data" and "input" are set and not equal. Please )"
                                   R"(use "input" to pass transaction call data)"}));
    EXPECT_EQ(
        result("eth_call", {{{"from", from}, {"to", to}, {"data", "0x01"}, {"input", "0x01"}}}),
        "0x");
    EXPECT_EQ(error("eth_call", {{{"from", from}, {"to", to}, {"gas", "0x0"}}}),
              std::make_pair(code::server_error,
                             std::string{"intrinsic gas too low: have 0, want 21000"}));
    EXPECT_EQ(error("eth_call", {{{"from", from}, {"to", to}, {"gas", "0x5207"}}}),
              std::make_pair(code::server_error,
                             std::string{"intrinsic gas too low: have 20999, want 21000"}));
    EXPECT_EQ(
        error("eth_estimateGas", {{{"to", to}, {"gasPrice", "0x1"}, {"maxFeePerGas", "0x1"}}}),
        std::make_pair(code::server_error,
                       std::string{"both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) "
                                   "specified"}));
    EXPECT_EQ(error("eth_call", {{{"to", to}, {"chainId", "0x5"}}}),
              std::make_pair(code::server_error,
                             std::string{"chainId does not match node's (have=5, want=1)"}));
    // A fee is charged as a transaction's would be: gas × price + value must be covered. The
    // address is written as go-ethereum writes it (EIP-55's own example).
    const u256 base_fee = workload.genesis.config.base_fee;
    const std::string poor = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
    EXPECT_EQ(error("eth_call", {{{"from", poor},
                                  {"to", to},
                                  {"gas", "0x5208"},
                                  {"gasPrice", to_hex_quantity(base_fee)}}}),
              std::make_pair(code::server_error,
                             "insufficient funds for gas * price + value: address "
                             "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed have 0 want " +
                                 to_decimal(base_fee * 21'000)));
    EXPECT_EQ(error("eth_call", {{{"from", poor}, {"to", to}, {"gasPrice", "0x1"}}}),
              std::make_pair(code::server_error,
                             "max fee per gas less than block base fee: address "
                             "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed, maxFeePerGas: 1, "
                             "baseFee: " +
                                 to_decimal(base_fee)));
    EXPECT_EQ(error("eth_call", {{{"from", poor},
                                  {"to", to},
                                  {"maxFeePerGas", "0x1"},
                                  {"maxPriorityFeePerGas", "0x2"}}}),
              std::make_pair(code::server_error,
                             std::string{"max priority fee per gas higher than max fee per gas: "
                                         "address 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed, "
                                         "maxPriorityFeePerGas: 2, maxFeePerGas: 1"}));
    // A price the sender covers, and none at all (no base fee then, as go-ethereum's calls).
    EXPECT_EQ(result("eth_call", {{{"from", from},
                                   {"to", to},
                                   {"gas", "0x5208"},
                                   {"gasPrice", to_hex_quantity(base_fee)}}}),
              "0x");
    EXPECT_EQ(result("eth_call", {{{"from", poor}, {"to", to}}}), "0x");
    // gas × price past 256 bits is more than any balance.
    EXPECT_EQ(error("eth_call", {{{"from", from},
                                  {"to", to},
                                  {"gas", "0x5208"},
                                  {"gasPrice", "0x" + std::string(64, 'f')}}})
                  .second.rfind("insufficient funds for gas * price + value: ", 0),
              0u);
}

// Issue 29, finding 11: transactions without EIP-155 replay protection were accepted over RPC.
TEST_F(RpcMethods, unprotected_transactions_are_refused_over_rpc_unless_allowed) {
    const Bytes raw =
        gen::signed_transfer({.key = gen::account_key(kSeed, 2),
                              .to = account(3),
                              .nonce = parts.store->account(account(2)).value()->nonce,
                              .type = tx::TxType::legacy,
                              .chain_id = std::nullopt,  // pre-EIP-155
                              .value = 5});
    ASSERT_FALSE(tx::decode(raw).value().chain_id.has_value());
    const auto refused = std::make_pair(
        code::server_error,
        std::string{"only replay-protected (EIP-155) transactions allowed over RPC"});
    EXPECT_EQ(error("eth_sendRawTransaction", {to_hex(raw)}), refused);
    // In a batch, beside a protected one that is admitted.
    const json batch = json::array({{{"jsonrpc", "2.0"},
                                     {"id", 1},
                                     {"method", "eth_sendRawTransaction"},
                                     {"params", {to_hex(raw)}}},
                                    {{"jsonrpc", "2.0"},
                                     {"id", 2},
                                     {"method", "eth_sendRawTransaction"},
                                     {"params", {to_hex(transfer(0))}}}});
    const json answers = json::parse(send(batch.dump()));
    ASSERT_EQ(answers.size(), 2u);
    EXPECT_EQ(answers[0]["error"]["message"], refused.second);
    EXPECT_TRUE(answers[1].contains("result")) << answers.dump();
    EXPECT_FALSE(parts.pool.find(tx::hash_of(raw), UINT64_MAX));  // the pool as it is now
    // --rpc-allow-unprotected-txs: admitted like any other.
    node->allow_unprotected_txs = true;
    EXPECT_EQ(result("eth_sendRawTransaction", {to_hex(raw)}), to_hex(tx::hash_of(raw)));
}

TEST_F(RpcMethods, fee_history) {
    const json h = result("eth_feeHistory", {"0x2", "latest", {25, 75}});
    EXPECT_EQ(h["oldestBlock"], "0x1");
    EXPECT_EQ(h["baseFeePerGas"].size(), 3u);
    EXPECT_EQ(h["gasUsedRatio"].size(), 2u);
    EXPECT_EQ(h["reward"].size(), 2u);
    EXPECT_EQ(h["reward"][0].size(), 2u);
    EXPECT_EQ(error("eth_feeHistory", {"0x2", "latest", {75, 25}}).first, code::invalid_params);
}

TEST(RpcFeeHistory, rewards_are_percentiles_of_gas_used_as_go_ethereum_computes_them) {
    using Tips = std::vector<std::pair<u256, uint64_t>>;
    // Sorted by tip: (1, 50,000 gas), (3, 21,000), (5, 21,000); 92,000 in all. Weighted by
    // gas, half the block paid a tip of 1 (by count it would be 3).
    const Tips block{{5, 21'000}, {1, 50'000}, {3, 21'000}};
    EXPECT_EQ(reward_percentiles(block, {0, 50, 60, 80, 100}), (std::vector<u256>{1, 1, 3, 5, 5}));
    // The threshold is truncated to whole gas, as go-ethereum's uint64 conversion does: 50.001 %
    // of 42,000 is 21,000.42, reached by the first transaction's 21,000.
    EXPECT_EQ(reward_percentiles(Tips{{1, 21'000}, {2, 21'000}}, {50.001, 50.01}),
              (std::vector<u256>{1, 2}));
    // No transaction: a zero for each percentile.
    EXPECT_EQ(reward_percentiles(Tips{}, {10, 90}), (std::vector<u256>{0, 0}));
    EXPECT_EQ(reward_percentiles(block, {}), std::vector<u256>{});
}

TEST_F(RpcMethods, framing_errors) {
    EXPECT_EQ(
        json::parse(send("{")),
        json::parse(
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}})"));
    EXPECT_EQ(json::parse(send("[]"))["error"]["message"], "empty batch");
    EXPECT_EQ(send(R"({"jsonrpc":"2.0","method":"eth_chainId"})"), "");
    EXPECT_EQ(error("eth_sendTransaction", json::array({json::object()})),
              std::make_pair(
                  code::method_not_found,
                  std::string{"the method eth_sendTransaction does not exist/is not available"}));
}

TEST_F(RpcMethods, fee_history_rewards_are_each_blocks_percentiles_and_the_same_when_cached) {
    const std::vector<double> percentiles{0, 10, 25, 50, 75, 90, 100};
    const json expected_rewards = [&] {
        json out = json::array();
        for (const Bytes& raw : workload.blocks) {
            auto block = block::decode_block(Bytes{raw});
            EXPECT_TRUE(block);
            std::vector<std::pair<u256, uint64_t>> tips;
            for (const tx::Transaction& t : block->txs)
                tips.emplace_back(tx::effective_tip(t, workload.genesis.config.base_fee),
                                  exec::gas_used(t));
            json reward = json::array();
            for (const u256& tip : reward_percentiles(tips, percentiles))
                reward.push_back(to_hex_quantity(tip));
            out.push_back(reward);
        }
        return out;
    }();
    for (int round = 0; round < 2; ++round)  // the second from the cache
        EXPECT_EQ(result("eth_feeHistory", {"0x2", "latest", percentiles})["reward"],
                  expected_rewards);
    // go-ethereum's limits: 1,024 blocks at most (here: all there are), 100 percentiles.
    EXPECT_EQ(result("eth_feeHistory", {"0x100000", "latest"})["gasUsedRatio"].size(), 3u);
    EXPECT_EQ(error("eth_feeHistory", {"0x1", "latest", json(std::vector<int>(101, 50))}),
              std::make_pair(code::invalid_params,
                             std::string{"invalid argument 2 (rewardPercentiles): at most 100 "
                                         "percentiles"}));
}

TEST_F(RpcMethods, a_batch_is_answered_as_if_its_calls_ran_in_order) {
    const Bytes raw = transfer(3);
    const std::string hash = to_hex(tx::hash_of(raw));
    const std::string from = to_hex(account(3));
    const auto nonce = parts.store->account(account(3)).value().value().nonce;
    const json out = json::parse(send(json::array({
                                                      {{"jsonrpc", "2.0"},
                                                       {"id", 1},
                                                       {"method", "eth_getTransactionCount"},
                                                       {"params", {from, "pending"}}},
                                                      {{"jsonrpc", "2.0"},
                                                       {"id", 2},
                                                       {"method", "eth_getTransactionByHash"},
                                                       {"params", {hash}}},
                                                      {{"jsonrpc", "2.0"},
                                                       {"id", 3},
                                                       {"method", "eth_sendRawTransaction"},
                                                       {"params", {to_hex(raw)}}},
                                                      {{"jsonrpc", "2.0"},
                                                       {"id", 4},
                                                       {"method", "eth_getTransactionCount"},
                                                       {"params", {from, "pending"}}},
                                                      {{"jsonrpc", "2.0"},
                                                       {"id", 5},
                                                       {"method", "eth_getTransactionByHash"},
                                                       {"params", {hash}}},
                                                  })
                                          .dump()));
    ASSERT_EQ(out.size(), 5u);
    EXPECT_EQ(out[0]["result"], to_hex_quantity(nonce));
    EXPECT_EQ(out[1]["result"], nullptr);
    EXPECT_EQ(out[2]["result"], hash);
    EXPECT_EQ(out[3]["result"], to_hex_quantity(nonce + 1));
    EXPECT_EQ(out[4]["result"]["hash"], hash);
}

TEST_F(RpcMethods, ids_are_echoed_as_sent) {
    EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":18446744073709551616,"method":"eth_chainId"})"),
              R"({"id":18446744073709551616,"jsonrpc":"2.0","result":"0x1"})");
    EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":1e2,"method":"eth_chainId"})"),
              R"({"id":1e2,"jsonrpc":"2.0","result":"0x1"})");
    EXPECT_EQ(
        send(R"([{"jsonrpc":"2.0","id":-1.50,"method":"eth_chainId"},)"
             R"({"jsonrpc":"2.0","id":"a\u0062","method":"eth_chainId"},)"
             R"({"jsonrpc":"2.0","id":null,"method":"eth_chainId"},)"
             R"({"jsonrpc":"2.0","id":{"x":1.5},"method":"eth_chainId"},)"
             R"({"id":2.50,"method":"eth_chainId"},)"
             R"(7,)"
             R"({"jsonrpc":"2.0","id":1E+2,"method":"nope"}])"),
        R"([{"id":-1.50,"jsonrpc":"2.0","result":"0x1"},)"
        R"({"id":"ab","jsonrpc":"2.0","result":"0x1"},)"
        R"({"id":null,"jsonrpc":"2.0","result":"0x1"},)"
        R"({"error":{"code":-32600,"message":"invalid request: id must be a string, a number or null"},"id":null,"jsonrpc":"2.0"},)"
        R"({"error":{"code":-32600,"message":"invalid request: jsonrpc must be \"2.0\""},"id":2.50,"jsonrpc":"2.0"},)"
        R"({"error":{"code":-32600,"message":"invalid request: not an object"},"id":null,"jsonrpc":"2.0"},)"
        R"({"error":{"code":-32601,"message":"the method nope does not exist/is not available"},"id":1E+2,"jsonrpc":"2.0"}])");
}

TEST_F(RpcMethods, a_call_that_throws_is_answered_32603_and_the_rest_are_served) {
    // A node of its own whose hook is set before its threads start (ThreadSanitizer sees no
    // order through the socket between a later write and the workers' reads).
    Node throwing{*parts.store, parts.pool, "barrel/test"};
    throwing.before_call = [](const Call& call) {
        if (call.method == "eth_chainId" || call.method == "eth_sendRawTransaction")
            throw std::bad_alloc{};
    };
    Service server{throwing, Limits{}, HttpOptions{.port = 0}};
    ASSERT_TRUE(server.start().has_value());
    test::Client c{server.port()};
    const json out = json::parse(c.post(R"([{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},
        {"jsonrpc":"2.0","id":2,"method":"eth_chainId"},
        {"jsonrpc":"2.0","id":3,"method":"eth_sendRawTransaction","params":["0x00"]},
        {"jsonrpc":"2.0","id":4,"method":"net_version"}])")
                                     .body());
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(out[0]["result"], "0x2");
    EXPECT_EQ(out[1]["error"], (json{{"code", -32603}, {"message", "method handler crashed"}}));
    EXPECT_EQ(out[2]["error"], (json{{"code", -32603}, {"message", "method handler crashed"}}));
    EXPECT_EQ(out[3]["result"], "1");
    // The node serves on, on the same connection and others.
    EXPECT_EQ(
        json::parse(c.post(R"({"jsonrpc":"2.0","id":5,"method":"net_version"})").body())["result"],
        "1");
    EXPECT_EQ(result("eth_chainId"), "0x1");
}

TEST_F(RpcMethods, a_batch_past_the_response_limit_answers_its_remaining_calls_32003) {
    Service small{*node, Limits{.max_response_bytes = 200}, HttpOptions{.port = 0}};
    ASSERT_TRUE(small.start().has_value());
    test::Client c{small.port()};
    json batch = json::array();
    for (int id = 1; id <= 10; ++id)
        batch.push_back({{"jsonrpc", "2.0"}, {"id", id}, {"method", "web3_clientVersion"}});
    batch.push_back({{"jsonrpc", "2.0"}, {"method", "web3_clientVersion"}});  // no answer
    const json out = json::parse(c.post(batch.dump()).body());
    // Each answer is {"id":N,"jsonrpc":"2.0","result":"barrel/test"}, 47 bytes: the fifth
    // passes 200 bytes, and what follows is not run.
    ASSERT_EQ(out.size(), 10u);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(out[i]["result"], "barrel/test");
    for (size_t i = 5; i < 10; ++i) {
        EXPECT_EQ(out[i]["id"], i + 1);
        EXPECT_EQ(out[i]["error"], (json{{"code", -32003}, {"message", "response too large"}}));
    }
    // A single call is not limited (go-ethereum limits batches).
    EXPECT_EQ(json::parse(c.post(R"({"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber",
                                      "params":["0x1",true]})")
                              .body())["result"]["number"],
              "0x1");
}

}  // namespace
}  // namespace barrel::rpc
