// The typed records mapped to Ethereum's JSON (rpc/eth_json.hpp) give what the stored documents
// gave, field for field, on every transaction type: the records replace the documents as the
// RPC layer's source without changing one answer.
#include <barrel/block/block.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/json/conventions.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include "rpc/eth_json.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

#include <set>

namespace barrel::rpc {
namespace {

// The oracle: the mapping from the stored JSON documents that the RPC layer used before the
// typed records (the documents are written from the same transactions by another path,
// json/tx_json.cpp and store/documents.cpp).
u256 quantity_of(const json& v) { return parse_u256(v.get<std::string>()).value_or(0); }

const json& member(const json& doc, const char* key) {
    static const json null_value;
    const auto it = doc.find(key);
    return it == doc.end() ? null_value : *it;
}

std::string zero_hex(size_t bytes) { return "0x" + std::string(bytes * 2, '0'); }

const std::string& empty_uncles_hash() {
    static const std::string h = to_hex(keccak256(Bytes{0xc0}));
    return h;
}

u256 doc_effective_gas_price(const json& tx, const u256& base_fee) {
    if (tx.contains("gas_price")) return quantity_of(tx["gas_price"]);
    const u256 cap = quantity_of(tx["max_fee_per_gas"]);
    const u256 tip = quantity_of(tx["max_priority_fee_per_gas"]);
    const auto offered = checked_add(base_fee, tip);
    return offered && *offered < cap ? *offered : cap;
}

json doc_transaction(const json& doc, const u256& base_fee) {
    const bool mined = doc.contains("block_hash");
    json out = {
        {"blockHash", mined ? doc["block_hash"] : json(nullptr)},
        {"blockNumber", mined ? doc["block_number"] : json(nullptr)},
        {"transactionIndex", mined ? doc["index"] : json(nullptr)},
        {"from", doc["sender"]},
        {"gas", doc["gas_limit"]},
        {"gasPrice", json_quantity(doc_effective_gas_price(doc, base_fee))},
        {"hash", doc["hash"]},
        {"input", doc["input"]},
        {"nonce", doc["nonce"]},
        {"to", doc["to"]},
        {"value", doc["value"]},
        {"type", doc["type"]},
        {"v", doc["v"]},
        {"r", doc["r"]},
        {"s", doc["s"]},
    };
    if (!doc["chain_id"].is_null()) out["chainId"] = doc["chain_id"];
    if (doc.contains("max_fee_per_gas")) {
        out["maxFeePerGas"] = doc["max_fee_per_gas"];
        out["maxPriorityFeePerGas"] = doc["max_priority_fee_per_gas"];
    }
    if (doc.contains("access_list")) {
        json list = json::array();
        for (const json& entry : doc["access_list"])
            list.push_back({{"address", entry["address"]}, {"storageKeys", entry["storage_keys"]}});
        out["accessList"] = std::move(list);
        out["yParity"] = doc["v"];  // a typed transaction's v is its y parity
    }
    return out;
}

json doc_receipt(const json& receipt, const json& tx, const u256& base_fee) {
    return {
        {"transactionHash", receipt["transaction_hash"]},
        {"transactionIndex", receipt["index"]},
        {"blockHash", member(tx, "block_hash")},
        {"blockNumber", receipt["block_number"]},
        {"from", tx["sender"]},
        {"to", tx["to"]},
        {"cumulativeGasUsed", receipt["cumulative_gas_used"]},
        {"gasUsed", receipt["gas_used"]},
        {"effectiveGasPrice", json_quantity(doc_effective_gas_price(tx, base_fee))},
        {"contractAddress", nullptr},
        {"logs", json::array()},
        {"logsBloom", zero_hex(256)},
        {"type", tx["type"]},
        {"status", receipt["status"]},
    };
}

json doc_block(const json& header, const u256& base_fee, size_t size, json transactions) {
    return {
        {"number", header["number"]},
        {"hash", header["hash"]},
        {"parentHash", header["parent_hash"]},
        {"timestamp", header["timestamp"]},
        {"miner", header["coinbase"]},
        {"gasLimit", header["gas_limit"]},
        {"gasUsed", header["gas_used"]},
        {"transactionsRoot", header["txs_root"]},
        {"receiptsRoot", header["receipts_root"]},
        {"stateRoot", header["state_root"]},
        {"baseFeePerGas", json_quantity(base_fee)},
        {"size", json_quantity(uint64_t{size})},
        {"transactions", std::move(transactions)},
        // Ethereum's constants for what barrel's blocks do not have.
        {"nonce", "0x0000000000000000"},
        {"difficulty", "0x0"},
        {"totalDifficulty", "0x0"},
        {"mixHash", zero_hex(32)},
        {"sha3Uncles", empty_uncles_hash()},
        {"uncles", json::array()},
        {"logsBloom", zero_hex(256)},
        {"extraData", "0x"},
    };
}

TEST(rpc_eth_json, records_map_to_what_the_documents_mapped_to) {
    test::ScratchDir dir;
    const auto w = test::generate_or_throw(
        {.seed = 33, .blocks = 1, .txs = 60, .accounts = 40, .mix = gen::Mix::mixed});
    auto store = store::Store::init(dir.path() / "d", w.genesis).value();
    pipeline::Pipeline p{*store, {}};
    ASSERT_TRUE(p.import_block(w.blocks[0]));
    const auto block = block::decode_block(w.blocks[0]).value();
    const u256 base_fee{7};

    const auto header_doc = store->header(1).value().value();
    const auto header = store->header_record(1).value().value();
    const json hashes = json::array({"0x01"});
    EXPECT_EQ(eth_block(header, base_fee, 123, hashes),
              doc_block(header_doc, base_fee, 123, hashes));
    // newHeads' header: the block without size, transactions, total difficulty and uncles.
    json head_only = eth_header(header, base_fee);
    json block_json = eth_block(header, base_fee, 123, hashes);
    for (const char* key : {"size", "transactions", "totalDifficulty", "uncles"}) {
        EXPECT_FALSE(head_only.contains(key)) << key;
        block_json.erase(key);
    }
    EXPECT_EQ(head_only, block_json);

    std::set<uint64_t> types;
    for (size_t i = 0; i < block.size(); ++i) {
        SCOPED_TRACE(i);
        const Hash& hash = block.tx_hashes[i];
        const auto tx_doc = store->transaction(hash).value().value();
        const auto tx = store->transaction_record(hash).value().value();
        types.insert(static_cast<uint64_t>(tx.tx.type));
        EXPECT_EQ(eth_transaction(tx, base_fee), doc_transaction(tx_doc, base_fee));
        const auto receipt_doc = store->receipt(hash).value().value();
        const auto receipt = store->receipt_record(hash).value().value();
        EXPECT_EQ(eth_receipt(receipt, tx, base_fee), doc_receipt(receipt_doc, tx_doc, base_fee));
        // A pooled transaction: the same, with null block fields.
        json pooled = eth_transaction(tx.tx, tx.hash, tx.sender, nullptr, base_fee);
        EXPECT_TRUE(pooled["blockHash"].is_null());
        EXPECT_TRUE(pooled["transactionIndex"].is_null());
    }
    EXPECT_EQ(types, (std::set<uint64_t>{0, 1, 2}));  // every type was compared
}

}  // namespace
}  // namespace barrel::rpc
