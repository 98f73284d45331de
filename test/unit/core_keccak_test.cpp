#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace barrel;

namespace {
Hash hash(std::string_view hex) {
    auto h = hash_from_hex(hex);
    if (!h) std::abort();
    return *h;
}

Bytes counting_bytes(size_t n) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i);
    return b;
}
}  // namespace

// Expected values were computed with an independent Python Keccak (original 0x01 padding) whose
// permutation reproduces hashlib.sha3_256 for the same inputs.

TEST(core_keccak, empty) {
    const auto expected = hash("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
    EXPECT_EQ(keccak256(BytesView{}), expected);
    EXPECT_EQ(empty_keccak(), expected);
    // Not SHA3-256, which pads differently.
    EXPECT_NE(expected, hash("a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"));
}

TEST(core_keccak, abc) {
    EXPECT_EQ(keccak256(as_bytes("abc")),
              hash("4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"));
}

TEST(core_keccak, two_hundred_bytes) {
    // Longer than the 136-byte rate: two absorb blocks.
    EXPECT_EQ(keccak256(counting_bytes(200)),
              hash("bfb0aa97863e797943cf7c33bb7e880bb4543f3d2703c0923c6901c2af57b890"));
    EXPECT_EQ(keccak256(Bytes(200, 0xa3)),
              hash("3a57666b048777f2c953dc4456f45a2588e1cb6f2da760122d530ac2ce607d4a"));
}

TEST(core_keccak, rate_boundary) {
    EXPECT_EQ(keccak256(counting_bytes(135)),
              hash("cbdfd9dee5faad3818d6b06f95a219fd290b0e1706f6a82e5a595b9ce9faca62"));
    EXPECT_EQ(keccak256(counting_bytes(136)),
              hash("7ce759f1ab7f9ce437719970c26b0a66ff11fe3e38e17df89cf5d29c7d7f807e"));
}

TEST(core_keccak, two_part_equals_concatenation) {
    const Bytes data = counting_bytes(200);
    const BytesView all{data};
    for (size_t split = 0; split <= data.size(); ++split) {
        EXPECT_EQ(keccak256(all.first(split), all.subspan(split)), keccak256(all)) << split;
    }
    EXPECT_EQ(keccak256(BytesView{}, BytesView{}), empty_keccak());
    EXPECT_EQ(keccak256(as_bytes("a"), as_bytes("bc")), keccak256(as_bytes("abc")));
}

/// keccak256_many against keccak256 one by one: every length from 0 to 420 bytes (one to four
/// 136-byte blocks, each rate boundary on both sides), in runs of four whose lengths are equal,
/// differ only within a block count, or straddle block counts (those fall back), and counts
/// that leave a remainder after the runs of four.
TEST(core_keccak, many_equals_one_by_one) {
    std::mt19937_64 rng{42};
    std::vector<Bytes> messages;
    for (size_t len = 0; len <= 420; ++len) {
        for (size_t copy = 0; copy < 4; ++copy) {  // four of each length: runs of equal lengths
            Bytes m(len);
            for (auto& b : m) b = static_cast<uint8_t>(rng());
            messages.push_back(std::move(m));
        }
    }
    for (size_t k = 0; k < 500; ++k) {  // random lengths: runs of mixed lengths
        Bytes m(rng() % 300);
        for (auto& b : m) b = static_cast<uint8_t>(rng());
        messages.push_back(std::move(m));
    }
    std::vector<BytesView> views(messages.begin(), messages.end());
    std::vector<Hash> expected;
    for (const auto& v : views) expected.push_back(keccak256(v));
    for (const size_t count : {views.size(), views.size() - 1, size_t{3}, size_t{1}, size_t{0}}) {
        for (const bool vectorized : {true, false}) {
            std::vector<Hash> out(count);
            keccak256_many(std::span{views}.first(count), out, vectorized);
            for (size_t i = 0; i < count; ++i)
                ASSERT_EQ(out[i], expected[i])
                    << "message " << i << ", " << views[i].size() << " bytes, count " << count
                    << (vectorized ? ", vectorized" : "");
        }
    }
}

/// The known answers above through the 4-way permutation itself: each run of four has one block
/// count (1 block: 135 bytes and empty; 2 blocks: 136 and 200 bytes), so none falls back.
TEST(core_keccak, many_known_answers_through_the_vector_path) {
#if defined(__x86_64__) || defined(__i386__)
    if (!__builtin_cpu_supports("avx2"))
        GTEST_SKIP() << "no AVX2 here: keccak256_many hashes one by one";
#else
    GTEST_SKIP() << "not x86: keccak256_many hashes one by one";
#endif
    const Bytes a = counting_bytes(135), b = counting_bytes(136), c(200, 0xa3);
    const BytesView known[8] = {a, BytesView{}, a, BytesView{}, b, c, b, c};
    Hash out[8];
    keccak256_many(known, out);
    const Hash ha = hash("cbdfd9dee5faad3818d6b06f95a219fd290b0e1706f6a82e5a595b9ce9faca62");
    const Hash hb = hash("7ce759f1ab7f9ce437719970c26b0a66ff11fe3e38e17df89cf5d29c7d7f807e");
    const Hash hc = hash("3a57666b048777f2c953dc4456f45a2588e1cb6f2da760122d530ac2ce607d4a");
    const Hash expected[8] = {ha, empty_keccak(), ha, empty_keccak(), hb, hc, hb, hc};
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(out[i], expected[i]) << "input " << i;
}
