#include <barrel/block/merkle.hpp>
#include <barrel/core/keccak.hpp>

#include "core/parallel.hpp"

#include <vector>

namespace barrel::block {

static_assert(sizeof(Hash) == 32, "a level of Hash values is a contiguous byte array");

Hash merkle_root(std::span<const Hash> leaves, bool parallel) {
    if (leaves.empty()) return empty_keccak();
    if (leaves.size() == 1) return leaves[0];
    // Two buffers, so that a parallel level never writes where it still reads.
    std::vector<Hash> a((leaves.size() + 1) / 2);
    std::vector<Hash> b((a.size() + 1) / 2);
    std::span<const Hash> from = leaves;
    std::vector<Hash>* to = &a;
    while (from.size() > 1) {
        const size_t pairs = from.size() / 2;
        const size_t next_size = (from.size() + 1) / 2;
        Hash* out = to->data();
        // Sibling pairs are adjacent 64-byte runs of the level, hashed four at a time.
        const auto* level = reinterpret_cast<const uint8_t*>(from.data());
        for_each_group(pairs, 4, parallel && pairs >= 64, [&](size_t begin, size_t end) {
            BytesView pair[4];
            for (size_t i = begin; i < end; ++i) pair[i - begin] = BytesView{level + 64 * i, 64};
            keccak256_many(std::span{pair, end - begin}, std::span{out + begin, end - begin});
        });
        if (from.size() % 2 != 0) out[pairs] = from.back();  // odd node promoted
        from = std::span<const Hash>{out, next_size};
        to = to == &a ? &b : &a;
    }
    return from[0];
}

}  // namespace barrel::block
