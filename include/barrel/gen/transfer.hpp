#pragma once
/// @file
/// A signed value transfer, the one way the tests and the benchmarks make one: every field they
/// vary, with designated initializers,
///     gen::signed_transfer({.key = gen::account_key(seed, 0), .to = bob, .nonce = 3})
/// Not installed (tooling, like workload.hpp).

#include <barrel/core/bytes.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/tx/transaction.hpp>

#include <cstdint>
#include <optional>

namespace barrel::gen {

struct Transfer {
    Hash key{};  ///< the sender's secp256k1 secret
    Address to{};
    uint64_t nonce{0};
    tx::TxType type{tx::TxType::dynamic_fee};  ///< dynamic_fee (EIP-1559) or legacy
    std::optional<uint64_t> chain_id{1};       ///< none: a legacy transaction before EIP-155
    u256 fee_cap{2'000'000'000};               ///< EIP-1559's max fee per gas; legacy's gas price
    u256 tip{1};                               ///< EIP-1559's max priority fee per gas
    uint64_t gas{21'000};
    u256 value{1};
};

/// The transfer as a transaction signed by `key`. Throws std::invalid_argument when `key` is not
/// a valid secret (zero, or not below the group order): a fixture's mistake.
tx::Transaction sign_transfer(const Transfer& transfer);

/// The transfer signed and encoded, as a node receives it.
Bytes signed_transfer(const Transfer& transfer);

}  // namespace barrel::gen
