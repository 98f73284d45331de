#pragma once
/// @file
/// The writers behind documents.hpp: each appends one document's text to `out`, so that the
/// commit writes a block's documents one after another into one buffer (encode_block_batch).
/// Internal to the store.

#include <barrel/block/header.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/state/state.hpp>
#include <barrel/tx/transaction.hpp>

#include <string>
#include <string_view>

namespace barrel::store {

void write_header_document(std::string& out, const block::Header& h, const Hash& hash,
                           size_t tx_count);
void write_tx_document(std::string& out, const tx::Transaction& t, const Hash& tx_hash,
                       const Address& sender, uint64_t block_number, const Hash& block_hash,
                       size_t index);
void write_receipt_document(std::string& out, const exec::Receipt& r, const Hash& tx_hash,
                            uint64_t block_number, size_t index);
void write_account_document(std::string& out, const state::Account& a);
void write_user_document(std::string& out, std::string_view name, const u256& balance);

}  // namespace barrel::store
