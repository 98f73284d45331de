// tx::decode: one table row per way an encoding can be wrong, each asserting the exact TxError
// (code, field and, for malformed RLP, the RLP error). The inputs are built from the EIP-155
// example transaction and a type-2 transaction by replacing, adding or removing one field item,
// so each row differs from a valid encoding in exactly the way its name says.

#include <barrel/core/hex.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/tx/transaction.hpp>

#include "rlp_build.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

using namespace barrel;
using namespace barrel::literals;
using tx::Field;
using tx::TxError;
using tx::TxErrorCode;
using RlpError = rlp::DecodingError;

using barrel::test::cat;
using barrel::test::list;
using barrel::test::str;

namespace {

Bytes repeat(uint8_t byte, size_t n) { return Bytes(n, byte); }

const Bytes kTo = str(repeat(0x35, 20));
const Bytes kR = "a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276"_hex;
const Bytes kS = "a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83"_hex;

// Field positions inside the lists.
enum Legacy : size_t { l_nonce, l_gas_price, l_gas_limit, l_to, l_value, l_data, l_v, l_r, l_s };
enum Eip1559 : size_t {
    d_chain_id,
    d_nonce,
    d_priority,
    d_max_fee,
    d_gas_limit,
    d_to,
    d_value,
    d_data,
    d_access_list,
    d_y,
    d_r,
    d_s,
};
enum Eip2930 : size_t {
    a_chain_id,
    a_nonce,
    a_gas_price,
    a_gas_limit,
    a_to,
    a_value,
    a_data,
    a_access_list,
    a_y,
    a_r,
    a_s,
};

/// The items of the EIP-155 example transaction (nonce 9, 20 gwei, 21000 gas, to 0x35…35,
/// 1 ether, v = 37).
std::vector<Bytes> legacy_items() {
    return {"09"_hex, "8504a817c800"_hex, "825208"_hex, kTo, "880de0b6b3a7640000"_hex,
            "80"_hex, "25"_hex,           kR,           kS};
}

Bytes access_list_entry(size_t address_len, size_t n_keys, size_t key_len = 32) {
    std::vector<Bytes> keys;
    for (size_t i = 0; i < n_keys; ++i) keys.push_back(str(repeat(0x11, key_len)));
    return list({str(repeat(0xaa, address_len)), list(keys)});
}

/// A type-2 transaction with one access-list entry of two keys.
std::vector<Bytes> dynamic_fee_items() {
    return {"01"_hex,
            "09"_hex,
            "843b9aca00"_hex,
            "8504a817c800"_hex,
            "825208"_hex,
            kTo,
            "880de0b6b3a7640000"_hex,
            "83010203"_hex,
            list({access_list_entry(20, 2)}),
            "01"_hex,
            kR,
            kS};
}

/// A type-1 transaction with an empty access list.
std::vector<Bytes> access_list_items() {
    return {"01"_hex, "09"_hex, "8504a817c800"_hex, "825208"_hex, kTo, "880de0b6b3a7640000"_hex,
            "80"_hex, "c0"_hex, "80"_hex,           kR,           kS};
}

Bytes legacy(const std::vector<Bytes>& items) { return list(items); }
Bytes typed(uint8_t type, const std::vector<Bytes>& items) { return cat({{type}, list(items)}); }

Bytes legacy_with(size_t field, Bytes item) {
    auto items = legacy_items();
    items[field] = std::move(item);
    return legacy(items);
}
Bytes dynamic_fee_with(size_t field, Bytes item) {
    auto items = dynamic_fee_items();
    items[field] = std::move(item);
    return typed(2, items);
}
Bytes access_list_with(size_t field, Bytes item) {
    auto items = access_list_items();
    items[field] = std::move(item);
    return typed(1, items);
}

struct Row {
    std::string name;
    Bytes input;
    TxError expected;
};

[[maybe_unused]] void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

TxError rlp_err(Field field, RlpError e) { return {TxErrorCode::malformed_rlp, field, e}; }
TxError tx_err(TxErrorCode code, Field field = Field::none) { return {code, field, {}}; }

std::vector<Row> rows() {
    std::vector<Row> t;
    const auto add = [&](std::string name, Bytes input, TxError expected) {
        t.push_back({std::move(name), std::move(input), expected});
    };

    // --- malformed_rlp: leading zeros in every integer field --------------------------------
    add("leading_zero_nonce", legacy_with(l_nonce, "820009"_hex),
        rlp_err(Field::nonce, RlpError::leading_zero));
    add("zero_byte_nonce", legacy_with(l_nonce, "00"_hex),
        rlp_err(Field::nonce, RlpError::leading_zero));
    add("leading_zero_gas_price", legacy_with(l_gas_price, "860004a817c800"_hex),
        rlp_err(Field::gas_price, RlpError::leading_zero));
    add("leading_zero_gas_limit", legacy_with(l_gas_limit, "83005208"_hex),
        rlp_err(Field::gas_limit, RlpError::leading_zero));
    add("leading_zero_value", legacy_with(l_value, "89000de0b6b3a7640000"_hex),
        rlp_err(Field::value, RlpError::leading_zero));
    add("leading_zero_v", legacy_with(l_v, "820025"_hex),
        rlp_err(Field::v, RlpError::leading_zero));
    // 33 bytes with a leading zero: the leading zero is reported, not the width.
    add("leading_zero_r", legacy_with(l_r, cat({"a100"_hex, Bytes(kR.begin() + 1, kR.end())})),
        rlp_err(Field::r, RlpError::leading_zero));
    add("leading_zero_s", legacy_with(l_s, cat({"a100"_hex, Bytes(kS.begin() + 1, kS.end())})),
        rlp_err(Field::s, RlpError::leading_zero));
    add("leading_zero_chain_id", dynamic_fee_with(d_chain_id, "820001"_hex),
        rlp_err(Field::chain_id, RlpError::leading_zero));
    add("leading_zero_max_priority_fee", dynamic_fee_with(d_priority, "85003b9aca00"_hex),
        rlp_err(Field::max_priority_fee_per_gas, RlpError::leading_zero));
    add("leading_zero_max_fee", dynamic_fee_with(d_max_fee, "860004a817c800"_hex),
        rlp_err(Field::max_fee_per_gas, RlpError::leading_zero));
    add("leading_zero_typed_gas_price", access_list_with(a_gas_price, "860004a817c800"_hex),
        rlp_err(Field::gas_price, RlpError::leading_zero));
    add("zero_byte_y_parity", dynamic_fee_with(d_y, "00"_hex),
        rlp_err(Field::v, RlpError::leading_zero));

    // --- malformed_rlp: integers too wide for their field ------------------------------------
    add("overflow_nonce", legacy_with(l_nonce, str(cat({{0x01}, repeat(0, 8)}))),
        rlp_err(Field::nonce, RlpError::overflow));
    add("overflow_gas_limit", legacy_with(l_gas_limit, str(cat({{0x01}, repeat(0, 8)}))),
        rlp_err(Field::gas_limit, RlpError::overflow));
    add("overflow_gas_price", legacy_with(l_gas_price, str(cat({{0x01}, repeat(0, 32)}))),
        rlp_err(Field::gas_price, RlpError::overflow));
    add("overflow_value", legacy_with(l_value, str(cat({{0x01}, repeat(0, 32)}))),
        rlp_err(Field::value, RlpError::overflow));
    add("overflow_v", legacy_with(l_v, str(cat({{0x01}, repeat(0, 32)}))),
        rlp_err(Field::v, RlpError::overflow));
    add("overflow_r", legacy_with(l_r, str(cat({{0x01}, repeat(0, 32)}))),
        rlp_err(Field::r, RlpError::overflow));
    add("overflow_s", legacy_with(l_s, str(cat({{0x01}, repeat(0, 32)}))),
        rlp_err(Field::s, RlpError::overflow));
    add("overflow_chain_id", dynamic_fee_with(d_chain_id, str(cat({{0x01}, repeat(0, 8)}))),
        rlp_err(Field::chain_id, RlpError::overflow));
    add("overflow_max_priority_fee",
        dynamic_fee_with(d_priority, str(cat({{0x01}, repeat(0, 32)}))),
        rlp_err(Field::max_priority_fee_per_gas, RlpError::overflow));
    add("overflow_max_fee", dynamic_fee_with(d_max_fee, str(cat({{0x01}, repeat(0, 32)}))),
        rlp_err(Field::max_fee_per_gas, RlpError::overflow));
    add("overflow_y_parity", dynamic_fee_with(d_y, str(cat({{0x01}, repeat(0, 8)}))),
        rlp_err(Field::v, RlpError::overflow));

    // --- malformed_rlp: a list where a string belongs, and the reverse ------------------------
    add("list_as_nonce", legacy_with(l_nonce, "c0"_hex),
        rlp_err(Field::nonce, RlpError::unexpected_list));
    add("list_as_gas_price", legacy_with(l_gas_price, "c0"_hex),
        rlp_err(Field::gas_price, RlpError::unexpected_list));
    add("list_as_gas_limit", legacy_with(l_gas_limit, "c0"_hex),
        rlp_err(Field::gas_limit, RlpError::unexpected_list));
    add("list_as_to", legacy_with(l_to, list({kTo})),
        rlp_err(Field::to, RlpError::unexpected_list));
    add("list_as_value", legacy_with(l_value, "c0"_hex),
        rlp_err(Field::value, RlpError::unexpected_list));
    add("list_as_data", legacy_with(l_data, "c180"_hex),
        rlp_err(Field::data, RlpError::unexpected_list));
    add("list_as_v", legacy_with(l_v, "c125"_hex), rlp_err(Field::v, RlpError::unexpected_list));
    add("list_as_r", legacy_with(l_r, list({kR})), rlp_err(Field::r, RlpError::unexpected_list));
    add("list_as_s", legacy_with(l_s, list({kS})), rlp_err(Field::s, RlpError::unexpected_list));
    add("list_as_chain_id", dynamic_fee_with(d_chain_id, "c101"_hex),
        rlp_err(Field::chain_id, RlpError::unexpected_list));
    add("list_as_y_parity", dynamic_fee_with(d_y, "c0"_hex),
        rlp_err(Field::v, RlpError::unexpected_list));
    add("string_as_access_list", dynamic_fee_with(d_access_list, "80"_hex),
        rlp_err(Field::access_list, RlpError::unexpected_string));

    // --- malformed_rlp: non-canonical string forms -------------------------------------------
    add("non_canonical_single_byte_nonce", legacy_with(l_nonce, "8109"_hex),
        rlp_err(Field::nonce, RlpError::non_canonical_single_byte));
    add("non_canonical_single_byte_data", legacy_with(l_data, "8105"_hex),
        rlp_err(Field::data, RlpError::non_canonical_single_byte));
    add("non_canonical_size_data", legacy_with(l_data, "b803aabbcc"_hex),
        rlp_err(Field::data, RlpError::non_canonical_size));
    add("leading_zero_in_length_data", legacy_with(l_data, cat({"b90038"_hex, repeat(0xaa, 56)})),
        rlp_err(Field::data, RlpError::leading_zero_in_length));
    {
        // s announces 32 bytes, but the list (whose own length is right) holds only 31 of them.
        auto items = legacy_items();
        items[l_s].pop_back();
        add("truncated_s", legacy(items), rlp_err(Field::s, RlpError::input_too_short));
    }

    // --- malformed_rlp: fixed-size fields of the wrong size ----------------------------------
    add("to_19_bytes", legacy_with(l_to, str(repeat(0x35, 19))),
        rlp_err(Field::to, RlpError::unexpected_length));
    add("to_21_bytes", legacy_with(l_to, str(repeat(0x35, 21))),
        rlp_err(Field::to, RlpError::unexpected_length));
    add("to_single_zero_byte", legacy_with(l_to, "00"_hex),
        rlp_err(Field::to, RlpError::unexpected_length));
    add("to_19_bytes_typed", dynamic_fee_with(d_to, str(repeat(0x35, 19))),
        rlp_err(Field::to, RlpError::unexpected_length));

    // --- malformed_rlp: access lists ---------------------------------------------------------
    const auto al = [&](std::string name, const std::vector<Bytes>& entries, RlpError e) {
        add(std::move(name), dynamic_fee_with(d_access_list, list(entries)),
            rlp_err(Field::access_list, e));
    };
    al("access_list_address_19_bytes", {access_list_entry(19, 1)}, RlpError::unexpected_length);
    al("access_list_address_21_bytes", {access_list_entry(21, 1)}, RlpError::unexpected_length);
    al("access_list_storage_key_31_bytes", {access_list_entry(20, 2, 31)},
       RlpError::unexpected_length);
    al("access_list_storage_key_33_bytes", {access_list_entry(20, 2, 33)},
       RlpError::unexpected_length);
    al("access_list_second_entry_bad", {access_list_entry(20, 0), access_list_entry(21, 0)},
       RlpError::unexpected_length);
    al("access_list_extra_item_in_entry", {list({str(repeat(0xaa, 20)), "c0"_hex, "80"_hex})},
       RlpError::trailing_bytes);
    al("access_list_entry_without_keys", {list({str(repeat(0xaa, 20))})},
       RlpError::input_too_short);
    al("access_list_entry_is_string", {str(repeat(0xaa, 20))}, RlpError::unexpected_string);
    al("access_list_keys_as_string", {list({str(repeat(0xaa, 20)), "80"_hex})},
       RlpError::unexpected_string);
    al("access_list_address_as_list", {list({"c0"_hex, "c0"_hex})}, RlpError::unexpected_list);
    al("access_list_key_as_list", {list({str(repeat(0xaa, 20)), list({"c0"_hex})})},
       RlpError::unexpected_list);
    add("access_list_address_19_bytes_type1",
        access_list_with(a_access_list, list({access_list_entry(19, 0)})),
        rlp_err(Field::access_list, RlpError::unexpected_length));

    // --- unsupported_type --------------------------------------------------------------------
    for (uint8_t type : {0x00, 0x03, 0x04, 0x7f}) {
        char name[32];
        std::snprintf(name, sizeof name, "unsupported_type_0x%02x", type);
        add(name, typed(type, dynamic_fee_items()),
            tx_err(TxErrorCode::unsupported_type, Field::envelope));
    }

    // --- too_few_fields / too_many_fields ----------------------------------------------------
    {
        auto items = legacy_items();
        items.pop_back();
        add("too_few_fields_legacy_no_s", legacy(items),
            tx_err(TxErrorCode::too_few_fields, Field::s));
        items.resize(6);
        add("too_few_fields_legacy_no_signature", legacy(items),
            tx_err(TxErrorCode::too_few_fields, Field::v));
        add("too_few_fields_empty_list", "c0"_hex,
            tx_err(TxErrorCode::too_few_fields, Field::nonce));
        items = legacy_items();
        items.push_back("80"_hex);
        add("too_many_fields_legacy", legacy(items), tx_err(TxErrorCode::too_many_fields));
    }
    {
        auto items = dynamic_fee_items();
        items.resize(d_r);
        add("too_few_fields_dynamic_fee", typed(2, items),
            tx_err(TxErrorCode::too_few_fields, Field::r));
        items.resize(d_access_list);
        add("too_few_fields_dynamic_fee_no_access_list", typed(2, items),
            tx_err(TxErrorCode::too_few_fields, Field::access_list));
        add("too_few_fields_typed_empty_list", "02c0"_hex,
            tx_err(TxErrorCode::too_few_fields, Field::chain_id));
        items = dynamic_fee_items();
        items.push_back("80"_hex);
        add("too_many_fields_dynamic_fee", typed(2, items), tx_err(TxErrorCode::too_many_fields));
        items = access_list_items();
        items.pop_back();
        add("too_few_fields_access_list", typed(1, items),
            tx_err(TxErrorCode::too_few_fields, Field::s));
        items = access_list_items();
        items.push_back("80"_hex);
        add("too_many_fields_access_list", typed(1, items), tx_err(TxErrorCode::too_many_fields));
    }

    // --- invalid_v ---------------------------------------------------------------------------
    for (uint64_t v : {0, 1, 26, 29, 34}) {
        Bytes item;
        rlp::encode(item, v);
        add("invalid_v_" + std::to_string(v), legacy_with(l_v, item),
            tx_err(TxErrorCode::invalid_v, Field::v));
    }
    // v = 2^65 + 35: a well-formed integer, but the chain id it implies does not fit 64 bits.
    add("invalid_v_chain_id_above_u64",
        legacy_with(l_v, str(cat({"02"_hex, repeat(0, 7), "23"_hex}))),
        tx_err(TxErrorCode::invalid_v, Field::v));
    add("invalid_y_parity_2", dynamic_fee_with(d_y, "02"_hex),
        tx_err(TxErrorCode::invalid_v, Field::v));
    add("invalid_y_parity_2_type1", access_list_with(a_y, "02"_hex),
        tx_err(TxErrorCode::invalid_v, Field::v));

    // --- envelope ----------------------------------------------------------------------------
    add("empty_input", {}, rlp_err(Field::envelope, RlpError::input_too_short));
    add("rlp_string_instead_of_list", str(legacy(legacy_items())),
        rlp_err(Field::envelope, RlpError::unexpected_string));
    add("short_rlp_string_instead_of_list", "83010203"_hex,
        rlp_err(Field::envelope, RlpError::unexpected_string));
    add("trailing_bytes_legacy", cat({legacy(legacy_items()), "00"_hex}),
        rlp_err(Field::envelope, RlpError::trailing_bytes));
    add("trailing_bytes_typed", cat({typed(2, dynamic_fee_items()), "c0"_hex}),
        rlp_err(Field::envelope, RlpError::trailing_bytes));
    add("type_byte_only", "02"_hex, rlp_err(Field::envelope, RlpError::input_too_short));
    add("typed_payload_is_string", cat({"02"_hex, str(cat(dynamic_fee_items()))}),
        rlp_err(Field::envelope, RlpError::unexpected_string));
    {
        auto truncated = legacy(legacy_items());
        truncated.pop_back();
        add("truncated_list_legacy", truncated,
            rlp_err(Field::envelope, RlpError::input_too_short));
        truncated = typed(2, dynamic_fee_items());
        truncated.pop_back();
        add("truncated_list_typed", truncated, rlp_err(Field::envelope, RlpError::input_too_short));
    }
    add("non_canonical_list_size", "f803010203"_hex,
        rlp_err(Field::envelope, RlpError::non_canonical_size));
    add("leading_zero_in_list_length", cat({"f90040"_hex, repeat(0x80, 64)}),
        rlp_err(Field::envelope, RlpError::leading_zero_in_length));
    return t;
}

std::string row_name(const testing::TestParamInfo<Row>& info) { return info.param.name; }

class tx_decode_error : public testing::TestWithParam<Row> {};

}  // namespace

TEST_P(tx_decode_error, rejects) {
    const Row& row = GetParam();
    const auto decoded = tx::decode(row.input);
    ASSERT_FALSE(decoded) << row.name << ": decoded " << to_hex(row.input);
    const TxError& e = decoded.error();
    EXPECT_EQ(e.code, row.expected.code)
        << tx::to_string(e.code) << " != " << tx::to_string(row.expected.code);
    EXPECT_EQ(e.field, row.expected.field)
        << tx::to_string(e.field) << " != " << tx::to_string(row.expected.field);
    if (row.expected.code == TxErrorCode::malformed_rlp) {
        EXPECT_EQ(e.rlp, row.expected.rlp)
            << rlp::to_string(e.rlp) << " != " << rlp::to_string(row.expected.rlp);
    }
    EXPECT_EQ(e, row.expected) << tx::describe(e) << " != " << tx::describe(row.expected);
}

INSTANTIATE_TEST_SUITE_P(table, tx_decode_error, testing::ValuesIn(rows()), row_name);

// Every code decode can produce appears in the table: a new code without a row fails here.
TEST(tx_decode, table_covers_every_decode_error) {
    std::vector<TxErrorCode> seen;
    for (const auto& row : rows()) seen.push_back(row.expected.code);
    for (auto code :
         {TxErrorCode::malformed_rlp, TxErrorCode::unsupported_type, TxErrorCode::too_few_fields,
          TxErrorCode::too_many_fields, TxErrorCode::invalid_v}) {
        EXPECT_NE(std::find(seen.begin(), seen.end(), code), seen.end()) << tx::to_string(code);
    }
}

// The unmodified bases of the table decode, so each row's failure is due to its one change.
TEST(tx_decode, table_bases_decode) {
    EXPECT_TRUE(tx::decode(legacy(legacy_items())));
    EXPECT_TRUE(tx::decode(typed(2, dynamic_fee_items())));
    EXPECT_TRUE(tx::decode(typed(1, access_list_items())));
}

TEST(tx_decode, eip155_example_fields) {
    const Bytes enc = legacy(legacy_items());
    const auto t = tx::decode(enc);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->type, tx::TxType::legacy);
    EXPECT_EQ(t->chain_id, std::optional<uint64_t>{1});
    EXPECT_EQ(t->nonce, 9u);
    EXPECT_EQ(t->gas_price(), u256{20'000'000'000ull});
    EXPECT_EQ(t->max_priority_fee_per_gas, u256{20'000'000'000ull});
    EXPECT_EQ(t->gas_limit, 21'000u);
    ASSERT_TRUE(t->to);
    EXPECT_EQ(*t->to, Address::from_view(repeat(0x35, 20)));
    EXPECT_EQ(t->value, u256{1'000'000'000'000'000'000ull});
    EXPECT_TRUE(t->data.empty());
    EXPECT_TRUE(t->access_list.empty());
    EXPECT_FALSE(t->y_parity);  // v = 37 = 1 * 2 + 35 + 0
    EXPECT_EQ(t->r, load_be(BytesView{kR}.subspan(1)));
    EXPECT_EQ(t->s, load_be(BytesView{kS}.subspan(1)));
    // The calldata view points into the encoding (no copy).
    EXPECT_GE(t->data.data(), enc.data());
    EXPECT_LE(t->data.data(), enc.data() + enc.size());
}

TEST(tx_decode, dynamic_fee_fields) {
    const Bytes enc = typed(2, dynamic_fee_items());
    const auto t = tx::decode(enc);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->type, tx::TxType::dynamic_fee);
    EXPECT_EQ(t->chain_id, std::optional<uint64_t>{1});
    EXPECT_EQ(t->max_priority_fee_per_gas, u256{1'000'000'000});
    EXPECT_EQ(t->max_fee_per_gas, u256{20'000'000'000ull});
    EXPECT_EQ(Bytes(t->data.begin(), t->data.end()), "010203"_hex);
    ASSERT_EQ(t->access_list.size(), 1u);
    EXPECT_EQ(t->access_list[0].address, Address::from_view(repeat(0xaa, 20)));
    ASSERT_EQ(t->access_list[0].storage_keys.size(), 2u);
    EXPECT_EQ(t->access_list[0].storage_keys[1], Hash::from_view(repeat(0x11, 32)));
    EXPECT_TRUE(t->y_parity);
    EXPECT_EQ(tx::encode(*t), enc);
}

TEST(tx_decode, type1_gas_price_fills_both_fee_fields) {
    const auto t = tx::decode(typed(1, access_list_items()));
    ASSERT_TRUE(t);
    EXPECT_EQ(t->type, tx::TxType::access_list);
    EXPECT_EQ(t->gas_price(), u256{20'000'000'000ull});
    EXPECT_EQ(t->max_priority_fee_per_gas, t->max_fee_per_gas);
    EXPECT_FALSE(t->y_parity);
}

TEST(tx_decode, creation_has_no_to) {
    const auto t = tx::decode(legacy_with(l_to, "80"_hex));
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->is_creation());
    EXPECT_FALSE(t->to.has_value());
}

// v values at the edges of the valid ranges: 27/28 (no chain id), 35/36 (chain id 0, which
// validate() then rejects for any real chain), 37/38 (chain id 1).
TEST(tx_decode, legacy_v_boundaries) {
    struct Case {
        uint64_t v;
        std::optional<uint64_t> chain_id;
        bool y_parity;
    };
    for (const Case c :
         {Case{27, std::nullopt, false}, Case{28, std::nullopt, true}, Case{35, 0, false},
          Case{36, 0, true}, Case{37, 1, false}, Case{38, 1, true}}) {
        Bytes item;
        rlp::encode(item, c.v);
        const auto t = tx::decode(legacy_with(l_v, item));
        ASSERT_TRUE(t) << "v = " << c.v;
        EXPECT_EQ(t->chain_id, c.chain_id) << "v = " << c.v;
        EXPECT_EQ(t->y_parity, c.y_parity) << "v = " << c.v;
    }
    // The largest chain id whose v still decodes: 2^64 - 1 (v = 2^65 + 33 + parity).
    const auto t = tx::decode(legacy_with(l_v, str(cat({"02"_hex, repeat(0, 7), "22"_hex}))));
    ASSERT_TRUE(t);
    EXPECT_EQ(t->chain_id, std::optional<uint64_t>{UINT64_MAX});
    EXPECT_TRUE(t->y_parity);
}

TEST(tx_decode, describe_strings) {
    EXPECT_EQ(tx::describe(rlp_err(Field::nonce, RlpError::leading_zero)), "nonce: leading_zero");
    EXPECT_EQ(tx::describe(rlp_err(Field::envelope, RlpError::trailing_bytes)),
              "envelope: trailing_bytes");
    EXPECT_EQ(tx::describe(rlp_err(Field::access_list, RlpError::unexpected_length)),
              "access_list: unexpected_length");
    EXPECT_EQ(tx::describe(tx_err(TxErrorCode::unsupported_type, Field::envelope)),
              "envelope: unsupported_type");
    EXPECT_EQ(tx::describe(tx_err(TxErrorCode::too_many_fields)), "too_many_fields");
    EXPECT_EQ(tx::describe(tx_err(TxErrorCode::too_few_fields, Field::s)), "s: too_few_fields");
    EXPECT_EQ(tx::describe(tx_err(TxErrorCode::invalid_v, Field::v)), "v: invalid_v");
    EXPECT_EQ(tx::describe(tx_err(TxErrorCode::high_s, Field::s)), "s: high_s");
    EXPECT_EQ(tx::describe(tx_err(TxErrorCode::recovery_failed)), "recovery_failed");
    // What a real decode reports, end to end.
    const auto e = tx::decode(legacy_with(l_gas_limit, "83005208"_hex));
    ASSERT_FALSE(e);
    EXPECT_EQ(tx::describe(e.error()), "gas_limit: leading_zero");
}

TEST(tx_decode, error_names_are_distinct) {
    std::vector<std::string_view> names;
    for (int c = 0; c <= static_cast<int>(TxErrorCode::init_code_too_large); ++c) {
        const auto name = tx::to_string(static_cast<TxErrorCode>(c));
        EXPECT_NE(name, "unknown") << c;
        EXPECT_EQ(std::find(names.begin(), names.end(), name), names.end()) << name;
        names.push_back(name);
    }
    std::vector<std::string_view> fields;
    for (int f = 0; f <= static_cast<int>(Field::s); ++f) {
        const auto name = tx::to_string(static_cast<Field>(f));
        EXPECT_NE(name, "unknown") << f;
        EXPECT_EQ(std::find(fields.begin(), fields.end(), name), fields.end()) << name;
        fields.push_back(name);
    }
}
