// Strict RLP decoding: a table of inputs for every DecodingError, the short/long form
// boundaries, integer limits, and the guarantee that payloads are views into the input.

#include <barrel/core/hex.hpp>
#include <barrel/rlp/decode.hpp>

#include "rlp_build.hpp"
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace barrel;
using rlp::DecodingError;

namespace {

/// Hex with spaces between fields for readability ("c2 8361 6263").
Bytes operator""_bytes(const char* s, size_t n) {
    std::string digits;
    for (size_t i = 0; i < n; ++i)
        if (s[i] != ' ') digits.push_back(s[i]);
    auto bytes = from_hex(digits);
    if (!bytes) std::abort();
    return std::move(bytes).value();
}

Bytes rep(size_t n, uint8_t b) { return Bytes(n, b); }

template <class... Parts>
Bytes cat(const Parts&... parts) {
    Bytes out;
    (out.insert(out.end(), parts.begin(), parts.end()), ...);
    return out;
}

/// A list header, written by hand so these tests do not depend on the encoder.
Bytes list_header(size_t payload_length) {
    if (payload_length < 56) return {static_cast<uint8_t>(0xc0 + payload_length)};
    Bytes len_be;
    for (size_t v = payload_length; v != 0; v >>= 8)
        len_be.insert(len_be.begin(), static_cast<uint8_t>(v));
    len_be.insert(len_be.begin(), static_cast<uint8_t>(0xf7 + len_be.size()));
    return len_be;
}

/// `n` lists nested in each other around `innermost` (the encoded payload of the deepest list).
/// Headers are computed inside out and written once, so deep nestings cost linear time.
Bytes nested_lists(size_t n, const Bytes& innermost = {}) {
    std::vector<Bytes> headers;
    size_t len = innermost.size();
    for (size_t i = 0; i < n; ++i) {
        headers.push_back(list_header(len));
        len += headers.back().size();
    }
    Bytes out;
    out.reserve(len);
    for (auto h = headers.rbegin(); h != headers.rend(); ++h)
        out.insert(out.end(), h->begin(), h->end());
    out.insert(out.end(), innermost.begin(), innermost.end());
    return out;
}

/// Which decoder a row goes through. Every decoder but `header` must also consume the whole
/// input (ensure_consumed), as a caller decoding one field of a known size would check.
enum class Via { item, header, string, list, u64, u256, address, hash };

const char* name(Via via) {
    switch (via) {
        case Via::item: return "decode_item";
        case Via::header: return "decode_header";
        case Via::string: return "decode_string";
        case Via::list: return "decode_list";
        case Via::u64: return "decode_u64";
        case Via::u256: return "decode_u256";
        case Via::address: return "decode_fixed<20>";
        case Via::hash: return "decode_fixed<32>";
    }
    return "?";
}

/// The error decoding `input` through `via` gives, or nullopt if it succeeds.
std::optional<DecodingError> decode_error(Via via, BytesView input) {
    BytesView from = input;
    auto check = [&](const auto& result) -> std::optional<DecodingError> {
        if (!result) return result.error();
        const auto consumed = rlp::ensure_consumed(from);
        if (!consumed) return consumed.error();
        return std::nullopt;
    };
    switch (via) {
        case Via::item: {
            const auto r = rlp::decode_item(input);
            if (!r) return r.error();
            return std::nullopt;
        }
        case Via::header: {
            const auto r = rlp::decode_header(from);
            if (!r) return r.error();
            return std::nullopt;
        }
        case Via::string: return check(rlp::decode_string(from));
        case Via::list: return check(rlp::decode_list(from));
        case Via::u64: return check(rlp::decode_u64(from));
        case Via::u256: return check(rlp::decode_u256(from));
        case Via::address: return check(rlp::decode_fixed<20>(from));
        case Via::hash: return check(rlp::decode_fixed<32>(from));
    }
    return std::nullopt;
}

struct Row {
    std::string what;
    Bytes input;
    std::vector<Via> via;
};

void expect_error(DecodingError expected, const std::vector<Row>& rows) {
    for (const auto& row : rows) {
        for (const Via via : row.via) {
            SCOPED_TRACE(row.what + " via " + name(via) + ": " + to_hex(row.input).substr(0, 80));
            const auto error = decode_error(via, row.input);
            ASSERT_TRUE(error.has_value()) << "decoded";
            EXPECT_EQ(rlp::to_string(*error), rlp::to_string(expected));
        }
    }
}

constexpr Via kAllVia[] = {Via::item, Via::header, Via::string,  Via::list,
                           Via::u64,  Via::u256,   Via::address, Via::hash};
const std::vector<Via> kAll(std::begin(kAllVia), std::end(kAllVia));

}  // namespace

// ---------------------------------------------------------------------------------------------
// One table per error code.

TEST(rlp_decode, input_too_short) {
    expect_error(DecodingError::input_too_short,
                 {
                     {"empty input", {}, kAll},
                     {"short string, payload byte missing", "81"_bytes, kAll},
                     {"short string, 3 declared, 2 present",
                      "83 6162"_bytes,
                      {Via::item, Via::header, Via::string, Via::u64, Via::u256}},
                     {"32-byte string, 31 present",
                      cat("a0"_bytes, rep(31, 0xaa)),
                      {Via::item, Via::string, Via::u256, Via::hash}},
                     {"long string, 56 declared, 55 present",
                      cat("b838"_bytes, rep(55, 'a')),
                      {Via::item, Via::header, Via::string}},
                     {"long string, length-of-length byte missing",
                      "b8"_bytes,
                      {Via::item, Via::header, Via::string}},
                     {"long string, 2 length bytes declared, 1 present",
                      "b901"_bytes,
                      {Via::item, Via::header, Via::string}},
                     {"long string, length 2^64-1",
                      "bf ffffffffffffffff"_bytes,
                      {Via::item, Via::header, Via::string}},
                     {"long string, 65536 declared",
                      cat("ba010000"_bytes, rep(16, 0)),
                      {Via::item, Via::string}},
                     {"u64, 8 declared, 7 present", "88 01020304050607"_bytes, {Via::u64}},
                     {"short list, 3 declared, 2 present",
                      "c3 0102"_bytes,
                      {Via::item, Via::header, Via::list}},
                     {"long list, 56 declared, 55 present",
                      cat("f838"_bytes, rep(55, 0x01)),
                      {Via::item, Via::header, Via::list}},
                     {"long list, length-of-length byte missing",
                      "f9"_bytes,
                      {Via::item, Via::header, Via::list}},
                     {"long list, length 2^64-1",
                      "ff ffffffffffffffff 00"_bytes,
                      {Via::item, Via::header, Via::list}},
                     // The input holds enough bytes, but the item would run past its list.
                     {"item past the end of its list", "c2 8361 6263"_bytes, {Via::item}},
                     {"list past the end of its list", "c2 c2 01 02"_bytes, {Via::item}},
                 });
}

TEST(rlp_decode, trailing_bytes) {
    expect_error(DecodingError::trailing_bytes,
                 {
                     {"two single bytes", "0000"_bytes, {Via::item, Via::string}},
                     {"integer, then a byte", "0100"_bytes, {Via::u64, Via::u256}},
                     {"empty string, then a byte", "8000"_bytes, {Via::item, Via::u256}},
                     {"string, then a byte", "83616263 00"_bytes, {Via::item, Via::string}},
                     {"empty list, then a byte", "c0 00"_bytes, {Via::item, Via::list}},
                     {"two empty lists", "c0c0"_bytes, {Via::item, Via::list}},
                     {"address, then a byte",
                      cat("94"_bytes, rep(20, 0x11), "01"_bytes),
                      {Via::item, Via::address}},
                 });
}

TEST(rlp_decode, leading_zero) {
    expect_error(DecodingError::leading_zero,
                 {
                     {"single byte zero (0 must be 0x80)", "00"_bytes, {Via::u64, Via::u256}},
                     {"0x0001", "820001"_bytes, {Via::u64, Via::u256}},
                     {"8 bytes, first zero", "88 00ffffffffffffff"_bytes, {Via::u64, Via::u256}},
                     // Leading zero is reported before the width is judged.
                     {"9 bytes, first zero", cat("89 00"_bytes, rep(8, 0xff)), {Via::u64}},
                     {"32 bytes, first zero", cat("a0 00"_bytes, rep(31, 0xff)), {Via::u256}},
                     {"33 bytes, first zero", cat("a1 00"_bytes, rep(32, 0xff)), {Via::u256}},
                 });
}

TEST(rlp_decode, leading_zero_in_length) {
    expect_error(
        DecodingError::leading_zero_in_length,
        {
            {"string, b8 00", "b800"_bytes, kAll},
            {"string, 2-byte length 0x0038",
             cat("b90038"_bytes, rep(56, 'a')),
             {Via::item, Via::header, Via::string, Via::u256}},
            {"string, 8-byte length with leading zero",
             "bf 00ffffffffffffff"_bytes,
             {Via::item, Via::header, Via::string}},
            {"address in a 2-byte length", cat("b90014"_bytes, rep(20, 0x11)), {Via::address}},
            {"list, f8 00", "f800"_bytes, {Via::item, Via::header, Via::list}},
            {"list, 2-byte length 0x0038",
             cat("f90038"_bytes, rep(56, 0x01)),
             {Via::item, Via::header, Via::list}},
            {"list, 4-byte length 0x00000040",
             cat("fb00000040"_bytes, rep(64, 0x01)),
             {Via::item, Via::list}},
        });
}

TEST(rlp_decode, non_canonical_size) {
    expect_error(
        DecodingError::non_canonical_size,
        {
            {"string of 1 in long form", "b801ff"_bytes, kAll},
            {"string of 55 in long form",
             cat("b837"_bytes, rep(55, 'a')),
             {Via::item, Via::header, Via::string}},
            {"u256 of 32 bytes in long form",
             cat("b820"_bytes, rep(32, 0xff)),
             {Via::u256, Via::hash}},
            {"list of 1 in long form", "f80101"_bytes, {Via::item, Via::header, Via::list}},
            {"list of 55 in long form",
             cat("f837"_bytes, rep(55, 0x01)),
             {Via::item, Via::header, Via::list}},
            {"inside a list", "c3 b80101"_bytes, {Via::item}},
        });
}

TEST(rlp_decode, non_canonical_single_byte) {
    expect_error(DecodingError::non_canonical_single_byte,
                 {
                     {"0x00 as 81 00", "8100"_bytes, kAll},
                     {"0x01 as 81 01", "8101"_bytes, kAll},
                     {"0x7f as 81 7f", "817f"_bytes, kAll},
                     {"inside a list", "c2 8105"_bytes, {Via::item}},
                 });
}

TEST(rlp_decode, unexpected_list) {
    expect_error(
        DecodingError::unexpected_list,
        {
            {"empty list", "c0"_bytes, {Via::string, Via::u64, Via::u256, Via::address, Via::hash}},
            {"list of one", "c180"_bytes, {Via::string, Via::u64, Via::u256}},
            {"list of 20 single bytes where an address goes",
             cat("d4"_bytes, rep(20, 0x01)),
             {Via::address}},
            {"long list", cat("f838"_bytes, rep(56, 0x01)), {Via::string, Via::u256}},
        });
}

TEST(rlp_decode, unexpected_string) {
    expect_error(DecodingError::unexpected_string,
                 {
                     {"empty string", "80"_bytes, {Via::list}},
                     {"single byte 0x00", "00"_bytes, {Via::list}},
                     {"single byte 0x7f", "7f"_bytes, {Via::list}},
                     {"short string", "83616263"_bytes, {Via::list}},
                     {"long string", cat("b838"_bytes, rep(56, 'a')), {Via::list}},
                 });
}

TEST(rlp_decode, overflow) {
    expect_error(DecodingError::overflow,
                 {
                     {"u64: 9 bytes, 2^64", cat("89 01"_bytes, rep(8, 0)), {Via::u64}},
                     {"u64: 9 bytes of ff", cat("89"_bytes, rep(9, 0xff)), {Via::u64}},
                     {"u64: 32 bytes", cat("a0"_bytes, rep(32, 0xff)), {Via::u64}},
                     {"u256: 33 bytes, 2^256", cat("a1 01"_bytes, rep(32, 0)), {Via::u256}},
                     {"u256: 33 bytes of ff", cat("a1"_bytes, rep(33, 0xff)), {Via::u256}},
                     {"u256: 56 bytes", cat("b838 01"_bytes, rep(55, 0)), {Via::u256, Via::u64}},
                 });
}

TEST(rlp_decode, unexpected_length) {
    expect_error(DecodingError::unexpected_length,
                 {
                     {"address: empty", "80"_bytes, {Via::address, Via::hash}},
                     {"address: 1 byte", "01"_bytes, {Via::address, Via::hash}},
                     {"address: 19 bytes", cat("93"_bytes, rep(19, 0x11)), {Via::address}},
                     {"address: 21 bytes", cat("95"_bytes, rep(21, 0x11)), {Via::address}},
                     {"address: a 32-byte hash", cat("a0"_bytes, rep(32, 0x11)), {Via::address}},
                     {"hash: 20 bytes", cat("94"_bytes, rep(20, 0x11)), {Via::hash}},
                     {"hash: 31 bytes", cat("9f"_bytes, rep(31, 0x11)), {Via::hash}},
                     {"hash: 33 bytes", cat("a1"_bytes, rep(33, 0x11)), {Via::hash}},
                 });
}

TEST(rlp_decode, too_deep) {
    expect_error(
        DecodingError::too_deep,
        {
            {"kMaxDepth+1 lists, innermost empty", nested_lists(rlp::kMaxDepth + 1), {Via::item}},
            {"kMaxDepth+1 lists around a string",
             nested_lists(rlp::kMaxDepth + 1, "83616263"_bytes),
             {Via::item}},
            {"kMaxDepth+1 lists beside a shallow item",
             nested_lists(1, cat("80"_bytes, nested_lists(rlp::kMaxDepth))),
             {Via::item}},
            // Far deeper than the limit: rejected, not a stack overflow.
            {"100000 lists", nested_lists(100000), {Via::item}},
        });
}

TEST(rlp_decode, max_depth_accepted) {
    // The limit holds whatever the innermost list contains.
    for (const Bytes& input :
         {nested_lists(rlp::kMaxDepth), nested_lists(rlp::kMaxDepth, "80"_bytes),
          nested_lists(rlp::kMaxDepth, cat("83616263"_bytes, "01"_bytes))}) {
        const auto item = rlp::decode_item(input);
        ASSERT_TRUE(item) << rlp::to_string(item.error());
        size_t depth = 0;
        for (const rlp::Item* it = &*item; it->list; it = &it->items[0]) {
            ++depth;
            if (it->items.empty()) break;
        }
        EXPECT_EQ(depth, rlp::kMaxDepth);
    }
}

TEST(rlp_decode, error_names) {
    // Every enumerator has its own stable snake_case name.
    std::vector<std::string_view> names;
    for (int e = 0; e <= static_cast<int>(DecodingError::too_deep); ++e)
        names.push_back(rlp::to_string(static_cast<DecodingError>(e)));
    EXPECT_EQ(names.size(), 11u);
    for (size_t i = 0; i < names.size(); ++i) {
        EXPECT_NE(names[i], "unknown") << i;
        for (size_t j = i + 1; j < names.size(); ++j) EXPECT_NE(names[i], names[j]);
    }
    EXPECT_EQ(rlp::to_string(DecodingError::input_too_short), "input_too_short");
    EXPECT_EQ(rlp::to_string(DecodingError::too_deep), "too_deep");
}

// ---------------------------------------------------------------------------------------------
// Boundaries and values.

TEST(rlp_decode, header) {
    struct {
        Bytes input;
        bool list;
        size_t payload_length;
        size_t consumed;
    } const rows[] = {
        {"00"_bytes, false, 1, 0},  // a single byte below 0x80 is its own encoding
        {"7f"_bytes, false, 1, 0},
        {"80"_bytes, false, 0, 1},
        {"8180"_bytes, false, 1, 1},
        {cat("b7"_bytes, rep(55, 'a')), false, 55, 1},
        {cat("b838"_bytes, rep(56, 'a')), false, 56, 2},
        {cat("b90100"_bytes, rep(256, 'a')), false, 256, 3},
        {"c0"_bytes, true, 0, 1},
        {cat("f7"_bytes, rep(55, 1)), true, 55, 1},
        {cat("f838"_bytes, rep(56, 1)), true, 56, 2},
        {cat("f90200"_bytes, rep(512, 1)), true, 512, 3},
    };
    for (const auto& row : rows) {
        SCOPED_TRACE(to_hex(row.input).substr(0, 12));
        BytesView from = row.input;
        const auto h = rlp::decode_header(from);
        ASSERT_TRUE(h) << rlp::to_string(h.error());
        EXPECT_EQ(h->list, row.list);
        EXPECT_EQ(h->payload_length, row.payload_length);
        EXPECT_EQ(from.data(), row.input.data() + row.consumed);
        EXPECT_EQ(from.size(), row.payload_length);
    }
}

TEST(rlp_decode, string_55_and_56_bytes) {
    for (size_t n : {55u, 56u}) {
        SCOPED_TRACE(n);
        const Bytes payload = rep(n, 'x');
        const Bytes input = n == 55 ? cat("b7"_bytes, payload) : cat("b838"_bytes, payload);
        BytesView from = input;
        const auto s = rlp::decode_string(from);
        ASSERT_TRUE(s) << rlp::to_string(s.error());
        EXPECT_EQ(s->size(), n);
        EXPECT_TRUE(std::equal(s->begin(), s->end(), payload.begin(), payload.end()));
        EXPECT_TRUE(from.empty());
    }
}

TEST(rlp_decode, list_55_and_56_bytes) {
    for (size_t n : {55u, 56u}) {
        SCOPED_TRACE(n);
        const Bytes payload = rep(n, 0x05);  // n single-byte items
        const Bytes input = n == 55 ? cat("f7"_bytes, payload) : cat("f838"_bytes, payload);
        BytesView from = input;
        const auto l = rlp::decode_list(from);
        ASSERT_TRUE(l) << rlp::to_string(l.error());
        EXPECT_EQ(l->size(), n);
        EXPECT_TRUE(from.empty());

        const auto item = rlp::decode_item(input);
        ASSERT_TRUE(item) << rlp::to_string(item.error());
        ASSERT_TRUE(item->list);
        ASSERT_EQ(item->items.size(), n);
        for (const auto& child : item->items) {
            EXPECT_FALSE(child.list);
            ASSERT_EQ(child.bytes.size(), 1u);
            EXPECT_EQ(child.bytes[0], 0x05);
        }
    }
}

TEST(rlp_decode, single_byte_7f_vs_8180) {
    {
        const Bytes in = "7f"_bytes;
        BytesView from = in;
        const auto s = rlp::decode_string(from);
        ASSERT_TRUE(s);
        ASSERT_EQ(s->size(), 1u);
        EXPECT_EQ((*s)[0], 0x7f);
        EXPECT_TRUE(from.empty());
        BytesView again = in;
        EXPECT_EQ(rlp::decode_u64(again).value(), 0x7fu);
    }
    {
        const Bytes in = "8180"_bytes;
        BytesView from = in;
        const auto s = rlp::decode_string(from);
        ASSERT_TRUE(s);
        ASSERT_EQ(s->size(), 1u);
        EXPECT_EQ((*s)[0], 0x80);
        EXPECT_TRUE(from.empty());
        BytesView again = in;
        EXPECT_EQ(rlp::decode_u64(again).value(), 0x80u);
        BytesView again256 = in;
        EXPECT_EQ(rlp::decode_u256(again256).value(), 0x80);
    }
    {
        const Bytes in = "81ff"_bytes;
        BytesView from = in;
        EXPECT_EQ(rlp::decode_u64(from).value(), 0xffu);
    }
}

TEST(rlp_decode, u64_values) {
    const struct {
        Bytes input;
        uint64_t value;
    } rows[] = {
        {"80"_bytes, 0},
        {"01"_bytes, 1},
        {"7f"_bytes, 0x7f},
        {"8180"_bytes, 0x80},
        {"820100"_bytes, 0x100},
        {"88 0102030405060708"_bytes, 0x0102030405060708},
        {"88 ffffffffffffffff"_bytes, std::numeric_limits<uint64_t>::max()},
    };
    for (const auto& row : rows) {
        SCOPED_TRACE(to_hex(row.input));
        BytesView from = row.input;
        const auto v = rlp::decode_u64(from);
        ASSERT_TRUE(v) << rlp::to_string(v.error());
        EXPECT_EQ(*v, row.value);
        EXPECT_TRUE(from.empty());
    }
}

TEST(rlp_decode, u256_values) {
    const u256 max = ~u256{0};
    const struct {
        Bytes input;
        u256 value;
    } rows[] = {
        {"80"_bytes, 0},
        {"01"_bytes, 1},
        {"8180"_bytes, 0x80},
        {"88 ffffffffffffffff"_bytes, std::numeric_limits<uint64_t>::max()},
        {"89 010000000000000000"_bytes, u256{1} << 64},
        {cat("a0 80"_bytes, rep(31, 0)), u256{1} << 255},
        {cat("a0"_bytes, rep(32, 0xff)), max},
    };
    for (const auto& row : rows) {
        SCOPED_TRACE(to_hex(row.input));
        BytesView from = row.input;
        const auto v = rlp::decode_u256(from);
        ASSERT_TRUE(v) << rlp::to_string(v.error());
        EXPECT_EQ(*v, row.value);
        EXPECT_TRUE(from.empty());
    }
}

TEST(rlp_decode, fixed) {
    const Bytes input = cat("94"_bytes, rep(19, 0x11), "22"_bytes);
    BytesView from = input;
    const auto a = rlp::decode_fixed<20>(from);
    ASSERT_TRUE(a) << rlp::to_string(a.error());
    EXPECT_EQ((*a)[0], 0x11);
    EXPECT_EQ((*a)[19], 0x22);
    EXPECT_TRUE(from.empty());

    const Bytes hash_input = cat("a0"_bytes, rep(32, 0xab));
    from = hash_input;
    const auto h = rlp::decode_fixed<32>(from);
    ASSERT_TRUE(h) << rlp::to_string(h.error());
    EXPECT_EQ(*h, Hash::from_view(rep(32, 0xab)));
    EXPECT_TRUE(from.empty());
}

TEST(rlp_decode, views_point_into_input) {
    const Bytes input = "c6 827a77 c104 01"_bytes;  // ["zw", [4], 1]
    const uint8_t* base = input.data();

    BytesView from = input;
    const auto payload = rlp::decode_list(from);
    ASSERT_TRUE(payload);
    EXPECT_EQ(payload->data(), base + 1);
    EXPECT_EQ(payload->size(), 6u);
    EXPECT_EQ(from.data(), base + input.size());

    BytesView fields = *payload;
    const auto zw = rlp::decode_string(fields);
    ASSERT_TRUE(zw);
    EXPECT_EQ(zw->data(), base + 2);
    EXPECT_EQ(zw->size(), 2u);
    const auto inner = rlp::decode_list(fields);
    ASSERT_TRUE(inner);
    EXPECT_EQ(inner->data(), base + 5);
    const auto one = rlp::decode_u64(fields);
    ASSERT_TRUE(one);
    EXPECT_EQ(*one, 1u);
    EXPECT_TRUE(fields.empty());
    EXPECT_EQ(fields.data(), base + input.size());

    const auto item = rlp::decode_item(input);
    ASSERT_TRUE(item);
    ASSERT_EQ(item->items.size(), 3u);
    EXPECT_EQ(item->items[0].bytes.data(), base + 2);
    ASSERT_EQ(item->items[1].items.size(), 1u);
    EXPECT_EQ(item->items[1].items[0].bytes.data(), base + 5);  // a single byte is its own view
    EXPECT_EQ(item->items[2].bytes.data(), base + 6);

    const Bytes long_string = cat("b90400"_bytes, rep(1024, 'L'));
    BytesView ls = long_string;
    const auto s = rlp::decode_string(ls);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->data(), long_string.data() + 3);
    EXPECT_EQ(s->size(), 1024u);
}

TEST(rlp_decode, fields_in_sequence) {
    // A transaction-like list: [nonce, value, to, data, []], each decoded from the front.
    const Bytes input = cat("ed"_bytes, "09"_bytes, "89 010000000000000000"_bytes, "94"_bytes,
                            rep(20, 0x35), "8b"_bytes, rep(11, 'd'), "c0"_bytes);
    ASSERT_EQ(input.size(), 1u + 0x2d);
    BytesView from = input;
    auto fields = rlp::decode_list(from);
    ASSERT_TRUE(fields);
    EXPECT_TRUE(rlp::ensure_consumed(from));
    EXPECT_EQ(rlp::decode_u64(*fields).value(), 9u);
    EXPECT_EQ(rlp::decode_u256(*fields).value(), u256{1} << 64);
    EXPECT_EQ(rlp::decode_fixed<20>(*fields).value(), Address::from_view(rep(20, 0x35)));
    EXPECT_EQ(rlp::decode_string(*fields).value().size(), 11u);
    EXPECT_EQ(rlp::decode_list(*fields).value().size(), 0u);
    EXPECT_TRUE(rlp::ensure_consumed(*fields));
}

// rlp::item_length: an item's whole length from its prefix alone (at most 9 bytes), as the
// chain-file reader uses it; it agrees with decode_header on every form.
TEST(rlp_decode, item_length_from_the_prefix_alone) {
    struct Case {
        Bytes prefix;
        uint64_t length;
    };
    const std::vector<Case> cases{
        {"00"_bytes, 1},
        {"7f"_bytes, 1},
        {"80"_bytes, 1},
        {"81"_bytes, 2},
        {"b7"_bytes, 56},
        {"b838"_bytes, 58},
        {"b90100"_bytes, 259},
        {"c0"_bytes, 1},
        {"f7"_bytes, 56},
        {"f838"_bytes, 58},
        {"f90400"_bytes, 1027},
        {"fa010000"_bytes, 65540},
        {"ff0100000000000000"_bytes, 9 + (uint64_t{1} << 56)},
        // Bytes after the prefix are not looked at.
        {"c3 010203 ff"_bytes, 4},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(to_hex(c.prefix));
        const auto n = rlp::item_length(c.prefix);
        ASSERT_TRUE(n);
        EXPECT_EQ(*n, c.length);
    }
    // Agreement with decode_header wherever the whole item is there.
    using barrel::test::cat;
    for (const Bytes& item : {"8180"_bytes, cat({Bytes{0xb8, 56}, rep(56, 1)}),
                              cat({Bytes{0xf8, 60}, rep(60, 0xc0)}), "c4c0c0c0c0"_bytes}) {
        BytesView rest = item;
        const auto h = rlp::decode_header(rest);
        ASSERT_TRUE(h);
        EXPECT_EQ(rlp::item_length(item).value(), item.size() - rest.size() + h->payload_length);
    }

    const std::vector<std::pair<Bytes, DecodingError>> bad{
        {{}, DecodingError::input_too_short},
        {"b9 01"_bytes, DecodingError::input_too_short},  // the length needs 2 bytes
        {"f8"_bytes, DecodingError::input_too_short},
        {"ff ffffffffffffffff"_bytes, DecodingError::input_too_short},  // no input is that long
        {"b9 0040"_bytes, DecodingError::leading_zero_in_length},
        {"b8 37"_bytes, DecodingError::non_canonical_size},
        {"f8 00"_bytes, DecodingError::leading_zero_in_length},
    };
    for (const auto& [prefix, error] : bad) {
        SCOPED_TRACE(to_hex(prefix));
        const auto n = rlp::item_length(prefix);
        ASSERT_FALSE(n);
        EXPECT_EQ(n.error(), error);
    }
}
