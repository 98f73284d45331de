// Stage 1 (decode_block, decode_tx_list, split_block): one table row per way a wire block can be
// malformed, each asserting the exact BlockError (code, transaction index and the nested
// header/RLP/transaction error), then round trips, the plain-list alternative, serial against
// parallel, and walking a chain file.
//
// The rows are built from a valid block by replacing one part, so each row differs from a block
// that decodes in exactly the way its name says (block_decode.table_bases_decode checks that).

#include <barrel/block/block.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>

#include "block_fixtures.hpp"
#include "rlp_build.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace barrel;
using namespace barrel::literals;
using block::BlockError;
using block::BlockErrorCode;
using block::HeaderField;
using RlpError = rlp::DecodingError;
using barrel::test::cat;
using barrel::test::list;
using barrel::test::str;

// ---- allocation probe ----------------------------------------------------------------------
// A count of 0xffffffff must be rejected before anything is allocated in proportion to it. The
// replaced global operator new records the largest single request while a probe is active. It
// is malloc/free underneath; GCC flags free() on memory from a (replaceable) operator new when
// it inlines the two together in this file, which is exactly what a replacement does.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
namespace {
std::atomic<bool> g_probe_active{false};
std::atomic<size_t> g_probe_largest{0};

struct AllocationProbe {
    AllocationProbe() {
        g_probe_largest = 0;
        g_probe_active = true;
    }
    ~AllocationProbe() { g_probe_active = false; }
    size_t largest() const { return g_probe_largest.load(); }
};
}  // namespace

void* operator new(std::size_t n) {
    if (g_probe_active.load(std::memory_order_relaxed)) {
        size_t cur = g_probe_largest.load(std::memory_order_relaxed);
        while (n > cur &&
               !g_probe_largest.compare_exchange_weak(cur, n, std::memory_order_relaxed)) {
        }
    }
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc{};
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too: a sanitizer's runtime supplies its own of every form not replaced here,
// and memory from its nothrow new (simdjson's parser takes it so) would come back through the
// delete above, a mismatch to AddressSanitizer.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

// ---- building blocks byte by byte (and rlp_build.hpp) ---------------------------------------

Bytes be32(uint32_t v) {
    return {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
            static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
}

/// The payload of an offset-indexed list with the given count and offsets, then the area.
Bytes index_payload(uint32_t count, const std::vector<uint32_t>& offsets, const Bytes& area) {
    Bytes out = be32(count);
    for (uint32_t o : offsets) {
        const Bytes b = be32(o);
        out.insert(out.end(), b.begin(), b.end());
    }
    out.insert(out.end(), area.begin(), area.end());
    return out;
}

/// The raw encoded items of an RLP list (each item with its own header).
std::vector<Bytes> raw_items(BytesView list_encoding) {
    auto payload = rlp::decode_list(list_encoding);
    if (!payload) std::abort();
    BytesView rest = *payload;
    std::vector<Bytes> items;
    while (!rest.empty()) {
        const BytesView start = rest;
        auto h = rlp::decode_header(rest);
        if (!h) std::abort();
        rest = rest.subspan(h->payload_length);
        items.emplace_back(start.begin(),
                           start.begin() + static_cast<ptrdiff_t>(start.size() - rest.size()));
    }
    return items;
}

/// A transaction encoding with field item `field` replaced (legacy list or typed envelope).
Bytes tx_with(const Bytes& encoding, size_t field, Bytes item) {
    const bool typed = encoding[0] < 0xc0;
    auto items = raw_items(BytesView{encoding}.subspan(typed ? 1 : 0));
    items.at(field) = std::move(item);
    Bytes out;
    if (typed) out.push_back(encoding[0]);
    const Bytes l = list(items);
    out.insert(out.end(), l.begin(), l.end());
    return out;
}

/// The four fixture transactions: legacy pre-155, legacy 155, type 1, type 2 (chain id 1).
const test::TxSet& base_txs() {
    static const test::TxSet s = test::mixed_txs(4);
    return s;
}
const Bytes& base_tx(size_t i) { return base_txs().encodings.at(i); }

const block::Header& base_header() {
    static const block::Header h = test::sample_header();
    return h;
}

std::vector<Bytes> header_items() { return raw_items(block::encode(base_header())); }

Bytes header_with(size_t field, Bytes item) {
    auto items = header_items();
    items.at(field) = std::move(item);
    return list(items);
}

/// The txs item of an offset-indexed list of these encodings (built with the library encoder).
Bytes indexed_item(const std::vector<Bytes>& txs) {
    std::vector<BytesView> views(txs.begin(), txs.end());
    Bytes payload;
    block::encode_indexed_txs(payload, views);
    return str(payload);
}

Bytes block_with_txs_item(const Bytes& txs_item) {
    return list({block::encode(base_header()), txs_item});
}
Bytes block_with_header(const Bytes& header) {
    return list({header, indexed_item(base_txs().encodings)});
}
/// A block whose transaction slots hold exactly these bytes (offsets follow the slot sizes).
Bytes block_with_slots(const std::vector<Bytes>& slots) {
    return block_with_txs_item(indexed_item(slots));
}

const Bytes& valid_block() {
    static const Bytes b = block::encode_block(base_header(), base_txs().views());
    return b;
}

/// Area of the four base transactions and their cumulative sizes.
Bytes base_area() { return cat(base_txs().encodings); }
std::vector<uint32_t> base_offsets() {
    std::vector<uint32_t> o{0};
    for (const auto& t : base_txs().encodings)
        o.push_back(o.back() + static_cast<uint32_t>(t.size()));
    return o;
}

// ---- expected errors -----------------------------------------------------------------------

BlockError err(BlockErrorCode code, std::optional<size_t> index = std::nullopt) {
    BlockError e;
    e.code = code;
    e.tx_index = index;
    return e;
}
BlockError rlp_err(BlockErrorCode code, RlpError r) {
    BlockError e = err(code);
    e.rlp = r;
    return e;
}
BlockError header_err(HeaderField f, RlpError r) {
    BlockError e = rlp_err(BlockErrorCode::malformed_header, r);
    e.header_field = f;
    return e;
}
BlockError tx_err(size_t index, tx::TxError t) {
    BlockError e = err(BlockErrorCode::malformed_tx, index);
    e.tx = t;
    return e;
}
tx::TxError tx_rlp(tx::Field f, RlpError r) { return {tx::TxErrorCode::malformed_rlp, f, r}; }

void expect_error(const Expected<block::Block, BlockError>& got, const BlockError& want,
                  const char* mode) {
    ASSERT_FALSE(got) << mode << ": decoded, expected " << describe(want);
    EXPECT_EQ(describe(got.error()), describe(want)) << mode;
    EXPECT_TRUE(got.error() == want)
        << mode << ": fields differ beyond describe(): got " << describe(got.error());
}

// Header field positions.
enum HeaderPos : size_t {
    h_parent_hash,
    h_number,
    h_timestamp,
    h_coinbase,
    h_gas_limit,
    h_gas_used,
    h_txs_root,
    h_receipts_root,
    h_state_root,
    h_chain_id,
};

struct Row {
    std::string name;
    Bytes input;
    BlockError expected;
};

std::vector<Row> rows() {
    std::vector<Row> t;
    const auto add = [&](std::string name, Bytes input, BlockError expected) {
        t.push_back({std::move(name), std::move(input), expected});
    };
    const Bytes header = block::encode(base_header());
    const Bytes txs = indexed_item(base_txs().encodings);
    const Bytes area = base_area();
    const std::vector<uint32_t> off = base_offsets();  // off[4] == area.size()
    const auto n_area = static_cast<uint32_t>(area.size());

    // --- the outer [header, txs] list ---------------------------------------------------------
    add("empty_input", {}, rlp_err(BlockErrorCode::malformed_block, RlpError::input_too_short));
    add("outer_is_string", str(cat({header, txs})),
        rlp_err(BlockErrorCode::malformed_block, RlpError::unexpected_string));
    add("outer_is_single_byte", "05"_hex,
        rlp_err(BlockErrorCode::malformed_block, RlpError::unexpected_string));
    {
        Bytes cut = valid_block();
        cut.pop_back();
        add("outer_truncated", cut,
            rlp_err(BlockErrorCode::malformed_block, RlpError::input_too_short));
    }
    add("trailing_byte_after_block", cat({valid_block(), "00"_hex}),
        rlp_err(BlockErrorCode::malformed_block, RlpError::trailing_bytes));
    add("two_blocks", cat({valid_block(), valid_block()}),
        rlp_err(BlockErrorCode::malformed_block, RlpError::trailing_bytes));
    add("empty_outer_list", "c0"_hex, header_err(HeaderField::list, RlpError::input_too_short));
    add("missing_txs_item", list({header}),
        rlp_err(BlockErrorCode::malformed_block, RlpError::input_too_short));
    add("extra_item_after_txs", list({header, txs, "80"_hex}),
        rlp_err(BlockErrorCode::malformed_block, RlpError::trailing_bytes));
    // The txs string announces more bytes than the outer list holds.
    add("txs_string_past_end", list({header, "b8ff0000"_hex}),
        rlp_err(BlockErrorCode::malformed_block, RlpError::input_too_short));

    // --- the header ---------------------------------------------------------------------------
    add("header_is_string", block_with_header(str(Bytes(32, 0x11))),
        header_err(HeaderField::list, RlpError::unexpected_string));
    {
        auto items = header_items();
        items.pop_back();
        add("header_9_fields", block_with_header(list(items)),
            header_err(HeaderField::chain_id, RlpError::input_too_short));
        items.resize(3);
        add("header_3_fields", block_with_header(list(items)),
            header_err(HeaderField::coinbase, RlpError::input_too_short));
    }
    add("header_empty_list", block_with_header("c0"_hex),
        header_err(HeaderField::parent_hash, RlpError::input_too_short));
    {
        auto items = header_items();
        items.push_back("01"_hex);
        add("header_11_fields", block_with_header(list(items)),
            header_err(HeaderField::list, RlpError::trailing_bytes));
    }
    add("parent_hash_31_bytes", block_with_header(header_with(h_parent_hash, str(Bytes(31, 0x11)))),
        header_err(HeaderField::parent_hash, RlpError::unexpected_length));
    add("parent_hash_33_bytes", block_with_header(header_with(h_parent_hash, str(Bytes(33, 0x11)))),
        header_err(HeaderField::parent_hash, RlpError::unexpected_length));
    add("parent_hash_list",
        block_with_header(header_with(h_parent_hash, list({str(Bytes(32, 0x11))}))),
        header_err(HeaderField::parent_hash, RlpError::unexpected_list));
    add("number_leading_zero", block_with_header(header_with(h_number, "820007"_hex)),
        header_err(HeaderField::number, RlpError::leading_zero));
    add("number_zero_byte", block_with_header(header_with(h_number, "00"_hex)),
        header_err(HeaderField::number, RlpError::leading_zero));
    add("number_non_canonical_single_byte", block_with_header(header_with(h_number, "8107"_hex)),
        header_err(HeaderField::number, RlpError::non_canonical_single_byte));
    add("timestamp_list", block_with_header(header_with(h_timestamp, "c0"_hex)),
        header_err(HeaderField::timestamp, RlpError::unexpected_list));
    add("coinbase_21_bytes", block_with_header(header_with(h_coinbase, str(Bytes(21, 0xd0)))),
        header_err(HeaderField::coinbase, RlpError::unexpected_length));
    add("coinbase_19_bytes", block_with_header(header_with(h_coinbase, str(Bytes(19, 0xd0)))),
        header_err(HeaderField::coinbase, RlpError::unexpected_length));
    add("coinbase_empty", block_with_header(header_with(h_coinbase, "80"_hex)),
        header_err(HeaderField::coinbase, RlpError::unexpected_length));
    add("gas_limit_overflow_9_bytes",
        block_with_header(header_with(h_gas_limit, "89010000000000000000"_hex)),
        header_err(HeaderField::gas_limit, RlpError::overflow));
    add("gas_used_leading_zero", block_with_header(header_with(h_gas_used, "82005208"_hex)),
        header_err(HeaderField::gas_used, RlpError::leading_zero));
    add("txs_root_31_bytes", block_with_header(header_with(h_txs_root, str(Bytes(31, 0x40)))),
        header_err(HeaderField::txs_root, RlpError::unexpected_length));
    add("receipts_root_33_bytes",
        block_with_header(header_with(h_receipts_root, str(Bytes(33, 0x70)))),
        header_err(HeaderField::receipts_root, RlpError::unexpected_length));
    add("state_root_empty", block_with_header(header_with(h_state_root, "80"_hex)),
        header_err(HeaderField::state_root, RlpError::unexpected_length));
    add("chain_id_overflow_9_bytes",
        block_with_header(header_with(h_chain_id, "89010000000000000000"_hex)),
        header_err(HeaderField::chain_id, RlpError::overflow));
    add("chain_id_leading_zero", block_with_header(header_with(h_chain_id, "820001"_hex)),
        header_err(HeaderField::chain_id, RlpError::leading_zero));
    {
        // The header list announces one byte more than its fields hold (the outer list is right).
        Bytes h = header;
        h[1] = static_cast<uint8_t>(h[1] + 1);
        add("header_list_past_end", list({h}),
            header_err(HeaderField::list, RlpError::input_too_short));
    }

    // --- the offset index ---------------------------------------------------------------------
    add("txs_empty_string", block_with_txs_item("80"_hex), err(BlockErrorCode::truncated_index));
    add("txs_single_byte", block_with_txs_item("00"_hex), err(BlockErrorCode::truncated_index));
    add("txs_3_bytes", block_with_txs_item(str("000000"_hex)),
        err(BlockErrorCode::truncated_index));
    add("count_1_no_offsets", block_with_txs_item(str(be32(1))),
        err(BlockErrorCode::count_too_large));
    add("count_0_no_offsets", block_with_txs_item(str(be32(0))),
        err(BlockErrorCode::count_too_large));
    add("count_1_one_offset", block_with_txs_item(str(index_payload(1, {0}, {}))),
        err(BlockErrorCode::count_too_large));
    add("count_2_two_offsets", block_with_txs_item(str(index_payload(2, {0, 0}, {}))),
        err(BlockErrorCode::count_too_large));
    add("count_ffffffff", block_with_txs_item(str(index_payload(0xffffffff, off, area))),
        err(BlockErrorCode::count_too_large));
    add("count_0_first_offset_1", block_with_txs_item(str(index_payload(0, {1}, "00"_hex))),
        err(BlockErrorCode::first_offset_not_zero));
    {
        auto o = off;
        o[0] = 1;
        add("first_offset_not_zero", block_with_txs_item(str(index_payload(4, o, area))),
            err(BlockErrorCode::first_offset_not_zero));
    }
    {
        auto o = off;
        o[1] = 0;  // slot 0 empty
        add("offsets_equal_at_0", block_with_txs_item(str(index_payload(4, o, area))),
            err(BlockErrorCode::offsets_not_increasing, 0));
        o = off;
        o[2] = o[1];  // slot 1 empty
        add("offsets_equal_at_1", block_with_txs_item(str(index_payload(4, o, area))),
            err(BlockErrorCode::offsets_not_increasing, 1));
        o = off;
        o[3] = o[2] - 1;  // slot 2 negative
        add("offsets_decreasing_at_2", block_with_txs_item(str(index_payload(4, o, area))),
            err(BlockErrorCode::offsets_not_increasing, 2));
        o = off;
        o[4] = o[3];  // last slot empty
        add("offsets_equal_at_3", block_with_txs_item(str(index_payload(4, o, area))),
            err(BlockErrorCode::offsets_not_increasing, 3));
    }
    {
        auto o = off;
        o[1] = n_area + 1;
        add("offset_out_of_range_at_0", block_with_txs_item(str(index_payload(4, o, area))),
            err(BlockErrorCode::offset_out_of_range, 0));
        o = off;
        o[2] = 0xffffffff;
        add("offset_ffffffff_at_1", block_with_txs_item(str(index_payload(4, o, area))),
            err(BlockErrorCode::offset_out_of_range, 1));
        o = off;
        o[4] = n_area + 1;
        add("offset_out_of_range_at_3", block_with_txs_item(str(index_payload(4, o, area))),
            err(BlockErrorCode::offset_out_of_range, 3));
    }
    add("last_offset_short_of_area",
        block_with_txs_item(str(index_payload(4, off, cat({area, "00"_hex})))),
        err(BlockErrorCode::last_offset_mismatch));
    add("count_0_with_area", block_with_txs_item(str(index_payload(0, {0}, "c0"_hex))),
        err(BlockErrorCode::last_offset_mismatch));
    {
        // Three offsets cover the first three transactions; the fourth's bytes are unclaimed.
        auto o = off;
        o.pop_back();
        add("count_3_for_4_txs", block_with_txs_item(str(index_payload(3, o, area))),
            err(BlockErrorCode::last_offset_mismatch));
    }

    // --- the slots --------------------------------------------------------------------------
    add("slot_trailing_byte_legacy_at_1",
        block_with_slots({base_tx(0), cat({base_tx(1), "00"_hex}), base_tx(2), base_tx(3)}),
        err(BlockErrorCode::slot_trailing_bytes, 1));
    add("slot_trailing_byte_typed_at_3",
        block_with_slots({base_tx(0), base_tx(1), base_tx(2), cat({base_tx(3), "80"_hex})}),
        err(BlockErrorCode::slot_trailing_bytes, 3));
    add("slot_holding_two_txs_at_0", block_with_slots({cat({base_tx(0), base_tx(1)}), base_tx(2)}),
        err(BlockErrorCode::slot_trailing_bytes, 0));
    {
        // Slot 0 stops one byte short; slot 1 starts with tx 0's last byte: 0 is reported.
        auto o = off;
        o[1] -= 1;
        add("slot_truncated_at_0", block_with_txs_item(str(index_payload(4, o, area))),
            tx_err(0, tx_rlp(tx::Field::envelope, RlpError::input_too_short)));
    }
    add("malformed_tx_nonce_leading_zero_at_1",
        block_with_slots(
            {base_tx(0), tx_with(base_tx(1), 0, "820001"_hex), base_tx(2), base_tx(3)}),
        tx_err(1, tx_rlp(tx::Field::nonce, RlpError::leading_zero)));
    add("malformed_tx_typed_to_19_bytes_at_3",
        block_with_slots(
            {base_tx(0), base_tx(1), base_tx(2), tx_with(base_tx(3), 5, str(Bytes(19, 0x42)))}),
        tx_err(3, tx_rlp(tx::Field::to, RlpError::unexpected_length)));
    add("malformed_tx_unsupported_type_at_2",
        block_with_slots({base_tx(0), base_tx(1), cat({"03"_hex, "c0"_hex})}),
        tx_err(2, {tx::TxErrorCode::unsupported_type, tx::Field::envelope, {}}));
    add("malformed_tx_empty_list_at_0", block_with_slots({"c0"_hex, base_tx(1)}),
        tx_err(0, {tx::TxErrorCode::too_few_fields, tx::Field::nonce, {}}));
    add("malformed_tx_string_slot_at_1", block_with_slots({base_tx(0), str("0102"_hex)}),
        tx_err(1, tx_rlp(tx::Field::envelope, RlpError::unexpected_string)));
    add("several_bad_txs_lowest_reported",
        block_with_slots({base_tx(0), base_tx(1), tx_with(base_tx(2), 1, "00"_hex), base_tx(3),
                          "c0"_hex, cat({base_tx(0), "00"_hex})}),
        tx_err(2, tx_rlp(tx::Field::nonce, RlpError::leading_zero)));

    // --- the plain-list alternative -----------------------------------------------------------
    add("plain_list_item_past_end", block_with_txs_item("c1b8"_hex),
        rlp_err(BlockErrorCode::malformed_tx_list, RlpError::input_too_short));
    add("plain_list_non_canonical_item", block_with_txs_item("c28100"_hex),
        rlp_err(BlockErrorCode::malformed_tx_list, RlpError::non_canonical_single_byte));
    add("plain_list_empty_string_item", block_with_txs_item(list({base_tx(0), "80"_hex})),
        tx_err(1, tx_rlp(tx::Field::envelope, RlpError::input_too_short)));
    // go-ethereum writes a legacy transaction as a list item and rejects one wrapped in a string.
    add("plain_list_legacy_in_string_at_1",
        block_with_txs_item(list({base_tx(0), str(base_tx(1)), base_tx(1)})),
        tx_err(1, tx_rlp(tx::Field::envelope, RlpError::unexpected_string)));
    add("plain_list_bare_typed_at_0", block_with_txs_item(list({base_tx(3)})),
        tx_err(0, tx_rlp(tx::Field::envelope, RlpError::input_too_short)));
    add("plain_list_bad_legacy_at_0", block_with_txs_item(list({tx_with(base_tx(1), 8, "c0"_hex)})),
        tx_err(0, tx_rlp(tx::Field::s, RlpError::unexpected_list)));
    return t;
}

std::string row_name(const testing::TestParamInfo<Row>& info) { return info.param.name; }

class block_decode_error : public testing::TestWithParam<Row> {};

}  // namespace

TEST_P(block_decode_error, rejects) {
    const Row& row = GetParam();
    expect_error(block::decode_block(row.input, false), row.expected, "serial");
    expect_error(block::decode_block(row.input, true), row.expected, "parallel");
}

// transaction_hashes reads the framing only: the same error as decode_block where the framing
// is what is wrong; transactions and header fields it does not decode.
TEST_P(block_decode_error, transaction_hashes_rejects_the_same_framing) {
    const Row& row = GetParam();
    using C = block::BlockErrorCode;
    const auto hashes = block::transaction_hashes(row.input);
    switch (row.expected.code) {
        case C::malformed_tx:
        case C::slot_trailing_bytes:
        case C::invalid_tx:
        case C::wrong_chain_id: return;  // in a transaction's bytes: not read
        case C::malformed_header:  // its fields are not decoded; only its being a list is read
            if (!hashes) {
                EXPECT_EQ(hashes.error().code, C::malformed_header) << row.name;
            }
            return;
        default: break;
    }
    ASSERT_FALSE(hashes.has_value()) << row.name;
    EXPECT_EQ(hashes.error().code, row.expected.code) << row.name;
    EXPECT_EQ(hashes.error().tx_index, row.expected.tx_index) << row.name;
    EXPECT_EQ(hashes.error().rlp, row.expected.rlp) << row.name;
}

INSTANTIATE_TEST_SUITE_P(table, block_decode_error, testing::ValuesIn(rows()), row_name);

TEST(block_decode, transaction_hashes_are_decodes_hashes) {
    const auto txs = test::mixed_txs(9);
    const Bytes indexed = block::encode_block(test::sample_header(1, 12345), txs.views());
    const Bytes plain = list(
        {block::encode(test::sample_header(1, 12345)), block::encode_plain_tx_list(txs.views())});
    const Bytes empty = block::encode_block(test::sample_header(1, 12345), {});
    for (const Bytes& wire : {indexed, plain, empty}) {
        const auto decoded = block::decode_block(wire);
        ASSERT_TRUE(decoded);
        const auto hashes = block::transaction_hashes(wire);
        ASSERT_TRUE(hashes) << describe(hashes.error());
        EXPECT_EQ(*hashes, decoded->tx_hashes);
    }
}

// The bases the rows are built from decode, so each row fails for its one change only.
TEST(block_decode, table_bases_decode) {
    ASSERT_TRUE(block::decode_block(valid_block()));
    ASSERT_TRUE(block::decode_block(block_with_header(block::encode(base_header()))));
    ASSERT_TRUE(block::decode_block(
        block_with_txs_item(str(index_payload(4, base_offsets(), base_area())))));
    ASSERT_TRUE(block::decode_block(block_with_slots(base_txs().encodings)));
    ASSERT_TRUE(
        block::decode_block(block_with_txs_item(block::encode_plain_tx_list(base_txs().views()))));
    for (size_t i = 0; i < 4; ++i) {
        // tx_with rebuilds the same bytes when the item is unchanged.
        const auto items = raw_items(BytesView{base_tx(i)}.subspan(i >= 2 ? 1 : 0));
        EXPECT_EQ(tx_with(base_tx(i), 0, items[0]), base_tx(i));
    }
    // The header rows rely on the header's list header being a single byte + length byte.
    const Bytes h = block::encode(base_header());
    EXPECT_EQ(h[0], 0xf8);
}

// Every code stage 1 can produce has a row.
TEST(block_decode, table_covers_every_decode_error) {
    std::vector<BlockErrorCode> seen;
    for (const auto& row : rows()) seen.push_back(row.expected.code);
    for (auto code : {BlockErrorCode::malformed_block, BlockErrorCode::malformed_header,
                      BlockErrorCode::truncated_index, BlockErrorCode::count_too_large,
                      BlockErrorCode::first_offset_not_zero, BlockErrorCode::offsets_not_increasing,
                      BlockErrorCode::offset_out_of_range, BlockErrorCode::last_offset_mismatch,
                      BlockErrorCode::malformed_tx_list, BlockErrorCode::slot_trailing_bytes,
                      BlockErrorCode::malformed_tx}) {
        EXPECT_NE(std::find(seen.begin(), seen.end(), code), seen.end()) << to_string(code);
    }
}

TEST(block_decode, describe_strings) {
    EXPECT_EQ(describe(err(BlockErrorCode::offsets_not_increasing, 3)),
              "transaction 3: offsets_not_increasing");
    EXPECT_EQ(describe(err(BlockErrorCode::count_too_large)), "count_too_large");
    EXPECT_EQ(describe(tx_err(17, tx_rlp(tx::Field::nonce, RlpError::leading_zero))),
              "transaction 17: malformed_tx: nonce: leading_zero");
    EXPECT_EQ(describe(header_err(HeaderField::coinbase, RlpError::unexpected_length)),
              "malformed_header: coinbase: unexpected_length");
    EXPECT_EQ(describe(rlp_err(BlockErrorCode::malformed_block, RlpError::trailing_bytes)),
              "malformed_block: trailing_bytes");
}

// count = 0xffffffff with a few bytes behind it is rejected without an allocation in proportion
// to the count (16 bytes per slot view would be 64 GiB).
TEST(block_decode, huge_count_allocates_nothing_in_proportion) {
    const Bytes wire = block_with_txs_item(str(index_payload(0xffffffff, {0, 0, 0}, "c0c0"_hex)));
    const Bytes list_wire = str(index_payload(0xffffffff, {0, 0, 0}, "c0c0"_hex));
    for (bool parallel : {false, true}) {
        AllocationProbe probe;
        auto b = block::decode_block(wire, parallel);
        auto l = block::decode_tx_list(list_wire, parallel);
        const size_t largest = probe.largest();
        ASSERT_FALSE(b);
        EXPECT_EQ(b.error(), err(BlockErrorCode::count_too_large));
        ASSERT_FALSE(l);
        EXPECT_EQ(l.error(), err(BlockErrorCode::count_too_large));
        EXPECT_LT(largest, size_t{1} << 16) << "largest single allocation while decoding";
    }
}

// The lowest bad index wins in parallel mode whatever the thread timing: 50 blocks of 1,000
// transactions (each with 1 KiB of calldata, so that decoding and hashing take long enough for
// every worker to join in) with 2..6 bad ones, each of a different kind. Even runs put one bad
// transaction just below the middle and one just above it, where a worker that took the upper
// half meets its bad transaction long before the lower half's: a "first failure wins" bug fails
// those runs; odd runs use random positions.
TEST(block_decode, lowest_bad_index_parallel_repeated) {
    const auto& base = base_txs().encodings;
    std::vector<Bytes> heavy;  // the base transactions with 1 KiB of calldata (decode only)
    for (size_t i = 0; i < base.size(); ++i)
        heavy.push_back(tx_with(base[i], i < 2 ? 5 : (i == 2 ? 6 : 7), str(Bytes(1024, 0x5a))));
    const std::vector<std::pair<Bytes, tx::TxError>> bad = {
        {tx_with(base[1], 0, "820001"_hex), tx_rlp(tx::Field::nonce, RlpError::leading_zero)},
        {"c0"_hex, {tx::TxErrorCode::too_few_fields, tx::Field::nonce, {}}},
        {cat({"05"_hex, "c0"_hex}), {tx::TxErrorCode::unsupported_type, tx::Field::envelope, {}}},
        {tx_with(base[3], 5, str(Bytes(21, 0x42))),
         tx_rlp(tx::Field::to, RlpError::unexpected_length)},
        {tx_with(base[2], 2, "c0"_hex), tx_rlp(tx::Field::gas_price, RlpError::unexpected_list)},
    };
    std::mt19937_64 rng{20240611};
    constexpr size_t n = 1000;
    std::vector<Bytes> good;
    for (size_t i = 0; i < n; ++i) good.push_back(heavy[i % heavy.size()]);
    for (int run = 0; run < 50; ++run) {
        std::vector<Bytes> slots = good;
        std::vector<size_t> positions;
        if (run % 2 == 0) {
            positions.push_back(n / 2 - 1 - rng() % 64);
            positions.push_back(n / 2 + rng() % 64);
        }
        const size_t k = 2 + rng() % 5;
        while (positions.size() < k) {
            const size_t p = rng() % n;
            if (std::find(positions.begin(), positions.end(), p) == positions.end())
                positions.push_back(p);
        }
        size_t lowest = n;
        tx::TxError lowest_error;
        for (size_t j = 0; j < positions.size(); ++j) {
            const auto& [encoding, error] = bad[(run + j) % bad.size()];
            slots[positions[j]] = encoding;
            if (positions[j] < lowest) {
                lowest = positions[j];
                lowest_error = error;
            }
        }
        const Bytes wire = block_with_slots(slots);
        SCOPED_TRACE("run " + std::to_string(run) + ", lowest bad index " + std::to_string(lowest));
        expect_error(block::decode_block(wire, true), tx_err(lowest, lowest_error), "parallel");
        expect_error(block::decode_block(wire, false), tx_err(lowest, lowest_error), "serial");
    }
}

// ---- round trips -----------------------------------------------------------------------------

namespace {
void expect_block_holds(const block::Block& b, const test::TxSet& txs) {
    ASSERT_EQ(b.size(), txs.size());
    ASSERT_EQ(b.tx_encodings.size(), txs.size());
    ASSERT_EQ(b.tx_hashes.size(), txs.size());
    const uint8_t* wire_begin = b.wire.data();
    const uint8_t* wire_end = b.wire.data() + b.wire.size();
    for (size_t i = 0; i < txs.size(); ++i) {
        SCOPED_TRACE("transaction " + std::to_string(i));
        const BytesView enc = b.tx_encodings[i];
        EXPECT_TRUE(
            std::equal(enc.begin(), enc.end(), txs.encodings[i].begin(), txs.encodings[i].end()));
        // A view into the block's own bytes, not a copy.
        EXPECT_TRUE(enc.data() >= wire_begin && enc.data() + enc.size() <= wire_end);
        EXPECT_EQ(b.tx_hashes[i], keccak256(txs.encodings[i]));
        auto expected = tx::decode(txs.encodings[i]);
        ASSERT_TRUE(expected);
        EXPECT_TRUE(b.txs[i] == *expected);
    }
}
}  // namespace

TEST(block_decode, round_trip) {
    const auto txs = test::mixed_txs(9);
    const auto header = test::sample_header(1, 12345);
    const Bytes wire = block::encode_block(header, txs.views());
    for (bool parallel : {false, true}) {
        auto b = block::decode_block(wire, parallel);
        ASSERT_TRUE(b) << describe(b.error());
        ASSERT_TRUE(b->header);
        EXPECT_EQ(*b->header, header);
        EXPECT_EQ(b->hash, keccak256(block::encode(header)));
        EXPECT_EQ(b->hash, block::hash_of(header));
        EXPECT_TRUE(b->senders.empty());  // stage 2 fills them
        expect_block_holds(*b, txs);
        // Moving the block keeps its views valid (the wire buffer moves, not its bytes).
        block::Block moved = std::move(b).value();
        expect_block_holds(moved, txs);
        EXPECT_EQ(moved.wire, wire);
    }
}

// A sealed template under the header execution filled in: what decoding the block under the new
// header makes of it, with nothing decoded again, whether the template's transactions came as an
// offset-indexed list or a plain one; every view is into the new wire.
TEST(block_decode, with_header_is_the_block_decoded_under_the_new_header) {
    const auto txs = test::mixed_txs(9);
    block::Header sealed = test::sample_header(1, 12345);
    sealed.gas_used = 0x1234'5678'9abc;  // a longer encoding than the template's 0
    block::Header empty_template = sealed;
    empty_template.gas_used = 0;
    const Bytes indexed = block::encode_block(empty_template, txs.views());
    const Bytes plain =
        list({block::encode(empty_template), block::encode_plain_tx_list(txs.views())});
    auto expected = block::decode_block(block::encode_block(sealed, txs.views()));
    ASSERT_TRUE(expected) << describe(expected.error());
    for (const Bytes& wire : {indexed, plain}) {
        auto b = block::decode_block(wire);
        ASSERT_TRUE(b) << describe(b.error());
        std::vector<Address> senders(b->size());
        for (size_t i = 0; i < senders.size(); ++i) senders[i][0] = static_cast<uint8_t>(i + 1);
        b->senders = senders;
        const block::Block moved = block::with_header(std::move(b).value(), sealed);
        EXPECT_EQ(moved.wire, expected->wire);
        EXPECT_EQ(*moved.header, sealed);
        EXPECT_EQ(moved.hash, expected->hash);
        EXPECT_EQ(moved.tx_hashes, expected->tx_hashes);
        EXPECT_EQ(moved.senders, senders);  // verified once: carried over
        expect_block_holds(moved, txs);
        const uint8_t* begin = moved.wire.data();
        for (size_t i = 0; i < moved.size(); ++i) {
            const BytesView data = moved.txs[i].data;
            if (data.empty()) continue;
            EXPECT_TRUE(data.data() >= begin &&
                        data.data() + data.size() <= begin + moved.wire.size())
                << i;
        }
    }
}

TEST(block_decode, encode_block_layout) {
    const auto& txs = base_txs();
    const Bytes wire = block::encode_block(base_header(), txs.views());
    // [header, string(count ‖ offsets ‖ area)]
    EXPECT_EQ(wire, list({block::encode(base_header()),
                          str(index_payload(4, base_offsets(), base_area()))}));
    Bytes appended = "ff"_hex;
    block::encode_block(appended, base_header(), txs.views());
    EXPECT_EQ(appended, cat({"ff"_hex, wire}));
    Bytes index;
    block::encode_indexed_txs(index, txs.views());
    EXPECT_EQ(index, index_payload(4, base_offsets(), base_area()));
}

TEST(block_decode, header_round_trip_extremes) {
    block::Header h;  // all zero
    auto b = block::decode_block(block::encode_block(h, {}));
    ASSERT_TRUE(b) << describe(b.error());
    EXPECT_EQ(*b->header, h);
    h.number = h.timestamp = h.gas_limit = h.gas_used = h.chain_id = ~uint64_t{0};
    b = block::decode_block(block::encode_block(h, {}));
    ASSERT_TRUE(b) << describe(b.error());
    EXPECT_EQ(*b->header, h);
}

TEST(block_decode, empty_tx_list) {
    const Bytes wire = block::encode_block(base_header(), {});
    // The txs item is the 8-byte string count = 0, offsets = [0].
    const Bytes tail = "880000000000000000"_hex;
    ASSERT_GE(wire.size(), tail.size());
    EXPECT_TRUE(
        std::equal(tail.begin(), tail.end(), wire.end() - static_cast<ptrdiff_t>(tail.size())));
    for (bool parallel : {false, true}) {
        auto b = block::decode_block(wire, parallel);
        ASSERT_TRUE(b) << describe(b.error());
        EXPECT_EQ(b->size(), 0u);
        EXPECT_TRUE(b->tx_hashes.empty());
        EXPECT_EQ(*b->header, base_header());
        auto l = block::decode_tx_list(str(index_payload(0, {0}, {})), parallel);
        ASSERT_TRUE(l) << describe(l.error());
        EXPECT_EQ(l->size(), 0u);
    }
    // An empty plain list is accepted too.
    auto plain = block::decode_block(block_with_txs_item("c0"_hex));
    ASSERT_TRUE(plain) << describe(plain.error());
    EXPECT_EQ(plain->size(), 0u);
}

// go-ethereum's encoding of []*types.Transaction: legacy transactions as list items, typed ones
// as strings holding the envelope.
TEST(block_decode, plain_tx_list) {
    const auto txs = test::mixed_txs(10);
    const Bytes plain = block::encode_plain_tx_list(txs.views());
    {
        // Check the shape item by item.
        const auto items = raw_items(plain);
        ASSERT_EQ(items.size(), txs.size());
        for (size_t i = 0; i < txs.size(); ++i) {
            if (txs.encodings[i][0] >= 0xc0)
                EXPECT_EQ(items[i], txs.encodings[i]) << i;
            else
                EXPECT_EQ(items[i], str(txs.encodings[i])) << i;
        }
    }
    const Bytes wire = list({block::encode(base_header()), plain});
    const Bytes indexed = block::encode_block(base_header(), txs.views());
    auto reference = block::decode_block(indexed);
    ASSERT_TRUE(reference);
    for (bool parallel : {false, true}) {
        auto b = block::decode_block(wire, parallel);
        ASSERT_TRUE(b) << describe(b.error());
        EXPECT_EQ(*b->header, base_header());
        EXPECT_EQ(b->hash, reference->hash);  // the hash covers the header only
        expect_block_holds(*b, txs);

        auto l = block::decode_tx_list(plain, parallel);
        ASSERT_TRUE(l) << describe(l.error());
        EXPECT_FALSE(l->header);
        EXPECT_TRUE(l->hash.is_zero());
        expect_block_holds(*l, txs);
    }
}

TEST(block_decode, tx_list_indexed_in_string) {
    const auto& txs = base_txs();
    Bytes payload;
    block::encode_indexed_txs(payload, txs.views());
    auto l = block::decode_tx_list(str(payload));
    ASSERT_TRUE(l) << describe(l.error());
    EXPECT_FALSE(l->header);
    expect_block_holds(*l, txs);
}

TEST(block_decode, tx_list_errors) {
    expect_error(
        block::decode_tx_list(cat({block::encode_plain_tx_list(base_txs().views()), "00"_hex})),
        rlp_err(BlockErrorCode::malformed_block, RlpError::trailing_bytes), "trailing");
    expect_error(block::decode_tx_list({}),
                 rlp_err(BlockErrorCode::malformed_block, RlpError::input_too_short), "empty");
    expect_error(block::decode_tx_list(list({base_tx(0), "c0"_hex})),
                 tx_err(1, {tx::TxErrorCode::too_few_fields, tx::Field::nonce, {}}), "bad tx");
    auto o = base_offsets();
    o[2] = o[1];
    expect_error(block::decode_tx_list(str(index_payload(4, o, base_area()))),
                 err(BlockErrorCode::offsets_not_increasing, 1), "offsets");
}

TEST(block_decode, parallel_equals_serial) {
    const auto txs = test::mixed_txs(301, 1, 3);
    const Bytes wire = block::encode_block(base_header(), txs.views());
    auto s = block::decode_block(wire, false);
    auto p = block::decode_block(wire, true);
    ASSERT_TRUE(s);
    ASSERT_TRUE(p);
    EXPECT_EQ(*s->header, *p->header);
    EXPECT_EQ(s->hash, p->hash);
    EXPECT_EQ(s->tx_hashes, p->tx_hashes);
    ASSERT_EQ(s->size(), p->size());
    for (size_t i = 0; i < s->size(); ++i) {
        EXPECT_TRUE(s->txs[i] == p->txs[i]) << i;
        EXPECT_TRUE(std::equal(s->tx_encodings[i].begin(), s->tx_encodings[i].end(),
                               p->tx_encodings[i].begin(), p->tx_encodings[i].end()))
            << i;
    }
    expect_block_holds(*p, txs);
}

// A chain file is blocks concatenated; split_block walks it without decoding transactions.
TEST(block_decode, split_block_walks_chain) {
    const auto txs = test::mixed_txs(5, 1, 9);
    const auto views = txs.views();
    std::vector<Bytes> blocks;
    blocks.push_back(block::encode_block(test::sample_header(1, 1), views));
    blocks.push_back(block::encode_block(test::sample_header(1, 2), {}));
    blocks.push_back(block::encode_block(test::sample_header(1, 3), std::span{views}.first(2)));
    const Bytes chain = cat(blocks);

    BytesView rest = chain;
    for (size_t i = 0; i < blocks.size(); ++i) {
        auto b = block::split_block(rest);
        ASSERT_TRUE(b) << describe(b.error());
        ASSERT_TRUE(std::equal(b->begin(), b->end(), blocks[i].begin(), blocks[i].end()))
            << "block " << i;
        auto decoded = block::decode_block(Bytes(b->begin(), b->end()));
        ASSERT_TRUE(decoded) << describe(decoded.error());
        EXPECT_EQ(decoded->header->number, i + 1);
    }
    EXPECT_TRUE(rest.empty());

    // What split_block rejects: a string, an empty input and a cut-off last block.
    const Bytes string_block = "83aabbcc"_hex;
    BytesView s = string_block;
    auto e = block::split_block(s);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error(), rlp_err(BlockErrorCode::malformed_block, RlpError::unexpected_string));
    BytesView empty;
    e = block::split_block(empty);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error(), rlp_err(BlockErrorCode::malformed_block, RlpError::input_too_short));
    const Bytes cut(chain.begin(), chain.end() - 1);
    rest = cut;
    ASSERT_TRUE(block::split_block(rest));
    ASSERT_TRUE(block::split_block(rest));
    e = block::split_block(rest);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error(), rlp_err(BlockErrorCode::malformed_block, RlpError::input_too_short));
}

// The worked example of docs/formats.md ("Block"), byte for byte: if the wire format changes,
// this fails until the document is updated with it.
TEST(block_decode, formats_md_worked_example) {
    const Bytes wire =
        "f901a0f8a8a0111111111111111111111111111111111111111111111111111111111111111101846553f10094"
        "2222222222222222222222222222222222222222"
        "8401c9c38082a410a03f5ae21607b6c613632cd1fc996d7162b62d1f3544049e83945aeeb84b9cd069a0000000"
        "00000000000000000000000000000000000000"
        "00000000000000000000a0000000000000000000000000000000000000000000000000000000000000000001b8"
        "f400000002000000000000006e000000e4f86c"
        "808504a817c8008252089435363738393a3b3c3d3e3f404142434445464748880de0b6b3a76400008025a03e11"
        "9beb87c9f4cc5f2b4b7141b985950649ce54d6"
        "0bef56bf8a5e4facb4af48a05a74322b5f3a91848518ae27374f6970f2498b6ea0a66cbcf832fca7169da91b02"
        "f8730180843b9aca008504a817c80082520894"
        "363738393a3b3c3d3e3f40414243444546474849880de0b6b3a764000080c080a0cd705020b28c4f388f359fe1"
        "ad63afc35ff2fd866025fd67df2b490b030fed"
        "13a07bb46af2f4aa035ccaae779a3c456a5bf3e29a2c2c27d483871b9eb4743b8fbb"_hex;
    ASSERT_EQ(wire.size(), 419u);
    auto b = block::decode_block(wire);
    ASSERT_TRUE(b) << describe(b.error());
    const block::Header& h = *b->header;
    EXPECT_EQ(h.parent_hash, *hash_from_hex("0x" + std::string(64, '1')));
    EXPECT_EQ(h.number, 1u);
    EXPECT_EQ(h.timestamp, 1'700'000'000u);
    EXPECT_EQ(h.coinbase, *address_from_hex("0x" + std::string(40, '2')));
    EXPECT_EQ(h.gas_limit, 30'000'000u);
    EXPECT_EQ(h.gas_used, 42'000u);
    EXPECT_EQ(h.txs_root,
              *hash_from_hex("0x3f5ae21607b6c613632cd1fc996d7162b62d1f3544049e83945aeeb84b9cd069"));
    EXPECT_TRUE(h.receipts_root.is_zero());
    EXPECT_TRUE(h.state_root.is_zero());
    EXPECT_EQ(h.chain_id, 1u);
    EXPECT_EQ(b->hash,
              *hash_from_hex("0x3ac831f3908208c1a6217152870828f5b556e505eadf14533bfcfae2649eec5b"));
    ASSERT_EQ(b->size(), 2u);
    EXPECT_EQ(b->tx_encodings[0].size(), 110u);
    EXPECT_EQ(b->tx_encodings[1].size(), 118u);
    EXPECT_EQ(b->txs[0].type, tx::TxType::legacy);
    EXPECT_EQ(b->txs[1].type, tx::TxType::dynamic_fee);
    EXPECT_EQ(b->tx_hashes[0],
              *hash_from_hex("0x689333bdb087f8c37ecc594cf5e75c229ba340f0c9fc2af999b7117e0812a84a"));
    EXPECT_EQ(b->tx_hashes[1],
              *hash_from_hex("0xd0630a9cd5d65e68447e833551d10efbadc93be0ba47e306940586aeb822df9a"));
    EXPECT_EQ(keccak256(b->tx_hashes[0], b->tx_hashes[1]), h.txs_root);
    ASSERT_TRUE(block::recover_senders(*b, 1, nullptr));
    EXPECT_EQ(b->senders[0], *address_from_hex("0x89b573e68030d1aab75ca8b83db79c3f3aca2950"));
    EXPECT_EQ(b->senders[1], *address_from_hex("0xc2e4d1ddb8bfa27ca6ebe3f089d22baab1d6bd3d"));
    // The encoder reproduces it, and the plain-list form of the document starts as shown.
    EXPECT_EQ(block::encode_block(h, b->tx_encodings), wire);
    const Bytes plain = block::encode_plain_tx_list(b->tx_encodings);
    EXPECT_EQ(to_hex(BytesView{plain}.first(6)), "0xf8e6f86c8085");
    EXPECT_EQ(to_hex(BytesView{plain}.subspan(2 + 110, 4)), "0xb87602f8");
}
