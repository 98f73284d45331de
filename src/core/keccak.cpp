#include <barrel/core/keccak.hpp>

#include <cryptopp/keccak.h>

namespace barrel {

Hash keccak256(BytesView data) noexcept {
    CryptoPP::Keccak_256 k;
    k.Update(data.data(), data.size());
    Hash out;
    k.Final(out.data());
    return out;
}

Hash keccak256(BytesView a, BytesView b) noexcept {
    CryptoPP::Keccak_256 k;
    k.Update(a.data(), a.size());
    k.Update(b.data(), b.size());
    Hash out;
    k.Final(out.data());
    return out;
}

Hash keccak256(std::span<const Bytes> parts) noexcept {
    CryptoPP::Keccak_256 k;
    for (const Bytes& part : parts) k.Update(part.data(), part.size());
    Hash out;
    k.Final(out.data());
    return out;
}

}  // namespace barrel
