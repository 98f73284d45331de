// The ABCI dispatch with a call observer, as the node runs it (the abci call-duration metrics):
// one CheckTx, the call the mempool makes once per transaction it hears of, on an application
// that answers at once, so what is measured is the dispatch and its timing point
// (docs/benchmarks.md, "ABCI dispatch: one timing point").

#include "abci/application.hpp"
#include <benchmark/benchmark.h>

#include <string>
#include <string_view>

namespace {

using namespace barrel::abci;

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

}  // namespace
