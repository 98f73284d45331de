#include "abci/frame.hpp"

#include <climits>
#include <utility>

namespace barrel::abci {

namespace {

/// A connection's buffer keeps at most this much memory between frames: a large frame (a
/// proposal) is rare, and four connections each holding the largest one seen is waste.
constexpr size_t kKeptCapacity = 1 << 20;

}  // namespace

std::string frame_too_large(uint64_t length, size_t limit) {
    return "frame of " + std::to_string(length) + " bytes exceeds the limit of " +
           std::to_string(limit);
}

void FrameReader::feed(BytesView chunk) {
    if (!m_error.empty()) return;
    if (m_start == m_buffer.size()) {
        m_buffer.clear();
        if (m_buffer.capacity() > kKeptCapacity) Bytes{}.swap(m_buffer);
    } else if (m_start > 0) {
        // Only the start of one frame is left: moved once, after which it grows in place.
        m_buffer.erase(m_buffer.begin(), m_buffer.begin() + static_cast<ptrdiff_t>(m_start));
    }
    m_start = 0;
    m_buffer.insert(m_buffer.end(), chunk.begin(), chunk.end());
}

Expected<std::optional<BytesView>, std::string> FrameReader::next() {
    if (!m_error.empty()) return unexpected(m_error);
    const uint8_t* bytes = m_buffer.data() + m_start;
    const size_t available = m_buffer.size() - m_start;

    uint64_t length = 0;
    size_t header = 0;
    for (;;) {
        if (header == available) return std::optional<BytesView>{};
        const uint8_t byte = bytes[header];
        // Go's binary.ReadUvarint, which CometBFT reads with: the 10th byte may only hold the
        // 64th bit, and ends the varint.
        if (header == kMaxVarintBytes - 1 && byte > 1) {
            m_error = byte & 0x80 ? frame_error::kVarintTooLong : frame_error::kVarintOverflow;
            return unexpected(m_error);
        }
        length |= uint64_t{byte & 0x7fu} << (7 * header);
        ++header;
        if ((byte & 0x80) == 0) break;
    }
    if (length > m_max_frame_bytes) {
        m_error = frame_too_large(length, m_max_frame_bytes);
        return unexpected(m_error);
    }
    if (available - header < length) return std::optional<BytesView>{};
    m_start += header + length;
    return std::optional<BytesView>{BytesView{bytes + header, static_cast<size_t>(length)}};
}

Expected<pb::Request, std::string> parse_request(BytesView payload) {
    pb::Request request;
    if (payload.size() > INT_MAX ||
        !request.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
        return unexpected("a frame of " + std::to_string(payload.size()) +
                          " bytes that is not a Request");
    }
    if (request.value_case() == pb::Request::VALUE_NOT_SET) {
        return unexpected(std::string{"a Request with no value"});
    }
    return request;
}

void append_varint(uint64_t value, Bytes& out) {
    while (value >= 0x80) {
        out.push_back(static_cast<uint8_t>(value | 0x80));
        value >>= 7;
    }
    out.push_back(static_cast<uint8_t>(value));
}

void append_frame(const google::protobuf::MessageLite& message, Bytes& out) {
    const size_t size = message.ByteSizeLong();
    append_varint(size, out);
    const size_t at = out.size();
    out.resize(at + size);
    message.SerializeWithCachedSizesToArray(out.data() + at);
}

}  // namespace barrel::abci
