#pragma once
/// @file
/// The JSON documents the store keeps (docs/formats.md, "Storage"), following
/// barrel/json/conventions.hpp. The CLI's `get` prints them as stored.
///
/// Each function returns the document's text: exactly what nlohmann::json::dump() makes of the
/// document (compact, keys sorted), written without building a DOM (json/writer.hpp). The commit
/// stage writes the same text, about 10,000 documents per 2,500-transaction block, straight into
/// its write batch.

#include <barrel/block/block.hpp>
#include <barrel/block/header.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/state/state.hpp>
#include <barrel/tx/transaction.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace barrel::store {

/// The header's fields, its hash and `transaction_count`.
std::string header_document(const block::Header& header, const Hash& hash, size_t tx_count);
/// The transaction's JSON (json/tx_json.hpp) plus block_number, block_hash and index.
std::string tx_document(const tx::Transaction& tx, const Hash& tx_hash, const Address& sender,
                        uint64_t block_number, const Hash& block_hash, size_t index);
std::string receipt_document(const exec::Receipt& receipt, const Hash& tx_hash,
                             uint64_t block_number, size_t index);
std::string account_document(const state::Account& account);
/// The name is bytes to DagTransfer, so it is stored as hex.
std::string user_document(std::string_view name, const u256& balance);

/// Reads back what account_document / user_document wrote; nullopt if the document is damaged.
std::optional<state::Account> parse_account_document(std::string_view text) noexcept;
std::optional<u256> parse_user_document(std::string_view text) noexcept;

}  // namespace barrel::store
