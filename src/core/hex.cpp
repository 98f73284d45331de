#include <barrel/core/hex.hpp>

#include <array>
#include <cstdlib>

namespace barrel {

namespace {
constexpr char kDigits[] = "0123456789abcdef";

/// Each byte's value as a hex digit, -1 for any other byte.
constexpr std::array<int8_t, 256> kNibbles = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    for (int c = 0; c < 10; ++c) t['0' + c] = static_cast<int8_t>(c);
    for (int c = 0; c < 6; ++c) {
        t['a' + c] = static_cast<int8_t>(10 + c);
        t['A' + c] = static_cast<int8_t>(10 + c);
    }
    return t;
}();

constexpr int nibble(char c) noexcept { return kNibbles[static_cast<uint8_t>(c)]; }
}  // namespace

std::string_view to_string(HexError e) noexcept {
    switch (e) {
        case HexError::odd_length: return "odd number of hex digits";
        case HexError::bad_digit: return "invalid hex digit";
        case HexError::wrong_length: return "wrong length";
    }
    return "unknown hex error";
}

std::string to_hex_bare(BytesView bytes) {
    std::string out(bytes.size() * 2, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) {
        out[2 * i] = kDigits[bytes[i] >> 4];
        out[2 * i + 1] = kDigits[bytes[i] & 0xf];
    }
    return out;
}

std::string to_hex(BytesView bytes) { return "0x" + to_hex_bare(bytes); }

namespace {
constexpr size_t prefix_length(std::string_view hex) noexcept {
    return hex.size() >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X') ? 2 : 0;
}

/// The first character from `start` on that is no hex digit.
std::optional<HexDigitError> bad_digit_from(std::string_view hex, size_t start) noexcept {
    for (size_t i = start; i < hex.size(); ++i)
        if (nibble(hex[i]) < 0) return HexDigitError{hex[i], i};
    return std::nullopt;
}
}  // namespace

std::optional<HexDigitError> find_bad_digit(std::string_view hex) noexcept {
    return bad_digit_from(hex, prefix_length(hex));
}

std::string describe_hex_error(std::string_view hex, HexError e) {
    std::string message{to_string(e)};
    if (e != HexError::bad_digit) return message;
    const auto bad = find_bad_digit(hex);
    if (!bad) return message;
    const auto c = static_cast<unsigned char>(bad->character);
    std::string shown;
    if (c >= 0x20 && c < 0x7f) {
        shown = std::string{"'"} + bad->character + "'";
    } else {
        shown = std::string{"byte 0x"} + kDigits[c >> 4] + kDigits[c & 0xf];
    }
    return message + " " + shown + " at position " + std::to_string(bad->offset + 1);
}

int hex_digit_value(char c) noexcept { return nibble(c); }

bool decode_hex_digits(std::string_view digits, std::span<uint8_t> out) noexcept {
    // A bad digit's -1 sets every bit of `seen`; checked once at the end, not per byte.
    int seen = 0;
    for (size_t i = 0; i < out.size(); ++i) {
        const int hi = nibble(digits[2 * i]);
        const int lo = nibble(digits[2 * i + 1]);
        seen |= hi | lo;
        out[i] = static_cast<uint8_t>((hi << 4) | lo);
    }
    return seen >= 0;
}

Expected<Bytes, HexError> from_hex(std::string_view hex) {
    hex.remove_prefix(prefix_length(hex));
    // A bad character first: a stray space also makes the count odd, and "odd number of hex
    // digits" would hide it.
    if (hex.size() % 2 != 0)
        return unexpected(bad_digit_from(hex, 0) ? HexError::bad_digit : HexError::odd_length);
    Bytes out(hex.size() / 2);
    if (!decode_hex_digits(hex, out)) return unexpected(HexError::bad_digit);
    return out;
}

Expected<void, HexError> exact_from_hex(std::string_view hex, std::span<uint8_t> out) noexcept {
    hex.remove_prefix(prefix_length(hex));
    // from_hex's order: a bad character before an odd count, and before a wrong length.
    if (hex.size() != 2 * out.size()) {
        if (bad_digit_from(hex, 0)) return unexpected(HexError::bad_digit);
        return unexpected(hex.size() % 2 != 0 ? HexError::odd_length : HexError::wrong_length);
    }
    if (!decode_hex_digits(hex, out)) return unexpected(HexError::bad_digit);
    return {};
}

namespace literals {
Bytes operator""_hex(const char* s, size_t n) {
    auto bytes = from_hex({s, n});
    if (!bytes) std::abort();
    return std::move(bytes).value();
}
}  // namespace literals

}  // namespace barrel
