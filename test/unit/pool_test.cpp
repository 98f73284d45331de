// The transaction pool: admission (go-ethereum's rejection messages), pending and queued,
// replacement, bounds, block selection and the update after a committed block.

#include <barrel/block/sender_cache.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/state/state.hpp>
#include <barrel/tx/transaction.hpp>

#include "pool_fixtures.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <thread>

namespace barrel::pool {
namespace {

using namespace barrel::pool::testing;

TEST_F(PoolTest, admits_a_transfer_and_records_its_sender_in_the_cache) {
    const Bytes raw = signed_tx({});
    const auto r = pool().admit_one(raw);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->hash, hash_of(raw));
    EXPECT_EQ(r->sender, address_of_key(1));
    EXPECT_TRUE(r->pending);
    EXPECT_FALSE(r->replaced);
    const auto found = pool().find(r->hash, kLatest);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->encoding, raw);
    EXPECT_EQ(found->sender, address_of_key(1));
    EXPECT_EQ(found->cost, cost({}));
    EXPECT_EQ(pool().status().pending, 1u);
    EXPECT_EQ(pool().status().queued, 0u);
    EXPECT_EQ(next_nonce(address_of_key(1)), 1u);
    EXPECT_EQ(next_nonce(address_of_key(2)), 0u);  // the account's
    // Admission recovered it once; the verify stage will find it.
    EXPECT_EQ(cache.find(r->hash), address_of_key(1));
}

TEST_F(PoolTest, a_sender_the_cache_holds_is_not_recovered_again) {
    // A block's verify stage recovered it before the transaction's own gossip arrived. Planting
    // another funded address under the hash shows which one admission used: the cache's.
    const Bytes raw = signed_tx({});
    cache.insert(hash_of(raw), address_of_key(2));
    const auto before = cache.stats();
    const auto r = pool().admit_one(raw);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->sender, address_of_key(2));
    EXPECT_EQ(pool().find(r->hash, kLatest)->sender, address_of_key(2));
    // Admission's look is no verify-stage hit or miss: a block's "senders cached" stays its own.
    EXPECT_EQ(cache.stats().hits, before.hits);
    EXPECT_EQ(cache.stats().misses, before.misses);
}

TEST_F(PoolTest, a_gap_queues_until_it_closes) {
    EXPECT_FALSE(admit_ok({.nonce = 2}).pending);
    EXPECT_FALSE(admit_ok({.nonce = 1}).pending);
    EXPECT_EQ(pool().status().pending, 0u);
    EXPECT_EQ(pool().status().queued, 2u);
    EXPECT_EQ(next_nonce(address_of_key(1)), 0u);
    EXPECT_TRUE(admit_ok({.nonce = 0}).pending);
    EXPECT_EQ(pool().status().pending, 3u);
    EXPECT_EQ(pool().status().queued, 0u);
    EXPECT_EQ(next_nonce(address_of_key(1)), 3u);
}

TEST_F(PoolTest, rejects_with_go_ethereums_messages) {
    state.set_account(address_of_key(2), state::Account{3, u256{1'000'000}});
    EXPECT_EQ(admit_err({.key = 2, .nonce = 1}).message, "nonce too low: next nonce 3, tx nonce 1");

    state.set_account(address_of_key(3), state::Account{0, u256{1000}});
    const Rejection funds = admit_err({.key = 3});
    EXPECT_EQ(funds.code, RejectCode::insufficient_funds);
    EXPECT_EQ(funds.message,
              "insufficient funds for gas * price + value: balance 1000, tx cost 210001, "
              "overshot 209001");

    // A sender with no account has nothing.
    EXPECT_EQ(admit_err({.key = 9}).message,
              "insufficient funds for gas * price + value: balance 0, tx cost 210001, overshot "
              "210001");

    const Rejection chain = admit_err({.chain_id = 5});
    EXPECT_EQ(chain.code, RejectCode::invalid_sender);
    EXPECT_EQ(chain.message, "invalid sender: invalid chain id for signer: have 5 want 1");

    EXPECT_EQ(admit_err({.gas = 20'000}).message,
              "intrinsic gas too low: gas 20000, minimum needed 21000");
    EXPECT_EQ(admit_err({.fee_cap = 1, .tip = 2}).message,
              "max priority fee per gas higher than max fee per gas");
    EXPECT_EQ(admit_err({.gas = 300'000'000}).message, "exceeds block gas limit");

    const Bytes raw = signed_tx({});
    ASSERT_TRUE(pool().admit_one(raw).has_value());
    const Rejection known = admit_raw_err(raw);
    EXPECT_EQ(known.code, RejectCode::already_known);
    EXPECT_EQ(known.message, "already known");

    EXPECT_EQ(admit_raw_err(Bytes{0x05, 0xc0}).message, "transaction type not supported");
    EXPECT_EQ(admit_raw_err(Bytes{0xc0}).code, RejectCode::malformed);
    EXPECT_TRUE(admit_raw_err(Bytes{0xc0}).message.starts_with("rlp: "))
        << admit_raw_err(Bytes{0xc0}).message;
    EXPECT_EQ(pool().status().pending, 1u);
}

// CheckTx's admission: the hash its caller computed (and looked up) is taken as it is, the gas
// limit comes back with the admission, and a second admission of the same bytes is still refused
// as already known (by the check under the lock: the look-up before recovery is the caller's).
TEST_F(PoolTest, an_admission_with_the_callers_hash_still_refuses_a_duplicate) {
    const Bytes raw = signed_tx({.gas = 30'000});
    const Hash hash = hash_of(raw);
    const pool::AdmitResult first = pool().admit_one(raw, hash, pool::Origin::peer);
    ASSERT_TRUE(first.has_value()) << first.error().message;
    EXPECT_EQ(first->hash, hash);
    EXPECT_EQ(first->gas_limit, 30'000u);
    ASSERT_NE(pool().find(hash, UINT64_MAX), nullptr);
    EXPECT_EQ(pool().find(hash, UINT64_MAX)->origin, pool::Origin::peer);
    const pool::AdmitResult again = pool().admit_one(raw, hash, pool::Origin::peer);
    ASSERT_FALSE(again.has_value());
    EXPECT_EQ(again.error().code, RejectCode::already_known);
    EXPECT_EQ(again.error().message, "already known");
    EXPECT_EQ(pool().status().pending, 1u);
}

// Over RPC a legacy transaction signed without a chain id (pre-EIP-155) is refused as the pool
// decodes it, before every other check, as go-ethereum's RPC refuses it before its pool sees it;
// the journal and CheckTx admit it (Unprotected::accepted, the default).
TEST_F(PoolTest, an_unprotected_transaction_is_refused_only_where_asked_and_before_other_checks) {
    const auto unprotected = [&](uint64_t nonce, uint8_t key = 1) {
        return gen::signed_transfer({.key = key_of(key),
                                     .to = recipient(),
                                     .nonce = nonce,
                                     .type = tx::TxType::legacy,
                                     .chain_id = std::nullopt,
                                     .fee_cap = 10,
                                     .value = 1});
    };
    const std::string words = "only replay-protected (EIP-155) transactions allowed over RPC";
    const auto refused = [&](const Bytes& raw) {
        const AdmitResult r = pool().admit_one(raw, Origin::local, Unprotected::refused);
        EXPECT_FALSE(r.has_value());
        return r ? Rejection{} : r.error();
    };
    const Bytes raw = unprotected(0);
    ASSERT_FALSE(tx::decode(raw).value().chain_id.has_value());
    EXPECT_EQ(refused(raw).code, RejectCode::unprotected);
    EXPECT_EQ(refused(raw).message, words);
    EXPECT_EQ(pool().status().pending, 0u);
    EXPECT_EQ(cache.find(hash_of(raw)), std::nullopt);  // refused before recovery
    // Before the stateless and stateful rules: a sender with nothing, a nonce gap far too big.
    EXPECT_EQ(refused(unprotected(0, 9)).code, RejectCode::unprotected);
    EXPECT_EQ(refused(unprotected(100'000)).code, RejectCode::unprotected);
    // Protected ones pass, legacy with EIP-155 and typed alike, in the same batch.
    const Bytes eip155 = signed_tx({.nonce = 0, .type = tx::TxType::legacy});
    const Bytes typed = signed_tx({.nonce = 1});
    const std::vector<BytesView> batch{raw, eip155, typed};
    const auto results = pool().admit(batch, Origin::local, {}, Unprotected::refused);
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results[0].error().code, RejectCode::unprotected);
    EXPECT_TRUE(results[1].has_value()) << results[1].error().message;
    EXPECT_TRUE(results[2].has_value()) << results[2].error().message;
    // Not decoding is still malformed, whatever the rule.
    EXPECT_EQ(refused(Bytes{0xc0}).code, RejectCode::malformed);
    // Accepted where not refused (the journal, a peer's gossip): nonce 2 follows the two above.
    const Bytes next = unprotected(2);
    ASSERT_TRUE(pool().admit_one(next).has_value());
    // Already pooled, yet refused over RPC with the protection's words, as go-ethereum answers.
    EXPECT_EQ(refused(next).code, RejectCode::unprotected);
    EXPECT_EQ(admit_raw_err(next).code, RejectCode::already_known);
    EXPECT_EQ(pool().status().pending, 3u);
}

TEST_F(PoolTest, a_high_s_signature_is_an_invalid_sender) {
    const Bytes raw = signed_tx({});
    auto t = tx::decode(raw).value();
    // n − s: the same signature with the other s, which EIP-2 forbids.
    const u256 n{"0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141"};
    t.s = n - t.s;
    t.y_parity = !t.y_parity;
    const Rejection r = admit_raw_err(tx::encode(t));
    EXPECT_EQ(r.code, RejectCode::invalid_sender);
    EXPECT_EQ(r.message, "invalid sender: invalid transaction v, r, s values");
}

TEST_F(PoolTest, a_fee_cap_below_the_base_fee_and_an_oversized_transaction_are_refused) {
    config.base_fee = 20;
    config.max_transaction_bytes = 200;
    EXPECT_EQ(admit_err({.fee_cap = 10}).message,
              "max fee per gas less than block base fee: maxFeePerGas: 10, baseFee: 20");
    // Every type: a legacy or EIP-2930 gas price below the base fee could never be included
    // (the free transactions of issue 29's finding 4).
    const Rejection legacy = admit_err({.type = tx::TxType::legacy, .fee_cap = 10});
    EXPECT_EQ(legacy.code, RejectCode::fee_cap_below_base_fee);
    EXPECT_EQ(legacy.message,
              "max fee per gas less than block base fee: maxFeePerGas: 10, baseFee: 20");
    EXPECT_EQ(admit_err({.type = tx::TxType::access_list, .fee_cap = 19}).message,
              "max fee per gas less than block base fee: maxFeePerGas: 19, baseFee: 20");
    EXPECT_EQ(admit_err({.type = tx::TxType::legacy, .fee_cap = 0}).message,
              "max fee per gas less than block base fee: maxFeePerGas: 0, baseFee: 20");
    // At the base fee, each type is admitted.
    for (const auto type : {tx::TxType::legacy, tx::TxType::access_list, tx::TxType::dynamic_fee})
        EXPECT_TRUE(
            pool().admit_one(signed_tx({.key = static_cast<uint8_t>(2 + static_cast<int>(type)),
                                        .type = type,
                                        .fee_cap = 20,
                                        .tip = 0})));
    Bytes big(201, 0);
    EXPECT_EQ(admit_raw_err(big).message, "oversized data: transaction size 201, limit 200");
}

TEST_F(PoolTest, a_senders_transactions_together_must_fit_its_balance) {
    state.set_account(address_of_key(2), state::Account{0, cost({}) * 2});
    admit_ok({.key = 2, .nonce = 0});
    admit_ok({.key = 2, .nonce = 1});
    EXPECT_EQ(admit_err({.key = 2, .nonce = 2}).message,
              "insufficient funds for gas * price + value: balance 420002, queued cost 420002, "
              "tx cost 210001, overshot 210001");
    // A replacement that costs more than the one it replaces must fit too.
    EXPECT_EQ(admit_err({.key = 2, .nonce = 1, .fee_cap = 11, .tip = 3}).message,
              "insufficient funds for gas * price + value: balance 420002, queued cost 420002, "
              "tx bumped 21000, overshot 21000");
}

TEST_F(PoolTest, a_replacement_must_raise_both_fee_caps_by_ten_percent) {
    const Admitted first = admit_ok({.nonce = 0, .fee_cap = 100, .tip = 10});
    auto underpriced = [&](u256 fee_cap, u256 tip) {
        // value 2: a different transaction even where the fees are the same
        const Rejection r = admit_err({.nonce = 0, .fee_cap = fee_cap, .tip = tip, .value = 2});
        EXPECT_EQ(r.code, RejectCode::replacement_underpriced) << fee_cap << " " << tip;
        EXPECT_EQ(r.message, "replacement transaction underpriced");
    };
    underpriced(100, 10);  // the same fees
    underpriced(109, 11);  // fee cap +9%
    underpriced(200, 10);  // tip not raised
    underpriced(110, 10);
    const Admitted second = admit_ok({.nonce = 0, .fee_cap = 110, .tip = 11});
    EXPECT_TRUE(second.replaced);
    EXPECT_TRUE(second.pending);
    EXPECT_EQ(pool().find(first.hash, kLatest), nullptr);
    EXPECT_NE(pool().find(second.hash, kLatest), nullptr);
    EXPECT_EQ(pool().status().pending, 1u);
}

TEST_F(PoolTest, the_pool_and_each_sender_are_bounded) {
    config.max_per_sender = 2;
    config.max_pending = 3;
    admit_ok({.key = 1, .nonce = 0});
    admit_ok({.key = 1, .nonce = 1});
    const Rejection account = admit_err({.key = 1, .nonce = 2});
    EXPECT_EQ(account.code, RejectCode::account_limit);
    EXPECT_EQ(account.message, "account limit exceeded: pooled 2 txs");
    // A replacement takes no new slot.
    admit_ok({.key = 1, .nonce = 1, .fee_cap = 20, .tip = 4});
    admit_ok({.key = 2, .nonce = 0});
    const Rejection full = admit_err({.key = 3, .nonce = 0});
    EXPECT_EQ(full.code, RejectCode::pool_full);
    EXPECT_EQ(full.message, "txpool is full");
}

TEST_F(PoolTest, a_batch_is_checked_in_its_order) {
    std::vector<Bytes> raws;
    for (uint64_t n = 0; n < 5; ++n) raws.push_back(signed_tx({.key = 3, .nonce = n}));
    raws.push_back(raws[2]);  // a duplicate inside the batch
    std::vector<BytesView> views{raws.begin(), raws.end()};
    const auto results = pool().admit(views);
    ASSERT_EQ(results.size(), 6u);
    for (size_t i = 0; i < 5; ++i) {
        ASSERT_TRUE(results[i].has_value()) << i << ": " << results[i].error().message;
        EXPECT_TRUE(results[i]->pending);
    }
    ASSERT_FALSE(results[5].has_value());
    EXPECT_EQ(results[5].error().message, "already known");
    EXPECT_EQ(next_nonce(address_of_key(3)), 5u);
}

TEST_F(PoolTest, take_orders_by_tip_then_sender_and_each_sender_by_nonce) {
    admit_ok({.key = 1, .nonce = 0, .fee_cap = 10, .tip = 1});
    admit_ok({.key = 1, .nonce = 1, .fee_cap = 10, .tip = 9});
    admit_ok({.key = 2, .nonce = 0, .fee_cap = 10, .tip = 5});
    admit_ok({.key = 3, .nonce = 0, .fee_cap = 10, .tip = 5});
    admit_ok({.key = 4, .nonce = 1});  // queued: never taken
    const Selection s = pool().take(100, 1'000'000);
    ASSERT_EQ(s.txs.size(), 4u);
    EXPECT_EQ(s.gas, 4u * 21'000);
    // Keys 2 and 3 tie on tip and arrival: the lower address goes first.
    const bool two_first = address_of_key(2) < address_of_key(3);
    EXPECT_EQ(s.txs[0]->sender, address_of_key(two_first ? 2 : 3));
    EXPECT_EQ(s.txs[1]->sender, address_of_key(two_first ? 3 : 2));
    EXPECT_EQ(s.txs[2]->sender, address_of_key(1));
    EXPECT_EQ(s.txs[2]->tx.nonce, 0u);
    EXPECT_EQ(s.txs[3]->tx.nonce, 1u);
    // Taken transactions are not taken again, but are still found.
    EXPECT_TRUE(pool().take(100, 1'000'000).txs.empty());
    EXPECT_NE(pool().find(s.txs[0]->hash, kLatest), nullptr);
    // A nonce in a block being built cannot be replaced.
    EXPECT_EQ(admit_err({.key = 1, .nonce = 1, .fee_cap = 100, .tip = 50}).message,
              "nonce too low: next nonce 2, tx nonce 1");
    pool().abandon_taken();
    EXPECT_EQ(pool().take(100, 1'000'000).txs.size(), 4u);
}

TEST_F(PoolTest, take_respects_the_count_and_the_gas_limit) {
    for (uint64_t n = 0; n < 5; ++n) admit_ok({.key = 1, .nonce = n});
    admit_ok({.key = 2, .nonce = 0, .tip = 1, .gas = 50'000});
    EXPECT_EQ(pool().take(3, 1'000'000).txs.size(), 3u);
    pool().abandon_taken();
    // 100,000 gas: key 1's four transactions (84,000) fit; key 2's 50,000 does not.
    const Selection s = pool().take(100, 100'000);
    EXPECT_EQ(s.txs.size(), 4u);
    EXPECT_EQ(s.gas, 84'000u);
}

/// Applies a selection to the MemoryState the way executing it would (nonce + 1, the cost
/// taken); the hashes it included.
std::vector<Hash> apply(state::MemoryState& state, const Selection& s) {
    std::vector<Hash> included;
    for (const TxPtr& t : s.txs) {
        auto account = state.find_account(t->sender).value();
        ++account.nonce;
        account.balance -= t->cost;
        state.set_account(t->sender, account);
        included.push_back(t->hash);
    }
    return included;
}

/// apply(), then tells the pool.
void commit(Pool& pool, state::MemoryState& state, const Selection& s) {
    pool.committed(next_block(), apply(state, s), {});
}

TEST_F(PoolTest, a_committed_block_removes_its_transactions_and_what_it_made_invalid) {
    for (uint64_t n = 0; n < 4; ++n) admit_ok({.key = 1, .nonce = n});
    admit_ok({.key = 2, .nonce = 0});
    const Selection first = pool().take(2, 1'000'000);
    ASSERT_EQ(first.txs.size(), 2u);
    // The next block is built while the first commits.
    const Selection second = pool().take(1, 1'000'000);
    ASSERT_EQ(second.txs.size(), 1u);
    commit(pool(), state, first);
    for (const TxPtr& t : first.txs) EXPECT_EQ(pool().find(t->hash, kLatest), nullptr);
    EXPECT_NE(pool().find(second.txs[0]->hash, kLatest), nullptr);
    EXPECT_EQ(pool().status().pending + pool().status().queued, 3u);
    // What is left is taken after the second block, not before.
    commit(pool(), state, second);
    const Selection third = pool().take(100, 1'000'000);
    EXPECT_EQ(third.txs.size(), 2u);

    // Another block spent key 1's balance (a consensus follower imports blocks it did not
    // build): its transactions the balance no longer covers leave.
    pool().abandon_taken();
    const Address a1 = address_of_key(1);
    auto account = state.find_account(a1).value();
    account.balance = cost({});  // enough for exactly one more
    state.set_account(a1, account);
    pool().committed(next_block(), {}, std::vector<Address>{a1});
    EXPECT_EQ(next_nonce(a1), account.nonce + 1);

    // And one that moved its nonce past what the pool holds drops them as too low.
    account.nonce += 5;
    state.set_account(a1, account);
    pool().committed(next_block(), {}, std::vector<Address>{a1});
    EXPECT_EQ(next_nonce(a1), account.nonce);  // nothing pooled: the account's
}

TEST_F(PoolTest, a_gap_closed_by_a_block_makes_queued_transactions_pending) {
    admit_ok({.key = 1, .nonce = 1});
    admit_ok({.key = 1, .nonce = 2});
    EXPECT_EQ(pool().status().queued, 2u);
    // Nonce 0 was included by a block the pool did not build.
    state.set_account(address_of_key(1), state::Account{1, u256{1'000'000'000}});
    pool().committed(next_block(), {}, std::vector<Address>{address_of_key(1)});
    EXPECT_EQ(pool().status().pending, 2u);
    EXPECT_EQ(pool().status().queued, 0u);
}

TEST_F(PoolTest, all_lists_each_sender_in_nonce_order_for_a_journal) {
    admit_ok({.key = 2, .nonce = 1});
    admit_ok({.key = 1, .nonce = 0});
    admit_ok({.key = 2, .nonce = 0});
    const auto txs = pool().all();
    ASSERT_EQ(txs.size(), 3u);
    EXPECT_EQ(txs[0]->sender, address_of_key(2));
    EXPECT_EQ(txs[0]->tx.nonce, 0u);
    EXPECT_EQ(txs[1]->tx.nonce, 1u);
    EXPECT_EQ(txs[2]->sender, address_of_key(1));
    // Read back in that order into a new pool, every one is admitted.
    Pool again{config, state, nullptr};
    for (const TxPtr& t : txs) EXPECT_TRUE(again.admit_one(t->encoding).has_value());
}

/// The chain a pool builds from a set of transactions, as the hashes of each block.
std::vector<std::vector<Hash>> build_chain(const Config& config, state::MemoryState state,
                                           const std::vector<Bytes>& arrivals, size_t block_txs) {
    Pool pool{config, state, nullptr};
    for (const Bytes& raw : arrivals) EXPECT_TRUE(pool.admit_one(raw).has_value());
    std::vector<std::vector<Hash>> chain;
    while (true) {
        const Selection s = pool.take(block_txs, 1'000'000'000);
        if (s.txs.empty()) break;
        std::vector<Hash> hashes;
        for (const TxPtr& t : s.txs) hashes.push_back(t->hash);
        chain.push_back(hashes);
        commit(pool, state, s);
    }
    return chain;
}

TEST_F(PoolTest, the_order_of_arrival_between_two_blocks_does_not_change_the_chain) {
    std::vector<Bytes> txs;
    std::mt19937_64 rng{7};
    for (uint8_t k = 1; k <= 8; ++k)
        for (uint64_t n = 0; n < 6; ++n)
            txs.push_back(signed_tx({.key = k, .nonce = n, .fee_cap = 100, .tip = 1 + rng() % 3}));
    const auto in_order = build_chain(config, state, txs, 7);
    size_t total = 0;
    for (const auto& b : in_order) total += b.size();
    EXPECT_EQ(total, txs.size());  // nothing lost, nothing twice
    for (int round = 0; round < 20; ++round) {
        std::shuffle(txs.begin(), txs.end(), rng);
        // Out-of-order nonces queue and then close their gaps: the result is the same.
        EXPECT_EQ(build_chain(config, state, txs, 7), in_order) << "round " << round;
    }
}

TEST_F(PoolTest, concurrent_admission_while_blocks_are_taken_and_committed) {
    // Four client threads admit every sender's transactions while a sealer thread takes and
    // commits blocks; at the end every transaction was committed exactly once. The sealer keeps
    // going until the clients are done and the pool is empty, so no interleaving is assumed.
    constexpr uint8_t kSenders = 8;
    constexpr uint64_t kPerSender = 40;
    std::vector<std::vector<Bytes>> per_client(4);
    for (uint8_t k = 1; k <= kSenders; ++k)
        for (uint64_t n = 0; n < kPerSender; ++n)
            per_client[k % 4].push_back(signed_tx({.key = k, .nonce = n}));
    std::mutex state_mutex;  // MemoryState is not a concurrent writer
    struct Locked final : state::StateReader {
        state::MemoryState& s;
        std::mutex& m;
        Locked(state::MemoryState& s_, std::mutex& m_) : s{s_}, m{m_} {}
        state::ReadResult<state::Account> account(const Address& a) const override {
            std::lock_guard g{m};
            return s.find_account(a);
        }
        state::ReadResult<u256> user(std::string_view n) const override {
            std::lock_guard g{m};
            return s.find_user(n);
        }
    } reader{state, state_mutex};
    Pool pool{config, reader, &cache};
    // The journal, appended by every client thread: the tickets keep admission order.
    test::ScratchDir dir;
    const std::string journal_path = (dir.path() / "transactions.rlp").string();
    auto journal = JournalWriter::open(journal_path).value();
    pool.journal_to(journal.get(), 0);
    std::atomic<size_t> clients_done{0};
    std::vector<Hash> committed;
    std::thread sealer{[&] {
        while (true) {
            const bool clients_finished = clients_done.load() == per_client.size();
            const Selection s = pool.take(16, 1'000'000'000);
            if (s.txs.empty()) {
                if (clients_finished && pool.status().pending == 0) break;
                std::this_thread::yield();
                continue;
            }
            std::vector<Hash> included;
            {
                std::lock_guard g{state_mutex};
                included = apply(state, s);
            }
            pool.committed(next_block(), included, {});
            committed.insert(committed.end(), included.begin(), included.end());
        }
    }};
    std::vector<std::thread> clients;
    for (const auto& txs : per_client)
        clients.emplace_back([&pool, &txs, &clients_done] {
            for (const Bytes& raw : txs) EXPECT_TRUE(pool.admit_one(raw).has_value());
            ++clients_done;
        });
    for (auto& t : clients) t.join();
    sealer.join();
    EXPECT_EQ(committed.size(), size_t{kSenders} * kPerSender);
    std::sort(committed.begin(), committed.end());
    EXPECT_EQ(std::adjacent_find(committed.begin(), committed.end()), committed.end());
    for (uint8_t k = 1; k <= kSenders; ++k)
        EXPECT_EQ(state.find_account(address_of_key(k))->nonce, kPerSender);
    // Every admitted transaction journaled once, each sender's in the order it was admitted.
    pool.journal_to(nullptr, 0);
    EXPECT_EQ(journal->error(), "");
    const auto journaled = read_journal(journal_path, config).value().transactions;
    EXPECT_EQ(journaled.size(), size_t{kSenders} * kPerSender);
    std::map<Address, uint64_t> next;
    for (const Bytes& raw : journaled) {
        const auto t = tx::decode(raw).value();
        const Address sender = *tx::recover_sender(t, tx::signing_hash(t));
        EXPECT_EQ(t.nonce, next[sender]++);
    }
}

}  // namespace
}  // namespace barrel::pool

namespace barrel::pool {
namespace {

using namespace barrel::pool::testing;

TEST_F(PoolTest, a_journal_gives_back_what_was_pooled) {
    test::ScratchDir dir;
    const std::string path = (dir.path() / "transactions.rlp").string();
    EXPECT_TRUE(read_journal(path, config).value().transactions.empty());  // none yet
    admit_ok({.key = 1, .nonce = 0});
    admit_ok({.key = 1, .nonce = 2});  // queued
    admit_ok({.key = 2, .nonce = 0});
    const auto txs = pool().all();
    ASSERT_TRUE(write_journal(path, txs).has_value());
    const Journal journal = read_journal(path, config).value();
    EXPECT_FALSE(journal.damaged);
    ASSERT_EQ(journal.transactions.size(), 3u);
    for (size_t i = 0; i < txs.size(); ++i) EXPECT_EQ(journal.transactions[i], txs[i]->encoding);

    // A tail cut short keeps what came before it.
    const Bytes whole = test::read_file(path);
    test::write_file(path, BytesView{whole}.first(whole.size() - 5));
    const Journal cut = read_journal(path, config).value();
    EXPECT_TRUE(cut.damaged);
    EXPECT_EQ(cut.transactions.size(), 2u);
}

TEST_F(PoolTest, a_journal_keeps_what_was_sent_here_not_what_peers_gossiped) {
    test::ScratchDir dir;
    const std::string path = (dir.path() / "transactions.rlp").string();
    auto journal = JournalWriter::open(path).value();
    pool().journal_to(journal.get(), 0);
    const Bytes sent = signed_tx({.key = 1, .nonce = 0});
    const Bytes gossiped = signed_tx({.key = 2, .nonce = 0});
    ASSERT_TRUE(pool().admit_one(sent).has_value());
    ASSERT_TRUE(pool().admit_one(gossiped, Origin::peer).has_value());
    EXPECT_EQ(pool().status().pending, 2u);  // both pooled alike
    EXPECT_EQ(pool().find(hash_of(gossiped), kLatest)->origin, Origin::peer);
    EXPECT_EQ(read_journal(path, config).value().transactions, std::vector<Bytes>{sent});
    ASSERT_EQ(pool().local().size(), 1u);
    EXPECT_EQ(pool().local()[0]->encoding, sent);
    EXPECT_EQ(pool().all().size(), 2u);
    pool().journal_to(nullptr, 0);
}

TEST_F(PoolTest, a_journal_is_read_no_further_than_a_pool_holds) {
    test::ScratchDir dir;
    const std::string path = (dir.path() / "transactions.rlp").string();
    config.max_pending = 2;
    config.max_queued = 1;
    config.max_transaction_bytes = 100;
    ASSERT_EQ(journal_capacity(config), 6u);  // the appends of twice the pool

    // More strings than a journal holds: the first journal_capacity, the rest left.
    Bytes eight;
    for (uint8_t i = 1; i <= 8; ++i) rlp::encode(eight, Bytes(10, i));
    test::write_file(path, eight);
    Journal read = read_journal(path, config).value();
    EXPECT_TRUE(read.truncated);
    EXPECT_FALSE(read.damaged);
    ASSERT_EQ(read.transactions.size(), 6u);
    EXPECT_EQ(read.transactions[5], Bytes(10, 6));

    // A string longer than any pooled transaction is never allocated: damage, and what came
    // before it stays.
    Bytes oversized;
    rlp::encode(oversized, Bytes(10, 7));
    oversized.insert(oversized.end(), {0xbb, 0x7f, 0xff, 0xff, 0xff});  // a 2 GiB string's head
    test::write_file(path, oversized);
    read = read_journal(path, config).value();
    EXPECT_TRUE(read.damaged);
    EXPECT_FALSE(read.truncated);
    ASSERT_EQ(read.transactions.size(), 1u);

    // A list, and a non-canonical string (one byte below 0x80 given a length), are damage too.
    for (const Bytes& bad : {Bytes{0xc1, 0x01}, Bytes{0x81, 0x05}}) {
        test::write_file(path, bad);
        read = read_journal(path, config).value();
        EXPECT_TRUE(read.damaged);
        EXPECT_TRUE(read.transactions.empty());
    }

    // Something endless (a device in its place) or not a file at all: refused unread, naming
    // the path.
    const auto device = read_journal("/dev/zero", config);
    ASSERT_FALSE(device.has_value());
    EXPECT_EQ(device.error(), "cannot read '/dev/zero': not a regular file");
    const auto unreadable = read_journal(dir.path().string(), config);
    ASSERT_FALSE(unreadable.has_value());
    EXPECT_EQ(unreadable.error(), "cannot read '" + dir.path().string() + "': not a regular file");
}

}  // namespace
}  // namespace barrel::pool
