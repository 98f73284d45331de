#include <barrel/rlp/stream.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

namespace barrel::rlp {

namespace {

/// The longest prefix: one byte and up to eight bytes of length.
constexpr size_t kMaxPrefix = 9;
/// What one read of the source asks for: small items share it, a large item's payload past it
/// is read in pieces of this size straight into the item.
constexpr size_t kChunk = size_t{1} << 16;

}  // namespace

std::string describe(const StreamError& e) {
    const std::string at = " at byte " + std::to_string(e.offset);
    switch (e.code) {
        case StreamErrorCode::truncated:
            return "truncated item" + at + " (" + std::to_string(e.available) + " of " +
                   (e.length ? std::to_string(e.length) : std::string{"?"}) + " bytes)";
        case StreamErrorCode::too_large:
            return "item" + at + " declares " + std::to_string(e.length) + " bytes, over the limit";
        case StreamErrorCode::bad_prefix:
            return "bad prefix" + at + ": " + std::string{to_string(e.prefix_error)};
        case StreamErrorCode::read_error:
            return "read error" + at + ": " + std::strerror(e.read_errno);
    }
    return "unknown stream error";
}

StreamReader::StreamReader(ReadSome source, size_t max_item_bytes)
    : m_source{std::move(source)}, m_max_item_bytes{max_item_bytes} {}

void StreamReader::buffer_at_least(size_t want) {
    if (buffered() == 0) {
        m_buffer.clear();
        m_begin = 0;
    } else if (m_begin > 0 && m_buffer.size() + kChunk > m_buffer.capacity()) {
        m_buffer.erase(m_buffer.begin(), m_buffer.begin() + static_cast<std::ptrdiff_t>(m_begin));
        m_begin = 0;
    }
    while (buffered() < want && !m_end && m_errno == 0) {
        const size_t old = m_buffer.size();
        m_buffer.resize(old + kChunk);
        auto got = m_source(std::span<uint8_t>{m_buffer.data() + old, kChunk});
        m_buffer.resize(old + (got ? *got : 0));
        if (!got)
            m_errno = got.error();
        else if (*got == 0)
            m_end = true;
    }
}

void StreamReader::take(Bytes& out, size_t n) {
    const size_t from_buffer = std::min(n, buffered());
    out.insert(out.end(), m_buffer.begin() + static_cast<std::ptrdiff_t>(m_begin),
               m_buffer.begin() + static_cast<std::ptrdiff_t>(m_begin + from_buffer));
    m_begin += from_buffer;
    n -= from_buffer;
    while (n > 0 && !m_end && m_errno == 0) {  // straight into the item, never past it
        const size_t old = out.size();
        const size_t want = std::min(n, kChunk);
        out.resize(old + want);
        auto got = m_source(std::span<uint8_t>{out.data() + old, want});
        out.resize(old + (got ? *got : 0));
        if (!got)
            m_errno = got.error();
        else if (*got == 0)
            m_end = true;
        else
            n -= *got;
    }
}

Expected<std::optional<Bytes>, StreamError> StreamReader::next() {
    if (m_error) return unexpected(*m_error);
    auto fail = [&](StreamError e) {
        e.offset = m_offset;
        // Input that ended early because the source failed is the failure's, not a truncation.
        if (m_errno != 0) {
            e.code = StreamErrorCode::read_error;
            e.read_errno = m_errno;
        }
        m_error = e;
        return unexpected(e);
    };
    buffer_at_least(kMaxPrefix);
    if (buffered() == 0) {
        if (m_errno != 0) return fail({StreamErrorCode::read_error});
        return std::optional<Bytes>{};
    }
    const BytesView prefix{m_buffer.data() + m_begin, std::min(buffered(), kMaxPrefix)};
    const auto length = item_length(prefix);
    if (!length) {
        // A whole prefix "too short" declares more than 2^64 bytes with itself: over any limit.
        if (length.error() == DecodingError::input_too_short && prefix.size() == kMaxPrefix) {
            m_errno = 0;
            return fail({StreamErrorCode::too_large, 0, UINT64_MAX});
        }
        if (length.error() == DecodingError::input_too_short)  // the input ends in the prefix
            return fail({StreamErrorCode::truncated, 0, 0, prefix.size()});
        m_errno = 0;  // the prefix is wrong whatever came after it
        return fail({StreamErrorCode::bad_prefix, 0, 0, 0, length.error()});
    }
    if (*length > m_max_item_bytes) {
        m_errno = 0;
        return fail({StreamErrorCode::too_large, 0, *length});
    }
    Bytes item;
    item.reserve(static_cast<size_t>(*length));  // bounded by the limit, checked above
    take(item, static_cast<size_t>(*length));
    if (item.size() < *length) return fail({StreamErrorCode::truncated, 0, *length, item.size()});
    m_offset += *length;
    return std::optional<Bytes>{std::move(item)};
}

}  // namespace barrel::rlp
