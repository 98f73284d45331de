// libFuzzer target for the strict RLP decoder.
//
// The decoder accepts only canonical encodings, so anything it accepts must re-encode to exactly
// the bytes it consumed; every decoder entry point is run on the input and checked that way, and
// the decoders must agree with each other. Any violation aborts.
//
// Seed corpus: test/fuzz/corpus/rlp/ (scripts/make_fuzz_corpus.py).

#include <barrel/core/hex.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>

#include "fuzz_check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

using namespace barrel;
using fuzz::same;
using fuzz::within;

constexpr const char* kFuzzTarget = "rlp_fuzz";  // names the target in FUZZ_CHECK reports

namespace {

/// What a decoder consumed: the prefix of `input` before `rest`.
BytesView consumed(BytesView input, BytesView rest) noexcept {
    return input.first(input.size() - rest.size());
}

void check_item_views(const rlp::Item& item, BytesView input) {
    if (!item.list) {
        FUZZ_CHECK(within(item.bytes, input));
        return;
    }
    for (const auto& child : item.items) check_item_views(child, input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const BytesView input{data, size};

    // decode_header: never claims more payload than is left; the rest is a suffix of the input;
    // a consumed header is the canonical one.
    BytesView from = input;
    const auto header = rlp::decode_header(from);
    if (header) {
        FUZZ_CHECK(header->payload_length <= from.size());
        FUZZ_CHECK(from.data() + from.size() == input.data() + input.size());
        const BytesView used = consumed(input, from);
        if (input[0] < 0x80) {
            FUZZ_CHECK(used.empty() && !header->list && header->payload_length == 1);
        } else {
            Bytes again;
            rlp::encode_header(again, *header);
            FUZZ_CHECK(same(again, used));
            FUZZ_CHECK(used.size() == rlp::header_length(header->payload_length));
        }
    }

    // decode_string / decode_list: exactly one of them succeeds when the header does.
    from = input;
    const auto string = rlp::decode_string(from);
    const bool string_is_whole_input = string && from.empty();
    if (string) {
        FUZZ_CHECK(header && !header->list);
        FUZZ_CHECK(within(*string, input));
        Bytes again;
        rlp::encode(again, *string);
        FUZZ_CHECK(same(again, consumed(input, from)));
        FUZZ_CHECK(again.size() == rlp::encoded_length(*string));
    }
    from = input;
    const auto list = rlp::decode_list(from);
    if (list) {
        FUZZ_CHECK(header && header->list);
        FUZZ_CHECK(within(*list, input));
        Bytes again;
        rlp::encode_list(again, *list);
        FUZZ_CHECK(same(again, consumed(input, from)));
    }
    FUZZ_CHECK(!(string && list));
    if (header) FUZZ_CHECK(string || list);

    // Integers: canonical, so they re-encode to what was consumed; u64 and u256 agree.
    from = input;
    const auto u64 = rlp::decode_u64(from);
    if (u64) {
        Bytes again;
        rlp::encode(again, *u64);
        FUZZ_CHECK(same(again, consumed(input, from)));
        FUZZ_CHECK(again.size() == rlp::encoded_length(*u64));
    }
    from = input;
    const auto u256v = rlp::decode_u256(from);
    if (u256v) {
        FUZZ_CHECK(string.has_value());
        Bytes again;
        rlp::encode(again, *u256v);
        FUZZ_CHECK(same(again, consumed(input, from)));
        FUZZ_CHECK(again.size() == rlp::encoded_length(*u256v));
    }
    if (u64) FUZZ_CHECK(u256v && *u256v == *u64);
    if (u256v && *u256v <= std::numeric_limits<uint64_t>::max()) FUZZ_CHECK(u64.has_value());

    from = input;
    const auto address = rlp::decode_fixed<20>(from);
    if (address) {
        FUZZ_CHECK(string && string->size() == 20 && same(address->view(), *string));
    } else if (string) {
        FUZZ_CHECK(address.error() == rlp::DecodingError::unexpected_length);
    }

    // decode_item: the whole input as one item; canonical decoding makes the round trip exact.
    const auto item = rlp::decode_item(input);
    if (item) {
        check_item_views(*item, input);
        FUZZ_CHECK(item->list ? (list && list->size() + rlp::header_length(list->size()) == size)
                              : (string && rlp::encoded_length(*string) == size));
        Bytes again;
        rlp::encode(again, *item);
        FUZZ_CHECK(same(again, input));
    } else {
        FUZZ_CHECK(!string_is_whole_input);  // a lone string has no children that could fail
    }
    return 0;
}
