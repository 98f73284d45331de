// State-sync snapshots, format 1 (include/barrel/sync/snapshot.hpp): the same height gives the
// same bytes on two stores of the same chain; a restore round trip gives the same state; every
// tampered chunk, index or offer is refused as docs/formats.md, "State sync snapshots", says;
// a restore interrupted mid-way starts over cleanly; malformed bytes are errors, never crashes.

#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/store/store.hpp>
#include <barrel/sync/snapshot.hpp>

#include "store_commit.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

using namespace barrel;
using barrel::test::generate_or_throw;
using barrel::test::ScratchDir;

namespace {

constexpr size_t kBlocks = 6;
/// Small chunks, so that a snapshot of the test chain has several.
constexpr size_t kSmallChunks = 600;

const gen::Workload& test_chain() {
    static const gen::Workload w = generate_or_throw(
        {.seed = 38, .blocks = kBlocks, .txs = 20, .accounts = 40, .mix = gen::Mix::mixed});
    return w;
}

std::unique_ptr<store::Store> built_store(const std::filesystem::path& dir) {
    auto s = store::Store::init(dir, test_chain().genesis);
    EXPECT_TRUE(s) << s.error().message;
    if (auto failed = test::commit_blocks(**s, test_chain(), kBlocks))
        ADD_FAILURE() << failed->message;
    return std::move(s).value();
}

sync::Built snapshot_of(const store::Store& s, size_t chunk_target = kSmallChunks) {
    auto at = s.snapshot();
    EXPECT_TRUE(at);
    auto built = sync::build_snapshot(**at, chunk_target);
    EXPECT_TRUE(built) << built.error().message;
    return std::move(built).value();
}

/// A chain's source store and a new datadir of the same genesis to restore into.
struct Fixture {
    ScratchDir tmp;
    std::unique_ptr<store::Store> source = built_store(tmp.path() / "source");
    sync::Built built = snapshot_of(*source);
    std::unique_ptr<store::Store> target =
        store::Store::init(tmp.path() / "target", test_chain().genesis).value();

    Hash trusted_root() const { return source->head().state_root; }
    std::unique_ptr<sync::Restorer> offer_ok(const sync::Descriptor& d) {
        auto offer = sync::Restorer::offer(*target, d, trusted_root());
        EXPECT_EQ(offer.verdict, sync::OfferVerdict::accept) << offer.reason;
        return std::move(offer.restorer);
    }
};

/// Every state entry of a store, in key order.
std::vector<Bytes> entries_of(const store::Store& s) {
    std::vector<Bytes> out;
    auto at = s.snapshot();
    EXPECT_TRUE(at);
    EXPECT_TRUE((*at)->for_each_entry([&](BytesView e) {
        out.emplace_back(e.begin(), e.end());
        return true;
    }));
    return out;
}

/// A descriptor whose index is `index` (hash and chunk count made to match it).
sync::Descriptor with_index(sync::Descriptor d, const Bytes& index, size_t data_chunks) {
    d.hash = keccak256(index);
    d.chunks = static_cast<uint32_t>(data_chunks + 1);
    return d;
}

}  // namespace

TEST(sync_snapshot, the_same_height_is_byte_identical_on_two_stores) {
    ScratchDir tmp;
    const auto a = built_store(tmp.path() / "a");
    const auto b = built_store(tmp.path() / "b");
    const sync::Built from_a = snapshot_of(*a), from_b = snapshot_of(*b);
    EXPECT_GT(from_a.chunks.size(), 3u);  // the index and several data chunks
    EXPECT_EQ(from_a.descriptor, from_b.descriptor);
    EXPECT_EQ(from_a.chunks, from_b.chunks);
    // And at the format's own cut, through the snapshots folder's files.
    auto folder_a = sync::Snapshots::open(tmp.path() / "snap-a", 2).value();
    auto folder_b = sync::Snapshots::open(tmp.path() / "snap-b", 2).value();
    auto at_a = a->snapshot().value();
    auto at_b = b->snapshot().value();
    const auto taken_a = folder_a->take(*at_a), taken_b = folder_b->take(*at_b);
    ASSERT_TRUE(taken_a && taken_b);
    EXPECT_EQ(*taken_a, *taken_b);
    EXPECT_EQ(taken_a->height, kBlocks);
    for (uint32_t i = 0; i < taken_a->chunks; ++i)
        EXPECT_EQ(folder_a->chunk(kBlocks, 1, i).value(), folder_b->chunk(kBlocks, 1, i).value());
}

TEST(sync_snapshot, the_folder_lists_only_complete_snapshots_and_keeps_the_newest) {
    ScratchDir tmp;
    auto s = store::Store::init(tmp.path() / "d", test_chain().genesis).value();
    auto folder = sync::Snapshots::open(tmp.path() / "snapshots", 2).value();
    for (size_t k = 0; k < 3; ++k) {
        ASSERT_TRUE(test::commit_block(*s, test_chain(), k));
        ASSERT_TRUE(folder->take(*s->snapshot().value()));
    }
    std::vector<uint64_t> heights;
    for (const auto& d : folder->list()) heights.push_back(d.height);
    EXPECT_EQ(heights, (std::vector<uint64_t>{2, 3}));
    EXPECT_EQ(folder->oldest(), 2u);
    EXPECT_FALSE(folder->chunk(1, 1, 0));
    EXPECT_FALSE(folder->chunk(3, 2, 0));  // another format
    // A write a crash interrupted is no snapshot: removed when the folder is opened again.
    std::filesystem::create_directories(tmp.path() / "snapshots" / ".building-4");
    folder.reset();
    folder = sync::Snapshots::open(tmp.path() / "snapshots", 2).value();
    EXPECT_EQ(folder->list().size(), 2u);
    EXPECT_FALSE(std::filesystem::exists(tmp.path() / "snapshots" / ".building-4"));
}

TEST(sync_snapshot, a_round_trip_restore_gives_the_same_state_and_verify_passes) {
    Fixture f;
    auto restorer = f.offer_ok(f.built.descriptor);
    ASSERT_TRUE(restorer);
    for (uint32_t i = 0; i < f.built.chunks.size(); ++i) {
        const auto r = restorer->apply(i, f.built.chunks[i]);
        ASSERT_EQ(r.verdict, sync::ChunkVerdict::accept) << r.reason;
        EXPECT_EQ(r.done, i + 1 == f.built.chunks.size());
    }
    EXPECT_EQ(f.target->head().number, kBlocks);
    EXPECT_EQ(f.target->head().hash, f.source->head().hash);
    EXPECT_EQ(f.target->head().state_root, f.source->head().state_root);
    EXPECT_EQ(f.target->earliest(), kBlocks + 1);
    EXPECT_EQ(entries_of(*f.target), entries_of(*f.source));
    const auto checked = store::verify_state(*f.target);
    ASSERT_TRUE(checked);
    EXPECT_TRUE(checked->matches());
    // The restored datadir opens again (its head has no raw block: it holds blocks from H + 1).
    f.target.reset();
    auto reopened = store::Store::open(f.tmp.path() / "target");
    ASSERT_TRUE(reopened) << reopened.error().message;
    EXPECT_EQ((*reopened)->head().number, kBlocks);
    EXPECT_FALSE((*reopened)->restoring());
}

TEST(sync_snapshot, a_chunk_with_one_flipped_byte_is_retried_and_the_right_one_completes) {
    Fixture f;
    auto restorer = f.offer_ok(f.built.descriptor);
    ASSERT_TRUE(restorer);
    ASSERT_EQ(restorer->apply(0, f.built.chunks[0]).verdict, sync::ChunkVerdict::accept);
    Bytes flipped = f.built.chunks[1];
    flipped[flipped.size() / 2] ^= 0x01;
    const auto r = restorer->apply(1, flipped);
    EXPECT_EQ(r.verdict, sync::ChunkVerdict::retry);
    EXPECT_TRUE(r.sender_at_fault);
    EXPECT_EQ(r.refetch, std::vector<uint32_t>{1});
    EXPECT_EQ(r.reason, "chunk 1: its digest is not the index's");
    for (uint32_t i = 1; i < f.built.chunks.size(); ++i)
        ASSERT_EQ(restorer->apply(i, f.built.chunks[i]).verdict, sync::ChunkVerdict::accept);
    EXPECT_EQ(f.target->head().state_root, f.trusted_root());
    EXPECT_TRUE(store::verify_state(*f.target)->matches());
}

TEST(sync_snapshot, an_index_whose_partials_do_not_sum_to_the_root_rejects_the_snapshot) {
    Fixture f;
    auto index = sync::decode_index(f.built.chunks[0]).value();
    // Two partials moved between chunks: each chunk's own check would still pass the sum, not
    // the per-chunk one; here one partial is changed outright.
    index.chunks[0].partial.add(f.built.chunks[1]);
    const Bytes tampered = sync::encode(index);
    auto restorer = f.offer_ok(with_index(f.built.descriptor, tampered, index.chunks.size()));
    ASSERT_TRUE(restorer);
    const auto r = restorer->apply(0, tampered);
    EXPECT_EQ(r.verdict, sync::ChunkVerdict::reject_snapshot);
    EXPECT_TRUE(r.reason.starts_with("chunk 0: its partial lattices sum to root")) << r.reason;
}

TEST(sync_snapshot, a_header_root_that_is_not_the_app_hash_is_rejected) {
    Fixture f;
    Hash other = f.trusted_root();
    other[0] ^= 0xff;
    const auto offer = sync::Restorer::offer(*f.target, f.built.descriptor, other);
    EXPECT_EQ(offer.verdict, sync::OfferVerdict::reject);
    EXPECT_FALSE(offer.restorer);
    EXPECT_NE(offer.reason.find("is not the trusted app hash"), std::string::npos) << offer.reason;
    EXPECT_FALSE(f.target->restoring());  // nothing begun
}

TEST(sync_snapshot, another_format_is_reject_format_and_a_node_with_blocks_aborts) {
    Fixture f;
    sync::Descriptor other = f.built.descriptor;
    other.format = 2;
    EXPECT_EQ(sync::Restorer::offer(*f.target, other, f.trusted_root()).verdict,
              sync::OfferVerdict::reject_format);
    const auto offer = sync::Restorer::offer(*f.source, f.built.descriptor, f.trusted_root());
    EXPECT_EQ(offer.verdict, sync::OfferVerdict::abort);
    EXPECT_EQ(offer.reason,
              "snapshot of block 6: this datadir holds blocks (head 6); only a new "
              "datadir restores a snapshot");
}

namespace {

/// A data chunk made of `entries` with an index that matches it in every way but key order: the
/// bytes are the ones the index commits to (every peer serves them alike), so the snapshot is
/// refused, not the peer.
void expect_rejected_for_order(const std::vector<Bytes>& entries) {
    Fixture f;
    Bytes chunk;
    sync::ChunkInfo info;
    for (const Bytes& e : entries) {
        chunk.insert(chunk.end(), e.begin(), e.end());
        info.partial.add(e);
    }
    const auto decoded = sync::decode_chunk(chunk).value();
    info.entries = decoded.size();
    info.last_key.assign(decoded.back().key.begin(), decoded.back().key.end());
    info.digest = keccak256(chunk);
    // The index sums to the root only if the chunk is the whole state: give the offer its root.
    const Bytes index = sync::encode(sync::Index{{info}});
    sync::Metadata m = sync::decode_metadata(f.built.descriptor.metadata).value();
    m.header.state_root = info.partial.root();
    sync::Descriptor d = with_index(f.built.descriptor, index, 1);
    d.metadata = sync::encode(m);
    auto offer = sync::Restorer::offer(*f.target, d, m.header.state_root);
    ASSERT_EQ(offer.verdict, sync::OfferVerdict::accept) << offer.reason;
    ASSERT_EQ(offer.restorer->apply(0, index).verdict, sync::ChunkVerdict::accept);
    const auto r = offer.restorer->apply(1, chunk);
    EXPECT_EQ(r.verdict, sync::ChunkVerdict::reject_snapshot);
    EXPECT_TRUE(r.refetch.empty());
    EXPECT_FALSE(r.sender_at_fault);
    EXPECT_NE(r.reason.find("does not follow"), std::string::npos) << r.reason;
}

}  // namespace

TEST(sync_snapshot, duplicate_keys_in_a_chunk_reject_the_snapshot) {
    ScratchDir tmp;
    const auto entries = entries_of(*built_store(tmp.path() / "d"));
    expect_rejected_for_order({entries[0], entries[1], entries[1], entries[2]});
}

TEST(sync_snapshot, unordered_keys_in_a_chunk_reject_the_snapshot) {
    ScratchDir tmp;
    const auto entries = entries_of(*built_store(tmp.path() / "d"));
    expect_rejected_for_order({entries[0], entries[2], entries[1], entries[3]});
}

TEST(sync_snapshot, a_restore_killed_mid_way_starts_over_cleanly) {
    Fixture f;
    const std::vector<Bytes> genesis_entries = entries_of(*f.target);
    {
        auto restorer = f.offer_ok(f.built.descriptor);
        ASSERT_TRUE(restorer);
        for (uint32_t i = 0; i < 3; ++i)
            ASSERT_EQ(restorer->apply(i, f.built.chunks[i]).verdict, sync::ChunkVerdict::accept);
        EXPECT_EQ(f.target->restoring(), kBlocks);
    }
    f.target.reset();  // the process ends here, mid-restore
    // The next writer finds the marker: the restored entries go, the genesis state is back.
    f.target = store::Store::open(f.tmp.path() / "target").value();
    EXPECT_FALSE(f.target->restoring());
    EXPECT_EQ(f.target->head().number, 0u);
    EXPECT_EQ(entries_of(*f.target), genesis_entries);
    EXPECT_TRUE(store::verify_state(*f.target)->matches());
    // And the restore runs again, whole.
    auto restorer = f.offer_ok(f.built.descriptor);
    ASSERT_TRUE(restorer);
    for (uint32_t i = 0; i < f.built.chunks.size(); ++i)
        ASSERT_EQ(restorer->apply(i, f.built.chunks[i]).verdict, sync::ChunkVerdict::accept);
    EXPECT_EQ(entries_of(*f.target), entries_of(*f.source));
    EXPECT_TRUE(store::verify_state(*f.target)->matches());
}

TEST(sync_snapshot, a_chunk_0_that_is_not_the_offered_one_is_retried) {
    Fixture f;
    auto restorer = f.offer_ok(f.built.descriptor);
    ASSERT_TRUE(restorer);
    Bytes flipped = f.built.chunks[0];
    flipped.back() ^= 0x01;
    const auto r = restorer->apply(0, flipped);
    EXPECT_EQ(r.verdict, sync::ChunkVerdict::retry);
    EXPECT_TRUE(r.sender_at_fault);
    EXPECT_EQ(r.refetch, std::vector<uint32_t>{0});
}

TEST(sync_snapshot_decode, malformed_index_bytes_are_clear_errors) {
    const Bytes good = sync::encode(sync::Index{{sync::ChunkInfo{1, {0x01, 0x02}, Hash{}, {}}}});
    ASSERT_TRUE(sync::decode_index(good));
    const std::vector<std::pair<Bytes, std::string>> cases = {
        {{}, "snapshot index: list: input_too_short"},
        {{0x80}, "snapshot index: list: unexpected_string"},
        {{0xc0, 0x00}, "snapshot index: trailing bytes"},
        {Bytes(good.begin(), good.end() - 1), "snapshot index: list: input_too_short"},
        {sync::encode(sync::Index{{sync::ChunkInfo{0, {0x01}, Hash{}, {}}}}),
         "snapshot index: chunk 1: entries: a chunk holds at least one"},
        {sync::encode(sync::Index{{sync::ChunkInfo{1, {}, Hash{}, {}}}}),
         "snapshot index: chunk 1: last_key: 0 bytes"},
    };
    for (const auto& [bytes, message] : cases) {
        const auto decoded = sync::decode_index(bytes);
        ASSERT_FALSE(decoded);
        EXPECT_EQ(decoded.error().code, sync::SnapshotErrorCode::malformed_index);
        EXPECT_EQ(decoded.error().message, message);
    }
    // A partial of the wrong size.
    Bytes record, records, index;
    rlp::encode(record, uint64_t{1});
    rlp::encode(record, Bytes{0x01});
    rlp::encode(record, Hash{});
    rlp::encode(record, Bytes(2047, 0));
    rlp::encode_list(records, record);
    rlp::encode_list(index, records);
    EXPECT_EQ(sync::decode_index(index).error().message,
              "snapshot index: chunk 1: partial: 2047 bytes, not 2048");
}

TEST(sync_snapshot_decode, malformed_metadata_and_chunks_are_clear_errors) {
    EXPECT_EQ(sync::decode_metadata({}).error().message,
              "snapshot metadata: list: input_too_short");
    const Bytes not_a_header = {0xc3, 0x80, 0x80, 0x80};
    EXPECT_EQ(sync::decode_metadata(not_a_header).error().code,
              sync::SnapshotErrorCode::malformed_metadata);
    sync::Metadata m;
    m.header.number = 5;
    m.consensus_hash = Bytes(32, 7);
    EXPECT_EQ(sync::decode_metadata(sync::encode(m)).value(), m);
    m.consensus_hash = Bytes(65, 7);
    EXPECT_EQ(sync::decode_metadata(sync::encode(m)).error().message,
              "snapshot metadata: consensus_hash: 65 bytes");

    EXPECT_EQ(sync::decode_chunk(Bytes{0xc1, 0x03}).error().message,
              "snapshot chunk: entry 0: key: kind 3 is neither 1 nor 2");
    EXPECT_EQ(sync::decode_chunk(Bytes{0xc2, 0x82, 0x01}).error().message,
              "snapshot chunk: entry 0: key: input_too_short");
    // A user balance with a leading zero: not canonical RLP.
    EXPECT_EQ(sync::decode_chunk(Bytes{0xc5, 0x82, 0x02, 0x61, 0x81, 0x00}).error().code,
              sync::SnapshotErrorCode::malformed_chunk);
    EXPECT_TRUE(sync::decode_chunk({}).value().empty());
}
