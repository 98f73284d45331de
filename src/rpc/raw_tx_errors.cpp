#include "rpc/raw_tx_errors.hpp"

#include <barrel/rlp/decode.hpp>
#include <barrel/tx/transaction.hpp>

#include <optional>

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

/// The kind and payload length of field `index` of the transaction list in `raw`, if the list
/// reads that far; read from the prefix alone, canonical or not (go-ethereum reads a byte
/// array's length before it checks the encoding).
std::optional<rlp::Header> field_header(BytesView raw, TxType type, size_t index) {
    BytesView rest = type == TxType::legacy ? raw : raw.subspan(1);
    auto payload = rlp::decode_list(rest);
    if (!payload) return std::nullopt;
    BytesView items = *payload;
    for (size_t i = 0;; ++i) {
        auto length = rlp::item_length(items);
        if (!length || *length > items.size()) return std::nullopt;
        if (i == index) {
            const uint8_t b = items[0];
            const size_t prefix = b < 0x80                                ? 0
                                  : b <= 0xb7 || (b >= 0xc0 && b <= 0xf7) ? 1
                                  : b < 0xc0                              ? 1 + (b - 0xb7)
                                                                          : 1 + (b - 0xf7);
            return rlp::Header{b >= 0xc0, static_cast<size_t>(*length) - prefix};
        }
        items = items.subspan(static_cast<size_t>(*length));
    }
}

/// What barrel's error says of a field that go-ethereum's words tell apart: a `to` of the wrong
/// length (too short or too long) or a list (empty or not), an access list that is not a list
/// (as against a malformed entry of it, whose context go-ethereum names deeper).
std::optional<std::string> structural_message(BytesView raw, TxType type, const tx::TxError& e,
                                              const GoField& f) {
    const size_t to_index = type == TxType::legacy ? 3 : type == TxType::access_list ? 4 : 5;
    if (e.field == Field::to) {
        const auto h = field_header(raw, type, to_index);
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
        const auto h = field_header(raw, type, to_index + 3);
        if (!h || h->list) return std::nullopt;
        return field_error("expected input list", type, f);
    }
    return std::nullopt;
}

/// A malformed field's message; nullopt where go-ethereum's would differ in kind.
std::optional<std::string> field_message(BytesView raw, TxType type, const tx::TxError& e) {
    using rlp::DecodingError;
    const auto f = go_field(e.field);
    if (!f) return std::nullopt;
    if (e.field == Field::access_list || e.field == Field::to)
        return structural_message(raw, type, e, *f);
    switch (e.rlp) {
        case DecodingError::leading_zero:
            return field_error("non-canonical integer (leading zero bytes)", type, *f);
        case DecodingError::non_canonical_single_byte:
        case DecodingError::non_canonical_size:
        case DecodingError::leading_zero_in_length:
            return field_error("non-canonical size information", type, *f);
        case DecodingError::unexpected_list:
            return field_error("expected input string or byte", type, *f);
        case DecodingError::input_too_short:
            return std::string{"rlp: element is larger than containing list"};
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
        case DecodingError::unexpected_string: return "rlp: expected input list" + of;
        case DecodingError::input_too_short:
            return std::string{"rlp: value size exceeds available input length"};
        case DecodingError::non_canonical_size:
        case DecodingError::leading_zero_in_length:
            return "rlp: non-canonical size information" + of;
        default: return std::nullopt;
    }
}

}  // namespace

std::string raw_transaction_error(BytesView raw, std::string_view pool_message) {
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
        const BytesView first = raw.first(offset + (length ? static_cast<size_t>(*length) : 0));
        if (length && !tx::decode(first)) return raw_transaction_error(first, pool_message);
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
                                             : field_message(raw, type, e);
    return message.value_or(std::string{pool_message});
}

}  // namespace barrel::rpc
