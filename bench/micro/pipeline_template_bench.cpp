// A consensus proposer's check of its own block (ChainApp's PrepareProposal) on a generated
// 2,500-transfer block, against the genesis state of a fresh datadir:
//
//   BM_check_template/wire      the template encoded from the transactions' bytes and checked by
//                               Pipeline::check_template(Bytes): decoded, every sender looked up
//                               in a sender cache that holds them all (as a proposer's admission
//                               left it), linked, executed, sealed
//   BM_check_template/decoded   the same block built from the transactions as a pool holds them
//                               (decoded, hashed, their senders recovered) around their bytes
//                               (block::with_header) and checked by check_template(block::Block):
//                               linked, executed, sealed; nothing decoded or looked up
//
// Time is wall-clock; nothing is committed, so every iteration checks the same child of the
// genesis over the same state.

#include <barrel/block/block.hpp>
#include <barrel/block/sender_cache.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace barrel;
namespace fs = std::filesystem;

struct TemplateFixture {
    gen::Workload workload;
    block::Block block;    ///< the generated block 1, decoded, senders filled
    block::Header header;  ///< its header as a template: no gas used, no roots
    fs::path root;
    std::unique_ptr<store::Store> store;
    std::unique_ptr<block::SenderCache> cache;
    std::unique_ptr<pipeline::Pipeline> pipe;
    /// At exit: the datadir closed, then removed.
    ~TemplateFixture() {
        pipe.reset();
        store.reset();
        fs::remove_all(root);
    }
};

TemplateFixture& template_fixture() {
    static const std::unique_ptr<TemplateFixture> fixture = [] {
        auto f = std::make_unique<TemplateFixture>();
        gen::Options options;
        options.blocks = 1;
        auto w = gen::generate(options);
        if (!w) std::abort();
        f->workload = std::move(*w);
        auto b = block::decode_block(f->workload.blocks[0]);
        if (!b) std::abort();
        b->senders = f->workload.senders[0];
        f->block = std::move(*b);
        f->header = *f->block.header;
        f->header.gas_used = 0;
        f->header.txs_root = f->header.receipts_root = f->header.state_root = Hash{};
        f->root =
            fs::temp_directory_path() / ("barrel-bench-template-" + std::to_string(::getpid()));
        fs::remove_all(f->root);
        auto opened = store::Store::init(f->root, f->workload.genesis, store::Options{});
        if (!opened) std::abort();
        f->store = std::move(*opened);
        f->cache = std::make_unique<block::SenderCache>();
        for (size_t i = 0; i < f->block.size(); ++i)
            f->cache->insert(f->block.tx_hashes[i], f->block.senders[i]);
        f->pipe = std::make_unique<pipeline::Pipeline>(
            *f->store, pipeline::Config{.sender_cache = f->cache.get()});
        return f;
    }();
    return *fixture;
}

/// What a pool holds of the block's transactions, copied afresh: the decoded transactions
/// view `from`'s bytes, as a pooled one views its own encoding.
block::Block as_pooled(const block::Block& from) {
    block::Block b;
    for (size_t i = 0; i < from.size(); ++i) {
        b.tx_encodings.push_back(from.tx_encodings[i]);
        b.txs.push_back(from.txs[i]);
        b.tx_hashes.push_back(from.tx_hashes[i]);
        b.senders.push_back(from.senders[i]);
    }
    return b;
}

void BM_check_template_wire(benchmark::State& state) {
    TemplateFixture& f = template_fixture();
    for (auto _ : state) {
        auto checked = f.pipe->check_template(block::encode_block(f.header, f.block.tx_encodings));
        if (!checked) state.SkipWithError(pipeline::describe(checked.error()).c_str());
        benchmark::DoNotOptimize(checked);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f.block.size()));
}

void BM_check_template_decoded(benchmark::State& state) {
    TemplateFixture& f = template_fixture();
    for (auto _ : state) {
        auto checked = f.pipe->check_template(block::with_header(as_pooled(f.block), f.header));
        if (!checked) state.SkipWithError(pipeline::describe(checked.error()).c_str());
        benchmark::DoNotOptimize(checked);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f.block.size()));
}

BENCHMARK(BM_check_template_wire)->Name("BM_check_template/wire")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_check_template_decoded)
    ->Name("BM_check_template/decoded")
    ->Unit(benchmark::kMillisecond);

}  // namespace
