#pragma once
/// @file
/// Byte containers and views, and the fixed-size Hash and Address types.

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace barrel {

using Bytes = std::vector<uint8_t>;
/// A read-only view of bytes someone else owns. Stages pass these instead of copies.
using BytesView = std::span<const uint8_t>;

/// Views the characters of a string as bytes.
inline BytesView as_bytes(std::string_view s) noexcept {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

/// Views bytes as characters (for APIs that take strings of bytes, such as RocksDB's).
inline std::string_view as_chars(BytesView b) noexcept {
    return {reinterpret_cast<const char*>(b.data()), b.size()};
}

/// Big-endian (network order) loads and stores of fixed-width integers, for the wire formats'
/// length and offset fields. u256's are in uint256.hpp (load_be, store_be32).
inline constexpr uint32_t load_be_u32(const uint8_t* p) noexcept {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}
inline constexpr uint64_t load_be_u64(const uint8_t* p) noexcept {
    return (uint64_t{load_be_u32(p)} << 32) | load_be_u32(p + 4);
}
inline constexpr void store_be_u32(uint32_t v, uint8_t* p) noexcept {
    for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}
/// Appends the four big-endian bytes of `v`.
inline void append_be_u32(Bytes& out, uint32_t v) {
    uint8_t be[4];
    store_be_u32(v, be);
    out.insert(out.end(), be, be + 4);
}

/// A fixed-size byte string held by value (hashes, addresses).
template <size_t N>
struct FixedBytes {
    std::array<uint8_t, N> bytes{};

    static constexpr size_t size() noexcept { return N; }
    constexpr uint8_t* data() noexcept { return bytes.data(); }
    constexpr const uint8_t* data() const noexcept { return bytes.data(); }
    constexpr BytesView view() const noexcept { return {bytes.data(), N}; }
    constexpr operator BytesView() const noexcept { return view(); }
    constexpr uint8_t& operator[](size_t i) noexcept { return bytes[i]; }
    constexpr uint8_t operator[](size_t i) const noexcept { return bytes[i]; }

    /// Copies exactly N bytes; the caller guarantees the view is N bytes long.
    static FixedBytes from_view(BytesView v) noexcept {
        FixedBytes out;
        std::memcpy(out.bytes.data(), v.data(), N);
        return out;
    }

    constexpr bool is_zero() const noexcept {
        for (auto b : bytes)
            if (b != 0) return false;
        return true;
    }

    friend constexpr bool operator==(const FixedBytes&, const FixedBytes&) = default;
    friend constexpr auto operator<=>(const FixedBytes&, const FixedBytes&) = default;
};

using Hash = FixedBytes<32>;
using Address = FixedBytes<20>;

/// Hash functor for unordered containers of hashes and addresses. Hashes every byte under a
/// per-process secret (src/core/keyed_hash.hpp): addresses are chosen by senders (0x00…01,
/// 0x00…02, …, or ground offline against an unkeyed hash), so a prefix hash or a public one would
/// let anyone pile keys into one bucket.
struct FixedBytesHasher {
    size_t operator()(const FixedBytes<20>& v) const noexcept;
    size_t operator()(const FixedBytes<32>& v) const noexcept;
};

}  // namespace barrel

template <size_t N>
struct std::hash<barrel::FixedBytes<N>> : barrel::FixedBytesHasher {};
