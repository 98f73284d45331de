#pragma once
// A node's parts in one process, wired as `barrel-node run` wires them: a datadir's store, one
// sender cache that the pipeline's verify stage and the pool's admission share, the pipeline and
// the pool over the store (its bounds from the chain's genesis). The tests of what sits on top
// (the sealer, the ABCI application, the RPC methods) start from it.

#include <barrel/block/sender_cache.hpp>
#include <barrel/core/bytes.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/state/state.hpp>
#include <barrel/store/store.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

namespace barrel::test {

struct NodeParts {
    /// Over `datadir`, a new one (store::Store::init) or one reopened. `pool_state`: what the
    /// pool checks transactions against, when not the store (a test's lie).
    explicit NodeParts(std::unique_ptr<store::Store> datadir,
                       const state::StateReader* pool_state = nullptr)
        : store{std::move(datadir)},
          pipeline{*store, pipeline::Config{.sender_cache = &cache}},
          pool{pool::Config{.chain_id = store->genesis().config.chain_id,
                            .base_fee = store->genesis().config.base_fee,
                            .block_gas_limit = store->genesis().gas_limit},
               pool_state ? *pool_state : *store, &cache} {}

    /// Imports `blocks` (a generated chain) through the pipeline; each must import.
    void import(const std::vector<Bytes>& blocks) {
        for (const Bytes& b : blocks) EXPECT_TRUE(pipeline.import_block(b));
    }

    block::SenderCache cache{4096};
    std::unique_ptr<store::Store> store;
    pipeline::Pipeline pipeline;
    pool::Pool pool;
};

}  // namespace barrel::test
