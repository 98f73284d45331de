// keccak256 of a typical signed transfer (a 110-byte legacy EIP-155 transaction): the cost of
// one transaction hash.

#include <barrel/core/keccak.hpp>

#include "fixtures.hpp"
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

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

/// 2,500 64-byte inputs (one Merkle level's worth of sibling pairs), hashed one by one or through
/// keccak256_many (four per AVX2 permutation). Arg: 0 = one by one, 1 = keccak256_many.
void keccak256_many_merkle_pairs(benchmark::State& state) {
    const bool vectorized = state.range(0) == 1;
    std::vector<Hash> nodes(5'000);
    for (size_t i = 0; i < nodes.size(); ++i) nodes[i][i % 32] = static_cast<uint8_t>(i);
    std::vector<BytesView> inputs(nodes.size() / 2);
    for (size_t j = 0; j < inputs.size(); ++j) inputs[j] = BytesView{nodes[2 * j].data(), 64};
    std::vector<Hash> out(inputs.size());
    for (auto _ : state) {
        keccak256_many(inputs, out, vectorized);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * inputs.size()));
    state.SetLabel(vectorized ? "keccak256_many" : "one by one");
}
BENCHMARK(keccak256_many_merkle_pairs)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
