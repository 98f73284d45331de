#pragma once
// eth_sendRawTransaction's answer to an encoding that is not a transaction, in go-ethereum's
// words (core/types/transaction.go UnmarshalBinary, rlp/decode.go), so that tools matching
// them work: "typed transaction too short", "transaction type not supported",
// "rlp: expected input list for types.LegacyTx",
// "rlp: non-canonical integer (leading zero bytes) for uint64, decoding into
// (types.DynamicFeeTx).Nonce", … Where go-ethereum has no counterpart (it decodes a field
// barrel refuses, or fails later for another reason), barrel's own description stays.

#include <barrel/core/bytes.hpp>

#include <string>
#include <string_view>

namespace barrel::rpc {

/// The message for `raw`, which the pool refused as malformed with `pool_message`.
std::string raw_transaction_error(BytesView raw, std::string_view pool_message);

}  // namespace barrel::rpc
