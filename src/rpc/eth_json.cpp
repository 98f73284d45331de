#include "rpc/eth_json.hpp"

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/json/conventions.hpp>

#include <algorithm>
#include <string>

namespace barrel::rpc {

namespace {

u256 quantity_of(const json& v) { return parse_u256(v.get<std::string>()).value_or(0); }

const json& member(const json& doc, const char* key) {
    static const json null_value;
    const auto it = doc.find(key);
    return it == doc.end() ? null_value : *it;
}

std::string zero_hex(size_t bytes) { return "0x" + std::string(bytes * 2, '0'); }

/// keccak256(RLP([])): Ethereum's hash of an empty uncle list.
const std::string& empty_uncles_hash() {
    static const std::string h = to_hex(keccak256(Bytes{0xc0}));
    return h;
}

}  // namespace

u256 effective_gas_price(const json& tx, const u256& base_fee) {
    if (tx.contains("gas_price")) return quantity_of(tx["gas_price"]);
    const u256 cap = quantity_of(tx["max_fee_per_gas"]);
    const u256 tip = quantity_of(tx["max_priority_fee_per_gas"]);
    const auto offered = checked_add(base_fee, tip);
    return offered && *offered < cap ? *offered : cap;
}

std::vector<u256> reward_percentiles(std::vector<std::pair<u256, uint64_t>> tips_and_gas,
                                     const std::vector<double>& percentiles) {
    return rewards_of(sorted_tips(std::move(tips_and_gas)), percentiles);
}

SortedTips sorted_tips(std::vector<std::pair<u256, uint64_t>> tips_and_gas) {
    std::stable_sort(tips_and_gas.begin(), tips_and_gas.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    SortedTips out;
    uint64_t sum = 0;
    for (const auto& [tip, gas] : tips_and_gas) {
        sum += gas;
        if (!out.tips.empty() && out.tips.back() == tip) {
            out.gas_up_to.back() = sum;
            continue;
        }
        out.tips.push_back(tip);
        out.gas_up_to.push_back(sum);
    }
    return out;
}

std::vector<u256> rewards_of(const SortedTips& sorted, const std::vector<double>& percentiles) {
    std::vector<u256> out(percentiles.size(), u256{0});
    if (sorted.tips.empty()) return out;
    const uint64_t block_gas = sorted.gas_up_to.back();
    for (size_t k = 0; k < percentiles.size(); ++k) {
        // The first tip at which the running sum reaches the threshold: a tip's transactions
        // all have it, so the first of them that reaches it is the one go-ethereum's walk
        // through the transactions stops at.
        const auto threshold =
            static_cast<uint64_t>(static_cast<double>(block_gas) * percentiles[k] / 100.0);
        const auto at =
            std::lower_bound(sorted.gas_up_to.begin(), sorted.gas_up_to.end(), threshold);
        out[k] = at == sorted.gas_up_to.end()
                     ? sorted.tips.back()
                     : sorted.tips[static_cast<size_t>(at - sorted.gas_up_to.begin())];
    }
    return out;
}

json eth_transaction(const json& doc, const u256& base_fee) {
    const bool mined = doc.contains("block_hash");
    json out = {
        {"blockHash", mined ? doc["block_hash"] : json(nullptr)},
        {"blockNumber", mined ? doc["block_number"] : json(nullptr)},
        {"transactionIndex", mined ? doc["index"] : json(nullptr)},
        {"from", doc["sender"]},
        {"gas", doc["gas_limit"]},
        {"gasPrice", json_quantity(effective_gas_price(doc, base_fee))},
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

json eth_receipt(const json& receipt, const json& tx, const u256& base_fee) {
    return {
        {"transactionHash", receipt["transaction_hash"]},
        {"transactionIndex", receipt["index"]},
        {"blockHash", member(tx, "block_hash")},
        {"blockNumber", receipt["block_number"]},
        {"from", tx["sender"]},
        {"to", tx["to"]},
        {"cumulativeGasUsed", receipt["cumulative_gas_used"]},
        {"gasUsed", receipt["gas_used"]},
        {"effectiveGasPrice", json_quantity(effective_gas_price(tx, base_fee))},
        {"contractAddress", nullptr},
        {"logs", json::array()},
        {"logsBloom", zero_hex(256)},
        {"type", tx["type"]},
        {"status", receipt["status"]},
    };
}

json eth_header(const json& header, const u256& base_fee) {
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
        // Ethereum's constants for what barrel's blocks do not have.
        {"nonce", "0x0000000000000000"},
        {"difficulty", "0x0"},
        {"mixHash", zero_hex(32)},
        {"sha3Uncles", empty_uncles_hash()},
        {"logsBloom", zero_hex(256)},
        {"extraData", "0x"},
    };
}

json eth_block(const json& header, const u256& base_fee, size_t size, json transactions) {
    json out = eth_header(header, base_fee);
    out["size"] = json_quantity(uint64_t{size});
    out["transactions"] = std::move(transactions);
    out["totalDifficulty"] = "0x0";
    out["uncles"] = json::array();
    return out;
}

}  // namespace barrel::rpc
