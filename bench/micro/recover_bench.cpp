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
