// merkle_root against a naive reference written here from the rule in docs/formats.md: pair
// left to right as keccak256(left ‖ right), promote an odd last node unchanged, one leaf is its own
// root, no leaves give keccak256 of the empty string.

#include <barrel/block/merkle.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace barrel;
using namespace barrel::literals;

namespace {

/// The reference: builds each level as a fresh vector, concatenating the 64 bytes explicitly.
Hash reference_root(std::vector<Hash> level) {
    if (level.empty()) return keccak256(Bytes{});
    while (level.size() > 1) {
        std::vector<Hash> next;
        for (size_t i = 0; i + 1 < level.size(); i += 2) {
            Bytes pair(level[i].bytes.begin(), level[i].bytes.end());
            pair.insert(pair.end(), level[i + 1].bytes.begin(), level[i + 1].bytes.end());
            next.push_back(keccak256(pair));
        }
        if (level.size() % 2 == 1) next.push_back(level.back());
        level = std::move(next);
    }
    return level[0];
}

std::vector<Hash> leaves(size_t n) {
    std::vector<Hash> out;
    for (size_t i = 0; i < n; ++i) {
        const std::string s = "leaf " + std::to_string(i);
        out.push_back(keccak256(as_bytes(s)));
    }
    return out;
}

Hash h(const Hash& a, const Hash& b) { return keccak256(a, b); }

}  // namespace

TEST(block_merkle, empty_is_keccak_of_nothing) {
    const Hash expected =
        *hash_from_hex("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
    EXPECT_EQ(block::merkle_root({}), expected);
    EXPECT_EQ(block::merkle_root({}, true), expected);
    EXPECT_EQ(reference_root({}), expected);
}

TEST(block_merkle, one_leaf_is_itself) {
    const auto l = leaves(1);
    EXPECT_EQ(block::merkle_root(l), l[0]);
    EXPECT_EQ(block::merkle_root(l, true), l[0]);
}

TEST(block_merkle, small_trees_by_hand) {
    const auto l = leaves(5);
    // 2: one pair.
    EXPECT_EQ(block::merkle_root(std::span{l}.first(2)), h(l[0], l[1]));
    // 3: the third leaf is promoted to level 1, then paired.
    EXPECT_EQ(block::merkle_root(std::span{l}.first(3)), h(h(l[0], l[1]), l[2]));
    // 4: a full tree.
    EXPECT_EQ(block::merkle_root(std::span{l}.first(4)), h(h(l[0], l[1]), h(l[2], l[3])));
    // 5: the fifth leaf is promoted twice.
    EXPECT_EQ(block::merkle_root(l), h(h(h(l[0], l[1]), h(l[2], l[3])), l[4]));
    // The pair hash is over the 64 concatenated bytes.
    Bytes concat(l[0].bytes.begin(), l[0].bytes.end());
    concat.insert(concat.end(), l[1].bytes.begin(), l[1].bytes.end());
    EXPECT_EQ(h(l[0], l[1]), keccak256(concat));
}

TEST(block_merkle, order_matters) {
    auto l = leaves(4);
    const Hash a = block::merkle_root(l);
    std::swap(l[1], l[2]);
    EXPECT_NE(block::merkle_root(l), a);
}

TEST(block_merkle, against_reference) {
    const auto all = leaves(2500);
    for (size_t n :
         {0,  1,  2,  3,   4,   5,   6,   7,   8,    9,    15,   16,   17,   31,   33,
          63, 64, 65, 127, 128, 129, 255, 257, 1000, 1023, 1025, 2047, 2048, 2049, 2500}) {
        const std::span<const Hash> l{all.data(), n};
        const Hash expected = reference_root({l.begin(), l.end()});
        EXPECT_EQ(block::merkle_root(l, false), expected) << "serial, n = " << n;
        EXPECT_EQ(block::merkle_root(l, true), expected) << "parallel, n = " << n;
    }
}

// A leaf list with repeats (the same transaction hash twice does not collapse anything).
TEST(block_merkle, repeated_leaves) {
    std::vector<Hash> l(6, leaves(1)[0]);
    EXPECT_EQ(block::merkle_root(l), reference_root(l));
    EXPECT_NE(block::merkle_root(l), block::merkle_root(std::span{l}.first(4)));
}
