#include <barrel/block/merkle.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/core/parallel.hpp>

#include <vector>

namespace barrel::block {

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
        for_each_index(pairs, parallel && pairs >= 64,
                       [&](size_t i) { out[i] = keccak256(from[2 * i], from[2 * i + 1]); });
        if (from.size() % 2 != 0) out[pairs] = from.back();  // odd node promoted
        from = std::span<const Hash>{out, next_size};
        to = to == &a ? &b : &a;
    }
    return from[0];
}

}  // namespace barrel::block
