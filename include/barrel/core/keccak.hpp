#pragma once
/// @file
/// keccak-256 (the original Keccak padding Ethereum uses, not SHA3-256), via Crypto++.

#include <barrel/core/bytes.hpp>

#include <span>

namespace barrel {

/// keccak256 of data.
Hash keccak256(BytesView data) noexcept;

/// keccak256 of a ‖ b without concatenating first.
Hash keccak256(BytesView a, BytesView b) noexcept;

/// keccak256 of the concatenation of `parts`, fed to one sponge part by part.
Hash keccak256(std::span<const Bytes> parts) noexcept;

/// outputs[i] = keccak256(inputs[i]) for every i below the shorter of the two. Runs of four
/// inputs with the same number of 136-byte blocks share one 4-way AVX2 permutation where the CPU
/// has AVX2 (else, or with `vectorized` false, they are hashed one by one; the results are the
/// same either way).
void keccak256_many(std::span<const BytesView> inputs, std::span<Hash> outputs,
                    bool vectorized = true) noexcept;

/// keccak256 of the empty string, the root of an empty list in barrel's Merkle roots.
inline const Hash& empty_keccak() noexcept {
    static const Hash h = keccak256(BytesView{});
    return h;
}

}  // namespace barrel
