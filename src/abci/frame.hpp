#pragma once
// The framing of the ABCI socket protocol (CometBFT v0.38, libs/protoio): each protobuf Request
// or Response is preceded by its length as an unsigned varint (LEB128, at most 10 bytes).
//
// The reader is fed the bytes of a stream as they arrive, in chunks of any size, and hands out
// each complete frame's payload. A frame's length is checked against the bound as soon as its
// varint is complete, before a byte of the payload is awaited: the reader only ever holds bytes
// the peer has sent, never room for what a length merely announces.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>

#include "abci/application.hpp"
#include <google/protobuf/message_lite.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace barrel::abci {

/// The longest varint of a 64-bit length.
inline constexpr size_t kMaxVarintBytes = 10;

/// Why a stream of frames is malformed (its messages are logged and tested as they are).
namespace frame_error {
/// The 10th byte of a length still has its continuation bit.
inline constexpr const char* kVarintTooLong = "frame length: a varint longer than 10 bytes";
/// The 10th byte of a length holds more than the 64th bit.
inline constexpr const char* kVarintOverflow = "frame length: a varint over 64 bits";
}  // namespace frame_error

/// "frame of N bytes exceeds the limit of M".
std::string frame_too_large(uint64_t length, size_t limit);

class FrameReader {
public:
    /// Frames whose payload is longer than `max_frame_bytes` are an error.
    explicit FrameReader(size_t max_frame_bytes) noexcept : m_max_frame_bytes{max_frame_bytes} {}

    /// Appends the bytes of one read. Invalidates the payloads next() gave.
    void feed(BytesView chunk);

    /// The next complete frame's payload (a view into the reader, valid until the next feed()),
    /// std::nullopt while the bytes fed so far end inside a frame (or there are none), or why the
    /// stream is malformed. After an error every call returns that error: the stream cannot be
    /// resynchronised.
    Expected<std::optional<BytesView>, std::string> next();

    /// No part of a frame is held: the stream ended between frames.
    bool between_frames() const noexcept { return m_start == m_buffer.size(); }

    /// Bytes of memory the reader holds (what the bound on frames is about).
    size_t held_bytes() const noexcept { return m_buffer.capacity(); }

private:
    size_t m_max_frame_bytes;
    Bytes m_buffer;       // bytes fed and not yet handed out, from m_start
    size_t m_start{0};    // the first byte of the next frame
    std::string m_error;  // set once the stream is malformed
};

/// The Request a frame's payload holds: an error if it does not parse, or names no request
/// (empty, or a kind this version of the protocol does not have).
Expected<pb::Request, std::string> parse_request(BytesView payload);

/// Appends `message`'s frame (its length as a varint, then its bytes) to `out`.
void append_frame(const google::protobuf::MessageLite& message, Bytes& out);

/// Appends `value` as an unsigned varint (LEB128).
void append_varint(uint64_t value, Bytes& out);

}  // namespace barrel::abci
