// Stage 4 (commit) on a generated, sealed 2,500-transfer block:
//
//   BM_encode_batch/serial|parallel       the commit's write batch alone (encode_block_batch, the
//                                         JSON documents as Put records, and the raw block), into
//                                         the previous iteration's buffer as a commit does: the
//                                         serial loop against tbb::parallel_for; counter
//                                         ns_per_doc (wall / documents)
//   BM_commit/<encode>/<durability>       Store::commit of a chain of kChain blocks, one per
//                                         iteration: encode plus one WriteBatch, WAL on, with
//                                         (sync) or without (nosync) an fsync; counters encode_ms
//                                         (documents into the batch's records) and write_ms
//                                         (DB::Write) split the time
//
//   BM_state_reads/threads:1|2/flushed:0|1
//                                         Store::account for every sender and recipient of a block
//                                         (~5,000 reads), all already in the store's state cache,
//                                         on 1 and 2 threads: the reads execute makes; flushed:1
//                                         evicts the CPU caches first, as a commit's write does;
//                                         counter ns_per_read (wall / reads)
//
// Time is wall-clock. A commit must extend the head, so BM_commit commits blocks 1..kChain in
// turn and starts a new datadir (outside the timed region) after the last: the memtables fill as
// they do in an import, instead of every commit meeting an empty one.

#include <barrel/block/block.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/store/store.hpp>

#include "core/seqlock_cache.hpp"
#include "core/zeroed_pages.hpp"
#include "fixtures.hpp"
#include "store/block_batch.hpp"
#include <benchmark/benchmark.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace barrel;
namespace fs = std::filesystem;

constexpr size_t kChain = 8;

struct StoreFixture {
    gen::Workload workload;
    std::vector<block::Block> blocks;  // decoded, senders filled
    std::vector<exec::Outcome> outcomes;
};

std::unique_ptr<StoreFixture> build() {
    auto f = std::make_unique<StoreFixture>();
    gen::Options options;
    options.blocks = kChain;
    auto w = gen::generate(options);
    if (!w) std::abort();
    f->workload = std::move(*w);
    state::MemoryState state;
    state.apply(f->workload.genesis.alloc);
    state::Lattice lattice = chain::genesis_lattice(f->workload.genesis, true);
    for (size_t k = 0; k < kChain; ++k) {
        auto b = block::decode_block(f->workload.blocks[k]);
        if (!b) std::abort();
        b->senders = f->workload.senders[k];
        auto o = exec::execute(*b, state, lattice, f->workload.genesis.config);
        if (!o) std::abort();
        state.apply(o->writes);
        lattice = o->lattice;
        f->blocks.push_back(std::move(*b));
        f->outcomes.push_back(std::move(*o));
    }
    return f;
}

const StoreFixture& store_fixture() {
    static const std::unique_ptr<StoreFixture> f = build();
    return *f;
}

void bm_encode_batch(benchmark::State& state, bool parallel) {
    const StoreFixture& f = store_fixture();
    const block::Block& b = f.blocks.front();
    const store::DocumentFamilies families{3, 4, 5, 6, 1};
    const std::string number(8, '\1');
    const store::PutRecord tail[] = {{2, number, as_chars(b.wire)}, {7, "head", "{}"}};
    std::string buffer;
    size_t documents = 0;
    size_t bytes = 0;
    for (auto _ : state) {
        store::BlockBatch batch = store::encode_block_batch(b, f.outcomes.front(), families, number,
                                                            tail, parallel, std::move(buffer));
        documents = batch.records - std::size(tail);
        bytes = batch.bytes;
        benchmark::DoNotOptimize(batch.rep.data());
        buffer = std::move(batch.rep);
    }
    state.counters["documents"] = static_cast<double>(documents);
    state.counters["ns_per_doc"] = benchmark::Counter(
        static_cast<double>(documents) * 1e-9,
        benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    state.SetBytesProcessed(static_cast<int64_t>(bytes * state.iterations()));
}

void bm_commit(benchmark::State& state, bool parallel, bool sync) {
    const StoreFixture& f = store_fixture();
    const fs::path root =
        fs::temp_directory_path() / ("barrel-bench-commit-" + std::to_string(::getpid()));
    store::Options options;
    options.sync = sync;
    double encode_ms = 0;
    double write_ms = 0;
    std::unique_ptr<store::Store> s;
    size_t next = 0;
    for (auto _ : state) {
        if (next == 0) {
            state.PauseTiming();
            s.reset();
            fs::remove_all(root);
            auto opened = store::Store::init(root, f.workload.genesis, options);
            if (!opened) {
                state.SkipWithError(opened.error().message.c_str());
                break;
            }
            s = std::move(*opened);
            state.ResumeTiming();
        }
        auto stats = s->commit(f.blocks[next], f.outcomes[next], parallel);
        if (!stats) {
            state.SkipWithError(stats.error().message.c_str());
            break;
        }
        encode_ms += stats->encode_ms;
        write_ms += stats->write_ms;
        next = (next + 1) % kChain;
    }
    s.reset();
    fs::remove_all(root);
    const auto n = static_cast<double>(state.iterations());
    state.counters["encode_ms"] = encode_ms / n;
    state.counters["write_ms"] = write_ms / n;
}

void BM_state_reads(benchmark::State& state) {
    const StoreFixture& f = store_fixture();
    const fs::path root =
        fs::temp_directory_path() / ("barrel-bench-reads-" + std::to_string(::getpid()));
    fs::remove_all(root);
    auto opened = store::Store::init(root, f.workload.genesis, store::Options{});
    if (!opened) {
        state.SkipWithError(opened.error().message.c_str());
        return;
    }
    const std::unique_ptr<store::Store> s = std::move(*opened);
    std::vector<Address> addresses;
    const block::Block& b = f.blocks.front();
    for (size_t i = 0; i < b.size(); ++i) {
        addresses.push_back(b.senders[i]);
        if (b.txs[i].to) addresses.push_back(*b.txs[i].to);
    }
    for (const auto& a : addresses) benchmark::DoNotOptimize(s->account(a));  // fill the cache
    tbb::task_arena arena{static_cast<int>(state.range(0))};
    const bool flushed = state.range(1) != 0;
    std::vector<uint8_t> flush(flushed ? 64u << 20 : 0);
    for (auto _ : state) {
        if (flushed) bench::flush_cpu_caches(state, flush);
        arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range<size_t>(0, addresses.size()),
                              [&](const tbb::blocked_range<size_t>& r) {
                                  for (size_t i = r.begin(); i != r.end(); ++i)
                                      benchmark::DoNotOptimize(s->account(addresses[i]));
                              });
        });
    }
    state.counters["ns_per_read"] = benchmark::Counter(
        static_cast<double>(addresses.size()) * 1e-9,
        benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    fs::remove_all(root);
}
BENCHMARK(BM_state_reads)
    ->ArgNames({"threads", "flushed"})
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

[[maybe_unused]] const bool kRegistered = [] {
    for (const bool parallel : {false, true}) {
        const std::string mode = parallel ? "parallel" : "serial";
        benchmark::RegisterBenchmark(("BM_encode_batch/" + mode).c_str(), bm_encode_batch, parallel)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
        for (const bool sync : {false, true}) {
            benchmark::RegisterBenchmark(
                ("BM_commit/" + mode + (sync ? "/sync" : "/nosync")).c_str(), bm_commit, parallel,
                sync)
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
        }
    }
    return true;
}();

// A cache table's first fill to the point where it moves to huge pages (ZeroedPages::count_fill):
// 32 MiB, the account cache's default, one entry in each of 1,024 random 4 KiB pages. Time is the
// writer's: the fills and the call that reaches the threshold. Counter move_ms is the move itself
// (MADV_COLLAPSE on its own thread), waited for outside the clock: before the move left the
// writer's thread, the writer paid both.
void BM_cache_table_first_fill(benchmark::State& state) {
    std::mt19937_64 rng{7};
    double move_ms = 0;
    for (auto _ : state) {
        state.PauseTiming();
        auto table = std::make_unique<barrel::ZeroedPages>(32u << 20);
        auto* bytes = static_cast<uint8_t*>(table->data());
        const size_t pages = table->size() / 4096;
        state.ResumeTiming();
        for (size_t i = 0; i < table->fill_threshold(); ++i) {
            bytes[(rng() % pages) * 4096] = 1;
            table->count_fill();
        }
        state.PauseTiming();
        const auto t0 = std::chrono::steady_clock::now();
        table->wait_for_huge_pages();
        move_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                       .count();
        table.reset();
        state.ResumeTiming();
    }
    state.counters["move_ms"] = move_ms / static_cast<double>(state.iterations());
}
BENCHMARK(BM_cache_table_first_fill)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);

// A fresh account cache's read-miss fills: 1,000 accounts at random, each looked up (a miss) and
// then put, as the store's account_from_disk does, into a fresh 32 MiB table (below the move to
// huge pages). Without the written-page bits (core/zeroed_pages.hpp) each lookup mapped the zero
// page and each put copied it (docs/benchmarks.md, "Never-written pages (issue 39)"). With
// neighbour:1 another thread of the process spins meanwhile, as a node's workers run beside its
// writers, so a copy's TLB flush must also interrupt that thread's core. Counter us_per_fill.
void BM_cache_read_miss_fills(benchmark::State& state) {
    using Cache = barrel::SeqlockCache<20, 40>;
    constexpr int kFills = 1'000;
    std::atomic<bool> stop{false};
    std::thread neighbour;
    if (state.range(0) != 0)
        neighbour = std::thread{[&stop] {
            while (!stop.load(std::memory_order_relaxed)) {
            }
        }};
    std::mt19937_64 rng{11};
    std::array<uint8_t, 20> key{};
    for (auto _ : state) {
        state.PauseTiming();
        auto cache = std::make_unique<Cache>(32u << 20);
        state.ResumeTiming();
        for (int i = 0; i < kFills; ++i) {
            const uint64_t hash = rng();
            std::memcpy(key.data(), &hash, sizeof hash);
            if (!cache->find(key, hash)) cache->put(key, hash, Cache::Value{}, false);
        }
        state.PauseTiming();
        cache.reset();  // the unmapping, outside the clock
        state.ResumeTiming();
    }
    stop.store(true, std::memory_order_relaxed);
    if (neighbour.joinable()) neighbour.join();
    state.counters["us_per_fill"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * kFills / 1e6,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_cache_read_miss_fills)
    ->ArgName("neighbour")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
