#pragma once
/// @file
/// Hex conversions. Parsing rejects bad input with a reason instead of guessing.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>

#include <string>
#include <string_view>

namespace barrel {

enum class [[nodiscard]] HexError : uint8_t {
    odd_length,     ///< an odd number of hex digits
    bad_digit,      ///< a character that is not 0-9, a-f, A-F
    wrong_length,   ///< a fixed-size value (hash, address) of the wrong size
};

/// Human-readable name of a hex error.
std::string_view to_string(HexError e) noexcept;

/// Lower-case hex with a "0x" prefix.
std::string to_hex(BytesView bytes);
/// Lower-case hex without prefix.
std::string to_hex_bare(BytesView bytes);

/// Parses hex digits with an optional "0x"/"0X" prefix, either case.
Expected<Bytes, HexError> from_hex(std::string_view hex);

/// Parses exactly N bytes of hex (optional "0x").
template <size_t N>
Expected<FixedBytes<N>, HexError> fixed_from_hex(std::string_view hex) {
    auto bytes = from_hex(hex);
    if (!bytes) return unexpected(bytes.error());
    if (bytes->size() != N) return unexpected(HexError::wrong_length);
    return FixedBytes<N>::from_view(*bytes);
}

inline Expected<Hash, HexError> hash_from_hex(std::string_view hex) { return fixed_from_hex<32>(hex); }
inline Expected<Address, HexError> address_from_hex(std::string_view hex) { return fixed_from_hex<20>(hex); }

namespace literals {
/// "0x..."_hex for tests and constants; aborts on bad hex (compile-time data only).
Bytes operator""_hex(const char* s, size_t n);
}  // namespace literals

}  // namespace barrel
