#pragma once
/// @file
/// Byte containers and views, and the fixed-size Hash and Address types.

#include <barrel/core/keyed_hash.hpp>

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

/// Hash functor for unordered containers. Hashes every byte under the process seed: addresses are
/// chosen by senders (0x00…01, 0x00…02, …, or ground offline against an unkeyed hash), so a
/// prefix hash or a public one would let anyone pile keys into one bucket.
struct FixedBytesHasher {
    template <size_t N>
    size_t operator()(const FixedBytes<N>& v) const noexcept {
        return keyed_hash(std::string_view{reinterpret_cast<const char*>(v.bytes.data()), N});
    }
};

}  // namespace barrel

template <size_t N>
struct std::hash<barrel::FixedBytes<N>> : barrel::FixedBytesHasher {};
