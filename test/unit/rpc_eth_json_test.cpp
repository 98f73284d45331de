// The typed records mapped to Ethereum's JSON (rpc/eth_json.hpp) give what the stored documents
// gave, field for field, on every transaction type: the records replace the documents as the
// RPC layer's source without changing one answer.
#include <barrel/block/block.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include "rpc/eth_json.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

#include <set>

namespace barrel::rpc {
namespace {

TEST(rpc_eth_json, records_map_to_what_the_documents_mapped_to) {
    test::ScratchDir dir;
    const auto w = test::generate_or_throw(
        {.seed = 33, .blocks = 1, .txs = 60, .accounts = 40, .mix = gen::Mix::mixed});
    auto store = store::Store::init(dir.path() / "d", w.genesis).value();
    pipeline::Pipeline p{*store, {}};
    ASSERT_TRUE(p.import_block(w.blocks[0]));
    const auto block = block::decode_block(w.blocks[0]).value();
    const u256 base_fee{7};

    const auto header_doc = store->header(1).value().value();
    const auto header = store->header_record(1).value().value();
    const json hashes = json::array({"0x01"});
    EXPECT_EQ(eth_block(header, base_fee, 123, hashes),
              eth_block(header_doc, base_fee, 123, hashes));
    const json head_only = eth_block(header, base_fee, 123, nullptr);
    EXPECT_FALSE(head_only.contains("transactions"));
    EXPECT_FALSE(head_only.contains("uncles"));

    std::set<uint64_t> types;
    for (size_t i = 0; i < block.size(); ++i) {
        SCOPED_TRACE(i);
        const Hash& hash = block.tx_hashes[i];
        const auto tx_doc = store->transaction(hash).value().value();
        const auto tx = store->transaction_record(hash).value().value();
        types.insert(static_cast<uint64_t>(tx.tx.type));
        EXPECT_EQ(eth_transaction(tx, base_fee), eth_transaction(tx_doc, base_fee));
        const auto receipt_doc = store->receipt(hash).value().value();
        const auto receipt = store->receipt_record(hash).value().value();
        EXPECT_EQ(eth_receipt(receipt, tx, base_fee), eth_receipt(receipt_doc, tx_doc, base_fee));
        // A pooled transaction: the same, with null block fields.
        json pooled = eth_transaction(tx.tx, tx.hash, tx.sender, nullptr, base_fee);
        EXPECT_TRUE(pooled["blockHash"].is_null());
        EXPECT_TRUE(pooled["transactionIndex"].is_null());
    }
    EXPECT_EQ(types, (std::set<uint64_t>{0, 1, 2}));  // every type was compared
}

}  // namespace
}  // namespace barrel::rpc
