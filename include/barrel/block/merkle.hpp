#pragma once
/// @file
/// barrel's binary keccak-256 Merkle root (not Ethereum's Patricia trie): cheap, deterministic and
/// parallel. Leaves are paired left to right as keccak256(left ‖ right); an odd last node is
/// promoted unchanged to the next level; one leaf is its own root; no leaves give keccak256("").

#include <barrel/core/bytes.hpp>

#include <span>

namespace barrel::block {

/// With `parallel`, each level's pairs are hashed with tbb::parallel_for (same result).
Hash merkle_root(std::span<const Hash> leaves, bool parallel = false);

}  // namespace barrel::block
