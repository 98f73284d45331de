#pragma once
/// @file
/// JSON form of a transaction, following the conventions of barrel/json/conventions.hpp. One
/// serializer (write_tx_json, src/json/tx_writer.hpp) makes it for every reader: the store's
/// transaction documents, the command line's output and to_json below.

#include <barrel/core/bytes.hpp>
#include <barrel/json/conventions.hpp>
#include <barrel/tx/transaction.hpp>

#include <nlohmann/json.hpp>

#include <optional>

namespace barrel {

/// A transaction as a JSON object with the keys
///
///     type                      quantity: 0 legacy, 1 EIP-2930, 2 EIP-1559
///     chain_id                  quantity, null for a pre-EIP-155 legacy transaction
///     nonce, gas_limit          quantity
///     gas_price                 quantity (legacy and type 1 only)
///     max_fee_per_gas,          quantity (type 2 only)
///     max_priority_fee_per_gas
///     to                        address, null for a contract creation
///     value                     quantity
///     input                     bytes (calldata or init code)
///     access_list               [{address, storage_keys: [hash…]}] (types 1 and 2 only)
///     v                         quantity: the y parity (0/1) for typed transactions, the legacy
///                               v (27/28, or chain_id × 2 + 35/36 under EIP-155) for legacy ones
///     r, s                      quantity
///     hash                      hash (the caller's: keccak256 of the encoding)
///     sender                    address, null if `sender` is absent (not recovered)
nlohmann::json to_json(const tx::Transaction& tx, const Hash& hash,
                       const std::optional<Address>& sender);

/// The `v` above: the y parity of a typed transaction, the v a legacy one carries on the wire
/// (u256: chain_id × 2 + 36 does not fit 64 bits for the largest chain ids).
u256 json_v(const tx::Transaction& tx);

/// Where a committed transaction sits in its chain: the store's documents add these as
/// `block_hash`, `block_number` and `index`; its typed record (store/records.hpp) carries them.
struct TxLocation {
    uint64_t block_number{0};
    Hash block_hash;
    size_t index{0};
};

}  // namespace barrel
