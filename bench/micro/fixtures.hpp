#pragma once
/// @file
/// Deterministic signed transfers for the micro-benchmarks: fixed keys, fixed fields, so every
/// run measures the same bytes. Header only; each benchmark file builds what it needs once.

#include <barrel/core/keccak.hpp>
#include <barrel/gen/transfer.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/tx/transaction.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace barrel::bench {

/// Evicts the CPU caches outside the timing, as a block's commit does between two blocks: one
/// write per 64-byte line of `buffer`, which must be larger than the last-level cache.
inline void flush_cpu_caches(benchmark::State& state, std::vector<uint8_t>& buffer) {
    state.PauseTiming();
    for (size_t i = 0; i < buffer.size(); i += 64) buffer[i] = static_cast<uint8_t>(buffer[i] + 1);
    benchmark::ClobberMemory();
    state.ResumeTiming();
}

/// The private key of sender i (keccak256 of its index: fixed and valid with overwhelming odds).
inline Hash sender_key(uint64_t i) {
    uint8_t be[8];
    for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(i >> (56 - 8 * b));
    return keccak256(BytesView{be, 8});
}

/// A signed value transfer on chain 1: a legacy EIP-155 transaction (110 bytes, like the
/// EIP-155 example) or, if `dynamic_fee`, an EIP-1559 one with an empty access list.
inline Bytes signed_transfer(uint64_t sender, uint64_t nonce, bool dynamic_fee) {
    Address to;
    for (size_t b = 0; b < to.size(); ++b) to[b] = static_cast<uint8_t>(0x35 + sender + b);
    return gen::signed_transfer({.key = sender_key(sender),
                                 .to = to,
                                 .nonce = nonce,
                                 .type = dynamic_fee ? tx::TxType::dynamic_fee : tx::TxType::legacy,
                                 .fee_cap = 20'000'000'000ull,
                                 .tip = 1'000'000'000,
                                 .value = 1'000'000'000'000'000'000ull});
}

/// `count` signed transfers from 100 senders, alternating legacy and EIP-1559.
inline std::vector<Bytes> signed_transfers(size_t count) {
    std::vector<Bytes> out;
    out.reserve(count);
    for (size_t i = 0; i < count; ++i) out.push_back(signed_transfer(i % 100, i / 100, i % 2 == 1));
    return out;
}

/// A plain RLP list of transactions, as go-ethereum's rlp.EncodeToBytes makes of a
/// []*types.Transaction: a legacy transaction is its own RLP list, a typed one is an RLP string
/// holding its envelope.
inline Bytes rlp_transaction_list(const std::vector<Bytes>& txs) {
    Bytes payload;
    for (const auto& t : txs) {
        if (!t.empty() && t[0] >= 0xc0)
            payload.insert(payload.end(), t.begin(), t.end());
        else
            rlp::encode(payload, BytesView{t});
    }
    Bytes out;
    rlp::encode_list(out, payload);
    return out;
}

}  // namespace barrel::bench
