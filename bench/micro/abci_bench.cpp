// The ABCI mempool connection's CheckTx, the call CometBFT makes once per transaction it hears of:
//
//   BM_abci_dispatch_check_tx   the dispatch with a call observer, as the node runs it (the abci
//                               call-duration metrics), on an application that answers at once,
//                               so what is measured is the dispatch and its timing point
//                               (docs/benchmarks.md, "ABCI dispatch: one timing point")
//   BM_abci_check_tx_run/run:1|32|100/threads:1|2
//                               barrel's application (ChainApp) checking 2,500 gossiped transfers
//                               from 100 senders it never saw, into a fresh pool over a fresh
//                               datadir's genesis: run:1 one CheckTx at a time, run:32 and 100
//                               in runs (check_txs, as the server hands over what one read of the
//                               connection brought: CometBFT writes 4 KiB, about 35 transfers, at
//                               a time, and more wait in the socket when the node is behind), in
//                               a oneTBB arena of 1 or 2 threads.
//                               Counter us_per_tx (wall / transaction): the mempool connection's
//                               intake, each sender recovered once

#include <barrel/block/sender_cache.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/store/store.hpp>

#include "abci/application.hpp"
#include "abci/chain_app.hpp"
#include "fixtures.hpp"
#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace barrel;
using namespace barrel::abci;
namespace fs = std::filesystem;

/// Answers CheckTx at once: what is measured is the dispatch and its timing point.
class QuickApp final : public BaseApplication {
public:
    Answer<pb::ResponseCheckTx> check_tx(const pb::RequestCheckTx& request) override {
        pb::ResponseCheckTx response;
        response.set_gas_wanted(static_cast<int64_t>(request.tx().size()));
        return response;
    }
};

void BM_abci_dispatch_check_tx(benchmark::State& state) {
    double total_ms = 0;
    const CallObserver on_call = [&](std::string_view, double ms) { total_ms += ms; };
    QuickApp app;
    pb::Request request;
    request.mutable_check_tx()->set_tx(std::string(110, 'x'));  // a transfer's size
    // The first call makes the table of call names (from protobuf's descriptors): once per
    // process, not per call.
    benchmark::DoNotOptimize(dispatch(app, request, on_call));
    for (auto _ : state) {
        pb::Response response = dispatch(app, request, on_call);
        benchmark::DoNotOptimize(response);
    }
    benchmark::DoNotOptimize(total_ms);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_abci_dispatch_check_tx);

constexpr size_t kGossiped = 2'500;
constexpr uint64_t kGossipSenders = 100;  ///< bench::signed_transfers' senders

/// A fresh datadir whose genesis funds bench::sender_key's senders, and their transfers as
/// CheckTx requests.
struct CheckTxFixture {
    fs::path root;
    std::unique_ptr<store::Store> store;
    std::vector<pb::RequestCheckTx> requests;
    /// At exit: the datadir closed, then removed.
    ~CheckTxFixture() {
        store.reset();
        fs::remove_all(root);
    }
};

const CheckTxFixture& check_tx_fixture() {
    static const std::unique_ptr<CheckTxFixture> fixture = [] {
        auto f = std::make_unique<CheckTxFixture>();
        for (const Bytes& t : bench::signed_transfers(kGossiped)) {
            f->requests.emplace_back().set_tx(std::string{as_chars(t)});
        }
        chain::Genesis genesis;
        genesis.config.chain_id = 1;
        genesis.gas_limit = 30'000'000;
        for (uint64_t s = 0; s < kGossipSenders; ++s) {
            const auto address = tx::address_of(bench::sender_key(s));
            if (!address) std::abort();
            genesis.alloc.accounts.emplace_back(*address, state::Account{0, u256{1} << 100});
        }
        std::sort(genesis.alloc.accounts.begin(), genesis.alloc.accounts.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        f->root =
            fs::temp_directory_path() / ("barrel-bench-checktx-" + std::to_string(::getpid()));
        fs::remove_all(f->root);
        auto opened = store::Store::init(f->root, genesis, store::Options{});
        if (!opened) std::abort();
        f->store = std::move(*opened);
        return f;
    }();
    return *fixture;
}

void BM_abci_check_tx_run(benchmark::State& state) {
    const auto run = static_cast<size_t>(state.range(0));
    const auto threads = static_cast<int>(state.range(1));
    const CheckTxFixture& f = check_tx_fixture();
    std::vector<const pb::RequestCheckTx*> requests;
    for (const pb::RequestCheckTx& r : f.requests) requests.push_back(&r);
    tbb::task_arena arena{threads};
    size_t admitted = 0;
    for (auto _ : state) {
        state.PauseTiming();
        // A node that never saw these senders: every one is recovered.
        auto cache = std::make_unique<block::SenderCache>(1u << 14);
        auto pipe = std::make_unique<pipeline::Pipeline>(
            *f.store, pipeline::Config{.sender_cache = cache.get()});
        auto pool = std::make_unique<pool::Pool>(
            pool::Config{.chain_id = 1, .block_gas_limit = 30'000'000}, *f.store, cache.get());
        auto app = std::make_unique<ChainApp>(*f.store, *pipe, *pool, ChainConfig{});
        state.ResumeTiming();
        arena.execute([&] {
            for (size_t begin = 0; begin < requests.size(); begin += run) {
                const auto answers = app->check_txs(
                    std::span{requests}.subspan(begin, std::min(run, requests.size() - begin)));
                for (const auto& a : answers) admitted += a && a->code() == 0;
            }
        });
        state.PauseTiming();
        app.reset();  // outside the timing: freeing the pool is not admission
        pool.reset();
        state.ResumeTiming();
    }
    if (admitted != kGossiped * state.iterations())
        state.SkipWithError("a transaction was refused");
    state.counters["us_per_tx"] = benchmark::Counter(
        static_cast<double>(kGossiped) * static_cast<double>(state.iterations()) / 1e6,
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_abci_check_tx_run)
    ->ArgNames({"run", "threads"})
    ->ArgsProduct({{1, 32, 100}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
