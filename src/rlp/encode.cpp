#include <barrel/rlp/encode.hpp>

namespace barrel::rlp {

namespace {
size_t be_length(uint64_t v) noexcept {
    size_t n = 0;
    for (; v != 0; v >>= 8) ++n;
    return n;
}
void append_be(Bytes& out, uint64_t v, size_t n) {
    for (size_t i = n; i-- > 0;) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
}  // namespace

size_t header_length(size_t payload_length) noexcept {
    return payload_length < 56 ? 1 : 1 + be_length(payload_length);
}

void encode_header(Bytes& out, Header header) {
    const uint8_t short_base = header.list ? 0xc0 : 0x80;
    if (header.payload_length < 56) {
        out.push_back(static_cast<uint8_t>(short_base + header.payload_length));
        return;
    }
    const size_t n = be_length(header.payload_length);
    out.push_back(static_cast<uint8_t>(short_base + 55 + n));
    append_be(out, header.payload_length, n);
}

void encode(Bytes& out, BytesView s) {
    if (s.size() == 1 && s[0] < 0x80) {
        out.push_back(s[0]);
        return;
    }
    encode_header(out, {false, s.size()});
    out.insert(out.end(), s.begin(), s.end());
}

size_t encoded_length(BytesView s) noexcept {
    if (s.size() == 1 && s[0] < 0x80) return 1;
    return header_length(s.size()) + s.size();
}

void encode(Bytes& out, uint64_t v) {
    if (v != 0 && v < 0x80) {
        out.push_back(static_cast<uint8_t>(v));
        return;
    }
    const size_t n = be_length(v);
    out.push_back(static_cast<uint8_t>(0x80 + n));
    append_be(out, v, n);
}

size_t encoded_length(uint64_t v) noexcept { return v != 0 && v < 0x80 ? 1 : 1 + be_length(v); }

void encode(Bytes& out, const u256& v) {
    uint8_t buf[32];
    const size_t n = store_be_minimal(v, buf);
    encode(out, BytesView{buf, n});
}

size_t encoded_length(const u256& v) noexcept {
    const size_t n = byte_length(v);
    if (n == 1 && v < 0x80) return 1;
    return 1 + n;
}

void encode_list(Bytes& out, BytesView payload) {
    encode_header(out, {true, payload.size()});
    out.insert(out.end(), payload.begin(), payload.end());
}

void encode(Bytes& out, const Item& item) {
    if (!item.list) {
        encode(out, item.bytes);
        return;
    }
    Bytes payload;
    for (const auto& child : item.items) encode(payload, child);
    encode_list(out, payload);
}

}  // namespace barrel::rlp
