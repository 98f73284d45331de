// Stages 1 and 2 on the design brief's block: 2,500 signed legacy EIP-155 transfers from 2,500
// distinct keys (generated once), per block, serial against parallel.
//
//   BM_decode_block/0 serial, /1 parallel   decode_block: header, block hash, every transaction
//                                           decoded and hashed (the wire copy is not timed)
//   BM_verify/0 serial, /1 parallel         recover_senders without a cache (cold)
//   BM_verify/2 warm_cache                  parallel, every sender already in the cache
//   BM_verify/3 cold_cache                  parallel into an emptied cache (lookup + insert cost)
//   BM_verify_pool/threads:1 and :2        warm cache as in a node: the block's senders among
//                                           50,000 entries (a transaction pool's worth), CPU
//                                           caches flushed before each block (the previous
//                                           block's commit), then the block decoded (untimed)
//                                           on the same threads, as the pipeline does
//   BM_sender_cache_find/flushed:0 and :1   SenderCache::find alone, 2,500 lookups (each after a
//                                           prefetch 8 ahead, as recover_senders does) among
//                                           50,000 random entries in a 65,536-entry cache; :1
//                                           flushes the CPU caches first. Counter `resident`:
//                                           the share of those 50,000 still found after the fill
//   BM_recover_floor/threads:1 and :N       the bare secp256k1_ecdsa_recover loop over the same
//                                           2,500 pre-parsed signatures and signing hashes, on 1
//                                           thread and on all N cores: what verify cannot beat
//
// Each iteration is one block: the time is per block, items_per_second is transactions per
// second.

#include <barrel/block/block.hpp>
#include <barrel/block/sender_cache.hpp>

#include "fixtures.hpp"
#include <benchmark/benchmark.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

using namespace barrel;

constexpr size_t kBlockTxs = 2'500;
constexpr uint64_t kChainId = 1;  // bench::signed_transfer signs for chain 1

struct BlockFixture {
    Bytes wire;
    std::vector<secp256k1_ecdsa_recoverable_signature> signatures;
    std::vector<Hash> sighashes;
};

const BlockFixture& block_fixture() {
    static const BlockFixture f = [] {
        BlockFixture out;
        std::vector<Bytes> txs;
        txs.reserve(kBlockTxs);
        for (size_t i = 0; i < kBlockTxs; ++i)
            txs.push_back(bench::signed_transfer(i, 0, /*dynamic_fee=*/false));
        std::vector<BytesView> views(txs.begin(), txs.end());
        block::Header header;
        header.number = 1;
        header.gas_limit = 30'000'000;
        header.gas_used = 21'000 * kBlockTxs;
        header.chain_id = kChainId;
        out.wire = block::encode_block(header, views);

        const auto* ctx = tx::shared_secp256k1_context();
        for (const auto& encoding : txs) {
            auto t = tx::decode(encoding);
            if (!t) std::abort();
            uint8_t compact[64];
            store_be32(t->r, compact);
            store_be32(t->s, compact + 32);
            secp256k1_ecdsa_recoverable_signature sig;
            if (secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &sig, compact,
                                                                    t->y_parity ? 1 : 0) != 1)
                std::abort();
            out.signatures.push_back(sig);
            out.sighashes.push_back(tx::signing_hash(*t));
        }
        return out;
    }();
    return f;
}

block::Block decoded_block() {
    auto b = block::decode_block(block_fixture().wire);
    if (!b) std::abort();
    return std::move(b).value();
}

void set_items(benchmark::State& state) {
    state.SetItemsProcessed(static_cast<int64_t>(kBlockTxs) *
                            static_cast<int64_t>(state.iterations()));
}

void BM_decode_block(benchmark::State& state) {
    const bool parallel = state.range(0) != 0;
    state.SetLabel(parallel ? "parallel" : "serial");
    const Bytes& wire = block_fixture().wire;
    for (auto _ : state) {
        state.PauseTiming();
        Bytes copy = wire;  // decode_block owns its bytes; the caller's buffer would be moved in
        state.ResumeTiming();
        auto b = block::decode_block(std::move(copy), parallel);
        if (!b || b->size() != kBlockTxs) {
            state.SkipWithError("decode failed");
            break;
        }
        benchmark::DoNotOptimize(b->tx_hashes.data());
        state.PauseTiming();
        { auto discard = std::move(b); }  // freeing the block is not decoding
        state.ResumeTiming();
    }
    set_items(state);
}
BENCHMARK(BM_decode_block)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

enum VerifyMode : int64_t { serial = 0, parallel = 1, warm_cache = 2, cold_cache = 3 };

void BM_verify(benchmark::State& state) {
    const auto mode = static_cast<VerifyMode>(state.range(0));
    static const char* const labels[] = {"serial", "parallel", "warm_cache", "cold_cache"};
    state.SetLabel(labels[mode]);
    block::Block b = decoded_block();
    block::SenderCache cache{1u << 16};
    block::SenderCache* use_cache = nullptr;
    if (mode == warm_cache || mode == cold_cache) use_cache = &cache;
    if (mode == warm_cache && !block::recover_senders(b, kChainId, &cache)) {
        state.SkipWithError("verify failed");
        return;
    }
    for (auto _ : state) {
        if (mode == cold_cache) {
            state.PauseTiming();
            cache.clear();
            state.ResumeTiming();
        }
        if (!block::recover_senders(b, kChainId, use_cache, mode != serial)) {
            state.SkipWithError("verify failed");
            break;
        }
        benchmark::DoNotOptimize(b.senders.data());
    }
    if (mode == warm_cache && cache.stats().misses != kBlockTxs)
        state.SkipWithError("warm cache missed");
    set_items(state);
}
BENCHMARK(BM_verify)
    ->Arg(serial)
    ->Arg(parallel)
    ->Arg(warm_cache)
    ->Arg(cold_cache)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_verify_pool(benchmark::State& state) {
    const auto threads = static_cast<int>(state.range(0));
    block::Block b = decoded_block();
    block::SenderCache cache{1u << 16};
    if (!block::recover_senders(b, kChainId, &cache)) {
        state.SkipWithError("verify failed");
        return;
    }
    std::mt19937_64 rng{7};
    for (size_t i = kBlockTxs; i < 50'000; ++i) {
        Hash h;
        Address a;
        for (auto& byte : h.bytes) byte = static_cast<uint8_t>(rng());
        for (auto& byte : a.bytes) byte = static_cast<uint8_t>(rng());
        cache.insert(h, a);
    }
    std::vector<uint8_t> flush(64u << 20);
    tbb::task_arena arena{threads};
    for (auto _ : state) {
        state.PauseTiming();
        for (size_t i = 0; i < flush.size(); i += 64) flush[i] = static_cast<uint8_t>(flush[i] + 1);
        // ...then the block is decoded, as in the pipeline: its transactions are in the CPU
        // caches, and the arena's threads are awake (after the flush alone a worker would spend
        // 0.1-0.3 ms waking up, as much as the stage itself).
        bool decoded = false;
        arena.execute([&] {
            if (auto d = block::decode_block(block_fixture().wire, threads > 1)) {
                b = std::move(d).value();
                decoded = true;
            }
        });
        if (!decoded) {
            state.SkipWithError("decode failed");
            break;
        }
        benchmark::ClobberMemory();
        state.ResumeTiming();
        bool ok = true;
        arena.execute(
            [&] { ok = block::recover_senders(b, kChainId, &cache, threads > 1).has_value(); });
        if (!ok) {
            state.SkipWithError("verify failed");
            break;
        }
        benchmark::DoNotOptimize(b.senders.data());
    }
    if (cache.stats().misses != kBlockTxs)
        state.SkipWithError("the cache missed");  // only while filling
    set_items(state);
}
BENCHMARK(BM_verify_pool)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// The sender cache's lookups without recovery or validation around them: the part of warm verify
/// that the cache's layout decides.
void BM_sender_cache_find(benchmark::State& state) {
    const bool flushed = state.range(0) != 0;
    constexpr size_t kEntries = 50'000;
    block::SenderCache cache{1u << 16};
    std::mt19937_64 rng{11};
    std::vector<Hash> keys(kEntries);
    for (auto& h : keys) {
        for (auto& byte : h.bytes) byte = static_cast<uint8_t>(rng());
        Address a;
        for (auto& byte : a.bytes) byte = static_cast<uint8_t>(rng());
        cache.insert(h, a);
    }
    size_t resident = 0;
    std::vector<Hash> lookups;  // 2,500 resident keys spread over the fill order
    for (size_t i = 0; i < kEntries; ++i) {
        if (!cache.find(keys[i])) continue;
        ++resident;
        if (lookups.size() < kBlockTxs && i % (kEntries / kBlockTxs) == 0)
            lookups.push_back(keys[i]);
    }
    std::vector<uint8_t> flush(64u << 20);
    size_t hits = 0;
    for (auto _ : state) {
        if (flushed) bench::flush_cpu_caches(state, flush);
        for (size_t i = 0; i < lookups.size(); ++i) {
            if (i + 8 < lookups.size()) cache.prefetch(lookups[i + 8]);
            hits += cache.find(lookups[i]).has_value();
        }
    }
    if (hits != lookups.size() * state.iterations()) state.SkipWithError("a resident key missed");
    state.counters["resident"] = static_cast<double>(resident) / kEntries;
    state.SetItemsProcessed(static_cast<int64_t>(lookups.size()) *
                            static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_sender_cache_find)
    ->ArgName("flushed")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

/// The recovery floor: only secp256k1_ecdsa_recover, over the block's 2,500 signatures, split
/// over `threads` TBB threads (one writes only its own slot, like the stages do).
void BM_recover_floor(benchmark::State& state) {
    const auto threads = static_cast<size_t>(state.range(0));
    tbb::global_control limit{tbb::global_control::max_allowed_parallelism, threads};
    const BlockFixture& f = block_fixture();
    const auto* ctx = tx::shared_secp256k1_context();
    std::vector<secp256k1_pubkey> keys(kBlockTxs);
    std::atomic<bool> failed{false};
    for (auto _ : state) {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, kBlockTxs),
                          [&](const tbb::blocked_range<size_t>& r) {
                              for (size_t i = r.begin(); i != r.end(); ++i) {
                                  if (secp256k1_ecdsa_recover(ctx, &keys[i], &f.signatures[i],
                                                              f.sighashes[i].data()) != 1)
                                      failed.store(true, std::memory_order_relaxed);
                              }
                          });
        benchmark::DoNotOptimize(keys.data());
    }
    if (failed) state.SkipWithError("recovery failed");
    set_items(state);
}
BENCHMARK(BM_recover_floor)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(static_cast<int64_t>(tbb::info::default_concurrency()))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
