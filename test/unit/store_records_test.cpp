// The typed read interface (store::Reader): what a Store and a Snapshot give back is what was
// committed, field by field, and a damaged document is an error naming it and its field.
#include <barrel/block/block.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/records.hpp>
#include <barrel/store/store.hpp>

#include "store/store_impl.hpp"
#include "store_dump.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

#include <string>

namespace barrel::store {
namespace {

/// Every record of block `number` read through `reader` equals the block as it was committed:
/// the header (with its hash and count), each transaction (with its sender and location) and
/// each receipt (whose status and gas the block's receipts root covers).
void expect_block_reads_back(const Reader& reader, const gen::Workload& w, uint64_t number) {
    SCOPED_TRACE("block " + std::to_string(number));
    const auto block = block::decode_block(w.blocks[number - 1]).value();
    const auto header = reader.header_record(number).value();
    ASSERT_TRUE(header.has_value());
    EXPECT_EQ(header->header, *block.header);
    EXPECT_EQ(header->hash, block.hash);
    EXPECT_EQ(header->transaction_count, block.size());
    EXPECT_EQ(reader.block_number(header->hash).value(), number);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < block.size(); ++i) {
        const Hash& hash = block.tx_hashes[i];
        auto tx = reader.transaction_record(hash).value();
        ASSERT_TRUE(tx.has_value()) << i;
        EXPECT_EQ(tx->tx, block.txs[i]) << i;
        EXPECT_EQ(tx->hash, hash);
        EXPECT_EQ(tx->sender, w.senders[number - 1][i]);
        EXPECT_EQ(tx->location.block_number, number);
        EXPECT_EQ(tx->location.block_hash, header->hash);
        EXPECT_EQ(tx->location.index, i);
        // The record owns its calldata: moved, the transaction still views it.
        const TransactionRecord moved = std::move(*tx);
        EXPECT_EQ(moved.tx.data.data(), moved.input.data());

        const auto receipt = reader.receipt_record(hash).value();
        ASSERT_TRUE(receipt.has_value()) << i;
        EXPECT_EQ(receipt->transaction_hash, hash);
        EXPECT_EQ(receipt->block_number, number);
        EXPECT_EQ(receipt->index, i);
        EXPECT_EQ(receipt->receipt.gas_used, exec::gas_used(block.txs[i]));
        cumulative += receipt->receipt.gas_used;
        EXPECT_EQ(receipt->receipt.cumulative_gas_used, cumulative);
    }
    EXPECT_EQ(cumulative, block.header->gas_used);
}

TEST(store_records, a_store_and_a_snapshot_read_back_every_record_of_every_type) {
    test::ScratchDir dir;
    // Every transaction type, DagTransfer calls, failing calls and a creation.
    const auto w = test::generate_or_throw(
        {.seed = 21, .blocks = 2, .txs = 40, .accounts = 30, .mix = gen::Mix::mixed});
    auto store = Store::init(dir.path() / "d", w.genesis).value();
    pipeline::Pipeline p{*store, {}};
    ASSERT_TRUE(p.import_block(w.blocks[0]));
    auto view = store->snapshot().value();
    ASSERT_TRUE(p.import_block(w.blocks[1]));

    for (const Reader* reader :
         {static_cast<const Reader*>(store.get()), static_cast<const Reader*>(view.get())})
        expect_block_reads_back(*reader, w, 1);
    expect_block_reads_back(*store, w, 2);
    // The snapshot predates block 2: none of its records, and no error.
    const auto block2 = block::decode_block(w.blocks[1]).value();
    EXPECT_EQ(view->header_record(2).value(), std::nullopt);
    EXPECT_FALSE(view->transaction_record(block2.tx_hashes[0]).value().has_value());
    EXPECT_FALSE(view->receipt_record(block2.tx_hashes[0]).value().has_value());
    EXPECT_FALSE(store->transaction_record(Hash{}).value().has_value());
}

/// A datadir whose one document is replaced by `text`; the error reading it through a Store and
/// through a Snapshot (the same).
std::string damaged_read(const std::string& family, bool header, const std::string& text) {
    test::ScratchDir dir;
    const auto w = test::generate_or_throw({.seed = 4, .blocks = 1, .txs = 3, .accounts = 4});
    const auto block = block::decode_block(w.blocks[0]).value();
    {
        auto store = Store::init(dir.path() / "d", w.genesis).value();
        pipeline::Pipeline p{*store, {}};
        EXPECT_TRUE(p.import_block(w.blocks[0]));
    }
    const std::string key =
        header ? number_key(1) : std::string{hash_bytes_key(block.tx_hashes[0])};
    test::write_raw(dir.path() / "d", family, key, text);
    auto store = Store::open(dir.path() / "d", {}).value();
    auto read = [&](const Reader& r) -> StoreError {
        if (header) return r.header_record(1).error();
        if (family == "receipts") return r.receipt_record(block.tx_hashes[0]).error();
        return r.transaction_record(block.tx_hashes[0]).error();
    };
    const StoreError from_store = read(*store);
    const StoreError from_snapshot = read(*store->snapshot().value());
    EXPECT_EQ(from_store.message, from_snapshot.message);
    EXPECT_EQ(from_store.code, StoreErrorCode::corruption);
    // The block's hash names the transaction in the message; replaced for a stable expectation.
    std::string message = from_store.message;
    if (const auto at = message.find(to_hex(block.tx_hashes[0])); at != std::string::npos)
        message.replace(at, 66, "H");
    return message;
}

TEST(store_records, a_damaged_document_is_an_error_naming_it_and_its_field) {
    EXPECT_EQ(damaged_read("headers", true, "not json"),
              "the stored document of the header of block 1 is damaged (not a JSON object)");
    EXPECT_EQ(damaged_read("headers", true, R"({"number":"0x1"})"),
              "the stored document of the header of block 1 is damaged (field parent_hash)");
    EXPECT_EQ(damaged_read("transactions", false, "[]"),
              "the stored document of transaction H is damaged (not a JSON object)");
    EXPECT_EQ(damaged_read("receipts", false, R"({"status":"0x2"})"),
              "the stored document of the receipt of transaction H is damaged (field status)");
}

// The decoders field by field: each damage is named by its field's path.
TEST(store_records, each_malformed_field_is_named) {
    const std::string header =
        R"({"chain_id":"0x1","coinbase":"0x)" + std::string(40, '1') +
        R"(","gas_limit":"0x10","gas_used":"0x5","hash":"0x)" + std::string(64, '2') +
        R"(","number":"0x7","parent_hash":"0x)" + std::string(64, '3') +
        R"(","receipts_root":"0x)" + std::string(64, '4') + R"(","state_root":"0x)" +
        std::string(64, '5') + R"(","timestamp":"0x9","transaction_count":"0x0","txs_root":"0x)" +
        std::string(64, '6') + R"("})";
    const auto ok = parse_header_document(header);
    ASSERT_TRUE(ok) << ok.error();
    EXPECT_EQ(ok->header.number, 7u);
    EXPECT_EQ(ok->header.gas_used, 5u);
    auto damage = [&](const std::string& from, const std::string& to) {
        std::string text = header;
        text.replace(text.find(from), from.size(), to);
        const auto r = parse_header_document(text);
        return r ? std::string{"parsed"} : r.error();
    };
    EXPECT_EQ(damage(R"("gas_used":"0x5")", R"("gas_used":5)"), "gas_used");
    EXPECT_EQ(damage(R"("gas_used":"0x5")", R"("gas_used":"0x1ffffffffffffffff")"), "gas_used");
    EXPECT_EQ(damage("\"coinbase\":\"0x1", "\"coinbase\":\"0x"), "coinbase");  // 19.5 bytes
    EXPECT_EQ(damage(R"("hash":"0x2)", R"("hash":"0xg)"), "hash");
    EXPECT_EQ(damage(R"("timestamp":"0x9",)", ""), "timestamp");

    const std::string tx =
        R"({"access_list":[{"address":"0x)" + std::string(40, 'a') + R"(","storage_keys":["0x)" +
        std::string(64, 'b') + R"("]}],"block_hash":"0x)" + std::string(64, 'c') +
        R"(","block_number":"0x1","chain_id":"0x1","gas_limit":"0x5208","hash":"0x)" +
        std::string(64, 'd') +
        R"(","index":"0x0","input":"0x","max_fee_per_gas":"0x9","max_priority_fee_per_gas":"0x1",)"
        R"("nonce":"0x0","r":"0x1","s":"0x2","sender":"0x)" +
        std::string(40, 'e') + R"(","to":null,"type":"0x2","v":"0x1","value":"0x0"})";
    const auto parsed = parse_transaction_document(tx);
    ASSERT_TRUE(parsed) << parsed.error();
    EXPECT_TRUE(parsed->tx.y_parity);
    EXPECT_FALSE(parsed->tx.to.has_value());
    ASSERT_EQ(parsed->tx.access_list.size(), 1u);
    EXPECT_EQ(parsed->tx.access_list[0].storage_keys.size(), 1u);
    auto damage_tx = [&](const std::string& from, const std::string& to) {
        std::string text = tx;
        text.replace(text.find(from), from.size(), to);
        const auto r = parse_transaction_document(text);
        return r ? std::string{"parsed"} : r.error();
    };
    EXPECT_EQ(damage_tx(R"("type":"0x2")", R"("type":"0x3")"), "type");
    EXPECT_EQ(damage_tx(R"("v":"0x1")", R"("v":"0x2")"), "v");  // a typed v is a parity
    EXPECT_EQ(damage_tx(R"("storage_keys":["0xb)", R"("storage_keys":["0xz)"),
              "access_list[0].storage_keys[0]");
    EXPECT_EQ(damage_tx(R"("access_list":[{)", R"("access_list":[7,{)"), "access_list[0]");
    EXPECT_EQ(damage_tx(R"("to":null)", R"("to":"0x12")"), "to");
    EXPECT_EQ(damage_tx(R"("input":"0x")", R"("input":"0x1")"), "input");
    EXPECT_EQ(damage_tx(R"("max_fee_per_gas":"0x9",)", ""), "max_fee_per_gas");
}

}  // namespace
}  // namespace barrel::store
