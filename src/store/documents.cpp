#include <barrel/json/conventions.hpp>
#include <barrel/json/tx_json.hpp>
#include <barrel/store/documents.hpp>

namespace barrel::store {

using nlohmann::json;

json header_document(const block::Header& h, const Hash& hash, size_t tx_count) {
    return {
        {"number", json_quantity(h.number)},
        {"hash", json_bytes(hash)},
        {"parent_hash", json_bytes(h.parent_hash)},
        {"timestamp", json_quantity(h.timestamp)},
        {"coinbase", json_bytes(h.coinbase)},
        {"gas_limit", json_quantity(h.gas_limit)},
        {"gas_used", json_quantity(h.gas_used)},
        {"txs_root", json_bytes(h.txs_root)},
        {"receipts_root", json_bytes(h.receipts_root)},
        {"state_root", json_bytes(h.state_root)},
        {"chain_id", json_quantity(h.chain_id)},
        {"transaction_count", json_quantity(uint64_t{tx_count})},
    };
}

json tx_document(const tx::Transaction& t, const Hash& tx_hash, const Address& sender, uint64_t block_number,
                 const Hash& block_hash, size_t index) {
    json doc = to_json(t, tx_hash, sender);
    doc["block_number"] = json_quantity(block_number);
    doc["block_hash"] = json_bytes(block_hash);
    doc["index"] = json_quantity(uint64_t{index});
    return doc;
}

json receipt_document(const exec::Receipt& r, const Hash& tx_hash, uint64_t block_number, size_t index) {
    return {
        {"transaction_hash", json_bytes(tx_hash)},
        {"block_number", json_quantity(block_number)},
        {"index", json_quantity(uint64_t{index})},
        {"status", json_quantity(uint64_t{r.status ? 1u : 0u})},
        {"gas_used", json_quantity(r.gas_used)},
        {"cumulative_gas_used", json_quantity(r.cumulative_gas_used)},
        {"output", json_bytes(r.output)},
    };
}

json account_document(const state::Account& a) {
    return {{"nonce", json_quantity(a.nonce)}, {"balance", json_quantity(a.balance)}};
}

json user_document(const std::string& name, const u256& balance) {
    return {{"name", json_bytes(as_bytes(name))}, {"balance", json_quantity(balance)}};
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
