#pragma once
/// @file
/// Hex conversions. Parsing rejects bad input with a reason instead of guessing.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace barrel {

enum class [[nodiscard]] HexError : uint8_t{
    odd_length,    ///< an odd number of hex digits
    bad_digit,     ///< a character that is not 0-9, a-f, A-F
    wrong_length,  ///< a fixed-size value (hash, address) of the wrong size
};

/// Human-readable name of a hex error.
std::string_view to_string(HexError e) noexcept;

/// Lower-case hex with a "0x" prefix.
std::string to_hex(BytesView bytes);
/// Lower-case hex without prefix.
std::string to_hex_bare(BytesView bytes);

/// The first character of hex text (after an optional "0x") that is no hex digit, and its
/// offset in `hex` from 0, prefix included.
struct HexDigitError {
    char character;
    size_t offset;
};
std::optional<HexDigitError> find_bad_digit(std::string_view hex) noexcept;

/// to_string(e), and for bad_digit which character and where, counting from 1 as a reader
/// does: "invalid hex digit ' ' at position 5". For error lines about `hex`.
std::string describe_hex_error(std::string_view hex, HexError e);

/// The value of a hex digit (0-9, a-f, A-F), or -1 for any other character.
int hex_digit_value(char c) noexcept;

/// Decodes hex digits, two per byte and without a prefix, into `out` (digits.size() / 2 bytes;
/// the size is the caller's to check); false if a character is no hex digit. One table lookup
/// per digit and no branch per byte: the node decodes every raw transaction it is sent with it.
bool decode_hex_digits(std::string_view digits, std::span<uint8_t> out) noexcept;

/// Parses hex digits with an optional "0x"/"0X" prefix, either case. A character that is no
/// hex digit is reported before an odd count.
Expected<Bytes, HexError> from_hex(std::string_view hex);

/// Parses exactly out.size() bytes of hex (optional "0x"/"0X") into `out`, with from_hex's
/// errors and wrong_length for any other count; nothing allocated.
Expected<void, HexError> exact_from_hex(std::string_view hex, std::span<uint8_t> out) noexcept;

/// Parses exactly N bytes of hex (optional "0x").
template <size_t N>
Expected<FixedBytes<N>, HexError> fixed_from_hex(std::string_view hex) {
    FixedBytes<N> out;
    if (auto ok = exact_from_hex(hex, {out.data(), N}); !ok) return unexpected(ok.error());
    return out;
}

inline Expected<Hash, HexError> hash_from_hex(std::string_view hex) {
    return fixed_from_hex<32>(hex);
}
inline Expected<Address, HexError> address_from_hex(std::string_view hex) {
    return fixed_from_hex<20>(hex);
}

namespace literals {
/// "0x..."_hex for tests and constants; aborts on bad hex (compile-time data only).
Bytes operator""_hex(const char* s, size_t n);
}  // namespace literals

}  // namespace barrel
