#pragma once
/// @file
/// The JSON documents the store keeps (docs/formats.md, "Storage"), following
/// barrel/json/conventions.hpp. The CLI's `get` prints them as stored.

#include <barrel/block/header.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/state/state.hpp>
#include <barrel/tx/transaction.hpp>

#include <nlohmann/json.hpp>

#include <optional>

namespace barrel::store {

nlohmann::json header_document(const block::Header& header, const Hash& hash, size_t tx_count);
/// The transaction's JSON (json/tx_json.hpp) plus block_number, block_hash and index.
nlohmann::json tx_document(const tx::Transaction& tx, const Hash& tx_hash, const Address& sender,
                           uint64_t block_number, const Hash& block_hash, size_t index);
nlohmann::json receipt_document(const exec::Receipt& receipt, const Hash& tx_hash, uint64_t block_number,
                                size_t index);
nlohmann::json account_document(const state::Account& account);
nlohmann::json user_document(const std::string& name, const u256& balance);

/// Reads back what account_document / user_document wrote; nullopt if the document is damaged.
std::optional<state::Account> parse_account_document(std::string_view text) noexcept;
std::optional<u256> parse_user_document(std::string_view text) noexcept;

}  // namespace barrel::store
