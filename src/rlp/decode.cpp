#include <barrel/rlp/decode.hpp>

namespace barrel::rlp {

std::string_view to_string(DecodingError e) noexcept {
    switch (e) {
        case DecodingError::input_too_short: return "input_too_short";
        case DecodingError::trailing_bytes: return "trailing_bytes";
        case DecodingError::leading_zero: return "leading_zero";
        case DecodingError::leading_zero_in_length: return "leading_zero_in_length";
        case DecodingError::non_canonical_size: return "non_canonical_size";
        case DecodingError::non_canonical_single_byte: return "non_canonical_single_byte";
        case DecodingError::unexpected_list: return "unexpected_list";
        case DecodingError::unexpected_string: return "unexpected_string";
        case DecodingError::overflow: return "overflow";
        case DecodingError::unexpected_length: return "unexpected_length";
        case DecodingError::too_deep: return "too_deep";
    }
    return "unknown";
}

Expected<Header, DecodingError> decode_header(BytesView& from) noexcept {
    if (from.empty()) return unexpected(DecodingError::input_too_short);
    const uint8_t prefix = from[0];
    Header h;
    if (prefix < 0x80) {
        h.payload_length = 1;  // the byte is its own encoding; leave it in place
        return h;
    }
    if (prefix <= 0xb7 || (prefix >= 0xc0 && prefix <= 0xf7)) {
        h.list = prefix >= 0xc0;
        h.payload_length = prefix - (h.list ? 0xc0u : 0x80u);
        from = from.subspan(1);
        if (!h.list && h.payload_length == 1) {
            if (from.empty()) return unexpected(DecodingError::input_too_short);
            if (from[0] < 0x80) return unexpected(DecodingError::non_canonical_single_byte);
        }
    } else {
        h.list = prefix >= 0xc0;
        const size_t len_of_len = prefix - (h.list ? 0xf7u : 0xb7u);
        from = from.subspan(1);
        if (from.size() < len_of_len) return unexpected(DecodingError::input_too_short);
        if (from[0] == 0) return unexpected(DecodingError::leading_zero_in_length);
        // Up to 8 length bytes: a length beyond the input is caught below, so no overflow check
        // is needed beyond keeping the accumulation within 64 bits.
        uint64_t len = 0;
        for (size_t i = 0; i < len_of_len; ++i) len = (len << 8) | from[i];
        from = from.subspan(len_of_len);
        if (len < 56) return unexpected(DecodingError::non_canonical_size);
        if (len > from.size()) return unexpected(DecodingError::input_too_short);
        h.payload_length = static_cast<size_t>(len);
    }
    if (h.payload_length > from.size()) return unexpected(DecodingError::input_too_short);
    return h;
}

Expected<uint64_t, DecodingError> item_length(BytesView prefix) noexcept {
    if (prefix.empty()) return unexpected(DecodingError::input_too_short);
    const uint8_t first = prefix[0];
    if (first < 0x80) return 1;
    if (first <= 0xb7) return 1 + uint64_t{first - 0x80u};
    if (first >= 0xc0 && first <= 0xf7) return 1 + uint64_t{first - 0xc0u};
    const size_t len_of_len = first - (first >= 0xc0 ? 0xf7u : 0xb7u);
    if (prefix.size() < 1 + len_of_len) return unexpected(DecodingError::input_too_short);
    if (prefix[1] == 0) return unexpected(DecodingError::leading_zero_in_length);
    uint64_t len = 0;
    for (size_t i = 1; i <= len_of_len; ++i) len = (len << 8) | prefix[i];
    if (len < 56) return unexpected(DecodingError::non_canonical_size);
    // An 8-byte length near 2^64 plus its prefix does not fit: no input is that long.
    if (len > UINT64_MAX - 1 - len_of_len) return unexpected(DecodingError::input_too_short);
    return 1 + len_of_len + len;
}

Expected<BytesView, DecodingError> decode_string(BytesView& from) noexcept {
    const auto h = decode_header(from);
    if (!h) return unexpected(h.error());
    if (h->list) return unexpected(DecodingError::unexpected_list);
    const BytesView payload = from.first(h->payload_length);
    from = from.subspan(h->payload_length);
    return payload;
}

Expected<BytesView, DecodingError> decode_list(BytesView& from) noexcept {
    const auto h = decode_header(from);
    if (!h) return unexpected(h.error());
    if (!h->list) return unexpected(DecodingError::unexpected_string);
    const BytesView payload = from.first(h->payload_length);
    from = from.subspan(h->payload_length);
    return payload;
}

namespace {
/// The payload of a canonical integer: a string without leading zeros of at most max_bytes.
Expected<BytesView, DecodingError> decode_integer_bytes(BytesView& from,
                                                        size_t max_bytes) noexcept {
    const auto s = decode_string(from);
    if (!s) return s;
    if (!s->empty() && (*s)[0] == 0) return unexpected(DecodingError::leading_zero);
    if (s->size() > max_bytes) return unexpected(DecodingError::overflow);
    return s;
}
}  // namespace

Expected<uint64_t, DecodingError> decode_u64(BytesView& from) noexcept {
    const auto s = decode_integer_bytes(from, 8);
    if (!s) return unexpected(s.error());
    uint64_t v = 0;
    for (uint8_t b : *s) v = (v << 8) | b;
    return v;
}

Expected<u256, DecodingError> decode_u256(BytesView& from) noexcept {
    const auto s = decode_integer_bytes(from, 32);
    if (!s) return unexpected(s.error());
    return load_be(*s);
}

namespace {
Expected<Item, DecodingError> decode_item_at(BytesView& from, size_t depth) {
    const auto h = decode_header(from);
    if (!h) return unexpected(h.error());
    // `depth` lists enclose this item, so a list here is nesting level depth + 1. Checking lists
    // only makes the limit independent of what the innermost list holds.
    if (h->list && depth >= kMaxDepth) return unexpected(DecodingError::too_deep);
    Item item;
    item.list = h->list;
    BytesView payload = from.first(h->payload_length);
    from = from.subspan(h->payload_length);
    if (!item.list) {
        item.bytes = payload;
        return item;
    }
    while (!payload.empty()) {
        auto child = decode_item_at(payload, depth + 1);
        if (!child) return child;
        item.items.push_back(std::move(child).value());
    }
    return item;
}
}  // namespace

Expected<Item, DecodingError> decode_item(BytesView input) {
    auto item = decode_item_at(input, 0);
    if (!item) return item;
    if (!input.empty()) return unexpected(DecodingError::trailing_bytes);
    return item;
}

}  // namespace barrel::rlp
