// The streamed pipeline executes block N+1 while block N commits, reading the state through the
// write sets of blocks not yet committed. With each commit held until a later block has executed
// (a hook of pipeline/testing.hpp, not the machine's timing), later blocks provably execute over
// uncommitted ones, and the datadir still equals a one-block-at-a-time import key for key; a
// block that fails after such speculation leaves exactly the blocks before it committed.

#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include "pipeline/testing.hpp"
#include "pipeline_hold.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>

using namespace barrel;
using barrel::test::CommitHold;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::generate_or_throw;
using barrel::test::ScratchDir;

namespace {

/// Consecutive blocks share hot accounts and DagTransfer users, so a block's reads depend on
/// what the blocks just before it wrote.
const gen::Workload& stream_chain() {
    static const gen::Workload w = generate_or_throw({.seed = 11,
                                                      .blocks = 8,
                                                      .txs = 150,
                                                      .accounts = 60,
                                                      .hot_accounts = 2,
                                                      .hot_ratio = 0.4,
                                                      .mix = gen::Mix::mixed});
    return w;
}

std::unique_ptr<store::Store> fresh_store(const std::string& dir) {
    auto s = store::Store::init(dir, stream_chain().genesis);
    if (!s) throw std::runtime_error(s.error().message);
    return std::move(s).value();
}

/// Imports `wires` one block at a time (the reference).
void import_one_by_one(const std::string& dir, const std::vector<Bytes>& wires) {
    auto store = fresh_store(dir);
    pipeline::Config config;
    config.max_in_flight = 1;
    pipeline::Pipeline p{*store, config};
    for (const Bytes& w : wires) ASSERT_TRUE(p.import_block(w)) << "reference import failed";
}

struct StreamResult {
    Expected<void, pipeline::PipelineError> status;
    std::vector<pipeline::BlockResult> committed;
    size_t executed{0};  ///< blocks the execute filter ran (executed or failed)
};

/// Streams `wires` with each commit held until the block `depth` positions later has executed.
StreamResult import_streamed_held(store::Store& store, const std::vector<Bytes>& wires,
                                  size_t depth) {
    pipeline::Config config;
    config.max_in_flight = 4;
    pipeline::Pipeline p{store, config};
    CommitHold hold{depth, wires.size()};
    pipeline::testing::Access::set_stream_hooks(p, &hold.hooks());
    StreamResult out;
    size_t next = 0;
    // A held commit blocks its thread; the blocks it waits for need another one, even on a
    // machine with one core.
    tbb::global_control threads{tbb::global_control::max_allowed_parallelism, 2};
    tbb::task_arena arena{2};
    arena.execute([&] {
        out.status = p.import_stream(
            [&]() -> std::optional<Bytes> {
                if (next == wires.size()) return std::nullopt;
                return wires[next++];
            },
            [&](const pipeline::BlockResult& r) { out.committed.push_back(r); });
    });
    out.executed = hold.executed();
    return out;
}

}  // namespace

TEST(pipeline_stream, execution_ahead_of_commit_gives_the_one_by_one_datadir) {
    ScratchDir tmp;
    const auto& wires = stream_chain().blocks;
    import_one_by_one(tmp / "reference", wires);

    auto store = fresh_store(tmp / "streamed");
    // Each commit waits for the block three later, the most that four blocks in flight allow: a
    // block executes over every earlier block still in flight, exactly.
    const StreamResult r = import_streamed_held(*store, wires, 3);
    ASSERT_TRUE(r.status) << pipeline::describe(r.status.error());
    ASSERT_EQ(r.committed.size(), wires.size());
    for (size_t i = 0; i < r.committed.size(); ++i) {
        EXPECT_EQ(r.committed[i].number, i + 1);
        EXPECT_EQ(r.committed[i].executed_over, std::min<size_t>(i, 3)) << "block " << i + 1;
    }
    EXPECT_EQ(store->head().number, wires.size());
    store.reset();
    EXPECT_EQ(dump_diff(dump_datadir(tmp / "reference"), dump_datadir(tmp / "streamed")), "");
}

TEST(pipeline_stream, a_bad_block_after_speculation_leaves_exactly_the_blocks_before_it) {
    ScratchDir tmp;
    std::vector<Bytes> wires = stream_chain().blocks;
    import_one_by_one(tmp / "reference", {wires.begin(), wires.begin() + 5});

    // Block 6 with one byte of its state root flipped: it executes (over uncommitted blocks),
    // then fails its seal check; blocks 7 and 8 must not be executed on top of it.
    auto b6 = block::decode_block(wires[5]);
    ASSERT_TRUE(b6);
    block::Header h = *b6->header;
    h.state_root[0] ^= 1;
    wires[5] = block::encode_block(h, b6->tx_encodings);

    auto store = fresh_store(tmp / "streamed");
    const StreamResult r = import_streamed_held(*store, wires, 1);
    ASSERT_FALSE(r.status);
    EXPECT_EQ(pipeline::describe(r.status.error()), "block 6: seal: state_root_mismatch");
    ASSERT_EQ(r.committed.size(), 5u);
    for (size_t i = 1; i < r.committed.size(); ++i)
        EXPECT_GE(r.committed[i].executed_over, 1u) << "block " << i + 1;
    EXPECT_EQ(r.executed, 6u) << "blocks after the failing one were executed";
    EXPECT_EQ(store->head().number, 5u);
    store.reset();
    EXPECT_EQ(dump_diff(dump_datadir(tmp / "reference"), dump_datadir(tmp / "streamed")), "");
}

TEST(pipeline_stream, a_committed_block_reports_its_write_batch_bytes) {
    ScratchDir tmp;
    auto store = fresh_store(tmp / "d");
    pipeline::Pipeline p{*store, {}};
    const Bytes& wire = stream_chain().blocks.front();
    const auto first = p.import_block(wire);
    ASSERT_TRUE(first);
    // The batch holds the raw block and every document besides (barrel_commit_bytes_total).
    EXPECT_GT(first->commit_bytes, wire.size());
    const auto again = p.import_block(wire);
    ASSERT_TRUE(again);
    EXPECT_TRUE(again->skipped);
    EXPECT_EQ(again->commit_bytes, 0u);
}
