// State sync through the ABCI application (abci::ChainApp over sync::Snapshots): a snapshot is
// taken in the background after Commit (held by a seam while Commit returns), listed and served;
// a new node restores it from those chunks, a flipped chunk is answered RETRY with its sender
// rejected, and after the restore Info answers the snapshot's height and root and the next
// block executes on the restored state with the source's app hash.

#include <barrel/block/sender_cache.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/store/store.hpp>
#include <barrel/sync/snapshot.hpp>

#include "abci/chain_app.hpp"
#include "node_parts.hpp"
#include "pool_fixtures.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

namespace barrel::abci {
namespace {

using pool::testing::signed_tx;
using pool::testing::Spec;
using test::ScratchDir;

const chain::Genesis& genesis() {
    static const chain::Genesis g = chain::parse_genesis(pool::testing::funded_genesis(8)).value();
    return g;
}

std::string text_of(BytesView b) { return std::string{as_chars(b)}; }

/// A new datadir of the genesis in `dir` (made first).
std::unique_ptr<store::Store> new_datadir(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir);
    auto s = store::Store::init(dir / "data", genesis());
    if (!s) throw std::runtime_error(s.error().message);
    return std::move(s).value();
}

/// A node's parts behind the application, with a snapshots folder.
struct SyncNode : test::NodeParts {
    SyncNode(const std::filesystem::path& dir, uint64_t interval, sync::WriterHooks hooks = {})
        : NodeParts{new_datadir(dir)},
          snapshots{sync::Snapshots::open(dir / "snapshots", 2).value()},
          app{*store, pipeline, pool,
              ChainConfig{.max_proposal_txs = 100,
                          .retain_blocks = 1,
                          .snapshots = snapshots.get(),
                          .snapshot_interval = interval,
                          .snapshot_hooks = std::move(hooks)}} {}

    /// FinalizeBlock and Commit of `height` with `txs`: the app hash.
    std::string decide(int64_t height, const std::vector<Bytes>& txs) {
        pb::RequestFinalizeBlock r;
        r.set_height(height);
        r.mutable_time()->set_seconds(1'700'000'000 + height);
        r.set_hash("block " + std::to_string(height));
        for (const Bytes& t : txs) r.add_txs(text_of(t));
        auto finalized = app.finalize_block(r);
        EXPECT_TRUE(finalized) << finalized.error();
        auto committed = app.commit(pb::RequestCommit{});
        EXPECT_TRUE(committed) << committed.error();
        last_retain_height = committed ? committed->retain_height() : -1;
        return finalized ? finalized->app_hash() : std::string{};
    }

    std::unique_ptr<sync::Snapshots> snapshots;
    ChainApp app;
    int64_t last_retain_height{0};
};

/// Holds the background writer before it writes, until released.
struct Gate {
    std::mutex mutex;
    std::condition_variable changed;
    bool open{false};
    uint64_t held{0};

    sync::WriterHooks hooks() {
        return {.before_write = [this](uint64_t height) {
            std::unique_lock lock{mutex};
            held = height;
            changed.notify_all();
            changed.wait(lock, [this] { return open; });
        }};
    }
    void wait_held() {
        std::unique_lock lock{mutex};
        changed.wait(lock, [this] { return held != 0; });
    }
    void release() {
        std::lock_guard lock{mutex};
        open = true;
        changed.notify_all();
    }
    /// Releases the gate when it leaves scope: declared after the node whose writer it holds,
    /// so that a failed assertion ends the test instead of leaving the writer held forever.
    struct ReleaseAtEnd {
        Gate& gate;
        ~ReleaseAtEnd() { gate.release(); }
    };
};

std::vector<Bytes> transfers(uint8_t key, uint64_t nonce) {
    return {signed_tx(Spec{.key = key, .nonce = nonce})};
}

}  // namespace

TEST(sync_abci, commit_returns_while_the_snapshot_is_written_and_then_it_is_listed) {
    ScratchDir tmp;
    Gate gate;
    SyncNode node{tmp.path(), 2, gate.hooks()};
    const Gate::ReleaseAtEnd release_at_end{gate};
    node.decide(1, transfers(1, 0));
    node.decide(2, transfers(2, 0));
    gate.wait_held();  // the writer holds the snapshot of height 2, unwritten
    EXPECT_TRUE(node.app.list_snapshots({})->snapshots().empty());
    // Consensus goes on meanwhile: Commit of height 3 returns with the writer still held.
    node.decide(3, transfers(3, 0));
    EXPECT_EQ(node.store->head().number, 3u);
    gate.release();
    node.app.wait_for_snapshots();
    const auto listed = node.app.list_snapshots({}).value();
    ASSERT_EQ(listed.snapshots_size(), 1);
    EXPECT_EQ(listed.snapshots(0).height(), 2u);
    EXPECT_EQ(listed.snapshots(0).format(), sync::kFormat);
    // retain_height never passes the oldest snapshot kept (retain_blocks 1 would say 4).
    node.decide(4, {});
    EXPECT_EQ(node.last_retain_height, 2);
}

TEST(sync_abci, a_new_node_restores_a_served_snapshot_past_a_corrupted_chunk) {
    ScratchDir tmp;
    SyncNode source{tmp.path() / "source", 2};
    source.decide(1, transfers(1, 0));
    source.decide(2, transfers(2, 0));
    source.app.wait_for_snapshots();
    const pb::Snapshot offered = source.app.list_snapshots({}).value().snapshots(0);
    const std::string next_app_hash = source.decide(3, transfers(1, 1));

    SyncNode fresh{tmp.path() / "fresh", 0};
    pb::RequestOfferSnapshot offer;
    *offer.mutable_snapshot() = offered;
    offer.set_app_hash(text_of(source.store->header_record(2).value()->header.state_root));
    // A wrong app hash is REJECT first.
    pb::RequestOfferSnapshot wrong = offer;
    wrong.set_app_hash(std::string(32, '\x01'));
    EXPECT_EQ(fresh.app.offer_snapshot(wrong)->result(), pb::ResponseOfferSnapshot::REJECT);
    EXPECT_FALSE(fresh.app.restore_progress());
    ASSERT_EQ(fresh.app.offer_snapshot(offer)->result(), pb::ResponseOfferSnapshot::ACCEPT);

    for (uint32_t i = 0; i < offered.chunks(); ++i) {
        // eth_syncing's progress: the data chunks in so far (the index is chunk 0).
        const auto progress = fresh.app.restore_progress();
        ASSERT_TRUE(progress);
        EXPECT_EQ(progress->height, 2u);
        EXPECT_EQ(progress->chunks, offered.chunks() - 1);
        EXPECT_EQ(progress->applied, i == 0 ? 0u : i - 1);
        pb::RequestLoadSnapshotChunk load;
        load.set_height(offered.height());
        load.set_format(offered.format());
        load.set_chunk(i);
        const std::string chunk = source.app.load_snapshot_chunk(load)->chunk();
        ASSERT_FALSE(chunk.empty());
        pb::RequestApplySnapshotChunk apply;
        apply.set_index(i);
        if (i == offered.chunks() - 1) {
            // The bad peer's copy first: one flipped byte.
            std::string flipped = chunk;
            flipped[flipped.size() / 2] ^= 0x01;
            apply.set_chunk(flipped);
            apply.set_sender("bad peer");
            const auto r = fresh.app.apply_snapshot_chunk(apply).value();
            EXPECT_EQ(r.result(), pb::ResponseApplySnapshotChunk::RETRY);
            ASSERT_EQ(r.refetch_chunks_size(), 1);
            EXPECT_EQ(r.refetch_chunks(0), i);
            ASSERT_EQ(r.reject_senders_size(), 1);
            EXPECT_EQ(r.reject_senders(0), "bad peer");
        }
        apply.set_chunk(chunk);
        apply.set_sender("good peer");
        EXPECT_EQ(fresh.app.apply_snapshot_chunk(apply)->result(),
                  pb::ResponseApplySnapshotChunk::ACCEPT);
    }
    EXPECT_FALSE(fresh.app.restore_progress());  // done
    const auto answered = fresh.app.info({}).value();
    EXPECT_EQ(answered.last_block_height(), 2);
    EXPECT_EQ(answered.last_block_app_hash(), offer.app_hash());
    // Block sync goes on from height 3: executed over the restored state, the same app hash.
    EXPECT_EQ(fresh.decide(3, transfers(1, 1)), next_app_hash);
    EXPECT_EQ(fresh.store->head().hash, source.store->head().hash);
    EXPECT_TRUE(store::verify_state(*fresh.store)->matches());
}

TEST(sync_abci, a_node_with_blocks_aborts_an_offer) {
    ScratchDir tmp;
    SyncNode node{tmp.path(), 1};
    node.decide(1, {});
    node.app.wait_for_snapshots();
    pb::RequestOfferSnapshot offer;
    *offer.mutable_snapshot() = node.app.list_snapshots({}).value().snapshots(0);
    offer.set_app_hash(text_of(node.store->head().state_root));
    EXPECT_EQ(node.app.offer_snapshot(offer)->result(), pb::ResponseOfferSnapshot::ABORT);
}

}  // namespace barrel::abci
