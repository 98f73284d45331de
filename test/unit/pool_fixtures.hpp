#pragma once
// What the pool's tests share: keys, signed transfers from a Spec, and a fixture with a pool over
// a MemoryState.

#include <barrel/block/sender_cache.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/gen/transfer.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/state/state.hpp>
#include <barrel/tx/transaction.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace barrel::pool::testing {

inline Hash key_of(uint8_t i) {
    Hash k;
    k[0] = 0x42;
    k[31] = i;
    return k;
}

inline Address address_of_key(uint8_t i) { return *tx::address_of(key_of(i)); }

/// A genesis document (chain 1) funding keys 1 to `keys`, for a datadir a node test starts.
inline std::string funded_genesis(uint8_t keys) {
    std::string accounts;
    for (uint8_t k = 1; k <= keys; ++k)
        accounts += std::string{k == 1 ? "" : ", "} + "\"" + to_hex(address_of_key(k)) +
                    "\": {\"balance\": \"1000000000000\"}";
    return R"({"chain_id": 1, "gas_limit": 30000000, "accounts": {)" + accounts + "}}";
}

inline Address recipient() {
    Address a;
    a[19] = 0x99;
    return a;
}

/// A transfer from key `key` to recipient() (gen::Transfer with the pool tests' small keys).
struct Spec {
    uint8_t key{1};
    uint64_t nonce{0};
    tx::TxType type{tx::TxType::dynamic_fee};
    uint64_t chain_id{1};
    u256 fee_cap{10};
    u256 tip{2};
    uint64_t gas{21'000};
    u256 value{1};
};

inline Bytes signed_tx(const Spec& spec) {
    return gen::signed_transfer({.key = key_of(spec.key),
                                 .to = recipient(),
                                 .nonce = spec.nonce,
                                 .type = spec.type,
                                 .chain_id = spec.chain_id,
                                 .fee_cap = spec.fee_cap,
                                 .tip = spec.tip,
                                 .gas = spec.gas,
                                 .value = spec.value});
}

inline Hash hash_of(const Bytes& encoding) { return tx::hash_of(encoding); }

/// The as_of of a reader that sees every committed block: the live pool.
constexpr uint64_t kLatest = UINT64_MAX;

/// A new block number for each committed() of these tests.
inline uint64_t next_block() {
    static std::atomic<uint64_t> block{0};
    return ++block;
}

/// The cost of a Spec: gas × fee cap + value.
inline u256 cost(const Spec& s) { return u256{s.gas} * s.fee_cap + s.value; }

class PoolTest : public ::testing::Test {
protected:
    PoolTest() {
        for (uint8_t k = 1; k <= 8; ++k)
            state.set_account(address_of_key(k), state::Account{0, u256{1'000'000'000}});
    }

    Pool& pool() {
        if (!m_pool) m_pool = std::make_unique<Pool>(config, state, &cache);
        return *m_pool;
    }

    /// Admits and expects success.
    Admitted admit_ok(const Spec& spec) {
        const Bytes raw = signed_tx(spec);
        auto r = pool().admit_one(raw);
        EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
        return r ? *r : Admitted{};
    }

    /// Admits and returns the rejection's message (fails if admitted).
    Rejection admit_err(const Spec& spec) { return admit_raw_err(signed_tx(spec)); }
    Rejection admit_raw_err(const Bytes& raw) {
        auto r = pool().admit_one(raw);
        EXPECT_FALSE(r.has_value());
        return r ? Rejection{} : r.error();
    }

    /// eth_getTransactionCount "pending" as a reader of the latest state sees it.
    uint64_t next_nonce(const Address& a) {
        const auto account = state.find_account(a);
        return pool().pending_nonce(a, account ? account->nonce : 0, kLatest);
    }

    /// Executes a selection on the state as its block would (nonce + 1, the cost taken); the
    /// hashes it included, for committed().
    std::vector<Hash> apply_to_state(const Selection& s) {
        std::vector<Hash> included;
        for (const TxPtr& t : s.txs) {
            auto account = state.find_account(t->sender).value_or(state::Account{});
            ++account.nonce;
            account.balance -= t->cost;
            state.set_account(t->sender, account);
            included.push_back(t->hash);
        }
        return included;
    }

    Config config;
    state::MemoryState state;
    block::SenderCache cache{1024};
    std::unique_ptr<Pool> m_pool;
};

}  // namespace barrel::pool::testing
