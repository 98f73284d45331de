// Base64 encoding (core/base64.hpp).

#include <barrel/core/base64.hpp>

namespace barrel {

std::string base64(BytesView bytes) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        // Three bytes to four digits; a last group of one or two pads with '='.
        const size_t left = bytes.size() - i;
        uint32_t v = uint32_t{bytes[i]} << 16;
        if (left > 1) v |= uint32_t{bytes[i + 1]} << 8;
        if (left > 2) v |= bytes[i + 2];
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += left > 1 ? kAlphabet[(v >> 6) & 63] : '=';
        out += left > 2 ? kAlphabet[v & 63] : '=';
    }
    return out;
}

}  // namespace barrel
