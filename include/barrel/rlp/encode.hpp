#pragma once
/// @file
/// RLP encoding, appending to a byte buffer. `*_length` functions give the encoded size without
/// encoding, so callers can reserve once and write list headers before their payloads.

#include <barrel/core/bytes.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/rlp/decode.hpp>

namespace barrel::rlp {

/// Size of a header announcing `payload_length` bytes.
size_t header_length(size_t payload_length) noexcept;

void encode_header(Bytes& out, Header header);

/// A byte string.
void encode(Bytes& out, BytesView s);
size_t encoded_length(BytesView s) noexcept;

/// An unsigned integer, big-endian without leading zeros (0 encodes as the empty string).
void encode(Bytes& out, uint64_t v);
size_t encoded_length(uint64_t v) noexcept;
void encode(Bytes& out, const u256& v);
size_t encoded_length(const u256& v) noexcept;

template <size_t N>
void encode(Bytes& out, const FixedBytes<N>& v) {
    encode(out, v.view());
}
template <size_t N>
requires(N >= 2 && N < 256)  // a 1-byte value may be its own encoding; 256+ needs 2 length bytes
    constexpr size_t encoded_length(const FixedBytes<N>&) noexcept {
    return N < 56 ? N + 1 : N + 2;
}

/// A list whose items are already encoded back to back in `payload`.
void encode_list(Bytes& out, BytesView payload);

/// Re-encodes a decoded item.
void encode(Bytes& out, const Item& item);

}  // namespace barrel::rlp
