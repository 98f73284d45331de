#pragma once
/// @file
/// barrel's JSON conventions, shared by everything that writes or reads JSON: the CLI's output,
/// the values the commit stage stores in RocksDB, and later the JSON-RPC server.
///
/// - Keys are snake_case (`gas_limit`, `max_fee_per_gas`, `storage_keys`).
/// - Every integer, whatever its width, is an Ethereum JSON-RPC hex *quantity*: a string, "0x"
///   followed by lower-case hex digits without leading zeros ("0x0", "0x5208"). Strings keep
///   u256 values lossless, where JSON numbers would silently become doubles in many readers.
/// - Byte strings, hashes and addresses are lower-case "0x" hex of all their bytes ("0x" for
///   the empty string); fixed-size values keep their leading zeros.
/// - A value that is absent (the `to` of a contract creation, the `chain_id` of a pre-EIP-155
///   transaction, an unknown sender) is `null`; the key is still there, so a document's shape
///   does not depend on its values. A key that does not apply to a kind of object at all (e.g.
///   `gas_price` of an EIP-1559 transaction) is left out.
/// - Documents are nlohmann::json objects, whose keys serialise in sorted order; nothing may
///   depend on key order.

#include <barrel/core/bytes.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/uint256.hpp>

#include <nlohmann/json.hpp>

#include <optional>

namespace barrel {

/// An integer as a JSON-RPC quantity ("0x0", "0x5208").
inline nlohmann::json json_quantity(const u256& v) { return to_hex_quantity(v); }
inline nlohmann::json json_quantity(uint64_t v) { return to_hex_quantity(v); }

/// Bytes (a byte string, hash or address) as lower-case "0x" hex.
inline nlohmann::json json_bytes(BytesView bytes) { return to_hex(bytes); }

/// A value, or null when absent.
template <class T, class Fn>
nlohmann::json json_nullable(const std::optional<T>& v, Fn&& to_json_fn) {
    if (!v) return nullptr;
    return to_json_fn(*v);
}

}  // namespace barrel
