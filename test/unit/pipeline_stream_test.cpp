// The streamed pipeline executes block N+1 while block N commits, reading the state through the
// write sets of blocks not yet committed. With commits held back (a slow progress callback), later
// blocks provably execute over uncommitted ones, and the datadir still equals a one-block-at-a-time
// import key for key; a block that fails after such speculation leaves exactly the blocks before
// it committed.

#include "store_dump.hpp"

#include "gen/workload.hpp"
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace barrel;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::ScratchDir;

namespace {

/// Consecutive blocks share hot accounts and DagTransfer users, so a block's reads depend on
/// what the blocks just before it wrote.
const gen::Workload& test_chain() {
    static const gen::Workload w = [] {
        gen::Options o;
        o.seed = 11;
        o.blocks = 8;
        o.txs = 150;
        o.accounts = 60;
        o.hot_accounts = 2;
        o.hot_ratio = 0.4;
        o.mix = gen::Mix::mixed;
        auto g = gen::generate(o);
        if (!g) throw std::runtime_error(g.error());
        return std::move(g).value();
    }();
    return w;
}

std::unique_ptr<store::Store> fresh_store(const std::string& dir) {
    auto s = store::Store::init(dir, test_chain().genesis);
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
};

/// Streams `wires` with every commit followed by a pause, so that execution runs ahead.
StreamResult import_streamed_slowly(store::Store& store, const std::vector<Bytes>& wires) {
    pipeline::Config config;
    config.max_in_flight = 4;
    pipeline::Pipeline p{store, config};
    StreamResult out;
    size_t next = 0;
    out.status = p.import_stream(
        [&]() -> std::optional<Bytes> {
            if (next == wires.size()) return std::nullopt;
            return wires[next++];
        },
        [&](const pipeline::BlockResult& r) {
            out.committed.push_back(r);
            std::this_thread::sleep_for(std::chrono::milliseconds{30});
        });
    return out;
}

}  // namespace

TEST(pipeline_stream, execution_ahead_of_commit_gives_the_one_by_one_datadir) {
    ScratchDir tmp;
    const auto& wires = test_chain().blocks;
    import_one_by_one(tmp / "reference", wires);

    auto store = fresh_store(tmp / "streamed");
    const StreamResult r = import_streamed_slowly(*store, wires);
    ASSERT_TRUE(r.status) << pipeline::describe(r.status.error());
    ASSERT_EQ(r.committed.size(), wires.size());
    size_t ahead = 0;
    for (size_t i = 0; i < r.committed.size(); ++i) {
        EXPECT_EQ(r.committed[i].number, i + 1);
        EXPECT_LE(r.committed[i].executed_over, 3u);  // bounded by the blocks in flight
        if (r.committed[i].executed_over > 0) ++ahead;
    }
    EXPECT_GE(ahead, wires.size() / 2) << "execution never ran ahead of commit: the test proves nothing";
    EXPECT_EQ(store->head().number, wires.size());
    store.reset();
    EXPECT_EQ(dump_diff(dump_datadir(tmp / "reference"), dump_datadir(tmp / "streamed")), "");
}

TEST(pipeline_stream, a_bad_block_after_speculation_leaves_exactly_the_blocks_before_it) {
    ScratchDir tmp;
    std::vector<Bytes> wires = test_chain().blocks;
    import_one_by_one(tmp / "reference", {wires.begin(), wires.begin() + 5});

    // Block 6 with one byte of its state root flipped: it executes (over uncommitted blocks),
    // then fails its seal check; blocks 7 and 8 must not be executed on top of it.
    auto b6 = block::decode_block(wires[5]);
    ASSERT_TRUE(b6);
    block::Header h = *b6->header;
    h.state_root[0] ^= 1;
    wires[5] = block::encode_block(h, b6->tx_encodings);

    auto store = fresh_store(tmp / "streamed");
    const StreamResult r = import_streamed_slowly(*store, wires);
    ASSERT_FALSE(r.status);
    EXPECT_EQ(pipeline::describe(r.status.error()), "block 6: seal: state_root_mismatch");
    ASSERT_EQ(r.committed.size(), 5u);
    EXPECT_EQ(store->head().number, 5u);
    store.reset();
    EXPECT_EQ(dump_diff(dump_datadir(tmp / "reference"), dump_datadir(tmp / "streamed")), "");
}
