#include <barrel/core/hex.hpp>
#include <barrel/core/uint256.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string>

using namespace barrel;
using namespace barrel::literals;

namespace {
const u256 kMax = ~u256{0};
const u256 kTwo255 = u256{1} << 255;
const u256 kTwo128 = u256{1} << 128;
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

constexpr std::string_view kTwo256Decimal =
    "115792089237316195423570985008687907853269984665640564039457584007913129639936";
constexpr std::string_view kMaxDecimal =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935";

std::array<uint8_t, 32> be32(const u256& v) {
    std::array<uint8_t, 32> out{};
    store_be32(v, out.data());
    return out;
}

Bytes be_minimal(const u256& v) {
    uint8_t buf[32];
    const size_t n = store_be_minimal(v, buf);
    return Bytes(buf, buf + n);
}

/// Deterministic values with every byte length from 0 to 32 (splitmix64 limbs, masked).
std::vector<u256> sample_values() {
    std::vector<u256> out{0, 1, 0x7f, 0x80, 0xff, 0x100, kU64Max, kTwo128, kTwo255, kMax};
    uint64_t state = 0x9e3779b97f4a7c15;
    auto next = [&] {
        uint64_t z = (state += 0x9e3779b97f4a7c15);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
        z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
        return z ^ (z >> 31);
    };
    for (unsigned bytes = 1; bytes <= 32; ++bytes) {
        u256 v = 0;
        for (int limb = 0; limb < 4; ++limb) v = (v << 64) | next();
        v >>= 256 - 8 * bytes;
        v |= u256{1} << (8 * bytes - 1);  // exactly `bytes` significant bytes
        out.push_back(v);
    }
    return out;
}
}  // namespace

TEST(core_uint256, load_be) {
    EXPECT_EQ(load_be({}), 0);
    EXPECT_EQ(load_be("01"_hex), 1);
    EXPECT_EQ(load_be("0100"_hex), 0x100);
    EXPECT_EQ(load_be("000001"_hex), 1);  // leading zeros are allowed here
    EXPECT_EQ(load_be("ffffffffffffffff"_hex), kU64Max);
    EXPECT_EQ(load_be("010000000000000000"_hex), u256{kU64Max} + 1);
    EXPECT_EQ(load_be(Bytes(32, 0xff)), kMax);
    EXPECT_EQ(load_be(Bytes(32, 0x00)), 0);

    Bytes two255(32, 0);
    two255[0] = 0x80;
    EXPECT_EQ(load_be(two255), kTwo255);

    // Each byte lands in its own position across the limb boundaries.
    const auto counting = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"_hex;
    EXPECT_EQ(load_be(counting),
              u256("0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"));
}

TEST(core_uint256, store_be32) {
    std::array<uint8_t, 32> expected{};
    EXPECT_EQ(be32(0), expected);
    expected[31] = 1;
    EXPECT_EQ(be32(1), expected);
    expected[31] = 0;
    expected[23] = 1;
    EXPECT_EQ(be32(u256{kU64Max} + 1), expected);
    expected.fill(0xff);
    EXPECT_EQ(be32(kMax), expected);
    expected.fill(0);
    expected[0] = 0x80;
    EXPECT_EQ(be32(kTwo255), expected);
}

TEST(core_uint256, store_be_minimal_and_byte_length) {
    EXPECT_EQ(byte_length(0), 0u);
    EXPECT_TRUE(be_minimal(0).empty());
    EXPECT_EQ(byte_length(1), 1u);
    EXPECT_EQ(be_minimal(1), "01"_hex);
    EXPECT_EQ(byte_length(0xff), 1u);
    EXPECT_EQ(byte_length(0x100), 2u);
    EXPECT_EQ(be_minimal(0x100), "0100"_hex);
    EXPECT_EQ(byte_length(kU64Max), 8u);
    EXPECT_EQ(byte_length(u256{kU64Max} + 1), 9u);
    EXPECT_EQ(byte_length(kTwo255 - 1), 32u);
    EXPECT_EQ(byte_length(kTwo255), 32u);
    EXPECT_EQ(byte_length(kMax), 32u);
    EXPECT_EQ(be_minimal(kMax), Bytes(32, 0xff));
}

TEST(core_uint256, round_trips) {
    for (const auto& v : sample_values()) {
        const auto full = be32(v);
        EXPECT_EQ(load_be(full), v) << to_decimal(v);
        const auto minimal = be_minimal(v);
        EXPECT_EQ(minimal.size(), byte_length(v)) << to_decimal(v);
        if (!minimal.empty()) {
            EXPECT_NE(minimal[0], 0) << to_decimal(v);
        }
        EXPECT_EQ(load_be(minimal), v) << to_decimal(v);
        EXPECT_EQ(parse_u256(to_decimal(v)), v) << to_decimal(v);
        EXPECT_EQ(parse_u256(to_hex_quantity(v)), v) << to_decimal(v);
    }
}

TEST(core_uint256, to_hex_quantity) {
    EXPECT_EQ(to_hex_quantity(u256{0}), "0x0");
    EXPECT_EQ(to_hex_quantity(u256{1}), "0x1");
    EXPECT_EQ(to_hex_quantity(u256{0x10}), "0x10");
    EXPECT_EQ(to_hex_quantity(u256{0xabc}), "0xabc");
    EXPECT_EQ(to_hex_quantity(u256{0x100}), "0x100");
    EXPECT_EQ(to_hex_quantity(kMax), "0x" + std::string(64, 'f'));
    EXPECT_EQ(to_hex_quantity(kTwo255), "0x8" + std::string(63, '0'));
    EXPECT_EQ(to_hex_quantity(uint64_t{0}), "0x0");
    EXPECT_EQ(to_hex_quantity(uint64_t{0x5208}), "0x5208");
    EXPECT_EQ(to_hex_quantity(kU64Max), "0xffffffffffffffff");
}

TEST(core_uint256, to_decimal) {
    EXPECT_EQ(to_decimal(0), "0");
    EXPECT_EQ(to_decimal(1000), "1000");
    EXPECT_EQ(to_decimal(kMax), kMaxDecimal);
}

TEST(core_uint256, parse_u256_decimal) {
    EXPECT_EQ(parse_u256("0"), 0);
    EXPECT_EQ(parse_u256("00"), 0);
    EXPECT_EQ(parse_u256("1"), 1);
    EXPECT_EQ(parse_u256("100000"), 100000);
    EXPECT_EQ(parse_u256("18446744073709551616"), u256{kU64Max} + 1);
    EXPECT_EQ(parse_u256(kMaxDecimal), kMax);
}

TEST(core_uint256, parse_u256_hex) {
    EXPECT_EQ(parse_u256("0x0"), 0);
    EXPECT_EQ(parse_u256("0x1"), 1);
    EXPECT_EQ(parse_u256("0xff"), 0xff);
    EXPECT_EQ(parse_u256("0XFF"), 0xff);
    EXPECT_EQ(parse_u256("0xAbCd"), 0xabcd);
    EXPECT_EQ(parse_u256("0x" + std::string(64, 'f')), kMax);
    EXPECT_EQ(parse_u256("0x8" + std::string(63, '0')), kTwo255);
}

TEST(core_uint256, parse_u256_leading_zeros_do_not_count_as_width) {
    // Overflow depends on the value, not on the number of digits.
    EXPECT_EQ(parse_u256("0x" + std::string(100, '0') + "1"), 1);
    EXPECT_EQ(parse_u256(std::string(100, '0') + std::string(kMaxDecimal)), kMax);
}

TEST(core_uint256, parse_u256_overflow) {
    EXPECT_EQ(parse_u256(kTwo256Decimal), std::nullopt);
    EXPECT_EQ(parse_u256("0x1" + std::string(64, '0')), std::nullopt);
    EXPECT_EQ(parse_u256("0x" + std::string(65, 'f')), std::nullopt);
    EXPECT_EQ(parse_u256(std::string(200, '9')), std::nullopt);
}

TEST(core_uint256, parse_u256_rejects_junk) {
    for (std::string_view s : {"", "0x", "0X", "x1", "-1", "+1", " 1", "1 ", "1.0", "1e3", "ff",
                               "0xg", "0x1g", "0x-1", "0x0x1", "12a", "0b101"}) {
        EXPECT_EQ(parse_u256(s), std::nullopt) << '"' << s << '"';
    }
}

TEST(core_uint256, parse_u64) {
    EXPECT_EQ(parse_u64("0"), 0u);
    EXPECT_EQ(parse_u64("0x0"), 0u);
    EXPECT_EQ(parse_u64("21000"), 21000u);
    EXPECT_EQ(parse_u64("0x5208"), 21000u);
    EXPECT_EQ(parse_u64("18446744073709551615"), kU64Max);
    EXPECT_EQ(parse_u64("0xffffffffffffffff"), kU64Max);
    EXPECT_EQ(parse_u64("0xFFFFFFFFFFFFFFFF"), kU64Max);
}

TEST(core_uint256, parse_u64_overflow_and_junk) {
    // Exactly 2^64, decimal and hex.
    EXPECT_EQ(parse_u64("18446744073709551616"), std::nullopt);
    EXPECT_EQ(parse_u64("0x10000000000000000"), std::nullopt);
    EXPECT_EQ(parse_u64(kMaxDecimal), std::nullopt);
    EXPECT_EQ(parse_u64(kTwo256Decimal), std::nullopt);
    for (std::string_view s : {"", "0x", "-1", "abc", "0xz", "1_000"}) {
        EXPECT_EQ(parse_u64(s), std::nullopt) << '"' << s << '"';
    }
}

TEST(core_uint256, checked_add) {
    EXPECT_EQ(checked_add(1, 1), 2);
    EXPECT_EQ(checked_add(0, 0), 0);
    EXPECT_EQ(checked_add(kMax, 0), kMax);
    EXPECT_EQ(checked_add(0, kMax), kMax);
    EXPECT_EQ(checked_add(kMax - 1, 1), kMax);
    EXPECT_EQ(checked_add(kTwo255, kTwo255 - 1), kMax);
    EXPECT_EQ(checked_add(kMax, 1), std::nullopt);
    EXPECT_EQ(checked_add(1, kMax), std::nullopt);
    EXPECT_EQ(checked_add(kTwo255, kTwo255), std::nullopt);
    EXPECT_EQ(checked_add(kMax, kMax), std::nullopt);
    EXPECT_EQ(checked_add(u256{kU64Max}, 1), u256{1} << 64);  // carries across a limb
}

TEST(core_uint256, checked_mul) {
    EXPECT_EQ(checked_mul(0, kMax), 0);
    EXPECT_EQ(checked_mul(kMax, 0), 0);
    EXPECT_EQ(checked_mul(kMax, 1), kMax);
    EXPECT_EQ(checked_mul(1, kMax), kMax);
    EXPECT_EQ(checked_mul(3, 7), 21);
    EXPECT_EQ(checked_mul(kTwo255 / 2, 2), kTwo255);
    EXPECT_EQ(checked_mul(kTwo128 - 1, kTwo128 + 1), kMax);  // 2^256 - 1 exactly
    EXPECT_EQ(checked_mul(kTwo128, kTwo128 - 1), kMax - (kTwo128 - 1));
    // 11 + 22 significant bytes > 32, yet the product 2^255 fits: the wide path decides.
    EXPECT_EQ(checked_mul(u256{1} << 85, u256{1} << 170), kTwo255);

    EXPECT_EQ(checked_mul(kTwo255, 2), std::nullopt);
    EXPECT_EQ(checked_mul(2, kTwo255), std::nullopt);
    EXPECT_EQ(checked_mul(kTwo128, kTwo128), std::nullopt);  // exactly 2^256
    EXPECT_EQ(checked_mul(kMax, 2), std::nullopt);
    EXPECT_EQ(checked_mul(kMax, kMax), std::nullopt);
}

TEST(core_uint256, limbs_round_trip_least_significant_first) {
    const u256 v =
        *parse_u256("0x0102030405060708111213141516171821222324252627283132333435363738");
    const auto limbs = to_limbs(v);
    EXPECT_EQ(limbs[0], 0x3132333435363738ull);
    EXPECT_EQ(limbs[3], 0x0102030405060708ull);
    EXPECT_EQ(from_limbs(limbs), v);
    EXPECT_EQ(to_limbs(u256{0}), (std::array<uint64_t, 4>{}));
    EXPECT_EQ(from_limbs({7, 0, 0, 0}), u256{7});
    const u256 max = ~u256{0};
    EXPECT_EQ(from_limbs(to_limbs(max)), max);
}
