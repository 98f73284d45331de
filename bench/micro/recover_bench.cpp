// Sender recovery, the floor of a cold block: tx::recover_sender of one signed transfer (signing
// hash precomputed), the same with the signing hash computed each time, and the bare
// secp256k1_ecdsa_recover call on barrel's shared context, to show what barrel adds on top.
// The design notes about 51 µs per secp256k1_ecdsa_recover call per core on this machine.

#include <barrel/tx/transaction.hpp>

#include "fixtures.hpp"
#include <benchmark/benchmark.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include <cstdlib>
#include <vector>

namespace {

using namespace barrel;

tx::Transaction transfer(const Bytes& encoding) {
    auto t = tx::decode(encoding);
    if (!t) std::abort();
    return *t;
}

void tx_recover_sender(benchmark::State& state) {
    const Bytes encoding = bench::signed_transfer(1, 9, /*dynamic_fee=*/false);
    const tx::Transaction t = transfer(encoding);
    const Hash sighash = tx::signing_hash(t);
    for (auto _ : state) {
        auto sender = tx::recover_sender(t, sighash);
        if (!sender) {
            state.SkipWithError("recovery failed");
            break;
        }
        benchmark::DoNotOptimize(sender);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(tx_recover_sender)->Unit(benchmark::kMicrosecond);

void tx_signing_hash_and_recover_sender(benchmark::State& state) {
    const Bytes encoding = bench::signed_transfer(1, 9, /*dynamic_fee=*/true);
    const tx::Transaction t = transfer(encoding);
    for (auto _ : state) {
        auto sender = tx::recover_sender(t, tx::signing_hash(t));
        if (!sender) {
            state.SkipWithError("recovery failed");
            break;
        }
        benchmark::DoNotOptimize(sender);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(tx_signing_hash_and_recover_sender)->Unit(benchmark::kMicrosecond);

/// Four signed transfers from one sender and views of them: their calldata views the encodings.
struct FourTransfers {
    std::vector<Bytes> encodings;
    std::vector<tx::Transaction> txs;
    std::vector<const tx::Transaction*> pointers;
    FourTransfers() {
        for (uint64_t i = 0; i < 4; ++i)
            encodings.push_back(bench::signed_transfer(1, 9 + i, /*dynamic_fee=*/true));
        for (const Bytes& e : encodings) txs.push_back(transfer(e));
        for (const auto& t : txs) pointers.push_back(&t);
    }
};

// The same work for four transfers at a time, as the pool's admission and the verify stage do
// it: the signing hashes and the recovered keys hashed four at a time (tx::recover_senders).
// Per transaction.
void tx_recover_senders_by_four(benchmark::State& state) {
    const FourTransfers four;
    std::vector<Expected<Address, tx::TxError>> senders(4);
    for (auto _ : state) {
        tx::recover_senders(four.pointers, senders);
        benchmark::DoNotOptimize(senders);
    }
    if (!senders[3]) state.SkipWithError("recovery failed");
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 4));
}
BENCHMARK(tx_recover_senders_by_four)->Unit(benchmark::kMicrosecond);

// Its baseline: the same four, one by one.
void tx_recover_sender_four_one_by_one(benchmark::State& state) {
    const FourTransfers four;
    std::vector<Expected<Address, tx::TxError>> senders(4);
    for (auto _ : state) {
        for (size_t i = 0; i < 4; ++i)
            senders[i] = tx::recover_sender(four.txs[i], tx::signing_hash(four.txs[i]));
        benchmark::DoNotOptimize(senders);
    }
    if (!senders[3]) state.SkipWithError("recovery failed");
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 4));
}
BENCHMARK(tx_recover_sender_four_one_by_one)->Unit(benchmark::kMicrosecond);

void secp256k1_ecdsa_recover_bare(benchmark::State& state) {
    const Bytes encoding = bench::signed_transfer(1, 9, /*dynamic_fee=*/false);
    const tx::Transaction t = transfer(encoding);
    const Hash sighash = tx::signing_hash(t);
    const secp256k1_context* ctx = tx::shared_secp256k1_context();
    uint8_t compact[64];
    store_be32(t.r, compact);
    store_be32(t.s, compact + 32);
    secp256k1_ecdsa_recoverable_signature sig;
    if (secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &sig, compact,
                                                            t.y_parity ? 1 : 0) != 1) {
        state.SkipWithError("signature does not parse");
        return;
    }
    for (auto _ : state) {
        secp256k1_pubkey pubkey;
        if (secp256k1_ecdsa_recover(ctx, &pubkey, &sig, sighash.data()) != 1) {
            state.SkipWithError("recovery failed");
            break;
        }
        benchmark::DoNotOptimize(pubkey);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(secp256k1_ecdsa_recover_bare)->Unit(benchmark::kMicrosecond);

}  // namespace
