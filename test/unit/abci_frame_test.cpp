// The ABCI framing (src/abci/frame.hpp): varint-length-prefixed protobuf messages read from a
// stream that arrives in pieces, the bound on a frame's length applied before its payload is
// awaited, and every way a stream can be malformed with its message.

#include "abci/frame.hpp"
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace barrel;
using namespace barrel::abci;

namespace {

pb::Request echo(const std::string& message) {
    pb::Request request;
    request.mutable_echo()->set_message(message);
    return request;
}

pb::Request check_tx(const Bytes& tx) {
    pb::Request request;
    request.mutable_check_tx()->set_tx(tx.data(), tx.size());
    return request;
}

Bytes frame_of(const pb::Request& request) {
    Bytes out;
    append_frame(request, out);
    return out;
}

Bytes varint(uint64_t value) {
    Bytes out;
    append_varint(value, out);
    return out;
}

Bytes concat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
    return out;
}

/// The payloads of every complete frame the reader holds now, failing the test on an error.
std::vector<Bytes> drain(FrameReader& reader) {
    std::vector<Bytes> out;
    for (;;) {
        auto frame = reader.next();
        EXPECT_TRUE(frame.has_value()) << frame.error();
        if (!frame || !frame->has_value()) return out;
        out.emplace_back((*frame)->begin(), (*frame)->end());
    }
}

std::string error_of(FrameReader& reader) {
    auto frame = reader.next();
    if (frame) return frame->has_value() ? "(a frame)" : "(no frame yet)";
    return frame.error();
}

Bytes payload_of(const pb::Request& request) {
    const std::string bytes = request.SerializeAsString();
    return Bytes(bytes.begin(), bytes.end());
}

/// A request whose payload is over 127 bytes, so that its length takes two varint bytes.
pb::Request two_byte_length_request() { return check_tx(Bytes(300, 0xab)); }

}  // namespace

TEST(abci_frame, varint_encoding) {
    EXPECT_EQ(varint(0), (Bytes{0x00}));
    EXPECT_EQ(varint(1), (Bytes{0x01}));
    EXPECT_EQ(varint(127), (Bytes{0x7f}));
    EXPECT_EQ(varint(128), (Bytes{0x80, 0x01}));
    EXPECT_EQ(varint(300), (Bytes{0xac, 0x02}));
    EXPECT_EQ(varint(std::numeric_limits<uint64_t>::max()),
              (Bytes{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(abci_frame, a_frame_is_its_length_then_its_message) {
    const pb::Request request = two_byte_length_request();
    const Bytes payload = payload_of(request);
    ASSERT_GT(payload.size(), 127u);
    EXPECT_EQ(frame_of(request), concat({varint(payload.size()), payload}));

    FrameReader reader{1 << 20};
    reader.feed(frame_of(request));
    const auto frames = drain(reader);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0], payload);
    auto parsed = parse_request(frames[0]);
    ASSERT_TRUE(parsed.has_value()) << parsed.error();
    EXPECT_EQ(parsed->SerializeAsString(), request.SerializeAsString());
    EXPECT_TRUE(reader.between_frames());
}

TEST(abci_frame, every_truncation_yields_nothing_until_the_last_byte) {
    const Bytes whole = frame_of(two_byte_length_request());
    for (size_t cut = 0; cut < whole.size(); ++cut) {
        FrameReader reader{1 << 20};
        reader.feed(BytesView{whole}.first(cut));
        EXPECT_TRUE(drain(reader).empty()) << "cut at " << cut;
        EXPECT_EQ(reader.between_frames(), cut == 0) << "cut at " << cut;
        reader.feed(BytesView{whole}.subspan(cut));
        const auto frames = drain(reader);
        ASSERT_EQ(frames.size(), 1u) << "cut at " << cut;
        EXPECT_EQ(frames[0], payload_of(two_byte_length_request()));
        EXPECT_TRUE(reader.between_frames());
    }
}

TEST(abci_frame, a_frame_split_byte_by_byte) {
    const Bytes whole = concat({frame_of(echo("one")), frame_of(two_byte_length_request())});
    FrameReader reader{1 << 20};
    std::vector<Bytes> frames;
    std::vector<size_t> completed_at;
    for (size_t i = 0; i < whole.size(); ++i) {
        reader.feed(BytesView{whole}.subspan(i, 1));
        for (auto& frame : drain(reader)) {
            frames.push_back(std::move(frame));
            completed_at.push_back(i + 1);
        }
    }
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0], payload_of(echo("one")));
    EXPECT_EQ(frames[1], payload_of(two_byte_length_request()));
    EXPECT_EQ(completed_at[0], frame_of(echo("one")).size());
    EXPECT_EQ(completed_at[1], whole.size());
}

TEST(abci_frame, several_frames_in_one_chunk_and_the_start_of_another) {
    const Bytes fourth = frame_of(echo("four"));
    const Bytes chunk =
        concat({frame_of(echo("one")), frame_of(echo("")), frame_of(two_byte_length_request()),
                Bytes(fourth.begin(), fourth.begin() + 3)});
    FrameReader reader{1 << 20};
    reader.feed(chunk);
    const auto frames = drain(reader);
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0], payload_of(echo("one")));
    EXPECT_EQ(frames[1], payload_of(echo("")));
    EXPECT_EQ(frames[2], payload_of(two_byte_length_request()));
    EXPECT_FALSE(reader.between_frames());
    reader.feed(Bytes(fourth.begin() + 3, fourth.end()));
    const auto rest = drain(reader);
    ASSERT_EQ(rest.size(), 1u);
    EXPECT_EQ(rest[0], payload_of(echo("four")));
}

TEST(abci_frame, an_empty_frame_is_an_empty_payload) {
    FrameReader reader{16};
    reader.feed(Bytes{0x00, 0x00});
    const auto frames = drain(reader);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_TRUE(frames[0].empty());
    EXPECT_TRUE(frames[1].empty());
}

TEST(abci_frame, a_length_of_more_bytes_than_needed_is_read_as_go_reads_it) {
    // Go's binary.ReadUvarint, CometBFT's reader, takes 0x85 0x00 as 5.
    FrameReader reader{16};
    reader.feed(Bytes{0x85, 0x00, 1, 2, 3, 4, 5});
    const auto frames = drain(reader);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0], (Bytes{1, 2, 3, 4, 5}));
}

TEST(abci_frame, a_frame_at_the_limit_is_read) {
    FrameReader reader{300};
    const Bytes payload(300, 7);
    reader.feed(concat({varint(300), payload}));
    const auto frames = drain(reader);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0], payload);
}

TEST(abci_frame, a_length_over_the_limit_is_refused_before_its_payload) {
    FrameReader reader{1000};
    reader.feed(varint(1001));  // no payload: the length alone is the error
    EXPECT_EQ(error_of(reader), "frame of 1001 bytes exceeds the limit of 1000");
    EXPECT_EQ(frame_too_large(1001, 1000), "frame of 1001 bytes exceeds the limit of 1000");
}

TEST(abci_frame, lengths_near_two_to_the_64_are_refused_and_nothing_is_allocated_for_them) {
    for (const uint64_t length :
         {std::numeric_limits<uint64_t>::max(), std::numeric_limits<uint64_t>::max() - 1,
          uint64_t{1} << 63, uint64_t{1} << 32}) {
        FrameReader reader{100u << 20};
        reader.feed(concat({varint(length), Bytes{1, 2, 3}}));
        EXPECT_EQ(error_of(reader), "frame of " + std::to_string(length) +
                                        " bytes exceeds the limit of " +
                                        std::to_string(100u << 20));
        EXPECT_LT(reader.held_bytes(), 64u);
    }
}

TEST(abci_frame, a_length_within_the_limit_reserves_nothing_before_its_bytes_arrive) {
    FrameReader reader{100u << 20};
    reader.feed(varint(100u << 20));
    EXPECT_TRUE(drain(reader).empty());
    EXPECT_LT(reader.held_bytes(), 64u);
}

TEST(abci_frame, a_varint_over_64_bits_is_refused) {
    // Nine bytes of 7 bits, then a 10th byte holding more than the 64th bit.
    FrameReader reader{1 << 20};
    reader.feed(Bytes{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
    EXPECT_EQ(error_of(reader), "(no frame yet)");  // nine bytes: the varint may go on
    reader.feed(Bytes{0x02});
    EXPECT_EQ(error_of(reader), frame_error::kVarintOverflow);
    EXPECT_EQ(std::string{frame_error::kVarintOverflow}, "frame length: a varint over 64 bits");
}

TEST(abci_frame, a_varint_longer_than_10_bytes_is_refused_at_its_10th_byte) {
    FrameReader reader{1 << 20};
    reader.feed(Bytes(10, 0x80));  // ten bytes with the continuation bit: zero, going on
    EXPECT_EQ(error_of(reader), frame_error::kVarintTooLong);
    EXPECT_EQ(std::string{frame_error::kVarintTooLong},
              "frame length: a varint longer than 10 bytes");
}

TEST(abci_frame, an_error_ends_the_stream) {
    FrameReader reader{10};
    reader.feed(concat({varint(11), Bytes(11, 0)}));
    EXPECT_EQ(error_of(reader), "frame of 11 bytes exceeds the limit of 10");
    reader.feed(frame_of(echo("after")));  // ignored: the stream cannot be resynchronised
    EXPECT_EQ(error_of(reader), "frame of 11 bytes exceeds the limit of 10");
}

TEST(abci_frame, the_buffer_is_released_after_a_large_frame) {
    FrameReader reader{8u << 20};
    reader.feed(concat({varint(4u << 20), Bytes(4u << 20, 1)}));
    ASSERT_EQ(drain(reader).size(), 1u);
    EXPECT_GE(reader.held_bytes(), 4u << 20);
    reader.feed(frame_of(echo("small")));
    ASSERT_EQ(drain(reader).size(), 1u);
    EXPECT_LT(reader.held_bytes(), 1u << 20);
}

TEST(abci_frame, a_payload_that_is_not_a_request) {
    // A field number 0 is never valid protobuf; 0xff... is a truncated varint field.
    EXPECT_EQ(parse_request(Bytes{0x00}).error(), "a frame of 1 bytes that is not a Request");
    EXPECT_EQ(parse_request(Bytes{0xff, 0xff, 0xff}).error(),
              "a frame of 3 bytes that is not a Request");
    // Field 2 (flush) as a message of 5 bytes, of which 1 is there.
    EXPECT_EQ(parse_request(Bytes{0x12, 0x05, 0x0a}).error(),
              "a frame of 3 bytes that is not a Request");
}

TEST(abci_frame, a_request_with_no_value) {
    EXPECT_EQ(parse_request(Bytes{}).error(), "a Request with no value");
    // Field 99, a varint: a kind of request this protocol version does not have.
    EXPECT_EQ(parse_request(Bytes{0x98, 0x06, 0x01}).error(), "a Request with no value");
}

TEST(abci_frame, every_request_kind_parses) {
    pb::Request flush;
    flush.mutable_flush();
    pb::Request commit;
    commit.mutable_commit();
    pb::Request finalize;
    finalize.mutable_finalize_block()->set_height(5);
    for (const auto& request : {echo("x"), flush, commit, finalize, check_tx(Bytes{1})}) {
        auto parsed = parse_request(payload_of(request));
        ASSERT_TRUE(parsed.has_value()) << parsed.error();
        EXPECT_EQ(parsed->value_case(), request.value_case());
    }
}
