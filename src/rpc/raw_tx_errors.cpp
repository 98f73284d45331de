#include "rpc/raw_tx_errors.hpp"

#include <barrel/rlp/decode.hpp>
#include <barrel/tx/transaction.hpp>

#include <algorithm>
#include <optional>
#include <span>

namespace barrel::rpc {

namespace {

using tx::Field;
using tx::TxType;

/// go-ethereum's Go type of a transaction encoding.
std::string_view go_struct(TxType type) {
    switch (type) {
        case TxType::legacy: return "types.LegacyTx";
        case TxType::access_list: return "types.AccessListTx";
        case TxType::dynamic_fee: return "types.DynamicFeeTx";
    }
    return "types.LegacyTx";
}

/// A field as go-ethereum's struct declares it: its name and its Go type.
struct GoField {
    std::string_view name;
    std::string_view type;
};

/// The field `f` of go-ethereum's transaction structs.
std::optional<GoField> go_field(Field f) {
    constexpr std::string_view big = "*big.Int";  // in all three
    switch (f) {
        case Field::chain_id: return GoField{"ChainID", big};
        case Field::nonce: return GoField{"Nonce", "uint64"};
        case Field::gas_price: return GoField{"GasPrice", big};
        case Field::max_priority_fee_per_gas: return GoField{"GasTipCap", big};
        case Field::max_fee_per_gas: return GoField{"GasFeeCap", big};
        case Field::gas_limit: return GoField{"Gas", "uint64"};
        case Field::to: return GoField{"To", "common.Address"};
        case Field::value: return GoField{"Value", big};
        case Field::data: return GoField{"Data", "[]uint8"};
        case Field::v: return GoField{"V", big};
        case Field::r: return GoField{"R", big};
        case Field::s: return GoField{"S", big};
        case Field::access_list: return GoField{"AccessList", "types.AccessList"};
        default: return std::nullopt;
    }
}

/// rlp's decodeError for a field: "rlp: MSG for TYPE, decoding into (STRUCT).FIELD".
std::string field_error(std::string_view msg, TxType type, const GoField& f) {
    return "rlp: " + std::string{msg} + " for " + std::string{f.type} + ", decoding into (" +
           std::string{go_struct(type)} + ")." + std::string{f.name};
}

/// The position of field `f` in go-ethereum's struct for `type` (its RLP list).
std::optional<size_t> field_index(TxType type, Field f) {
    using enum Field;
    static constexpr Field legacy[] = {nonce, gas_price, gas_limit, to, value, data, v, r, s};
    static constexpr Field access_list_tx[] = {
        chain_id, nonce, gas_price, gas_limit, to, value, data, access_list, v, r, s};
    static constexpr Field dynamic_fee_tx[] = {chain_id,
                                               nonce,
                                               max_priority_fee_per_gas,
                                               max_fee_per_gas,
                                               gas_limit,
                                               to,
                                               value,
                                               data,
                                               access_list,
                                               v,
                                               r,
                                               s};
    std::span<const Field> fields{dynamic_fee_tx};
    if (type == TxType::legacy) fields = legacy;
    if (type == TxType::access_list) fields = access_list_tx;
    const auto it = std::find(fields.begin(), fields.end(), f);
    if (it == fields.end()) return std::nullopt;
    return static_cast<size_t>(it - fields.begin());
}

/// The bytes of the transaction list in `raw` from field `f` to the list's end, if the fields
/// before it read whole.
std::optional<BytesView> from_field(BytesView raw, TxType type, Field f) {
    const auto index = field_index(type, f);
    BytesView rest = type == TxType::legacy ? raw : raw.subspan(1);
    auto payload = rlp::decode_list(rest);
    if (!index || !payload) return std::nullopt;
    BytesView items = *payload;
    for (size_t i = 0; i < *index; ++i) {
        auto length = rlp::item_length(items);
        if (!length || *length > items.size()) return std::nullopt;
        items = items.subspan(static_cast<size_t>(*length));
    }
    return items;
}

/// The kind and payload length of the item `at` begins, from its prefix alone, canonical or not
/// (go-ethereum reads a byte array's length before it checks the encoding); nullopt when the
/// prefix is cut short.
std::optional<rlp::Header> prefix_of(BytesView at) {
    auto length = rlp::item_length(at);
    if (!length) return std::nullopt;
    const uint8_t b = at[0];
    const size_t prefix = b < 0x80                                ? 0
                          : b <= 0xb7 || (b >= 0xc0 && b <= 0xf7) ? 1
                          : b < 0xc0                              ? 1 + (b - 0xb7)
                                                                  : 1 + (b - 0xf7);
    return rlp::Header{b >= 0xc0, static_cast<size_t>(*length) - prefix};
}

/// A field whose item does not fit, as go-ethereum's Stream tells it: ErrElemTooLarge when its
/// payload is longer than what is left of the list (its prefix included), ErrValueTooLarge
/// when it is longer than what is left of the input (`trailing`: bytes after the list); when it
/// fits the input but not the list, a kind the field does not take first (a list for a string,
/// a string for the access list), else ErrElemTooLarge again. nullopt when the field's own item
/// fits (a part inside it is cut short).
std::optional<std::string> cut_short(BytesView raw, TxType type, Field f, size_t trailing) {
    const std::string elem = "rlp: element is larger than containing list";
    const auto at = from_field(raw, type, f);
    if (!at) return elem;
    const auto h = prefix_of(*at);
    if (!h || h->payload_length > at->size()) return elem;
    const size_t prefix = static_cast<size_t>(*rlp::item_length(*at)) - h->payload_length;
    const size_t list_after = at->size() - prefix;
    if (h->payload_length <= list_after) return std::nullopt;
    if (h->payload_length > list_after + trailing)
        return "rlp: value size exceeds available input length";
    const bool wants_list = f == Field::access_list;
    const auto go = go_field(f);
    if (go && h->list != wants_list)
        return field_error(wants_list ? "expected input list" : "expected input string or byte",
                           type, *go);
    if (go && f == Field::to && h->payload_length != 20)  // its length is checked before it is read
        return field_error(
            h->payload_length < 20 ? "input string too short" : "input string too long", type, *go);
    return elem;
}

/// The kind and payload length of field `f` of the transaction list in `raw`.
std::optional<rlp::Header> field_header(BytesView raw, TxType type, Field f) {
    const auto at = from_field(raw, type, f);
    if (!at) return std::nullopt;
    const auto h = prefix_of(*at);
    if (!h || h->payload_length > at->size()) return std::nullopt;
    return h;
}

/// What barrel's error says of a field that go-ethereum's words tell apart: a `to` of the wrong
/// length (too short or too long) or a list (empty or not), an access list that is not a list
/// (as against a malformed entry of it, whose context go-ethereum names deeper).
std::optional<std::string> structural_message(BytesView raw, TxType type, const tx::TxError& e,
                                              const GoField& f, size_t trailing) {
    if (e.rlp == rlp::DecodingError::input_too_short)
        return cut_short(raw, type, e.field, trailing);
    if (e.field == Field::to && (e.rlp == rlp::DecodingError::non_canonical_size ||
                                 e.rlp == rlp::DecodingError::leading_zero_in_length))
        return "rlp: non-canonical size information for *common.Address, decoding into (" +
               std::string{go_struct(type)} + ").To";
    if (e.field == Field::to) {
        const auto h = field_header(raw, type, Field::to);
        if (!h) return std::nullopt;
        if (h->list && h->payload_length == 0)  // `rlp:"nil"` takes an empty string only
            return "rlp: wrong kind of empty value (got List, want String) for *common.Address, "
                   "decoding into (" +
                   std::string{go_struct(type)} + ").To";
        if (h->list) return field_error("expected input string or byte", type, f);
        if (h->payload_length == 20) return std::nullopt;
        return field_error(
            h->payload_length < 20 ? "input string too short" : "input string too long", type, f);
    }
    if (e.field == Field::access_list) {
        const auto h = field_header(raw, type, Field::access_list);
        if (!h || h->list) return std::nullopt;
        return field_error("expected input list", type, f);
    }
    return std::nullopt;
}

/// A malformed field's message; nullopt where go-ethereum's would differ in kind.
std::optional<std::string> field_message(BytesView raw, TxType type, const tx::TxError& e,
                                         size_t trailing) {
    using rlp::DecodingError;
    const auto f = go_field(e.field);
    if (!f) return std::nullopt;
    if (e.field == Field::access_list || e.field == Field::to)
        return structural_message(raw, type, e, *f, trailing);
    switch (e.rlp) {
        case DecodingError::leading_zero:
            return field_error("non-canonical integer (leading zero bytes)", type, *f);
        case DecodingError::non_canonical_single_byte:
        case DecodingError::non_canonical_size:
        case DecodingError::leading_zero_in_length:
            return field_error("non-canonical size information", type, *f);
        case DecodingError::unexpected_list:
            return field_error("expected input string or byte", type, *f);
        case DecodingError::input_too_short: return cut_short(raw, type, e.field, trailing);
        case DecodingError::overflow:
            // go-ethereum's *big.Int takes any width (and fails later, otherwise): only a
            // uint64 of both overflows alike.
            if (f->type == "uint64") return field_error("input string too long", type, *f);
            return std::nullopt;
        default: return std::nullopt;
    }
}

/// The envelope's message (the outer list, or the list after a type byte).
std::optional<std::string> envelope_message(TxType type, rlp::DecodingError e) {
    using rlp::DecodingError;
    const std::string of = " for " + std::string{go_struct(type)};
    switch (e) {
        case DecodingError::unexpected_string:
        case DecodingError::non_canonical_single_byte:  // a string all the same
            return "rlp: expected input list" + of;
        case DecodingError::input_too_short:
            return std::string{"rlp: value size exceeds available input length"};
        case DecodingError::non_canonical_size:
        case DecodingError::leading_zero_in_length:
            return "rlp: non-canonical size information" + of;
        default: return std::nullopt;
    }
}

/// raw_transaction_error for `raw`, which `trailing` more bytes follow in the input.
std::string message_of(BytesView raw, std::string_view pool_message, size_t trailing) {
    // UnmarshalBinary: a first byte above 0x7f starts a legacy list, anything else is a type
    // byte, which needs something after it.
    if (raw.empty() || (raw[0] <= 0x7f && raw.size() <= 1)) return "typed transaction too short";
    if (raw[0] <= 0x7f && raw[0] != 1 && raw[0] != 2) return "transaction type not supported";
    const TxType type = raw[0] > 0x7f ? TxType::legacy : static_cast<TxType>(raw[0]);
    const auto decoded = tx::decode(raw);
    if (decoded) return std::string{pool_message};
    const tx::TxError& e = decoded.error();
    if (e.field == Field::envelope && e.rlp == rlp::DecodingError::trailing_bytes) {
        // go-ethereum decodes the first list before it sees what follows: its errors first.
        const size_t offset = type == TxType::legacy ? 0 : 1;
        const auto length = rlp::item_length(raw.subspan(offset));
        if (length && *length < raw.size() - offset) {
            const BytesView first = raw.first(offset + static_cast<size_t>(*length));
            if (!tx::decode(first))
                return message_of(first, pool_message, raw.size() - first.size());
        }
        return "rlp: input contains more than one value";
    }
    const std::string of = " for " + std::string{go_struct(type)};
    std::optional<std::string> message;
    if (e.code == tx::TxErrorCode::too_few_fields)
        message = "rlp: too few elements" + of;
    else if (e.code == tx::TxErrorCode::too_many_fields)
        message = "rlp: input list has too many elements" + of;
    else if (e.code == tx::TxErrorCode::malformed_rlp)
        message = e.field == Field::envelope ? envelope_message(type, e.rlp)
                                             : field_message(raw, type, e, trailing);
    return message.value_or(std::string{pool_message});
}

}  // namespace

std::string raw_transaction_error(BytesView raw, std::string_view pool_message) {
    return message_of(raw, pool_message, 0);
}

}  // namespace barrel::rpc
