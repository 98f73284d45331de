#include <barrel/core/hex.hpp>

#include <cstdlib>

namespace barrel {

namespace {
constexpr char kDigits[] = "0123456789abcdef";

constexpr int nibble(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
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

Expected<Bytes, HexError> from_hex(std::string_view hex) {
    hex.remove_prefix(prefix_length(hex));
    // A bad character first: a stray space also makes the count odd, and "odd number of hex
    // digits" would hide it.
    if (bad_digit_from(hex, 0)) return unexpected(HexError::bad_digit);
    if (hex.size() % 2 != 0) return unexpected(HexError::odd_length);
    Bytes out(hex.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) {
        const int hi = nibble(hex[2 * i]);
        const int lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return unexpected(HexError::bad_digit);
        out[i] = static_cast<uint8_t>((hi << 4) | lo);
    }
    return out;
}

namespace literals {
Bytes operator""_hex(const char* s, size_t n) {
    auto bytes = from_hex({s, n});
    if (!bytes) std::abort();
    return std::move(bytes).value();
}
}  // namespace literals

}  // namespace barrel
