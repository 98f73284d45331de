#include <barrel/json/conventions.hpp>
#include <barrel/json/tx_json.hpp>
#include <barrel/store/documents.hpp>

#include "document_writers.hpp"
#include "json/tx_writer.hpp"

namespace barrel::store {

using nlohmann::json;

namespace {

/// Room for a document of `fields` hex fields of up to 32 bytes each, so that writing it does not
/// reallocate (an upper bound: hashes are the longest common value).
std::string reserved(size_t fields, size_t extra = 0) {
    std::string out;
    out.reserve(fields * 96 + extra);
    return out;
}

}  // namespace

// Every writer below gives its keys in ascending order: that is the order dump() writes an
// nlohmann object in (test/unit/store_documents_test.cpp compares the two on random documents).
// Each appends to `out`: the commit writes a block's documents one after another into one buffer.

void write_header_document(std::string& out, const block::Header& h, const Hash& hash,
                           size_t tx_count) {
    JsonWriter w{out};
    w.begin_object()
        .key("chain_id")
        .quantity(h.chain_id)
        .key("coinbase")
        .bytes(h.coinbase)
        .key("gas_limit")
        .quantity(h.gas_limit)
        .key("gas_used")
        .quantity(h.gas_used)
        .key("hash")
        .bytes(hash)
        .key("number")
        .quantity(h.number)
        .key("parent_hash")
        .bytes(h.parent_hash)
        .key("receipts_root")
        .bytes(h.receipts_root)
        .key("state_root")
        .bytes(h.state_root)
        .key("timestamp")
        .quantity(h.timestamp)
        .key("transaction_count")
        .quantity(uint64_t{tx_count})
        .key("txs_root")
        .bytes(h.txs_root)
        .end_object();
}

void write_tx_document(std::string& out, const tx::Transaction& t, const Hash& tx_hash,
                       const Address& sender, uint64_t block_number, const Hash& block_hash,
                       size_t index) {
    JsonWriter w{out};
    const TxLocation at{block_number, block_hash, index};
    write_tx_json(w, t, tx_hash, sender, &at);
}

void write_receipt_document(std::string& out, const exec::Receipt& r, const Hash& tx_hash,
                            uint64_t block_number, size_t index) {
    JsonWriter w{out};
    w.begin_object()
        .key("block_number")
        .quantity(block_number)
        .key("cumulative_gas_used")
        .quantity(r.cumulative_gas_used)
        .key("gas_used")
        .quantity(r.gas_used)
        .key("index")
        .quantity(uint64_t{index})
        .key("output")
        .bytes(r.output)
        .key("status")
        .quantity(uint64_t{r.status ? 1u : 0u})
        .key("transaction_hash")
        .bytes(tx_hash)
        .end_object();
}

void write_account_document(std::string& out, const state::Account& a) {
    JsonWriter w{out};
    w.begin_object().key("balance").quantity(a.balance).key("nonce").quantity(a.nonce).end_object();
}

void write_user_document(std::string& out, std::string_view name, const u256& balance) {
    JsonWriter w{out};
    w.begin_object()
        .key("balance")
        .quantity(balance)
        .key("name")
        .bytes(as_bytes(name))
        .end_object();
}

std::string header_document(const block::Header& h, const Hash& hash, size_t tx_count) {
    std::string out = reserved(12);
    write_header_document(out, h, hash, tx_count);
    return out;
}

std::string tx_document(const tx::Transaction& t, const Hash& tx_hash, const Address& sender,
                        uint64_t block_number, const Hash& block_hash, size_t index) {
    size_t access_list_bytes = 0;
    for (const auto& entry : t.access_list)
        access_list_bytes += 64 + entry.storage_keys.size() * 70;
    std::string out = reserved(19, 2 * t.data.size() + access_list_bytes);
    write_tx_document(out, t, tx_hash, sender, block_number, block_hash, index);
    return out;
}

std::string receipt_document(const exec::Receipt& r, const Hash& tx_hash, uint64_t block_number,
                             size_t index) {
    std::string out = reserved(7, 2 * r.output.size());
    write_receipt_document(out, r, tx_hash, block_number, index);
    return out;
}

std::string account_document(const state::Account& a) {
    std::string out = reserved(2);
    write_account_document(out, a);
    return out;
}

std::string user_document(std::string_view name, const u256& balance) {
    std::string out = reserved(2, 2 * name.size());
    write_user_document(out, name, balance);
    return out;
}

std::optional<state::Account> parse_account_document(std::string_view text) noexcept {
    const json doc = json::parse(text, nullptr, false);
    if (!doc.is_object()) return std::nullopt;
    const auto nonce = doc.find("nonce");
    const auto balance = doc.find("balance");
    if (nonce == doc.end() || balance == doc.end() || !nonce->is_string() || !balance->is_string())
        return std::nullopt;
    const auto n = parse_u64(nonce->get_ref<const std::string&>());
    const auto b = parse_u256(balance->get_ref<const std::string&>());
    if (!n || !b) return std::nullopt;
    return state::Account{*n, *b};
}

std::optional<u256> parse_user_document(std::string_view text) noexcept {
    const json doc = json::parse(text, nullptr, false);
    if (!doc.is_object()) return std::nullopt;
    const auto balance = doc.find("balance");
    if (balance == doc.end() || !balance->is_string()) return std::nullopt;
    return parse_u256(balance->get_ref<const std::string&>());
}

}  // namespace barrel::store
