// What a reopen costs: a writer's clean close flushes its memtables, so the next open (a `get`)
// replays no WAL; an open reads the chain parameters from their own small document and never
// the genesis account list; a datadir written before that document existed still opens, and
// its first writer adds the document.

#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/store/store.hpp>

#include "store/testing.hpp"
#include "store_commit.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace barrel;
using barrel::test::generate_or_throw;
using barrel::test::ScratchDir;

namespace {

gen::Workload workload(size_t blocks) {
    return generate_or_throw({.blocks = blocks, .txs = 30, .accounts = 16, .mix = gen::Mix::mixed});
}

std::unique_ptr<store::Store> open_ok(const std::filesystem::path& dir, bool read_only) {
    store::Options o;
    o.read_only = read_only;
    auto s = store::Store::open(dir, o);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    return s ? std::move(s).value() : nullptr;
}

/// Executes and commits every block of `w` on a datadir initialised with its genesis.
void import(store::Store& s, const gen::Workload& w) {
    const auto failed = test::commit_blocks(s, w, w.blocks.size());
    ASSERT_FALSE(failed) << failed->message;
}

uint64_t wal_bytes(const std::filesystem::path& dir) {
    uint64_t bytes = 0;
    for (const auto& e : std::filesystem::directory_iterator{dir})
        if (e.path().extension() == ".log") bytes += e.file_size();
    return bytes;
}

chain::Genesis parameters_of(chain::Genesis g) {
    g.alloc = {};
    return g;
}

}  // namespace

TEST(store_reopen, a_writers_clean_close_leaves_no_wal_to_replay) {
    const auto w = workload(3);
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    {
        auto s = store::Store::init(dir, w.genesis);
        ASSERT_TRUE(s) << s.error().message;
        import(**s, w);
        EXPECT_GT(wal_bytes(dir), 0u);  // the blocks are in the WAL until the close
    }
    EXPECT_EQ(wal_bytes(dir), 0u);
    const auto reader = open_ok(dir, true);
    ASSERT_TRUE(reader);
    EXPECT_EQ(store::testing::memtable_entries(*reader), 0u);  // nothing was replayed
    EXPECT_EQ(reader->head().number, 3u);
}

TEST(store_reopen, an_open_does_not_parse_the_genesis_account_list) {
    const auto w = workload(1);
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    ASSERT_TRUE(store::Store::init(dir, w.genesis));
    // Damage the stored genesis document, whose account list is the large part.
    const std::string text = chain::to_json_text(w.genesis);
    test::write_raw(dir, "meta", "genesis", text.substr(0, text.size() / 2));
    for (const bool read_only : {true, false}) {
        SCOPED_TRACE(read_only ? "read-only" : "writer");
        const auto s = open_ok(dir, read_only);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->genesis(), parameters_of(w.genesis));
        EXPECT_EQ(s->head().number, 0u);
        const auto header = s->header(0);
        ASSERT_TRUE(header);
        ASSERT_TRUE(*header);
        EXPECT_EQ((**header)["hash"], to_hex(s->head().hash));
    }
}

TEST(store_reopen, a_datadir_without_the_chain_document_opens_and_its_first_writer_adds_it) {
    const auto w = workload(1);
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    ASSERT_TRUE(store::Store::init(dir, w.genesis));
    const std::string chain_document = test::dump_datadir(dir)["meta"].at("chain");
    EXPECT_EQ(chain_document, chain::to_json_text(parameters_of(w.genesis)));
    test::write_raw(dir, "meta", "chain", std::nullopt);  // as a datadir of an older barrel

    {
        const auto reader = open_ok(dir, true);  // reads the whole genesis instead
        ASSERT_TRUE(reader);
        EXPECT_EQ(reader->genesis(), parameters_of(w.genesis));
    }
    EXPECT_FALSE(test::dump_datadir(dir)["meta"].contains("chain"));  // a reader writes nothing
    {
        const auto writer = open_ok(dir, false);
        ASSERT_TRUE(writer);
        EXPECT_EQ(writer->genesis(), parameters_of(w.genesis));
    }
    EXPECT_EQ(test::dump_datadir(dir)["meta"].at("chain"), chain_document);
}

TEST(store_reopen, a_damaged_chain_document_is_refused_as_corruption_and_nothing_is_written) {
    const auto w = workload(1);
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    ASSERT_TRUE(store::Store::init(dir, w.genesis));
    test::write_raw(dir, "meta", "chain", std::string{"{\"chain_id\":"});
    const auto before = test::dump_datadir(dir);
    for (const bool read_only : {true, false}) {
        SCOPED_TRACE(read_only ? "read-only" : "writer");
        store::Options o;
        o.read_only = read_only;
        const auto s = store::Store::open(dir, o);
        ASSERT_FALSE(s);
        EXPECT_EQ(s.error().code, store::StoreErrorCode::corruption);
        EXPECT_TRUE(s.error().message.find("stored chain parameters: ") != std::string::npos)
            << s.error().message;
    }
    EXPECT_EQ(test::dump_diff(before, test::dump_datadir(dir)), "");
}
