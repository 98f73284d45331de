#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

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

/// The members a genesis must name: those without a default that means something (the chain,
/// the blocks' gas limit, the initial state). The rest default as docs/formats.md says.
constexpr std::string_view kRequired[] = {"chain_id", "gas_limit", "accounts"};

/// Builds the document as nlohmann's own parser does, but refuses a member named twice in one
/// object, at any depth, where the DOM would silently keep the last value: the document would
/// mean one thing here and maybe another to whatever wrote or checked it. The object's map
/// tells whether a name is taken, so this costs no more than json::parse. (The parser callback
/// of json::parse cannot be used: on each object's end it scans its parent's members, quadratic
/// in the number of accounts.)
class DomWithoutDuplicates {
public:
    explicit DomWithoutDuplicates(json& root) : m_root{root} {}

    /// Why parsing stopped (sax_parse returned false).
    const std::string& error() const noexcept { return m_error; }

    // The SAX interface of json::sax_parse.
    bool null() { return put(nullptr) != nullptr; }
    bool boolean(bool v) { return put(v) != nullptr; }
    bool number_integer(json::number_integer_t v) { return put(v) != nullptr; }
    bool number_unsigned(json::number_unsigned_t v) { return put(v) != nullptr; }
    bool number_float(json::number_float_t v, const json::string_t& /*as written*/) {
        return put(v) != nullptr;
    }
    bool string(json::string_t& v) { return put(std::move(v)) != nullptr; }
    bool binary(json::binary_t& v) { return put(json::binary(std::move(v))) != nullptr; }
    bool start_object(std::size_t /*size*/) { return open(json::value_t::object); }
    bool start_array(std::size_t /*size*/) { return open(json::value_t::array); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool key(json::string_t& name) {
        auto& members = m_open.back().value->get_ref<json::object_t&>();
        // try_emplace leaves `name` alone when it is taken.
        const auto [it, added] = members.try_emplace(std::move(name), nullptr);
        if (!added) {
            m_error = where() + "duplicate member \"" + name + "\"";
            return false;
        }
        m_open.back().member = &*it;
        return true;
    }
    bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                     const json::exception& e) {
        m_error = std::string{"invalid JSON: "} + e.what();
        return false;
    }

private:
    struct Open {
        json* value;                                  ///< an object or array being filled
        std::string name;                             ///< its member name or array index
        json::object_t::value_type* member{nullptr};  ///< an object's member being parsed
    };

    /// Places a parsed value where it belongs: the document, an array's end, an object's member.
    json* put(json&& v) {
        if (m_open.empty()) {
            m_root = std::move(v);
            return &m_root;
        }
        Open& parent = m_open.back();
        if (parent.value->is_array()) {
            parent.value->push_back(std::move(v));
            return &parent.value->back();
        }
        parent.member->second = std::move(v);
        return &parent.member->second;
    }

    bool open(json::value_t type) {
        std::string name;
        if (!m_open.empty()) {
            const Open& parent = m_open.back();
            name = parent.value->is_array() ? std::to_string(parent.value->size())
                                            : parent.member->first;
        }
        json* value = put(json(type));  // not json{type}: a list of one
        m_open.push_back(Open{value, std::move(name)});
        return true;
    }

    bool close() {
        m_open.pop_back();
        return true;
    }

    /// "accounts.0x12…: ", the path of the innermost object (nothing for the document).
    std::string where() const {
        std::string path;
        for (size_t i = 1; i < m_open.size(); ++i) {
            if (i > 1) path += '.';
            path += m_open[i].name;
        }
        return path.empty() ? path : path + ": ";
    }

    json& m_root;
    std::vector<Open> m_open;  ///< the objects and arrays open, outermost first
    std::string m_error;
};

/// CometBFT's spelling of a validator address: 40 upper-case hex digits.
std::string to_upper_hex(const ValidatorAddress& a) {
    std::string s = to_hex_bare(a);
    std::transform(s.begin(), s.end(), s.begin(),
                   [](char c) { return c >= 'a' && c <= 'f' ? static_cast<char>(c - 32) : c; });
    return s;
}

const json* member(const json& obj, std::string_view name) {
    const auto it = obj.find(name);
    return it == obj.end() ? nullptr : &*it;
}

Address read_address(const json& v, const std::string& where) {
    auto a = v.is_string() ? address_from_hex(v.get_ref<const std::string&>())
                           : unexpected(HexError::bad_digit);
    if (!a) throw Failure{where + ": not a 20-byte 0x address"};
    return *a;
}

state::Account read_account(const json& value, const std::string& where) {
    if (!value.is_object()) throw Failure{where + ": not an object"};
    check_members(value, where, {"nonce", "balance"});
    state::Account a;
    if (const json* nonce = member(value, "nonce"))
        a.nonce = require(read_u64(*nonce), where + ": nonce", kU64);
    const json* balance = member(value, "balance");
    if (!balance) throw Failure{where + ": balance: missing"};
    a.balance = require(read_u256(*balance), where + ": balance", kU256);
    return a;
}

/// `validator_coinbases`: CometBFT validator addresses (40 hex digits, no prefix, as CometBFT
/// prints them) to 0x fee addresses, sorted by validator.
std::vector<std::pair<ValidatorAddress, Address>> read_validator_coinbases(const json& v) {
    if (!v.is_object()) throw Failure{"validator_coinbases: not an object"};
    std::vector<std::pair<ValidatorAddress, Address>> out;
    out.reserve(v.size());
    for (const auto& [key, value] : v.items()) {
        const std::string where = "validator_coinbases." + key;
        ValidatorAddress validator;
        if (key.size() != 2 * ValidatorAddress::size() || !decode_hex_digits(key, validator.bytes))
            throw Failure{where +
                          ": not a validator address (40 hex digits, as CometBFT prints it)"};
        out.emplace_back(validator, read_address(value, where));
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    // Keys differing only in case name the same validator.
    for (size_t i = 1; i < out.size(); ++i)
        if (out[i].first == out[i - 1].first)
            throw Failure{"validator_coinbases." + to_upper_hex(out[i].first) + ": listed twice"};
    return out;
}

/// Each member present is checked in the order of docs/formats.md, then the required ones that
/// are missing: an error names what the file says before what it lacks.
Genesis parse(const json& doc) {
    if (!doc.is_object()) throw Failure{"genesis: not a JSON object"};
    check_members(doc, "",
                  {"chain_id", "base_fee", "gas_limit", "timestamp", "coinbase", "accounts",
                   "users", "validator_coinbases"});
    Genesis g;
    if (const json* v = member(doc, "chain_id")) {
        g.config.chain_id = require(read_u64(*v), "chain_id", kU64);
        // As `gen --chain-id` says: EIP-155 has no chain 0, and a signature for it is refused.
        if (g.config.chain_id == 0) throw Failure{"chain_id: must be at least 1, got 0"};
    }
    if (const json* v = member(doc, "base_fee"))
        g.config.base_fee = require(read_u256(*v), "base_fee", kU256);
    if (const json* v = member(doc, "gas_limit"))
        g.gas_limit = require(read_u64(*v), "gas_limit", kU64);
    if (const json* v = member(doc, "timestamp"))
        g.timestamp = require(read_u64(*v), "timestamp", kU64);
    if (const json* v = member(doc, "coinbase")) g.coinbase = read_address(*v, "coinbase");
    if (const json* accounts = member(doc, "accounts")) {
        if (!accounts->is_object()) throw Failure{"accounts: not an object"};
        g.alloc.accounts.reserve(accounts->size());
        for (const auto& [key, value] : accounts->items()) {
            const std::string where = "accounts." + key;
            const auto address = address_from_hex(key);
            if (!address) throw Failure{where + ": not a 20-byte 0x address"};
            g.alloc.accounts.emplace_back(*address, read_account(value, where));
        }
    }
    if (const json* users = member(doc, "users")) {
        if (!users->is_object()) throw Failure{"users: not an object"};
        g.alloc.users.reserve(users->size());
        for (const auto& [key, value] : users->items()) {
            if (key.empty()) throw Failure{"users: empty user name"};
            g.alloc.users.emplace_back(key, require(read_u256(value), "users." + key, kU256));
        }
    }
    if (const json* coinbases = member(doc, "validator_coinbases"))
        g.validator_coinbases = read_validator_coinbases(*coinbases);
    for (const std::string_view name : kRequired)
        if (!member(doc, name)) throw Failure{std::string{name} + ": missing"};
    auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::sort(g.alloc.accounts.begin(), g.alloc.accounts.end(), by_key);
    std::sort(g.alloc.users.begin(), g.alloc.users.end(), by_key);
    // Hex keys differing only in case name the same account.
    for (size_t i = 1; i < g.alloc.accounts.size(); ++i)
        if (g.alloc.accounts[i].first == g.alloc.accounts[i - 1].first)
            throw Failure{"accounts." + to_hex(g.alloc.accounts[i].first) + ": listed twice"};
    if (auto supply = check_supply(g); !supply) throw Failure{supply.error()};
    return g;
}

}  // namespace

Expected<void, std::string> check_supply(const Genesis& g) {
    // 2^32 accounts of 2^256 − 1 each still fit 512 bits: the sum cannot wrap here.
    u512 sum = 0;
    for (const auto& [address, account] : g.alloc.accounts) sum += u512{account.balance};
    if (sum <= u512{~u256{0}}) return {};
    return unexpected("accounts: the balances sum to " + sum.str() +
                      ", not below 2^256 (no balance could overflow then)");
}

Expected<Genesis, std::string> parse_genesis(std::string_view text) {
    json doc;
    DomWithoutDuplicates builder{doc};
    if (!json::sax_parse(text, &builder)) return unexpected(builder.error());
    try {
        return parse(doc);
    } catch (const Failure& f) {
        return unexpected(f.message);
    } catch (const json::exception& e) {
        return unexpected(std::string{"genesis: "} + e.what());
    }
}

std::optional<Address> validator_coinbase(const Genesis& g, BytesView proposer) {
    if (proposer.size() != ValidatorAddress::size()) return std::nullopt;
    const auto validator = ValidatorAddress::from_view(proposer);
    const auto it = std::lower_bound(
        g.validator_coinbases.begin(), g.validator_coinbases.end(), validator,
        [](const auto& entry, const ValidatorAddress& v) { return entry.first < v; });
    if (it == g.validator_coinbases.end() || it->first != validator) return std::nullopt;
    return it->second;
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
    // Only when there are any: a genesis without them is written as before.
    if (!g.validator_coinbases.empty()) {
        json coinbases = json::object();
        for (const auto& [validator, coinbase] : g.validator_coinbases)
            coinbases[to_upper_hex(validator)] = to_hex(coinbase);
        doc["validator_coinbases"] = std::move(coinbases);
    }
    return doc.dump(1) + "\n";
}

state::Lattice genesis_lattice(const Genesis& g, bool parallel) {
    return state::lattice_of(g.alloc, parallel);
}

Hash state_root(const Genesis& g) { return genesis_lattice(g).root(); }

block::Header genesis_header(const Genesis& g) {
    block::Header h;
    // Block 0 has no parent; its parent_hash commits to the chain parameters that are not in the
    // header (the base fee), so chains that differ only there have different genesis hashes.
    Bytes config;
    rlp::encode(config, g.config.chain_id);
    rlp::encode(config, g.config.base_fee);
    // The fee addresses decide every block's coinbase, so a genesis commits to them; without
    // any, the list is the two parameters it always was (a genesis keeps its hash).
    if (!g.validator_coinbases.empty()) {
        Bytes pairs;
        for (const auto& [validator, coinbase] : g.validator_coinbases) {
            Bytes pair;
            rlp::encode(pair, validator);
            rlp::encode(pair, coinbase);
            rlp::encode_list(pairs, pair);
        }
        rlp::encode_list(config, pairs);
    }
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
