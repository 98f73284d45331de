#include "json/writer.hpp"

#include <bit>
#include <cassert>
#include <cstring>

namespace barrel {

namespace {

constexpr char kDigits[] = "0123456789abcdef";

/// Appends `count` characters to `out` and returns where they start, for the caller to fill.
char* grow(std::string& out, size_t count) {
    const size_t at = out.size();
    out.resize(at + count);
    return out.data() + at;
}

/// Writes the low `digits` hex digits of `v`, most significant first.
void put_hex(char* p, uint64_t v, unsigned digits) noexcept {
    for (unsigned i = digits; i-- > 0;) {
        p[i] = kDigits[v & 0xf];
        v >>= 4;
    }
}

}  // namespace

void JsonWriter::separate() {
    if (m_need_comma) m_out.push_back(',');
    m_need_comma = false;
}

JsonWriter& JsonWriter::begin_object() {
    separate();
    m_out.push_back('{');
#ifndef NDEBUG
    assert(m_depth + 1 < m_last_key.size());
    m_last_key[++m_depth] = {};
#endif
    return *this;
}

JsonWriter& JsonWriter::end_object() {
    m_out.push_back('}');
#ifndef NDEBUG
    assert(m_depth > 0);
    --m_depth;
#endif
    value_written();
    return *this;
}

JsonWriter& JsonWriter::begin_array() {
    separate();
    m_out.push_back('[');
    return *this;
}

JsonWriter& JsonWriter::end_array() {
    m_out.push_back(']');
    value_written();
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
#ifndef NDEBUG
    // nlohmann keeps object keys in a std::map: dump() writes them in ascending order.
    assert(m_depth > 0 && (m_last_key[m_depth].empty() || m_last_key[m_depth] < name));
    m_last_key[m_depth] = name;
#endif
    separate();
    char* p = grow(m_out, name.size() + 3);
    p[0] = '"';
    std::memcpy(p + 1, name.data(), name.size());
    p[name.size() + 1] = '"';
    p[name.size() + 2] = ':';
    return *this;
}

JsonWriter& JsonWriter::bytes(BytesView value) {
    separate();
    char* p = grow(m_out, value.size() * 2 + 4);
    *p++ = '"';
    *p++ = '0';
    *p++ = 'x';
    for (const uint8_t b : value) {
        *p++ = kDigits[b >> 4];
        *p++ = kDigits[b & 0xf];
    }
    *p = '"';
    value_written();
    return *this;
}

JsonWriter& JsonWriter::quantity(uint64_t value) {
    separate();
    const unsigned digits =
        value == 0 ? 1 : (64 - static_cast<unsigned>(std::countl_zero(value)) + 3) / 4;
    char* p = grow(m_out, digits + 4);
    p[0] = '"';
    p[1] = '0';
    p[2] = 'x';
    put_hex(p + 3, value, digits);
    p[digits + 3] = '"';
    value_written();
    return *this;
}

JsonWriter& JsonWriter::quantity(const u256& value) {
    // Limb by limb from the most significant non-zero one; the rest are written in full.
    const auto& backend = value.backend();
    const size_t limbs = backend.size();
    const auto* limb = backend.limbs();
    static_assert(sizeof(*limb) == 8, "u256 limbs are 64-bit");
    size_t top = limbs;
    while (top > 1 && limb[top - 1] == 0) --top;
    if (top == 1) return quantity(static_cast<uint64_t>(limb[0]));
    separate();
    const uint64_t high = limb[top - 1];
    const unsigned high_digits = (64 - static_cast<unsigned>(std::countl_zero(high)) + 3) / 4;
    const size_t digits = high_digits + (top - 1) * 16;
    char* p = grow(m_out, digits + 4);
    *p++ = '"';
    *p++ = '0';
    *p++ = 'x';
    put_hex(p, high, high_digits);
    p += high_digits;
    for (size_t i = top - 1; i-- > 0;) {
        put_hex(p, limb[i], 16);
        p += 16;
    }
    *p = '"';
    value_written();
    return *this;
}

JsonWriter& JsonWriter::null() {
    separate();
    m_out.append("null");
    value_written();
    return *this;
}

}  // namespace barrel
