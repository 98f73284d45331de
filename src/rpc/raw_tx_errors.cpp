#include "rpc/raw_tx_errors.hpp"

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

/// The field `f` of go-ethereum's struct for `type`; nullopt where barrel's field has no single
/// counterpart (the access list, decoded deeper).
std::optional<GoField> go_field(TxType type, Field f) {
    // LegacyTx and AccessListTx carry *big.Int, DynamicFeeTx *uint256.Int.
    const std::string_view big = type == TxType::dynamic_fee ? "*uint256.Int" : "*big.Int";
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
        default: return std::nullopt;
    }
}

/// rlp's decodeError for a field: "rlp: MSG for TYPE, decoding into (STRUCT).FIELD".
std::string field_error(std::string_view msg, TxType type, const GoField& f) {
    return "rlp: " + std::string{msg} + " for " + std::string{f.type} + ", decoding into (" +
           std::string{go_struct(type)} + ")." + std::string{f.name};
}

/// A malformed field's message; nullopt where go-ethereum's would differ in kind.
std::optional<std::string> field_message(TxType type, const tx::TxError& e) {
    using rlp::DecodingError;
    const auto f = go_field(type, e.field);
    if (!f) return std::nullopt;
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
            // barrel's overflow is go-ethereum's only where both read the same width.
            if (f->type == "uint64") return field_error("input string too long", type, *f);
            if (f->type == "*uint256.Int" && e.field != Field::chain_id && e.field != Field::v)
                return std::string{"rlp: value too large for uint256"};
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
        case DecodingError::trailing_bytes:
            return std::string{"rlp: input contains more than one value"};
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
    const std::string of = " for " + std::string{go_struct(type)};
    std::optional<std::string> message;
    if (e.code == tx::TxErrorCode::too_few_fields)
        message = "rlp: too few elements" + of;
    else if (e.code == tx::TxErrorCode::too_many_fields)
        message = "rlp: input list has too many elements" + of;
    else if (e.code == tx::TxErrorCode::malformed_rlp)
        message =
            e.field == Field::envelope ? envelope_message(type, e.rlp) : field_message(type, e);
    return message.value_or(std::string{pool_message});
}

}  // namespace barrel::rpc
