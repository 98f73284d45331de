// RLP decoding of a 2,500-transaction list (a plain RLP list of signed legacy and EIP-1559
// transfers, as go-ethereum encodes []*types.Transaction): the generic item tree of the whole
// list, and walking the list with a strict tx::decode of every transaction. For comparison, the
// design notes go-ethereum decodes 2,500 legacy transfers in about 4 ms on this machine.

#include <barrel/rlp/decode.hpp>
#include <barrel/tx/transaction.hpp>

#include "fixtures.hpp"
#include <benchmark/benchmark.h>

namespace {

using namespace barrel;

constexpr size_t kRlpBlockTxs = 2'500;

const Bytes& block_list() {
    static const Bytes list = bench::rlp_transaction_list(bench::signed_transfers(kRlpBlockTxs));
    return list;
}

void rlp_decode_item_tx_list(benchmark::State& state) {
    const Bytes& list = block_list();
    for (auto _ : state) {
        auto item = rlp::decode_item(list);
        if (!item || item->items.size() != kRlpBlockTxs) {
            state.SkipWithError("decode_item failed");
            break;
        }
        benchmark::DoNotOptimize(item);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kRlpBlockTxs));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * list.size()));
}
BENCHMARK(rlp_decode_item_tx_list)->Unit(benchmark::kMicrosecond);

void rlp_walk_and_tx_decode(benchmark::State& state) {
    const Bytes& list = block_list();
    for (auto _ : state) {
        BytesView whole = list;
        auto payload = rlp::decode_list(whole);
        if (!payload || !whole.empty()) {
            state.SkipWithError("outer list malformed");
            break;
        }
        size_t count = 0;
        bool ok = true;
        for (BytesView rest = *payload; !rest.empty() && ok; ++count) {
            // A legacy transaction is the list item itself; a typed one is a string's payload.
            const BytesView start = rest;
            auto header = rlp::decode_header(rest);
            if (!header) {
                ok = false;
                break;
            }
            const BytesView encoding =
                header->list ? start.first(start.size() - rest.size() + header->payload_length)
                             : rest.first(header->payload_length);
            rest = rest.subspan(header->payload_length);
            auto t = tx::decode(encoding);
            ok = t.has_value();
            benchmark::DoNotOptimize(t);
        }
        if (!ok || count != kRlpBlockTxs) {
            state.SkipWithError("tx decode failed");
            break;
        }
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kRlpBlockTxs));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * list.size()));
}
BENCHMARK(rlp_walk_and_tx_decode)->Unit(benchmark::kMicrosecond);

}  // namespace
