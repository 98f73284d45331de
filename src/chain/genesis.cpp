#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace barrel::chain {

namespace {

using nlohmann::json;

/// A genesis integer: a JSON unsigned number, or a string in decimal or 0x hex.
std::optional<u256> read_u256(const json& v) {
    if (v.is_number_unsigned()) return u256{v.get<uint64_t>()};
    if (v.is_string()) return parse_u256(v.get_ref<const std::string&>());
    return std::nullopt;
}

std::optional<uint64_t> read_u64(const json& v) {
    const auto x = read_u256(v);
    if (!x || *x > std::numeric_limits<uint64_t>::max()) return std::nullopt;
    return static_cast<uint64_t>(*x);
}

struct Failure {
    std::string message;
};

template <class T>
T require(std::optional<T> v, const std::string& where, std::string_view what) {
    if (!v) throw Failure{where + ": " + std::string{what}};
    return *v;
}

constexpr std::string_view kU64 = "not an unsigned 64-bit integer";
constexpr std::string_view kU256 = "not an unsigned 256-bit integer";

void check_members(const json& obj, const std::string& where,
                   std::initializer_list<std::string_view> allowed) {
    for (const auto& [key, value] : obj.items()) {
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
            throw Failure{(where.empty() ? "" : where + ": ") + "unknown member \"" + key + "\""};
    }
}

Genesis parse(const json& doc) {
    if (!doc.is_object()) throw Failure{"genesis: not a JSON object"};
    check_members(
        doc, "",
        {"chain_id", "base_fee", "gas_limit", "timestamp", "coinbase", "accounts", "users"});
    Genesis g;
    if (!doc.contains("chain_id")) throw Failure{"chain_id: missing"};
    g.config.chain_id = require(read_u64(doc["chain_id"]), "chain_id", kU64);
    // As `gen --chain-id` says: EIP-155 has no chain 0, and a signature for it is refused.
    if (g.config.chain_id == 0) throw Failure{"chain_id: must be at least 1, got 0"};
    if (doc.contains("base_fee"))
        g.config.base_fee = require(read_u256(doc["base_fee"]), "base_fee", kU256);
    if (doc.contains("gas_limit"))
        g.gas_limit = require(read_u64(doc["gas_limit"]), "gas_limit", kU64);
    if (doc.contains("timestamp"))
        g.timestamp = require(read_u64(doc["timestamp"]), "timestamp", kU64);
    if (doc.contains("coinbase")) {
        const auto& c = doc["coinbase"];
        auto a = c.is_string() ? address_from_hex(c.get_ref<const std::string&>())
                               : unexpected(HexError::bad_digit);
        if (!a) throw Failure{"coinbase: not a 20-byte 0x address"};
        g.coinbase = *a;
    }
    if (doc.contains("accounts")) {
        const auto& accounts = doc["accounts"];
        if (!accounts.is_object()) throw Failure{"accounts: not an object"};
        for (const auto& [key, value] : accounts.items()) {
            const std::string where = "accounts." + key;
            const auto address = address_from_hex(key);
            if (!address) throw Failure{where + ": not a 20-byte 0x address"};
            if (!value.is_object()) throw Failure{where + ": not an object"};
            check_members(value, where, {"nonce", "balance"});
            state::Account a;
            if (value.contains("nonce"))
                a.nonce = require(read_u64(value["nonce"]), where + ": nonce", kU64);
            if (value.contains("balance"))
                a.balance = require(read_u256(value["balance"]), where + ": balance", kU256);
            g.alloc.accounts.emplace_back(*address, a);
        }
    }
    if (doc.contains("users")) {
        const auto& users = doc["users"];
        if (!users.is_object()) throw Failure{"users: not an object"};
        for (const auto& [key, value] : users.items()) {
            if (key.empty()) throw Failure{"users: empty user name"};
            g.alloc.users.emplace_back(key, require(read_u256(value), "users." + key, kU256));
        }
    }
    auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::sort(g.alloc.accounts.begin(), g.alloc.accounts.end(), by_key);
    std::sort(g.alloc.users.begin(), g.alloc.users.end(), by_key);
    // Hex keys differing only in case name the same account.
    for (size_t i = 1; i < g.alloc.accounts.size(); ++i)
        if (g.alloc.accounts[i].first == g.alloc.accounts[i - 1].first)
            throw Failure{"accounts." + to_hex(g.alloc.accounts[i].first) + ": listed twice"};
    return g;
}

}  // namespace

Expected<Genesis, std::string> parse_genesis(std::string_view text) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        return unexpected(std::string{"invalid JSON: "} + e.what());
    }
    try {
        return parse(doc);
    } catch (const Failure& f) {
        return unexpected(f.message);
    } catch (const json::exception& e) {
        return unexpected(std::string{"genesis: "} + e.what());
    }
}

std::string to_json_text(const Genesis& g) {
    json doc;
    doc["chain_id"] = to_hex_quantity(g.config.chain_id);
    doc["base_fee"] = to_hex_quantity(g.config.base_fee);
    doc["gas_limit"] = to_hex_quantity(g.gas_limit);
    doc["timestamp"] = to_hex_quantity(g.timestamp);
    doc["coinbase"] = to_hex(g.coinbase);
    json accounts = json::object();
    for (const auto& [address, a] : g.alloc.accounts)
        accounts[to_hex(address)] = {{"nonce", to_hex_quantity(a.nonce)},
                                     {"balance", to_hex_quantity(a.balance)}};
    doc["accounts"] = std::move(accounts);
    json users = json::object();
    for (const auto& [name, balance] : g.alloc.users) users[name] = to_hex_quantity(balance);
    doc["users"] = std::move(users);
    return doc.dump(1) + "\n";
}

Hash state_root(const Genesis& g) { return state::next_state_root(Hash{}, g.alloc); }

block::Header genesis_header(const Genesis& g) {
    block::Header h;
    // Block 0 has no parent; its parent_hash commits to the chain parameters that are not in the
    // header (the base fee), so chains that differ only there have different genesis hashes.
    Bytes config;
    rlp::encode(config, g.config.chain_id);
    rlp::encode(config, g.config.base_fee);
    Bytes config_list;
    rlp::encode_list(config_list, config);
    h.parent_hash = keccak256(config_list);
    h.number = 0;
    h.timestamp = g.timestamp;
    h.coinbase = g.coinbase;
    h.gas_limit = g.gas_limit;
    h.txs_root = empty_keccak();
    h.receipts_root = empty_keccak();
    h.state_root = state_root(g);
    h.chain_id = g.config.chain_id;
    return h;
}

state::MemoryState genesis_state(const Genesis& g) {
    state::MemoryState s;
    s.apply(g.alloc);
    return s;
}

}  // namespace barrel::chain
