// Pruning (Options::retain_blocks; src/store/pruner.hpp): the blocks below the retained ones are
// deleted with their transactions, receipts and index entries, in the background; the head, the
// kept blocks and the state are untouched; `meta/earliest` is written before anything below it
// is deleted, so that no read sees part of a block and a round stopped by a close (or a crash)
// is finished by the next writer. The interleavings are forced with testing::PausedPruner.

#include <barrel/block/block.hpp>
#include <barrel/store/store.hpp>

#include "store/testing.hpp"
#include "store_commit.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

#include <set>

using namespace barrel;
using barrel::test::generate_or_throw;
using barrel::test::ScratchDir;

namespace {

constexpr size_t kBlocks = 12;
constexpr size_t kTxs = 20;

const gen::Workload& chain_of_12() {
    static const gen::Workload w = generate_or_throw(
        {.seed = 38, .blocks = kBlocks, .txs = kTxs, .accounts = 16, .mix = gen::Mix::mixed});
    return w;
}

std::unique_ptr<store::Store> open_ok(const std::filesystem::path& dir, uint64_t retain_blocks) {
    store::Options o;
    o.retain_blocks = retain_blocks;
    auto s = store::Store::open(dir, o);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    return s ? std::move(s).value() : nullptr;
}

/// Commits block `k` of the chain with a consensus hash, as a CometBFT network's node does, so
/// that the `cometbft:` entries are there to prune too.
void commit_decided(store::Store& s, size_t k) {
    const auto& w = chain_of_12();
    auto b = block::decode_block(w.blocks[k]);
    ASSERT_TRUE(b);
    b->senders = w.senders[k];
    const auto outcome = exec::execute(*b, s, s.lattice(), w.genesis.config);
    ASSERT_TRUE(outcome);
    const Bytes consensus(32, static_cast<uint8_t>(k + 1));
    ASSERT_TRUE(s.commit(*b, *outcome, true, consensus));
}

/// A datadir of the chain's 12 blocks, committed without pruning.
void build(const std::filesystem::path& dir) {
    auto s = store::Store::init(dir, chain_of_12().genesis);
    ASSERT_TRUE(s) << s.error().message;
    for (size_t k = 0; k < kBlocks; ++k) commit_decided(**s, k);
}

/// The numbers of the headers (or raw blocks) a dump holds.
std::set<uint64_t> numbers(const test::Dump& dump, const std::string& family) {
    std::set<uint64_t> out;
    for (const auto& [key, value] : dump.at(family)) {
        uint64_t n = 0;
        for (const char c : key) n = (n << 8) | static_cast<uint8_t>(c);
        out.insert(n);
    }
    return out;
}

std::set<uint64_t> range(uint64_t first, uint64_t last) {
    std::set<uint64_t> out;
    for (uint64_t n = first; n <= last; ++n) out.insert(n);
    return out;
}

size_t meta_entries(const test::Dump& dump, std::string_view prefix) {
    size_t n = 0;
    for (const auto& [key, value] : dump.at("meta")) n += key.starts_with(prefix) ? 1 : 0;
    return n;
}

/// The hashes of block `k`'s transactions (k 0-based: block k + 1).
std::vector<Hash> tx_hashes(size_t k) {
    auto hashes = block::transaction_hashes(chain_of_12().blocks[k]);
    EXPECT_TRUE(hashes);
    return hashes ? *hashes : std::vector<Hash>{};
}

Hash block_hash(size_t k) {
    auto b = block::decode_block(chain_of_12().blocks[k]);
    EXPECT_TRUE(b);
    return b ? b->hash : Hash{};
}

/// What a datadir holding exactly blocks 0 and `first`..12 holds: checked on the raw dump.
void expect_holds_from(const std::filesystem::path& dir, uint64_t first) {
    const auto dump = test::dump_datadir(dir);
    std::set<uint64_t> headers = range(first, kBlocks);
    headers.insert(0);
    EXPECT_EQ(numbers(dump, "headers"), headers);
    EXPECT_EQ(numbers(dump, "blocks"), range(first, kBlocks));
    const size_t kept = kBlocks - first + 1;
    EXPECT_EQ(dump.at("transactions").size(), kept * kTxs);
    EXPECT_EQ(dump.at("receipts").size(), kept * kTxs);
    EXPECT_EQ(meta_entries(dump, "hash:"), kept + 1);  // and block 0's
    EXPECT_EQ(meta_entries(dump, "cometbft:"), kept);
}

}  // namespace

TEST(store_prune, keeps_the_last_n_blocks_the_genesis_the_head_and_the_state) {
    ScratchDir tmp;
    const auto reference = tmp.path() / "reference", pruned = tmp.path() / "pruned";
    build(reference);
    {
        auto s = store::Store::init(pruned, chain_of_12().genesis, {.retain_blocks = 4});
        ASSERT_TRUE(s) << s.error().message;
        for (size_t k = 0; k < kBlocks; ++k) commit_decided(**s, k);
        store::testing::wait_for_pruner(**s);
        EXPECT_EQ((*s)->earliest(), 9u);  // 12 - 4 + 1
        EXPECT_EQ((*s)->head().number, kBlocks);
        // Pruned: absent through every read, by number and by hash.
        const auto gone = tx_hashes(4);  // block 5
        auto header = (*s)->header_record(5);
        ASSERT_TRUE(header);
        EXPECT_FALSE(*header);
        EXPECT_FALSE(*(*s)->raw_block(5));
        EXPECT_FALSE(*(*s)->consensus_hash(5));
        EXPECT_FALSE(*(*s)->transaction_record(gone.front()));
        EXPECT_FALSE(*(*s)->receipt_record(gone.back()));
        EXPECT_FALSE(*(*s)->transaction(gone.front()));
        EXPECT_FALSE(*(*s)->header(5));
        // Kept: the genesis, and blocks 9 to 12 whole.
        EXPECT_TRUE(*(*s)->header_record(0));
        const auto kept = tx_hashes(8);  // block 9
        EXPECT_TRUE(*(*s)->header_record(9));
        EXPECT_TRUE(*(*s)->raw_block(9));
        EXPECT_TRUE(*(*s)->transaction_record(kept.front()));
        EXPECT_TRUE(*(*s)->receipt_record(kept.back()));
        EXPECT_TRUE(*(*s)->took_transaction(kept.front()));
        EXPECT_FALSE(*(*s)->took_transaction(gone.front()));
        EXPECT_FALSE(*(*s)->took_transaction(Hash{}));
        const auto view = (*s)->snapshot();
        ASSERT_TRUE(view);
        EXPECT_EQ((*view)->earliest(), 9u);
        EXPECT_FALSE(*(*view)->header_record(8));
        EXPECT_TRUE(*(*view)->header_record(9));
    }
    expect_holds_from(pruned, 9);
    auto a = test::dump_datadir(reference), b = test::dump_datadir(pruned);
    for (const char* family : {"accounts", "users"}) EXPECT_EQ(a.at(family), b.at(family));
    EXPECT_EQ(a.at("meta").at("head"), b.at("meta").at("head"));
    EXPECT_EQ(b.at("meta").at("earliest"), std::string("\0\0\0\0\0\0\0\x09", 8));
    // A reader sees the same.
    store::Options read_only;
    read_only.read_only = true;
    const auto reader = store::Store::open(pruned, read_only);
    ASSERT_TRUE(reader);
    EXPECT_EQ((*reader)->earliest(), 9u);
    EXPECT_FALSE(*(*reader)->header(8));
}

TEST(store_prune, a_store_with_fewer_blocks_than_retained_is_left_as_it_is) {
    ScratchDir tmp;
    const auto reference = tmp.path() / "reference", pruned = tmp.path() / "pruned";
    build(reference);
    {
        auto s = store::Store::init(pruned, chain_of_12().genesis, {.retain_blocks = 12});
        ASSERT_TRUE(s);
        for (size_t k = 0; k < kBlocks; ++k) commit_decided(**s, k);
        store::testing::wait_for_pruner(**s);
        EXPECT_EQ((*s)->earliest(), 0u);
    }
    const auto diff = test::dump_diff(test::dump_datadir(reference), test::dump_datadir(pruned));
    EXPECT_TRUE(diff.empty()) << diff;
}

TEST(store_prune, commits_go_on_while_the_pruner_is_held) {
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    store::testing::PausedPruner paused;
    auto s = store::Store::init(dir, chain_of_12().genesis, {.retain_blocks = 4});
    ASSERT_TRUE(s);
    for (size_t k = 0; k < 5; ++k) commit_decided(**s, k);
    EXPECT_EQ(paused.wait(), store::testing::PruneStep::marked);  // head 5: earliest 2
    // Every later commit returns while the pruner waits: none of them waits for a deletion.
    for (size_t k = 5; k < kBlocks; ++k) commit_decided(**s, k);
    EXPECT_EQ((*s)->head().number, kBlocks);
    EXPECT_EQ((*s)->earliest(), 2u);
    EXPECT_EQ(numbers(test::dump_datadir(dir), "blocks"), range(1, kBlocks));
}

TEST(store_prune, a_snapshot_sees_a_block_whole_or_not_at_all) {
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    store::testing::PausedPruner paused;
    auto opened = store::Store::init(dir, chain_of_12().genesis, {.retain_blocks = 4});
    ASSERT_TRUE(opened);
    store::Store& s = **opened;
    for (size_t k = 0; k < 4; ++k) commit_decided(s, k);  // no more than retained: no round
    const auto before = s.snapshot();                     // block 1 held
    ASSERT_TRUE(before);
    commit_decided(s, 4);
    EXPECT_EQ(paused.wait(), store::testing::PruneStep::marked);  // earliest 2
    const auto marked = s.snapshot();
    ASSERT_TRUE(marked);
    paused.release();
    EXPECT_EQ(paused.wait(), store::testing::PruneStep::chunk);  // block 1 deleted
    const auto after = s.snapshot();
    ASSERT_TRUE(after);
    const auto hashes = tx_hashes(0);
    const Hash block_1 = block_hash(0);
    // Taken before the mark: block 1 whole, as it was.
    EXPECT_EQ((*before)->earliest(), 0u);
    EXPECT_TRUE(*(*before)->header_record(1));
    EXPECT_TRUE(*(*before)->raw_block(1));
    EXPECT_EQ(*(*before)->block_number(block_1), std::optional<uint64_t>{1});
    for (const Hash& h : hashes) {
        EXPECT_TRUE(*(*before)->transaction_record(h));
        EXPECT_TRUE(*(*before)->receipt_record(h));
    }
    // Taken after it: none of block 1, whether its records were still stored or not.
    for (const auto* view : {marked->get(), after->get()}) {
        EXPECT_EQ(view->earliest(), 2u);
        EXPECT_FALSE(*view->header_record(1));
        EXPECT_FALSE(*view->raw_block(1));
        EXPECT_FALSE(*view->consensus_hash(1));
        EXPECT_FALSE(*view->block_number(block_1));
        for (const Hash& h : hashes) {
            EXPECT_FALSE(*view->transaction_record(h));
            EXPECT_FALSE(*view->receipt_record(h));
        }
        EXPECT_TRUE(*view->header_record(2));
    }
    paused.release();
}

TEST(store_prune, a_round_stopped_after_marking_is_finished_by_the_next_writer) {
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    build(dir);
    {
        store::testing::PausedPruner paused;
        const auto s = open_ok(dir, 4);
        ASSERT_TRUE(s);
        EXPECT_EQ(paused.wait(), store::testing::PruneStep::marked);
        EXPECT_EQ(s->earliest(), 9u);
        // Marked, nothing deleted: every block below is still stored and none is answered.
        const auto dump = test::dump_datadir(dir);
        EXPECT_EQ(numbers(dump, "blocks"), range(1, kBlocks));
        EXPECT_FALSE(*s->header_record(8));
        EXPECT_FALSE(*s->transaction_record(tx_hashes(7).front()));
        EXPECT_FALSE(*s->block_number(block_hash(7)));
        EXPECT_TRUE(*s->block_number(block_hash(8)));
    }  // closed with the pruner held: as a crash after the entry was written
    {
        store::Options read_only;
        read_only.read_only = true;
        const auto reader = store::Store::open(dir, read_only);
        ASSERT_TRUE(reader);
        EXPECT_EQ((*reader)->earliest(), 9u);
        EXPECT_FALSE(*(*reader)->header_record(8));
    }
    {
        const auto s = open_ok(dir, 0);  // no pruning asked: the interrupted round is finished
        ASSERT_TRUE(s);
        store::testing::wait_for_pruner(*s);
    }
    expect_holds_from(dir, 9);
    // Idempotent: another writer, pruning or not, changes nothing more.
    const auto finished = test::dump_datadir(dir);
    for (const uint64_t retain : {uint64_t{0}, uint64_t{4}}) {
        const auto s = open_ok(dir, retain);
        ASSERT_TRUE(s);
        store::testing::wait_for_pruner(*s);
    }
    for (const char* family :
         {"headers", "blocks", "transactions", "receipts", "accounts", "users"})
        EXPECT_EQ(test::dump_datadir(dir).at(family), finished.at(family)) << family;
}

TEST(store_prune, a_round_stopped_between_chunks_is_finished_by_the_next_writer) {
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    build(dir);
    store::testing::set_prune_chunk_blocks(3);
    {
        store::testing::PausedPruner paused;
        const auto s = open_ok(dir, 4);
        ASSERT_TRUE(s);
        EXPECT_EQ(paused.wait(), store::testing::PruneStep::marked);
        paused.release();
        EXPECT_EQ(paused.wait(), store::testing::PruneStep::chunk);
        // Blocks 1 to 3 deleted in one batch, 4 to 8 still stored.
        const auto dump = test::dump_datadir(dir);
        EXPECT_EQ(numbers(dump, "blocks"), range(4, kBlocks));
        EXPECT_EQ(dump.at("transactions").size(), (kBlocks - 3) * kTxs);
        EXPECT_FALSE(*s->header_record(4));
    }
    store::testing::set_prune_chunk_blocks(0);
    {
        const auto s = open_ok(dir, 4);
        ASSERT_TRUE(s);
        store::testing::wait_for_pruner(*s);
        EXPECT_EQ(s->earliest(), 9u);
    }
    expect_holds_from(dir, 9);
}
