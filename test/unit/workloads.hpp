#pragma once
// Test-only workload presets: the generator's workload or an exception carrying its message, so
// that a test states its options in one designated-initializer expression,
//     generate_or_throw({.seed = 19, .blocks = 3, .txs = 30, .accounts = 20, .mix =
//     gen::Mix::mixed})
// instead of filling a gen::Options field by field and handling the error itself. Tests that
// check the generator's own errors call gen::generate directly.

#include <barrel/core/bytes.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/tx/transaction.hpp>

#include <stdexcept>
#include <utility>

namespace barrel::test {

inline gen::Workload generate_or_throw(const gen::Options& options) {
    auto w = gen::generate(options);
    if (!w) throw std::runtime_error(w.error());
    return std::move(w).value();
}

/// A signed EIP-1559 transfer of 5 wei on chain 1 from account `from` of the workload generated
/// with `seed` to its account `from + 1`, at `nonce`, fee cap `fee`, priority fee 1 wei.
inline Bytes signed_transfer(uint64_t seed, size_t from, uint64_t nonce,
                             const u256& fee = 2'000'000'000) {
    tx::Transaction t;
    t.type = tx::TxType::dynamic_fee;
    t.chain_id = 1;
    t.nonce = nonce;
    t.max_fee_per_gas = fee;
    t.max_priority_fee_per_gas = 1;
    t.gas_limit = 21'000;
    t.to = *tx::address_of(gen::account_key(seed, from + 1));
    t.value = 5;
    if (!tx::sign(t, gen::account_key(seed, from))) throw std::runtime_error("signing failed");
    return tx::encode(t);
}

}  // namespace barrel::test
