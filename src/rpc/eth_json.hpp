#pragma once
// barrel's documents in Ethereum's JSON-RPC shapes (camelCase names, quantities, the constants
// Ethereum has for what barrel has not: no logs, no uncles, no proof of work). The stored
// documents (docs/formats.md, "Storage") are the source, so a query never re-executes or
// re-decodes more than it must.

#include <barrel/core/bytes.hpp>
#include <barrel/core/uint256.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <utility>
#include <vector>

namespace barrel::rpc {

using nlohmann::json;

/// A transaction document (the store's, or one written for a pooled transaction) as
/// eth_getTransactionByHash returns it. Without a block (`block_hash` absent) the block fields
/// are null. `gasPrice` of an EIP-1559 transaction is the price it paid (or would pay):
/// min(max fee, base fee + max priority fee).
json eth_transaction(const json& doc, const u256& base_fee);

/// A receipt document with its transaction's document.
json eth_receipt(const json& receipt, const json& tx, const u256& base_fee);

/// A header document as go-ethereum's RPCMarshalHeader writes a header (eth_subscribe's
/// newHeads): a block's fields without its size, transactions and uncles.
json eth_header(const json& header, const u256& base_fee);

/// A header document as a block: `transactions` are the given hashes, or the given transaction
/// objects when `full`. `size` is the wire block's length.
json eth_block(const json& header, const u256& base_fee, size_t size, json transactions);

/// The effective gas price of a transaction document.
u256 effective_gas_price(const json& tx, const u256& base_fee);

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
