// The pipeline split a consensus node needs (Pipeline::check_template, commit_checked): a
// template is sealed into the head's child and executed without writing anything, and exactly
// that outcome is committed later, or refused if the head moved meanwhile. Empty blocks too: an
// empty write set keeps the parent's state root.

#include <barrel/core/hex.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include "stage_error.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

#include <variant>

using namespace barrel;
using barrel::test::generate_or_throw;
using barrel::test::ScratchDir;
using barrel::test::stage_error;
using pipeline::LinkError;
using pipeline::LinkErrorCode;
using pipeline::PipelineError;
using pipeline::Stage;

namespace {

const gen::Workload& checked_chain() {
    static const gen::Workload w =
        generate_or_throw({.seed = 23, .blocks = 2, .txs = 12, .accounts = 10});
    return w;
}

struct CheckedNode {
    explicit CheckedNode(const std::filesystem::path& dir) {
        auto s = store::Store::init(dir, checked_chain().genesis);
        if (!s) throw std::runtime_error(s.error().message);
        store = std::move(s).value();
        pipe = std::make_unique<pipeline::Pipeline>(*store, pipeline::Config{});
    }
    std::unique_ptr<store::Store> store;
    std::unique_ptr<pipeline::Pipeline> pipe;
};

block::Block checked_block(size_t index) {
    auto b = block::decode_block(checked_chain().blocks.at(index));
    if (!b) throw std::runtime_error(block::describe(b.error()));
    return std::move(b).value();
}

/// Block `index` as a template: its header without gas used and roots (what execution computes),
/// and with its place (number, parent hash) only if `placed`.
Bytes template_of(size_t index, bool placed, std::span<const BytesView> txs = {},
                  bool keep_txs = true) {
    const block::Block b = checked_block(index);
    block::Header h = *b.header;
    h.gas_used = 0;
    h.txs_root = h.receipts_root = h.state_root = Hash{};
    if (!placed) {
        h.number = 0;
        h.parent_hash = Hash{};
    }
    return block::encode_block(h, keep_txs ? std::span<const BytesView>{b.tx_encodings} : txs);
}

TEST(pipeline_checked, a_template_is_sealed_without_writing_and_committed_as_checked) {
    ScratchDir tmp;
    CheckedNode node{tmp / "data"};
    const store::Head genesis = node.store->head();
    for (const bool placed : {true, false}) {
        auto checked = node.pipe->check_template(template_of(0, placed));
        ASSERT_TRUE(checked) << pipeline::describe(checked.error());
        // Sealed into the chain's own block 1: same header, roots, hash.
        EXPECT_EQ(checked->block().hash, checked_block(0).hash);
        EXPECT_EQ(*checked->block().header, *checked_block(0).header);
        EXPECT_EQ(checked->outcome().state_root, checked_block(0).header->state_root);
        EXPECT_EQ(checked->block().senders.size(), checked_block(0).size());
        // Nothing written.
        EXPECT_EQ(node.store->head().number, 0u);
        EXPECT_EQ(node.store->head().hash, genesis.hash);
        EXPECT_FALSE(node.store->raw_block(1).value());
    }
    auto checked = node.pipe->check_template(template_of(0, true));
    ASSERT_TRUE(checked);
    const auto committed = node.pipe->commit_checked(*checked);
    ASSERT_TRUE(committed) << pipeline::describe(committed.error());
    EXPECT_EQ(committed->number, 1u);
    EXPECT_EQ(committed->hash, checked_block(0).hash);
    EXPECT_EQ(committed->transactions, checked_block(0).size());
    EXPECT_EQ(node.store->head().hash, checked_block(0).hash);
    EXPECT_EQ(node.store->head().state_root, checked_block(0).header->state_root);
    // The stored block is the chain's block 1, byte for byte.
    EXPECT_EQ(node.store->raw_block(1).value().value(), checked_chain().blocks[0]);
    // And the next block follows it as it would an imported block 1.
    ASSERT_TRUE(node.pipe->import_block(checked_chain().blocks[1]));
}

// A proposer's template built from its pool's decoded transactions (ChainApp's PrepareProposal):
// the same sealed block, outcome and stored bytes as the wire template of the same
// transactions, with nothing decoded or recovered again (the senders are taken as given, so a
// wrong one shows in the outcome: it is never checked against the signature).
TEST(pipeline_checked, a_decoded_template_with_its_senders_seals_the_same_block_as_its_wire) {
    ScratchDir tmp;
    CheckedNode node{tmp / "data"};
    const block::Block chain_block = checked_block(0);
    const auto decoded_template = [&](std::optional<Address> first_sender = std::nullopt) {
        // Transactions, hashes and senders carried over from a decoded block whose bytes then
        // go away, as a pool's do after the block is built.
        block::Block from = checked_block(0);
        block::Header h = *from.header;
        h.gas_used = 0;
        h.txs_root = h.receipts_root = h.state_root = Hash{};
        if (!block::recover_senders(from, h.chain_id, nullptr, false))
            throw std::runtime_error("the chain's block 1 does not verify");
        if (first_sender) from.senders[0] = *first_sender;
        return block::with_header(std::move(from), h);
    };
    auto checked = node.pipe->check_template(decoded_template());
    ASSERT_TRUE(checked) << pipeline::describe(checked.error());
    EXPECT_EQ(checked->block().hash, chain_block.hash);
    EXPECT_EQ(*checked->block().header, *chain_block.header);
    EXPECT_EQ(checked->outcome().state_root, chain_block.header->state_root);
    EXPECT_EQ(checked->times().decode_ms, 0.0);
    EXPECT_EQ(checked->times().verify_ms, 0.0);
    // Given senders are used as they are: another one is another outcome (or a failure).
    auto forged = node.pipe->check_template(decoded_template(Address{}));
    EXPECT_FALSE(forged && forged->outcome().state_root == chain_block.header->state_root);
    EXPECT_EQ(node.store->head().number, 0u);
    const auto committed = node.pipe->commit_checked(*checked);
    ASSERT_TRUE(committed) << pipeline::describe(committed.error());
    EXPECT_EQ(node.store->raw_block(1).value().value(), checked_chain().blocks[0]);
    ASSERT_TRUE(node.pipe->import_block(checked_chain().blocks[1]));
}

TEST(pipeline_checked, a_template_that_names_another_place_is_not_the_heads_child) {
    ScratchDir tmp;
    CheckedNode node{tmp / "data"};
    const store::Head head = node.store->head();
    const block::Block b = checked_block(0);
    auto with = [&](uint64_t number, const Hash& parent) {
        block::Header h = *b.header;
        h.number = number;
        h.parent_hash = parent;
        return node.pipe->check_template(block::encode_block(h, b.tx_encodings));
    };
    const auto ahead = with(3, head.hash);
    const auto link = stage_error<LinkError>(ahead, Stage::link);
    EXPECT_EQ(link.code, LinkErrorCode::not_child_of_head);
    EXPECT_EQ(link.number, 3u);
    EXPECT_EQ(link.head_number, 0u);
    EXPECT_EQ(link.head_hash, head.hash);
    EXPECT_EQ(pipeline::describe(ahead.error()),
              "block 3: link: not a child of the head (block 0)");

    Hash other = head.hash;
    other[0] ^= 1;
    EXPECT_EQ(stage_error<LinkError>(with(1, other), Stage::link).code,
              LinkErrorCode::not_child_of_head);
    // A number alone, or a parent alone, is checked too.
    EXPECT_EQ(stage_error<LinkError>(with(2, Hash{}), Stage::link).code,
              LinkErrorCode::not_child_of_head);
    EXPECT_EQ(stage_error<LinkError>(with(0, other), Stage::link).code,
              LinkErrorCode::not_child_of_head);
    EXPECT_EQ(node.store->head().number, 0u);
}

TEST(pipeline_checked, a_checked_block_is_refused_once_the_head_has_moved) {
    ScratchDir tmp;
    CheckedNode node{tmp / "data"};
    // Two rounds of one height: two checked blocks, one of them decided.
    auto first = node.pipe->check_template(template_of(0, true));
    auto empty = node.pipe->check_template(template_of(0, true, {}, false));
    ASSERT_TRUE(first);
    ASSERT_TRUE(empty);
    ASSERT_TRUE(node.pipe->commit_checked(*first));
    const auto refused = node.pipe->commit_checked(*empty);
    const auto link = stage_error<LinkError>(refused, Stage::link);
    EXPECT_EQ(link.code, LinkErrorCode::conflicts_with_stored);
    EXPECT_EQ(link.number, 1u);
    EXPECT_EQ(link.head_number, 1u);
    // Committing the same checked block twice is refused as well: it is no longer a child.
    EXPECT_EQ(stage_error<LinkError>(node.pipe->commit_checked(*first), Stage::link).code,
              LinkErrorCode::conflicts_with_stored);
    EXPECT_EQ(node.store->head().hash, checked_block(0).hash);
}

TEST(pipeline_checked, an_empty_block_is_stored_and_keeps_the_parents_state_root) {
    ScratchDir tmp;
    CheckedNode node{tmp / "data"};
    const store::Head genesis = node.store->head();
    auto empty = node.pipe->check_template(template_of(0, false, {}, false));
    ASSERT_TRUE(empty) << pipeline::describe(empty.error());
    EXPECT_TRUE(empty->outcome().writes.empty());
    EXPECT_EQ(empty->outcome().state_root, genesis.state_root);
    EXPECT_EQ(empty->block().header->state_root, genesis.state_root);
    EXPECT_EQ(empty->block().header->gas_used, 0u);
    const auto committed = node.pipe->commit_checked(*empty);
    ASSERT_TRUE(committed) << pipeline::describe(committed.error());
    EXPECT_EQ(committed->transactions, 0u);
    EXPECT_EQ(node.store->head().number, 1u);
    EXPECT_NE(node.store->head().hash, genesis.hash);
    EXPECT_EQ(node.store->head().state_root, genesis.state_root);
    const auto stored = node.store->header_record(1).value();
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->transaction_count, 0u);
    EXPECT_EQ(stored->header.state_root, genesis.state_root);
    EXPECT_TRUE(node.store->raw_block(1).value());

    // Another node imports the empty block to the same head, and the chain goes on over it.
    CheckedNode other{tmp / "other"};
    ASSERT_TRUE(other.pipe->import_block(node.store->raw_block(1).value().value()));
    EXPECT_EQ(other.store->head().hash, node.store->head().hash);
    auto next = node.pipe->check_template(template_of(0, false));
    ASSERT_TRUE(next) << pipeline::describe(next.error());
    EXPECT_EQ(next->block().header->number, 2u);
    EXPECT_EQ(next->outcome().state_root, checked_block(0).header->state_root)
        << "the same writes over the same root";
}

TEST(pipeline_checked, a_failed_template_blames_its_transaction) {
    ScratchDir tmp;
    CheckedNode node{tmp / "data"};
    const block::Block b = checked_block(0);
    ASSERT_GE(b.size(), 3u);
    // The same transaction twice: the second copy's nonce is spent.
    std::vector<BytesView> txs = b.tx_encodings;
    txs.insert(txs.begin() + 2, txs[1]);
    const auto duplicate = node.pipe->check_template(template_of(0, true, txs, false));
    const auto exec_error = stage_error<exec::ExecError>(duplicate, Stage::execute);
    EXPECT_EQ(exec_error.code, exec::ExecErrorCode::nonce_mismatch);
    EXPECT_EQ(exec_error.tx_index, 2u);
    auto blamed = pipeline::blamed_transaction(duplicate.error());
    ASSERT_TRUE(blamed);
    EXPECT_EQ(blamed->tx_index, 2u);
    EXPECT_EQ(blamed->reason, "nonce_mismatch");

    // A garbled transaction: decode names it.
    const Bytes garbage{0x01};
    txs = b.tx_encodings;
    txs[1] = garbage;
    const auto garbled = node.pipe->check_template(template_of(0, true, txs, false));
    EXPECT_EQ(stage_error<block::BlockError>(garbled, Stage::decode).code,
              block::BlockErrorCode::malformed_tx);
    blamed = pipeline::blamed_transaction(garbled.error());
    ASSERT_TRUE(blamed);
    EXPECT_EQ(blamed->tx_index, 1u);
    EXPECT_EQ(blamed->reason, "malformed_tx");

    // Not a transaction's fault: the block's place, the store.
    const auto ahead = node.pipe->check_template([&] {
        block::Header h = *b.header;
        h.number = 9;
        return block::encode_block(h, b.tx_encodings);
    }());
    ASSERT_FALSE(ahead);
    EXPECT_FALSE(pipeline::blamed_transaction(ahead.error()));
    EXPECT_FALSE(pipeline::blamed_transaction(PipelineError{
        Stage::commit, 1, 0, store::StoreError{store::StoreErrorCode::io, "disk full"}}));
    EXPECT_FALSE(pipeline::blamed_transaction(PipelineError{
        Stage::execute, 1, 0, exec::ExecError{exec::ExecErrorCode::state_unreadable, 0}}));
    EXPECT_EQ(node.store->head().number, 0u);
}

}  // namespace
