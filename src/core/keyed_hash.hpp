#pragma once
/// @file
/// A fast hash for tables whose keys an attacker picks (recipients, user names, transaction
/// hashes): every byte is mixed with a per-process secret, so keys cannot be ground offline to
/// share one bucket or probe run. Not a cryptographic hash; it only has to keep tables balanced.

#include <cstdint>
#include <cstring>
#include <string_view>

namespace barrel {

/// A random 64-bit value drawn once per process.
uint64_t process_seed() noexcept;

/// 64x64 -> 128-bit multiply, folded: the mixing step of wyhash and absl's hash.
inline uint64_t fold_multiply(uint64_t a, uint64_t b) noexcept {
    __extension__ using u128 = unsigned __int128;  // GCC and Clang; __extension__ for -pedantic
    const u128 p = static_cast<u128>(a) * b;
    return static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64);
}

/// Hash of any byte string under the process seed.
inline uint64_t keyed_hash(std::string_view bytes) noexcept {
    constexpr uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
    uint64_t h = process_seed() ^ (bytes.size() * k0);
    const char* p = bytes.data();
    size_t left = bytes.size();
    for (; left >= 8; left -= 8, p += 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        h = fold_multiply(h ^ w, k1);
    }
    if (left > 0) {
        uint64_t w = 0;
        std::memcpy(&w, p, left);
        h = fold_multiply(h ^ w, k0);
    }
    return fold_multiply(h, k1);
}

}  // namespace barrel
