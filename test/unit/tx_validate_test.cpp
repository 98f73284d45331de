// tx::validate (the stateless rules), tx::intrinsic_gas and the effective gas price and tip: one
// table row per rule, each with the failing value and, beside it, the nearest value that passes,
// so an off-by-one in either direction shows up.

#include <barrel/core/hex.hpp>
#include <barrel/tx/transaction.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

using namespace barrel;
using namespace barrel::literals;
using tx::Field;
using tx::Transaction;
using tx::TxError;
using tx::TxErrorCode;
using tx::TxType;

namespace {

const u256 kN{
    "0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141"};  // secp256k1 order
const u256 kHalfOfN = kN / 2;
const u256 kU256Max = ~u256{0};
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

/// The EIP-155 example transaction (chain id 1): valid as it is.
Transaction legacy_base() {
    static const Bytes enc =
        "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83"_hex;
    auto t = tx::decode(enc);
    if (!t) std::abort();
    return *t;
}

/// A type-2 transfer on chain 1 with in-range signature scalars.
Transaction dynamic_fee_base() {
    Transaction t = legacy_base();
    t.type = TxType::dynamic_fee;
    t.max_priority_fee_per_gas = 1'000'000'000;
    t.max_fee_per_gas = 30'000'000'000ull;
    return t;
}

/// Backing storage for calldata views: lives for the whole test program.
BytesView bytes_of(size_t n, uint8_t fill) {
    static std::vector<std::unique_ptr<Bytes>> storage;
    storage.push_back(std::make_unique<Bytes>(n, fill));
    return *storage.back();
}
BytesView keep(Bytes b) {
    static std::vector<std::unique_ptr<Bytes>> storage;
    storage.push_back(std::make_unique<Bytes>(std::move(b)));
    return *storage.back();
}

Transaction creation_base(size_t init_code_size) {
    Transaction t = legacy_base();
    t.to.reset();
    t.data = bytes_of(init_code_size, 0x60);
    t.gas_limit = tx::intrinsic_gas(t);
    return t;
}

struct RuleRow {
    std::string name;
    Transaction tx;
    uint64_t chain_id{1};
    std::optional<TxError> expected;  ///< nullopt: must pass
};

[[maybe_unused]] void PrintTo(const RuleRow& row, std::ostream* os) { *os << row.name; }

TxError err(TxErrorCode code, Field field) { return {code, field, {}}; }

std::vector<RuleRow> rule_rows() {
    std::vector<RuleRow> t;
    const auto add = [&](std::string name, Transaction tx, std::optional<TxError> expected,
                         uint64_t chain_id = 1) {
        t.push_back({std::move(name), std::move(tx), chain_id, expected});
    };
    const auto with = [](Transaction tx, auto&& change) {
        change(tx);
        return tx;
    };

    add("base_legacy_ok", legacy_base(), std::nullopt);
    add("base_dynamic_fee_ok", dynamic_fee_base(), std::nullopt);

    // --- signature scalars -------------------------------------------------------------------
    add("r_zero", with(legacy_base(), [](auto& x) { x.r = 0; }),
        err(TxErrorCode::invalid_signature, Field::r));
    add("s_zero", with(legacy_base(), [](auto& x) { x.s = 0; }),
        err(TxErrorCode::invalid_signature, Field::s));
    add("r_n", with(legacy_base(), [](auto& x) { x.r = kN; }),
        err(TxErrorCode::invalid_signature, Field::r));
    add("r_max", with(legacy_base(), [](auto& x) { x.r = kU256Max; }),
        err(TxErrorCode::invalid_signature, Field::r));
    add("r_n_minus_1_ok", with(legacy_base(), [](auto& x) { x.r = kN - 1; }), std::nullopt);
    add("r_one_ok", with(legacy_base(), [](auto& x) { x.r = 1; }), std::nullopt);
    // s = n is out of range (invalid_signature), which wins over its also being above n/2.
    add("s_n", with(legacy_base(), [](auto& x) { x.s = kN; }),
        err(TxErrorCode::invalid_signature, Field::s));
    add("s_n_minus_1_high", with(legacy_base(), [](auto& x) { x.s = kN - 1; }),
        err(TxErrorCode::high_s, Field::s));
    add("s_half_n_plus_1_high", with(legacy_base(), [](auto& x) { x.s = kHalfOfN + 1; }),
        err(TxErrorCode::high_s, Field::s));
    add("s_half_n_ok", with(legacy_base(), [](auto& x) { x.s = kHalfOfN; }), std::nullopt);
    add("s_one_ok", with(legacy_base(), [](auto& x) { x.s = 1; }), std::nullopt);
    add("s_half_n_plus_1_high_typed", with(dynamic_fee_base(), [](auto& x) { x.s = kHalfOfN + 1; }),
        err(TxErrorCode::high_s, Field::s));

    // --- chain id ----------------------------------------------------------------------------
    add("wrong_chain_id_legacy", legacy_base(), err(TxErrorCode::wrong_chain_id, Field::chain_id),
        56);
    add("wrong_chain_id_typed", with(dynamic_fee_base(), [](auto& x) { x.chain_id = 5; }),
        err(TxErrorCode::wrong_chain_id, Field::chain_id));
    add("chain_id_zero_rejected_on_chain_1", with(legacy_base(), [](auto& x) { x.chain_id = 0; }),
        err(TxErrorCode::wrong_chain_id, Field::chain_id));
    add("large_chain_id_ok", with(dynamic_fee_base(), [](auto& x) { x.chain_id = kMaxU64; }),
        std::nullopt, kMaxU64);
    for (uint64_t chain : {uint64_t{1}, uint64_t{56}, uint64_t{1} << 63}) {
        add("pre_eip155_any_chain_" + std::to_string(chain),
            with(legacy_base(), [](auto& x) { x.chain_id.reset(); }), std::nullopt, chain);
    }

    // --- nonce (EIP-2681) --------------------------------------------------------------------
    add("nonce_max", with(legacy_base(), [](auto& x) { x.nonce = kMaxU64; }),
        err(TxErrorCode::nonce_too_big, Field::nonce));
    add("nonce_max_minus_1_ok", with(legacy_base(), [](auto& x) { x.nonce = kMaxU64 - 1; }),
        std::nullopt);

    // --- intrinsic gas -----------------------------------------------------------------------
    const auto gas_rows = [&](const std::string& what, Transaction base) {
        const uint64_t intrinsic = tx::intrinsic_gas(base);
        add("intrinsic_gas_minus_1_" + what,
            with(base, [&](auto& x) { x.gas_limit = intrinsic - 1; }),
            err(TxErrorCode::intrinsic_gas_too_low, Field::gas_limit));
        add("intrinsic_gas_exact_" + what, with(base, [&](auto& x) { x.gas_limit = intrinsic; }),
            std::nullopt);
    };
    gas_rows("transfer", legacy_base());
    gas_rows("calldata", with(legacy_base(), [](auto& x) { x.data = keep("00ff0000ab"_hex); }));
    gas_rows("creation", creation_base(100));
    gas_rows("access_list", with(dynamic_fee_base(), [](auto& x) {
                 x.access_list = {{Address{}, {Hash{}, Hash{}}}, {Address{}, {}}};
             }));
    add("gas_limit_zero", with(legacy_base(), [](auto& x) { x.gas_limit = 0; }),
        err(TxErrorCode::intrinsic_gas_too_low, Field::gas_limit));

    // --- gas limit × fee cap must fit 256 bits -----------------------------------------------
    const u256 largest_price = kU256Max / 21'000;  // 21000 × this fits, 21000 × (this + 1) does not
    add("fee_cap_overflow_legacy",
        with(legacy_base(),
             [&](auto& x) { x.max_fee_per_gas = x.max_priority_fee_per_gas = largest_price + 1; }),
        err(TxErrorCode::fee_cap_overflow, Field::gas_limit));
    add("fee_cap_largest_ok_legacy",
        with(legacy_base(),
             [&](auto& x) { x.max_fee_per_gas = x.max_priority_fee_per_gas = largest_price; }),
        std::nullopt);
    add("fee_cap_overflow_max_price",
        with(legacy_base(),
             [&](auto& x) { x.max_fee_per_gas = x.max_priority_fee_per_gas = kU256Max; }),
        err(TxErrorCode::fee_cap_overflow, Field::gas_limit));
    add("fee_cap_overflow_typed",
        with(dynamic_fee_base(), [&](auto& x) { x.max_fee_per_gas = largest_price + 1; }),
        err(TxErrorCode::fee_cap_overflow, Field::gas_limit));
    add("fee_cap_largest_ok_typed",
        with(dynamic_fee_base(), [&](auto& x) { x.max_fee_per_gas = largest_price; }),
        std::nullopt);
    add("fee_cap_max_gas_limit_overflow",
        with(dynamic_fee_base(),
             [&](auto& x) {
                 x.gas_limit = kMaxU64 - 1;
                 x.max_fee_per_gas = (u256{1} << 193);
             }),
        err(TxErrorCode::fee_cap_overflow, Field::gas_limit));

    // --- priority fee ≤ fee cap (EIP-1559) ---------------------------------------------------
    add("priority_fee_above_cap",
        with(dynamic_fee_base(),
             [](auto& x) { x.max_priority_fee_per_gas = x.max_fee_per_gas + 1; }),
        err(TxErrorCode::priority_fee_above_cap, Field::max_priority_fee_per_gas));
    add("priority_fee_equal_cap_ok",
        with(dynamic_fee_base(), [](auto& x) { x.max_priority_fee_per_gas = x.max_fee_per_gas; }),
        std::nullopt);
    add("priority_fee_zero_ok",
        with(dynamic_fee_base(), [](auto& x) { x.max_priority_fee_per_gas = 0; }), std::nullopt);

    // --- init code size (EIP-3860) -----------------------------------------------------------
    add("init_code_49153", creation_base(tx::kMaxInitCodeSize + 1),
        err(TxErrorCode::init_code_too_large, Field::data));
    add("init_code_49152_ok", creation_base(tx::kMaxInitCodeSize), std::nullopt);
    add("calldata_49153_not_creation_ok",
        with(legacy_base(),
             [](auto& x) {
                 x.data = bytes_of(tx::kMaxInitCodeSize + 1, 0x60);
                 x.gas_limit = tx::intrinsic_gas(x);
             }),
        std::nullopt);
    return t;
}

std::string rule_row_name(const testing::TestParamInfo<RuleRow>& info) { return info.param.name; }

class tx_validate_rule : public testing::TestWithParam<RuleRow> {};

}  // namespace

TEST_P(tx_validate_rule, check) {
    const RuleRow& row = GetParam();
    const auto result = tx::validate(row.tx, row.chain_id);
    if (!row.expected) {
        EXPECT_TRUE(result) << row.name << ": " << tx::describe(result.error());
        return;
    }
    ASSERT_FALSE(result) << row.name << ": passed, expected " << tx::describe(*row.expected);
    EXPECT_EQ(result.error(), *row.expected)
        << tx::describe(result.error()) << " != " << tx::describe(*row.expected);
}

INSTANTIATE_TEST_SUITE_P(table, tx_validate_rule, testing::ValuesIn(rule_rows()), rule_row_name);

TEST(tx_validate, table_covers_every_validate_error) {
    std::vector<TxErrorCode> seen;
    for (const auto& row : rule_rows())
        if (row.expected) seen.push_back(row.expected->code);
    for (auto code : {TxErrorCode::invalid_signature, TxErrorCode::high_s,
                      TxErrorCode::wrong_chain_id, TxErrorCode::nonce_too_big,
                      TxErrorCode::intrinsic_gas_too_low, TxErrorCode::fee_cap_overflow,
                      TxErrorCode::priority_fee_above_cap, TxErrorCode::init_code_too_large}) {
        EXPECT_NE(std::find(seen.begin(), seen.end(), code), seen.end()) << tx::to_string(code);
    }
}

// validate() checks ranges only; r = n - 1 passes it but is not the x of a curve point, so
// recovery (the next step) must fail (cf. ttRSValue/TransactionWithRvalueHigh).
TEST(tx_validate, in_range_r_without_point_fails_recovery) {
    Transaction t = legacy_base();
    t.r = kN - 1;
    ASSERT_TRUE(tx::validate(t, 1));
    const auto sender = tx::recover_sender(t, tx::signing_hash(t));
    ASSERT_FALSE(sender);
    EXPECT_EQ(sender.error().code, TxErrorCode::recovery_failed);
}

TEST(tx_validate, recover_rejects_out_of_range_scalars) {
    Transaction t = legacy_base();
    t.r = kN;
    const auto sender = tx::recover_sender(t, tx::signing_hash(t));
    ASSERT_FALSE(sender);
    EXPECT_EQ(sender.error().code, TxErrorCode::invalid_signature);
}

TEST(tx_intrinsic_gas, transfer) { EXPECT_EQ(tx::intrinsic_gas(legacy_base()), 21'000u); }

TEST(tx_intrinsic_gas, calldata_zero_and_non_zero_bytes) {
    Transaction t = legacy_base();
    const Bytes data = "00010002000000ff"_hex;  // 5 zero bytes, 3 non-zero
    t.data = data;
    EXPECT_EQ(tx::intrinsic_gas(t), 21'000u + 5 * 4 + 3 * 16);
    t.data = bytes_of(1000, 0);
    EXPECT_EQ(tx::intrinsic_gas(t), 21'000u + 4'000);
    t.data = bytes_of(1000, 1);
    EXPECT_EQ(tx::intrinsic_gas(t), 21'000u + 16'000);
}

TEST(tx_intrinsic_gas, creation) {
    Transaction t = legacy_base();
    t.to.reset();
    EXPECT_EQ(tx::intrinsic_gas(t), 53'000u);
    // Init code pays per byte like calldata plus 2 per started 32-byte word (EIP-3860).
    const Bytes one_word(32, 0x60);
    t.data = one_word;
    EXPECT_EQ(tx::intrinsic_gas(t), 53'000u + 32 * 16 + 2);
    const Bytes word_and_one = [] {
        Bytes b(33, 0x60);
        b[32] = 0;
        return b;
    }();
    t.data = word_and_one;
    EXPECT_EQ(tx::intrinsic_gas(t), 53'000u + 32 * 16 + 4 + 2 * 2);
    t.data = bytes_of(tx::kMaxInitCodeSize, 0x60);
    EXPECT_EQ(tx::intrinsic_gas(t), 53'000u + 49'152u * 16 + 2 * 1'536);
}

TEST(tx_intrinsic_gas, access_list) {
    Transaction t = dynamic_fee_base();
    t.access_list = {{Address{}, {}}};
    EXPECT_EQ(tx::intrinsic_gas(t), 21'000u + 2'400);
    t.access_list = {{Address{}, {Hash{}, Hash{}, Hash{}}}, {Address{}, {Hash{}}}};
    EXPECT_EQ(tx::intrinsic_gas(t), 21'000u + 2 * 2'400 + 4 * 1'900);
    // Duplicates are charged again, as Ethereum does.
    t.access_list.push_back(t.access_list.front());
    EXPECT_EQ(tx::intrinsic_gas(t), 21'000u + 3 * 2'400 + 7 * 1'900);
}

TEST(tx_intrinsic_gas, everything_together) {
    Transaction t = dynamic_fee_base();
    t.to.reset();
    const Bytes init = "6000600060006000f0"_hex;  // 9 bytes, 4 of them zero
    t.data = init;
    t.access_list = {{Address{}, {Hash{}}}};
    EXPECT_EQ(tx::intrinsic_gas(t), 53'000u + 4 * 4 + 5 * 16 + 2 + 2'400 + 1'900);
}

// The effective price and tip, at and around each boundary: the gas price alone for legacy and
// access-list transactions; base fee + priority fee capped by the max fee for EIP-1559.
TEST(tx_effective_price, legacy_pays_its_gas_price_whatever_the_base_fee) {
    const Transaction t = legacy_base();  // gas price 20 gwei
    const u256 price = t.max_fee_per_gas;
    EXPECT_EQ(tx::effective_gas_price(t, 0), price);
    EXPECT_EQ(tx::effective_tip(t, 0), price);
    EXPECT_EQ(tx::effective_tip(t, price - 1), u256{1});
    EXPECT_EQ(tx::effective_tip(t, price), u256{0});
    EXPECT_EQ(tx::effective_tip(t, price + 1), u256{0});  // a pool's base-fee check comes first
    Transaction access_list = t;
    access_list.type = TxType::access_list;
    EXPECT_EQ(tx::effective_gas_price(access_list, 7), price);
    EXPECT_EQ(tx::effective_tip(access_list, 7), price - 7);
}

TEST(tx_effective_price, dynamic_fee_pays_base_plus_tip_up_to_its_cap) {
    const Transaction t = dynamic_fee_base();  // tip 1 gwei, cap 30 gwei
    const u256 tip = t.max_priority_fee_per_gas;
    const u256 cap = t.max_fee_per_gas;
    EXPECT_EQ(tx::effective_gas_price(t, 0), tip);
    EXPECT_EQ(tx::effective_tip(t, 0), tip);
    // Below the cap the whole tip is paid; from cap − tip on the cap binds.
    EXPECT_EQ(tx::effective_gas_price(t, cap - tip - 1), cap - 1);
    EXPECT_EQ(tx::effective_tip(t, cap - tip - 1), tip);
    EXPECT_EQ(tx::effective_gas_price(t, cap - tip), cap);
    EXPECT_EQ(tx::effective_tip(t, cap - tip), tip);
    EXPECT_EQ(tx::effective_gas_price(t, cap - tip + 1), cap);
    EXPECT_EQ(tx::effective_tip(t, cap - tip + 1), tip - 1);
    EXPECT_EQ(tx::effective_tip(t, cap), u256{0});
    EXPECT_EQ(tx::effective_tip(t, cap + 1), u256{0});
}

TEST(tx_effective_price, a_sum_past_256_bits_pays_the_cap) {
    Transaction t = dynamic_fee_base();
    t.max_priority_fee_per_gas = kU256Max - 1;
    t.max_fee_per_gas = kU256Max - 1;
    // base fee + tip wraps around: the cap, not the wrapped sum.
    EXPECT_EQ(tx::effective_gas_price(t, 5), kU256Max - 1);
    EXPECT_EQ(tx::effective_tip(t, 5), kU256Max - 6);
}
