#pragma once
/// @file
/// Base64 (RFC 4648's standard alphabet, with padding): how CometBFT's JSON carries bytes (a
/// transaction handed to `broadcast_tx_*`, a block's transactions).

#include <barrel/core/bytes.hpp>

#include <string>
#include <string_view>

namespace barrel {

std::string base64(BytesView bytes);
inline std::string base64(std::string_view bytes) { return base64(as_bytes(bytes)); }

}  // namespace barrel
