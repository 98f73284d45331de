#pragma once
/// @file
/// keccak-256 (the original Keccak padding Ethereum uses, not SHA3-256), via Crypto++.

#include <barrel/core/bytes.hpp>

namespace barrel {

/// keccak256 of data.
Hash keccak256(BytesView data) noexcept;

/// keccak256 of a ‖ b without concatenating first.
Hash keccak256(BytesView a, BytesView b) noexcept;

/// keccak256 of the empty string, the root of an empty list in barrel's Merkle roots.
inline const Hash& empty_keccak() noexcept {
    static const Hash h = keccak256(BytesView{});
    return h;
}

}  // namespace barrel
