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

/// Hash functor for unordered containers. Keys are already uniformly distributed (keccak
/// outputs, addresses derived from them), so their first 8 bytes are a good hash.
struct FixedBytesHasher {
    template <size_t N>
    size_t operator()(const FixedBytes<N>& v) const noexcept {
        static_assert(N >= sizeof(size_t));
        size_t h;
        std::memcpy(&h, v.bytes.data(), sizeof h);
        return h;
    }
};

}  // namespace barrel

template <size_t N>
struct std::hash<barrel::FixedBytes<N>> : barrel::FixedBytesHasher {};
