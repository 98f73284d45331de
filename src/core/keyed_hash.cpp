#include <barrel/core/keyed_hash.hpp>

#include <random>

namespace barrel {

uint64_t process_seed() noexcept {
    static const uint64_t seed = [] {
        std::random_device rd;
        return (uint64_t{rd()} << 32) ^ rd();
    }();
    return seed;
}

}  // namespace barrel
