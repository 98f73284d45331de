// RLP encoding: exact bytes at the boundaries, `*_length` functions against the encoder's
// output, and round trips through the strict decoder.

#include <barrel/core/hex.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

using namespace barrel;
using namespace barrel::literals;

namespace {

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
const u256 kU256Max = ~u256{0};

template <class T>
std::string encoded_hex(const T& v) {
    Bytes out;
    rlp::encode(out, v);
    return to_hex(out);
}

/// Bytes whose first byte is `first` (so single-byte strings hit both sides of 0x80).
Bytes sample_string(size_t n, uint8_t first) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 31 + 7);
    if (n > 0) b[0] = first;
    return b;
}

/// Lengths around every boundary of the header forms.
std::vector<size_t> sample_sizes() {
    std::vector<size_t> sizes;
    for (size_t n = 0; n <= 70; ++n) sizes.push_back(n);
    for (size_t n : {127u, 128u, 255u, 256u, 257u, 1023u, 1024u, 65535u, 65536u, 65537u})
        sizes.push_back(n);
    return sizes;
}

/// Powers of two and their neighbours up to 64 bits, and the u64 limits.
std::vector<uint64_t> sample_u64() {
    std::vector<uint64_t> values{0, 1, 0x7f, 0x80, 0xff, 0x100, kU64Max - 1, kU64Max};
    for (unsigned bit = 1; bit < 64; ++bit) {
        const uint64_t p = uint64_t{1} << bit;
        values.insert(values.end(), {p - 1, p, p + 1});
    }
    return values;
}

std::vector<u256> sample_u256() {
    std::vector<u256> values{0, 1, 0x7f, 0x80, 0xff, 0x100, kU256Max - 1, kU256Max};
    for (unsigned bit = 1; bit < 256; ++bit) {
        const u256 p = u256{1} << bit;
        values.insert(values.end(), {p - 1, p, p + 1});
    }
    return values;
}

}  // namespace

TEST(rlp_encode, strings) {
    EXPECT_EQ(encoded_hex(BytesView{}), "0x80");
    EXPECT_EQ(encoded_hex("00"_hex), "0x00");
    EXPECT_EQ(encoded_hex("01"_hex), "0x01");
    EXPECT_EQ(encoded_hex("7f"_hex), "0x7f");
    EXPECT_EQ(encoded_hex("80"_hex), "0x8180");
    EXPECT_EQ(encoded_hex("ff"_hex), "0x81ff");
    EXPECT_EQ(encoded_hex("0000"_hex), "0x820000");
    EXPECT_EQ(encoded_hex(as_bytes("dog")), "0x83646f67");
    EXPECT_EQ(encoded_hex(Bytes(55, 0xaa)), "0xb7" + std::string(110, 'a'));
    EXPECT_EQ(encoded_hex(Bytes(56, 0xaa)), "0xb838" + std::string(112, 'a'));
    EXPECT_EQ(encoded_hex(Bytes(1024, 0xaa)), "0xb90400" + std::string(2048, 'a'));
    EXPECT_EQ(encoded_hex(Bytes(65536, 0xaa)).substr(0, 10), "0xba010000");
}

TEST(rlp_encode, integers) {
    const struct {
        uint64_t v;
        const char* hex;
    } rows[] = {
        {0, "0x80"},
        {1, "0x01"},
        {0x7f, "0x7f"},
        {0x80, "0x8180"},
        {0xff, "0x81ff"},
        {0x100, "0x820100"},
        {0xffff, "0x82ffff"},
        {0x10000, "0x83010000"},
        {100000, "0x830186a0"},
        {kU64Max, "0x88ffffffffffffffff"},
    };
    for (const auto& row : rows) {
        SCOPED_TRACE(row.v);
        EXPECT_EQ(encoded_hex(row.v), row.hex);
        EXPECT_EQ(encoded_hex(u256{row.v}), row.hex);  // both overloads agree
    }
    EXPECT_EQ(encoded_hex(u256{kU64Max} + 1), "0x89010000000000000000");
    EXPECT_EQ(encoded_hex(u256{1} << 255), "0xa080" + std::string(62, '0'));
    EXPECT_EQ(encoded_hex(kU256Max), "0xa0" + std::string(64, 'f'));
}

TEST(rlp_encode, fixed_bytes) {
    Address a;
    a[0] = 0x01;
    a[19] = 0xff;
    EXPECT_EQ(encoded_hex(a), "0x9401" + std::string(36, '0') + "ff");
    EXPECT_EQ(rlp::encoded_length(a), 21u);
    Hash h;  // all zero: still 32 bytes, not an integer
    EXPECT_EQ(encoded_hex(h), "0xa0" + std::string(64, '0'));
    EXPECT_EQ(rlp::encoded_length(h), 33u);
}

TEST(rlp_encode, header_length_matches_encode_header) {
    std::vector<size_t> sizes = sample_sizes();
    for (size_t n : {size_t{1} << 24, size_t{1} << 32, (size_t{1} << 56) - 1,
                     std::numeric_limits<size_t>::max()})
        sizes.push_back(n);
    for (size_t n : sizes) {
        for (bool list : {false, true}) {
            SCOPED_TRACE(std::to_string(n) + (list ? " list" : " string"));
            Bytes out;
            rlp::encode_header(out, {list, n});
            ASSERT_EQ(out.size(), rlp::header_length(n));
            const uint8_t base = list ? 0xc0 : 0x80;
            if (n < 56) {
                EXPECT_EQ(out[0], base + n);
                continue;
            }
            EXPECT_EQ(out[0], base + 55 + (out.size() - 1));
            EXPECT_NE(out[1], 0);  // no leading zero in the length
            size_t len = 0;
            for (size_t i = 1; i < out.size(); ++i) len = (len << 8) | out[i];
            EXPECT_EQ(len, n);
        }
    }
}

TEST(rlp_encode, string_length_and_round_trip) {
    for (size_t n : sample_sizes()) {
        for (uint8_t first : {uint8_t{0x00}, uint8_t{0x7f}, uint8_t{0x80}, uint8_t{0xff}}) {
            SCOPED_TRACE(std::to_string(n) + " bytes starting " + std::to_string(first));
            const Bytes s = sample_string(n, first);
            Bytes out{0xee};  // encode appends
            rlp::encode(out, BytesView{s});
            EXPECT_EQ(out[0], 0xee);
            ASSERT_EQ(out.size() - 1, rlp::encoded_length(BytesView{s}));

            BytesView from = BytesView{out}.subspan(1);
            const auto back = rlp::decode_string(from);
            ASSERT_TRUE(back) << rlp::to_string(back.error());
            EXPECT_TRUE(std::equal(back->begin(), back->end(), s.begin(), s.end()));
            EXPECT_TRUE(from.empty());
        }
    }
}

TEST(rlp_encode, list_length_and_round_trip) {
    for (size_t n : sample_sizes()) {
        SCOPED_TRACE(n);
        const Bytes payload(n, 0x01);  // n single-byte items
        Bytes out;
        rlp::encode_list(out, payload);
        ASSERT_EQ(out.size(), rlp::header_length(n) + n);

        BytesView from = out;
        const auto back = rlp::decode_list(from);
        ASSERT_TRUE(back) << rlp::to_string(back.error());
        EXPECT_EQ(back->size(), n);
        EXPECT_TRUE(from.empty());
    }
}

TEST(rlp_encode, u64_length_and_round_trip) {
    for (uint64_t v : sample_u64()) {
        SCOPED_TRACE(v);
        Bytes out;
        rlp::encode(out, v);
        ASSERT_EQ(out.size(), rlp::encoded_length(v));
        BytesView from = out;
        const auto back = rlp::decode_u64(from);
        ASSERT_TRUE(back) << rlp::to_string(back.error());
        EXPECT_EQ(*back, v);
        EXPECT_TRUE(from.empty());
    }
}

TEST(rlp_encode, u256_length_and_round_trip) {
    for (const u256& v : sample_u256()) {
        SCOPED_TRACE(to_decimal(v));
        Bytes out;
        rlp::encode(out, v);
        ASSERT_EQ(out.size(), rlp::encoded_length(v));
        BytesView from = out;
        const auto back = rlp::decode_u256(from);
        ASSERT_TRUE(back) << rlp::to_string(back.error());
        EXPECT_EQ(*back, v);
        EXPECT_TRUE(from.empty());
    }
}

TEST(rlp_encode, item_round_trip) {
    // ["", "\x00", "\x80", [[], [56 bytes]], 1024 bytes, [[[]]]]
    Bytes inner;
    rlp::encode_list(inner, {});
    rlp::encode(inner, BytesView{Bytes(56, 0x42)});
    Bytes deep;
    rlp::encode_list(deep, "c0"_hex);
    Bytes payload;
    rlp::encode(payload, BytesView{});
    rlp::encode(payload, "00"_hex);
    rlp::encode(payload, "80"_hex);
    rlp::encode_list(payload, inner);
    rlp::encode(payload, BytesView{Bytes(1024, 0x43)});
    rlp::encode_list(payload, deep);
    Bytes encoded;
    rlp::encode_list(encoded, payload);

    const auto item = rlp::decode_item(encoded);
    ASSERT_TRUE(item) << rlp::to_string(item.error());
    ASSERT_EQ(item->items.size(), 6u);
    EXPECT_EQ(item->items[3].items.size(), 2u);
    Bytes again;
    rlp::encode(again, *item);
    EXPECT_EQ(to_hex(again), to_hex(encoded));
}

TEST(rlp_encode, item_by_hand) {
    rlp::Item leaf;
    leaf.bytes = as_bytes("dog");
    rlp::Item list;
    list.list = true;
    list.items = {leaf, leaf};
    Bytes out;
    rlp::encode(out, list);
    EXPECT_EQ(to_hex(out), "0xc883646f6783646f67");

    rlp::Item empty_list;
    empty_list.list = true;
    out.clear();
    rlp::encode(out, empty_list);
    EXPECT_EQ(to_hex(out), "0xc0");

    rlp::Item empty_string;
    out.clear();
    rlp::encode(out, empty_string);
    EXPECT_EQ(to_hex(out), "0x80");
}
