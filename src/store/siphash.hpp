#pragma once
// SipHash-2-4 (Aumasson and Bernstein): a keyed hash whose outputs an adversary who does not know
// the key cannot steer, so that keys chosen from outside (a transfer's recipient, a DagTransfer
// user name) cannot all be made to fall into one bucket of a hash table (memtable.cpp).

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace barrel::store {

struct SipKey {
    uint64_t k0 = 0;
    uint64_t k1 = 0;
};

namespace detail {

inline void sip_round(uint64_t& v0, uint64_t& v1, uint64_t& v2, uint64_t& v3) {
    v0 += v1;
    v1 = std::rotl(v1, 13);
    v1 ^= v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = std::rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = std::rotl(v1, 17);
    v1 ^= v2;
    v2 = std::rotl(v2, 32);
}

inline uint64_t load_le64(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
    return v;
}

}  // namespace detail

/// SipHash-2-4 of `data` under `key`, as the reference implementation's 64-bit output read as a
/// little-endian integer.
inline uint64_t siphash24(const SipKey& key, std::string_view data) {
    uint64_t v0 = 0x736f6d6570736575ULL ^ key.k0;
    uint64_t v1 = 0x646f72616e646f6dULL ^ key.k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ key.k0;
    uint64_t v3 = 0x7465646279746573ULL ^ key.k1;
    const size_t whole = data.size() & ~size_t{7};
    for (size_t i = 0; i < whole; i += 8) {
        const uint64_t m = detail::load_le64(data.data() + i);
        v3 ^= m;
        detail::sip_round(v0, v1, v2, v3);
        detail::sip_round(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t last = static_cast<uint64_t>(data.size() & 0xff) << 56;
    for (size_t i = whole; i < data.size(); ++i)
        last |= static_cast<uint64_t>(static_cast<unsigned char>(data[i])) << (8 * (i - whole));
    v3 ^= last;
    detail::sip_round(v0, v1, v2, v3);
    detail::sip_round(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) detail::sip_round(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

}  // namespace barrel::store
