#pragma once
// barrel's records in Ethereum's JSON-RPC shapes (camelCase names, quantities, the constants
// Ethereum has for what barrel has not: no logs, no uncles, no proof of work). The store's typed
// records (store/records.hpp) and the pool's transactions are the source: this layer never reads
// a stored document, and the effective gas price is tx::effective_gas_price, the rule execution
// charges by.

#include <barrel/core/bytes.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/json/tx_json.hpp>
#include <barrel/store/records.hpp>
#include <barrel/tx/transaction.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <utility>
#include <vector>

namespace barrel::rpc {

using nlohmann::json;

/// A transaction as eth_getTransactionByHash returns it: a committed one (`at` its place) or a
/// pooled one (`at` null: the block fields are null). `gasPrice` of an EIP-1559 transaction is
/// the price it paid (or would pay): tx::effective_gas_price.
json eth_transaction(const tx::Transaction& tx, const Hash& hash, const Address& sender,
                     const TxLocation* at, const u256& base_fee);
json eth_transaction(const store::TransactionRecord& record, const u256& base_fee);

/// A receipt with its transaction, as eth_getTransactionReceipt returns it.
json eth_receipt(const store::ReceiptRecord& receipt, const store::TransactionRecord& tx,
                 const u256& base_fee);

/// A committed header as go-ethereum's RPCMarshalHeader writes one (eth_subscribe's newHeads):
/// a block's fields without its size, transactions, total difficulty and uncles.
json eth_header(const store::HeaderRecord& header, const u256& base_fee);

/// A committed header as a block: `transactions` are hashes, or transaction objects when full;
/// `size` is the wire block's length.
json eth_block(const store::HeaderRecord& header, const u256& base_fee, size_t size,
               json transactions);

/// A block's rewards at `percentiles` (increasing, 0 to 100), as go-ethereum's eth_feeHistory
/// computes them: the transactions' (effective tip, gas used) sorted by tip, and for each
/// percentile p the tip of the first transaction at which the running sum of gas used reaches
/// p % of the block's gas used (truncated to an integer); 0 for each when the block has none.
std::vector<u256> reward_percentiles(std::vector<std::pair<u256, uint64_t>> tips_and_gas,
                                     const std::vector<double>& percentiles);

/// A block's transactions as reward_percentiles reads them: their distinct effective tips,
/// increasing, each with the gas used by the transactions up to it (a running sum). Made once
/// per block, it answers any percentiles by binary search (eth_feeHistory caches it).
struct SortedTips {
    std::vector<u256> tips;
    std::vector<uint64_t> gas_up_to;
};
SortedTips sorted_tips(std::vector<std::pair<u256, uint64_t>> tips_and_gas);
/// reward_percentiles over SortedTips.
std::vector<u256> rewards_of(const SortedTips& sorted, const std::vector<double>& percentiles);

}  // namespace barrel::rpc
