// keccak256 of a typical signed transfer (a 110-byte legacy EIP-155 transaction): the cost of
// one transaction hash.

#include "fixtures.hpp"

#include <barrel/core/keccak.hpp>

#include <benchmark/benchmark.h>

#include <string>

namespace {

using namespace barrel;

void keccak256_signed_transfer(benchmark::State& state) {
    const Bytes encoding = bench::signed_transfer(1, 9, /*dynamic_fee=*/false);
    for (auto _ : state) {
        auto h = keccak256(encoding);
        benchmark::DoNotOptimize(h);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * encoding.size()));
    state.SetLabel(std::to_string(encoding.size()) + " bytes");
}
BENCHMARK(keccak256_signed_transfer);

}  // namespace
