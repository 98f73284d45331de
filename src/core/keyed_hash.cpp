#include "core/keyed_hash.hpp"

#include <barrel/core/bytes.hpp>

#include <random>

namespace barrel {

uint64_t process_seed() noexcept {
    static const uint64_t seed = [] {
        std::random_device rd;
        return (uint64_t{rd()} << 32) ^ rd();
    }();
    return seed;
}

size_t FixedBytesHasher::operator()(const FixedBytes<20>& v) const noexcept {
    return keyed_hash(as_chars(v.view()));
}

size_t FixedBytesHasher::operator()(const FixedBytes<32>& v) const noexcept {
    return keyed_hash(as_chars(v.view()));
}

}  // namespace barrel
