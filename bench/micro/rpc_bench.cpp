// The node's JSON-RPC framing on what barrel-load sends: a batch of 100 eth_sendRawTransaction
// calls of real signed transfers (about 30 KB), parsed into calls, and the body of its 100
// responses (a transaction hash each) written back. Per call, since the node's cost is counted
// per transaction (docs/benchmarks.md, "The node under load").
//
// BM_rpc_send_batch runs that whole batch through Methods::handle, as the node does: parsing,
// the batch runner, each call's parameter, one Pool::admit, the response. The pool's sender
// cache already knows every sender (recovery, which is most of an admission, is measured by
// BM_pool_admit), so what is left is the RPC's own cost; callgrind's inclusive instructions of
// Methods::handle less those of Pool::admit isolate it.

#include <barrel/block/sender_cache.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/state/state.hpp>
#include <barrel/store/store.hpp>

#include "fixtures.hpp"
#include "rpc/jsonrpc.hpp"
#include "rpc/methods.hpp"
#include "rpc/params.hpp"
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace barrel;
using namespace barrel::rpc;

constexpr size_t kBatch = 100;

/// The body barrel-load builds (bench/load/load.cpp), byte for byte.
std::string send_raw_batch() {
    std::string body = "[";
    const auto txs = bench::signed_transfers(kBatch);
    for (size_t i = 0; i < txs.size(); ++i) {
        if (i > 0) body += ',';
        body += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) +
                R"(,"method":"eth_sendRawTransaction","params":[")" + to_hex(txs[i]) + "\"]}";
    }
    return body + "]";
}

void BM_rpc_parse_request(benchmark::State& state) {
    const std::string body = send_raw_batch();
    for (auto _ : state) {
        auto request = parse_request(body, Limits{});
        if (!request || request->calls.size() != kBatch) {
            state.SkipWithError("the batch does not parse");
            break;
        }
        benchmark::DoNotOptimize(request);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_rpc_parse_request)->Unit(benchmark::kMicrosecond);

/// eth_sendRawTransaction's parameter: the hex of a signed transfer to its bytes.
void BM_rpc_parse_data(benchmark::State& state) {
    std::vector<json> params;
    for (const Bytes& tx : bench::signed_transfers(kBatch)) params.emplace_back(to_hex(tx));
    for (auto _ : state) {
        for (const json& param : params) {
            auto bytes = parse_data(param);
            benchmark::DoNotOptimize(bytes);
        }
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}
BENCHMARK(BM_rpc_parse_data)->Unit(benchmark::kMicrosecond);

void BM_rpc_response_body(benchmark::State& state) {
    const Request request = parse_request(send_raw_batch(), Limits{}).value();
    std::vector<std::string> hashes;
    for (size_t i = 0; i < kBatch; ++i) {
        const uint8_t b = static_cast<uint8_t>(i);
        hashes.push_back(to_hex(keccak256(BytesView{&b, 1})));
    }
    for (auto _ : state) {
        ResponseWriter writer{request.batch};
        for (size_t i = 0; i < request.calls.size(); ++i)
            writer.result(request.calls[i]->id, json(hashes[i]));
        std::string body = std::move(writer).finish();
        benchmark::DoNotOptimize(body);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}
BENCHMARK(BM_rpc_response_body)->Unit(benchmark::kMicrosecond);

/// A batch of sends through the node's methods, each iteration into a new pool (outside the
/// timing) over a funded state, with a sender cache that knows every sender.
void BM_rpc_send_batch(benchmark::State& state) {
    namespace fs = std::filesystem;
    const std::string body = send_raw_batch();
    const auto txs = bench::signed_transfers(kBatch);
    state::MemoryState funded;
    for (uint64_t s = 0; s < 100; ++s)
        funded.set_account(*tx::address_of(bench::sender_key(s)),
                           state::Account{0, u256{1} << 100});
    // The methods answer reads from a store; sends only reach the pool.
    const fs::path root =
        fs::temp_directory_path() / ("barrel-bench-rpc-" + std::to_string(::getpid()));
    fs::remove_all(root);
    const auto genesis = gen::generate_genesis(gen::Options{.txs = kBatch, .accounts = 4});
    if (!genesis) {
        state.SkipWithError(genesis.error().c_str());
        return;
    }
    auto store = store::Store::init(root, *genesis);
    if (!store) {
        state.SkipWithError(store.error().message.c_str());
        return;
    }
    block::SenderCache cache{1u << 12};
    {
        pool::Pool warm{pool::Config{}, funded, &cache};  // recovers every sender once
        const std::vector<BytesView> views{txs.begin(), txs.end()};
        (void)warm.admit(views);
    }
    benchmark::IterationCount answered = 0;
    for (auto _ : state) {
        state.PauseTiming();
        std::optional<pool::Pool> pool{std::in_place, pool::Config{}, funded, &cache};
        rpc::Node node{.store = **store, .pool = *pool, .client_version = "bench"};
        std::optional<rpc::Methods> methods{std::in_place, node, Limits{}};
        state.ResumeTiming();
        const std::string response = methods->handle(body);
        state.PauseTiming();
        answered += response.find(R"("error")") == std::string::npos;
        methods.reset();
        pool.reset();
        state.ResumeTiming();
    }
    store->reset();
    fs::remove_all(root);
    if (answered != state.iterations()) state.SkipWithError("a send was refused");
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}
BENCHMARK(BM_rpc_send_batch)->Unit(benchmark::kMicrosecond);

}  // namespace
