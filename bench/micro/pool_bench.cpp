// Admission into the transaction pool (Pool::admit), as a node's RPC batches reach it:
//
//   BM_pool_admit/threads:1|2/full:0|1
//                        2,500 signed transfers (100 senders × 25 nonces, legacy and EIP-1559
//                        alternating) admitted in batches of 100 into a pool over a funded
//                        MemoryState, on 1 and 2 threads. full:0 starts from an empty pool;
//                        full:1 from one whose pending bound is reached with cheaper
//                        transactions of other senders, so that every admission evicts
//                        (Pool::Impl::insert's longest path). Counter us_per_tx (wall / admitted)
//
// Sender recovery (secp256k1) is most of admission; the serial, locked step (insert) is the rest
// that grows with the pool. Its changes show best as instructions per run (`perf stat -e
// instructions`), which recovery does not make noisy.

#include <barrel/block/sender_cache.hpp>
#include <barrel/gen/transfer.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/state/state.hpp>

#include "fixtures.hpp"
#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>

#include <memory>
#include <span>
#include <vector>

namespace {

using namespace barrel;

constexpr size_t kSenders = 100;
constexpr size_t kPoolTxs = 2'500;
constexpr size_t kAdmitBatch = 100;
/// The evictable transactions a full pool holds (cheaper than the benchmark's, other senders).
constexpr size_t kFillers = 2'500;

struct PoolFixture {
    std::vector<Bytes> txs = bench::signed_transfers(kPoolTxs);
    /// One transfer each from senders kSenders..: 1 wei of fee cap, evicted first.
    std::vector<Bytes> fillers;
    state::MemoryState state;

    PoolFixture() {
        for (uint64_t s = 0; s < kSenders + kFillers; ++s) {
            const auto address = tx::address_of(bench::sender_key(s));
            if (!address) std::abort();
            state.set_account(*address, state::Account{0, u256{1} << 100});
        }
        for (uint64_t s = kSenders; s < kSenders + kFillers; ++s)
            fillers.push_back(gen::signed_transfer(
                {.key = bench::sender_key(s), .type = tx::TxType::legacy, .fee_cap = 1}));
    }
};

const PoolFixture& pool_fixture() {
    static const PoolFixture f;
    return f;
}

std::vector<BytesView> views_of(const std::vector<Bytes>& encodings) {
    return {encodings.begin(), encodings.end()};
}

void BM_pool_admit(benchmark::State& state) {
    const auto threads = static_cast<int>(state.range(0));
    const bool full = state.range(1) != 0;
    const PoolFixture& f = pool_fixture();
    const auto txs = views_of(f.txs);
    const auto fillers = views_of(f.fillers);
    pool::Config config;
    config.max_pending = full ? kFillers : kPoolTxs;
    tbb::task_arena arena{threads};
    size_t admitted = 0;
    for (auto _ : state) {
        state.PauseTiming();
        block::SenderCache cache{1u << 14};
        auto pool = std::make_unique<pool::Pool>(config, f.state, &cache);
        if (full) arena.execute([&] { (void)pool->admit(fillers); });
        state.ResumeTiming();
        arena.execute([&] {
            for (size_t begin = 0; begin < txs.size(); begin += kAdmitBatch)
                for (const auto& r : pool->admit(std::span{txs}.subspan(begin, kAdmitBatch)))
                    admitted += r.has_value();
        });
        state.PauseTiming();
        pool.reset();  // outside the timing: freeing the pool is not admission
        state.ResumeTiming();
    }
    if (admitted != kPoolTxs * state.iterations()) state.SkipWithError("a transaction was refused");
    state.counters["us_per_tx"] = benchmark::Counter(
        static_cast<double>(kPoolTxs) * static_cast<double>(state.iterations()) / 1e6,
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_pool_admit)
    ->ArgNames({"threads", "full"})
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
