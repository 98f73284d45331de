// keccak256 of many independent inputs at once. Crypto++ hashes one message at a time, with one
// scalar Keccak-f[1600] permutation per 136-byte block; the hashes of a block (its Merkle
// levels, receipt hashes, transaction hashes) are thousands of short messages of equal length.
// With AVX2, four of them share one permutation, each 64-bit lane of a 256-bit register holding
// the same state word of a different message. The permutation below is the Keccak reference
// (theta, rho and pi, chi, iota over 24 rounds), written once over those vectors.

#include <barrel/core/keccak.hpp>

#if defined(__x86_64__) || defined(__i386__)
#define BARREL_KECCAK_X4 1
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>

namespace barrel {

namespace {

constexpr size_t kRate = 136;  // keccak-256: 1600 - 2 × 256 bits, in bytes
constexpr size_t kWays = 4;

/// Blocks of the padded message: keccak's padding takes at least one byte.
size_t block_count(size_t length) noexcept { return length / kRate + 1; }

#ifdef BARREL_KECCAK_X4
constexpr size_t kRateWords = kRate / 8;
constexpr uint64_t kRoundConstants[24] = {
    0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808aull, 0x8000000080008000ull,
    0x000000000000808bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
    0x000000000000008aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000aull,
    0x000000008000808bull, 0x800000000000008bull, 0x8000000000008089ull, 0x8000000000008003ull,
    0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800aull, 0x800000008000000aull,
    0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull,
};
// rho offsets and pi destinations, in the order the combined rho-pi walk visits the lanes.
constexpr int kRho[24] = {1,  3,  6,  10, 15, 21, 28, 36, 45, 55, 2,  14,
                          27, 41, 56, 8,  25, 43, 62, 18, 39, 61, 20, 44};
constexpr int kPi[24] = {10, 7,  11, 17, 18, 3, 5,  16, 8,  21, 24, 4,
                         15, 23, 19, 13, 12, 2, 20, 14, 22, 9,  6,  1};

/// Block `b` of `message` after keccak padding (0x01 after the message, 0x80 in the last byte
/// of the last block), as the sponge's little-endian words. One copy of the block's bytes and
/// two padding bytes, instead of a bounds check per word.
void padded_block(BytesView message, size_t b, uint64_t (&words)[kRateWords]) noexcept {
    auto* bytes = reinterpret_cast<uint8_t*>(words);  // x86 is little-endian, as keccak's lanes
    std::memset(bytes, 0, kRate);
    const size_t start = b * kRate;
    if (start < message.size())
        std::memcpy(bytes, message.data() + start, std::min(kRate, message.size() - start));
    const size_t pad = message.size();  // the 0x01 byte
    if (pad >= start && pad < start + kRate) bytes[pad - start] ^= 0x01;
    if (b + 1 == block_count(message.size())) bytes[kRate - 1] ^= 0x80;
}

#define BARREL_AVX2 __attribute__((target("avx2")))

BARREL_AVX2 inline __m256i rotl(__m256i x, int r) {
    return _mm256_or_si256(_mm256_slli_epi64(x, r), _mm256_srli_epi64(x, 64 - r));
}

// Fully unrolled (the loops have constant bounds and the pragmas make GCC unroll them), so
// every state index is a constant and the 25 vectors live in registers and fixed stack slots.
BARREL_AVX2 void keccak_f1600_x4(__m256i st[25]) {
    __m256i a[25];
#pragma GCC unroll 25
    for (int i = 0; i < 25; ++i) a[i] = st[i];
    for (uint64_t rc : kRoundConstants) {
        __m256i c[5];
#pragma GCC unroll 5
        for (int i = 0; i < 5; ++i)
            c[i] = _mm256_xor_si256(
                _mm256_xor_si256(a[i], a[i + 5]),
                _mm256_xor_si256(_mm256_xor_si256(a[i + 10], a[i + 15]), a[i + 20]));
#pragma GCC unroll 5
        for (int i = 0; i < 5; ++i) {
            const __m256i d = _mm256_xor_si256(c[(i + 4) % 5], rotl(c[(i + 1) % 5], 1));
#pragma GCC unroll 5
            for (int j = 0; j < 25; j += 5) a[j + i] = _mm256_xor_si256(a[j + i], d);
        }
        __m256i carry = a[1];
#pragma GCC unroll 24
        for (int i = 0; i < 24; ++i) {
            const __m256i next = a[kPi[i]];
            a[kPi[i]] = rotl(carry, kRho[i]);
            carry = next;
        }
#pragma GCC unroll 5
        for (int j = 0; j < 25; j += 5) {
            __m256i row[5];
#pragma GCC unroll 5
            for (int i = 0; i < 5; ++i) row[i] = a[j + i];
#pragma GCC unroll 5
            for (int i = 0; i < 5; ++i)
                a[j + i] = _mm256_xor_si256(
                    row[i], _mm256_andnot_si256(row[(i + 1) % 5], row[(i + 2) % 5]));
        }
        a[0] = _mm256_xor_si256(a[0], _mm256_set1_epi64x(static_cast<long long>(rc)));
    }
#pragma GCC unroll 25
    for (int i = 0; i < 25; ++i) st[i] = a[i];
}

/// Four messages with the same number of blocks.
BARREL_AVX2 void keccak256_x4(const BytesView* in, Hash* out) {
    __m256i st[25];
    for (auto& lane : st) lane = _mm256_setzero_si256();
    const size_t blocks = block_count(in[0].size());
    for (size_t b = 0; b < blocks; ++b) {
        uint64_t words[kWays][kRateWords];
        for (size_t k = 0; k < kWays; ++k) padded_block(in[k], b, words[k]);
        for (size_t w = 0; w < kRateWords; ++w)
            st[w] = _mm256_xor_si256(st[w], _mm256_set_epi64x(static_cast<long long>(words[3][w]),
                                                              static_cast<long long>(words[2][w]),
                                                              static_cast<long long>(words[1][w]),
                                                              static_cast<long long>(words[0][w])));
        keccak_f1600_x4(st);
    }
    for (size_t w = 0; w < 4; ++w) {
        alignas(32) uint64_t words[kWays];
        _mm256_store_si256(reinterpret_cast<__m256i*>(words), st[w]);
        for (size_t k = 0; k < kWays; ++k) std::memcpy(out[k].data() + w * 8, &words[k], 8);
    }
}

bool has_avx2() noexcept {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}

#else  // not x86: every message goes to Crypto++
bool has_avx2() noexcept { return false; }
void keccak256_x4(const BytesView*, Hash*) {}
#endif

}  // namespace

void keccak256_many(std::span<const BytesView> inputs, std::span<Hash> outputs,
                    bool vectorized) noexcept {
    const size_t n = std::min(inputs.size(), outputs.size());
    size_t i = 0;
    if (vectorized && has_avx2()) {
        for (; i + kWays <= n; i += kWays) {
            const size_t blocks = block_count(inputs[i].size());
            const bool same =
                std::all_of(inputs.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                            inputs.begin() + static_cast<std::ptrdiff_t>(i + kWays),
                            [&](BytesView m) { return block_count(m.size()) == blocks; });
            if (same) {
                keccak256_x4(&inputs[i], &outputs[i]);
            } else {
                for (size_t k = i; k < i + kWays; ++k) outputs[k] = keccak256(inputs[k]);
            }
        }
    }
    for (; i < n; ++i) outputs[i] = keccak256(inputs[i]);
}

}  // namespace barrel
