#include <barrel/core/hex.hpp>

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>

using namespace barrel;
using namespace barrel::literals;

TEST(core_hex, to_hex_lower_case_with_prefix) {
    const Bytes b{0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    EXPECT_EQ(to_hex(b), "0x00017f80abff");
    EXPECT_EQ(to_hex_bare(b), "00017f80abff");
    EXPECT_EQ(to_hex(Bytes{}), "0x");
    EXPECT_EQ(to_hex_bare(Bytes{}), "");
}

TEST(core_hex, round_trip_every_byte) {
    Bytes all(256);
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint8_t>(i);
    const auto hex = to_hex(all);
    EXPECT_EQ(hex.size(), 2 + 512u);
    const auto back = from_hex(hex);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, all);

    const auto back_bare = from_hex(to_hex_bare(all));
    ASSERT_TRUE(back_bare);
    EXPECT_EQ(*back_bare, all);
}

TEST(core_hex, optional_prefix_and_either_case) {
    const Bytes expected{0xde, 0xad, 0xbe, 0xef};
    for (std::string_view s :
         {"deadbeef", "0xdeadbeef", "0XDEADBEEF", "DEADBEEF", "0xDeAdBeEf", "0XdeadBEEF"}) {
        const auto b = from_hex(s);
        ASSERT_TRUE(b) << s;
        EXPECT_EQ(*b, expected) << s;
    }
}

TEST(core_hex, empty) {
    for (std::string_view s : {"", "0x", "0X"}) {
        const auto b = from_hex(s);
        ASSERT_TRUE(b) << s;
        EXPECT_TRUE(b->empty()) << s;
    }
}

TEST(core_hex, odd_length) {
    for (std::string_view s : {"0", "abc", "0x0", "0xabc", "0X12345"}) {
        const auto b = from_hex(s);
        ASSERT_FALSE(b) << s;
        EXPECT_EQ(b.error(), HexError::odd_length) << s;
    }
}

TEST(core_hex, bad_digit) {
    // Each position of a pair, the characters just outside the digit ranges, a second prefix,
    // whitespace and a sign.
    for (std::string_view s : {"0g", "g0", "0x0G", "/0", ":0", "@0", "`0", "0x0x", "0x 1", "+1",
                               "-1", "00 1", "ab\n1"}) {
        const auto b = from_hex(s);
        ASSERT_FALSE(b) << s;
        EXPECT_EQ(b.error(), HexError::bad_digit) << s;
    }
}

// A stray character that also makes the count odd is a bad digit, not an odd count (issue 19:
// "0x80 0" said "odd number of hex digits"), and describe_hex_error says which and where.
TEST(core_hex, bad_digit_is_reported_before_an_odd_count) {
    for (std::string_view s : {"0x80 0", "0x8 ", " 0x8", "abc\n", "0x0g0"}) {
        const auto b = from_hex(s);
        ASSERT_FALSE(b) << s;
        EXPECT_EQ(b.error(), HexError::bad_digit) << s;
    }
    EXPECT_EQ(describe_hex_error("0x80 0", HexError::bad_digit),
              "invalid hex digit ' ' at position 5");
    EXPECT_EQ(describe_hex_error("abc\n", HexError::bad_digit),
              "invalid hex digit byte 0x0a at position 4");
    EXPECT_EQ(describe_hex_error("0x0x", HexError::bad_digit),
              "invalid hex digit 'x' at position 4");
    EXPECT_EQ(describe_hex_error("0xabc", HexError::odd_length), "odd number of hex digits");
    const auto at = find_bad_digit("0X12z");
    ASSERT_TRUE(at);
    EXPECT_EQ(at->character, 'z');
    EXPECT_EQ(at->offset, 4u);
    EXPECT_FALSE(find_bad_digit("0x0123456789abcdefABCDEF"));
}

// The decoder checks the digits once, after the loop: every byte that is no hex digit, at
// every position of a pair, still makes it fail.
TEST(core_hex, decode_hex_digits_rejects_every_non_digit_anywhere) {
    const std::string good = "0a1B2c3D4e5F6789";
    std::array<uint8_t, 8> out{};
    ASSERT_TRUE(decode_hex_digits(good, out));
    EXPECT_EQ(to_hex_bare(out), "0a1b2c3d4e5f6789");
    for (int c = 0; c < 256; ++c) {
        const char ch = static_cast<char>(c);
        if (hex_digit_value(ch) >= 0) continue;
        for (size_t at = 0; at < good.size(); ++at) {
            std::string bad = good;
            bad[at] = ch;
            EXPECT_FALSE(decode_hex_digits(bad, out)) << "byte " << c << " at " << at;
        }
    }
    EXPECT_EQ(hex_digit_value('f'), 15);
    EXPECT_EQ(hex_digit_value('F'), 15);
    EXPECT_EQ(hex_digit_value('g'), -1);
}

TEST(core_hex, bad_digit_embedded_nul) {
    const std::string s("0\0", 2);
    const auto b = from_hex(s);
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error(), HexError::bad_digit);
}

TEST(core_hex, hash_from_hex) {
    const std::string hex = "0x" + std::string(62, '0') + "01";
    const auto h = hash_from_hex(hex);
    ASSERT_TRUE(h);
    Hash expected;
    expected[31] = 1;
    EXPECT_EQ(*h, expected);
    EXPECT_EQ(to_hex(*h), hex);

    const auto upper = hash_from_hex(std::string(64, 'F'));
    ASSERT_TRUE(upper);
    for (size_t i = 0; i < 32; ++i) EXPECT_EQ((*upper)[i], 0xff);
}

TEST(core_hex, hash_wrong_length) {
    for (size_t digits : {0u, 2u, 62u, 66u, 128u}) {
        const auto h = hash_from_hex("0x" + std::string(digits, 'a'));
        ASSERT_FALSE(h) << digits;
        EXPECT_EQ(h.error(), HexError::wrong_length) << digits;
    }
}

TEST(core_hex, hash_other_errors_win_over_length) {
    const auto odd = hash_from_hex(std::string(63, 'a'));
    ASSERT_FALSE(odd);
    EXPECT_EQ(odd.error(), HexError::odd_length);

    const auto bad = hash_from_hex(std::string(63, 'a') + "z");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error(), HexError::bad_digit);
}

TEST(core_hex, address_from_hex) {
    const auto a = address_from_hex("0xF0F6F18BCA1B28CD68E4357452947E021241E9CE");
    ASSERT_TRUE(a);
    EXPECT_EQ(to_hex(*a), "0xf0f6f18bca1b28cd68e4357452947e021241e9ce");
    EXPECT_EQ((*a)[0], 0xf0);
    EXPECT_EQ((*a)[19], 0xce);
}

TEST(core_hex, address_wrong_length) {
    // 19 and 21 bytes, and a hash given where an address is expected.
    for (size_t digits : {38u, 42u, 64u}) {
        const auto a = address_from_hex(std::string(digits, '1'));
        ASSERT_FALSE(a) << digits;
        EXPECT_EQ(a.error(), HexError::wrong_length) << digits;
    }
}

TEST(core_hex, literal) {
    EXPECT_EQ("0x0102"_hex, (Bytes{0x01, 0x02}));
    EXPECT_EQ("FFfe"_hex, (Bytes{0xff, 0xfe}));
    EXPECT_TRUE(""_hex.empty());
}

TEST(core_hex, error_names) {
    EXPECT_FALSE(to_string(HexError::odd_length).empty());
    EXPECT_FALSE(to_string(HexError::bad_digit).empty());
    EXPECT_FALSE(to_string(HexError::wrong_length).empty());
    EXPECT_NE(to_string(HexError::odd_length), to_string(HexError::bad_digit));
    EXPECT_NE(to_string(HexError::bad_digit), to_string(HexError::wrong_length));
}

// The big-endian helpers of core/bytes.hpp (the one copy; the wire formats' fields use them).
TEST(core_bytes, big_endian_loads_and_stores) {
    static_assert(barrel::load_be_u32(std::array<uint8_t, 4>{1, 2, 3, 4}.data()) == 0x01020304u);
    const uint8_t eight[8] = {0x80, 0, 0, 0, 0, 0, 0x01, 0xff};
    EXPECT_EQ(barrel::load_be_u64(eight), 0x80000000000001ffULL);
    uint8_t four[4] = {};
    barrel::store_be_u32(0xdeadbeef, four);
    EXPECT_EQ(barrel::load_be_u32(four), 0xdeadbeefu);
    barrel::Bytes out{0xaa};
    barrel::append_be_u32(out, 0x00010203);
    EXPECT_EQ(out, (barrel::Bytes{0xaa, 0x00, 0x01, 0x02, 0x03}));
}
