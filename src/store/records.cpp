// The decoders of the stored documents into typed records (records.hpp). Each reads the fields
// its writer (documents.cpp, json/tx_json.cpp) writes, and names the first one that is missing
// or malformed: a damaged datadir surfaces as an error a user can act on, never as a zero.

#include <barrel/core/hex.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/store/records.hpp>
#include <barrel/store/store.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace barrel::store {

using nlohmann::json;

namespace {

/// Reads fields of one JSON object; the first failure is kept (its field's path), and every
/// later read returns a default so that a parser reads straight through and checks once.
class Fields {
public:
    Fields(const json& object, std::string path) : m_object{object}, m_path{std::move(path)} {}

    bool ok() const noexcept { return !m_failed.has_value(); }
    std::string failure() const { return *m_failed; }

    uint64_t u64(const char* key) {
        const auto v = text(key);
        const auto n = v ? parse_u64(*v) : std::nullopt;
        if (!n) fail(key);
        return n.value_or(0);
    }
    u256 quantity(const char* key) {
        const auto v = text(key);
        const auto n = v ? parse_u256(*v) : std::nullopt;
        if (!n) fail(key);
        return n.value_or(0);
    }
    template <size_t N>
    FixedBytes<N> fixed(const char* key) {
        if (const auto v = text(key))
            if (auto b = fixed_from_hex<N>(*v)) return *b;
        fail(key);
        return {};
    }
    Bytes bytes(const char* key) {
        if (const auto v = text(key))
            if (auto b = from_hex(*v)) return std::move(*b);
        fail(key);
        return {};
    }
    bool is_null(const char* key) {
        const auto it = m_object.find(key);
        if (it == m_object.end()) fail(key);
        return it == m_object.end() || it->is_null();
    }
    /// The array at `key` (an empty one after a failure).
    const json& array(const char* key) {
        static const json empty = json::array();
        const auto it = m_object.find(key);
        if (it == m_object.end() || !it->is_array()) {
            fail(key);
            return empty;
        }
        return *it;
    }
    /// Takes a nested reader's failure as this one's.
    void absorb(const Fields& inner) {
        if (!inner.ok()) fail_at(inner.failure());
    }
    void fail_at(std::string path) {
        if (ok()) m_failed = std::move(path);
    }
    std::string path(const char* key) const { return m_path.empty() ? key : m_path + "." + key; }

private:
    std::optional<std::string_view> text(const char* key) {
        const auto it = m_object.find(key);
        if (it == m_object.end() || !it->is_string()) return std::nullopt;
        return std::string_view{it->get_ref<const std::string&>()};
    }
    void fail(const char* key) { fail_at(path(key)); }

    const json& m_object;
    std::string m_path;
    std::optional<std::string> m_failed;  ///< the first failing field's path
};

Expected<json, std::string> parse_object(std::string_view text) {
    json doc = json::parse(text, nullptr, false);
    if (!doc.is_object()) return unexpected(std::string{});
    return doc;
}

std::vector<tx::AccessListEntry> access_list_of(Fields& f, const json& list) {
    std::vector<tx::AccessListEntry> out;
    for (size_t i = 0; i < list.size() && f.ok(); ++i) {
        const std::string at = f.path("access_list") + "[" + std::to_string(i) + "]";
        if (!list[i].is_object()) {
            f.fail_at(at);
            break;
        }
        Fields entry{list[i], at};
        tx::AccessListEntry e{.address = entry.fixed<20>("address"), .storage_keys = {}};
        const json& keys = entry.array("storage_keys");
        for (size_t k = 0; k < keys.size() && entry.ok(); ++k) {
            const json& key = keys[k];
            auto hash = key.is_string() ? hash_from_hex(key.get_ref<const std::string&>())
                                        : Expected<Hash, HexError>{unexpected(HexError::bad_digit)};
            if (!hash) entry.fail_at(entry.path("storage_keys") + "[" + std::to_string(k) + "]");
            e.storage_keys.push_back(hash ? *hash : Hash{});
        }
        f.absorb(entry);
        out.push_back(std::move(e));
    }
    return out;
}

/// The signature's y parity from the stored `v` (json_v): the parity itself for a typed
/// transaction, 27/28 or chain_id × 2 + 35/36 for a legacy one.
std::optional<bool> y_parity_of(const tx::Transaction& t, const u256& v) {
    const u256 base = t.type != tx::TxType::legacy ? u256{0}
                      : t.chain_id                 ? u256{*t.chain_id} * 2 + 35
                                                   : u256{27};
    if (v < base || v > base + 1) return std::nullopt;
    return v == base + 1;
}

}  // namespace

Expected<HeaderRecord, std::string> parse_header_document(std::string_view text) {
    auto doc = parse_object(text);
    if (!doc) return unexpected(doc.error());
    Fields f{*doc, ""};
    HeaderRecord r;
    r.header.parent_hash = f.fixed<32>("parent_hash");
    r.header.number = f.u64("number");
    r.header.timestamp = f.u64("timestamp");
    r.header.coinbase = f.fixed<20>("coinbase");
    r.header.gas_limit = f.u64("gas_limit");
    r.header.gas_used = f.u64("gas_used");
    r.header.txs_root = f.fixed<32>("txs_root");
    r.header.receipts_root = f.fixed<32>("receipts_root");
    r.header.state_root = f.fixed<32>("state_root");
    r.header.chain_id = f.u64("chain_id");
    r.hash = f.fixed<32>("hash");
    r.transaction_count = f.u64("transaction_count");
    if (!f.ok()) return unexpected(f.failure());
    return r;
}

Expected<TransactionRecord, std::string> parse_transaction_document(std::string_view text) {
    auto doc = parse_object(text);
    if (!doc) return unexpected(doc.error());
    Fields f{*doc, ""};
    TransactionRecord r;
    tx::Transaction& t = r.tx;
    const uint64_t type = f.u64("type");
    if (f.ok() && type > 2) return unexpected(std::string{"type"});
    t.type = static_cast<tx::TxType>(type);
    if (!f.is_null("chain_id")) t.chain_id = f.u64("chain_id");
    t.nonce = f.u64("nonce");
    if (t.type == tx::TxType::dynamic_fee) {
        t.max_fee_per_gas = f.quantity("max_fee_per_gas");
        t.max_priority_fee_per_gas = f.quantity("max_priority_fee_per_gas");
    } else {
        t.max_fee_per_gas = t.max_priority_fee_per_gas = f.quantity("gas_price");
    }
    t.gas_limit = f.u64("gas_limit");
    if (!f.is_null("to")) t.to = f.fixed<20>("to");
    t.value = f.quantity("value");
    r.input = f.bytes("input");
    if (t.type != tx::TxType::legacy) t.access_list = access_list_of(f, f.array("access_list"));
    const u256 v = f.quantity("v");
    t.r = f.quantity("r");
    t.s = f.quantity("s");
    r.hash = f.fixed<32>("hash");
    r.sender = f.fixed<20>("sender");
    r.location.block_number = f.u64("block_number");
    r.location.block_hash = f.fixed<32>("block_hash");
    r.location.index = f.u64("index");
    if (!f.ok()) return unexpected(f.failure());
    const auto parity = y_parity_of(t, v);
    if (!parity) return unexpected(std::string{"v"});
    t.y_parity = *parity;
    t.data = r.input;  // moves with the record: a vector's buffer does
    return r;
}

Expected<ReceiptRecord, std::string> parse_receipt_document(std::string_view text) {
    auto doc = parse_object(text);
    if (!doc) return unexpected(doc.error());
    Fields f{*doc, ""};
    ReceiptRecord r;
    const uint64_t status = f.u64("status");
    if (f.ok() && status > 1) return unexpected(std::string{"status"});
    r.receipt.status = status == 1;
    r.receipt.gas_used = f.u64("gas_used");
    r.receipt.cumulative_gas_used = f.u64("cumulative_gas_used");
    r.receipt.output = f.bytes("output");
    r.transaction_hash = f.fixed<32>("transaction_hash");
    r.block_number = f.u64("block_number");
    r.index = f.u64("index");
    if (!f.ok()) return unexpected(f.failure());
    return r;
}

}  // namespace barrel::store
