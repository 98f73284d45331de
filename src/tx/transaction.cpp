#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/tx/transaction.hpp>

#include <cassert>
#include <limits>

namespace barrel::tx {

std::string_view to_string(TxErrorCode code) noexcept {
    switch (code) {
        case TxErrorCode::malformed_rlp: return "malformed_rlp";
        case TxErrorCode::unsupported_type: return "unsupported_type";
        case TxErrorCode::too_few_fields: return "too_few_fields";
        case TxErrorCode::too_many_fields: return "too_many_fields";
        case TxErrorCode::invalid_v: return "invalid_v";
        case TxErrorCode::invalid_signature: return "invalid_signature";
        case TxErrorCode::high_s: return "high_s";
        case TxErrorCode::recovery_failed: return "recovery_failed";
        case TxErrorCode::wrong_chain_id: return "wrong_chain_id";
        case TxErrorCode::nonce_too_big: return "nonce_too_big";
        case TxErrorCode::intrinsic_gas_too_low: return "intrinsic_gas_too_low";
        case TxErrorCode::fee_cap_overflow: return "fee_cap_overflow";
        case TxErrorCode::priority_fee_above_cap: return "priority_fee_above_cap";
        case TxErrorCode::init_code_too_large: return "init_code_too_large";
    }
    return "unknown";
}

std::string_view to_string(Field field) noexcept {
    switch (field) {
        case Field::none: return "";
        case Field::envelope: return "envelope";
        case Field::chain_id: return "chain_id";
        case Field::nonce: return "nonce";
        case Field::gas_price: return "gas_price";
        case Field::max_priority_fee_per_gas: return "max_priority_fee_per_gas";
        case Field::max_fee_per_gas: return "max_fee_per_gas";
        case Field::gas_limit: return "gas_limit";
        case Field::to: return "to";
        case Field::value: return "value";
        case Field::data: return "data";
        case Field::access_list: return "access_list";
        case Field::v: return "v";
        case Field::r: return "r";
        case Field::s: return "s";
    }
    return "unknown";
}

std::string describe(const TxError& error) {
    std::string out;
    if (error.field != Field::none) {
        out += to_string(error.field);
        out += ": ";
    }
    out += error.code == TxErrorCode::malformed_rlp ? rlp::to_string(error.rlp)
                                                    : to_string(error.code);
    return out;
}

namespace {

Unexpected<TxError> rlp_error(Field field, rlp::DecodingError e) noexcept {
    return unexpected(TxError{TxErrorCode::malformed_rlp, field, e});
}

Unexpected<TxError> tx_error(TxErrorCode code, Field field = Field::none) noexcept {
    return unexpected(TxError{code, field, {}});
}

/// Reads the fields of a transaction list from the front of its payload, mapping each failure to
/// the field it concerns, and telling a list that ends early from a malformed field.
class FieldReader {
public:
    explicit FieldReader(BytesView payload) noexcept : m_rest{payload} {}

    template <class T, class DecodeFn>
    Expected<T, TxError> read(Field field, DecodeFn&& decode_fn) noexcept {
        if (m_rest.empty()) return tx_error(TxErrorCode::too_few_fields, field);
        auto v = decode_fn(m_rest);
        if (!v) return rlp_error(field, v.error());
        return std::move(v).value();
    }
    Expected<uint64_t, TxError> u64(Field f) noexcept { return read<uint64_t>(f, rlp::decode_u64); }
    Expected<u256, TxError> uint256(Field f) noexcept { return read<u256>(f, rlp::decode_u256); }
    Expected<BytesView, TxError> string(Field f) noexcept {
        return read<BytesView>(f, rlp::decode_string);
    }
    Expected<BytesView, TxError> list(Field f) noexcept {
        return read<BytesView>(f, rlp::decode_list);
    }

    Expected<std::optional<Address>, TxError> to() noexcept {
        auto s = string(Field::to);
        if (!s) return unexpected(s.error());
        if (s->empty()) return std::optional<Address>{};
        if (s->size() != Address::size())
            return rlp_error(Field::to, rlp::DecodingError::unexpected_length);
        return std::optional<Address>{Address::from_view(*s)};
    }

    Expected<void, TxError> finish() const noexcept {
        if (!m_rest.empty()) return tx_error(TxErrorCode::too_many_fields);
        return {};
    }

private:
    BytesView m_rest;
};

Expected<std::vector<AccessListEntry>, TxError> decode_access_list(BytesView payload) {
    std::vector<AccessListEntry> list;
    constexpr auto field = Field::access_list;
    while (!payload.empty()) {
        auto entry_payload = rlp::decode_list(payload);
        if (!entry_payload) return rlp_error(field, entry_payload.error());
        BytesView entry = *entry_payload;
        AccessListEntry e;
        auto address = rlp::decode_fixed<20>(entry);
        if (!address) return rlp_error(field, address.error());
        e.address = *address;
        auto keys_payload = rlp::decode_list(entry);
        if (!keys_payload) return rlp_error(field, keys_payload.error());
        if (!entry.empty()) return rlp_error(field, rlp::DecodingError::trailing_bytes);
        BytesView keys = *keys_payload;
        while (!keys.empty()) {
            auto key = rlp::decode_fixed<32>(keys);
            if (!key) return rlp_error(field, key.error());
            e.storage_keys.push_back(*key);
        }
        list.push_back(std::move(e));
    }
    return list;
}

Expected<Transaction, TxError> decode_legacy(BytesView payload) {
    Transaction tx;
    tx.type = TxType::legacy;
    FieldReader in{payload};
    tx.nonce = BARREL_TRY(in.u64(Field::nonce));
    tx.max_fee_per_gas = BARREL_TRY(in.uint256(Field::gas_price));
    tx.max_priority_fee_per_gas = tx.max_fee_per_gas;
    tx.gas_limit = BARREL_TRY(in.u64(Field::gas_limit));
    tx.to = BARREL_TRY(in.to());
    tx.value = BARREL_TRY(in.uint256(Field::value));
    tx.data = BARREL_TRY(in.string(Field::data));
    const u256 v = BARREL_TRY(in.uint256(Field::v));
    tx.r = BARREL_TRY(in.uint256(Field::r));
    tx.s = BARREL_TRY(in.uint256(Field::s));
    BARREL_TRY(in.finish());

    if (v == 27 || v == 28) {
        tx.y_parity = v == 28;
    } else if (v >= 35) {
        const u256 chain_id = (v - 35) / 2;
        if (chain_id > std::numeric_limits<uint64_t>::max())
            return tx_error(TxErrorCode::invalid_v, Field::v);
        tx.chain_id = static_cast<uint64_t>(chain_id);
        tx.y_parity = ((v - 35) & 1) != 0;
    } else {
        return tx_error(TxErrorCode::invalid_v, Field::v);
    }
    return tx;
}

Expected<Transaction, TxError> decode_typed(TxType type, BytesView payload) {
    Transaction tx;
    tx.type = type;
    FieldReader in{payload};
    tx.chain_id = BARREL_TRY(in.u64(Field::chain_id));
    tx.nonce = BARREL_TRY(in.u64(Field::nonce));
    if (type == TxType::dynamic_fee) {
        tx.max_priority_fee_per_gas = BARREL_TRY(in.uint256(Field::max_priority_fee_per_gas));
        tx.max_fee_per_gas = BARREL_TRY(in.uint256(Field::max_fee_per_gas));
    } else {
        tx.max_fee_per_gas = BARREL_TRY(in.uint256(Field::gas_price));
        tx.max_priority_fee_per_gas = tx.max_fee_per_gas;
    }
    tx.gas_limit = BARREL_TRY(in.u64(Field::gas_limit));
    tx.to = BARREL_TRY(in.to());
    tx.value = BARREL_TRY(in.uint256(Field::value));
    tx.data = BARREL_TRY(in.string(Field::data));
    const BytesView access_list = BARREL_TRY(in.list(Field::access_list));
    tx.access_list = BARREL_TRY(decode_access_list(access_list));
    const uint64_t y_parity = BARREL_TRY(in.u64(Field::v));
    if (y_parity > 1) return tx_error(TxErrorCode::invalid_v, Field::v);
    tx.y_parity = y_parity == 1;
    tx.r = BARREL_TRY(in.uint256(Field::r));
    tx.s = BARREL_TRY(in.uint256(Field::s));
    BARREL_TRY(in.finish());
    return tx;
}

/// The list payload of `from`, which must hold exactly one list.
Expected<BytesView, TxError> whole_list(BytesView from) noexcept {
    auto payload = rlp::decode_list(from);
    if (!payload) return rlp_error(Field::envelope, payload.error());
    if (!from.empty()) return rlp_error(Field::envelope, rlp::DecodingError::trailing_bytes);
    return *payload;
}

}  // namespace

Expected<Transaction, TxError> decode(BytesView encoding) {
    if (encoding.empty()) return rlp_error(Field::envelope, rlp::DecodingError::input_too_short);
    const uint8_t first = encoding[0];
    if (first >= 0xc0) return decode_legacy(BARREL_TRY(whole_list(encoding)));
    if (first >= 0x80) return rlp_error(Field::envelope, rlp::DecodingError::unexpected_string);
    if (first != 1 && first != 2) return tx_error(TxErrorCode::unsupported_type, Field::envelope);
    return decode_typed(static_cast<TxType>(first), BARREL_TRY(whole_list(encoding.subspan(1))));
}

namespace {

void encode_access_list(Bytes& out, const std::vector<AccessListEntry>& list) {
    Bytes payload;
    for (const auto& e : list) {
        Bytes entry;
        rlp::encode(entry, e.address);
        Bytes keys;
        for (const auto& k : e.storage_keys) rlp::encode(keys, k);
        rlp::encode_list(entry, keys);
        rlp::encode_list(payload, entry);
    }
    rlp::encode_list(out, payload);
}

void encode_to(Bytes& out, const std::optional<Address>& to) {
    if (to)
        rlp::encode(out, *to);
    else
        out.push_back(0x80);
}

/// The fields shared by the signed and the signing encodings, in their order per type.
void encode_unsigned_fields(Bytes& out, const Transaction& tx) {
    if (tx.type != TxType::legacy) rlp::encode(out, tx.chain_id.value_or(0));
    rlp::encode(out, tx.nonce);
    if (tx.type == TxType::dynamic_fee) rlp::encode(out, tx.max_priority_fee_per_gas);
    rlp::encode(out, tx.max_fee_per_gas);
    rlp::encode(out, tx.gas_limit);
    encode_to(out, tx.to);
    rlp::encode(out, tx.value);
    rlp::encode(out, tx.data);
    if (tx.type != TxType::legacy) encode_access_list(out, tx.access_list);
}

u256 legacy_v(const Transaction& tx) {
    const u256 parity = tx.y_parity ? 1 : 0;
    if (!tx.chain_id) return 27 + parity;
    return u256{*tx.chain_id} * 2 + 35 + parity;
}

void wrap(Bytes& out, const Transaction& tx, const Bytes& payload) {
    if (tx.type != TxType::legacy) out.push_back(static_cast<uint8_t>(tx.type));
    rlp::encode_list(out, payload);
}

}  // namespace

void encode(Bytes& out, const Transaction& tx) {
    assert(tx.type == TxType::legacy || tx.chain_id.has_value());
    Bytes payload;
    payload.reserve(128 + tx.data.size());
    encode_unsigned_fields(payload, tx);
    if (tx.type == TxType::legacy)
        rlp::encode(payload, legacy_v(tx));
    else
        rlp::encode(payload, uint64_t{tx.y_parity ? 1u : 0u});
    rlp::encode(payload, tx.r);
    rlp::encode(payload, tx.s);
    wrap(out, tx, payload);
}

Bytes encode(const Transaction& tx) {
    Bytes out;
    encode(out, tx);
    return out;
}

Hash hash_of(BytesView encoding) noexcept { return keccak256(encoding); }

void signing_payload(Bytes& out, const Transaction& tx) {
    Bytes payload;
    payload.reserve(128 + tx.data.size());
    encode_unsigned_fields(payload, tx);
    if (tx.type == TxType::legacy && tx.chain_id) {
        rlp::encode(payload, *tx.chain_id);
        rlp::encode(payload, uint64_t{0});
        rlp::encode(payload, uint64_t{0});
    }
    out.clear();
    out.reserve(payload.size() + 10);
    wrap(out, tx, payload);
}

Hash signing_hash(const Transaction& tx) {
    Bytes out;
    signing_payload(out, tx);
    return keccak256(out);
}

u256 effective_gas_price(const Transaction& tx, const u256& base_fee) noexcept {
    if (tx.type != TxType::dynamic_fee) return tx.max_fee_per_gas;
    const auto offered = checked_add(base_fee, tx.max_priority_fee_per_gas);
    return offered && *offered < tx.max_fee_per_gas ? *offered : tx.max_fee_per_gas;
}

u256 effective_tip(const Transaction& tx, const u256& base_fee) noexcept {
    const u256 price = effective_gas_price(tx, base_fee);
    return price > base_fee ? price - base_fee : u256{0};
}

uint64_t intrinsic_gas(const Transaction& tx) noexcept {
    uint64_t gas = 21'000;
    if (tx.is_creation()) gas += 32'000 + 2 * ((tx.data.size() + 31) / 32);
    for (uint8_t b : tx.data) gas += b == 0 ? 4 : 16;
    for (const auto& e : tx.access_list) gas += 2'400 + 1'900 * e.storage_keys.size();
    return gas;
}

namespace {
// secp256k1 group order n and n/2.
const u256 kSecpN{"0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141"};
const u256 kSecpHalfN = kSecpN >> 1;
}  // namespace

Expected<void, TxError> validate(const Transaction& tx, uint64_t chain_id) noexcept {
    if (tx.r == 0 || tx.r >= kSecpN) return tx_error(TxErrorCode::invalid_signature, Field::r);
    if (tx.s == 0 || tx.s >= kSecpN) return tx_error(TxErrorCode::invalid_signature, Field::s);
    if (tx.s > kSecpHalfN) return tx_error(TxErrorCode::high_s, Field::s);
    if (tx.chain_id && *tx.chain_id != chain_id)
        return tx_error(TxErrorCode::wrong_chain_id, Field::chain_id);
    if (tx.nonce == std::numeric_limits<uint64_t>::max())
        return tx_error(TxErrorCode::nonce_too_big, Field::nonce);
    if (tx.is_creation() && tx.data.size() > kMaxInitCodeSize)
        return tx_error(TxErrorCode::init_code_too_large, Field::data);
    if (tx.max_priority_fee_per_gas > tx.max_fee_per_gas)
        return tx_error(TxErrorCode::priority_fee_above_cap, Field::max_priority_fee_per_gas);
    if (!checked_mul(u256{tx.gas_limit}, tx.max_fee_per_gas))
        return tx_error(TxErrorCode::fee_cap_overflow, Field::gas_limit);
    if (intrinsic_gas(tx) > tx.gas_limit)
        return tx_error(TxErrorCode::intrinsic_gas_too_low, Field::gas_limit);
    return {};
}

}  // namespace barrel::tx
