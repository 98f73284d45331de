#pragma once
/// @file
/// Consecutive RLP items read from a byte stream (a file, a pipe, standard input), one at a time
/// and bounded: each item's length comes from its prefix alone (item_length, at most 9 bytes) and
/// is checked against a limit before anything of its payload is allocated or read, so what a
/// reader holds is one item of at most the limit, whatever the stream is. The journal of the pool
/// is such a stream (docs/formats.md).

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/rlp/decode.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>

namespace barrel::rlp {

/// Reads up to out.size() bytes into `out`: how many (0 only at the end of the input), or errno.
using ReadSome = std::function<Expected<size_t, int>(std::span<uint8_t> out)>;

enum class StreamErrorCode : uint8_t {
    truncated,   ///< the input ends inside an item (its prefix or its payload)
    too_large,   ///< the prefix declares more than the limit: nothing of the payload was read
    bad_prefix,  ///< a prefix no canonical item has (leading_zero_in_length, non_canonical_size)
    read_error,  ///< the source failed (read_errno)
};

struct StreamError {
    StreamErrorCode code;
    uint64_t offset{0};     ///< where the item begins, in bytes from the stream's start
    uint64_t length{0};     ///< the length its prefix declares (too_large: 2^64-1 if more)
    uint64_t available{0};  ///< the bytes of it the input holds (truncated)
    DecodingError prefix_error{DecodingError::input_too_short};  ///< bad_prefix's reason
    int read_errno{0};                                           ///< read_error's errno
};

/// One line naming the error and where it is: "truncated item at byte 42 (10 of 20 bytes)",
/// "item at byte 0 declares 5000 bytes, over the limit", "bad prefix at byte 7:
/// non_canonical_size", "read error at byte 9: Input/output error".
std::string describe(const StreamError& e);

/// The items of a stream, in order, each whole (prefix and payload), read through a buffer so a
/// stream of small items costs few reads. After an error the reader stays at it: next() returns
/// the same error again.
class StreamReader {
public:
    StreamReader(ReadSome source, size_t max_item_bytes);

    /// The next item, nothing at the end of the input (at an item boundary), or why not.
    Expected<std::optional<Bytes>, StreamError> next();

    /// Bytes of the stream consumed by the items returned so far.
    uint64_t offset() const noexcept { return m_offset; }

private:
    /// Buffers at least `want` bytes, fewer at the end of the input or after a read error.
    void buffer_at_least(size_t want);
    /// Moves up to `n` more bytes of the input (the buffer's first) onto the end of `out`.
    void take(Bytes& out, size_t n);
    size_t buffered() const noexcept { return m_buffer.size() - m_begin; }

    ReadSome m_source;
    size_t m_max_item_bytes;
    Bytes m_buffer;
    size_t m_begin{0};
    uint64_t m_offset{0};
    bool m_end{false};
    int m_errno{0};  ///< the source's error: nothing more is read from it
    std::optional<StreamError> m_error;
};

}  // namespace barrel::rlp
