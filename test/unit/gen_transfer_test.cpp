// gen::signed_transfer, the one signed transfer of the tests and the benchmarks: what is asked
// for is what is signed, by the key asked for.

#include <barrel/gen/transfer.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/tx/transaction.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace barrel {
namespace {

const Address kBob = [] {
    Address a;
    a[0] = 0xb0;
    return a;
}();

TEST(gen_transfer, an_eip1559_transfer_is_its_fields_signed_by_its_key) {
    const Hash key = gen::account_key(3, 0);
    const Bytes raw = gen::signed_transfer(
        {.key = key, .to = kBob, .nonce = 7, .chain_id = 5, .fee_cap = 30, .tip = 4, .value = 9});
    const auto t = tx::decode(raw);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->type, tx::TxType::dynamic_fee);
    EXPECT_EQ(t->chain_id, 5u);
    EXPECT_EQ(t->nonce, 7u);
    EXPECT_EQ(t->max_fee_per_gas, 30);
    EXPECT_EQ(t->max_priority_fee_per_gas, 4);
    EXPECT_EQ(t->gas_limit, 21'000u);
    EXPECT_EQ(t->to, kBob);
    EXPECT_EQ(t->value, 9);
    const auto sender = tx::recover_sender(*t, tx::signing_hash(*t));
    ASSERT_TRUE(sender.has_value());
    EXPECT_EQ(*sender, *tx::address_of(key));
    EXPECT_EQ(tx::encode(gen::sign_transfer({.key = key,
                                             .to = kBob,
                                             .nonce = 7,
                                             .chain_id = 5,
                                             .fee_cap = 30,
                                             .tip = 4,
                                             .value = 9})),
              raw);
}

TEST(gen_transfer, a_legacy_transfer_pays_its_fee_cap_as_both_prices) {
    const auto protected_tx = tx::decode(gen::signed_transfer(
        {.key = gen::account_key(3, 1), .to = kBob, .type = tx::TxType::legacy, .fee_cap = 8}));
    ASSERT_TRUE(protected_tx.has_value());
    EXPECT_EQ(protected_tx->type, tx::TxType::legacy);
    EXPECT_EQ(protected_tx->chain_id, 1u);
    EXPECT_EQ(protected_tx->max_fee_per_gas, 8);
    EXPECT_EQ(protected_tx->max_priority_fee_per_gas, 8);
    const auto unprotected = tx::decode(gen::signed_transfer({.key = gen::account_key(3, 1),
                                                              .to = kBob,
                                                              .type = tx::TxType::legacy,
                                                              .chain_id = std::nullopt}));
    ASSERT_TRUE(unprotected.has_value());
    EXPECT_FALSE(unprotected->chain_id.has_value());
}

TEST(gen_transfer, a_key_that_is_no_secret_is_refused) {
    EXPECT_THROW((void)gen::signed_transfer({.key = Hash{}, .to = kBob}), std::invalid_argument);
}

}  // namespace
}  // namespace barrel
