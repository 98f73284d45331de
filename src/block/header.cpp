#include <barrel/block/header.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>

namespace barrel::block {

std::string_view to_string(HeaderField f) noexcept {
    switch (f) {
        case HeaderField::list: return "header";
        case HeaderField::parent_hash: return "parent_hash";
        case HeaderField::number: return "number";
        case HeaderField::timestamp: return "timestamp";
        case HeaderField::coinbase: return "coinbase";
        case HeaderField::gas_limit: return "gas_limit";
        case HeaderField::gas_used: return "gas_used";
        case HeaderField::txs_root: return "txs_root";
        case HeaderField::receipts_root: return "receipts_root";
        case HeaderField::state_root: return "state_root";
        case HeaderField::chain_id: return "chain_id";
    }
    return "unknown";
}

void encode(Bytes& out, const Header& h) {
    Bytes payload;
    payload.reserve(200);
    rlp::encode(payload, h.parent_hash);
    rlp::encode(payload, h.number);
    rlp::encode(payload, h.timestamp);
    rlp::encode(payload, h.coinbase);
    rlp::encode(payload, h.gas_limit);
    rlp::encode(payload, h.gas_used);
    rlp::encode(payload, h.txs_root);
    rlp::encode(payload, h.receipts_root);
    rlp::encode(payload, h.state_root);
    rlp::encode(payload, h.chain_id);
    rlp::encode_list(out, payload);
}

Bytes encode(const Header& header) {
    Bytes out;
    encode(out, header);
    return out;
}

namespace {
Unexpected<HeaderError> header_error(HeaderField f, rlp::DecodingError e) noexcept {
    return unexpected(HeaderError{f, e});
}

/// Reads one field, reporting a list that ends early as input_too_short on that field.
template <class T, class Fn>
Expected<T, HeaderError> field(BytesView& in, HeaderField f, Fn&& decode_fn) noexcept {
    if (in.empty()) return header_error(f, rlp::DecodingError::input_too_short);
    auto v = decode_fn(in);
    if (!v) return header_error(f, v.error());
    return std::move(v).value();
}
}  // namespace

Expected<Header, HeaderError> decode_header(BytesView& from) noexcept {
    auto list = rlp::decode_list(from);
    if (!list) return header_error(HeaderField::list, list.error());
    BytesView in = *list;
    Header h;
    constexpr auto hash = rlp::decode_fixed<32>;
    constexpr auto address = rlp::decode_fixed<20>;
    h.parent_hash = BARREL_TRY(field<Hash>(in, HeaderField::parent_hash, hash));
    h.number = BARREL_TRY(field<uint64_t>(in, HeaderField::number, rlp::decode_u64));
    h.timestamp = BARREL_TRY(field<uint64_t>(in, HeaderField::timestamp, rlp::decode_u64));
    h.coinbase = BARREL_TRY(field<Address>(in, HeaderField::coinbase, address));
    h.gas_limit = BARREL_TRY(field<uint64_t>(in, HeaderField::gas_limit, rlp::decode_u64));
    h.gas_used = BARREL_TRY(field<uint64_t>(in, HeaderField::gas_used, rlp::decode_u64));
    h.txs_root = BARREL_TRY(field<Hash>(in, HeaderField::txs_root, hash));
    h.receipts_root = BARREL_TRY(field<Hash>(in, HeaderField::receipts_root, hash));
    h.state_root = BARREL_TRY(field<Hash>(in, HeaderField::state_root, hash));
    h.chain_id = BARREL_TRY(field<uint64_t>(in, HeaderField::chain_id, rlp::decode_u64));
    if (!in.empty()) return header_error(HeaderField::list, rlp::DecodingError::trailing_bytes);
    return h;
}

Hash hash_of(const Header& header) { return keccak256(encode(header)); }

}  // namespace barrel::block
