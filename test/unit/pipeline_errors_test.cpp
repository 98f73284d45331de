// A PipelineError carries the failing stage's own error, so that a caller branches on the reason
// (std::get_if) instead of parsing text: a BlockError from decode and verify, a LinkError, an
// ExecError, the seal's SealErrorCode, a StoreError from commit. describe() still gives the one
// line the CLI prints, composed from the stage error's own describe().

#include <barrel/core/hex.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include "stage_error.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

#include <functional>
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

const gen::Workload& test_chain() {
    static const gen::Workload w = generate_or_throw(
        {.seed = 19, .blocks = 3, .txs = 30, .accounts = 20, .mix = gen::Mix::mixed});
    return w;
}

/// A store at genesis (or with the first `blocks` blocks of the chain) and a pipeline over it.
struct Node {
    Node(const std::filesystem::path& dir, size_t blocks, const store::Options& options = {}) {
        auto s = store::Store::init(dir, test_chain().genesis, options);
        if (!s) throw std::runtime_error(s.error().message);
        store = std::move(s).value();
        pipe = std::make_unique<pipeline::Pipeline>(*store, pipeline::Config{});
        for (size_t i = 0; i < blocks; ++i)
            if (auto r = pipe->import_block(test_chain().blocks[i]); !r)
                throw std::runtime_error(pipeline::describe(r.error()));
    }
    std::unique_ptr<store::Store> store;
    std::unique_ptr<pipeline::Pipeline> pipe;
};

block::Block decoded(size_t index) {
    auto b = block::decode_block(test_chain().blocks.at(index));
    if (!b) throw std::runtime_error(block::describe(b.error()));
    return std::move(b).value();
}

/// Block `index` (0-based) with its header changed by `edit`.
Bytes with_header(size_t index, const std::function<void(block::Header&)>& edit) {
    const block::Block b = decoded(index);
    block::Header h = *b.header;
    edit(h);
    return block::encode_block(h, b.tx_encodings);
}

/// Block `index` with transaction `tx` replaced by `encoding`.
Bytes with_tx(size_t index, size_t tx, BytesView encoding) {
    const block::Block b = decoded(index);
    std::vector<BytesView> txs = b.tx_encodings;
    txs.at(tx) = encoding;
    return block::encode_block(*b.header, txs);
}

}  // namespace

TEST(pipeline_errors, a_malformed_transaction_is_the_decoder_block_error) {
    ScratchDir tmp;
    Node node{tmp / "data", 0};
    const Bytes type1_without_payload{0x01};
    const auto r = node.pipe->import_block(with_tx(0, 2, type1_without_payload));
    const auto e = stage_error<block::BlockError>(r, Stage::decode);
    EXPECT_EQ(e.code, block::BlockErrorCode::malformed_tx);
    EXPECT_EQ(e.tx_index, 2u);
    EXPECT_EQ(r.error().block_number, 1u);
    EXPECT_EQ(pipeline::describe(r.error()), "block 1: decode: " + block::describe(e));
}

TEST(pipeline_errors, a_bad_signature_is_the_verify_block_error) {
    ScratchDir tmp;
    Node node{tmp / "data", 0};
    const block::Block b = decoded(0);
    size_t index = b.size();
    for (size_t i = 0; i < b.size() && index == b.size(); ++i) {
        const BytesView enc = b.tx_encodings[i];
        if (enc.size() > 33 && enc[enc.size() - 33] == 0xa0)
            index = i;  // s is the last item, 32 bytes
    }
    ASSERT_LT(index, b.size());
    Bytes damaged{b.tx_encodings[index].begin(), b.tx_encodings[index].end()};
    damaged[damaged.size() - 32] ^= 0x80;  // s gets its top bit: above n/2

    const auto r = node.pipe->import_block(with_tx(0, index, damaged));
    const auto e = stage_error<block::BlockError>(r, Stage::verify);
    EXPECT_EQ(e.code, block::BlockErrorCode::invalid_tx);
    EXPECT_EQ(e.tx_index, index);
    EXPECT_EQ(e.tx.code, tx::TxErrorCode::high_s);
    EXPECT_EQ(pipeline::describe(r.error()),
              "block 1: verify: transaction " + std::to_string(index) + ": invalid_tx: s: high_s");
}

TEST(pipeline_errors, a_block_that_does_not_follow_the_head_is_a_link_error_with_its_code) {
    ScratchDir tmp;
    Node node{tmp / "data", 1};
    const store::Head head = node.store->head();
    Hash wrong = decoded(1).header->parent_hash;
    wrong[31] ^= 1;
    struct Case {
        const char* name;
        Bytes wire;
        LinkError expected;
        std::string line;
    };
    const std::vector<Case> cases{
        {"parent_mismatch", with_header(1, [&](block::Header& h) { h.parent_hash = wrong; }),
         LinkError{LinkErrorCode::parent_mismatch, 2, wrong, 1, head.hash},
         "block 2: link: parent hash " + to_hex(wrong) + " is not the head " + to_hex(head.hash)},
        {"blocks_missing", test_chain().blocks[2],
         LinkError{LinkErrorCode::blocks_missing, 3, decoded(2).header->parent_hash, 1, head.hash},
         "block 3: link: expected block 2 (blocks missing)"},
        {"conflicts_with_stored", with_header(0, [](block::Header& h) { h.timestamp += 1; }),
         LinkError{LinkErrorCode::conflicts_with_stored, 1, decoded(0).header->parent_hash, 1,
                   head.hash},
         "block 1: link: conflicts with stored block 1"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const auto r = node.pipe->import_block(c.wire);
        EXPECT_EQ(stage_error<LinkError>(r, Stage::link), c.expected);
        EXPECT_EQ(pipeline::describe(r.error()), c.line);
    }
    EXPECT_EQ(node.store->head().number, 1u);
}

TEST(pipeline_errors, a_reused_transaction_is_the_executor_error) {
    ScratchDir tmp;
    Node node{tmp / "data", 1};
    // Block 2's header over block 1's transactions: their nonces are spent.
    const block::Block b1 = decoded(0);
    const Bytes wire = block::encode_block(*decoded(1).header, b1.tx_encodings);
    const auto r = node.pipe->import_block(wire);
    const auto e = stage_error<exec::ExecError>(r, Stage::execute);
    EXPECT_EQ(e, (exec::ExecError{exec::ExecErrorCode::nonce_mismatch, 0}));
    EXPECT_EQ(pipeline::describe(r.error()), "block 2: execute: transaction 0: nonce_mismatch");
}

TEST(pipeline_errors, a_wrong_state_root_is_the_seal_code) {
    ScratchDir tmp;
    Node node{tmp / "data", 0};
    const auto r =
        node.pipe->import_block(with_header(0, [](block::Header& h) { h.state_root[0] ^= 1; }));
    EXPECT_EQ(stage_error<exec::SealErrorCode>(r, Stage::seal),
              exec::SealErrorCode::state_root_mismatch);
    EXPECT_EQ(pipeline::describe(r.error()), "block 1: seal: state_root_mismatch");
}

TEST(pipeline_errors, a_commit_the_store_refuses_is_its_store_error) {
    ScratchDir tmp;
    store::Options small;
    small.max_block_bytes = 64;  // every block of the chain is larger
    Node node{tmp / "data", 0, small};
    const auto r = node.pipe->import_block(test_chain().blocks[0]);
    const auto e = stage_error<store::StoreError>(r, Stage::commit);
    EXPECT_EQ(pipeline::describe(r.error()), "block 1: commit: " + e.message);
    EXPECT_EQ(node.store->head().number, 0u);
}

TEST(pipeline_errors, a_stream_reports_the_stage_error_of_its_first_failing_block) {
    ScratchDir tmp;
    Node node{tmp / "data", 0};
    std::vector<Bytes> wires = test_chain().blocks;
    wires[1] = with_header(1, [](block::Header& h) { h.receipts_root[3] ^= 1; });
    size_t next = 0;
    const auto r = node.pipe->import_stream([&]() -> std::optional<Bytes> {
        if (next == wires.size()) return std::nullopt;
        return wires[next++];
    });
    EXPECT_EQ(stage_error<exec::SealErrorCode>(r, Stage::seal),
              exec::SealErrorCode::receipts_root_mismatch);
    EXPECT_EQ(r.error().block_index, 1u);
    EXPECT_EQ(node.store->head().number, 1u);
}

// What a consensus node branches on when it votes: not the head's child (wait, or sync), an
// invalid block (vote no), or a block that executes (compare the roots).
TEST(pipeline_errors, check_proposal_says_why_a_proposal_fails) {
    ScratchDir tmp;
    Node node{tmp / "data", 1};
    const store::Head head = node.store->head();

    const auto future = node.pipe->check_proposal(test_chain().blocks[2]);
    const auto link = stage_error<LinkError>(future, Stage::link);
    EXPECT_EQ(link.code, LinkErrorCode::not_child_of_head);
    EXPECT_EQ(link.number, 3u);
    EXPECT_EQ(link.head_number, 1u);
    EXPECT_EQ(link.head_hash, head.hash);
    EXPECT_EQ(pipeline::describe(future.error()),
              "block 3: link: not a child of the head (block 1)");

    const auto reused =
        node.pipe->check_proposal(block::encode_block(*decoded(1).header, decoded(0).tx_encodings));
    EXPECT_EQ(stage_error<exec::ExecError>(reused, Stage::execute).code,
              exec::ExecErrorCode::nonce_mismatch);

    const Bytes type1_without_payload{0x01};
    const auto garbled = node.pipe->check_proposal(with_tx(1, 0, type1_without_payload));
    EXPECT_EQ(stage_error<block::BlockError>(garbled, Stage::decode).code,
              block::BlockErrorCode::malformed_tx);

    const auto ok = node.pipe->check_proposal(test_chain().blocks[1]);
    ASSERT_TRUE(ok) << pipeline::describe(ok.error());
    EXPECT_EQ(ok->outcome.state_root, decoded(1).header->state_root);
}
