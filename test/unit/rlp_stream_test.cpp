// The bounded reader of consecutive RLP items (barrel/rlp/stream.hpp): a two-item stream cut at
// every byte, fed whole and a byte per read; a length over the limit refused before its payload
// is read; a bad prefix; a failing source; errors that stay.

#include <barrel/rlp/stream.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

using namespace barrel;
using rlp::StreamErrorCode;

namespace {

/// A source over `bytes` that hands out at most `per_read` bytes a read, and counts what it
/// handed out.
struct Source {
    Bytes bytes;
    size_t per_read;
    size_t at{0};

    rlp::ReadSome reader() {
        return [this](std::span<uint8_t> out) -> Expected<size_t, int> {
            const size_t n = std::min({out.size(), per_read, bytes.size() - at});
            std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(at), n, out.begin());
            at += n;
            return n;
        };
    }
};

/// "dog" (a short string) then 60 bytes of 0x61 (a long string: b8 3c ...).
const Bytes kFirst{0x83, 'd', 'o', 'g'};
Bytes second() {
    Bytes b{0xb8, 60};
    b.insert(b.end(), 60, 0x61);
    return b;
}

class rlp_stream : public ::testing::TestWithParam<size_t> {};

TEST_P(rlp_stream, a_two_item_stream_cut_at_every_byte) {
    const Bytes two_items = [] {
        Bytes b = kFirst;
        const Bytes s = second();
        b.insert(b.end(), s.begin(), s.end());
        return b;
    }();
    for (size_t cut = 0; cut <= two_items.size(); ++cut) {
        SCOPED_TRACE("cut at " + std::to_string(cut));
        Source source{
            Bytes(two_items.begin(), two_items.begin() + static_cast<std::ptrdiff_t>(cut)),
            GetParam()};
        rlp::StreamReader reader{source.reader(), 100};
        std::vector<Bytes> items;
        std::optional<rlp::StreamError> error;
        while (true) {
            auto item = reader.next();
            if (!item) {
                error = item.error();
                break;
            }
            if (!*item) break;
            items.push_back(std::move(**item));
        }
        if (cut == 0 || cut == kFirst.size() || cut == two_items.size()) {
            ASSERT_FALSE(error) << rlp::describe(*error);  // an item boundary: a clean end
            EXPECT_EQ(items.size(), cut == 0 ? 0u : cut == kFirst.size() ? 1u : 2u);
            if (!items.empty()) {
                EXPECT_EQ(items[0], kFirst);
            }
            if (items.size() == 2) {
                EXPECT_EQ(items[1], second());
            }
            EXPECT_EQ(reader.offset(), cut);
            continue;
        }
        ASSERT_TRUE(error);
        EXPECT_EQ(error->code, StreamErrorCode::truncated);
        const bool in_first = cut < kFirst.size();
        ASSERT_EQ(items.size(), in_first ? 0u : 1u);
        const size_t begin = in_first ? 0 : kFirst.size();
        EXPECT_EQ(error->offset, begin);
        EXPECT_EQ(reader.offset(), begin);
        EXPECT_EQ(error->available, cut - begin);
        // The declared length is known once the prefix is whole (one byte, or b8 and its length).
        const size_t prefix = in_first ? 1 : 2;
        const uint64_t declared = in_first ? kFirst.size() : second().size();
        EXPECT_EQ(error->length, cut - begin >= prefix ? declared : 0u);
        EXPECT_EQ(rlp::describe(*error),
                  "truncated item at byte " + std::to_string(begin) + " (" +
                      std::to_string(cut - begin) + " of " +
                      (cut - begin >= prefix ? std::to_string(declared) : std::string{"?"}) +
                      " bytes)");
    }
}

// Whole in one read, and a byte per read (every buffer boundary inside every item).
INSTANTIATE_TEST_SUITE_P(reads, rlp_stream, ::testing::Values(size_t{1} << 20, size_t{1}));

TEST(rlp_stream_limits, a_length_over_the_limit_is_refused_before_its_payload_is_read) {
    // A string declaring 2^64-1 bytes (with its prefix, more than 2^64), then a few: only the
    // prefix is read.
    Source source{Bytes{0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3}, 1};
    rlp::StreamReader reader{source.reader(), 1000};
    const auto item = reader.next();
    ASSERT_FALSE(item);
    EXPECT_EQ(item.error().code, StreamErrorCode::too_large);
    EXPECT_EQ(item.error().length, UINT64_MAX);
    EXPECT_EQ(item.error().offset, 0u);
    EXPECT_LE(source.at, 9u);
    EXPECT_EQ(rlp::describe(item.error()),
              "item at byte 0 declares 18446744073709551615 bytes, over the limit");
    // A 4-byte length.
    Source four{Bytes{0xbb, 0xff, 0xff, 0xff, 0xff, 1, 2, 3}, 1 << 20};
    rlp::StreamReader four_reader{four.reader(), 1000};
    const auto huge = four_reader.next();
    ASSERT_FALSE(huge);
    EXPECT_EQ(huge.error().code, StreamErrorCode::too_large);
    EXPECT_EQ(huge.error().length, uint64_t{5} + 0xffffffff);
    // One byte over the limit after a good item: the offset is the second item's.
    Bytes two{0x82, 'h', 'i', 0xb8, 60};
    two.insert(two.end(), 60, 0x61);
    Source second_source{two, 1 << 20};
    rlp::StreamReader limited{second_source.reader(), 61};
    ASSERT_TRUE(limited.next().value());
    const auto over = limited.next();
    ASSERT_FALSE(over);
    EXPECT_EQ(over.error().code, StreamErrorCode::too_large);
    EXPECT_EQ(over.error().offset, 3u);
    EXPECT_EQ(over.error().length, 62u);
    // At the limit exactly: read.
    Source exact_source{two, 1 << 20};
    rlp::StreamReader exact{exact_source.reader(), 62};
    ASSERT_TRUE(exact.next().value());
    EXPECT_EQ(exact.next().value()->size(), 62u);
}

TEST(rlp_stream_limits, a_prefix_no_canonical_item_has_is_named) {
    Source source{Bytes{0xb8, 5, 1, 2, 3, 4, 5}, 1 << 20};  // long form for a length below 56
    rlp::StreamReader reader{source.reader(), 1000};
    const auto item = reader.next();
    ASSERT_FALSE(item);
    EXPECT_EQ(item.error().code, StreamErrorCode::bad_prefix);
    EXPECT_EQ(item.error().prefix_error, rlp::DecodingError::non_canonical_size);
    EXPECT_EQ(rlp::describe(item.error()), "bad prefix at byte 0: non_canonical_size");
    // The error stays: nothing past it is read as an item.
    const auto again = reader.next();
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, StreamErrorCode::bad_prefix);
}

TEST(rlp_stream_limits, a_failing_source_is_a_read_error_with_its_errno) {
    int calls = 0;
    rlp::StreamReader reader{[&](std::span<uint8_t> out) -> Expected<size_t, int> {
                                 if (calls++ == 0) {
                                     const Bytes first{0x82, 'h', 'i', 0x83, 'd'};
                                     std::copy(first.begin(), first.end(), out.begin());
                                     return first.size();
                                 }
                                 return unexpected(EIO);
                             },
                             1000};
    const auto first = reader.next();
    ASSERT_TRUE(first && *first);
    EXPECT_EQ(**first, (Bytes{0x82, 'h', 'i'}));
    const auto second_item = reader.next();
    ASSERT_FALSE(second_item);
    EXPECT_EQ(second_item.error().code, StreamErrorCode::read_error);
    EXPECT_EQ(second_item.error().read_errno, EIO);
    EXPECT_EQ(rlp::describe(second_item.error()), "read error at byte 3: Input/output error");
}

TEST(rlp_stream_limits, a_list_and_a_single_byte_are_items_too) {
    Source source{Bytes{0xc2, 0x01, 0x02, 0x05}, 1 << 20};
    rlp::StreamReader reader{source.reader(), 1000};
    EXPECT_EQ(reader.next().value().value(), (Bytes{0xc2, 0x01, 0x02}));
    EXPECT_EQ(reader.next().value().value(), (Bytes{0x05}));
    EXPECT_FALSE(reader.next().value());
}

}  // namespace
