// The pool as a request's store snapshot sees it (issue 29, finding 9): a transaction that left
// the pool with a block the snapshot cannot see yet is still pooled for that request, so the
// pending nonce never goes back and an accepted transaction never reads back null. The seam: the
// pool checks against a state one block ahead of the store the methods read, as it is between a
// block's commit and a batch's snapshot taken just before it.

#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/store/store.hpp>

#include "pool_fixtures.hpp"
#include "rpc/methods.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>

namespace barrel::rpc {
namespace {

using namespace barrel::pool::testing;

TEST(rpc_pool_view, what_left_with_a_block_the_snapshot_cannot_see_is_still_pooled) {
    test::ScratchDir dir;
    const Address sender = address_of_key(1);
    const auto genesis =
        chain::parse_genesis(R"({"chain_id": 1, "gas_limit": 30000000, "accounts": {")" +
                             to_hex(sender) + R"(": {"balance": "1000000000000"}}})")
            .value();
    const auto store = store::Store::init(dir.path() / "d", genesis).value();
    // The pool's state: the store's head now, block 1 after the commit below.
    state::MemoryState ahead;
    ahead.set_account(sender, state::Account{0, u256{1'000'000'000'000}});
    pool::Pool pool{pool::Config{.chain_id = 1}, ahead, nullptr};
    Node node{*store, pool, "barrel/test"};
    Methods methods{node, Limits{}};
    auto call = [&](std::string method, json params) {
        return methods.call(Call{.id = 1, .method = std::move(method), .params = std::move(params)})
            .value();
    };
    const Bytes raw = signed_tx({.key = 1, .nonce = 0});
    const std::string hash = to_hex(hash_of(raw));
    ASSERT_TRUE(pool.admit_one(raw).has_value());
    EXPECT_EQ(call("eth_getTransactionCount", {to_hex(sender), "pending"}), "0x1");

    // Block 1 takes it and commits; the store this request reads is still at block 0.
    const pool::Selection block = pool.take(10, 1'000'000);
    ASSERT_EQ(block.txs.size(), 1u);
    ahead.set_account(sender, state::Account{1, u256{1'000'000'000'000} - block.txs[0]->cost});
    pool.committed(1, std::vector<Hash>{block.txs[0]->hash}, {});
    ASSERT_EQ(pool.status().pending, 0u);
    ASSERT_EQ(store->head().number, 0u);

    // Once 0x0 (the store's nonce: the pool held nothing) and null.
    EXPECT_EQ(call("eth_getTransactionCount", {to_hex(sender), "pending"}), "0x1");
    const json found = call("eth_getTransactionByHash", {hash});
    ASSERT_TRUE(found.is_object()) << found;
    EXPECT_EQ(found["hash"], hash);
    EXPECT_TRUE(found["blockHash"].is_null());
    EXPECT_EQ(call("eth_getTransactionCount", {to_hex(sender), "latest"}), "0x0");
}

}  // namespace
}  // namespace barrel::rpc
