// Store::snapshot: a view that later commits do not change (the node's requests each read one).

#include <barrel/block/block.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

namespace barrel::store {
namespace {

TEST(store_snapshot, later_commits_do_not_change_what_a_snapshot_reads) {
    test::ScratchDir dir;
    const auto w = test::generate_or_throw({.seed = 8, .blocks = 2, .txs = 10, .accounts = 6});
    auto store = Store::init(dir.path() / "d", w.genesis).value();
    pipeline::Pipeline p{*store, {}};
    ASSERT_TRUE(p.import_block(w.blocks[0]));
    const Head one = store->head();
    const Address sender = w.senders[1][0];
    const auto before = store->account(sender).value();
    const Hash in_two = block::transaction_hashes(w.blocks[1]).value().at(0);

    auto view = store->snapshot().value();
    ASSERT_TRUE(p.import_block(w.blocks[1]));
    ASSERT_EQ(store->head().number, 2u);
    ASSERT_NE(store->account(sender).value(), before);  // block 2 spent from it

    EXPECT_EQ(view->head().number, one.number);
    EXPECT_EQ(view->head().hash, one.hash);
    EXPECT_EQ(view->header_record(2).value(), std::nullopt);
    EXPECT_EQ(view->raw_block(2).value(), std::nullopt);
    EXPECT_EQ(view->block_number(store->head().hash).value(), std::nullopt);
    EXPECT_EQ(view->transaction_record(in_two).value(), std::nullopt);
    EXPECT_EQ(view->receipt_record(in_two).value(), std::nullopt);
    EXPECT_EQ(view->account(sender).value(), before);
    const auto header = view->header_record(1).value();
    ASSERT_TRUE(header.has_value());
    EXPECT_EQ(header->hash, one.hash);
    EXPECT_EQ(view->raw_block(1).value(), w.blocks[0]);

    const auto now = store->snapshot().value();
    EXPECT_EQ(now->head().number, 2u);
    EXPECT_EQ(now->account(sender).value(), store->account(sender).value());
    EXPECT_EQ(now->raw_block(2).value(), w.blocks[1]);
    const auto tx = now->transaction_record(in_two).value();
    ASSERT_TRUE(tx.has_value());
    EXPECT_EQ(tx->location.block_number, 2u);
    EXPECT_TRUE(now->receipt_record(in_two).value().has_value());
}

}  // namespace
}  // namespace barrel::store
