#include "rpc/eth_json.hpp"

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/json/conventions.hpp>

#include <algorithm>
#include <string>

namespace barrel::rpc {

namespace {

std::string zero_hex(size_t bytes) { return "0x" + std::string(bytes * 2, '0'); }

/// keccak256(RLP([])): Ethereum's hash of an empty uncle list.
const std::string& empty_uncles_hash() {
    static const std::string h = to_hex(keccak256(Bytes{0xc0}));
    return h;
}

}  // namespace

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

json eth_transaction(const tx::Transaction& t, const Hash& hash, const Address& sender,
                     const TxLocation* at, const u256& base_fee) {
    const bool typed = t.type != tx::TxType::legacy;
    json out = {
        {"blockHash", at ? json_bytes(at->block_hash) : json(nullptr)},
        {"blockNumber", at ? json_quantity(at->block_number) : json(nullptr)},
        {"transactionIndex", at ? json_quantity(uint64_t{at->index}) : json(nullptr)},
        {"from", json_bytes(sender)},
        {"gas", json_quantity(t.gas_limit)},
        {"gasPrice", json_quantity(tx::effective_gas_price(t, base_fee))},
        {"hash", json_bytes(hash)},
        {"input", json_bytes(t.data)},
        {"nonce", json_quantity(t.nonce)},
        {"to", t.to ? json_bytes(*t.to) : json(nullptr)},
        {"value", json_quantity(t.value)},
        {"type", json_quantity(uint64_t{static_cast<uint8_t>(t.type)})},
        {"v", json_quantity(json_v(t))},
        {"r", json_quantity(t.r)},
        {"s", json_quantity(t.s)},
    };
    if (t.chain_id) out["chainId"] = json_quantity(*t.chain_id);
    if (t.type == tx::TxType::dynamic_fee) {
        out["maxFeePerGas"] = json_quantity(t.max_fee_per_gas);
        out["maxPriorityFeePerGas"] = json_quantity(t.max_priority_fee_per_gas);
    }
    if (typed) {
        json list = json::array();
        for (const tx::AccessListEntry& entry : t.access_list) {
            json keys = json::array();
            for (const Hash& key : entry.storage_keys) keys.push_back(json_bytes(key));
            list.push_back({{"address", json_bytes(entry.address)}, {"storageKeys", keys}});
        }
        out["accessList"] = std::move(list);
        out["yParity"] = json_quantity(uint64_t{t.y_parity ? 1u : 0u});
    }
    return out;
}

json eth_transaction(const store::TransactionRecord& r, const u256& base_fee) {
    return eth_transaction(r.tx, r.hash, r.sender, &r.location, base_fee);
}

json eth_receipt(const store::ReceiptRecord& receipt, const store::TransactionRecord& tx,
                 const u256& base_fee) {
    return {
        {"transactionHash", json_bytes(receipt.transaction_hash)},
        {"transactionIndex", json_quantity(receipt.index)},
        {"blockHash", json_bytes(tx.location.block_hash)},
        {"blockNumber", json_quantity(receipt.block_number)},
        {"from", json_bytes(tx.sender)},
        {"to", tx.tx.to ? json_bytes(*tx.tx.to) : json(nullptr)},
        {"cumulativeGasUsed", json_quantity(receipt.receipt.cumulative_gas_used)},
        {"gasUsed", json_quantity(receipt.receipt.gas_used)},
        {"effectiveGasPrice", json_quantity(tx::effective_gas_price(tx.tx, base_fee))},
        {"contractAddress", nullptr},
        {"logs", json::array()},
        {"logsBloom", zero_hex(256)},
        {"type", json_quantity(uint64_t{static_cast<uint8_t>(tx.tx.type)})},
        {"status", json_quantity(uint64_t{receipt.receipt.status ? 1u : 0u})},
    };
}

json eth_header(const store::HeaderRecord& record, const u256& base_fee) {
    const block::Header& h = record.header;
    return {
        {"number", json_quantity(h.number)},
        {"hash", json_bytes(record.hash)},
        {"parentHash", json_bytes(h.parent_hash)},
        {"timestamp", json_quantity(h.timestamp)},
        {"miner", json_bytes(h.coinbase)},
        {"gasLimit", json_quantity(h.gas_limit)},
        {"gasUsed", json_quantity(h.gas_used)},
        {"transactionsRoot", json_bytes(h.txs_root)},
        {"receiptsRoot", json_bytes(h.receipts_root)},
        {"stateRoot", json_bytes(h.state_root)},
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

json eth_block(const store::HeaderRecord& record, const u256& base_fee, size_t size,
               json transactions) {
    json out = eth_header(record, base_fee);
    out["size"] = json_quantity(uint64_t{size});
    out["transactions"] = std::move(transactions);
    out["totalDifficulty"] = "0x0";
    out["uncles"] = json::array();
    return out;
}

}  // namespace barrel::rpc
