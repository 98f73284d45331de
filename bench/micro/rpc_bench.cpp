// The node's JSON-RPC framing on what barrel-load sends: a batch of 100 eth_sendRawTransaction
// calls of real signed transfers (about 30 KB), parsed into calls, and the body of its 100
// responses (a transaction hash each) written back. Per call, since the node's cost is counted
// per transaction (docs/benchmarks.md, "The node under load").

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>

#include "fixtures.hpp"
#include "rpc/jsonrpc.hpp"
#include "rpc/params.hpp"
#include <benchmark/benchmark.h>

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

}  // namespace
