#pragma once
/// @file
/// Strict RLP decoding over byte views. Every function reads from the front of `from` and
/// advances it past what it consumed; payloads are returned as views into the input, never
/// copied. Every non-canonical form is rejected with its own error code.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/core/uint256.hpp>

#include <string_view>
#include <vector>

namespace barrel::rlp {

enum class [[nodiscard]] DecodingError : uint8_t{
    input_too_short,            ///< empty input, or a declared length past the end of the input
    trailing_bytes,             ///< bytes left over after the item (or after a list's items)
    leading_zero,               ///< an integer with a leading zero byte (0 must be 0x80)
    leading_zero_in_length,     ///< a long-form length whose length bytes start with zero
    non_canonical_size,         ///< long form used for a length below 56
    non_canonical_single_byte,  ///< a single byte below 0x80 wrapped as a one-byte string
    unexpected_list,            ///< a list where a string was required
    unexpected_string,          ///< a string where a list was required
    overflow,                   ///< an integer too wide for its field
    unexpected_length,          ///< a fixed-size field (hash, address) of the wrong size
    too_deep,                   ///< lists nested deeper than the decoder accepts
};

/// Name of an error, stable, snake_case (used in CLI messages and tests).
std::string_view to_string(DecodingError e) noexcept;

struct Header {
    bool list{false};
    size_t payload_length{0};
};

/// Decodes an item header and advances past it. For a single byte below 0x80 (which is its own
/// encoding) nothing is consumed and payload_length is 1. Guarantees payload_length <= from.size().
Expected<Header, DecodingError> decode_header(BytesView& from) noexcept;

/// The total length (prefix included) of the item that `prefix` begins, read from its prefix
/// alone: at most 9 bytes (1, or 1 plus the 1 to 8 bytes of a long form's length). A streaming
/// reader reads that much, learns how much more belongs to the item, and never needs the rest of
/// its input. input_too_short if `prefix` is shorter than the prefix it begins;
/// leading_zero_in_length and non_canonical_size as decode_header. Whether the payload is there,
/// and is canonical, is the decoder's to say.
Expected<uint64_t, DecodingError> item_length(BytesView prefix) noexcept;

/// A byte string (not a list); the view points into the input.
Expected<BytesView, DecodingError> decode_string(BytesView& from) noexcept;

/// A list; returns the view of its payload (its encoded items).
Expected<BytesView, DecodingError> decode_list(BytesView& from) noexcept;

/// A canonical unsigned integer of at most 8 bytes.
Expected<uint64_t, DecodingError> decode_u64(BytesView& from) noexcept;

/// A canonical unsigned integer of at most 32 bytes.
Expected<u256, DecodingError> decode_u256(BytesView& from) noexcept;

/// A byte string of exactly N bytes.
template <size_t N>
Expected<FixedBytes<N>, DecodingError> decode_fixed(BytesView& from) noexcept {
    auto s = decode_string(from);
    if (!s) return unexpected(s.error());
    if (s->size() != N) return unexpected(DecodingError::unexpected_length);
    return FixedBytes<N>::from_view(*s);
}

/// Succeeds only if nothing is left of `rest`.
inline Expected<void, DecodingError> ensure_consumed(BytesView rest) noexcept {
    if (!rest.empty()) return unexpected(DecodingError::trailing_bytes);
    return {};
}

/// A decoded item of any shape, for tools and tests that do not know the schema.
struct Item {
    bool list{false};
    BytesView bytes;          ///< the string's payload (strings only)
    std::vector<Item> items;  ///< the list's items (lists only)
};

/// Deepest list nesting decode_item accepts: bounds recursion on hostile input.
inline constexpr size_t kMaxDepth = 256;

/// Decodes exactly one item that must span the whole input.
Expected<Item, DecodingError> decode_item(BytesView input);

}  // namespace barrel::rlp
