#pragma once
/// @file
/// Building RLP byte by byte for the decoder tables (tx_decode_test, block_decode_test): each row
/// is a valid encoding with one part replaced, added or removed, so it is spelled from its items.

#include <barrel/core/bytes.hpp>
#include <barrel/rlp/encode.hpp>

#include <vector>

namespace barrel::test {

/// The parts one after another.
inline Bytes cat(const std::vector<Bytes>& parts) {
    Bytes out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

/// An RLP list of already-encoded items.
inline Bytes list(const std::vector<Bytes>& items) {
    Bytes out;
    rlp::encode_list(out, cat(items));
    return out;
}

/// An RLP string.
inline Bytes str(const Bytes& payload) {
    Bytes out;
    rlp::encode(out, BytesView{payload});
    return out;
}

}  // namespace barrel::test
